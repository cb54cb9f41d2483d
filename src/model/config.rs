//! `cellgen.yaml`: the repository's settings and the key contract between Terraform and Flux.
//!
//! Typed reads only (yaml_serde); cellgen never rewrites this file through serde; edits go
//! through the lossless editor in `edit::yaml` so comments and ordering survive.

// schemars makes the doc comments the JSON Schema descriptions editors show, where `<name>` is literal (not HTML).
#![allow(rustdoc::invalid_html_tags)]

use camino::Utf8Path;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::CellgenError;

mod validate;

/// Keys by name, in the order written: the contract's and a component's. Looked up for every
/// key of every cell, so hashed with foldhash (seeded per map) rather than SipHash.
pub type KeyMap<V> = IndexMap<String, V, foldhash::fast::RandomState>;

pub const CONFIG_FILE: &str = "cellgen.yaml";

/// ConfigMap keys cellgen reserves; `schema` carries the contract's version number.
pub const SCHEMA_KEY: &str = "schema";

/// cellgen.yaml: the repository's settings and the key contract between Terraform and Flux.
#[derive(Debug, Clone, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "cellgen.yaml")]
pub struct Config {
    /// Version of the key contract; goes up by one whenever the key set changes.
    pub schema: u32,
    /// The repository Flux syncs from.
    pub git: GitSource,
    /// Environments a cell name may end with (<aws-region>-<environment>).
    #[serde(default = "default_environments")]
    #[schemars(length(min = 1), inner(pattern(r"^[a-z0-9]+$")))]
    pub environments: Vec<String>,
    /// Defaults for new cells.
    #[serde(default)]
    pub defaults: Defaults,
    /// Settings of every cell's Terraform stack.
    #[serde(default)]
    pub terraform: TerraformSettings,
    /// Who reaches every cell's Kubernetes API (read by each cell's settings.tf at plan time).
    #[serde(default)]
    pub cluster_access: ClusterAccess,
    /// Where cell VPCs get their address blocks.
    #[serde(default)]
    pub network: NetworkSettings,
    /// Karpenter's node image per environment (read by each cell's karpenter.tf at plan time).
    #[serde(default)]
    pub karpenter: Option<KarpenterSettings>,
    // What every cell runs below Flux, per environment (src/model/platform.rs; issue 19).
    /// The node groups' image per environment and Kubernetes version (read by each cell's cluster.tf at plan time).
    #[serde(default)]
    pub node_groups: Option<crate::model::platform::NodeGroupSettings>,
    /// Cilium's version per environment (read by each cell's cni.tf at plan time).
    #[serde(default)]
    pub cilium: Option<crate::model::platform::CiliumSettings>,
    /// The hosted zones external-dns and cert-manager may change, per environment (read by their Terraform at plan time).
    #[serde(default)]
    pub dns: Option<crate::model::platform::DnsSettings>,
    /// The Flux every cell runs, installed by the Flux Operator (read by each cell's settings.tf at plan time).
    #[serde(default)]
    pub flux: Option<crate::model::flux_settings::FluxSettings>,
    /// Shared layers, in order: each cell gets one Flux Kustomization per layer.
    #[schemars(length(min = 1))]
    pub layers: Vec<Layer>,
    /// The contract: every key of the cell-metadata ConfigMap, by name (a Flux variable name).
    #[schemars(extend("propertyNames" = {
        "pattern": "^[_a-zA-Z][_a-zA-Z0-9]*$",
        "not": { "const": "schema" }
    }))]
    pub keys: KeyMap<KeySpec>,
}

/// The Git repository Flux syncs from.
#[derive(Debug, Clone, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitSource {
    /// ssh:// URL of the repository Flux reads (with a read-only deploy key).
    pub url: String,
    /// Branch Flux syncs from.
    #[serde(default = "default_branch")]
    pub branch: String,
    /// SSH keys of the Git host, as known_hosts lines (what `ssh-keyscan <host>` prints): the cluster verifies the host with them.
    #[serde(default)]
    pub known_hosts: Option<String>,
}

/// Defaults for new cells.
#[derive(Debug, Clone, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct Defaults {
    /// EKS Kubernetes version of a new cell (major.minor), unless `new --kubernetes-version` says otherwise.
    #[serde(default = "default_kubernetes_version")]
    pub kubernetes_version: String,
}

impl Default for Defaults {
    fn default() -> Self {
        Defaults {
            kubernetes_version: default_kubernetes_version(),
        }
    }
}

