//! The checkers in `support` must catch what they claim to: each is fed a broken input here.

mod support;

use std::fs;

use support::*;

fn tf_dir(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = temp_dir();
    for (name, text) in files {
        fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

const VERSIONS: &str = r#"
terraform {
  required_providers {
    aws = { source = "hashicorp/aws" }
  }
}
"#;

#[test]
fn terraform_checker_accepts_a_resolving_stack() {
    let dir = tf_dir(&[
        ("versions.tf", VERSIONS),
        (
            "main.tf",
            r#"
variable "name" { type = string }
locals { tags = { cell = var.name } }
data "aws_caller_identity" "me" {}
resource "aws_iam_role" "r" {
  name   = "${var.name}-x"
  tags   = local.tags
  policy = "$${aws:PrincipalTag/x} ${data.aws_caller_identity.me.account_id}"
  # aws_iam_role.ghost in a comment is no reference
  description = join(",", [for k, v in local.tags : "${k}=${v}"]) # var.ghost
}
module "m" { source = "./m" }
output "o" { value = [aws_iam_role.r.arn, module.m.x, path.module] }
"#,
        ),
        ("terraform.tfvars", "name = \"x\"\n"),
    ]);
    let problems = check_terraform_references(&hcl_parse_dir(dir.path()));
    assert!(problems.is_empty(), "false positives: {problems:#?}");
}

#[test]
fn terraform_checker_reports_every_kind_of_unresolved_reference() {
    let dir = tf_dir(&[
        ("versions.tf", VERSIONS),
        (
            "main.tf",
            r#"
resource "aws_iam_role" "r" {
  name = "${var.nmae}-x"
  tags = local.tgas
  a    = module.ekz.cluster_name
  b    = data.aws_caller_identity.me.account_id
  c    = aws_iam_role.other.arn
}
resource "helm_release" "h" {
  depends_on = [kubernetes_config_map_v1.missing]
}
provider "flux" {}
"#,
        ),
        ("terraform.tfvars", "unknown = 1\n"),
    ]);
    let problems = check_terraform_references(&hcl_parse_dir(dir.path())).join("\n");
    for expected in [
        "`var.nmae`",
        "`local.tgas`",
        "`module.ekz.cluster_name`",
        "data source `aws_caller_identity.me`",
        "resource `aws_iam_role.other`",
        "resource `kubernetes_config_map_v1.missing`",
        "type `helm_release` needs provider `helm`",
        "provider block `flux`",
        "terraform.tfvars: sets `unknown`",
    ] {
        assert!(
            problems.contains(expected),
            "missing {expected} in:\n{problems}"
        );
    }
}

#[test]
fn hcl_parse_errors_name_the_file() {
    let dir = tf_dir(&[("ok.tf", VERSIONS), ("broken.tf", "resource \"a\" {\n")]);
    let err = try_hcl_parse_dir(dir.path()).expect_err("an unclosed block parsed");
    assert_mentions(&err, &["broken.tf"]);
}

fn kustomization(spec_extra: &str) -> Vec<YamlDoc> {
    let text = format!(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  \
         namespace: flux-system\nspec:\n  interval: 10m\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    \
         name: flux-system\n{spec_extra}"
    );
    parse_yaml_docs("test.yaml", &text).unwrap()
}

#[test]
fn flux_validation_accepts_a_valid_kustomization() {
    let docs = kustomization(
        "  postBuild:\n    substituteFrom:\n      - kind: ConfigMap\n        name: cell-metadata\n",
    );
    assert_eq!(count_flux_objects(&docs), 1);
    let problems = validate_flux_objects(&docs);
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn flux_validation_reports_typos_missing_fields_and_bad_values() {
    // A misspelt field in a nested object (pruned silently by the API server).
    let problems = validate_flux_objects(&kustomization(
        "  postBuild:\n    substitueFrom:\n      - kind: ConfigMap\n        name: x\n",
    ))
    .join("\n");
    assert!(
        problems.contains("/spec/postBuild") && problems.contains("substitueFrom"),
        "{problems}"
    );
    // A bad enum value.
    let problems = validate_flux_objects(&kustomization(
        "  postBuild:\n    substituteFrom:\n      - kind: Secrett\n        name: x\n",
    ))
    .join("\n");
    assert_mentions(&problems, &["/spec/postBuild/substituteFrom/0/kind"]);
    // A missing required field.
    let docs = parse_yaml_docs(
        "x.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: a\nspec:\n  interval: 1m\n  prune: true\n",
    )
    .unwrap();
    let problems = validate_flux_objects(&docs).join("\n");
    assert!(
        problems.contains("sourceRef") && problems.contains("x.yaml"),
        "{problems}"
    );
    // A top-level typo.
    let docs = parse_yaml_docs(
        "y.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: a\nsepc: {}\n",
    )
    .unwrap();
    assert!(
        validate_flux_objects(&docs).join("\n").contains("sepc"),
        "top-level typo accepted"
    );
    // A removed API version.
    let docs = parse_yaml_docs(
        "z.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1beta2\nkind: Kustomization\nmetadata:\n  name: a\n",
    )
    .unwrap();
    let problems = validate_flux_objects(&docs).join("\n");
    assert_mentions(&problems, &["no Flux CRD serves"]);
    // Non-Flux objects are ignored.
    let docs = parse_yaml_docs(
        "n.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\nbogus: 1\n",
    )
    .unwrap();
    assert!(validate_flux_objects(&docs).is_empty());
    assert_eq!(count_flux_objects(&docs), 0);
}

#[test]
fn tree_hash_sees_dotfiles_empty_directories_and_content_changes() {
    let dir = temp_dir();
    fs::write(dir.path().join(".hidden"), "a").unwrap();
    let before = tree_hash(dir.path());
    assert!(before.contains_key(std::path::Path::new(".hidden")));
    fs::create_dir(dir.path().join("empty")).unwrap();
    let with_dir = tree_hash(dir.path());
    assert_eq!(tree_diff(&before, &with_dir), ["added    empty"]);
    fs::write(dir.path().join(".hidden"), "b").unwrap();
    assert!(
        tree_diff(&with_dir, &tree_hash(dir.path()))
            .iter()
            .any(|l| l == "changed  .hidden")
    );
}

#[test]
fn kustomize_build_reports_errors() {
    let dir = temp_dir();
    fs::write(
        dir.path().join("kustomization.yaml"),
        "resources:\n  - missing.yaml\n",
    )
    .unwrap();
    let err = kustomize_build(dir.path()).expect_err("a missing resource built");
    assert_mentions(&err, &["missing.yaml"]);
}

/// A test without its tool skips on a developer's machine and fails under CI.
#[test]
fn a_missing_tool_fails_under_ci_and_skips_elsewhere() {
    use support::tools::{runs, skip_or_fail};
    assert!(!runs("cellgen-no-such-tool", &[]));
    assert!(runs("sh", &["-c", "true"]));
    skip_or_fail(false, "cellgen-no-such-tool", "this check");
    let failed = std::panic::catch_unwind(|| skip_or_fail(true, "cellgen-no-such-tool", "x"));
    let message = failed.expect_err("under CI a missing tool fails the test");
    let message = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        message.contains("CI=true") && message.contains("cellgen-no-such-tool"),
        "{message}"
    );
}

/// Every test that skips for a missing tool goes through support/tools.rs, so none can skip
/// silently under CI: no other test prints that it skips.
#[test]
fn tests_skip_only_through_the_tools_helper() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut stack = vec![root.clone()];
    let mut offenders = Vec::new();
    // Spelt in two parts so this file does not find itself.
    let print = ["eprintln", "!("].concat();
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if !path.ends_with("node_modules") {
                    stack.push(path);
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") || path.ends_with("support/tools.rs") {
                continue;
            }
            let text = fs::read_to_string(&path).unwrap();
            for (i, line) in text.lines().enumerate() {
                let lower = line.to_lowercase();
                if lower.contains(&print)
                    && (lower.contains("skip") || lower.contains("not on path"))
                {
                    offenders.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "skip through support::tools (tool_or_skip, skip_without, skip_environment):\n{}",
        offenders.join("\n")
    );
}
