//! Validation of Flux objects against the Flux CRDs vendored in `schemas/flux` (embedded), the
//! way the API server validates a custom resource that kustomize-controller applies with
//! server-side apply: a field the schema does not declare is refused ("field not declared in
//! schema"), null values of non-nullable fields are dropped first, then types, required fields,
//! enums, patterns (durations), formats, lengths, bounds and the CRDs' CEL rules are checked.
//! `status` is not validated (the API server ignores it on apply), and `metadata` is checked as
//! ObjectMeta: known fields, a DNS-1123 name and namespace, valid label values.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use super::cel;

/// The vendored CRDs (see schemas/flux/README.md for their sources).
const CRDS: &[(&str, &str)] = &[
    (
        "helm.toolkit.fluxcd.io_helmreleases.yaml",
        include_str!("../../schemas/flux/helm.toolkit.fluxcd.io_helmreleases.yaml"),
    ),
    (
        "kustomize.toolkit.fluxcd.io_kustomizations.yaml",
        include_str!("../../schemas/flux/kustomize.toolkit.fluxcd.io_kustomizations.yaml"),
    ),
    (
        "source.toolkit.fluxcd.io_gitrepositories.yaml",
        include_str!("../../schemas/flux/source.toolkit.fluxcd.io_gitrepositories.yaml"),
    ),
    (
        "source.toolkit.fluxcd.io_helmrepositories.yaml",
        include_str!("../../schemas/flux/source.toolkit.fluxcd.io_helmrepositories.yaml"),
    ),
    (
        "source.toolkit.fluxcd.io_ocirepositories.yaml",
        include_str!("../../schemas/flux/source.toolkit.fluxcd.io_ocirepositories.yaml"),
    ),
];

/// Schema keywords this validator knows. Loading fails on any other, so a refreshed CRD that
/// uses a new keyword cannot be half-checked without notice.
const KEYWORDS: &[&str] = &[
    "type",
    "description",
    "properties",
    "required",
    "items",
    "additionalProperties",
    "enum",
    "pattern",
    "format",
    "default",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "nullable",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-int-or-string",
    "x-kubernetes-validations",
    "x-kubernetes-map-type",
];

/// One step of a path into an object.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// A field path, shown the way the API server does (`spec.chart.spec.version`, `dependsOn[0]`).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct FieldPath(pub Vec<Step>);

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("<root>");
        }
        for (i, step) in self.0.iter().enumerate() {
            match step {
                Step::Key(k) if i == 0 => write!(f, "{k}")?,
                Step::Key(k) => write!(f, ".{k}")?,
                Step::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

impl FieldPath {
    fn with(&self, step: Step) -> FieldPath {
        let mut p = self.clone();
        p.0.push(step);
        p
    }
}

/// Something the API server would refuse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where: the offending field, or for a missing one its parent.
    pub path: FieldPath,
    pub message: String,
    /// Text of the offending scalar, to find the line it was written on.
    pub value: Option<String>,
}

#[derive(Debug)]
struct Schema {
    types: Option<String>,
    nullable: bool,
    int_or_string: bool,
    preserve_unknown: bool,
    properties: BTreeMap<String, Schema>,
    /// `additionalProperties`: a schema for map values.
    additional: Option<Box<Schema>>,
    required: Vec<String>,
    items: Option<Box<Schema>>,
    enumeration: Vec<Value>,
    pattern: Option<(String, Regex)>,
    format: Option<String>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    minimum: Option<(f64, bool)>,
    maximum: Option<(f64, bool)>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    min_properties: Option<u64>,
    max_properties: Option<u64>,
    rules: Vec<(Result<cel::Expr, String>, String, String)>,
}

fn compile(v: &Value, at: &str) -> Result<Schema, String> {
    let Some(map) = v.as_object() else {
        return Err(format!("{at}: a schema is not a mapping"));
    };
    if let Some(k) = map.keys().find(|k| !KEYWORDS.contains(&k.as_str())) {
        return Err(format!(
            "{at}: schema keyword `{k}` is not supported by cellgen's validator"
        ));
    }
    let u = |k: &str| map.get(k).and_then(Value::as_u64);
    let bound = |k: &str, exclusive: &str| {
        map.get(k)
            .and_then(Value::as_f64)
            .map(|n| (n, map.get(exclusive) == Some(&Value::Bool(true))))
    };
    let mut properties = BTreeMap::new();
    for (name, sub) in map
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        properties.insert(name.clone(), compile(sub, &format!("{at}.{name}"))?);
    }
    let additional = match map.get("additionalProperties") {
        Some(Value::Object(_)) => Some(Box::new(compile(
            &map["additionalProperties"],
            &format!("{at}.*"),
        )?)),
        Some(Value::Bool(true)) => Some(Box::new(compile(
            &serde_json::json!({"x-kubernetes-preserve-unknown-fields": true}),
            at,
        )?)),
        _ => None,
    };
    let items = match map.get("items") {
        Some(items) => Some(Box::new(compile(items, &format!("{at}[]"))?)),
        None => None,
    };
    let pattern = match map.get("pattern").and_then(Value::as_str) {
        Some(p) => Some((
            p.to_string(),
            Regex::new(p).map_err(|e| format!("{at}: pattern {p}: {e}"))?,
        )),
        None => None,
    };
    let rules = map
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|r| {
            let rule = r.get("rule").and_then(Value::as_str).unwrap_or("");
            let message = r
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| format!("failed rule: {rule}"), str::to_string);
            (cel::parse(rule), rule.to_string(), message)
        })
        .collect();
    Ok(Schema {
        types: map.get("type").and_then(Value::as_str).map(String::from),
        nullable: map.get("nullable") == Some(&Value::Bool(true)),
        int_or_string: map.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)),
        preserve_unknown: map.get("x-kubernetes-preserve-unknown-fields")
            == Some(&Value::Bool(true)),
        properties,
        additional,
        required: map
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect(),
        items,
        enumeration: map
            .get("enum")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        pattern,
        format: map.get("format").and_then(Value::as_str).map(String::from),
        min_length: u("minLength"),
        max_length: u("maxLength"),
        minimum: bound("minimum", "exclusiveMinimum"),
        maximum: bound("maximum", "exclusiveMaximum"),
        min_items: u("minItems"),
        max_items: u("maxItems"),
        min_properties: u("minProperties"),
        max_properties: u("maxProperties"),
        rules,
    })
}