/// Settings of every cell's Terraform stack.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct TerraformSettings {
    /// S3 bucket holding every cell's state; when absent backend.tf is a partial configuration.
    #[serde(default)]
    pub state_bucket: Option<String>,
    /// Region of the state bucket. The bucket is shared by every cell, so this is never the
    /// cell's region by default: a cell needs it once `state_bucket` is set.
    #[serde(default)]
    pub state_region: Option<String>,
}

/// Who reaches every cell's Kubernetes API. Terraform reads this section from cellgen.yaml at
/// plan time (terraform/cells/<cell>/settings.tf), so a change applies to every cell.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct ClusterAccess {
    /// IAM roles (arn:aws:iam::<account>:role/<name>) that get an EKS access entry with AmazonEKSClusterAdminPolicy; include the role CI applies Terraform with.
    #[serde(default)]
    #[schemars(inner(pattern(r"^arn:aws(-cn|-us-gov)?:iam::[0-9]{12}:role/.+$")))]
    pub admin_role_arns: Vec<String>,
    /// IPv4 CIDRs allowed to reach the public API endpoint; empty turns the public endpoint off (the private one is always on).
    #[serde(default)]
    pub public_endpoint_cidrs: Vec<String>,
}

/// Where cell VPCs get their address blocks.
#[derive(Debug, Clone, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct NetworkSettings {
    /// IPv4 block every cell's VPC CIDR is taken from, distinct from every other cell's.
    #[serde(default = "default_vpc_cidr_pool")]
    pub vpc_cidr_pool: String,
    /// Prefix length of a cell's VPC block: 16 (the largest VPC) to 19; network.tf carves /+4
    /// private and /+8 public, intra and egress subnets out of it, and a /20 would leave public
    /// subnets smaller than the /27 an ALB needs.
    #[serde(default = "default_vpc_prefix_length")]
    #[schemars(range(min = 16, max = 19))]
    pub vpc_prefix_length: u8,
    /// Overlaps of live cells' VPC blocks you accept, each with why (e.g. a fleet made before
    /// cellgen gave each cell its own block, whose cells are not routed to each other):
    /// `cellgen check` reports them as warnings (acknowledged-vpc-overlap), not errors. A new
    /// overlap still fails.
    #[serde(default)]
    pub acknowledged_overlaps: Vec<AcknowledgedOverlap>,
}

/// Cells whose overlapping VPC blocks are accepted, and why.
#[derive(Debug, Clone, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcknowledgedOverlap {
    /// Two or more cells of this repository; the overlap of any two of them is acknowledged.
    #[schemars(length(min = 2), inner(length(min = 1)))]
    pub cells: Vec<String>,
    /// Why the overlap is acceptable, shown with every warning.
    #[schemars(length(min = 1))]
    pub reason: String,
}

impl NetworkSettings {
    /// The acknowledgement covering cells `a` and `b`, if any.
    pub fn acknowledged(&self, a: &str, b: &str) -> Option<&AcknowledgedOverlap> {
        self.acknowledged_overlaps
            .iter()
            .find(|o| o.cells.iter().any(|c| c == a) && o.cells.iter().any(|c| c == b))
    }
}

impl Default for NetworkSettings {
    fn default() -> Self {
        NetworkSettings {
            vpc_cidr_pool: default_vpc_cidr_pool(),
            vpc_prefix_length: default_vpc_prefix_length(),
            acknowledged_overlaps: Vec::new(),
        }
    }
}

/// Karpenter's node image per environment.
#[derive(Debug, Clone, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct KarpenterSettings {
    /// EC2NodeClass AMI alias (<family>@<version>, e.g. al2023@v20260714) by environment; @latest only where a bad image costs nothing.
    #[schemars(extend("additionalProperties" = {
        "type": "string",
        "pattern": "^[a-z0-9]+@(latest|v[0-9.]+)$"
    }))]
    pub ami_alias: IndexMap<String, String>,
    /// The default NodePool by environment: architectures, capacity types, consolidation, disruption budgets.
    #[serde(default)]
    pub node_pool: IndexMap<String, crate::model::platform::NodePool>,
}

/// A shared layer: one Flux Kustomization per cell.
#[derive(Debug, Clone, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Layer {
    /// Name of the layer's Flux Kustomization (a DNS label), e.g. controllers.
    #[schemars(pattern(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"))]
    pub name: String,
    /// Directory the layer builds, relative to the repository root, without `..`.
    pub path: String,
    /// Layers listed before this one that must be ready first (Flux `spec.dependsOn`).
    #[serde(default, rename = "dependsOn")]
    pub depends_on: Vec<String>,
    /// Health-check everything the layer applies (Flux `spec.wait`).
    #[serde(default)]
    pub wait: bool,
    /// How often Flux reconciles the layer (Flux `spec.interval`), e.g. 10m.
    #[serde(default = "default_interval")]
    pub interval: String,
}

