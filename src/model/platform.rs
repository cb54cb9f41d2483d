//! What every cell runs below Flux, as cellgen.yaml sets it per environment and each cell's
//! Terraform reads it at plan time (`local.settings`, settings.tf): the node groups' image, Cilium's
//! version, the hosted zones external-dns and cert-manager may change, Karpenter's default
//! NodePool; and the Kubernetes versions EKS creates clusters of. Types, defaults and checks; it
//! imports only the base layer (`suggest`), so `config` can use it.

// schemars makes the doc comments the JSON Schema descriptions editors show, where `<name>` is literal (not HTML).
#![allow(rustdoc::invalid_html_tags, rustdoc::bare_urls)]

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;

mod node_pool;

pub use node_pool::{DisruptionBudget, NodePool, default_node_pool};

/// A malformed setting: the text to find its line by, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub needle: String,
    pub message: String,
}

fn problem(needle: impl Into<String>, message: impl Into<String>) -> Problem {
    Problem {
        needle: needle.into(),
        message: message.into(),
    }
}

// ---------------------------------------------------------------------------------------------
// Kubernetes versions
// ---------------------------------------------------------------------------------------------

/// A Kubernetes version EKS creates clusters of, with the ends of its support (dates as the
/// sources give them; None where they do not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EksVersion {
    pub version: &'static str,
    pub end_of_standard_support: Option<&'static str>,
    pub end_of_extended_support: Option<&'static str>,
}

/// When [`EKS_VERSIONS`] was read.
pub const EKS_VERSIONS_AS_OF: &str = "2026-12-04";

/// Where [`EKS_VERSIONS`] comes from, for messages. In full: the EKS Kubernetes release calendar
/// (docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html, as endoflife.date/amazon-eks
/// mirrors it, and AWS's APEX skill of 2026-04-24) for 1.32 to 1.35, and the Kubernetes versions
/// the amazon-eks-ami releases build images of for 1.36 (since v20260610).
pub const EKS_VERSIONS_SOURCE: &str = "the EKS Kubernetes release calendar";

/// The Kubernetes versions EKS creates clusters of on [`EKS_VERSIONS_AS_OF`], in standard or
/// extended support, oldest first: versions whose extended support had ended by then (1.31 on
/// 2026-11-26) are gone, and none newer existed.
pub const EKS_VERSIONS: &[EksVersion] = &[
    EksVersion {
        version: "1.32",
        end_of_standard_support: Some("2026-03-23"),
        end_of_extended_support: Some("2027-03-23"),
    },
    EksVersion {
        version: "1.33",
        end_of_standard_support: Some("2026-07-29"),
        end_of_extended_support: Some("2027-07-29"),
    },
    EksVersion {
        version: "1.34",
        end_of_standard_support: Some("2026-12-02"),
        end_of_extended_support: Some("2027-12-02"),
    },
    EksVersion {
        version: "1.35",
        end_of_standard_support: Some("2027-03-27"),
        end_of_extended_support: Some("2028-03-27"),
    },
    EksVersion {
        version: "1.36",
        end_of_standard_support: None,
        end_of_extended_support: None,
    },
];

/// The supported versions, for messages: `1.32, 1.33, ...`.
pub fn eks_version_list() -> String {
    EKS_VERSIONS
        .iter()
        .map(|v| v.version)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why `version` is not a Kubernetes version a new EKS cluster can have, if it is not.
pub fn kubernetes_version_problem(version: &str) -> Option<String> {
    if EKS_VERSIONS.iter().any(|v| v.version == version) {
        return None;
    }
    let shape = version
        .split_once('.')
        .is_some_and(|(major, minor)| is_number(major) && is_number(minor));
    let why = if shape {
        format!("EKS does not create clusters of Kubernetes {version}")
    } else {
        format!("`{version}` is not a Kubernetes version (major.minor, e.g. 1.35)")
    };
    Some(format!(
        "{why}: EKS supports {} (as of {EKS_VERSIONS_AS_OF}, from {EKS_VERSIONS_SOURCE})",
        eks_version_list()
    ))
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'))
}

// ---------------------------------------------------------------------------------------------
// Node groups
// ---------------------------------------------------------------------------------------------

/// The EKS managed node groups' image (system nodes, egress gateway nodes).
#[derive(Debug, Clone, Default, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct NodeGroupSettings {
    /// Release version of the node image (an amazon-eks-ami release, `<kubernetes version>-<date>`, e.g. 1.34.9-20260714, or `latest`) by environment, then by Kubernetes version (quoted: "1.34").
    #[schemars(extend("additionalProperties" = {
        "type": "object",
        "propertyNames": { "pattern": "^[0-9]+[.][0-9]+$" },
        "additionalProperties": {
            "type": "string",
            "pattern": "^(latest|[0-9]+[.][0-9]+[.][0-9]+-[0-9]{8})$"
        }
    }))]
    pub ami_release_version: IndexMap<String, IndexMap<String, String>>,
}

