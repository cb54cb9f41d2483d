//! kustomize's name-reference fix-up: after prefixes, suffixes, namespaces and
//! generator hashes changed names, fields that refer to the old names follow.
//! References kustomize would fix but this module does not are reported as
//! `Unsupported` when they point at a renamed object, never left stale.

use serde_json::Value;

use super::BuildError;
use super::fieldspec::FieldSpec;
use super::resid::{Res, is_cluster_scoped};

/// A `nameReference` entry from a kustomization's `configurations` file.
#[derive(Debug, Clone)]
pub struct CustomRef {
    pub target: String,
    pub group: String,
    pub version: String,
    pub kind: String,
    pub path: String,
}

impl CustomRef {
    fn applies_to(&self, r: &Res) -> bool {
        (self.kind.is_empty() || self.kind == r.kind())
            && (self.group.is_empty() || self.group == r.group())
            && (self.version.is_empty() || self.version == r.version())
    }
}

struct Ref {
    target: &'static str,
    spec: FieldSpec,
}

/// Where each workload kind keeps its pod spec.
const POD_SPECS: [(&str, &str); 8] = [
    ("Pod", "spec"),
    ("PodTemplate", "template/spec"),
    ("Deployment", "spec/template/spec"),
    ("ReplicaSet", "spec/template/spec"),
    ("DaemonSet", "spec/template/spec"),
    ("StatefulSet", "spec/template/spec"),
    ("Job", "spec/template/spec"),
    ("CronJob", "spec/jobTemplate/spec/template/spec"),
];

fn leak(s: String) -> &'static str {
    // The table is built once per process (see `table`), so this is bounded.
    Box::leak(s.into_boxed_str())
}

fn table() -> &'static [Ref] {
    static TABLE: std::sync::OnceLock<Vec<Ref>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = Vec::new();
        let mut add = |target: &'static str, spec: FieldSpec| t.push(Ref { target, spec });
        for (kind, pod) in POD_SPECS {
            for c in ["containers", "initContainers"] {
                let p = |s: &str| leak(format!("{pod}/{c}/{s}"));
                add(
                    "ConfigMap",
                    FieldSpec::new(kind, p("env/valueFrom/configMapKeyRef/name"), false),
                );
                add(
                    "ConfigMap",
                    FieldSpec::new(kind, p("envFrom/configMapRef/name"), false),
                );
                add(
                    "Secret",
                    FieldSpec::new(kind, p("env/valueFrom/secretKeyRef/name"), false),
                );
                add(
                    "Secret",
                    FieldSpec::new(kind, p("envFrom/secretRef/name"), false),
                );
            }
            let p = |s: &str| leak(format!("{pod}/{s}"));
            add(
                "ConfigMap",
                FieldSpec::new(kind, p("volumes/configMap/name"), false),
            );
            add(
                "ConfigMap",
                FieldSpec::new(kind, p("volumes/projected/sources/configMap/name"), false),
            );
            add(
                "Secret",
                FieldSpec::new(kind, p("volumes/secret/secretName"), false),
            );
            add(
                "Secret",
                FieldSpec::new(kind, p("volumes/projected/sources/secret/name"), false),
            );
            add(
                "Secret",
                FieldSpec::new(kind, p("imagePullSecrets/name"), false),
            );
        }
        let mut with_rc: Vec<(&str, &str)> = POD_SPECS
            .iter()
            .copied()
            .filter(|(k, _)| *k != "ReplicaSet" && *k != "PodTemplate")
            .collect();
        with_rc.push(("ReplicationController", "spec/template/spec"));
        for (kind, pod) in with_rc {
            let p = |s: &str| leak(format!("{pod}/{s}"));
            add(
                "ServiceAccount",
                FieldSpec::new(kind, p("serviceAccountName"), false),
            );
            add(
                "PersistentVolumeClaim",
                FieldSpec::new(kind, p("volumes/persistentVolumeClaim/claimName"), false),
            );
            add(
                "PriorityClass",
                FieldSpec::new(kind, p("priorityClassName"), false),
            );
        }
        add(
            "Secret",
            FieldSpec::new("Ingress", "spec/tls/secretName", false),
        );
        for p in [
            "parameters/secretName",
            "parameters/adminSecretName",
            "parameters/userSecretName",
            "parameters/secretRef",
        ] {
            add("Secret", FieldSpec::new("StorageClass", p, false));
        }
        add(
            "Secret",
            FieldSpec::new("PersistentVolume", "spec/azureFile/secretName", false),
        );
        add(
            "Secret",
            FieldSpec {
                group: "serving.knative.dev",
                version: "v1",
                kind: "Service",
                path: "spec/template/spec/containers/env/valueFrom/secretKeyRef/name",
                create: false,
            },
        );
        add(
            "Secret",
            FieldSpec::new("ServiceAccount", "imagePullSecrets/name", false),
        );
        add(
            "Service",
            FieldSpec::grouped("apps", "StatefulSet", "spec/serviceName", false),
        );
        add(
            "Service",
            FieldSpec::new(
                "Ingress",
                "spec/rules/http/paths/backend/serviceName",
                false,
            ),
        );
        add(
            "Service",
            FieldSpec::new("Ingress", "spec/backend/serviceName", false),
        );
        add(
            "Service",
            FieldSpec::new(
                "Ingress",
                "spec/rules/http/paths/backend/service/name",
                false,
            ),
        );
        add(
            "Service",
            FieldSpec::new("Ingress", "spec/defaultBackend/service/name", false),
        );
        add(
            "Service",
            FieldSpec::grouped(
                "apiregistration.k8s.io",
                "APIService",
                "spec/service/name",
                false,
            ),
        );
        add(
            "Service",
            FieldSpec::new("HTTPRoute", "spec/rules/backendRefs/name", false),
        );
        for k in ["RoleBinding", "ClusterRoleBinding"] {
            if k == "RoleBinding" {
                add(
                    "Role",
                    FieldSpec::grouped("rbac.authorization.k8s.io", k, "roleRef/name", false),
                );
            }
            add(
                "ClusterRole",
                FieldSpec::grouped("rbac.authorization.k8s.io", k, "roleRef/name", false),
            );
        }
        for target in [
            "Deployment",
            "ReplicationController",
            "ReplicaSet",
            "StatefulSet",
        ] {
            add(
                target,
                FieldSpec::new("HorizontalPodAutoscaler", "spec/scaleTargetRef/name", false),
            );
        }
        add(
            "PersistentVolume",
            FieldSpec::new("PersistentVolumeClaim", "spec/volumeName", false),
        );
        add(
            "StorageClass",
            FieldSpec::new("PersistentVolume", "spec/storageClassName", false),
        );
        add(
            "StorageClass",
            FieldSpec::new("PersistentVolumeClaim", "spec/storageClassName", false),
        );
        add(
            "StorageClass",
            FieldSpec::new(
                "StatefulSet",
                "spec/volumeClaimTemplates/spec/storageClassName",
                false,
            ),
        );
        add(
            "IngressClass",
            FieldSpec::new("Ingress", "spec/ingressClassName", false),
        );
        t
    })
}

