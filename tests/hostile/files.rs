//! Hostile input: files cellgen reads, above all a repository's components/<name>/component.yaml,
//! whose values end up in Terraform and YAML. None can inject a block, an attribute or a key;
//! none can make cellgen hang.

use super::edits::{assert_data_keys, cell, cell_with_component, stack};
use super::*;

/// A repository component `billing` with these identity and key lines.
fn billing(root: &Path, identity: &str, terraform: &str) {
    cell_with_component(
        root,
        "billing",
        &format!(
            "description: Billing\nlayers: [apps]\nkeys:\n  billing_role_arn:\n    description: Billing role\n    example: arn:aws:iam::123456789012:role/x\n    terraform: {terraform}\nidentity:\n{identity}"
        ),
    );
}

const IDENTITY: &str = "  namespace: billing\n  service_account: billing\n  policy_arns: [arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess]\n";

/// The resources, data sources and modules of billing.tf, as HashiCorp's parser reads them.
fn billing_blocks(root: &Path) -> Vec<String> {
    let parsed = stack(root);
    let file = &parsed["billing.tf"];
    let mut out = Vec::new();
    for kind in ["resource", "data", "module"] {
        if let Some(types) = file[kind].as_object() {
            for (ty, names) in types {
                for name in names.as_object().unwrap().keys() {
                    out.push(format!("{kind}.{ty}.{name}"));
                }
            }
        }
    }
    out.sort();
    out
}

const BILLING_BLOCKS: &[&str] = &[
    "data.aws_iam_policy_document.billing_trust",
    "resource.aws_eks_pod_identity_association.billing",
    "resource.aws_iam_role.billing",
    "resource.aws_iam_role_policy_attachment.billing",
];

fn non_utf8_layer_resource(dir: &Path) {
    cell(dir);
    std::fs::write(
        dir.join("infrastructure/controllers/platform-namespace.yaml"),
        b"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: pl\xffatform\n",
    )
    .unwrap();
}

fn generator_reads_outside_by_dot_dot(dir: &Path) {
    cell(dir);
    let k = dir.join("infrastructure/controllers/kustomization.yaml");
    let mut text = std::fs::read_to_string(&k).unwrap();
    text.push_str(
        "configMapGenerator:\n- name: leak\n  files: [../../../../../../../../etc/passwd]\n",
    );
    std::fs::write(k, text).unwrap();
}

fn generator_env_reads_an_absolute_path(dir: &Path) {
    cell(dir);
    let k = dir.join("infrastructure/controllers/kustomization.yaml");
    let mut text = std::fs::read_to_string(&k).unwrap();
    text.push_str("secretGenerator:\n- name: leak\n  envs: [/etc/passwd]\n");
    std::fs::write(k, text).unwrap();
}

/// `[` 100,000 times, then as many `]`.
fn brackets() -> String {
    format!("{}{}", "[".repeat(100_000), "]".repeat(100_000))
}

/// A file name a runner would read as workflow commands if it reached the log raw: a line of
/// its own starting with `::error::`, and the legacy `##[error]` form.
const COMMANDING_NAME: &str = "x\n::error::pwned ##[error]y.yaml";

/// The cell committed to Git, then a resource in the apps layer whose file has that name.
fn commanding_file_name(dir: &Path) {
    cell(dir);
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "base"]);
    std::fs::write(
        dir.join("apps").join(COMMANDING_NAME),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pwn\n  namespace: apps\ndata:\n  a: ${nope}\n",
    )
    .unwrap();
    let k = dir.join("apps/kustomization.yaml");
    let text = std::fs::read_to_string(&k).unwrap();
    std::fs::write(k, format!("{text}  - {:?}\n", COMMANDING_NAME)).unwrap();
}