/// The amazon-eks-ami release a new repository pins its node groups to, and the release version it
/// gives each Kubernetes version (its CHANGELOG.md, "AMI Release v20260714", the same release as
/// Karpenter's pinned alias).
pub const AMI_RELEASE: &str = "v20260714";
const AMI_RELEASE_VERSIONS: &[(&str, &str)] = &[
    ("1.30", "1.30.14-20260714"),
    ("1.31", "1.31.14-20260714"),
    ("1.32", "1.32.13-20260714"),
    ("1.33", "1.33.13-20260714"),
    ("1.34", "1.34.9-20260714"),
    ("1.35", "1.35.6-20260714"),
    ("1.36", "1.36.2-20260714"),
];

/// The node image release version [`AMI_RELEASE`] has for a Kubernetes version, if it has one.
pub fn ami_release_version(kubernetes_version: &str) -> Option<&'static str> {
    AMI_RELEASE_VERSIONS
        .iter()
        .find(|(v, _)| *v == kubernetes_version)
        .map(|(_, release)| *release)
}

/// Why `release` cannot be the node image of Kubernetes `version` (`latest` fits any).
pub fn ami_release_problem(version: &str, release: &str) -> Option<String> {
    if release == "latest" {
        return None;
    }
    let well_formed = release.split_once('-').is_some_and(|(k8s, date)| {
        let parts: Vec<&str> = k8s.split('.').collect();
        parts.len() == 3
            && parts.iter().all(|p| is_number(p))
            && date.len() == 8
            && date.bytes().all(|b| b.is_ascii_digit())
    });
    if !well_formed {
        return Some(format!(
            "`{release}` is not a node image release version: use <kubernetes version>-<date> as the amazon-eks-ami releases list them (e.g. {}), or latest",
            ami_release_version(version).unwrap_or("1.34.9-20260714")
        ));
    }
    (!release.starts_with(&format!("{version}.")))
        .then(|| format!("`{release}` is an image of another Kubernetes version than {version}"))
}