/// One key of the cell-metadata ConfigMap: an identifier, never a secret.
#[derive(Debug, Clone, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeySpec {
    /// What the key identifies.
    pub description: String,
    /// Sample value used by `cellgen check` wherever Terraform computes the key.
    pub example: String,
    /// The Terraform expression a new cell's ConfigMap uses for this key.
    #[serde(default)]
    pub terraform: Option<String>,
    /// The component that brought the key into the contract, if any.
    #[serde(default)]
    pub component: Option<String>,
    /// The contract number (`schema`) at which the key got its name: when it joined, or when it
    /// was renamed. A cell's own number is the largest `since` among the keys it writes.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub since: Option<u32>,
    /// The key's name before the rename that gave it its `since` (`cellgen key rename`).
    #[serde(default)]
    #[schemars(pattern(r"^[_a-zA-Z][_a-zA-Z0-9]*$"))]
    pub renamed_from: Option<String>,
    /// Only these cells write the key (with `environments`: either selects a cell); neither
    /// means every cell. Not for a component's keys, which the cells running it write.
    #[serde(default)]
    #[schemars(inner(pattern(r"^[a-z0-9-]+$")))]
    pub cells: Vec<String>,
    /// Only the cells of these environments write the key (new ones included).
    #[serde(default)]
    #[schemars(inner(pattern(r"^[a-z0-9]+$")))]
    pub environments: Vec<String>,
}

impl KeySpec {
    /// The contract number the key's name dates from; a key without `since` is as old as the
    /// contract's first number.
    pub fn since(&self) -> u32 {
        self.since.unwrap_or(FIRST_SCHEMA)
    }

    /// Whether `cell` (of `environment`) writes this key, its components aside: a key of a
    /// component is written by the cells running it, any other key by the cells it selects.
    pub fn selects(&self, cell: &str, environment: &str) -> bool {
        self.component.is_none()
            && ((self.cells.is_empty() && self.environments.is_empty())
                || self.cells.iter().any(|c| c == cell)
                || self.environments.iter().any(|e| e == environment))
    }
}

/// The number a new repository's contract starts at (templates/repo/cellgen.yaml.j2).
pub const FIRST_SCHEMA: u32 = 1;

pub fn default_environments() -> Vec<String> {
    ["dev", "staging", "prod"].map(String::from).to_vec()
}
fn default_branch() -> String {
    "main".into()
}
fn default_interval() -> String {
    "10m".into()
}
pub fn default_kubernetes_version() -> String {
    "1.34".into()
}
pub fn default_vpc_cidr_pool() -> String {
    "10.0.0.0/8".into()
}
pub fn default_vpc_prefix_length() -> u8 {
    16
}

/// VPC sizes network.tf can split (see [`NetworkSettings::vpc_prefix_length`]): a /20 would give
/// /28 public subnets, below the /27 an ALB needs.
pub const VPC_PREFIX_LENGTHS: std::ops::RangeInclusive<u8> = 16..=19;

/// Why `arn` cannot be an access entry's principal, if it cannot.
pub fn admin_role_arn_problem(arn: &str) -> Option<String> {
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    let [arn_word, partition, service, region, account, resource] = parts.as_slice() else {
        return Some(format!(
            "`{arn}` is not an IAM role ARN; use arn:aws:iam::<account-id>:role/<name>"
        ));
    };
    if *service == "sts" || resource.starts_with("assumed-role/") {
        return Some(format!(
            "`{arn}` is a session (assumed-role) ARN, which EKS access entries refuse; use the role itself, arn:{partition}:iam::{account}:role/<name>"
        ));
    }
    let well_formed = *arn_word == "arn"
        && matches!(*partition, "aws" | "aws-cn" | "aws-us-gov")
        && *service == "iam"
        && region.is_empty()
        && account.len() == 12
        && account.bytes().all(|b| b.is_ascii_digit())
        && resource.strip_prefix("role/").is_some_and(|name| {
            !name.is_empty() && !name.ends_with('/') && !name.contains(char::is_whitespace)
        });
    (!well_formed).then(|| {
        format!("`{arn}` is not an IAM role ARN; use arn:aws:iam::<account-id>:role/<name>")
    })
}

