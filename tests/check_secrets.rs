//! `cellgen check` traces every value of cell-metadata through the cell's whole stack: a value
//! built from a secret (a sensitive provider attribute, a sensitive variable, `sensitive()`, a
//! secret-looking literal), however it gets there, is a `secret-value` error at the key's line
//! in cell-metadata.tf, naming the chain that taints it. Identifiers stay clean.

mod support;

use std::fs;
use std::path::Path;

use serde_json::Value;
use support::*;

const CELL: &str = "eu-west-2-prod";
const TF: &str = "terraform/cells/eu-west-2-prod";

/// Declarations the routes below read, spread over several files of the stack and a local module.
const FILES: &[(&str, &str)] = &[
    (
        "secrets.tf",
        r#"resource "random_password" "db" {
  length = 24
}

resource "aws_iam_access_key" "ci" {
  user = "ci"
}

resource "tls_private_key" "deploy" {
  algorithm = "ED25519"
}

resource "kubernetes_secret_v1" "api" {
  metadata {
    name = "api"
  }
  data = { token = "x" }
}

resource "helm_release" "vault" {
  name                = "vault"
  chart               = "vault"
  repository_password = var.registry_password_value
}

data "aws_ssm_parameter" "api" {
  name = "/api/key"
}

data "aws_eks_cluster_auth" "this" {
  name = "x"
}

# An ordinary argument set from a secret holds it.
resource "aws_iam_role" "leaky" {
  name               = "leaky"
  assume_role_policy = "{}"
  description        = local.pw
}

resource "aws_iam_role" "per_key" {
  for_each           = toset([random_password.db.result])
  name               = each.value
  assume_role_policy = "{}"
}

module "vault_config" {
  source   = "../../../modules/vault-config"
  password = local.wrapped
}
"#,
    ),
    (
        "locals.tf",
        r#"locals {
  pw      = random_password.db.result
  wrapped = "db:${local.pw}"
  keys    = { ci = aws_iam_access_key.ci.secret }
  names   = ["a", "b"]
  plain   = "arn:aws:iam::123456789012:role/plain"
}
"#,
    ),
    (
        "extra-variables.tf",
        r#"variable "api_key_value" {
  type      = string
  sensitive = true
}

variable "registry_password_value" {
  type    = string
  default = ""
}

variable "webhook" {
  type = string
}
"#,
    ),
    (
        "secrets.auto.tfvars",
        "webhook = \"xoxb-1234567890-abcdefghijklmnop\"\n",
    ),
];

const MODULE: &[(&str, &str)] = &[(
    "main.tf",
    r#"variable "password" {
  type = string
}

output "dsn" {
  value = "postgres://app:${var.password}@db"
}

output "conn" {
  value     = var.password
  sensitive = true
}

output "host" {
  value = "db.internal"
}
"#,
)];

