//! `dependsOn` targets and cycles, and the sources Kustomizations and HelmReleases take their
//! manifests and charts from.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::{Applied, Checker, HELM, KUSTOMIZE, SOURCE};
use crate::analysis::layer_check::object_name;
use crate::analysis::render::{BOOTSTRAP, str_at, value_at};

/// An object by (namespace, name), borrowed from it.
type Key<'a> = (&'a str, &'a str);

impl Checker<'_> {
    /// `dependsOn` of Kustomizations (or HelmReleases) names objects the cell applies, and the
    /// graph has no cycle.
    pub(super) fn dependencies<'a>(&mut self, applied: &[Applied<'a>], group: &str, kind: &str) {
        let nodes: Vec<&Applied<'a>> = applied.iter().filter(|a| a.is(group, kind)).collect();
        // Keys borrow the objects' strings: the graph is built for every cell.
        let mut known: BTreeSet<Key<'a>> =
            nodes.iter().map(|a| (a.namespace(), a.name())).collect();
        if kind == "Kustomization" {
            known.insert((BOOTSTRAP, BOOTSTRAP));
        }
        // (namespace, name) → the (namespace, name, dependsOn index) it depends on.
        let mut edges: BTreeMap<Key<'a>, Vec<(Key<'a>, usize)>> = BTreeMap::new();
        for a in nodes.iter().filter(|a| a.checked) {
            let from = (a.namespace(), a.name());
            let deps = value_at(a.object, "/spec/dependsOn").and_then(Value::as_array);
            for (i, dep) in deps.into_iter().flatten().enumerate() {
                let name = str_at(dep, "/name");
                let namespace = dep
                    .get("namespace")
                    .and_then(Value::as_str)
                    .unwrap_or(a.namespace());
                if name.is_empty() {
                    continue; // The schema check reports it.
                }
                if known.contains(&(namespace, name)) {
                    edges.entry(from).or_default().push(((namespace, name), i));
                    continue;
                }
                let hint = crate::suggest::hint(
                    name,
                    known
                        .iter()
                        .filter(|(ns, _)| *ns == namespace)
                        .map(|(_, n)| *n),
                );
                self.error(
                    a,
                    "unknown-dependency",
                    &["spec", "dependsOn", &i.to_string(), "name"],
                    Some(name),
                    format!(
                        "{} depends on {kind} `{namespace}/{name}`, which this cell does not apply: Flux waits for it forever (\"dependency not found\").{hint}",
                        object_name(a.object)
                    ),
                );
            }
        }
        // Cycles: each reported once, at the edge that closes it.
        let mut reported: BTreeSet<Vec<(&str, &str)>> = BTreeSet::new();
        for a in &nodes {
            let start = (a.namespace(), a.name());
            let mut stack = vec![(start, vec![start])];
            let mut seen = BTreeSet::new();
            while let Some((node, path)) = stack.pop() {
                for &(next, i) in edges.get(&node).into_iter().flatten() {
                    let name = next.1;
                    if next == start {
                        let mut cycle = path.clone();
                        cycle.sort();
                        if !reported.insert(cycle) {
                            continue;
                        }
                        let closer = nodes
                            .iter()
                            .find(|n| n.namespace() == node.0 && n.name() == node.1)
                            .expect("edges start at nodes");
                        let names: Vec<&str> = path
                            .iter()
                            .chain(std::iter::once(&start))
                            .map(|(_, n)| *n)
                            .collect();
                        self.error(
                            closer,
                            "dependency-cycle",
                            &["spec", "dependsOn", &i.to_string(), "name"],
                            Some(name),
                            format!(
                                "dependsOn forms a cycle: {} (Flux never reconciles any of them)",
                                names.join(" → ")
                            ),
                        );
                    } else if seen.insert(next) {
                        let mut longer = path.clone();
                        longer.push(next);
                        stack.push((next, longer));
                    }
                }
            }
        }
    }

    /// Kustomization `sourceRef` and HelmRelease `chart.spec.sourceRef` / `chartRef` name a
    /// source the cell applies (or the bootstrap GitRepository).
    pub(super) fn source_refs(&mut self, applied: &[Applied]) {
        let mut known: BTreeSet<(String, String, String)> = applied
            .iter()
            .filter(|a| a.group() == SOURCE)
            .map(|a| {
                (
                    a.kind().to_string(),
                    a.namespace().to_string(),
                    a.name().to_string(),
                )
            })
            .collect();
        known.insert(("GitRepository".into(), BOOTSTRAP.into(), BOOTSTRAP.into()));
        for a in applied.iter().filter(|a| a.checked) {
            let paths: &[&[&str]] = if a.is(KUSTOMIZE, "Kustomization") {
                &[&["spec", "sourceRef"]]
            } else if a.is(HELM, "HelmRelease") {
                &[
                    &["spec", "chart", "spec", "sourceRef"],
                    &["spec", "chartRef"],
                ]
            } else {
                continue;
            };
            for path in paths {
                let pointer = format!("/{}", path.join("/"));
                let Some(reference) = value_at(a.object, &pointer) else {
                    continue;
                };
                let kind = str_at(reference, "/kind");
                let name = str_at(reference, "/name");
                if kind.is_empty() || name.is_empty() {
                    continue; // The schema check reports it.
                }
                let namespace = reference
                    .get("namespace")
                    .and_then(Value::as_str)
                    .unwrap_or(a.namespace());
                if known.contains(&(kind.to_string(), namespace.to_string(), name.to_string())) {
                    continue;
                }
                let hint = crate::suggest::hint(
                    name,
                    known
                        .iter()
                        .filter(|(k, ns, _)| k == kind && ns == namespace)
                        .map(|(_, _, n)| n.as_str()),
                );
                let elsewhere: Vec<String> = known
                    .iter()
                    .filter(|(k, ns, n)| k == kind && n == name && ns != namespace)
                    .map(|(_, ns, _)| format!("`{ns}`"))
                    .collect();
                let elsewhere = if elsewhere.is_empty() {
                    String::new()
                } else {
                    format!(
                        " (there is one in {}: set `namespace`)",
                        elsewhere.join(", ")
                    )
                };
                let mut field: Vec<&str> = path.to_vec();
                field.push("name");
                self.error(
                    a,
                    "missing-source",
                    &field,
                    Some(name),
                    format!(
                        "{} takes its {} from {kind} `{namespace}/{name}`, which this cell does not apply{elsewhere}: Flux reports \"source not found\" and applies nothing.{hint}",
                        object_name(a.object),
                        if a.kind() == "HelmRelease" { "chart" } else { "manifests" },
                    ),
                );
            }
        }
    }
}
