//! Every generated Terraform stack checked against the vendored facts of the real module
//! releases, providers and backend it pins (schemas/terraform), the way `terraform validate`
//! would, every reference resolved, and `terraform fmt -check` clean: for every catalog component
//! alone and all together, with and without the egress gateway, and for a repository-defined
//! component. The checker itself (tests/support/terraform) is fed broken stacks here, so it is
//! known to fail. Each stack's FluxInstance is checked against the flux-instance chart and the
//! FluxInstance CRD too (tests/support/flux_instance.rs, schemas/flux-operator).

mod support;

use std::fs;
use std::path::Path;

use support::flux_instance::flux_instance;
use support::terraform::facts::{admits, facts};
use support::terraform::{check_files, check_files_with, check_stack};
use support::*;

// ---------------------------------------------------------------------------------------------
// Generated stacks
// ---------------------------------------------------------------------------------------------

/// The embedded catalog, as `cellgen list components` gives it: (name, has an identity).
fn catalog_components(root: &Path) -> Vec<(String, bool)> {
    let output = cellgen()
        .arg("-C")
        .arg(root)
        .args(["list", "components", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let list: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let names: Vec<(String, bool)> = list
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["origin"] == "embedded")
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                !c["identity"].is_null(),
            )
        })
        .collect();
    assert!(names.len() >= 8, "the catalog lists only {names:?}");
    names
}

/// Checks every cell's stack of a repository: the vendored facts, reference resolution over
/// HashiCorp's parser, and `terraform fmt -check -recursive` on all of them.
fn assert_stacks_valid(root: &Path, cells: &[String]) {
    let dirs: Vec<_> = cells
        .iter()
        .map(|c| root.join("terraform/cells").join(c))
        .collect();
    let mut problems = Vec::new();
    let parsed = hcl_parse_dirs(&dirs.iter().map(|d| d.as_path()).collect::<Vec<_>>());
    let settings: serde_json::Value =
        yaml_serde::from_str(&read(&root.join("cellgen.yaml"))).unwrap();
    for ((cell, dir), parsed) in cells.iter().zip(&dirs).zip(&parsed) {
        // The FluxInstance it hands the Flux Operator, as the chart and the API server read it.
        if let Err(refused) = flux_instance(parsed, &settings) {
            problems.extend(
                refused
                    .into_iter()
                    .map(|p| format!("terraform/cells/{cell}/flux.tf: {p}")),
            );
        }
        assert!(
            parsed
                .as_object()
                .is_some_and(|files| files.contains_key("cell-metadata.tf")),
            "{cell}: the parser did not read the stack"
        );
        problems.extend(
            check_stack(dir)
                .into_iter()
                .chain(check_terraform_references(parsed))
                .map(|p| format!("terraform/cells/{cell}/{p}")),
        );
    }
    if let Err(e) = terraform_fmt_check(&root.join("terraform")) {
        problems.push(e);
    }
    assert!(
        problems.is_empty(),
        "generated Terraform does not validate against schemas/terraform:\n{}",
        problems.join("\n")
    );
}

/// Regions to give each generated cell its own name.
const REGIONS: &[&str] = &[
    "eu-west-1",
    "eu-west-2",
    "eu-west-3",
    "eu-central-1",
    "eu-north-1",
    "us-east-1",
    "us-east-2",
    "us-west-2",
    "ap-southeast-2",
    "ap-northeast-1",
];