/// References kustomize fixes that we only detect.
const UNHANDLED: [(&str, FieldSpec); 4] = [
    (
        "ConfigMap",
        FieldSpec::new("Role", "rules/resourceNames", false),
    ),
    (
        "ConfigMap",
        FieldSpec::new("ClusterRole", "rules/resourceNames", false),
    ),
    (
        "Secret",
        FieldSpec::new("Role", "rules/resourceNames", false),
    ),
    (
        "Secret",
        FieldSpec::new("ClusterRole", "rules/resourceNames", false),
    ),
];

struct Cand {
    kind: String,
    name: String,
    ns: String,
    names: Vec<String>,
    namespaces: Vec<String>,
    cluster: bool,
}

fn norm_ns(ns: &str) -> &str {
    if ns.is_empty() { "default" } else { ns }
}

fn namespaces(r: &Res) -> Vec<String> {
    let mut v: Vec<String> = r
        .history
        .iter()
        .map(|(ns, _)| norm_ns(ns).to_string())
        .collect();
    v.push(norm_ns(r.namespace()).to_string());
    v
}

/// The object of kind `target` that `value` (in one of `ref_ns`) refers to,
/// preferring one currently named `value`.
fn find<'a>(cands: &'a [Cand], target: &str, value: &str, ref_ns: &[String]) -> Option<&'a Cand> {
    let mut matching = cands.iter().filter(|c| {
        c.kind == target
            && c.names.iter().any(|n| n == value)
            && (c.cluster || c.namespaces.iter().any(|n| ref_ns.contains(n)))
    });
    let first = matching.next()?;
    if first.name == value {
        return Some(first);
    }
    Some(matching.find(|c| c.name == value).unwrap_or(first))
}

/// The new name for a scalar reference, if the object was renamed.
fn resolve<'a>(
    cands: &'a [Cand],
    target: &str,
    value: &str,
    ref_ns: &[String],
) -> Option<&'a Cand> {
    find(cands, target, value, ref_ns).filter(|c| c.name != value)
}

