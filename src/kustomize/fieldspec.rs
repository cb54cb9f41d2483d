//! kustomize "field specs": which fields of which kinds a transformer touches.
//! Paths are `/`-separated; sequences on the way are traversed element-wise.

use serde_json::{Map, Value};

use super::resid::Res;

/// A field of the kinds selected by `group`/`version`/`kind` ("" = any).
#[derive(Debug, Clone, Copy)]
pub struct FieldSpec {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub path: &'static str,
    /// Create the field (and missing parents) when absent.
    pub create: bool,
}

impl FieldSpec {
    pub const fn new(kind: &'static str, path: &'static str, create: bool) -> Self {
        FieldSpec {
            group: "",
            version: "",
            kind,
            path,
            create,
        }
    }

    pub const fn grouped(
        group: &'static str,
        kind: &'static str,
        path: &'static str,
        create: bool,
    ) -> Self {
        FieldSpec {
            group,
            version: "",
            kind,
            path,
            create,
        }
    }

    pub const fn versioned(
        version: &'static str,
        kind: &'static str,
        path: &'static str,
        create: bool,
    ) -> Self {
        FieldSpec {
            group: "",
            version,
            kind,
            path,
            create,
        }
    }

    pub fn applies_to(&self, r: &Res) -> bool {
        (self.kind.is_empty() || self.kind == r.kind())
            && (self.group.is_empty() || self.group == r.group())
            && (self.version.is_empty() || self.version == r.version())
    }

    /// Calls `f(parent, key)` for every place the spec's final field lives.
    pub fn visit(&self, obj: &mut Value, f: &mut dyn FnMut(&mut Map<String, Value>, &str)) {
        visit_path(obj, self.path, self.create, f);
    }
}

/// Calls `f(parent, key)` for every place the field at `path` lives.
pub fn visit_path(
    obj: &mut Value,
    path: &str,
    create: bool,
    f: &mut dyn FnMut(&mut Map<String, Value>, &str),
) {
    // A `[]` segment names a list; lists are never created, only walked.
    let segs: Vec<(&str, bool)> = path
        .split('/')
        .map(|s| match s.strip_suffix("[]") {
            Some(name) => (name, true),
            None => (s, false),
        })
        .collect();
    walk(obj, &segs, create, f);
}

fn walk(
    v: &mut Value,
    segs: &[(&str, bool)],
    create: bool,
    f: &mut dyn FnMut(&mut Map<String, Value>, &str),
) {
    match v {
        Value::Array(items) => {
            for item in items {
                walk(item, segs, create, f);
            }
        }
        Value::Object(map) => {
            let Some((&(first, is_list), rest)) = segs.split_first() else {
                return;
            };
            if rest.is_empty() {
                f(map, first);
                return;
            }
            let missing = map.get(first).is_none_or(Value::is_null);
            if missing {
                if !create || is_list {
                    return;
                }
                map.insert(first.to_string(), Value::Object(Map::new()));
            }
            if let Some(next) = map.get_mut(first) {
                walk(next, rest, create, f);
            }
        }
        _ => {}
    }
}

