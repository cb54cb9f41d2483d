//! Hostile input: names (cells, components, keys, layers, flags).

use super::*;

fn empty(_: &Path) {}

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
    ]
}

#[test]
fn names_table() {
    run_table("names", &cases());
}
