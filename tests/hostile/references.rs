//! Hostile input: key expressions that refer to nothing the cell's stack declares (issue 19).
//! `key add --terraform aws_sqs_queue.jobs.url` and `--terraform var.x` once wrote a reference
//! to nothing, with a green `check` and a failing `terraform plan`; a component.yaml key did the
//! same through `add-component`. Each is refused naming what is missing, and nothing is written.

use super::edits::{assert_data_keys, cell, cell_with_component};
use super::*;

macro_rules! key_add {
    ($terraform:expr) => {
        &[
            "key",
            "add",
            "k1",
            "--example",
            "x",
            "--description",
            "d",
            "--terraform",
            $terraform,
        ]
    };
}

fn missing(words: &'static [&'static str]) -> Expect {
    let mut all = vec!["--terraform", "eu-west-2-prod", "Nothing was changed"];
    all.extend(words);
    Expect::Fails {
        code: 2,
        words: Vec::leak(all),
    }
}

fn billing(root: &Path, terraform: &str) {
    cell_with_component(
        root,
        "billing",
        &format!(
            "description: Billing\nlayers: [apps]\nkeys:\n  billing_queue:\n    description: Queue\n    example: q\n    terraform: {terraform}\n"
        ),
    );
}

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "--terraform: a resource the stack does not declare",
            setup: cell,
            args: key_add!("aws_sqs_queue.jobs.url"),
            expect: missing(&["`aws_sqs_queue.jobs` is a resource", "declares nowhere"]),
        },
        Case {
            name: "--terraform: an undeclared variable",
            setup: cell,
            args: key_add!("var.x"),
            expect: missing(&["`var.x` is a variable", "declares nowhere"]),
        },
        Case {
            name: "--terraform: a misspelt variable gets a did-you-mean",
            setup: cell,
            args: key_add!("var.nme"),
            expect: missing(&["`var.nme`", "Did you mean `var.name`?"]),
        },
        Case {
            name: "--terraform: an undeclared local value",
            setup: cell,
            args: key_add!("local.nope"),
            expect: missing(&["`local.nope` is a local value"]),
        },
        Case {
            name: "--terraform: an undeclared data source",
            setup: cell,
            args: key_add!("data.aws_sqs_queue.jobs.url"),
            expect: missing(&["`data.aws_sqs_queue.jobs` is a data source"]),
        },
        Case {
            name: "--terraform: an undeclared module",
            setup: cell,
            args: key_add!("module.queue.url"),
            expect: missing(&["`module.queue` is a module"]),
        },
        Case {
            name: "--terraform: an undeclared variable inside a template",
            setup: cell,
            args: key_add!("\"${var.nope}-x\""),
            expect: missing(&["`var.nope` is a variable"]),
        },
        Case {
            name: "--terraform: a bare name",
            setup: cell,
            args: key_add!("EOT"),
            expect: missing(&["`EOT` is not something Terraform can refer to"]),
        },
        Case {
            name: "--terraform: what the stack declares, in a function and a template",
            setup: cell,
            args: key_add!("format(\"%s-${var.region}\", module.eks.cluster_name)"),
            expect: Expect::Succeeds(|root, _| assert_data_keys(root, &["k1"])),
        },
        Case {
            name: "component.yaml: a resource no template declares, via add-component",
            setup: |root| billing(root, "aws_sqs_queue.jobs.url"),
            args: &["add-component", "billing"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "components/billing/component.yaml",
                    "line 7",
                    "`aws_sqs_queue.jobs` is a resource",
                    "declares nowhere",
                ],
            },
        },
        Case {
            name: "component.yaml: an undeclared variable, via add-component",
            setup: |root| billing(root, "var.billing_queue"),
            args: &["add-component", "billing"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "components/billing/component.yaml",
                    "`var.billing_queue` is a variable",
                ],
            },
        },
    ]
}

#[test]
fn references_table() {
    run_table("references", &cases());
}
