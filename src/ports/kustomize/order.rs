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

struct Key {
    rank: i64,
    gvk: String,
    id: String,
    namespace_kind: bool,
    core: bool,
}

/// legacyIDSorter.Less: kind rank, then the GVK string (compared backwards between two
/// Namespace kinds when either is the core one), then namespace and name.
fn less(a: &Key, b: &Key) -> std::cmp::Ordering {
    a.rank.cmp(&b.rank).then_with(|| {
        if a.gvk == b.gvk {
            return a.id.cmp(&b.id);
        }
        if a.namespace_kind && b.namespace_kind && (a.core || b.core) {
            b.gvk.cmp(&a.gvk)
        } else {
            a.gvk.cmp(&b.gvk)
        }
    })
}

pub fn sort(resources: &mut Vec<Res>) {
    let mut keyed: Vec<(Key, Res)> = resources
        .drain(..)
        .map(|r| {
            let key = Key {
                rank: rank(r.kind()),
                gvk: gvk_string(&r),
                id: id_string(&r),
                namespace_kind: r.kind() == "Namespace",
                core: r.group().is_empty(),
            };
            (key, r)
        })
        .collect();
    keyed.sort_by(|(a, _), (b, _)| less(a, b));
    resources.extend(keyed.into_iter().map(|(_, r)| r));
}