#[test]
fn every_catalog_component_alone_and_all_together_with_and_without_egress_validates() {
    let dir = temp_dir();
    let root = dir.path();
    new_cell(root, &["eu-south-1-dev"]); // the scaffold, and a cell with no component
    let components = catalog_components(root);
    assert!(
        components.len() < REGIONS.len(),
        "more components than regions"
    );
    let names: Vec<&str> = components.iter().map(|(n, _)| n.as_str()).collect();
    let all = names.join(",");
    let mut cells = vec!["eu-south-1-dev".to_string()];
    let sets = names.iter().copied().chain([all.as_str()]);
    for (region, set) in REGIONS.iter().zip(sets) {
        for (env, egress) in [
            ("prod", "--no-egress-gateway"),
            ("staging", "--egress-gateway"),
        ] {
            let cell = format!("{region}-{env}");
            new_cell(
                root,
                &[&cell, egress, "--components", set, "--with-requirements"],
            );
            let tf = root.join("terraform/cells").join(&cell);
            assert_eq!(
                tf.join("egress.tf").exists(),
                egress == "--egress-gateway",
                "{cell}"
            );
            cells.push(cell);
        }
    }
    // The stacks really carry the components' Terraform, so the check covers it.
    let everything = root.join(format!("terraform/cells/{}-staging", REGIONS[names.len()]));
    for (name, identity) in &components {
        assert_eq!(
            everything.join(format!("{name}.tf")).exists(),
            *identity,
            "{name}: its Terraform is not in the all-components cell"
        );
    }
    assert!(components.iter().filter(|(_, i)| *i).count() >= 6);
    assert_stacks_valid(root, &cells);
}

#[test]
fn a_repository_component_with_identity_and_policy_arns_validates() {
    let dir = temp_dir();
    let root = dir.path();
    new_cell(
        root,
        &[
            "eu-west-1-prod",
            "--state-bucket",
            "acme-terraform-state",
            "--state-region",
            "eu-central-1",
        ],
    );
    new_cell(
        root,
        &[
            "us-east-1-staging",
            "--egress-gateway",
            "--components",
            "karpenter",
        ],
    );
    let component = root.join("components/billing");
    fs::create_dir_all(component.join("apps")).unwrap();
    fs::write(
        component.join("component.yaml"),
        "description: Billing service\n\
         requires: []\n\
         layers: [apps]\n\
         keys:\n  billing_role_arn:\n    description: IAM role of the billing service\n    \
         example: arn:aws:iam::123456789012:role/eu-west-1-prod-billing\n    \
         terraform: aws_iam_role.billing.arn\n\
         identity:\n  namespace: billing\n  service_account: billing\n  \
         policy_arns: [arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess, arn:aws:iam::aws:policy/AmazonSQSReadOnlyAccess]\n",
    )
    .unwrap();
    fs::write(
        component.join("apps/kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [configmap.yaml]\n",
    )
    .unwrap();
    fs::write(
        component.join("apps/configmap.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: billing\n  namespace: default\ndata:\n  role: ${billing_role_arn}\n",
    )
    .unwrap();
    let cells = [
        "eu-west-1-prod".to_string(),
        "us-east-1-staging".to_string(),
    ];
    for cell in &cells {
        let output = cellgen()
            .arg("-C")
            .arg(root)
            .args(["add-component", "billing", "--cell", cell])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "add-component billing --cell {cell}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let tf = root.join("terraform/cells").join(cell);
        let billing = read(&tf.join("billing.tf"));
        assert!(
            billing.contains("aws_iam_role_policy_attachment"),
            "{cell}: billing.tf has no policy attachment:\n{billing}"
        );
        assert!(read(&tf.join("cell-metadata.tf")).contains("billing_role_arn"));
    }
    assert!(
        read(&root.join("terraform/cells/eu-west-1-prod/backend.tf"))
            .contains("acme-terraform-state")
    );
    assert_stacks_valid(root, &cells);
}

// ---------------------------------------------------------------------------------------------
// The checker fails on broken stacks
// ---------------------------------------------------------------------------------------------

fn stack(files: &[(&str, &str)]) -> Vec<String> {
    check_files(&owned(files))
}

fn owned(files: &[(&str, &str)]) -> Vec<(String, String)> {
    files
        .iter()
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect()
}

const VERSIONS: &str = r#"terraform {
  required_version = ">= 1.5.7"
  required_providers {
    aws        = { source = "hashicorp/aws", version = "~> 6.0" }
    kubernetes = { source = "hashicorp/kubernetes", version = "~> 2.38" }
    helm       = { source = "hashicorp/helm", version = "~> 3.0" }
    flux       = { source = "fluxcd/flux", version = "~> 1.7" }
  }
  backend "s3" {
    key          = "cells/x/terraform.tfstate"
    region       = "eu-west-2"
    use_lockfile = true
  }
}
"#;

/// A small stack that uses every form the checker knows, written right.
const VALID: &str = r#"
variable "name" {
  type = string
}

locals {
  tags = { cell = var.name }
}

provider "kubernetes" {
  host = module.eks.cluster_endpoint
  exec {
    api_version = "client.authentication.k8s.io/v1beta1"
    command     = "aws"
  }
}

provider "helm" {
  kubernetes = {
    host = module.eks.cluster_endpoint
    exec = {
      api_version = "client.authentication.k8s.io/v1beta1"
      command     = "aws"
      args        = ["eks", "get-token"]
    }
  }
}

module "eks" {
  source  = "terraform-aws-modules/eks/aws"
  version = "~> 21.0"

  name   = var.name
  addons = {
    coredns = { before_compute = false, most_recent = "true" }
  }
  tags = local.tags
}

module "karpenter" {
  source  = "terraform-aws-modules/eks/aws//modules/karpenter"
  version = "~> 21.0"

  cluster_name = module.eks.cluster_name
}

resource "helm_release" "cilium" {
  name    = "cilium"
  chart   = "cilium"
  version = 1.18
  wait    = "false"
  set = [
    { name = "a", value = "b" },
  ]
  timeout = 600
}

data "aws_iam_policy_document" "trust" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["pods.eks.amazonaws.com"]
    }
    dynamic "condition" {
      for_each = local.tags
      content {
        test     = "StringEquals"
        variable = condition.key
        values   = [condition.value]
      }
    }
  }
}