impl NodeGroupSettings {
    /// `text`: cellgen.yaml's, where an unquoted version key is found as written.
    pub fn validate(&self, environments: &[String], text: &str) -> Result<(), Problem> {
        for (env, versions) in &self.ami_release_version {
            known_environment("node_groups.ami_release_version", env, environments)?;
            for (version, release) in versions {
                if let Some(why) = ami_release_problem(version, release) {
                    return Err(problem(
                        release.as_str(),
                        format!("node_groups.ami_release_version.{env}.\"{version}\": {why}"),
                    ));
                }
            }
        }
        // YAML, and Terraform's yamldecode, read an unquoted 1.30 as the number 1.3: the key
        // must be a string for Terraform to find it under the cell's kubernetes_version.
        let raw: yaml_serde::Value = crate::ports::yaml::from_str(text).unwrap_or_default();
        let by_env = raw
            .get("node_groups")
            .and_then(|n| n.get("ami_release_version"))
            .and_then(|a| a.as_mapping());
        for (env, versions) in by_env.into_iter().flatten() {
            for key in versions.as_mapping().into_iter().flat_map(|m| m.keys()) {
                if !key.is_string() {
                    let env = env.as_str().unwrap_or_default();
                    let read = yaml_serde::to_string(key).unwrap_or_default();
                    let read = read.trim();
                    // The key as written: the first unquoted one of that value in the section.
                    let written = text
                        .lines()
                        .skip_while(|l| !l.starts_with("node_groups:"))
                        .filter_map(|l| l.trim_start().split_once(':').map(|(k, _)| k))
                        .find(|k| {
                            k.parse::<f64>().ok().map(|f| f.to_string())
                                == read.parse::<f64>().ok().map(|f| f.to_string())
                        })
                        .unwrap_or(read)
                        .to_string();
                    return Err(problem(
                        format!("{written}:"),
                        format!(
                            "node_groups.ami_release_version.{env}: quote the Kubernetes version `{written}` (\"{written}\"): unquoted, YAML and Terraform's yamldecode read it as the number {read}"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// `text` (cellgen.yaml) with `"version": release` added to the block mapping of
    /// `node_groups.ami_release_version.<environment>`, after its last entry; None where the
    /// layout is not the block mappings cellgen writes (the caller then asks the user to add it).
    pub fn add_pin(text: &str, environment: &str, version: &str, release: &str) -> Option<String> {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let indent = |l: &str| l.len() - l.trim_start().len();
        let top = lines.iter().position(|l| l.trim_end() == "node_groups:")?;
        let section_end = lines[top + 1..]
            .iter()
            .position(|l| !l.trim().is_empty() && indent(l) == 0 && !l.starts_with('#'))
            .map_or(lines.len(), |i| i + top + 1);
        let within = |from: usize, key: &str| {
            (from..section_end).find(|&i| lines[i].trim_end().trim_start() == format!("{key}:"))
        };
        let versions = within(top + 1, "ami_release_version")?;
        let env = within(versions + 1, environment)?;
        let env_indent = indent(lines[env]);
        if env_indent <= indent(lines[versions]) {
            return None;
        }
        let mut last = env;
        let mut entry_indent = None;
        for (i, line) in lines.iter().enumerate().take(section_end).skip(env + 1) {
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            if indent(line) <= env_indent {
                break;
            }
            entry_indent.get_or_insert(indent(line));
            last = i;
        }
        let pad = " ".repeat(entry_indent.unwrap_or(env_indent + 2));
        let mut out: String = lines[..=last].concat();
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("{pad}\"{version}\": {release}\n"));
        out.push_str(&lines[last + 1..].concat());
        Some(out)
    }

    /// The release pinned for `environment` and Kubernetes `version`, if any.
    pub fn pinned(&self, environment: &str, version: &str) -> Option<&str> {
        self.ami_release_version
            .get(environment)
            .and_then(|v| v.get(version))
            .map(String::as_str)
    }
}

// ---------------------------------------------------------------------------------------------
// Cilium
// ---------------------------------------------------------------------------------------------

/// Cilium, the cells' CNI, which Terraform installs (cni.tf).
#[derive(Debug, Clone, Default, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct CiliumSettings {
    /// Cilium's Helm chart version (https://helm.cilium.io) by environment; `cellgen set-version cilium <version> --env <environment>` changes it.
    #[schemars(extend("additionalProperties" = {
        "type": "string",
        "pattern": "^[0-9]+[.][0-9]+[.][0-9]+$"
    }))]
    pub version: IndexMap<String, String>,
}

/// The Cilium release a new repository installs (newest in the chart repository's index.yaml,
/// cilium/charts, 2026-07-29).
pub const CILIUM_VERSION: &str = "1.20.0";

/// The (major, minor, patch) of a Cilium version, if it is one.
pub fn cilium_version(version: &str) -> Option<(u64, u64, u64)> {
    let mut parts = version.split('.');
    let mut next = || {
        parts
            .next()
            .filter(|p| is_number(p))
            .and_then(|p| p.parse().ok())
    };
    let version = (next()?, next()?, next()?);
    parts.next().is_none().then_some(version)
}

impl CiliumSettings {
    pub fn validate(&self, environments: &[String]) -> Result<(), Problem> {
        for (env, version) in &self.version {
            known_environment("cilium.version", env, environments)?;
            if cilium_version(version).is_none() {
                return Err(problem(
                    version.as_str(),
                    format!(
                        "cilium.version.{env} is `{version}`, not a Cilium release (major.minor.patch, e.g. {CILIUM_VERSION})"
                    ),
                ));
            }
        }
        every_environment(
            "cilium.version",
            &self.version,
            environments,
            CILIUM_VERSION,
        )
    }
}

// ---------------------------------------------------------------------------------------------
// DNS
// ---------------------------------------------------------------------------------------------

/// The Route53 hosted zones external-dns and cert-manager may change.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct DnsSettings {
    /// Public hosted zones (domain names, e.g. example.com) by environment; `"*"` alone means every zone of the account.
    #[schemars(extend("additionalProperties" = {
        "type": "array",
        "items": { "type": "string" }
    }))]
    pub zones: IndexMap<String, Vec<String>>,
}

