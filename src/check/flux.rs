//! Checks of everything a cell applies, across its layers: Flux objects against the Flux CRDs,
//! `dependsOn` targets and cycles, source references, the namespaces objects go to, and Secrets
//! committed in plain text. Each finding points at the source line to edit.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde_json::Value;

use super::layer::{object_name, steps};
use super::locate::SourceFiles;
use super::schema::{Schemas, Step};
use super::{Finding, METADATA_CONFIGMAP};
use crate::kustomize::Resource;
use crate::render::{BOOTSTRAP, RenderedCell, str_at};

/// Namespaces every cluster has (and `flux-system`, which Flux's bootstrap creates).
pub const BUILT_IN_NAMESPACES: &[&str] = &[
    "default",
    "kube-system",
    "kube-public",
    "kube-node-lease",
    "flux-system",
];

/// One object as Flux applies it, with where it came from.
struct Applied<'a> {
    object: &'a Value,
    kind: &'a str,
    name: &'a str,
    namespace: &'a str,
    /// API group (empty for core).
    group: &'a str,
    resource: &'a Resource,
    /// Index of its layer; `None` for the cell's directory.
    layer: Option<usize>,
    /// False when its substitution fails (reported as such): `object` is then the object as
    /// built, good to know what exists (a Namespace, a source) but not checked itself.
    checked: bool,
    /// The layer a finding about it breaks: its layer, or the layer it is (for the cell's
    /// directory's Flux Kustomizations).
    owner: Option<usize>,
}

impl<'a> Applied<'a> {
    fn new(
        object: &'a Value,
        resource: &'a Resource,
        layer: Option<usize>,
        checked: bool,
        owner: Option<usize>,
    ) -> Applied<'a> {
        let metadata = object.get("metadata");
        let meta = |k: &str| {
            metadata
                .and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .unwrap_or("")
        };
        Applied {
            object,
            kind: str_at(object, "/kind"),
            name: meta("name"),
            namespace: meta("namespace"),
            group: str_at(object, "/apiVersion")
                .rsplit_once('/')
                .map_or("", |(g, _)| g),
            resource,
            layer,
            checked,
            owner,
        }
    }
    fn kind(&self) -> &'a str {
        self.kind
    }
    fn name(&self) -> &'a str {
        self.name
    }
    fn namespace(&self) -> &'a str {
        self.namespace
    }
    fn group(&self) -> &'a str {
        self.group
    }
    fn is(&self, group: &str, kind: &str) -> bool {
        self.group == group && self.kind == kind
    }
}

/// An object by (namespace, name).
type Key = (String, String);

const KUSTOMIZE: &str = "kustomize.toolkit.fluxcd.io";
const HELM: &str = "helm.toolkit.fluxcd.io";
const SOURCE: &str = "source.toolkit.fluxcd.io";

/// Checks everything `cell` applies; findings get the cell and (where there is one) the layer.
pub fn check_cell(
    rendered: &RenderedCell,
    cell: &str,
    sources: &mut SourceFiles,
    findings: &mut Vec<Finding>,
) {
    let mut applied = Vec::new();
    for resource in rendered.cell_resources() {
        let owner = rendered.layers.iter().position(|l| {
            l.layer.name == str_at(&resource.object, "/metadata/name")
                && l.layer.namespace == str_at(&resource.object, "/metadata/namespace")
                && crate::render::layer::is_flux_kustomization(&resource.object)
        });
        applied.push(Applied::new(&resource.object, resource, None, true, owner));
    }
    for (i, layer) in rendered.layers.iter().enumerate() {
        for (resource, result) in layer.pairs() {
            applied.push(Applied::new(
                result.as_ref().unwrap_or(&resource.object),
                resource,
                Some(i),
                result.is_ok(),
                Some(i),
            ));
        }
    }
    let mut checker = Checker {
        rendered,
        sources,
        out: Vec::new(),
        namespaceless: BTreeMap::new(),
    };
    checker.schemas(&applied);
    checker.dependencies(&applied, KUSTOMIZE, "Kustomization");
    checker.dependencies(&applied, HELM, "HelmRelease");
    checker.source_refs(&applied);
    checker.cell_metadata_refs(&applied);
    checker.nested_kustomizations(&applied);
    checker.namespaces(&applied);
    checker.flush_namespaces();
    checker.plain_secrets(&applied);
    for (layer, finding) in checker.out {
        let finding = finding.in_cell(cell);
        findings.push(match layer {
            Some(i) => finding.in_layer(&rendered.layers[i].layer.name),
            None => finding,
        });
    }
}

