//! `cellgen.yaml`: the repository's settings and the key contract between Terraform and Flux.
//!
//! Typed reads only (yaml_serde); cellgen never rewrites this file through serde; edits go
//! through the lossless editor in `edit::yaml` so comments and ordering survive.

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::CellgenError;

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
    /// Shared layers, in order: each cell gets one Flux Kustomization per layer.
    #[schemars(length(min = 1))]
    pub layers: Vec<Layer>,
    /// The contract: every key of the cell-metadata ConfigMap, by name (a Flux variable name).
    #[schemars(extend("propertyNames" = {
        "pattern": "^[_a-zA-Z][_a-zA-Z0-9]*$",
        "not": { "const": "schema" }
    }))]
    pub keys: IndexMap<String, KeySpec>,
}

/// The Git repository Flux syncs from.
#[derive(Debug, Clone, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitSource {
    /// ssh:// URL of the repository (flux_bootstrap_git commits to it, the GitRepository reads it).
    pub url: String,
    /// Branch Flux syncs from.
    #[serde(default = "default_branch")]
    pub branch: String,
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
    /// Region of the state bucket; defaults to the cell's own region.
    #[serde(default)]
    pub state_region: Option<String>,
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
    /// The schema number at which the key joined the contract.
    #[serde(default)]
    pub since: Option<u32>,
}

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

impl Config {
    /// Parses and validates `cellgen.yaml` text; `path` is only used in error messages.
    pub fn parse(text: &str, path: &Path) -> Result<Config, CellgenError> {
        // Before any parser: libyaml is quadratic in bracket nesting.
        crate::edit::depth::check_yaml(text).map_err(|e| CellgenError::MalformedConfig {
            path: path.to_path_buf(),
            line: Some(e.line),
            message: e.to_string(),
        })?;
        let config: Config =
            yaml_serde::from_str(text).map_err(|err| CellgenError::MalformedConfig {
                path: path.to_path_buf(),
                line: err.location().map(|l| l.line()),
                message: err.to_string(),
            })?;
        config.validate(text, path)?;
        Ok(config)
    }

    fn validate(&self, text: &str, path: &Path) -> Result<(), CellgenError> {
        let fail = |needle: &str, message: String| CellgenError::MalformedConfig {
            path: path.to_path_buf(),
            line: line_of(text, needle),
            message,
        };
        if self.environments.is_empty() {
            return Err(fail(
                "environments",
                "`environments` is empty: list at least one environment (e.g. dev, staging, prod)"
                    .into(),
            ));
        }
        for (i, env) in self.environments.iter().enumerate() {
            if self.environments[..i].contains(env) {
                return Err(fail(env, format!("environment `{env}` is listed twice")));
            }
            if env.is_empty()
                || !env
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            {
                return Err(fail(
                    env,
                    format!(
                        "environment `{env}` must be lowercase letters and digits only (it is the last part of a cell name)"
                    ),
                ));
            }
        }
        if self.layers.is_empty() {
            return Err(fail(
                "layers",
                "`layers` is empty: a cell needs at least one layer".into(),
            ));
        }
        let mut seen: Vec<&str> = Vec::new();
        for layer in &self.layers {
            if !is_dns_label(&layer.name) {
                return Err(fail(
                    &layer.name,
                    format!(
                        "layer name `{}` must be a DNS label (lowercase letters, digits, dashes): it names a Flux Kustomization",
                        layer.name
                    ),
                ));
            }
            if seen.contains(&layer.name.as_str()) {
                return Err(fail(
                    &layer.name,
                    format!("layer `{}` is listed twice", layer.name),
                ));
            }
            if !is_relative_clean(&layer.path) {
                return Err(fail(
                    &layer.path,
                    format!(
                        "layer `{}` has path `{}`: use a relative path inside the repository, without `..`",
                        layer.name, layer.path
                    ),
                ));
            }
            for dep in &layer.depends_on {
                if !seen.contains(&dep.as_str()) {
                    return Err(fail(
                        dep,
                        format!(
                            "layer `{}` depends on `{dep}`, which is not a layer listed before it",
                            layer.name
                        ),
                    ));
                }
            }
            seen.push(&layer.name);
        }
        for (key, spec) in &self.keys {
            if key == SCHEMA_KEY {
                return Err(fail(
                    key,
                    "`schema` is reserved: its value is the top-level `schema` number".into(),
                ));
            }
            if !crate::keys::is_valid_key_name(key) {
                return Err(fail(
                    key,
                    format!(
                        "key `{key}` is not a valid Flux variable name: use letters, digits and underscores, not starting with a digit (e.g. `{}`)",
                        key.replace(['-', '.'], "_")
                    ),
                ));
            }
            if let Some(since) = spec.since
                && since > self.schema
            {
                return Err(fail(
                    key,
                    format!(
                        "key `{key}` has `since: {since}`, later than `schema: {}`",
                        self.schema
                    ),
                ));
            }
        }
        Ok(())
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

pub fn is_relative_clean(p: &str) -> bool {
    let path = PathBuf::from(p);
    !p.is_empty()
        && path.is_relative()
        && path
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}
