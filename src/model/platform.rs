//! What every cell runs below Flux, as cellgen.yaml sets it per environment and each cell's
//! Terraform reads it at plan time (`local.settings`, settings.tf): the node groups' image, Cilium's
//! version, the hosted zones external-dns and cert-manager may change, Karpenter's default
//! NodePool; and the Kubernetes versions EKS creates clusters of. Types, defaults and checks; it
//! imports only the base layer (`suggest`), so `config` can use it.

// schemars makes the doc comments the JSON Schema descriptions editors show, where `<name>` is literal (not HTML).
#![allow(rustdoc::invalid_html_tags, rustdoc::bare_urls)]

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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

// ---------------------------------------------------------------------------------------------
// Karpenter's NodePool
// ---------------------------------------------------------------------------------------------

/// The default NodePool of an environment's cells.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct NodePool {
    /// CPU architectures of the nodes: amd64, arm64 (workloads must have images for each).
    #[schemars(length(min = 1), inner(pattern(r"^(amd64|arm64)$")))]
    pub architectures: Vec<String>,
    /// Capacity types: on-demand, spot, reserved.
    #[schemars(length(min = 1), inner(pattern(r"^(on-demand|spot|reserved)$")))]
    pub capacity_types: Vec<String>,
    /// How long a node stays empty or underutilized before Karpenter replaces or removes it (e.g. 5m, 1h), or Never.
    #[schemars(pattern(r"^(Never|([0-9]+(s|m|h))+)$"))]
    pub consolidate_after: String,
    /// How many nodes Karpenter may disrupt at once (Karpenter's disruption.budgets); at least one.
    #[schemars(length(min = 1))]
    pub disruption_budgets: Vec<DisruptionBudget>,
}

/// One of a NodePool's disruption budgets.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct DisruptionBudget {
    /// Nodes that may be disrupted at once: a count ("2") or a percentage ("10%"), quoted.
    #[schemars(pattern(r"^((100|[0-9]{1,2})%|[0-9]+)$"))]
    pub nodes: String,
    /// When the budget applies (a cron schedule, e.g. "0 9 * * mon-fri"), with `duration`.
    #[serde(default)]
    pub schedule: Option<String>,
    /// How long the budget applies from each `schedule` time, e.g. 8h.
    #[serde(default)]
    pub duration: Option<String>,
    /// Which disruptions it limits: Underutilized, Empty, Drifted (all when absent).
    #[serde(default)]
    pub reasons: Vec<String>,
}

/// The NodePool a new repository gives an environment: no spot and one architecture in prod,
/// where an interruption or an image built for one architecture only costs most; spot and both
/// architectures elsewhere; consolidation slower, and fewer nodes at once, towards prod.
pub fn default_node_pool(environment: &str) -> NodePool {
    let budget = |nodes: &str| DisruptionBudget {
        nodes: nodes.into(),
        schedule: None,
        duration: None,
        reasons: Vec::new(),
    };
    let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect();
    match environment {
        "prod" => NodePool {
            architectures: strings(&["amd64"]),
            capacity_types: strings(&["on-demand"]),
            consolidate_after: "10m".into(),
            disruption_budgets: vec![budget("10%")],
        },
        "staging" => NodePool {
            architectures: strings(&["amd64"]),
            capacity_types: strings(&["spot", "on-demand"]),
            consolidate_after: "5m".into(),
            disruption_budgets: vec![budget("10%")],
        },
        _ => NodePool {
            architectures: strings(&["amd64", "arm64"]),
            capacity_types: strings(&["spot", "on-demand"]),
            consolidate_after: "1m".into(),
            disruption_budgets: vec![budget("20%")],
        },
    }
}

fn is_duration(s: &str) -> bool {
    let mut rest = s;
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return false;
        }
        rest = &rest[digits..];
        match rest.chars().next() {
            Some('s' | 'm' | 'h') => rest = &rest[1..],
            _ => return false,
        }
    }
    true
}

