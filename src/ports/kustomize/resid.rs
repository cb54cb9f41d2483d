//! The in-flight resource and its identity, as kustomize's resource and resid track them.

use camino::Utf8PathBuf;

use serde_json::Value;

/// kustomize's placeholder namespace of cluster-scoped objects.
pub const NOT_NAMESPACED: &str = "_non_namespaceable_";

/// A previous identity (kustomize's build annotations previousNames/Namespaces/Kinds):
/// the namespace is stored effective ("default" for none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrevId {
    pub kind: String,
    pub name: String,
    pub namespace: String,
}

/// A resource during a build: the object plus the bookkeeping kustomize keeps in build
/// annotations (previous ids, name prefixes and suffixes, generator state).
#[derive(Debug, Clone)]
pub struct Res {
    pub obj: Value,
    pub origin: Utf8PathBuf,
    pub patched_by: Vec<Utf8PathBuf>,
    /// Every id the object had before its current one, oldest first (kustomize's PrevIds).
    pub history: Vec<PrevId>,
    /// Name prefixes and suffixes applied, innermost first.
    pub prefixes: Vec<String>,
    pub suffixes: Vec<String>,
    /// Generated object whose name still needs kustomize's content-hash suffix.
    pub needs_hash: bool,
    /// Generator behavior (create, merge, replace) while it is being absorbed.
    pub behavior: Option<String>,
    /// Where the object holds nulls written without text, until a strategic merge patch
    /// drops them (see patch_smp::drop_empty_nulls).
    pub empty_nulls: Vec<crate::ports::yaml::JsonPath>,
}