/// Where objects go to a namespace that does not exist: (owner layer, file, line, namespace,
/// verb, fix) → the objects.
type Namespaceless = BTreeMap<
    (
        Option<usize>,
        PathBuf,
        Option<usize>,
        String,
        &'static str,
        String,
    ),
    Vec<String>,
>;

struct Checker<'a> {
    rendered: &'a RenderedCell,
    sources: &'a mut SourceFiles,
    out: Vec<(Option<usize>, Finding)>,
    namespaceless: Namespaceless,
}

impl Checker<'_> {
    /// The files an object's field may have been written in: its origin, the patches that
    /// changed it, and the Flux Kustomization (its `spec.patches`, `targetNamespace`, ...).
    fn files(&self, a: &Applied) -> Vec<PathBuf> {
        let mut files = vec![a.resource.origin.clone()];
        files.extend(a.resource.patched_by.iter().cloned());
        if let Some(i) = a.layer {
            files.push(self.rendered.layers[i].layer.file.clone());
        }
        files
    }

    fn at(&mut self, a: &Applied, path: &[Step], value: Option<&str>) -> (PathBuf, Option<usize>) {
        let files = self.files(a);
        self.sources
            .locate_field(&files, a.kind(), a.name(), path, value)
    }

    fn error(
        &mut self,
        a: &Applied,
        code: &'static str,
        path: &[&str],
        value: Option<&str>,
        message: String,
    ) {
        let (file, line) = self.at(a, &steps(path), value);
        self.out
            .push((a.owner, Finding::error(code, file, line, message)));
    }

    fn schemas(&mut self, applied: &[Applied]) {
        let schemas = Schemas::embedded();
        for a in applied.iter().filter(|a| a.checked) {
            if !schemas.knows_group(a.group()) {
                continue;
            }
            let Some(violations) = schemas.validate(a.object) else {
                continue;
            };
            for v in violations {
                let (file, line) = self.at(a, &v.path.0, v.value.as_deref());
                let message = format!("{}: {}", object_name(a.object), v.message);
                self.out
                    .push((a.owner, Finding::error("flux-schema", file, line, message)));
            }
        }
    }

    /// `dependsOn` of Kustomizations (or HelmReleases) names objects the cell applies, and the
    /// graph has no cycle.
    fn dependencies(&mut self, applied: &[Applied], group: &str, kind: &str) {
        let nodes: Vec<&Applied> = applied.iter().filter(|a| a.is(group, kind)).collect();
        let mut known: BTreeSet<(String, String)> = nodes
            .iter()
            .map(|a| (a.namespace().to_string(), a.name().to_string()))
            .collect();
        if kind == "Kustomization" {
            known.insert((BOOTSTRAP.into(), BOOTSTRAP.into()));
        }
        // (namespace, name) → the (namespace, name, dependsOn index) it depends on.
        let mut edges: BTreeMap<Key, Vec<(String, String, usize)>> = BTreeMap::new();
        for a in nodes.iter().filter(|a| a.checked) {
            let from = (a.namespace().to_string(), a.name().to_string());
            let deps = a
                .object
                .pointer("/spec/dependsOn")
                .and_then(Value::as_array);
            for (i, dep) in deps.into_iter().flatten().enumerate() {
                let name = str_at(dep, "/name").to_string();
                let namespace = dep
                    .get("namespace")
                    .and_then(Value::as_str)
                    .unwrap_or(a.namespace())
                    .to_string();
                if name.is_empty() {
                    continue; // The schema check reports it.
                }
                let target = (namespace.clone(), name.clone());
                if known.contains(&target) {
                    edges
                        .entry(from.clone())
                        .or_default()
                        .push((namespace, name, i));
                    continue;
                }
                let hint = crate::suggest::hint(
                    &name,
                    known
                        .iter()
                        .filter(|(ns, _)| *ns == namespace)
                        .map(|(_, n)| n.as_str()),
                );
                self.error(
                    a,
                    "unknown-dependency",
                    &["spec", "dependsOn", &i.to_string(), "name"],
                    Some(&name),
                    format!(
                        "{} depends on {kind} `{namespace}/{name}`, which this cell does not apply: Flux waits for it forever (\"dependency not found\").{hint}",
                        object_name(a.object)
                    ),
                );
            }
        }
        // Cycles: each reported once, at the edge that closes it.
        let mut reported: BTreeSet<Vec<(String, String)>> = BTreeSet::new();
        for a in &nodes {
            let start = (a.namespace().to_string(), a.name().to_string());
            let mut stack = vec![(start.clone(), vec![start.clone()])];
            let mut seen = BTreeSet::new();
            while let Some((node, path)) = stack.pop() {
                for (ns, name, i) in edges.get(&node).into_iter().flatten() {
                    let next = (ns.clone(), name.clone());
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
                        let names: Vec<String> = path
                            .iter()
                            .chain(std::iter::once(&start))
                            .map(|(_, n)| n.clone())
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
                    } else if seen.insert(next.clone()) {
                        let mut longer = path.clone();
                        longer.push(next.clone());
                        stack.push((next, longer));
                    }
                }
            }
        }
    }

    /// Kustomization `sourceRef` and HelmRelease `chart.spec.sourceRef` / `chartRef` name a
    /// source the cell applies (or the bootstrap GitRepository).
    fn source_refs(&mut self, applied: &[Applied]) {
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
                let Some(reference) = a.object.pointer(&pointer) else {
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

    /// Kustomizations rendered inside layers follow the same rules as the cell's own for
    /// `cell-metadata` (the layers themselves are checked with their layer).
    fn cell_metadata_refs(&mut self, applied: &[Applied]) {
        for a in applied
            .iter()
            .filter(|a| a.checked && a.layer.is_some() && a.is(KUSTOMIZE, "Kustomization"))
        {
            let refs = a
                .object
                .pointer("/spec/postBuild/substituteFrom")
                .and_then(Value::as_array);
            for (i, r) in refs.into_iter().flatten().enumerate() {
                if str_at(r, "/kind") != "ConfigMap" || str_at(r, "/name") != METADATA_CONFIGMAP {
                    continue;
                }
                let entry = i.to_string();
                if a.namespace() != BOOTSTRAP {
                    self.error(
                        a,
                        "substitute-namespace",
                        &["spec", "postBuild", "substituteFrom", &entry],
                        None,
                        format!(
                            "{} substitutes from {METADATA_CONFIGMAP}, but substituteFrom reads the Kustomization's own namespace and {METADATA_CONFIGMAP} is in `flux-system`: put the Kustomization in flux-system",
                            object_name(a.object)
                        ),
                    );
                }
                if r.get("optional") == Some(&Value::Bool(true)) {
                    self.error(
                        a,
                        "optional-cell-metadata",
                        &["spec", "postBuild", "substituteFrom", &entry, "optional"],
                        None,
                        format!(
                            "{} marks {METADATA_CONFIGMAP} `optional: true`: without it Flux applies every `${{...}}` literally. Remove `optional: true`",
                            object_name(a.object)
                        ),
                    );
                }
            }
        }
    }

    /// A Flux Kustomization a layer applies is checked as an object, but what it applies in
    /// turn is not rendered: say so rather than pass it silently.
    fn nested_kustomizations(&mut self, applied: &[Applied]) {
        for a in applied
            .iter()
            .filter(|a| a.checked && a.layer.is_some() && a.is(KUSTOMIZE, "Kustomization"))
        {
            let (file, line) = self.at(a, &steps(&["metadata", "name"]), None);
            let message = format!(
                "{} is applied by this layer: cellgen checks the object, but does not render what it applies in turn (spec.path `{}`). List it in the cell's directory to have it rendered as a layer",
                object_name(a.object),
                str_at(a.object, "/spec/path")
            );
            self.out.push((
                a.owner,
                Finding::warning("not-rendered", file, line, message),
            ));
        }
    }

    /// A namespaced object goes to a namespace that is built in, or that the same layer, a layer
    /// it depends on (transitively) or the cell's directory creates.
    fn namespaces(&mut self, applied: &[Applied]) {
        let layers = &self.rendered.layers;
        let mut created: Vec<BTreeSet<&str>> = vec![BTreeSet::new(); layers.len()];
        let mut in_cell_dir: BTreeSet<&str> = BTreeSet::new();
        let mut crd_scopes: BTreeMap<(&str, &str), bool> = BTreeMap::new();
        for a in applied {
            if a.kind() == "Namespace" && a.group().is_empty() {
                match a.layer {
                    Some(i) => created[i].insert(a.name()),
                    None => in_cell_dir.insert(a.name()),
                };
            }
            if a.kind() == "CustomResourceDefinition" {
                crd_scopes.insert(
                    (
                        str_at(a.object, "/spec/group"),
                        str_at(a.object, "/spec/names/kind"),
                    ),
                    str_at(a.object, "/spec/scope") == "Namespaced",
                );
            }
        }
        for a in applied.iter().filter(|a| a.checked) {
            let scope = crd_scopes
                .get(&(a.group(), a.kind()))
                .copied()
                .or_else(|| namespaced(a.group(), a.kind()));
            let namespace = a.namespace();
            if a.kind() == "Namespace" || scope == Some(false) {
                continue;
            }
            if namespace.is_empty() {
                if scope == Some(true) {
                    self.error(
                        a,
                        "missing-namespace",
                        &["metadata"],
                        None,
                        format!(
                            "{} is namespaced but has no namespace: Flux fails with \"namespace not specified\". Set metadata.namespace (or the layer's spec.targetNamespace)",
                            object_name(a.object)
                        ),
                    );
                }
                continue;
            }
            self.namespace_exists(
                a,
                namespace,
                &created,
                &in_cell_dir,
                &["metadata", "namespace"],
            );
            if a.is(HELM, "HelmRelease")
                && a.object.pointer("/spec/install/createNamespace") != Some(&Value::Bool(true))
            {
                let target = str_at(a.object, "/spec/targetNamespace");
                if !target.is_empty() {
                    self.namespace_exists(
                        a,
                        target,
                        &created,
                        &in_cell_dir,
                        &["spec", "targetNamespace"],
                    );
                }
            }
        }
    }

    fn namespace_exists(
        &mut self,
        a: &Applied,
        namespace: &str,
        created: &[BTreeSet<&str>],
        in_cell_dir: &BTreeSet<&str>,
        path: &[&str],
    ) {
        if BUILT_IN_NAMESPACES.contains(&namespace) || in_cell_dir.contains(namespace) {
            return;
        }
        let layers = &self.rendered.layers;
        let reachable = match a.layer {
            Some(i) => self.depends_on(i),
            None => BTreeSet::new(),
        };
        if reachable.iter().any(|j| created[*j].contains(namespace)) {
            return;
        }
        // A layer that does not build may be the one creating it (its failure is reported).
        if reachable.iter().any(|j| layers[*j].build.is_err()) {
            return;
        }
        let creators: Vec<&str> = (0..layers.len())
            .filter(|j| created[*j].contains(namespace))
            .map(|j| layers[j].layer.name.as_str())
            .collect();
        let fix = match (a.layer, creators.first()) {
            (Some(i), Some(creator)) => format!(
                "it is created by layer `{creator}`, which `{}` does not depend on: add `dependsOn: [{{name: {creator}}}]` to it",
                layers[i].layer.name
            ),
            (None, Some(creator)) => format!(
                "it is created by layer `{creator}`, which the cell's directory is applied before"
            ),
            _ => format!(
                "no layer creates it (built in: {}): add a Namespace to the layer or to one it depends on",
                BUILT_IN_NAMESPACES.join(", ")
            ),
        };
        let what = if path[0] == "spec" {
            "installs into"
        } else {
            "goes to"
        };
        // The namespace may come from the resource, a kustomization's `namespace:` or the Flux
        // Kustomization's `targetNamespace:`.
        let (mut file, mut line) = self.at(a, &steps(path), Some(namespace));
        let found = line.is_some_and(|l| {
            self.sources
                .text(&file)
                .lines()
                .nth(l - 1)
                .is_some_and(|t| t.contains(namespace))
        });
        if !found && let Some(i) = a.layer {
            let layer = &layers[i].layer;
            let kustomization =
                std::path::Path::new(&layer.build_path()).join("kustomization.yaml");
            for (candidate, key) in [
                (layer.file.clone(), "targetNamespace:"),
                (kustomization, "namespace:"),
            ] {
                let hit = self
                    .sources
                    .text(&candidate)
                    .lines()
                    .position(|l| l.trim_start().starts_with(key) && l.contains(namespace));
                if let Some(at) = hit {
                    (file, line) = (candidate, Some(at + 1));
                    break;
                }
            }
        }
        // Objects that go to the same missing namespace from the same line are one finding.
        self.namespaceless
            .entry((a.owner, file, line, namespace.to_string(), what, fix))
            .or_default()
            .push(object_name(a.object));
    }

    fn flush_namespaces(&mut self) {
        for ((owner, file, line, namespace, what, fix), mut objects) in
            std::mem::take(&mut self.namespaceless)
        {
            objects.sort();
            objects.dedup();
            let what = if objects.len() == 1 {
                what.to_string()
            } else {
                what.replace("goes", "go").replace("installs", "install")
            };
            let message = format!(
                "{} {what} namespace `{namespace}`, which does not exist when Flux applies {}: {fix}",
                objects.join(", "),
                if objects.len() == 1 { "it" } else { "them" }
            );
            self.out.push((
                owner,
                Finding::error("missing-namespace", file, line, message),
            ));
        }
    }

    /// Layers `i` depends on, transitively (itself included).
    fn depends_on(&self, i: usize) -> BTreeSet<usize> {
        let layers = &self.rendered.layers;
        let mut seen = BTreeSet::from([i]);
        let mut todo = vec![i];
        while let Some(j) = todo.pop() {
            for dep in &layers[j].layer.depends_on {
                for (k, l) in layers.iter().enumerate() {
                    if l.layer.name == dep.name
                        && l.layer.namespace == dep.namespace
                        && seen.insert(k)
                    {
                        todo.push(k);
                    }
                }
            }
        }
        seen
    }

    /// A `kind: Secret` with values, committed without SOPS encryption.
    fn plain_secrets(&mut self, applied: &[Applied]) {
        for a in applied {
            if a.kind() != "Secret" || !a.group().is_empty() || a.object.get("sops").is_some() {
                continue;
            }
            let keys: Vec<&str> = ["data", "stringData"]
                .iter()
                .flat_map(|f| a.object.get(*f).and_then(Value::as_object))
                .flat_map(|m| m.keys().map(String::as_str))
                .collect();
            if keys.is_empty() {
                continue;
            }
            let field = if a
                .object
                .get("data")
                .and_then(Value::as_object)
                .is_some_and(|m| !m.is_empty())
            {
                "data"
            } else {
                "stringData"
            };
            let (file, mut line) = self.at(a, &steps(&[field]), None);
            if line.is_none() {
                line = crate::config::line_of(self.sources.text(&file), "secretGenerator");
            }
            let message = format!(
                "{} holds values ({}) in plain text in Git, and Flux applies them as they are: cell repositories hold identifiers only. Encrypt it with SOPS (a `sops:` stanza) or deliver the values through External Secrets",
                object_name(a.object),
                keys.join(", ")
            );
            self.out
                .push((a.owner, Finding::error("secret-value", file, line, message)));
        }
    }
}

/// Whether a built-in kind (or a Flux one) is namespaced; `None` when cellgen does not know the
/// kind (a CRD the cell does not render).
pub fn namespaced(group: &str, kind: &str) -> Option<bool> {
    const CLUSTER: &[&str] = &[
        "Namespace",
        "Node",
        "PersistentVolume",
        "ClusterRole",
        "ClusterRoleBinding",
        "CustomResourceDefinition",
        "StorageClass",
        "VolumeAttachment",
        "CSIDriver",
        "CSINode",
        "PriorityClass",
        "RuntimeClass",
        "IngressClass",
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "MutatingAdmissionPolicy",
        "MutatingAdmissionPolicyBinding",
        "APIService",
        "CertificateSigningRequest",
        "FlowSchema",
        "PriorityLevelConfiguration",
        "ClusterTrustBundle",
        "DeviceClass",
        "IPAddress",
        "ServiceCIDR",
        "VolumeAttributesClass",
    ];
    const NAMESPACED: &[&str] = &[
        "ConfigMap",
        "Secret",
        "Service",
        "ServiceAccount",
        "Pod",
        "PodTemplate",
        "ReplicationController",
        "Endpoints",
        "EndpointSlice",
        "Event",
        "LimitRange",
        "ResourceQuota",
        "PersistentVolumeClaim",
        "Deployment",
        "StatefulSet",
        "DaemonSet",
        "ReplicaSet",
        "ControllerRevision",
        "Job",
        "CronJob",
        "Role",
        "RoleBinding",
        "Ingress",
        "NetworkPolicy",
        "PodDisruptionBudget",
        "HorizontalPodAutoscaler",
        "Lease",
        "CSIStorageCapacity",
        "ResourceClaim",
        "ResourceClaimTemplate",
    ];
    let builtin = group.is_empty() || !group.contains('.') || group.ends_with(".k8s.io");
    if group.ends_with(".toolkit.fluxcd.io") {
        return Some(true);
    }
    if !builtin {
        return None;
    }
    if CLUSTER.contains(&kind) {
        Some(false)
    } else if NAMESPACED.contains(&kind) {
        Some(true)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::namespaced;

    #[test]
    fn scopes() {
        assert_eq!(namespaced("", "ConfigMap"), Some(true));
        assert_eq!(namespaced("apps", "Deployment"), Some(true));
        assert_eq!(
            namespaced("rbac.authorization.k8s.io", "ClusterRole"),
            Some(false)
        );
        assert_eq!(
            namespaced("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
            Some(false)
        );
        assert_eq!(
            namespaced("helm.toolkit.fluxcd.io", "HelmRelease"),
            Some(true)
        );
        assert_eq!(namespaced("karpenter.sh", "NodePool"), None);
        assert_eq!(namespaced("", "Widget"), None);
    }
}