/// (key, expression, words the chain must contain in order)
const ROUTES: &[(&str, &str, &[&str])] = &[
    (
        "r_direct",
        "random_password.db.result",
        &["r_direct <- random_password.db.result", "hashicorp/random"],
    ),
    (
        "r_local",
        "local.pw",
        &[
            "r_local <- local.pw (",
            "locals.tf:2) <- random_password.db.result",
        ],
    ),
    (
        "r_local_chain",
        "local.wrapped",
        &[
            "<- local.wrapped (",
            "<- local.pw (",
            "<- random_password.db.result",
        ],
    ),
    (
        "r_access_key",
        "local.keys.ci",
        &[
            "<- local.keys",
            "<- aws_iam_access_key.ci.secret",
            "`secret` of aws_iam_access_key",
        ],
    ),
    (
        "r_splat",
        "aws_iam_access_key.ci[*].secret",
        &["aws_iam_access_key.ci.secret"],
    ),
    (
        "r_tls",
        "upper(tls_private_key.deploy.private_key_pem)",
        &["tls_private_key.deploy.private_key_pem"],
    ),
    (
        "r_template",
        "\"${local.pw}-suffix\"",
        &["r_template <- local.pw"],
    ),
    (
        "r_format",
        "format(\"%s:%s\", var.name, local.pw)",
        &["<- local.pw"],
    ),
    (
        "r_join_for",
        "join(\",\", [for k, v in kubernetes_secret_v1.api.data : \"${k}=${v}\"])",
        &["kubernetes_secret_v1.api.data", "hashicorp/kubernetes"],
    ),
    (
        "r_b64",
        "base64encode(data.aws_ssm_parameter.api.value)",
        &[
            "data.aws_ssm_parameter.api.value",
            "data source aws_ssm_parameter",
        ],
    ),
    (
        "r_try",
        "try(data.aws_eks_cluster_auth.this.token, \"\")",
        &["data.aws_eks_cluster_auth.this.token"],
    ),
    (
        "r_cond",
        "var.environment == \"prod\" ? local.wrapped : \"none\"",
        &["local.wrapped"],
    ),
    (
        "r_sensitive_var",
        "var.api_key_value",
        &["var.api_key_value (", "sensitive = true"],
    ),
    (
        "r_tfvars",
        "var.webhook",
        &[
            "var.webhook (extra-variables.tf:11) <- secrets.auto.tfvars:1",
            "Slack token",
        ],
    ),
    (
        "r_sensitive_fn",
        "sensitive(\"x\")",
        &["<- sensitive(...) (cell-metadata.tf:"],
    ),
    (
        "r_nonsensitive",
        "nonsensitive(var.registry_password_value)",
        &["nonsensitive(...)"],
    ),
    (
        "r_argument",
        "aws_iam_role.leaky.description",
        &[
            "aws_iam_role.leaky.description (",
            "secrets.tf:",
            "<- local.pw",
            "<- random_password.db.result",
        ],
    ),
    (
        "r_each",
        "aws_iam_role.per_key[\"x\"].name",
        &[
            "aws_iam_role.per_key.name",
            "<- each.value (",
            "<- random_password.db.result",
        ],
    ),
    (
        "r_helm",
        "helm_release.vault.repository_password",
        &[
            "helm_release.vault.repository_password",
            "hashicorp/helm 3.1.2",
        ],
    ),
    (
        "r_module_var",
        "module.vault_config.dsn",
        &[
            "module.vault_config.dsn",
            "<- var.password",
            "<- local.wrapped",
            "<- random_password.db.result",
        ],
    ),
    (
        "r_module_sensitive",
        "module.vault_config.conn",
        &[
            "module.vault_config.conn (secrets.tf:47) <- output \"conn\" (modules/vault-config/main.tf:9)",
            "declared with `sensitive = true`",
        ],
    ),
    (
        "r_attr_name",
        "aws_db_instance.main.password",
        &["`password`, says it is a secret"],
    ),
];

/// Values that are identifiers, however they are built: no finding.
const CLEAN: &[(&str, &str)] = &[
    ("c_arn", "aws_iam_role.leaky.arn"),
    ("c_length", "random_password.db.length"),
    ("c_public_key", "tls_private_key.deploy.public_key_openssh"),
    ("c_ssm_arn", "data.aws_ssm_parameter.api.arn"),
    ("c_meta_name", "kubernetes_secret_v1.api.metadata[0].name"),
    ("c_for", "join(\",\", [for pw in local.names : upper(pw)])"),
    ("c_local", "local.plain"),
    ("c_module_host", "module.vault_config.host"),
    (
        "c_registry_var",
        "var.registry_password_value == \"\" ? \"anonymous\" : \"registry\"",
    ),
];