impl Res {
    pub fn new(obj: Value, origin: Utf8PathBuf) -> Self {
        Res {
            obj,
            origin,
            patched_by: Vec::new(),
            history: Vec::new(),
            prefixes: Vec::new(),
            suffixes: Vec::new(),
            needs_hash: false,
            behavior: None,
            empty_nulls: Vec::new(),
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

    pub fn is_cluster_scoped(&self) -> bool {
        is_cluster_scoped(self.api_version(), self.kind())
    }

    /// kustomize's EffectiveNamespace of the current id.
    pub fn effective_namespace(&self) -> &str {
        effective_namespace(self.api_version(), self.kind(), self.namespace())
    }

    /// The id the object was loaded with (kustomize's OrgId).
    pub fn org_id(&self) -> PrevId {
        self.history
            .first()
            .cloned()
            .unwrap_or_else(|| self.cur_id())
    }

    pub fn cur_id(&self) -> PrevId {
        PrevId {
            kind: self.kind().to_string(),
            name: self.name().to_string(),
            namespace: self.effective_namespace().to_string(),
        }
    }

    /// Records the current id as a previous one (kustomize's StorePreviousId).
    pub fn store_previous_id(&mut self) {
        let id = self.cur_id();
        self.history.push(id);
    }

    /// Sets the name and/or namespace (the caller records the previous id).
    pub fn set_id(&mut self, namespace: Option<&str>, name: Option<&str>) {
        let meta = metadata_mut(&mut self.obj);
        if let Some(ns) = namespace {
            meta.insert("namespace".into(), Value::String(ns.into()));
        }
        if let Some(n) = name {
            meta.insert("name".into(), Value::String(n.into()));
        }
    }

    /// Whether `id` (effective namespace) is the current id or a previous one (kustomize's
    /// GetMatchingResourcesByAnyId with ResId.Equals; group and version are the current).
    pub fn matches_any_id(&self, kind: &str, name: &str, effective_ns: &str) -> bool {
        let cur = self.cur_id();
        std::iter::once(&cur)
            .chain(&self.history)
            .any(|id| id.kind == kind && id.name == name && id.namespace == effective_ns)
    }

    pub fn labels(&self) -> Option<&serde_json::Map<String, Value>> {
        self.obj.get("metadata")?.get("labels")?.as_object()
    }

    pub fn annotations(&self) -> Option<&serde_json::Map<String, Value>> {
        self.obj.get("metadata")?.get("annotations")?.as_object()
    }

    /// kustomize's id string, used in messages.
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

    /// Identity for duplicate detection (kustomize's CurId().Equals).
    pub fn id_key(&self) -> (String, String, String, String) {
        (
            self.api_version().into(),
            self.kind().into(),
            self.effective_namespace().into(),
            self.name().into(),
        )
    }
}

/// kyaml's ParseGroupVersion: split at the first `/`.
pub fn split_api_version(av: &str) -> (&str, &str) {
    match av.split_once('/') {
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

/// Types kustomize knows to be cluster-scoped: exactly the cluster-scoped entries of its
/// built-in OpenAPI data (kyaml openapi precomputedIsNamespaceScoped, Kubernetes 1.21.2).
/// Anything else, custom resources and newer built-in kinds included, is namespaced there.
const CLUSTER_SCOPED: &[(&str, &str)] = &[
    (
        "admissionregistration.k8s.io/v1",
        "MutatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io/v1",
        "ValidatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io/v1beta1",
        "MutatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io/v1beta1",
        "ValidatingWebhookConfiguration",
    ),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ("apiextensions.k8s.io/v1beta1", "CustomResourceDefinition"),
    ("apiregistration.k8s.io/v1", "APIService"),
    ("apiregistration.k8s.io/v1beta1", "APIService"),
    ("certificates.k8s.io/v1", "CertificateSigningRequest"),
    ("certificates.k8s.io/v1beta1", "CertificateSigningRequest"),
    ("flowcontrol.apiserver.k8s.io/v1beta1", "FlowSchema"),
    (
        "flowcontrol.apiserver.k8s.io/v1beta1",
        "PriorityLevelConfiguration",
    ),
    ("networking.k8s.io/v1", "IngressClass"),
    ("networking.k8s.io/v1beta1", "IngressClass"),
    ("node.k8s.io/v1", "RuntimeClass"),
    ("node.k8s.io/v1beta1", "RuntimeClass"),
    ("policy/v1beta1", "PodSecurityPolicy"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("rbac.authorization.k8s.io/v1beta1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1beta1", "ClusterRoleBinding"),
    ("scheduling.k8s.io/v1", "PriorityClass"),
    ("scheduling.k8s.io/v1beta1", "PriorityClass"),
    ("storage.k8s.io/v1", "CSIDriver"),
    ("storage.k8s.io/v1", "CSINode"),
    ("storage.k8s.io/v1", "StorageClass"),
    ("storage.k8s.io/v1", "VolumeAttachment"),
    ("storage.k8s.io/v1beta1", "CSIDriver"),
    ("storage.k8s.io/v1beta1", "CSINode"),
    ("storage.k8s.io/v1beta1", "StorageClass"),
    ("storage.k8s.io/v1beta1", "VolumeAttachment"),
    ("v1", "ComponentStatus"),
    ("v1", "Namespace"),
    ("v1", "Node"),
    ("v1", "NodeProxyOptions"),
    ("v1", "PersistentVolume"),
];

pub fn is_cluster_scoped(api_version: &str, kind: &str) -> bool {
    // Most objects are of a kind the table does not hold at all.
    let candidate = matches!(
        kind.as_bytes().first(),
        Some(b'A' | b'C' | b'F' | b'I' | b'M' | b'N' | b'P' | b'R' | b'S' | b'V')
    );
    candidate
        && CLUSTER_SCOPED
            .iter()
            .any(|&(av, k)| k == kind && av == api_version)
}

/// kustomize's ResId.EffectiveNamespace.
pub fn effective_namespace<'a>(api_version: &str, kind: &str, ns: &'a str) -> &'a str {
    if is_cluster_scoped(api_version, kind) {
        NOT_NAMESPACED
    } else if ns.is_empty() {
        "default"
    } else {
        ns
    }
}
