//! Hostile input: code injection into generated Terraform through a value cellgen pastes there
//! (issue 18). A `--terraform` flag, a component.yaml's `keys.*.terraform` (through
//! `add-component` and a later `upgrade`) and cellgen.yaml's keys once closed the ConfigMap with
//! an empty heredoc and opened a `provisioner "local-exec"`. Every such value is one expression on
//! one line, no heredoc, no comment, no line break in any text a flag or component.yaml gives; a
//! refusal names the flag (exit 2) or the file and line (exit 1) and writes nothing.

use std::fs;

use super::edits::{
    CELL, METADATA, assert_data_keys, cell, cell_with_component, component_in, replace, run_ok,
    stack, yaml_file,
};
use super::*;

/// The heredoc that ended the ConfigMap in HashiCorp's reading and not in hcl-edit's.
const PWNED: &str =
    "<<EOT\nEOT\n}\nprovisioner \"local-exec\" {\n  command = <<EOT\ntouch /tmp/PWNED\nEOT";

/// `key add k1` with this `--terraform` (and `extra` flags).
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

/// A flag refused: exit 2, naming the flag and why.
fn flag_refused(flag: &'static str, why: &'static str) -> Expect {
    Expect::Fails {
        code: 2,
        words: Vec::leak(vec![flag, why, "Nothing was changed"]),
    }
}

/// A component.yaml refused: exit 1, naming the file, the line and why.
fn spec_refused(line: &'static str, why: &'static str) -> Expect {
    Expect::Fails {
        code: 1,
        words: Vec::leak(vec!["components/billing/component.yaml", line, why]),
    }
}

/// The ConfigMap, for HashiCorp's parser, is exactly metadata, data and depends_on, and
/// cell-metadata.tf declares nothing but it.
fn only_the_config_map(root: &Path) {
    let parsed = stack(root);
    let file = parsed["cell-metadata.tf"].as_object().unwrap();
    assert_eq!(file.keys().collect::<Vec<_>>(), ["resource"], "{parsed}");
    let map =
        &parsed["cell-metadata.tf"]["resource"]["kubernetes_config_map_v1"]["cell_metadata"][0];
    let mut keys: Vec<&String> = map.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["data", "depends_on", "metadata"], "{map}");
}

/// A billing component whose one key has these lines (description, example, terraform).
fn billing_spec(description: &str, key_lines: &str) -> String {
    format!("description: {description}\nlayers: [apps]\nkeys:\n  billing_queue:\n{key_lines}")
}

const GOOD_KEY: &str = "    description: Queue\n    example: q\n    terraform: var.name\n";

/// YAML double-quoted scalar of `value` (escapes line breaks), for component.yaml lines.
fn dq(value: &str) -> String {
    serde_json::to_string(value).unwrap()
}

fn billing_with_terraform(root: &Path, terraform: &str) {
    cell_with_component(
        root,
        "billing",
        &billing_spec(
            "Billing",
            &format!(
                "    description: Queue\n    example: q\n    terraform: {}\n",
                dq(terraform)
            ),
        ),
    );
}

/// The billing component added with a good key, then its component.yaml changed to `spec`: the
/// value reaches the cell only through `upgrade`.
fn billing_added_then(root: &Path, spec: &str) {
    cell_with_component(root, "billing", &billing_spec("Billing", GOOD_KEY));
    run_ok(root, &["add-component", "billing"]);
    fs::write(root.join("components/billing/component.yaml"), spec).unwrap();
}

