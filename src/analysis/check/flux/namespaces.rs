//! The namespaces objects go to: built in, or created by the same layer, a layer it depends on
//! or the cell's directory; and which kinds are namespaced at all.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::{Applied, Checker, HELM};
use crate::analysis::findings::Finding;
use crate::analysis::layer_check::{object_name, steps};
use crate::analysis::render::{str_at, value_at};

/// Namespaces every cluster has (and `flux-system`, which flux.tf creates with the Flux Operator).
pub const BUILT_IN_NAMESPACES: &[&str] = &[
    "default",
    "kube-system",
    "kube-public",
    "kube-node-lease",
    crate::model::names::FLUX_SYSTEM,
];

impl Checker<'_> {
    /// A namespaced object goes to a namespace that is built in, or that the same layer, a layer
    /// it depends on (transitively) or the cell's directory creates.
    pub(super) fn namespaces(&mut self, applied: &[Applied]) {
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
                && value_at(a.object, "/spec/install/createNamespace") != Some(&Value::Bool(true))
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
                camino::Utf8Path::new(&layer.build_path()).join("kustomization.yaml");
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

    pub(super) fn flush_namespaces(&mut self) {
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