impl NodePool {
    fn validate(&self, env: &str) -> Result<(), Problem> {
        let at = format!("karpenter.node_pool.{env}");
        let one_of = |field: &str, items: &[String], allowed: &[&str]| -> Result<(), Problem> {
            if items.is_empty() {
                return Err(problem(
                    format!("{field}:"),
                    format!(
                        "{at}.{field} is empty: list at least one of {}",
                        allowed.join(", ")
                    ),
                ));
            }
            for (i, item) in items.iter().enumerate() {
                if !allowed.contains(&item.as_str()) {
                    return Err(problem(
                        item.as_str(),
                        format!(
                            "{at}.{field} has `{item}`: use {}{}",
                            allowed.join(", "),
                            crate_hint(item, allowed)
                        ),
                    ));
                }
                if items[..i].contains(item) {
                    return Err(problem(
                        item.as_str(),
                        format!("{at}.{field} lists `{item}` twice"),
                    ));
                }
            }
            Ok(())
        };
        one_of("architectures", &self.architectures, &["amd64", "arm64"])?;
        one_of(
            "capacity_types",
            &self.capacity_types,
            &["on-demand", "spot", "reserved"],
        )?;
        if self.consolidate_after != "Never" && !is_duration(&self.consolidate_after) {
            return Err(problem(
                format!("consolidate_after: {}", self.consolidate_after),
                format!(
                    "{at}.consolidate_after is `{}`: use a duration such as 30s, 5m or 1h, or Never",
                    self.consolidate_after
                ),
            ));
        }
        if self.disruption_budgets.is_empty() {
            return Err(problem(
                "disruption_budgets",
                format!(
                    "{at}.disruption_budgets is empty, which Karpenter reads as no limit at all: give at least one, e.g. `- nodes: \"10%\"`"
                ),
            ));
        }
        for budget in &self.disruption_budgets {
            budget.validate(&at)?;
        }
        Ok(())
    }
}

