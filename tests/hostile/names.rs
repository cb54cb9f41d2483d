//! Hostile input: names (cells, components, keys, layers, flags).

use super::*;

fn empty(_: &Path) {}

fn two_cells(dir: &Path) {
    new_cell(dir, &["eu-west-2-prod"]);
    new_cell(dir, &["us-east-1-dev"]);
}

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "cell name with a path separator",
            setup: empty,
            args: &["new", "../eu-west-2-prod", "--git-url", GIT_URL],
            expect: Expect::Fails {
                code: 2,
                words: &["invalid cell name", "path separator"],
            },
        },
        Case {
            name: "cell name in an unknown region",
            setup: empty,
            args: &["new", "eu-wset-2-prod", "--git-url", GIT_URL],
            expect: Expect::Fails {
                code: 2,
                words: &["Did you mean `eu-west-2-prod`"],
            },
        },
        Case {
            name: "misspelt component, cell not given",
            setup: two_cells,
            args: &["add-component", "karpentr"],
            expect: Expect::Fails {
                code: 2,
                words: &["unknown component `karpentr`", "Did you mean `karpenter`"],
            },
        },
        Case {
            name: "schema of an unknown file",
            setup: empty,
            args: &["schema", "cellgen.yml"],
            expect: Expect::Fails {
                code: 2,
                words: &["cellgen.yml", "cellgen.yaml"],
            },
        },
        Case {
            name: "both egress flags",
            setup: empty,
            args: &[
                "new",
                "eu-west-2-prod",
                "--git-url",
                GIT_URL,
                "--egress-gateway",
                "--no-egress-gateway",
            ],
            expect: Expect::Fails {
                code: 2,
                words: &["--egress-gateway", "cannot be used with"],
            },
        },
    ]
}

#[test]
fn names_table() {
    run_table("names", &cases());
}