/// The served versions of one CRD.
struct Crd {
    file: &'static str,
    versions: BTreeMap<String, Schema>,
}

/// The Flux CRDs, by (group, kind).
pub struct Schemas {
    crds: BTreeMap<(String, String), Crd>,
}

impl Schemas {
    /// The embedded CRDs, parsed once per process.
    pub fn embedded() -> &'static Schemas {
        static SCHEMAS: OnceLock<Schemas> = OnceLock::new();
        SCHEMAS.get_or_init(|| Schemas::load().expect("the embedded Flux CRDs load (unit-tested)"))
    }

    fn load() -> Result<Schemas, String> {
        let mut crds = BTreeMap::new();
        for (file, text) in CRDS {
            let crd: Value = yaml_serde::from_str(text).map_err(|e| format!("{file}: {e}"))?;
            let group = crd
                .pointer("/spec/group")
                .and_then(Value::as_str)
                .ok_or(format!("{file}: no spec.group"))?;
            let kind = crd
                .pointer("/spec/names/kind")
                .and_then(Value::as_str)
                .ok_or(format!("{file}: no spec.names.kind"))?;
            let mut versions = BTreeMap::new();
            for version in crd
                .pointer("/spec/versions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if version.get("served") != Some(&Value::Bool(true)) {
                    continue;
                }
                let name = version["name"].as_str().unwrap_or_default();
                let schema = version
                    .pointer("/schema/openAPIV3Schema")
                    .ok_or(format!("{file}: {name} has no schema"))?;
                versions.insert(
                    name.to_string(),
                    compile(schema, &format!("{file} {name}"))?,
                );
            }
            crds.insert(
                (group.to_string(), kind.to_string()),
                Crd { file, versions },
            );
        }
        Ok(Schemas { crds })
    }

    /// Whether the CRDs define this API group.
    pub fn knows_group(&self, group: &str) -> bool {
        self.crds.keys().any(|(g, _)| g == group)
    }

    /// The problems of `object`, or `None` when no vendored CRD defines its group and kind.
    pub fn validate(&self, object: &Value) -> Option<Vec<Violation>> {
        let api_version = object.get("apiVersion").and_then(Value::as_str)?;
        let kind = object.get("kind").and_then(Value::as_str)?;
        let (group, version) = api_version.split_once('/')?;
        let crd = self.crds.get(&(group.to_string(), kind.to_string()))?;
        let Some(schema) = crd.versions.get(version) else {
            let served: Vec<String> = crd
                .versions
                .keys()
                .map(|v| format!("{group}/{v}"))
                .collect();
            return Some(vec![Violation {
                path: FieldPath(vec![Step::Key("apiVersion".into())]),
                message: format!(
                    "{kind} {api_version} is not served by the Flux CRDs (schemas/flux/{}); served: {}",
                    crd.file,
                    served.join(", ")
                ),
                value: Some(version.to_string()),
            }]);
        };
        let mut out = Vec::new();
        let root = FieldPath::default();
        metadata(object.get("metadata"), &mut out);
        // `metadata` is ObjectMeta (checked above) and `status` is not written on apply.
        let Some(map) = object.as_object() else {
            return Some(out);
        };
        for (key, value) in map {
            if key == "metadata" || key == "status" || value.is_null() {
                continue;
            }
            let path = root.with(Step::Key(key.clone()));
            match schema.properties.get(key) {
                Some(sub) => check(sub, value, &path, &mut out),
                None => out.push(unknown(schema, key, &root)),
            }
        }
        required(schema, map, &root, &mut out);
        Some(out)
    }
}

