//! The in-flight resource and its identity, as kustomize's resid tracks it.

use std::path::PathBuf;

use serde_json::Value;

/// A resource during a build: the object plus the bookkeeping kustomize keeps
/// (previous names for reference fixing, whether a generator hash is pending).
#[derive(Debug, Clone)]
pub struct Res {
    pub obj: Value,
    pub origin: PathBuf,
    pub patched_by: Vec<PathBuf>,
    /// Every (namespace, name) the object had before its current one, oldest first.
    pub history: Vec<(String, String)>,
    /// Generated object whose name still needs kustomize's content-hash suffix.
    pub needs_hash: bool,
}

impl Res {
    pub fn new(obj: Value, origin: PathBuf) -> Self {
        Res {
            obj,
            origin,
            patched_by: Vec::new(),
            history: Vec::new(),
            needs_hash: false,
        }
    }

    pub fn kind(&self) -> &str {
        str_at(&self.obj, &["kind"])
    }

    pub fn api_version(&self) -> &str {
        str_at(&self.obj, &["apiVersion"])
    }

    pub fn group(&self) -> &str {
        split_api_version(self.api_version()).0
    }

    pub fn version(&self) -> &str {
        split_api_version(self.api_version()).1
    }

    pub fn name(&self) -> &str {
        str_at(&self.obj, &["metadata", "name"])
    }

    pub fn namespace(&self) -> &str {
        str_at(&self.obj, &["metadata", "namespace"])
    }

    /// The name and namespace it was loaded with.
    pub fn original(&self) -> (&str, &str) {
        match self.history.first() {
            Some((ns, name)) => (name, ns),
            None => (self.name(), self.namespace()),
        }
    }

    /// Renames (or moves) the object, remembering the previous id.
    pub fn set_id(&mut self, namespace: Option<&str>, name: Option<&str>) {
        let old = (self.namespace().to_string(), self.name().to_string());
        let meta = metadata_mut(&mut self.obj);
        if let Some(ns) = namespace {
            meta.insert("namespace".into(), Value::String(ns.into()));
        }
        if let Some(n) = name {
            meta.insert("name".into(), Value::String(n.into()));
        }
        if (self.namespace(), self.name()) != (old.0.as_str(), old.1.as_str()) {
            self.history.push(old);
        }
    }

    /// Whether kustomize would treat `name` as one of this object's names.
    pub fn has_name(&self, name: &str) -> bool {
        self.name() == name || self.history.iter().any(|(_, n)| n == name)
    }

    pub fn labels(&self) -> Option<&serde_json::Map<String, Value>> {
        self.obj.get("metadata")?.get("labels")?.as_object()
    }

    pub fn annotations(&self) -> Option<&serde_json::Map<String, Value>> {
        self.obj.get("metadata")?.get("annotations")?.as_object()
    }

    /// kustomize's id string, used in duplicate-id errors.
    pub fn id_string(&self) -> String {
        let group = if self.group().is_empty() {
            "[noGrp]"
        } else {
            self.group()
        };
        let ns = if self.namespace().is_empty() {
            "[noNs]"
        } else {
            self.namespace()
        };
        format!(
            "{}.{}.{}/{}.{}",
            self.kind(),
            self.version(),
            group,
            self.name(),
            ns
        )
    }

    /// Identity for duplicate detection; "" and "default" namespaces are the same place.
    pub fn id_key(&self) -> (String, String, String, String) {
        let ns = match self.namespace() {
            "" => "default",
            ns => ns,
        };
        (
            self.api_version().into(),
            self.kind().into(),
            ns.into(),
            self.name().into(),
        )
    }
}

pub fn split_api_version(av: &str) -> (&str, &str) {
    match av.rsplit_once('/') {
        Some((g, v)) => (g, v),
        None => ("", av),
    }
}

pub fn str_at<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    let mut cur = v;
    for seg in path {
        match cur.get(seg) {
            Some(next) => cur = next,
            None => return "",
        }
    }
    cur.as_str().unwrap_or("")
}

pub fn metadata_mut(obj: &mut Value) -> &mut serde_json::Map<String, Value> {
    if !obj.is_object() {
        *obj = Value::Object(Default::default());
    }
    let map = obj.as_object_mut().expect("just ensured object");
    let meta = map
        .entry("metadata")
        .or_insert_with(|| Value::Object(Default::default()));
    if !meta.is_object() {
        *meta = Value::Object(Default::default());
    }
    meta.as_object_mut().expect("just ensured object")
}

/// Kinds the API server keeps outside namespaces (kustomize skips them when
/// setting `namespace`). Custom resources are assumed namespaced, as kustomize does.
pub fn is_cluster_scoped(group: &str, kind: &str) -> bool {
    const CORE: &[&str] = &["Namespace", "Node", "PersistentVolume", "ComponentStatus"];
    const GROUPED: &[(&str, &str)] = &[
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("apiregistration.k8s.io", "APIService"),
        (
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration",
        ),
        (
            "admissionregistration.k8s.io",
            "ValidatingWebhookConfiguration",
        ),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
        (
            "admissionregistration.k8s.io",
            "ValidatingAdmissionPolicyBinding",
        ),
        ("storage.k8s.io", "StorageClass"),
        ("storage.k8s.io", "CSIDriver"),
        ("storage.k8s.io", "CSINode"),
        ("storage.k8s.io", "VolumeAttachment"),
        ("scheduling.k8s.io", "PriorityClass"),
        ("node.k8s.io", "RuntimeClass"),
        ("networking.k8s.io", "IngressClass"),
        ("policy", "PodSecurityPolicy"),
        ("certificates.k8s.io", "CertificateSigningRequest"),
        ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
        ("authentication.k8s.io", "TokenReview"),
        ("authorization.k8s.io", "SubjectAccessReview"),
        ("authorization.k8s.io", "SelfSubjectAccessReview"),
        ("authorization.k8s.io", "SelfSubjectRulesReview"),
    ];
    if group.is_empty() {
        CORE.contains(&kind)
    } else {
        GROUPED.contains(&(group, kind))
    }
}