/// No line of a `--format github` output is a workflow command the runner would obey, but
/// cellgen's own annotations (actions/runner: `::` first after whitespace, or `##[` anywhere).
fn no_smuggled_command(_: &Path, out: &Output) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    for line in stdout.split(['\n', '\r']) {
        let own = ["::notice ", "::error ", "::warning "]
            .iter()
            .any(|c| line.starts_with(c));
        if own {
            continue;
        }
        assert!(
            !line.trim_start().starts_with("::") && !line.contains("##["),
            "a raw workflow command in the log: {line:?}\n{stdout}"
        );
    }
    assert_mentions(&stdout, &["pwn"]);
}

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "diff --format github with a file name that holds workflow commands",
            setup: commanding_file_name,
            args: &["diff", "--format", "github"],
            expect: Expect::Succeeds(no_smuggled_command),
        },
        Case {
            name: "cellgen.yaml nested 100,000 brackets deep",
            setup: |root| {
                cell(root);
                let path = root.join("cellgen.yaml");
                let text = read(&path);
                let deep = format!("{text}x: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
                std::fs::write(path, deep).unwrap();
            },
            args: &["list"],
            expect: Expect::Fails {
                code: 1,
                words: &["cellgen.yaml:", "nest more than 64 levels", "flatten"],
            },
        },
        Case {
            name: "check on a layer file nested 100,000 brackets deep",
            setup: |root| {
                edits::fixed_layer(root);
                let deep = format!(
                    "components: []\n  x: {}{}",
                    "[".repeat(100_000),
                    "]".repeat(100_000)
                );
                edits::replace(root, edits::CONTROLLERS, "components: []", &deep);
            },
            args: &["check"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "cells/eu-west-2-prod/controllers.yaml:9",
                    "nest more than 64 levels",
                ],
            },
        },
        Case {
            name: "component.yaml nested 100,000 brackets deep",
            setup: |root| {
                let deep = format!(
                    "description: X\nlayers: [apps]\nrequires: {}{}\n",
                    "[".repeat(100_000),
                    "]".repeat(100_000)
                );
                cell_with_component(root, "deep", &deep);
            },
            args: &["add-component", "deep"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "components/deep/component.yaml:3:",
                    "nest more than 64 levels",
                ],
            },
        },
        Case {
            name: "a description that tries to end its comment line (refused: one line, issue 18)",
            setup: |root| {
                cell_with_component(
                    root,
                    "billing",
                    &format!(
                        "description: \"Billing\\nresource \\\"aws_iam_user\\\" \\\"evil\\\" {{}}\\r\\n# x\"\nlayers: [apps]\nidentity:\n{IDENTITY}"
                    ),
                );
            },
            args: &["add-component", "billing"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "components/billing/component.yaml",
                    "line 1",
                    "spans more than one line",
                    "give it on one line",
                ],
            },
        },
        Case {
            name: "a namespace with a quote and a newline",
            setup: |root| {
                billing(
                    root,
                    "  namespace: \"billing\\\"\\n}\\nresource \\\"aws_iam_user\\\" \\\"x\\\" {\\n  name = \\\"\"\n  service_account: billing\n",
                    "aws_iam_role.billing.arn",
                )
            },
            args: &["add-component", "billing"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "components/billing/component.yaml",
                    "identity.namespace",
                    "not a Kubernetes namespace name",
                ],
            },
        },
        Case {
            name: "a service account with a quote",
            setup: |root| {
                billing(
                    root,
                    "  namespace: billing\n  service_account: 'x\" role_arn = \"y'\n",
                    "aws_iam_role.billing.arn",
                )
            },
            args: &["add-component", "billing"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "identity.service_account",
                    "not a Kubernetes service account name",
                ],
            },
        },
        Case {
            name: "a key's terraform that closes the data object",
            setup: |root| {
                billing(
                    root,
                    IDENTITY,
                    "\"aws_iam_role.billing.arn }\\nresource \\\"aws_iam_user\\\" \\\"evil\\\" {\\n  name = \\\"x\\\"\"",
                )
            },
            args: &["add-component", "billing"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "keys.billing_role_arn.terraform",
                    "spans more than one line",
                    "write one Terraform expression on one line",
                ],
            },
        },
        Case {
            name: "a key's terraform with a trailing comment",
            setup: |root| billing(root, IDENTITY, "'aws_iam_role.billing.arn # }'"),
            args: &["add-component", "billing"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "keys.billing_role_arn.terraform",
                    "write one Terraform expression",
                ],
            },
        },
        Case {
            name: "a key's terraform that is two attributes",
            setup: |root| {
                billing(
                    root,
                    IDENTITY,
                    "\"aws_iam_role.billing.arn\\n    other = 1\"",
                )
            },
            args: &["add-component", "billing"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "keys.billing_role_arn.terraform",
                    "write one Terraform expression",
                ],
            },
        },
        Case {
            name: "a policy ARN with a quote",
            setup: |root| {
                billing(
                    root,
                    "  namespace: billing\n  service_account: billing\n  policy_arns: ['arn:aws:iam::aws:policy/x\", \"y']\n",
                    "aws_iam_role.billing.arn",
                )
            },
            args: &["add-component", "billing"],
            expect: Expect::Fails {
                code: 1,
                words: &["identity.policy_arns", "not an IAM policy ARN"],
            },
        },
        Case {
            name: "a policy ARN of another service",
            setup: |root| {
                billing(
                    root,
                    "  namespace: billing\n  service_account: billing\n  policy_arns: ['arn:aws:s3:::bucket']\n",
                    "aws_iam_role.billing.arn",
                )
            },
            args: &["add-component", "billing"],
            expect: Expect::Fails {
                code: 1,
                words: &["`arn:aws:s3:::bucket`", "not an IAM policy ARN"],
            },
        },
        Case {
            name: "a depends_on entry that closes the list",
            setup: |root| {
                cell_with_component(
                    root,
                    "billing",
                    "description: X\nlayers: [apps]\ndepends_on: [\"module.x]\\nresource \\\"aws_iam_user\\\" \\\"y\\\" {}\\n#\"]\n",
                )
            },
            args: &["add-component", "billing"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "depends_on has",
                    "is not a resource, data source or module reference",
                ],
            },
        },
        Case {
            name: "a repository component in any partition, waiting for its attachments",
            setup: |root| {
                billing(
                    root,
                    "  namespace: billing\n  service_account: team.billing\n  policy_arns: [arn:aws-us-gov:iam::123456789012:policy/team/billing-read]\n",
                    "aws_iam_role.billing.arn",
                )
            },
            args: &["add-component", "billing"],
            expect: Expect::Succeeds(|root, _| {
                assert_eq!(billing_blocks(root), BILLING_BLOCKS);
                assert_data_keys(root, &["billing_role_arn"]);
                let parsed = stack(root);
                let config_map = &parsed["cell-metadata.tf"]["resource"]["kubernetes_config_map_v1"]
                    ["cell_metadata"][0];
                let depends = config_map["depends_on"].to_string();
                for dep in [
                    "aws_eks_pod_identity_association.billing",
                    "aws_iam_role_policy_attachment.billing",
                ] {
                    assert!(depends.contains(dep), "depends_on lacks {dep}: {depends}");
                }
                let attachment = &parsed["billing.tf"]["resource"]["aws_iam_role_policy_attachment"]
                    ["billing"][0];
                assert!(
                    attachment["for_each"]
                        .to_string()
                        .contains("arn:aws-us-gov:iam::123456789012:policy/team/billing-read"),
                    "{attachment}"
                );
                let association = &parsed["billing.tf"]["resource"]["aws_eks_pod_identity_association"]
                    ["billing"][0];
                assert_eq!(association["service_account"], "team.billing");
            }),
        },
        Case {
            name: "an example that looks like YAML (refused: one line, issue 18)",
            setup: |root| {
                billing(root, IDENTITY, "aws_iam_role.billing.arn");
                edits::replace(
                    root,
                    "components/billing/component.yaml",
                    "example: arn:aws:iam::123456789012:role/x",
                    "example: \"x\\nkeys: {}\\nschema: 99\"",
                );
            },
            args: &["add-component", "billing"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "components/billing/component.yaml",
                    "line 6",
                    "keys.billing_role_arn.example",
                    "spans more than one line",
                ],
            },
        },
        // Builds read nothing outside the repository, and name what is wrong.
        Case {
            name: "a layer resource that is not UTF-8",
            setup: non_utf8_layer_resource,
            args: &["render", "eu-west-2-prod", "--layer", "controllers"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "infrastructure/controllers/platform-namespace.yaml",
                    "not valid UTF-8",
                    "offset 51",
                ],
            },
        },
        Case {
            name: "a configMapGenerator file outside the repository (../)",
            setup: generator_reads_outside_by_dot_dot,
            args: &["render", "eu-west-2-prod", "--layer", "controllers"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "infrastructure/controllers/kustomization.yaml",
                    "etc/passwd",
                    "not in or below the repository root",
                ],
            },
        },
        Case {
            name: "a secretGenerator env file at an absolute path",
            setup: generator_env_reads_an_absolute_path,
            args: &[
                "render",
                "eu-west-2-prod",
                "--layer",
                "controllers",
                "--kustomize",
                "external",
            ],
            expect: Expect::Fails {
                code: 1,
                words: &["/etc/passwd", "absolute path"],
            },
        },
        // One bound on bracket nesting for every YAML cellgen parses, named at file:line.
        Case {
            name: "render of a layer resource nested 100,000 brackets deep",
            setup: |root| {
                cell(root);
                let file = root.join("infrastructure/controllers/platform-namespace.yaml");
                let mut text = read(&file);
                text.push_str(&format!("  labels: {{x: {}}}\n", brackets()));
                std::fs::write(file, text).unwrap();
            },
            args: &["render", "eu-west-2-prod", "--layer", "controllers"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "infrastructure/controllers/platform-namespace.yaml:",
                    "nest more than 64 levels",
                ],
            },
        },
        Case {
            name: "a substituted value nested 100,000 brackets deep",
            setup: |root| {
                cell(root);
                let tf = root.join("terraform/cells/eu-west-2-prod/cell-metadata.tf");
                let text = read(&tf).replace(
                    "cell_name        = var.name",
                    &format!("cell_name        = \"{}\"", "[".repeat(100_000)),
                );
                std::fs::write(tf, text).unwrap();
            },
            args: &["check"],
            expect: Expect::Fails {
                code: 1,
                words: &["bad-substitution", "nest more than 64 levels"],
            },
        },
        // Flux builds from source-controller's artifact: what .sourceignore leaves out is not
        // there for Flux, so a layer referring to it is named with the rule.
        Case {
            name: "a layer resource .sourceignore leaves out of Flux's artifact",
            setup: |root| {
                cell(root);
                std::fs::write(
                    root.join(".sourceignore"),
                    "# not for Flux\ninfrastructure/**/platform-*.yaml\n",
                )
                .unwrap();
            },
            args: &["render", "eu-west-2-prod", "--layer", "controllers"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "infrastructure/controllers/kustomization.yaml",
                    "platform-namespace.yaml",
                    "left out of Flux's artifact",
                    ".sourceignore:2",
                ],
            },
        },
        // The Git host's keys end up in every cell's Flux Secret.
        Case {
            name: "--git-known-hosts-file that is empty",
            setup: |_| {},
            args: &[
                "new",
                "eu-west-2-prod",
                "--no-input",
                "--git-url",
                "ssh://git@git.example.com/acme/infra.git",
                "--git-known-hosts-file",
                "/dev/null",
            ],
            expect: Expect::Fails {
                code: 2,
                words: &[
                    "--git-known-hosts-file",
                    "/dev/null",
                    "is empty",
                    "ssh-keyscan git.example.com",
                ],
            },
        },
        Case {
            name: "--git-known-hosts-file that does not exist",
            setup: |_| {},
            args: &[
                "new",
                "eu-west-2-prod",
                "--no-input",
                "--git-url",
                "ssh://git@git.example.com/acme/infra.git",
                "--git-known-hosts-file",
                "/nonexistent/known_hosts",
            ],
            expect: Expect::Fails {
                code: 2,
                words: &[
                    "--git-known-hosts-file",
                    "cannot read /nonexistent/known_hosts",
                ],
            },
        },
        Case {
            name: "git.known_hosts with a key of another host than git.url's",
            setup: |root| {
                cell(root);
                let path = root.join("cellgen.yaml");
                let text = read(&path).replace("    github.com ", "    gitlab.com ");
                std::fs::write(path, text).unwrap();
            },
            args: &["list"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "cellgen.yaml:",
                    "names no key of github.com",
                    "ssh-keyscan github.com",
                ],
            },
        },
        Case {
            name: "git.known_hosts line with a terminal escape in it",
            setup: |root| {
                cell(root);
                let path = root.join("cellgen.yaml");
                let text = read(&path).replacen(
                    "    github.com ssh-ed25519 ",
                    "    github.com ssh-ed25519 \u{1b}[2J",
                    1,
                );
                std::fs::write(path, text).unwrap();
            },
            args: &["list"],
            expect: Expect::Fails {
                code: 1,
                words: &["cellgen.yaml:", "control characters are not allowed"],
            },
        },
    ]
}

#[test]
fn files_table() {
    run_table("files", &cases());
}