/// Adds `pairs` to the map at each spec'd field (creating it when allowed).
pub fn add_pairs(r: &mut Res, specs: &[FieldSpec], pairs: &[(String, String)]) {
    let applicable: Vec<&FieldSpec> = specs.iter().filter(|s| s.applies_to(r)).collect();
    for spec in applicable {
        spec.visit(&mut r.obj, &mut |parent, key| {
            let present = parent.get(key).is_some_and(|v| !v.is_null());
            if !present && !spec.create {
                return;
            }
            let entry = parent
                .entry(key.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if !entry.is_object() {
                *entry = Value::Object(Map::new());
            }
            if let Value::Object(m) = entry {
                for (k, v) in pairs {
                    m.insert(k.clone(), Value::String(v.clone()));
                }
            }
        });
    }
}

const WORKLOADS_APPS: [&str; 4] = ["Deployment", "ReplicaSet", "DaemonSet", "StatefulSet"];

/// Template labels (labels.includeTemplates, and part of commonLabels).
pub fn template_labels() -> Vec<FieldSpec> {
    let mut v = vec![FieldSpec::versioned(
        "v1",
        "ReplicationController",
        "spec/template/metadata/labels",
        true,
    )];
    for k in WORKLOADS_APPS {
        v.push(FieldSpec::new(k, "spec/template/metadata/labels", true));
    }
    v.push(FieldSpec::grouped(
        "apps",
        "StatefulSet",
        "spec/volumeClaimTemplates[]/metadata/labels",
        true,
    ));
    v.push(FieldSpec::grouped(
        "batch",
        "Job",
        "spec/template/metadata/labels",
        true,
    ));
    v.push(FieldSpec::grouped(
        "batch",
        "CronJob",
        "spec/jobTemplate/metadata/labels",
        true,
    ));
    v.push(FieldSpec::grouped(
        "batch",
        "CronJob",
        "spec/jobTemplate/spec/template/metadata/labels",
        true,
    ));
    v
}

pub fn metadata_labels() -> Vec<FieldSpec> {
    vec![FieldSpec::new("", "metadata/labels", true)]
}

/// commonLabels / labels.includeSelectors: metadata, templates and selectors.
pub fn common_labels() -> Vec<FieldSpec> {
    let mut v = metadata_labels();
    v.extend(template_labels());
    v.push(FieldSpec::versioned("v1", "Service", "spec/selector", true));
    v.push(FieldSpec::versioned(
        "v1",
        "ReplicationController",
        "spec/selector",
        true,
    ));
    for k in ["Deployment", "ReplicaSet", "DaemonSet"] {
        v.push(FieldSpec::new(k, "spec/selector/matchLabels", true));
    }
    v.push(FieldSpec::grouped(
        "apps",
        "StatefulSet",
        "spec/selector/matchLabels",
        true,
    ));
    const AFFINITY: [&str; 5] = [
        "spec/template/spec/affinity/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels",
        "spec/template/spec/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels",
        "spec/template/spec/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels",
        "spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels",
        "spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels",
    ];
    for k in ["Deployment", "StatefulSet"] {
        for p in AFFINITY {
            v.push(FieldSpec::grouped("apps", k, p, false));
        }
    }
    v.push(FieldSpec::grouped(
        "batch",
        "Job",
        "spec/selector/matchLabels",
        false,
    ));
    v.push(FieldSpec::grouped(
        "batch",
        "CronJob",
        "spec/jobTemplate/spec/selector/matchLabels",
        false,
    ));
    v.push(FieldSpec::grouped(
        "policy",
        "PodDisruptionBudget",
        "spec/selector/matchLabels",
        false,
    ));
    for p in [
        "spec/podSelector/matchLabels",
        "spec/ingress/from/podSelector/matchLabels",
        "spec/egress/to/podSelector/matchLabels",
    ] {
        v.push(FieldSpec::grouped(
            "networking.k8s.io",
            "NetworkPolicy",
            p,
            false,
        ));
    }
    v
}

/// commonAnnotations: metadata and pod templates.
pub fn common_annotations() -> Vec<FieldSpec> {
    let mut v = vec![
        FieldSpec::new("", "metadata/annotations", true),
        FieldSpec::versioned(
            "v1",
            "ReplicationController",
            "spec/template/metadata/annotations",
            true,
        ),
    ];
    for k in WORKLOADS_APPS {
        v.push(FieldSpec::new(
            k,
            "spec/template/metadata/annotations",
            true,
        ));
    }
    v.push(FieldSpec::grouped(
        "batch",
        "Job",
        "spec/template/metadata/annotations",
        true,
    ));
    v.push(FieldSpec::grouped(
        "batch",
        "CronJob",
        "spec/jobTemplate/metadata/annotations",
        true,
    ));
    v.push(FieldSpec::grouped(
        "batch",
        "CronJob",
        "spec/jobTemplate/spec/template/metadata/annotations",
        true,
    ));
    v
}
