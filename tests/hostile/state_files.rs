//! Hostile input: Terraform state in the stack `remove-cell --terraform-destroyed` would delete.
//! State is the only record of what a cell owns in AWS: any state file, readable or not, and
//! Terraform's working directory block the deletion, naming what was found and what to do; a
//! saved plan (binary) does not.

use std::fs;

use super::edits::{CELL, cell};
use super::*;

const STACK: &str = "terraform/cells/eu-west-2-prod";

/// The cell, plus `bytes` at `rel` under its stack.
fn stack_file(dir: &Path, rel: &str, bytes: &[u8]) {
    cell(dir);
    let path = dir.join(STACK).join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, bytes).unwrap();
}

const LIVE_VPC: &[u8] = br#"{"version":4,"serial":3,"resources":[{"mode":"managed","type":"aws_vpc","name":"this","module":"module.vpc","instances":[{"attributes":{"id":"vpc-0a1b2c3d"}}]}]}"#;

const REMOVE: &[&str] = &["remove-cell", CELL, "--terraform-destroyed"];

/// What every refusal says: where, and the three ways out.
const WAYS_OUT: [&str; 4] = [
    "still holds Terraform state",
    "destroy",
    "init -migrate-state",
    "remove these yourself",
];

fn refused(found: &'static [&'static str]) -> Expect {
    let words: Vec<&'static str> = WAYS_OUT.iter().chain(found).copied().collect();
    Expect::Fails {
        code: 1,
        words: Vec::leak(words),
    }
}

fn stack_gone(dir: &Path, out: &Output) {
    assert!(
        !dir.join(STACK).exists(),
        "the stack is still there:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert_mentions(&said, &["deleted  terraform/cells/eu-west-2-prod/plan.out"]);
}

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "a truncated terraform.tfstate blocks the deletion",
            setup: |d| stack_file(d, "terraform.tfstate", &LIVE_VPC[..40]),
            args: REMOVE,
            expect: refused(&["eu-west-2-prod/terraform.tfstate: not a state Terraform can read"]),
        },
        Case {
            name: "a workspace state listing a live VPC blocks the deletion",
            setup: |d| stack_file(d, "terraform.tfstate.d/blue/terraform.tfstate", LIVE_VPC),
            args: REMOVE,
            expect: refused(&[
                "eu-west-2-prod/terraform.tfstate.d/blue/terraform.tfstate: lists 1 resource(s) (module.vpc.aws_vpc.this)",
                "terraform workspace select",
            ]),
        },
        Case {
            name: "a state that lists nothing still blocks: the user removes it",
            setup: |d| stack_file(d, "terraform.tfstate", br#"{"version":4,"resources":[]}"#),
            args: REMOVE,
            expect: refused(&["eu-west-2-prod/terraform.tfstate: a state that lists no resources"]),
        },
        Case {
            name: "a state that is not UTF-8 blocks the deletion",
            setup: |d| stack_file(d, "terraform.tfstate", b"\xff\xfe\x00garbage"),
            args: REMOVE,
            expect: refused(&["eu-west-2-prod/terraform.tfstate: not a state Terraform can read"]),
        },
        Case {
            name: "a state backup blocks the deletion",
            setup: |d| stack_file(d, "terraform.tfstate.backup", LIVE_VPC),
            args: REMOVE,
            expect: refused(&["eu-west-2-prod/terraform.tfstate.backup: lists 1 resource(s)"]),
        },
        Case {
            name: "an errored.tfstate (a failed upload) blocks the deletion",
            setup: |d| stack_file(d, "errored.tfstate", LIVE_VPC),
            args: REMOVE,
            expect: refused(&["eu-west-2-prod/errored.tfstate: lists 1 resource(s)"]),
        },
        Case {
            name: "an empty workspace directory blocks the deletion",
            setup: |d| {
                cell(d);
                fs::create_dir_all(d.join(STACK).join("terraform.tfstate.d")).unwrap();
            },
            args: REMOVE,
            expect: refused(&["eu-west-2-prod/terraform.tfstate.d/: Terraform's workspace states"]),
        },
        Case {
            name: "Terraform's working directory .terraform/ blocks the deletion",
            setup: |d| {
                stack_file(
                    d,
                    ".terraform/terraform.tfstate",
                    br#"{"version":3,"backend":{"type":"s3"}}"#,
                )
            },
            args: REMOVE,
            expect: refused(&["eu-west-2-prod/.terraform/: Terraform's working directory"]),
        },
        Case {
            name: "a binary saved plan does not block: it leaves with the stack",
            setup: |d| {
                stack_file(
                    d,
                    "plan.out",
                    b"PK\x03\x04\x14\x00\x08\x00\xff\xfe binary plan",
                )
            },
            args: REMOVE,
            expect: Expect::Succeeds(stack_gone),
        },
    ]
}

#[test]
fn state_files_table() {
    run_table("state files", &cases());
}