fn unknown(schema: &Schema, key: &str, parent: &FieldPath) -> Violation {
    let hint = crate::suggest::hint(key, schema.properties.keys().map(String::as_str));
    Violation {
        path: parent.with(Step::Key(key.to_string())),
        message: format!(
            "unknown field `{key}`{}: the API server refuses it (field not declared in schema).{hint}",
            if parent.0.is_empty() {
                String::new()
            } else {
                format!(" in {parent}")
            }
        ),
        value: None,
    }
}

fn required(
    schema: &Schema,
    map: &serde_json::Map<String, Value>,
    path: &FieldPath,
    out: &mut Vec<Violation>,
) {
    for name in &schema.required {
        // A null counts as absent unless the field is nullable.
        let nullable = schema.properties.get(name).is_some_and(|p| p.nullable);
        if map.get(name).is_none_or(|v| v.is_null() && !nullable) {
            out.push(Violation {
                path: path.clone(),
                message: format!("{}: Required value", path.with(Step::Key(name.clone()))),
                value: None,
            });
        }
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn check(schema: &Schema, value: &Value, path: &FieldPath, out: &mut Vec<Violation>) {
    let fail = |out: &mut Vec<Violation>, message: String| {
        out.push(Violation {
            path: path.clone(),
            message,
            value: scalar_text(value),
        });
    };
    if value.is_null() {
        // Non-nullable nulls are pruned before validation: the field counts as absent.
        return;
    }
    let actual = type_name(value);
    let type_ok = if schema.int_or_string {
        matches!(actual, "integer" | "string")
    } else {
        match schema.types.as_deref() {
            None => true,
            Some("number") => matches!(actual, "integer" | "number"),
            Some(t) => t == actual,
        }
    };
    if !type_ok {
        let want = if schema.int_or_string {
            "integer or string"
        } else {
            schema.types.as_deref().unwrap_or("")
        };
        fail(
            out,
            format!("{path}: Invalid value: {actual} {value}: must be of type {want}"),
        );
        return;
    }
    if !schema.enumeration.is_empty() && !schema.enumeration.contains(value) {
        let supported: Vec<String> = schema.enumeration.iter().map(Value::to_string).collect();
        let hint = value.as_str().map_or_else(String::new, |s| {
            crate::suggest::hint(s, schema.enumeration.iter().filter_map(Value::as_str))
        });
        fail(
            out,
            format!(
                "{path}: Unsupported value: {value}: supported values: {}.{hint}",
                supported.join(", ")
            ),
        );
    }
    match value {
        Value::String(s) => string(schema, s, path, out, fail),
        Value::Number(n) => number(schema, n, path, out, fail),
        Value::Array(items) => {
            let n = items.len() as u64;
            if let Some(min) = schema.min_items.filter(|m| n < *m) {
                fail(out, format!("{path}: must have at least {min} items"));
            }
            if let Some(max) = schema.max_items.filter(|m| n > *m) {
                fail(out, format!("{path}: must have at most {max} items"));
            }
            if let Some(item) = &schema.items {
                for (i, v) in items.iter().enumerate() {
                    check(item, v, &path.with(Step::Index(i)), out);
                }
            }
        }
        Value::Object(map) => {
            let present = map.values().filter(|v| !v.is_null()).count() as u64;
            if let Some(min) = schema.min_properties.filter(|m| present < *m) {
                fail(out, format!("{path}: must have at least {min} properties"));
            }
            if let Some(max) = schema.max_properties.filter(|m| present > *m) {
                fail(out, format!("{path}: must have at most {max} properties"));
            }
            for (key, v) in map {
                let sub = schema.properties.get(key).or(schema.additional.as_deref());
                match sub {
                    Some(sub) => check(sub, v, &path.with(Step::Key(key.clone())), out),
                    None if schema.preserve_unknown => {}
                    None => out.push(unknown(schema, key, path)),
                }
            }
            required(schema, map, path, out);
        }
        _ => {}
    }
    for (rule, source, message) in &schema.rules {
        match rule.as_ref().map(|e| cel::eval(e, value)) {
            Ok(Ok(true)) => {}
            Ok(Ok(false)) => fail(out, format!("{path}: Invalid value: {message}")),
            Ok(Err(e)) => fail(out, format!("{path}: rule `{source}` fails: {e}")),
            Err(e) => fail(
                out,
                format!("{path}: cellgen cannot evaluate the CRD rule `{source}` ({e})"),
            ),
        }
    }
}

fn string(
    schema: &Schema,
    s: &str,
    path: &FieldPath,
    out: &mut Vec<Violation>,
    fail: impl Fn(&mut Vec<Violation>, String),
) {
    let chars = s.chars().count() as u64;
    if let Some(min) = schema.min_length.filter(|m| chars < *m) {
        fail(
            out,
            format!("{path}: Invalid value: {s:?}: must be at least {min} characters long"),
        );
    }
    if let Some(max) = schema.max_length.filter(|m| chars > *m) {
        fail(
            out,
            format!("{path}: Too long: may not be more than {max} characters"),
        );
    }
    if let Some((source, re)) = &schema.pattern
        && !re.is_match(s)
    {
        let what = if source.contains("(ms|s|m") {
            " (a Go duration: a number and a unit ms, s, m or h, e.g. `10m` or `1h30m`)"
        } else {
            ""
        };
        fail(
            out,
            format!("{path}: Invalid value: {s:?}: should match '{source}'{what}"),
        );
    }
    if schema.format.as_deref() == Some("date-time") && !is_rfc3339(s) {
        fail(
            out,
            format!("{path}: Invalid value: {s:?}: must be an RFC 3339 date-time"),
        );
    }
}

fn number(
    schema: &Schema,
    n: &serde_json::Number,
    path: &FieldPath,
    out: &mut Vec<Violation>,
    fail: impl Fn(&mut Vec<Violation>, String),
) {
    let f = n.as_f64().unwrap_or(0.0);
    if let Some((min, exclusive)) = schema.minimum
        && (f < min || (exclusive && f == min))
    {
        fail(
            out,
            format!(
                "{path}: Invalid value: {n}: must be greater than {}{min}",
                if exclusive { "" } else { "or equal to " }
            ),
        );
    }
    if let Some((max, exclusive)) = schema.maximum
        && (f > max || (exclusive && f == max))
    {
        fail(
            out,
            format!(
                "{path}: Invalid value: {n}: must be less than {}{max}",
                if exclusive { "" } else { "or equal to " }
            ),
        );
    }
    let range = match schema.format.as_deref() {
        Some("int32") => Some((i64::from(i32::MIN), i64::from(i32::MAX))),
        Some("int64") => Some((i64::MIN, i64::MAX)),
        _ => None,
    };
    if let Some((lo, hi)) = range
        && n.as_i64().is_none_or(|i| i < lo || i > hi)
    {
        fail(
            out,
            format!(
                "{path}: Invalid value: {n}: must be a {} integer",
                schema.format.as_deref().unwrap_or_default()
            ),
        );
    }
}

fn is_rfc3339(s: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
            .expect("a valid regex")
    })
    .is_match(s)
}

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

