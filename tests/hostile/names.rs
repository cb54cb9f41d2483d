//! Hostile input: names (cells, components, keys, layers, flags).

use super::*;

fn empty(_: &Path) {}

fn two_cells(dir: &Path) {
    new_cell(dir, &["eu-west-2-prod"]);
    new_cell(dir, &["us-east-1-dev"]);
}

pub fn cases() -> Vec<Case> {
    let mut cases = vec![
        Case {
            name: "cell name with a path separator",
            setup: empty,
            args: &[
                "new",
                "../eu-west-2-prod",
                "--git-url",
                GIT_URL,
                "--admin-role-arn",
                ADMIN_ROLE,
            ],
            expect: Expect::Fails {
                code: 2,
                words: &["invalid cell name", "path separator"],
            },
        },
        Case {
            name: "cell name in an unknown region",
            setup: empty,
            args: &[
                "new",
                "eu-wset-2-prod",
                "--git-url",
                GIT_URL,
                "--admin-role-arn",
                ADMIN_ROLE,
            ],
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
    ];
    cases.extend(component_names());
    cases.extend(reserved_names());
    cases
}

/// A repository component called `name` (one the stack reserves) in a repository with a cell.
fn reserved(root: &Path, name: &str) {
    edits::cell_with_component(root, name, "description: X\nlayers: [apps]\n");
}

/// Every name the stack's own files and addresses take: none may be a component's.
fn reserved_names() -> Vec<Case> {
    macro_rules! reserved {
        ($name:literal, $why:literal) => {
            Case {
                name: concat!("repository component named `", $name, "`"),
                setup: |root| reserved(root, $name),
                args: &["add-component", $name],
                expect: Expect::Fails {
                    code: 1,
                    words: &[
                        concat!("components/", $name, "/component.yaml"),
                        concat!("component name `", $name, "` is reserved"),
                        $why,
                    ],
                },
            }
        };
    }
    vec![
        reserved!(
            "app",
            "declare `aws_eks_pod_identity_association.app`, which the stack's app-role.tf declares"
        ),
        reserved!(
            "app-abac",
            "`data.aws_iam_policy_document.app_abac_trust`, which the stack's app-role.tf"
        ),
        reserved!("app-role", "app-role.tf is a file of the cell's stack"),
        reserved!("flux", "flux.tf is a file of the cell's stack"),
        reserved!("cni", "cni.tf is a file of the cell's stack"),
        reserved!("cluster", "cluster.tf is a file of the cell's stack"),
        reserved!("network", "network.tf is a file of the cell's stack"),
        reserved!("variables", "variables.tf is a file of the cell's stack"),
        reserved!("versions", "versions.tf is a file of the cell's stack"),
        reserved!("outputs", "outputs.tf is a file of the cell's stack"),
        reserved!("providers", "providers.tf is a file of the cell's stack"),
        reserved!("backend", "backend.tf is a file of the cell's stack"),
        reserved!("egress", "egress.tf is a file of the cell's stack"),
        reserved!(
            "cell-metadata",
            "cell-metadata.tf is a file of the cell's stack"
        ),
    ]
}

/// Names inside component.yaml and on the command line.
fn component_names() -> Vec<Case> {
    use edits::{cell, cell_with_component};
    vec![
        Case {
            name: "component name in capitals",
            setup: cell,
            args: &["add-component", "Karpenter"],
            expect: Expect::Fails {
                code: 2,
                words: &[
                    "unknown component `Karpenter`",
                    "lowercase letters, digits and dashes",
                    "Did you mean `karpenter`?",
                ],
            },
        },
        Case {
            name: "component name with a path",
            setup: cell,
            args: &["remove-component", "../karpenter"],
            expect: Expect::Fails {
                code: 2,
                words: &["unknown component `../karpenter`", "lowercase letters"],
            },
        },
        Case {
            name: "component directory that is not a DNS label",
            setup: |root| {
                cell_with_component(root, "Team_Agent", "description: X\nlayers: [apps]\n")
            },
            args: &["list", "components"],
            expect: Expect::Fails {
                code: 1,
                words: &["components/Team_Agent", "must be a DNS label"],
            },
        },
        Case {
            name: "key that is not a Flux variable name",
            setup: |root| {
                cell_with_component(
                    root,
                    "billing",
                    "description: X\nlayers: [apps]\nkeys:\n  billing-arn:\n    description: d\n    example: e\n    terraform: var.name\n",
                )
            },
            args: &["add-component", "billing"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "line 4",
                    "key `billing-arn` is not a valid Flux variable name",
                    "billing_arn",
                ],
            },
        },
        Case {
            name: "key named schema",
            setup: |root| {
                cell_with_component(
                    root,
                    "billing",
                    "description: X\nlayers: [apps]\nkeys:\n  schema:\n    description: d\n    example: e\n    terraform: var.name\n",
                )
            },
            args: &["add-component", "billing"],
            expect: Expect::Fails {
                code: 1,
                words: &["key `schema` is reserved"],
            },
        },
        Case {
            name: "key the base contract owns",
            setup: |root| {
                cell_with_component(
                    root,
                    "billing",
                    "description: X\nlayers: [apps]\nkeys:\n  vpc_id:\n    description: d\n    example: e\n    terraform: var.name\n",
                )
            },
            args: &["add-component", "billing"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "key `vpc_id` is already in cellgen.yaml for the base contract",
                    "billing_vpc_id",
                ],
            },
        },
        Case {
            name: "key another component owns",
            setup: |root| {
                cell_with_component(
                    root,
                    "billing",
                    "description: X\nlayers: [apps]\nkeys:\n  karpenter_node_role:\n    description: d\n    example: e\n    terraform: var.name\n",
                );
                edits::run_ok(root, &["add-component", "karpenter"]);
            },
            args: &["add-component", "billing"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "key `karpenter_node_role` is already in cellgen.yaml for component `karpenter`",
                ],
            },
        },
        Case {
            name: "misspelt layer in component.yaml",
            setup: |root| {
                cell_with_component(root, "billing", "description: X\nlayers: [contollers]\n")
            },
            args: &["add-component", "billing"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "layer `contollers` is not a layer of this repository",
                    "Did you mean `controllers`?",
                ],
            },
        },
        Case {
            name: "misspelt requirement in component.yaml",
            setup: |root| {
                cell_with_component(
                    root,
                    "billing",
                    "description: X\nrequires: [karpentr]\nlayers: [apps]\n",
                )
            },
            args: &["add-component", "billing", "--with-requirements"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "`requires` lists `karpentr`, which is not a component",
                    "Did you mean `karpenter`?",
                ],
            },
        },
        Case {
            name: "environment listed twice in cellgen.yaml",
            setup: |root| {
                cell(root);
                edits::replace(
                    root,
                    "cellgen.yaml",
                    "[dev, staging, prod]",
                    "[dev, staging, prod, dev]",
                );
            },
            args: &["list"],
            expect: Expect::Fails {
                code: 1,
                words: &["cellgen.yaml:", "environment `dev` is listed twice"],
            },
        },
        Case {
            name: "misspelt environment in a new cell's name",
            setup: cell,
            args: &["new", "eu-west-2-prd"],
            expect: Expect::Fails {
                code: 2,
                words: &[
                    "`prd` is not an environment of this repository",
                    "Did you mean `eu-west-2-prod`?",
                ],
            },
        },
        // `schema` and the seed keys are cellgen's: removing one stripped it from every cell.
        Case {
            name: "key remove schema",
            setup: cell,
            args: &["key", "remove", "schema"],
            expect: Expect::Fails {
                code: 2,
                words: &[
                    "NAME",
                    "`schema` is the contract's number",
                    "Nothing was changed",
                ],
            },
        },
        Case {
            name: "key remove of a seed key no manifest uses",
            setup: cell,
            args: &["key", "remove", "app_role_arn"],
            expect: Expect::Fails {
                code: 2,
                words: &["`app_role_arn` is one of the seed keys every cell writes"],
            },
        },
        Case {
            name: "key rename schema",
            setup: cell,
            args: &["key", "rename", "schema", "version"],
            expect: Expect::Fails {
                code: 2,
                words: &["OLD", "`schema` is the contract's number"],
            },
        },
    ]
}

#[test]
fn names_table() {
    run_table("names", &cases());
}
