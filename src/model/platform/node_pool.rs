//! Karpenter's default NodePool per environment: its type, default and checks.

// schemars makes the doc comments the JSON Schema descriptions editors show, where `<name>` is literal (not HTML).
#![allow(rustdoc::invalid_html_tags, rustdoc::bare_urls)]

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Problem, crate_hint, is_number, problem};

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
    pub(super) fn validate(&self, env: &str) -> Result<(), Problem> {
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