fn flag_cases() -> Vec<Case> {
    vec![
        Case {
            name: "--terraform: an empty heredoc closing the ConfigMap and opening a provisioner",
            setup: cell,
            args: key_add!(PWNED),
            expect: flag_refused("--terraform", "more than one line"),
        },
        Case {
            name: "--terraform: a heredoc with content",
            setup: cell,
            args: key_add!("<<EOT\nx\nEOT"),
            expect: flag_refused("--terraform", "more than one line"),
        },
        Case {
            name: "--terraform: an indented heredoc",
            setup: cell,
            args: key_add!("<<-EOT\n  x\n  EOT"),
            expect: flag_refused("--terraform", "more than one line"),
        },
        Case {
            name: "--terraform: a heredoc marker alone",
            setup: cell,
            args: key_add!("<<EOT"),
            expect: flag_refused("--terraform", "not one HCL expression"),
        },
        Case {
            name: "--terraform: a line break after the expression",
            setup: cell,
            args: key_add!("var.name\n"),
            expect: flag_refused("--terraform", "more than one line"),
        },
        Case {
            name: "--terraform: a carriage return inside",
            setup: cell,
            args: key_add!("var.name\r== 1"),
            expect: flag_refused("--terraform", "more than one line"),
        },
        Case {
            name: "--terraform: `}` closing the block",
            setup: cell,
            args: key_add!("var.name }"),
            expect: flag_refused("--terraform", "not one HCL expression"),
        },
        Case {
            name: "--terraform: `}` and a new resource on the next lines",
            setup: cell,
            args: key_add!("var.name\n}\nresource \"aws_iam_user\" \"evil\" {\n  name = \"x\""),
            expect: flag_refused("--terraform", "more than one line"),
        },
        Case {
            name: "--terraform: a `#` comment swallowing what follows",
            setup: cell,
            args: key_add!("var.name # }"),
            expect: flag_refused("--terraform", "not one HCL expression"),
        },
        Case {
            name: "--terraform: a `//` comment",
            setup: cell,
            args: key_add!("var.name // }"),
            expect: flag_refused("--terraform", "not one HCL expression"),
        },
        Case {
            name: "--terraform: an open `/*` comment",
            setup: cell,
            args: key_add!("var.name /* }"),
            expect: flag_refused("--terraform", "not one HCL expression"),
        },
        Case {
            name: "--terraform: a closed `/* */` comment after it",
            setup: cell,
            args: key_add!("var.name /* x */"),
            expect: flag_refused("--terraform", "not one HCL expression"),
        },
        Case {
            name: "--terraform: an unterminated `${` in a string",
            setup: cell,
            args: key_add!("\"${var.name\""),
            expect: flag_refused("--terraform", "not one HCL expression"),
        },
        Case {
            name: "--terraform: a line separator (U+2028)",
            setup: cell,
            args: key_add!("var.name\u{2028}"),
            expect: flag_refused("--terraform", "more than one line"),
        },
        Case {
            name: "--terraform: `${}` and `%{}` templates in a string are one expression",
            setup: cell,
            args: key_add!("\"${var.name}-%{ if var.environment == \"prod\" }p%{ endif }\""),
            expect: Expect::Succeeds(|root, _| {
                only_the_config_map(root);
                assert_data_keys(root, &["k1"]);
                let text = read(&root.join(METADATA));
                assert!(
                    text.contains("k1               = \"${var.name}-%{"),
                    "{text}"
                );
            }),
        },
        Case {
            name: "--description: a line break",
            setup: cell,
            args: &[
                "key",
                "add",
                "k1",
                "--example",
                "x",
                "--description",
                "d\nevil: true",
                "--terraform",
                "var.name",
            ],
            expect: flag_refused("--description", "more than one line"),
        },
        Case {
            name: "--example: a line break",
            setup: cell,
            args: &[
                "key",
                "add",
                "k1",
                "--example",
                "x\n- y",
                "--description",
                "d",
                "--terraform",
                "var.name",
            ],
            expect: flag_refused("--example", "more than one line"),
        },
        Case {
            name: "--description: a control character",
            setup: cell,
            args: &[
                "key",
                "add",
                "k1",
                "--example",
                "x",
                "--description",
                "d\u{1b}[2J",
                "--terraform",
                "var.name",
            ],
            expect: flag_refused("--description", "control character"),
        },
        Case {
            name: "--description and --example: `${`, `%{`, `#`, `}` and quotes stay text",
            setup: cell,
            args: &[
                "key",
                "add",
                "k1",
                "--example",
                "${x} %{y} # } \"q\"",
                "--description",
                "a } # b // c /* d",
                "--terraform",
                "var.name",
            ],
            expect: Expect::Succeeds(|root, _| {
                only_the_config_map(root);
                assert_data_keys(root, &["k1"]);
                let config = yaml_file(root, "cellgen.yaml");
                assert_eq!(
                    config["keys"]["k1"]["example"].as_str(),
                    Some("${x} %{y} # } \"q\"")
                );
                assert_eq!(
                    config["keys"]["k1"]["description"].as_str(),
                    Some("a } # b // c /* d")
                );
            }),
        },
    ]
}