/// Why `alias` is not an EC2NodeClass AMI alias (`al2023@v20260714`, `bottlerocket@latest`).
pub fn ami_alias_problem(alias: &str) -> Option<String> {
    let Some((family, version)) = alias.split_once('@') else {
        return Some(format!(
            "`{alias}` is not a Karpenter AMI alias; use <family>@<version>, e.g. al2023@v20260714"
        ));
    };
    let family_ok = !family.is_empty()
        && family
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    let version_ok = version == "latest"
        || version
            .strip_prefix('v')
            .is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit() || b == b'.'));
    (!(family_ok && version_ok)).then(|| {
        format!(
            "`{alias}` is not a Karpenter AMI alias; use <family>@<version> (a release like v20260714, or latest), e.g. al2023@v20260714"
        )
    })
}

impl Config {
    /// `--env` values must be environments of this repository (did-you-mean otherwise).
    pub fn check_env_flags(&self, environments: &[String]) -> Result<(), CellgenError> {
        match environments
            .iter()
            .find(|env| !self.environments.contains(env))
        {
            None => Ok(()),
            Some(env) => Err(CellgenError::InvalidFlag {
                flag: "--env".into(),
                reason: format!(
                    "`{env}` is not an environment of this repository ({}).{}",
                    self.environments.join(", "),
                    crate::suggest::hint(env, self.environments.iter().map(String::as_str))
                ),
            }),
        }
    }

    /// Parses and validates `cellgen.yaml` text; `path` is only used in error messages.
    pub fn parse(text: &str, path: &Utf8Path) -> Result<Config, CellgenError> {
        let config: Config =
            crate::ports::yaml::from_str(text).map_err(|err| CellgenError::MalformedConfig {
                path: path.to_path_buf(),
                line: err.line(),
                message: in_user_terms(&err.to_string()),
            })?;
        config.validate(text, path)?;
        Ok(config)
    }

    pub fn layer(&self, name: &str) -> Option<&Layer> {
        self.layers.iter().find(|l| l.name == name)
    }

    pub fn layer_names(&self) -> Vec<&str> {
        self.layers.iter().map(|l| l.name.as_str()).collect()
    }
}

/// First 1-based line on which `needle` appears, to point an error at the right place.
pub fn line_of(text: &str, needle: &str) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    text.lines().position(|l| l.contains(needle)).map(|i| i + 1)
}

pub fn is_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// A serde message about cellgen.yaml in the terms of the file, not of Rust: a misspelt setting
/// gets a did-you-mean, `expected u8` says which numbers, and the position (already in the
/// error's `file:line`) is not repeated.
pub fn in_user_terms(message: &str) -> String {
    let message = match message.rfind(" at line ") {
        Some(at) if message[at..].contains(" column ") => &message[..at],
        _ => message,
    };
    let ticked = |text: &str| -> Vec<String> {
        text.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    };
    if let Some(at) = message.find("unknown field `") {
        let (prefix, rest) = message.split_at(at);
        let names = ticked(rest);
        if let Some((field, allowed)) = names.split_first() {
            let hint = crate::suggest::did_you_mean(field, allowed.iter().map(String::as_str))
                .or_else(|| crate::suggest::misspelt(field, allowed.iter().map(String::as_str)))
                .map(|s| format!(" Did you mean `{s}`?"))
                .unwrap_or_default();
            let allowed: Vec<String> = allowed.iter().map(|a| format!("`{a}`")).collect();
            return format!(
                "{prefix}`{field}` is not a setting cellgen knows here.{hint} The settings here are {}",
                allowed.join(", ")
            );
        }
    }
    let mut out = message.to_string();
    for (rust, plain) in [
        ("expected u8", "expected a whole number from 0 to 255"),
        ("expected u16", "expected a whole number from 0 to 65535"),
        (
            "expected u32",
            "expected a whole number from 0 to 4294967295",
        ),
        ("expected u64", "expected a whole number of 0 or more"),
        ("expected usize", "expected a whole number of 0 or more"),
        ("expected i32", "expected a whole number"),
        ("expected i64", "expected a whole number"),
        ("expected a boolean", "expected true or false"),
        (
            "expected a sequence",
            "expected a list (`- item` lines, or `[a, b]`)",
        ),
        ("expected a map", "expected a mapping (`key: value` lines)"),
        ("invalid type: ", ""),
        ("invalid value: ", ""),
        ("integer `", "the number `"),
    ] {
        out = out.replace(rust, plain);
    }
    out
}
