//! The settings of src/model/platform.rs (issue 19) an older cellgen.yaml lacks: each gets what the
//! repository's cells run today, read from their files, so the upgrade itself changes nothing
//! that runs; what the user should then decide is said, naming the setting.

use std::collections::BTreeMap;

use super::Notice;
use crate::error::CellgenError;
use crate::model::cell::CellName;
use crate::model::config::Config;
use crate::model::platform::{self, DisruptionBudget, NodePool};
use crate::model::repo::cell_terraform_dir;
use crate::model::scaffold::{EnvPool, EnvValue, EnvZones, NodePin, NodePins, PlatformContext};
use crate::writer::plan::Plan;

const NODEPOOL: &str = "components/karpenter/configs/nodepool.yaml";

/// Which of the settings the repository lacks (top-level sections, and `karpenter.node_pool`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Missing {
    pub node_groups: bool,
    pub cilium: bool,
    pub dns: bool,
    pub node_pool: bool,
}

/// The values to write for the missing settings, with what they mean for the user.
/// `running`: the components each cell runs.
pub fn values(
    plan: &Plan,
    config: &Config,
    running: &BTreeMap<String, Vec<String>>,
    missing: Missing,
    notices: &mut Vec<Notice>,
    added: &mut Vec<String>,
) -> Result<PlatformContext, CellgenError> {
    let envs = &config.environments;
    let mut context = PlatformContext::defaults(envs, &config.defaults.kubernetes_version);
    let environment_of = |cell: &str| {
        CellName::parse(cell, envs)
            .map(|c| c.environment)
            .unwrap_or_default()
    };

    if missing.node_groups {
        // Every Kubernetes version a cell of the environment runs, and the default for new cells.
        let mut versions: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for cell in running.keys() {
            let inputs = crate::model::inputs::existing_inputs(plan, cell)?;
            if let Some(version) = inputs.kubernetes_version {
                versions
                    .entry(environment_of(cell))
                    .or_default()
                    .push(version);
            }
        }
        context.node_ami_releases = envs
            .iter()
            .map(|env| {
                let mut list = versions.get(env).cloned().unwrap_or_default();
                list.push(config.defaults.kubernetes_version.clone());
                list.sort_by_key(|v| minor(v));
                list.dedup();
                NodePins {
                    environment: env.clone(),
                    pins: list
                        .into_iter()
                        .map(|version| NodePin {
                            release: platform::ami_release_version(&version)
                                .unwrap_or("latest")
                                .to_string(),
                            kubernetes_version: version,
                        })
                        .collect(),
                }
            })
            .collect();
        let described: Vec<String> = context
            .node_ami_releases
            .iter()
            .flat_map(|e| {
                e.pins.iter().map(move |p| {
                    format!("{}/{}: {}", e.environment, p.kubernetes_version, p.release)
                })
            })
            .collect();
        added.push(format!(
            "node_groups.ami_release_version: {}",
            described.join(", ")
        ));
        if !running.is_empty() {
            notices.push(Notice {
                setting: "node_groups.ami_release_version".into(),
                message: format!(
                    "pins the system and egress node groups to amazon-eks-ami {} (latest where that release has no image of the version). Until now they took the newest release at each plan, so a cell whose nodes run another image rolls them at its next apply: to keep what runs, write the release it runs there instead (`aws eks describe-nodegroup --cluster-name <cell> --nodegroup-name <node group> --query nodegroup.releaseVersion`), then move it in one reviewed line.",
                    platform::AMI_RELEASE
                ),
            });
        }
    }

    if missing.cilium {
        // The version each environment's cells install (cni.tf), the lowest where they differ.
        let mut found: BTreeMap<String, Vec<(u64, u64, u64)>> = BTreeMap::new();
        for cell in running.keys() {
            if let Some(version) = cilium_of(plan, cell)? {
                found.entry(environment_of(cell)).or_default().push(version);
            }
        }
        let everywhere = found.values().flatten().min().copied();
        let show = |(a, b, c): (u64, u64, u64)| format!("{a}.{b}.{c}");
        context.cilium_versions = envs
            .iter()
            .map(|env| EnvValue {
                environment: env.clone(),
                version: found
                    .get(env)
                    .and_then(|v| v.iter().min().copied())
                    .or(everywhere)
                    .map(show)
                    .unwrap_or_else(|| platform::CILIUM_VERSION.into()),
            })
            .collect();
        let list: Vec<String> = context
            .cilium_versions
            .iter()
            .map(|e| format!("{}: {}", e.environment, e.version))
            .collect();
        added.push(format!("cilium.version: {}", list.join(", ")));
        for (env, versions) in &found {
            let mut distinct = versions.clone();
            distinct.sort();
            distinct.dedup();
            if distinct.len() > 1 {
                notices.push(Notice {
                    setting: format!("cilium.version.{env}"),
                    message: format!(
                        "is {}, the lowest of the versions {env} cells install ({}): cni.tf reads it for every {env} cell now",
                        show(distinct[0]),
                        distinct.iter().map(|v| show(*v)).collect::<Vec<_>>().join(", ")
                    ),
                });
            }
        }
        if let Some(lowest) = everywhere
            && platform::cilium_version(platform::CILIUM_VERSION).is_some_and(|v| v > lowest)
        {
            notices.push(Notice {
                setting: "cilium.version".into(),
                message: format!(
                    "keeps {}, what the cells' cni.tf installed; this cellgen's is {}. Cilium upgrades one minor version at a time: `cellgen set-version cilium <the newest 1.{}.x> --env dev`, then staging and prod, one minor at a time.",
                    show(lowest),
                    platform::CILIUM_VERSION,
                    lowest.1 + 1
                ),
            });
        }
    }

    if missing.dns {
        let users: Vec<&str> = ["external-dns", "cert-manager"]
            .into_iter()
            .filter(|c| running.values().flatten().any(|r| r == c))
            .collect();
        if !users.is_empty() {
            context.dns_zones = envs
                .iter()
                .map(|env| EnvZones {
                    environment: env.clone(),
                    zones: vec!["*".into()],
                })
                .collect();
            added.push(
                "dns.zones: \"*\" in every environment (every hosted zone, as before)".into(),
            );
            notices.push(Notice {
                setting: "dns.zones".into(),
                message: format!(
                    "is \"*\" (every hosted zone of the account) in every environment: what the IAM roles of {} allowed until now. List each environment's zones (e.g. `prod: [example.com]`): their roles, and external-dns's domainFilters, then reach those zones only.",
                    users.join(" and ")
                ),
            });
        }
    }

    if missing.node_pool {
        let karpenter = running.values().flatten().any(|c| c == "karpenter");
        let current = if karpenter {
            plan.read(NODEPOOL)?.and_then(|text| current_pool(&text))
        } else {
            None
        };
        if let Some(pool) = &current {
            context.karpenter_node_pools = envs
                .iter()
                .map(|env| EnvPool {
                    environment: env.clone(),
                    pool: pool.clone(),
                })
                .collect();
            added.push(format!(
                "karpenter.node_pool: what {NODEPOOL} had, in every environment"
            ));
            let spot_in_prod =
                envs.iter().any(|e| e == "prod") && pool.capacity_types.iter().any(|c| c == "spot");
            notices.push(Notice {
                setting: "karpenter.node_pool".into(),
                message: format!(
                    "keeps what {NODEPOOL} ran in every environment ({}; {}; consolidation after {}; budgets {}), so no node changes.{}",
                    pool.architectures.join(", "),
                    pool.capacity_types.join(", "),
                    pool.consolidate_after,
                    pool.disruption_budgets
                        .iter()
                        .map(|b| format!("nodes {}", b.nodes))
                        .collect::<Vec<_>>()
                        .join(", "),
                    if spot_in_prod {
                        " Prod may run on spot: a new repository gives prod `capacity_types: [on-demand]`, `architectures: [amd64]` and `consolidate_after: 10m`."
                    } else {
                        ""
                    }
                ),
            });
        } else {
            added.push("karpenter.node_pool: the defaults (no spot in prod)".into());
        }
    }
    Ok(context)
}