pub fn fix(resources: &mut [Res], custom: &[CustomRef]) -> Result<(), BuildError> {
    if resources.iter().all(|r| r.history.is_empty()) {
        return Ok(());
    }
    let cands: Vec<Cand> = resources
        .iter()
        .map(|r| {
            let mut names: Vec<String> = r.history.iter().map(|(_, n)| n.clone()).collect();
            names.push(r.name().to_string());
            Cand {
                kind: r.kind().to_string(),
                name: r.name().to_string(),
                ns: r.namespace().to_string(),
                names,
                namespaces: namespaces(r),
                cluster: is_cluster_scoped(r.group(), r.kind()),
            }
        })
        .collect();
    for r in resources.iter_mut() {
        let ref_ns = namespaces(r);
        let applicable: Vec<&Ref> = table().iter().filter(|rf| rf.spec.applies_to(r)).collect();
        for rf in applicable {
            rf.spec.visit(&mut r.obj, &mut |parent, key| {
                if rf.spec.path.ends_with("scaleTargetRef/name")
                    && parent.get("kind").and_then(Value::as_str) != Some(rf.target)
                {
                    return;
                }
                if let Some(Value::String(v)) = parent.get(key)
                    && let Some(c) = resolve(&cands, rf.target, v, &ref_ns)
                {
                    parent.insert(key.to_string(), Value::String(c.name.clone()));
                }
            });
        }
        let applicable: Vec<&CustomRef> = custom.iter().filter(|c| c.applies_to(r)).collect();
        for cr in applicable {
            super::fieldspec::visit_path(&mut r.obj, &cr.path, false, &mut |parent, key| {
                match parent.get_mut(key) {
                    Some(Value::String(v)) => {
                        if let Some(c) = resolve(&cands, &cr.target, v, &ref_ns) {
                            *v = c.name.clone();
                        }
                    }
                    Some(Value::Array(items)) => {
                        for item in items {
                            if let Value::String(v) = item
                                && let Some(c) = resolve(&cands, &cr.target, v, &ref_ns)
                            {
                                *v = c.name.clone();
                            }
                        }
                    }
                    _ => {}
                }
            });
        }
        if r.group() == "rbac.authorization.k8s.io" && r.kind().ends_with("RoleBinding") {
            fix_subjects(r, &cands, &ref_ns);
        }
        if r.group() == "admissionregistration.k8s.io" && r.kind().ends_with("WebhookConfiguration")
        {
            fix_webhooks(r, &cands);
        }
        if r.kind() == "Ingress" {
            fix_ingress_annotations(r, &cands, &ref_ns);
        }
        for (target, spec) in UNHANDLED.iter().filter(|(_, s)| s.applies_to(r)) {
            let mut stale = None;
            spec.visit(&mut r.obj.clone(), &mut |parent, key| {
                let vals: Vec<&str> = match parent.get(key) {
                    Some(Value::String(s)) => vec![s],
                    Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
                    _ => vec![],
                };
                if vals
                    .iter()
                    .any(|v| resolve(&cands, target, v, &ref_ns).is_some())
                {
                    stale = Some(spec.path);
                }
            });
            if let Some(path) = stale {
                return Err(BuildError::Unsupported {
                    file: r.origin.clone(),
                    field: format!(
                        "name reference `{path}` of {} to a renamed {target}",
                        r.kind()
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Updates a `{name, namespace}` reference (RBAC subjects, webhook services)
/// to the referenced object's current name and namespace.
fn fix_map_ref(
    m: &mut serde_json::Map<String, Value>,
    target: &str,
    cands: &[Cand],
    ref_ns: &[String],
) {
    let Some(name) = m.get("name").and_then(Value::as_str) else {
        return;
    };
    let ns: Vec<String> = match m.get("namespace").and_then(Value::as_str) {
        Some(n) => vec![norm_ns(n).to_string()],
        None => ref_ns.to_vec(),
    };
    if let Some(c) = find(cands, target, name, &ns) {
        let (new_name, new_ns) = (c.name.clone(), c.ns.clone());
        m.insert("name".into(), Value::String(new_name));
        if !new_ns.is_empty() {
            m.insert("namespace".into(), Value::String(new_ns));
        }
    }
}

fn fix_subjects(r: &mut Res, cands: &[Cand], ref_ns: &[String]) {
    let Some(Value::Array(subjects)) = r.obj.get_mut("subjects") else {
        return;
    };
    for s in subjects.iter_mut().filter_map(Value::as_object_mut) {
        if s.get("kind").and_then(Value::as_str) == Some("ServiceAccount") {
            fix_map_ref(s, "ServiceAccount", cands, ref_ns);
        }
    }
}

fn fix_webhooks(r: &mut Res, cands: &[Cand]) {
    let Some(Value::Array(hooks)) = r.obj.get_mut("webhooks") else {
        return;
    };
    for h in hooks {
        if let Some(Value::Object(svc)) = h.pointer_mut("/clientConfig/service") {
            fix_map_ref(svc, "Service", cands, &["default".to_string()]);
        }
    }
}

/// Ingress annotations kustomize treats as references.
const INGRESS_ANNOTATIONS: [(&str, &str); 4] = [
    ("ingress.kubernetes.io/auth-secret", "Secret"),
    ("nginx.ingress.kubernetes.io/auth-secret", "Secret"),
    ("nginx.ingress.kubernetes.io/auth-tls-secret", "Secret"),
    (
        "nginx.ingress.kubernetes.io/fastcgi-params-configmap",
        "ConfigMap",
    ),
];

fn fix_ingress_annotations(r: &mut Res, cands: &[Cand], ref_ns: &[String]) {
    let Some(Value::Object(ann)) = r.obj.pointer_mut("/metadata/annotations") else {
        return;
    };
    for (key, target) in INGRESS_ANNOTATIONS {
        if let Some(Value::String(v)) = ann.get(key)
            && let Some(c) = resolve(cands, target, v, ref_ns)
        {
            ann.insert(key.to_string(), Value::String(c.name.clone()));
        }
    }
}
