//! `metadata` as the API server checks ObjectMeta: known fields, a DNS-1123 name and namespace,
//! string labels and annotations, valid label values.

use serde_json::Value;

use super::values::scalar_text;
use super::{FieldPath, Step, Violation};

/// ObjectMeta fields (k8s.io/apimachinery v1).
const OBJECT_META: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// Whether `s` is a DNS-1123 subdomain (object names) or label (namespaces).
pub fn is_dns1123(s: &str, subdomain: bool) -> bool {
    let max = if subdomain { 253 } else { 63 };
    let label = |l: &str| {
        !l.is_empty()
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    !s.is_empty()
        && s.len() <= max
        && if subdomain {
            s.split('.').all(label)
        } else {
            label(s) && !s.contains('.')
        }
}

pub(super) fn metadata(meta: Option<&Value>, out: &mut Vec<Violation>) {
    let at = |k: &str| FieldPath(vec![Step::Key("metadata".into()), Step::Key(k.into())]);
    let Some(meta) = meta.and_then(Value::as_object) else {
        out.push(Violation {
            path: FieldPath::default(),
            message: "metadata.name: Required value".into(),
            value: None,
        });
        return;
    };
    for key in meta.keys().filter(|k| !OBJECT_META.contains(&k.as_str())) {
        let hint = crate::suggest::hint(key, OBJECT_META.iter().copied());
        out.push(Violation {
            path: at(key),
            message: format!(
                "unknown field `{key}` in metadata: the API server refuses it (field not declared in schema).{hint}"
            ),
            value: None,
        });
    }
    match meta.get("name").and_then(Value::as_str) {
        None | Some("") => out.push(Violation {
            path: FieldPath(vec![Step::Key("metadata".into())]),
            message: "metadata.name: Required value".into(),
            value: None,
        }),
        Some(name) if !is_dns1123(name, true) => out.push(Violation {
            path: at("name"),
            message: format!(
                "metadata.name: Invalid value: {name:?}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
            ),
            value: Some(name.to_string()),
        }),
        _ => {}
    }
    if let Some(ns) = meta.get("namespace").and_then(Value::as_str)
        && !is_dns1123(ns, false)
    {
        out.push(Violation {
            path: at("namespace"),
            message: format!(
                "metadata.namespace: Invalid value: {ns:?}: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
            ),
            value: Some(ns.to_string()),
        });
    }
    for field in ["labels", "annotations"] {
        let Some(map) = meta.get(field) else { continue };
        let Some(map) = map.as_object() else {
            out.push(Violation {
                path: at(field),
                message: format!("metadata.{field}: must be a map of strings"),
                value: None,
            });
            continue;
        };
        for (k, v) in map {
            let path = at(field).with(Step::Key(k.clone()));
            let Some(s) = v.as_str() else {
                out.push(Violation {
                    path,
                    message: format!("metadata.{field}.{k}: Invalid value: {v}: must be a string"),
                    value: scalar_text(v),
                });
                continue;
            };
            if field == "labels" && !is_label_value(s) {
                out.push(Violation {
                    path,
                    message: format!(
                        "metadata.labels.{k}: Invalid value: {s:?}: a valid label must be 63 characters or less and must be empty or begin and end with an alphanumeric character ([a-z0-9A-Z]) with dashes (-), underscores (_), dots (.), and alphanumerics between"
                    ),
                    value: Some(s.to_string()),
                });
            }
        }
    }
}

pub(super) fn is_label_value(s: &str) -> bool {
    let ok = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.';
    s.is_empty()
        || (s.len() <= 63
            && s.bytes().all(ok)
            && s.as_bytes()[0].is_ascii_alphanumeric()
            && s.as_bytes()[s.len() - 1].is_ascii_alphanumeric())
}