/// Why `zone` is not a hosted zone name.
fn zone_problem(zone: &str) -> Option<String> {
    let name = zone.strip_suffix('.').unwrap_or(zone);
    let labels_ok = name.len() <= 253
        && name.contains('.')
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        });
    (!labels_ok).then(|| {
        format!(
            "`{zone}` is not a hosted zone name: use a lowercase domain name such as example.com"
        )
    })
}

impl DnsSettings {
    pub fn validate(&self, environments: &[String]) -> Result<(), Problem> {
        for (env, zones) in &self.zones {
            known_environment("dns.zones", env, environments)?;
            if zones.is_empty() {
                return Err(problem(
                    format!("{env}:"),
                    format!(
                        "dns.zones.{env} is empty: list the hosted zones {env} cells may change (e.g. [{env}.example.com]), or remove the entry"
                    ),
                ));
            }
            if zones.iter().any(|z| z == "*") && zones.len() > 1 {
                return Err(problem(
                    "\"*\"",
                    format!(
                        "dns.zones.{env} lists \"*\" (every zone) with other zones: keep one or the other"
                    ),
                ));
            }
            for zone in zones.iter().filter(|z| *z != "*") {
                if let Some(why) = zone_problem(zone) {
                    return Err(problem(zone.as_str(), format!("dns.zones.{env}: {why}")));
                }
            }
        }
        Ok(())
    }
}

/// Checks every environment's NodePool; every environment needs one once any is set.
pub fn validate_node_pools(
    pools: &IndexMap<String, NodePool>,
    environments: &[String],
) -> Result<(), Problem> {
    for (env, pool) in pools {
        known_environment("karpenter.node_pool", env, environments)?;
        pool.validate(env)?;
    }
    if pools.is_empty() {
        return Ok(());
    }
    match environments.iter().find(|e| !pools.contains_key(*e)) {
        None => Ok(()),
        Some(env) => Err(problem(
            "node_pool",
            format!(
                "karpenter.node_pool has no entry for environment `{env}`: every cell of it reads one (architectures, capacity_types, consolidate_after, disruption_budgets)"
            ),
        )),
    }
}

// ---------------------------------------------------------------------------------------------

fn known_environment(setting: &str, env: &str, environments: &[String]) -> Result<(), Problem> {
    if environments.iter().any(|e| e == env) {
        return Ok(());
    }
    Err(problem(
        format!("{env}:"),
        format!(
            "{setting} has `{env}`, which is not an environment (environments: {}){}",
            environments.join(", "),
            crate_hint(
                env,
                &environments.iter().map(String::as_str).collect::<Vec<_>>()
            )
        ),
    ))
}

fn every_environment<T>(
    setting: &str,
    map: &IndexMap<String, T>,
    environments: &[String],
    example: &str,
) -> Result<(), Problem> {
    match environments.iter().find(|e| !map.contains_key(*e)) {
        None => Ok(()),
        Some(env) => Err(problem(
            setting.rsplit('.').next().unwrap_or(setting),
            format!(
                "{setting} has no entry for environment `{env}`: add one (e.g. `{env}: {example}`), since every cell of it reads one"
            ),
        )),
    }
}

fn crate_hint(value: &str, options: &[&str]) -> String {
    crate::suggest::hint(value, options.iter().copied())
}

#[cfg(test)]
mod tests;
