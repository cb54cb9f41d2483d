//! kustomize's "legacy" output order: by kind priority, then GVK string, then
//! namespace/name (see kustomize's SortOrderTransformer).

use super::resid::Res;

const ORDER_FIRST: [&str; 22] = [
    "Namespace",
    "ResourceQuota",
    "StorageClass",
    "CustomResourceDefinition",
    "ServiceAccount",
    "PodSecurityPolicy",
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "ConfigMap",
    "Secret",
    "Endpoints",
    "Service",
    "LimitRange",
    "PriorityClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Deployment",
    "StatefulSet",
    "CronJob",
    "PodDisruptionBudget",
];
const ORDER_LAST: [&str; 2] = [
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

fn rank(kind: &str) -> i64 {
    if let Some(i) = ORDER_FIRST.iter().position(|k| *k == kind) {
        return i as i64 - ORDER_FIRST.len() as i64;
    }
    ORDER_LAST
        .iter()
        .position(|k| *k == kind)
        .map_or(0, |i| 1 + i as i64)
}

fn gvk_string(r: &Res) -> String {
    let or = |s: &str, d: &str| {
        if s.is_empty() {
            d.to_string()
        } else {
            s.to_string()
        }
    };
    format!(
        "{}_{}_{}",
        or(r.group(), "~G"),
        or(r.version(), "~V"),
        or(r.kind(), "~K")
    )
}

fn id_string(r: &Res) -> String {
    let ns = if r.namespace().is_empty() {
        "~X"
    } else {
        r.namespace()
    };
    let name = if r.name().is_empty() { "~N" } else { r.name() };
    format!("{}|{ns}|{name}", gvk_string(r))
}

pub fn sort(resources: &mut [Res]) {
    resources.sort_by_cached_key(|r| {
        let mut gvk = gvk_string(r);
        // kustomize puts the core Namespace before custom kinds also named Namespace.
        if r.kind() == "Namespace" && r.group().is_empty() {
            gvk.insert(0, '\0');
        }
        (rank(r.kind()), gvk, id_string(r))
    });
}