fn check_json(root: &Path) -> Value {
    let out = cellgen()
        .arg("-C")
        .arg(root)
        .args(["check", "--format", "json"])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON ({e}):\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The repository with the files above and `keys` added to cell-metadata's data.
fn repo_with(keys: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = new_repo(&[CELL]);
    let root = dir.path();
    for (name, text) in FILES {
        fs::write(root.join(TF).join(name), text).unwrap();
    }
    let module = root.join("modules/vault-config");
    fs::create_dir_all(&module).unwrap();
    for (name, text) in MODULE {
        fs::write(module.join(name), text).unwrap();
    }
    let metadata = root.join(TF).join("cell-metadata.tf");
    let text = read(&metadata);
    let added: String = keys
        .iter()
        .map(|(k, v)| format!("    {k} = {v}\n"))
        .collect();
    assert_eq!(text.matches("    vpc_id ").count(), 1);
    fs::write(
        &metadata,
        text.replacen("    vpc_id ", &format!("{added}    vpc_id "), 1),
    )
    .unwrap();
    dir
}

fn line_of_key(root: &Path, key: &str) -> u64 {
    let text = read(&root.join(TF).join("cell-metadata.tf"));
    text.lines()
        .position(|l| l.starts_with(&format!("    {key} =")))
        .unwrap() as u64
        + 1
}

#[test]
fn every_route_to_a_secret_is_a_secret_value_with_its_chain() {
    let dir = repo_with(
        ROUTES
            .iter()
            .map(|(k, v, _)| (*k, *v))
            .collect::<Vec<_>>()
            .as_slice(),
    );
    let root = dir.path();
    let report = check_json(root);
    let findings: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "secret-value")
        .collect();
    let listing = findings
        .iter()
        .map(|f| format!("{}:{} {}", f["file"], f["line"], f["message"]))
        .collect::<Vec<_>>()
        .join("\n");
    let mut missing = Vec::new();
    for (key, _, words) in ROUTES {
        let line = line_of_key(root, key);
        let found = findings.iter().find(|f| {
            f["file"] == format!("{TF}/cell-metadata.tf").as_str()
                && f["line"] == line
                && f["cells"] == serde_json::json!([CELL])
                && f["severity"] == "error"
        });
        match found {
            None => missing.push(format!("{key}: no secret-value at line {line}")),
            Some(f) => {
                let message = f["message"].as_str().unwrap();
                if !message.starts_with(&format!("`{key}` is built from a secret ("))
                    || !message.contains(&format!("): {key} <- "))
                {
                    missing.push(format!("{key}: no chain in: {message}"));
                }
                if let Some(word) = words.iter().find(|w| !message.contains(*w)) {
                    missing.push(format!("{key}: `{word}` not in: {message}"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{}\n\nfindings:\n{listing}",
        missing.join("\n")
    );
    assert_eq!(findings.len(), ROUTES.len(), "{listing}");
}

#[test]
fn identifiers_built_near_secrets_are_not_secret_values() {
    let dir = repo_with(CLEAN);
    let report = check_json(dir.path());
    let secret: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "secret-value")
        .map(|f| f["message"].to_string())
        .collect();
    assert!(secret.is_empty(), "false positives:\n{}", secret.join("\n"));
}

#[test]
fn a_generated_cell_with_every_component_has_no_secret_value() {
    let dir = temp_dir();
    new_cell(
        dir.path(),
        &[
            CELL,
            "--egress-gateway",
            "--components",
            "karpenter,aws-load-balancer-controller,external-dns,external-secrets,cert-manager,aws-ebs-csi-driver,kyverno,metrics-server",
        ],
    );
    let report = check_json(dir.path());
    assert_eq!(report["errors"], 0, "{report:#}");
}

#[test]
fn a_module_outside_the_repository_is_not_read() {
    let dir = new_repo(&[CELL]);
    let root = dir.path();
    let outside = temp_dir();
    fs::write(
        outside.path().join("main.tf"),
        "output \"v\" {\n  value     = \"x\"\n  sensitive = true\n}\n",
    )
    .unwrap();
    // Both temporary directories share a parent: climb from the stack out of the repository.
    assert_eq!(outside.path().parent(), root.parent());
    let source = format!(
        "../../../../{}",
        outside.path().file_name().unwrap().to_string_lossy()
    );
    fs::write(
        root.join(TF).join("outside.tf"),
        format!("module \"outside\" {{\n  source = \"{source}\"\n}}\n"),
    )
    .unwrap();
    let metadata = root.join(TF).join("cell-metadata.tf");
    let text = read(&metadata);
    fs::write(
        &metadata,
        text.replacen(
            "    vpc_id ",
            "    o_value = module.outside.v\n    vpc_id ",
            1,
        ),
    )
    .unwrap();
    let report = check_json(root);
    let secret = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["code"] == "secret-value");
    assert!(
        !secret,
        "a sensitive output outside the repository was read: {report:#}"
    );
}

#[test]
fn cycles_and_long_chains_end_with_a_bounded_message() {
    let dir = new_repo(&[CELL]);
    let root = dir.path();
    // 3000 locals chained across a file, a cycle between two locals, and a module calling itself.
    let mut locals = String::from("locals {\n  l0 = random_password.db.result\n");
    for i in 1..3000 {
        locals.push_str(&format!("  l{i} = local.l{}\n", i - 1));
    }
    locals.push_str("  a = local.b\n  b = local.a\n}\n");
    fs::write(root.join(TF).join("chain.tf"), locals).unwrap();
    fs::write(
        root.join(TF).join("self.tf"),
        "module \"again\" {\n  source = \"./\"\n}\n",
    )
    .unwrap();
    let metadata = root.join(TF).join("cell-metadata.tf");
    let text = read(&metadata);
    fs::write(
        &metadata,
        text.replacen(
            "    vpc_id ",
            "    r_long = local.l2999\n    c_cycle = local.a\n    c_again = module.again.vpc_id\n    vpc_id ",
            1,
        ),
    )
    .unwrap();
    let report = check_json(root);
    let secret: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "secret-value")
        .collect();
    assert_eq!(secret.len(), 1, "{report:#}");
    let message = secret[0]["message"].as_str().unwrap();
    assert_mentions(message, &["r_long <- local.l2999 (chain.tf:3001)"]);
    assert_mentions(message, &["... 2989 more ..."]);
    assert_mentions(
        message,
        &["local.l0 (chain.tf:2) <- random_password.db.result"],
    );
    assert!(message.len() < 2000, "{} bytes", message.len());
}