fn metadata(meta: Option<&Value>, out: &mut Vec<Violation>) {
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

fn is_label_value(s: &str) -> bool {
    let ok = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.';
    s.is_empty()
        || (s.len() <= 63
            && s.bytes().all(ok)
            && s.as_bytes()[0].is_ascii_alphanumeric()
            && s.as_bytes()[s.len() - 1].is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(object: Value) -> Vec<String> {
        Schemas::embedded()
            .validate(&object)
            .expect("a Flux object")
            .into_iter()
            .map(|v| format!("{} | {}", v.path, v.message))
            .collect()
    }

    fn kustomization(spec: Value) -> Value {
        json!({
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
            "kind": "Kustomization",
            "metadata": {"name": "apps", "namespace": "flux-system"},
            "spec": spec,
        })
    }

    #[test]
    fn every_vendored_crd_loads_and_every_rule_parses() {
        let schemas = Schemas::load().unwrap();
        assert_eq!(schemas.crds.len(), 5);
        fn rules(s: &Schema, n: &mut usize) {
            for (rule, source, _) in &s.rules {
                assert!(rule.is_ok(), "{source}: {rule:?}");
                *n += 1;
            }
            for sub in s.properties.values() {
                rules(sub, n);
            }
            for sub in s.items.iter().chain(&s.additional) {
                rules(sub, n);
            }
        }
        let mut n = 0;
        for crd in schemas.crds.values() {
            for v in crd.versions.values() {
                rules(v, &mut n);
            }
        }
        assert!(n >= 5, "{n} rules");
    }

    #[test]
    fn a_valid_kustomization_passes() {
        let ok = kustomization(json!({
            "interval": "10m", "prune": true, "path": "./apps",
            "sourceRef": {"kind": "GitRepository", "name": "flux-system"},
            "postBuild": {"substituteFrom": [{"kind": "ConfigMap", "name": "cell-metadata"}]},
        }));
        assert_eq!(messages(ok), Vec::<String>::new());
    }

    #[test]
    fn what_the_api_server_refuses() {
        let bad = kustomization(json!({
            "interval": "10minutes", "path": "./apps", "wait": "yes",
            "sourceRef": {"kind": "GitRepo", "name": "flux-system"},
            "patchs": [],
            "postBuild": {"substituteFrom": [{"kind": "ConfigMap", "name": ""}], "substitute": null},
        }));
        let got = messages(bad);
        let has = |needle: &str| got.iter().any(|m| m.contains(needle));
        assert!(
            has("spec.interval | spec.interval: Invalid value: \"10minutes\""),
            "{got:#?}"
        );
        assert!(has("spec | spec.prune: Required value"), "{got:#?}");
        assert!(has("must be of type boolean"), "{got:#?}");
        assert!(has("Unsupported value: \"GitRepo\""), "{got:#?}");
        assert!(
            has("unknown field `patchs`") && has("Did you mean `patches`?"),
            "{got:#?}"
        );
        assert!(
            has("spec.postBuild.substituteFrom[0].name: Invalid value: \"\""),
            "{got:#?}"
        );
        assert_eq!(got.len(), 6, "{got:#?}");
    }

    #[test]
    fn cel_rules_and_metadata() {
        let hr = json!({
            "apiVersion": "helm.toolkit.fluxcd.io/v2",
            "kind": "HelmRelease",
            "metadata": {"name": "Bad_Name", "namespace": "kube-system", "lables": {}},
            "spec": {"interval": "1h", "values": {"anything": {"goes": 1}}},
        });
        let got = messages(hr);
        assert!(
            got.iter()
                .any(|m| m.contains("either chart or chartRef must be set")),
            "{got:#?}"
        );
        assert!(
            got.iter()
                .any(|m| m.contains("metadata.name: Invalid value")),
            "{got:#?}"
        );
        assert!(
            got.iter()
                .any(|m| m.contains("unknown field `lables`") && m.contains("`labels`")),
            "{got:#?}"
        );
        assert_eq!(got.len(), 3, "{got:#?}");
    }

    #[test]
    fn unserved_versions_and_other_groups() {
        let old = json!({"apiVersion": "helm.toolkit.fluxcd.io/v2beta1", "kind": "HelmRelease", "metadata": {"name": "x"}});
        let got = messages(old);
        assert!(
            got[0].contains("served: helm.toolkit.fluxcd.io/v2"),
            "{got:?}"
        );
        let other = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}});
        assert!(Schemas::embedded().validate(&other).is_none());
        assert!(Schemas::embedded().knows_group("source.toolkit.fluxcd.io"));
    }

    #[test]
    fn names_and_labels() {
        assert!(is_dns1123("a.b-c", true) && !is_dns1123("a.b-c", false));
        assert!(!is_dns1123("-a", true) && !is_dns1123("", true) && !is_dns1123("A", true));
        assert!(is_label_value("") && is_label_value("a.b_c-1") && !is_label_value("-a"));
        assert!(!is_label_value(&"a".repeat(64)));
    }
}