impl DisruptionBudget {
    fn validate(&self, at: &str) -> Result<(), Problem> {
        let nodes = &self.nodes;
        let ok = match nodes.strip_suffix('%') {
            Some(percent) => is_number(percent) && percent.parse::<u32>().is_ok_and(|p| p <= 100),
            None => is_number(nodes),
        };
        if !ok {
            return Err(problem(
                format!("nodes: {nodes}"),
                format!(
                    "{at}.disruption_budgets: nodes is `{nodes}`: use a count (\"2\") or a percentage (\"10%\")"
                ),
            ));
        }
        if self.schedule.is_some() != self.duration.is_some() {
            return Err(problem(
                format!("nodes: {nodes}"),
                format!(
                    "{at}.disruption_budgets: a budget with a schedule needs a duration and one with a duration a schedule (Karpenter refuses one alone)"
                ),
            ));
        }
        if let Some(duration) = &self.duration
            && !is_duration(duration)
        {
            return Err(problem(
                duration.as_str(),
                format!(
                    "{at}.disruption_budgets: duration `{duration}` is not a duration such as 8h or 30m"
                ),
            ));
        }
        if let Some(schedule) = &self.schedule
            && !(schedule.split_whitespace().count() == 5 || schedule.starts_with('@'))
        {
            return Err(problem(
                schedule.as_str(),
                format!(
                    "{at}.disruption_budgets: schedule `{schedule}` is not a cron schedule (five fields, e.g. \"0 9 * * mon-fri\", or @daily)"
                ),
            ));
        }
        for reason in &self.reasons {
            if !["Underutilized", "Empty", "Drifted"].contains(&reason.as_str()) {
                return Err(problem(
                    reason.as_str(),
                    format!(
                        "{at}.disruption_budgets: reason `{reason}` is not one of Underutilized, Empty, Drifted"
                    ),
                ));
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
mod tests {
    use super::*;

    #[test]
    fn kubernetes_versions_are_the_ones_eks_supports() {
        assert_eq!(kubernetes_version_problem("1.34"), None);
        let old = kubernetes_version_problem("1.20").unwrap();
        assert!(
            old.contains("EKS does not create clusters of Kubernetes 1.20"),
            "{old}"
        );
        assert!(old.contains("1.32, 1.33, 1.34, 1.35, 1.36"), "{old}");
        assert!(kubernetes_version_problem("1.99").is_some());
        let shape = kubernetes_version_problem("1.34.2").unwrap();
        assert!(shape.contains("not a Kubernetes version"), "{shape}");
    }

    #[test]
    fn node_image_releases_fit_their_kubernetes_version() {
        assert_eq!(ami_release_problem("1.34", "1.34.9-20260714"), None);
        assert_eq!(ami_release_problem("1.34", "latest"), None);
        assert!(
            ami_release_problem("1.35", "1.34.9-20260714")
                .unwrap()
                .contains("another")
        );
        assert!(
            ami_release_problem("1.34", "v20260714")
                .unwrap()
                .contains("not a node image")
        );
        for v in EKS_VERSIONS {
            let release = ami_release_version(v.version).unwrap();
            assert_eq!(ami_release_problem(v.version, release), None);
        }
    }

    #[test]
    fn an_unquoted_kubernetes_version_key_is_refused() {
        let text =
            "node_groups:\n  ami_release_version:\n    prod:\n      1.30: 1.30.14-20260714\n";
        #[derive(Deserialize)]
        struct Doc {
            node_groups: NodeGroupSettings,
        }
        let doc: Doc = crate::ports::yaml::from_str(text).unwrap();
        let err = doc
            .node_groups
            .validate(&["prod".into()], text)
            .unwrap_err();
        assert!(
            err.message.contains("quote the Kubernetes version `1.30`")
                && err.message.contains("the number 1.3"),
            "{err:?}"
        );
        assert_eq!(err.needle, "1.30:");
        let quoted = text.replace("1.30:", "\"1.30\":");
        let doc: Doc = crate::ports::yaml::from_str(&quoted).unwrap();
        assert_eq!(doc.node_groups.validate(&["prod".into()], &quoted), Ok(()));
    }

    #[test]
    fn a_pin_joins_its_environment() {
        let text = "a: 1\nnode_groups:\n  ami_release_version:\n    dev:\n      \"1.34\": 1.34.9-20260714\n    prod:\n      \"1.34\": 1.34.9-20260714 # ok\n\n# next\ncilium: {}\n";
        let out = NodeGroupSettings::add_pin(text, "prod", "1.33", "1.33.13-20260714").unwrap();
        assert_eq!(
            out,
            text.replace("# ok\n", "# ok\n      \"1.33\": 1.33.13-20260714\n")
        );
        assert_eq!(
            NodeGroupSettings::add_pin(text, "staging", "1.33", "x"),
            None
        );
        let flow = "node_groups:\n  ami_release_version:\n    prod: {\"1.34\": x}\n";
        assert_eq!(NodeGroupSettings::add_pin(flow, "prod", "1.33", "x"), None);
    }

    #[test]
    fn node_pools_are_checked() {
        let envs: Vec<String> = ["dev", "prod"].map(String::from).to_vec();
        let mut pools: IndexMap<String, NodePool> = envs
            .iter()
            .map(|e| (e.clone(), default_node_pool(e)))
            .collect();
        assert_eq!(validate_node_pools(&pools, &envs), Ok(()));
        assert_eq!(pools["prod"].capacity_types, ["on-demand"]);
        pools["prod"].capacity_types = vec!["spott".into()];
        let err = validate_node_pools(&pools, &envs).unwrap_err();
        assert!(err.message.contains("Did you mean `spot`?"), "{err:?}");
        pools["prod"] = default_node_pool("prod");
        pools["prod"].disruption_budgets[0].schedule = Some("0 9 * * *".into());
        assert!(
            validate_node_pools(&pools, &envs)
                .unwrap_err()
                .message
                .contains("needs a duration")
        );
        pools["prod"] = default_node_pool("prod");
        pools["prod"].consolidate_after = "10 minutes".into();
        assert!(validate_node_pools(&pools, &envs).is_err());
        pools.shift_remove("prod");
        assert!(
            validate_node_pools(&pools, &envs)
                .unwrap_err()
                .message
                .contains("no entry for environment `prod`")
        );
    }

    #[test]
    fn dns_zones_are_names_or_every_zone() {
        let envs: Vec<String> = vec!["prod".into()];
        let zones = |z: &[&str]| DnsSettings {
            zones: [(
                "prod".to_string(),
                z.iter().map(|s| s.to_string()).collect(),
            )]
            .into(),
        };
        assert_eq!(
            zones(&["example.com", "prod.example.org."]).validate(&envs),
            Ok(())
        );
        assert_eq!(zones(&["*"]).validate(&envs), Ok(()));
        assert!(zones(&["*", "example.com"]).validate(&envs).is_err());
        assert!(zones(&["Example.com"]).validate(&envs).is_err());
        assert!(zones(&["com"]).validate(&envs).is_err());
        assert!(zones(&[]).validate(&envs).is_err());
    }

    #[test]
    fn cilium_versions_are_releases() {
        assert_eq!(cilium_version("1.19.6"), Some((1, 19, 6)));
        assert_eq!(cilium_version("1.19"), None);
        assert_eq!(cilium_version("v1.19.6"), None);
        let envs: Vec<String> = vec!["dev".into(), "prod".into()];
        let settings = CiliumSettings {
            version: [("dev".to_string(), "1.20.0".to_string())].into(),
        };
        assert!(
            settings
                .validate(&envs)
                .unwrap_err()
                .message
                .contains("`prod`")
        );
    }
}