fn component_cases() -> Vec<Case> {
    vec![
        Case {
            name: "component.yaml terraform: the provisioner heredoc, via add-component",
            setup: |root| billing_with_terraform(root, PWNED),
            args: &["add-component", "billing"],
            expect: spec_refused("line 7", "more than one line"),
        },
        Case {
            name: "component.yaml terraform: a heredoc as a YAML block scalar, via add-component",
            setup: |root| {
                cell_with_component(
                    root,
                    "billing",
                    &billing_spec(
                        "Billing",
                        "    description: Queue\n    example: q\n    terraform: |\n      <<EOT\n      EOT\n      }\n      provisioner \"local-exec\" {\n        command = \"id\"\n",
                    ),
                );
            },
            args: &["add-component", "billing"],
            expect: spec_refused("line 7", "more than one line"),
        },
        Case {
            name: "component.yaml terraform: a `#` comment, via add-component",
            setup: |root| billing_with_terraform(root, "var.name # }"),
            args: &["add-component", "billing"],
            expect: spec_refused("line 7", "not one HCL expression"),
        },
        Case {
            name: "component.yaml terraform: `}` closing the block, via add-component",
            setup: |root| billing_with_terraform(root, "var.name }"),
            args: &["add-component", "billing"],
            expect: spec_refused("line 7", "not one HCL expression"),
        },
        Case {
            name: "component.yaml key description: a line break, via add-component",
            setup: |root| {
                cell_with_component(
                    root,
                    "billing",
                    &billing_spec(
                        "Billing",
                        "    description: \"Queue\\nevil: true\"\n    example: q\n    terraform: var.name\n",
                    ),
                );
            },
            args: &["add-component", "billing"],
            expect: spec_refused("line 5", "more than one line"),
        },
        Case {
            name: "component.yaml key example: a line break, via add-component",
            setup: |root| {
                cell_with_component(
                    root,
                    "billing",
                    &billing_spec(
                        "Billing",
                        "    description: Queue\n    example: \"a\\n- b\"\n    terraform: var.name\n",
                    ),
                );
            },
            args: &["add-component", "billing"],
            expect: spec_refused("line 6", "more than one line"),
        },
        Case {
            name: "component.yaml description: a line break, via add-component",
            setup: |root| {
                cell_with_component(root, "billing", &billing_spec("\"Billing\\n}\"", GOOD_KEY));
            },
            args: &["add-component", "billing"],
            expect: spec_refused("line 1", "more than one line"),
        },
        Case {
            name: "component.yaml terraform: the provisioner heredoc, via upgrade",
            setup: |root| {
                billing_added_then(
                    root,
                    &billing_spec(
                        "Billing",
                        &format!(
                            "    description: Queue\n    example: q\n    terraform: {}\n",
                            dq(PWNED)
                        ),
                    ),
                );
            },
            args: &["upgrade"],
            expect: spec_refused("line 7", "more than one line"),
        },
        Case {
            name: "component.yaml terraform: a `//` comment, via upgrade",
            setup: |root| {
                billing_added_then(
                    root,
                    &billing_spec(
                        "Billing",
                        "    description: Queue\n    example: q\n    terraform: var.name // }\n",
                    ),
                );
            },
            args: &["upgrade"],
            expect: spec_refused("line 7", "not one HCL expression"),
        },
        Case {
            name: "component.yaml: the provisioner heredoc is refused by check too",
            setup: |root| {
                billing_added_then(
                    root,
                    &billing_spec(
                        "Billing",
                        &format!(
                            "    description: Queue\n    example: q\n    terraform: {}\n",
                            dq(PWNED)
                        ),
                    ),
                );
            },
            args: &["check"],
            expect: spec_refused("line 7", "more than one line"),
        },
        Case {
            name: "component.yaml terraform: `${}` in a string is one expression",
            setup: |root| billing_with_terraform(root, "\"${var.name}-billing\""),
            args: &["add-component", "billing"],
            expect: Expect::Succeeds(|root, _| {
                only_the_config_map(root);
                assert_data_keys(root, &["billing_queue"]);
            }),
        },
    ]
}

fn config_cases() -> Vec<Case> {
    vec![Case {
        name: "cellgen.yaml terraform: the provisioner heredoc reaches no new cell",
        setup: |root| {
            cell(root);
            replace(
                root,
                "cellgen.yaml",
                "terraform: var.name",
                &format!("terraform: {}", dq(PWNED)),
            );
        },
        args: &[
            "new",
            "eu-west-2-dev",
            "--git-url",
            "ssh://git@github.com/acme/infra.git",
        ],
        expect: Expect::Fails {
            code: 1,
            words: &[
                "cellgen.yaml",
                "keys.cell_name.terraform",
                "more than one line",
            ],
        },
    }]
}

/// The cell's cell-metadata.tf as main once wrote it after `key add` with [`PWNED`].
fn already_pwned(root: &Path) {
    cell(root);
    replace(
        root,
        METADATA,
        "\"Deny\"\n",
        &format!("\"Deny\"\n    k1               = {PWNED}\n"),
    );
}

fn written_cases() -> Vec<Case> {
    vec![
        Case {
            name: "a cell-metadata.tf that already holds the provisioner heredoc: check fails",
            setup: already_pwned,
            args: &["check"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "invalid-metadata",
                    "cell-metadata.tf",
                    "Terraform ends the heredoc",
                ],
            },
        },
        Case {
            name: "a cell-metadata.tf that already holds the provisioner heredoc: key add refuses",
            setup: already_pwned,
            args: key_add!("var.name"),
            expect: Expect::Fails {
                code: 1,
                words: &["cell-metadata.tf", "line 18", "Terraform ends the heredoc"],
            },
        },
    ]
}

pub fn cases() -> Vec<Case> {
    let _ = (CELL, component_in);
    let mut cases = flag_cases();
    cases.extend(component_cases());
    cases.extend(config_cases());
    cases.extend(written_cases());
    cases
}

#[test]
fn injection_table() {
    run_table("injection", &cases());
}