/// The minor version of `1.34`, for sorting.
fn minor(version: &str) -> u32 {
    version
        .split_once('.')
        .and_then(|(_, m)| m.parse().ok())
        .unwrap_or(u32::MAX)
}

/// The literal chart version of `helm_release.cilium` in the cell's cni.tf.
fn cilium_of(plan: &Plan, cell: &str) -> Result<Option<(u64, u64, u64)>, CellgenError> {
    let Some(text) = plan.read(cell_terraform_dir(cell).join("cni.tf"))? else {
        return Ok(None);
    };
    let Ok(body) = crate::ports::edit::hcl::parse_body(&text) else {
        return Ok(None);
    };
    Ok(body
        .get_blocks("resource")
        .find(|b| b.has_exact_labels(&["helm_release", "cilium"]))
        .and_then(|b| match &b.body.get_attribute("version")?.value {
            hcl_edit::expr::Expression::String(s) => platform::cilium_version(s.as_str()),
            _ => None,
        }))
}

/// The NodePool settings of a nodepool.yaml whose values are literal (cellgen 0.2.0's), if they
/// are: architectures and capacity types from its requirements, consolidateAfter, budgets
/// (Karpenter's default, 10% of the nodes, where it sets none).
fn current_pool(text: &str) -> Option<NodePool> {
    let value: yaml_serde::Value = crate::ports::yaml::from_str(text).ok()?;
    let spec = value.get("spec")?;
    let requirements = spec
        .get("template")?
        .get("spec")?
        .get("requirements")?
        .as_sequence()?;
    let values_of = |key: &str| -> Option<Vec<String>> {
        let found = requirements
            .iter()
            .find(|r| r.get("key").and_then(|k| k.as_str()) == Some(key))?;
        found
            .get("values")?
            .as_sequence()?
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect()
    };
    let disruption = spec.get("disruption")?;
    let budgets = match disruption.get("budgets") {
        None => vec![DisruptionBudget {
            nodes: "10%".into(),
            schedule: None,
            duration: None,
            reasons: Vec::new(),
        }],
        Some(list) => yaml_serde::from_value(list.clone()).ok()?,
    };
    let pool = NodePool {
        architectures: values_of("kubernetes.io/arch")?,
        capacity_types: values_of("karpenter.sh/capacity-type")?,
        consolidate_after: disruption.get("consolidateAfter")?.as_str()?.to_string(),
        disruption_budgets: budgets,
    };
    // Only values the settings accept: anything else is the user's to set.
    let envs = vec!["any".to_string()];
    let pools = [("any".to_string(), pool.clone())].into_iter().collect();
    platform::validate_node_pools(&pools, &envs).ok()?;
    Some(pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nodepool_of_0_2_0_is_read_and_a_substituted_one_is_not() {
        let text = "apiVersion: karpenter.sh/v1\nkind: NodePool\nspec:\n  template:\n    spec:\n      requirements:\n        - key: kubernetes.io/arch\n          operator: In\n          values: [amd64, arm64]\n        - key: karpenter.sh/capacity-type\n          operator: In\n          values: [spot, on-demand]\n  disruption:\n    consolidationPolicy: WhenEmptyOrUnderutilized\n    consolidateAfter: 1m\n";
        let pool = current_pool(text).unwrap();
        assert_eq!(pool.architectures, ["amd64", "arm64"]);
        assert_eq!(pool.capacity_types, ["spot", "on-demand"]);
        assert_eq!(pool.consolidate_after, "1m");
        assert_eq!(pool.disruption_budgets[0].nodes, "10%");
        let substituted = text.replace("[amd64, arm64]", "${karpenter_architectures}");
        assert_eq!(current_pool(&substituted), None);
    }
}