resource "aws_iam_role" "r" {
  count              = 1
  name               = "${var.name}-r"
  assume_role_policy = data.aws_iam_policy_document.trust.json
  lifecycle {
    ignore_changes = [tags]
  }
}

resource "kubernetes_config_map_v1" "m" {
  metadata {
    name = "m"
  }
  data = {
    role  = aws_iam_role.r[0].arn
    queue = module.karpenter.queue_name
  }
  depends_on = [module.karpenter]
}

output "role" {
  value = aws_iam_role.r[*].arn
}
"#;

/// The valid stack with `from` replaced by `to` (which must occur).
fn broken(from: &str, to: &str) -> Vec<String> {
    assert!(VALID.contains(from), "the valid stack has no `{from}`");
    stack(&[
        ("versions.tf", VERSIONS),
        ("main.tf", &VALID.replacen(from, to, 1)),
    ])
}

#[track_caller]
fn assert_reports(problems: &[String], words: &[&str]) {
    assert!(
        problems.iter().any(|p| words.iter().all(|w| p.contains(w))),
        "no problem mentions all of {words:?}; got:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_checker_accepts_a_valid_stack() {
    let problems = stack(&[("versions.tf", VERSIONS), ("main.tf", VALID)]);
    assert!(
        problems.is_empty(),
        "false positives:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_checker_reports_unknown_arguments_and_blocks() {
    let p = broken("wait    = \"false\"", "wiat = false");
    assert_reports(
        &p,
        &[
            "main.tf:",
            "helm_release.cilium",
            "no argument `wiat`",
            "did you mean `wait`",
        ],
    );
    let p = broken("count              = 1", "count = 1\n  colour = \"red\"");
    assert_reports(&p, &["aws_iam_role.r", "no argument `colour`"]);
    let p = broken("    principals {", "    principal {");
    assert_reports(
        &p,
        &["no block type `principal`", "did you mean `principals`"],
    );
    let p = broken(
        "  cluster_name = module.eks.cluster_name",
        "  cluster_nme = module.eks.cluster_name",
    );
    assert_reports(
        &p,
        &[
            "module.karpenter",
            "`cluster_nme` is not an input variable",
            "modules/karpenter",
        ],
    );
    let p = broken(
        "    api_version = \"client.authentication.k8s.io/v1beta1\"\n    command     = \"aws\"\n  }\n}",
        "    api_version = \"v1\"\n    command     = \"aws\"\n    shell = \"sh\"\n  }\n}",
    );
    assert_reports(&p, &["provider.kubernetes.exec", "no argument `shell`"]);
    let p = broken(
        "  name   = var.name\n",
        "  name   = var.name\n  timeouts {\n  }\n",
    );
    assert_reports(&p, &["module.eks", "takes no `timeouts` block"]);
    let p = broken("    ignore_changes = [tags]", "    ignore_change = [tags]");
    assert_reports(&p, &["lifecycle", "`ignore_change`"]);
}

#[test]
fn the_checker_reports_a_block_written_as_an_argument_and_the_reverse() {
    // kubernetes_config_map_v1.metadata is a block (protocol 5 provider).
    let p = broken(
        "  metadata {\n    name = \"m\"\n  }",
        "  metadata = {\n    name = \"m\"\n  }",
    );
    assert_reports(
        &p,
        &[
            "kubernetes_config_map_v1.m.metadata",
            "is a block",
            "write `metadata { ... }`",
        ],
    );
    // helm 3's `set` is a nested attribute: `set { ... }` is Helm 2 syntax.
    let p = broken(
        "  set = [\n    { name = \"a\", value = \"b\" },\n  ]",
        "  set {\n    name  = \"a\"\n    value = \"b\"\n  }",
    );
    assert_reports(
        &p,
        &[
            "helm_release.cilium.set",
            "nested attribute",
            "write `set = [{ ... }]`",
        ],
    );
    // helm 3's provider `kubernetes` is a nested attribute too.
    let p = broken(
        "provider \"helm\" {\n  kubernetes = {",
        "provider \"helm\" {\n  kubernetes {",
    );
    assert_reports(
        &p,
        &[
            "provider.helm.kubernetes",
            "not a block",
            "write `kubernetes = { ... }`",
        ],
    );
    // An object given for a list nested attribute.
    let p = broken(
        "  set = [\n    { name = \"a\", value = \"b\" },\n  ]",
        "  set = { name = \"a\", value = \"b\" }",
    );
    assert_reports(
        &p,
        &[
            "helm_release.cilium.set",
            "nesting mode list",
            "not an object",
        ],
    );
}

#[test]
fn the_checker_reports_missing_required_arguments_and_block_counts() {
    let p = broken("  chart   = \"cilium\"\n", "");
    assert_reports(
        &p,
        &["helm_release.cilium", "lacks the required argument `chart`"],
    );
    let p = broken("      command     = \"aws\"\n      args", "      args");
    assert_reports(
        &p,
        &[
            "provider.helm.kubernetes.exec",
            "lacks the required attribute `command`",
        ],
    );
    let p = broken("      type        = \"Service\"\n", "");
    assert_reports(
        &p,
        &["statement.principals", "lacks the required argument `type`"],
    );
    let p = broken("  metadata {\n    name = \"m\"\n  }", "");
    assert_reports(
        &p,
        &["kubernetes_config_map_v1.m", "at least 1 `metadata` block"],
    );
    let p = broken(
        "  metadata {\n    name = \"m\"\n  }",
        "  metadata {\n    name = \"m\"\n  }\n  metadata {\n    name = \"n\"\n  }",
    );
    assert_reports(
        &p,
        &[
            "kubernetes_config_map_v1.m",
            "at most 1 `metadata` block",
            "found 2",
        ],
    );
    // No vendored release has a required variable today: make one required to see the check.
    let mut facts = facts().clone();
    let eks = facts
        .modules
        .iter_mut()
        .find(|m| m.source == "terraform-aws-modules/eks/aws")
        .unwrap();
    eks.dirs
        .get_mut("modules/karpenter")
        .unwrap()
        .variables
        .get_mut("namespace")
        .unwrap()
        .required = true;
    let p = check_files_with(
        &facts,
        &owned(&[("versions.tf", VERSIONS), ("main.tf", VALID)]),
    );
    assert_reports(
        &p,
        &["module.karpenter", "lacks `namespace`, a required input"],
    );
}

#[test]
fn the_checker_reports_values_that_do_not_fit_the_type() {
    let p = broken(
        "coredns = { before_compute = false, most_recent = \"true\" }",
        "coredns = { before_compute = false, most_recnet = true }",
    );
    assert_reports(
        &p,
        &[
            "`most_recnet` is not an attribute of `module.eks.addons.coredns`",
            "did you mean `most_recent`",
        ],
    );
    let p = broken("before_compute = false", "before_compute = \"soon\"");
    assert_reports(
        &p,
        &[
            "module.eks.addons.coredns.before_compute",
            "must be bool",
            "\"soon\"",
        ],
    );
    let p = broken("  tags = local.tags\n}", "  tags = [\"a\"]\n}");
    assert_reports(&p, &["module.eks.tags", "must be map(string)", "a list"]);
    let p = broken("  timeout = 600", "  timeout = \"ten minutes\"");
    assert_reports(&p, &["helm_release.cilium.timeout", "must be number"]);
    let p = broken(
        "{ name = \"a\", value = \"b\" }",
        "{ name = \"a\", valeu = \"b\" }",
    );
    assert_reports(
        &p,
        &["`valeu` is not an attribute of `helm_release.cilium.set[0]`"],
    );
    let p = broken(
        "    host = module.eks.cluster_endpoint\n    exec",
        "    host = module.eks.cluster_endpoint\n    hots = \"x\"\n    exec",
    );
    assert_reports(
        &p,
        &[
            "`hots` is not an attribute of `provider.helm.kubernetes`",
            "did you mean `host`",
        ],
    );
    let p = broken("  version = 1.18", "  version = [1]");
    assert_reports(&p, &["helm_release.cilium.version", "must be string"]);
    // A computed-only attribute cannot be set.
    let p = broken("  timeout = 600", "  manifest = \"x\"");
    assert_reports(&p, &["helm_release.cilium.manifest", "cannot be set"]);
}

#[test]
fn the_checker_reports_unknown_outputs_and_attributes() {
    let p = broken(
        "queue = module.karpenter.queue_name",
        "queue = module.karpenter.queue",
    );
    assert_reports(
        &p,
        &[
            "`module.karpenter.queue`",
            "modules/karpenter",
            "has no output `queue`",
            "did you mean `queue_",
        ],
    );
    let p = broken(
        "host = module.eks.cluster_endpoint",
        "host = module.eks.endpoint",
    );
    assert_reports(&p, &["`module.eks.endpoint`", "has no output"]);
    let p = broken("aws_iam_role.r[0].arn", "aws_iam_role.r[0].arnn");
    assert_reports(
        &p,
        &[
            "`aws_iam_role.r.arnn`",
            "has no attribute `arnn`",
            "did you mean `arn`",
        ],
    );
    let p = broken(
        "data.aws_iam_policy_document.trust.json",
        "data.aws_iam_policy_document.trust.jsn",
    );
    assert_reports(
        &p,
        &["data.aws_iam_policy_document.trust.jsn", "has no attribute"],
    );
}

#[test]
fn the_checker_reports_unknown_functions_and_wrong_arities() {
    let p = broken("variable = condition.key", "variable = lowr(condition.key)");
    assert_reports(
        &p,
        &["`lowr` is not a Terraform function", "did you mean `lower`"],
    );
    let p = broken("variable = condition.key", "variable = join()");
    assert_reports(&p, &["`join` takes at least 1 argument, not 0"]);
    let p = broken(
        "variable = condition.key",
        "variable = lower(condition.key, 2)",
    );
    assert_reports(&p, &["`lower` takes 1 argument, not 2"]);
    let p = broken(
        "  count              = 1",
        "  count    = 1\n  for_each = {}",
    );
    assert_reports(&p, &["both `count` and `for_each`"]);
}

#[test]
fn the_checker_reports_duplicate_addresses() {
    let dup = "resource \"aws_iam_role\" \"r\" {\n  assume_role_policy = \"{}\"\n}\n";
    let p = stack(&[
        ("versions.tf", VERSIONS),
        ("main.tf", VALID),
        ("more.tf", dup),
    ]);
    assert_reports(
        &p,
        &[
            "more.tf:1",
            "`aws_iam_role.r` is declared again",
            "first at main.tf:",
        ],
    );
    let p = stack(&[
        ("versions.tf", VERSIONS),
        ("main.tf", VALID),
        ("more.tf", "locals {\n  tags = {}\n}\n"),
    ]);
    assert_reports(&p, &["more.tf:2", "`local.tags` is declared again"]);
    let p = stack(&[
        ("versions.tf", VERSIONS),
        ("main.tf", VALID),
        ("more.tf", "module \"eks\" {\n  source = \"./x\"\n}\n"),
    ]);
    assert_reports(&p, &["`module.eks` is declared again"]);
}

#[test]
fn the_checker_reports_types_releases_and_backend_arguments_it_has_no_facts_for() {
    let p = broken(
        "resource \"aws_iam_role\" \"r\"",
        "resource \"aws_iam_rol\" \"r\"",
    );
    assert_reports(
        &p,
        &[
            "has no resource type `aws_iam_rol`",
            "did you mean `aws_iam_role`",
        ],
    );
    let p = broken(
        "resource \"aws_iam_role\" \"r\"",
        "resource \"aws_lambda_function\" \"r\"",
    );
    assert_reports(&p, &["`aws_lambda_function` exists", "not extracted"]);
    let p = broken(
        "resource \"aws_iam_role\" \"r\"",
        "resource \"random_password\" \"r\"",
    );
    assert_reports(&p, &["no vendored schema for provider `random`"]);
    let p = broken(
        "source  = \"terraform-aws-modules/eks/aws//modules/karpenter\"",
        "source  = \"terraform-aws-modules/eks/aws//modules/fargate-profile\"",
    );
    assert_reports(
        &p,
        &["no vendored facts for module source", "fargate-profile"],
    );
    let p = broken(
        "  version = \"~> 21.0\"\n\n  cluster_name",
        "  version = \"~> 20.0\"\n\n  cluster_name",
    );
    assert_reports(
        &p,
        &["module.karpenter", "`~> 20.0` does not admit 21.19.0"],
    );
    let versions = VERSIONS.replace("~> 3.0", "~> 2.17");
    let p = stack(&[("versions.tf", &versions), ("main.tf", VALID)]);
    assert_reports(
        &p,
        &["required_providers.helm", "`~> 2.17` does not admit 3.1.2"],
    );
    let versions = VERSIONS.replace(
        "use_lockfile = true",
        "use_lockfile = true\n    dynamodb_tabel = \"locks\"",
    );
    let p = stack(&[("versions.tf", &versions), ("main.tf", VALID)]);
    assert_reports(
        &p,
        &[
            "versions.tf:",
            "s3 backend",
            "no argument `dynamodb_tabel`",
            "did you mean `dynamodb_table`",
        ],
    );
    let versions = VERSIONS.replace(">= 1.5.7", ">= 1.3.0");
    let p = stack(&[("versions.tf", &versions), ("main.tf", VALID)]);
    assert_reports(
        &p,
        &[
            "module.eks",
            "requires Terraform `>= 1.5.7`",
            "admits 1.3.0",
        ],
    );
}

#[test]
fn version_constraints_read_as_terraform_reads_them() {
    for (c, v, ok) in [
        ("~> 21.0", "21.19.0", true),
        ("~> 21.0", "22.0.0", false),
        ("~> 2.38", "2.38.0", true),
        ("~> 2.38", "3.0.0", false),
        ("~> 1.2.3", "1.2.9", true),
        ("~> 1.2.3", "1.3.0", false),
        (">= 6.28", "6.66.0", true),
        (">= 6.28", "6.27.9", false),
        (">= 1.5.7, < 2.0", "1.11.4", true),
        ("= 1.2.3", "1.2.4", false),
        ("1.2.3", "1.2.3", true),
        ("~> 6", "7.0.0", false),
    ] {
        assert_eq!(admits(c, v), Ok(ok), "{c} admits {v}");
    }
    assert!(admits("~> x", "1.0.0").is_err());
}

#[test]
fn terraform_fmt_check_fails_on_an_unformatted_stack() {
    let dir = temp_dir();
    fs::write(
        dir.path().join("main.tf"),
        "locals {\n  a = 1\n  bb = 2\n}\n",
    )
    .unwrap();
    let err =
        terraform_fmt_check(dir.path()).expect_err("unaligned `=` passed terraform fmt -check");
    assert!(err.contains("main.tf"), "{err}");
    fs::write(
        dir.path().join("main.tf"),
        "locals {\n  a  = 1\n  bb = 2\n}\n",
    )
    .unwrap();
    terraform_fmt_check(dir.path()).unwrap();
}

#[test]
fn the_checker_refuses_ephemeral_values_where_terraform_stores_them() {
    let stack_with = |secret: &str| {
        stack(&[
            ("versions.tf", VERSIONS),
            (
                "main.tf",
                &format!(
                    "variable \"key\" {{\n  type      = string\n  ephemeral = true\n}}\n\nlocals {{\n  wrapped = {{ identity = var.key }}\n}}\n\n{secret}"
                ),
            ),
        ])
    };
    let write_only = "resource \"kubernetes_secret_v1\" \"s\" {\n  metadata {\n    name = \"s\"\n  }\n  data_wo          = local.wrapped\n  data_wo_revision = 1\n}\n";
    let problems = stack_with(write_only);
    assert!(
        problems.is_empty(),
        "false positives:\n{}",
        problems.join("\n")
    );
    let p =
        stack_with(&write_only.replace("data_wo          = local.wrapped", "data = local.wrapped"));
    assert_reports(
        &p,
        &[
            "`kubernetes_secret_v1.s.data` reads the ephemeral `local.wrapped`",
            "not a write-only attribute",
        ],
    );
    let p = stack_with(&write_only.replace("    name = \"s\"", "    name = var.key"));
    assert_reports(
        &p,
        &["`kubernetes_secret_v1.s.metadata` reads the ephemeral `var.key`"],
    );
    let p = stack_with("output \"k\" {\n  value = var.key\n}\n");
    assert_reports(&p, &["output `k` reads the ephemeral `var.key`"]);
    assert!(
        stack_with("output \"k\" {\n  value     = var.key\n  ephemeral = true\n}\n").is_empty()
    );
}

#[test]
fn the_checker_reads_removed_and_import_blocks_as_terraform_does() {
    let removed =
        "removed {\n  from = helm_release.old\n\n  lifecycle {\n    destroy = false\n  }\n}\n";
    let problems = stack(&[
        ("versions.tf", VERSIONS),
        ("main.tf", VALID),
        ("gone.tf", removed),
    ]);
    assert!(
        problems.is_empty(),
        "false positives:\n{}",
        problems.join("\n")
    );
    let p = stack(&[
        ("versions.tf", VERSIONS),
        ("main.tf", VALID),
        (
            "gone.tf",
            &removed.replace("helm_release.old", "helm_release.cilium"),
        ),
    ]);
    assert_reports(
        &p,
        &["`helm_release.cilium` is removed but its resource block still exists"],
    );
    let p = stack(&[
        ("versions.tf", VERSIONS),
        ("main.tf", VALID),
        (
            "gone.tf",
            &removed.replace("helm_release.old", "random_password.old"),
        ),
    ]);
    assert_reports(
        &p,
        &["provider `random`, which required_providers does not pin"],
    );
    let p = stack(&[
        ("versions.tf", VERSIONS),
        ("main.tf", VALID),
        (
            "gone.tf",
            &removed.replace("destroy = false", "destroy = false\n    keep = true"),
        ),
    ]);
    assert_reports(&p, &["`removed.lifecycle` takes only `destroy`"]);
    let p = stack(&[
        ("versions.tf", VERSIONS),
        ("main.tf", VALID),
        (
            "gone.tf",
            &removed.replace("  from = helm_release.old\n", ""),
        ),
    ]);
    assert_reports(&p, &["a `removed` block lacks `from`"]);
    let import = "import {\n  to = helm_release.cilium\n  id = \"kube-system/cilium\"\n}\n";
    assert!(
        stack(&[
            ("versions.tf", VERSIONS),
            ("main.tf", VALID),
            ("in.tf", import)
        ])
        .is_empty()
    );
    let p = stack(&[
        ("versions.tf", VERSIONS),
        ("main.tf", VALID),
        (
            "in.tf",
            &import.replace("helm_release.cilium", "helm_release.other"),
        ),
    ]);
    assert_reports(
        &p,
        &["`import.to` names `helm_release.other`, which is not declared"],
    );
    let p = stack(&[
        ("versions.tf", VERSIONS),
        ("main.tf", VALID),
        (
            "in.tf",
            &import.replace("  id = \"kube-system/cilium\"\n", ""),
        ),
    ]);
    assert_reports(&p, &["an `import` block lacks `id`"]);
}
