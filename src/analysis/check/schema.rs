//! Validation of Flux objects against the Flux CRDs vendored in `schemas/flux` (embedded), the
//! way the API server validates a custom resource that kustomize-controller applies with
//! server-side apply: a field the schema does not declare is refused ("field not declared in
//! schema"), null values of non-nullable fields are dropped first, then types, required fields,
//! enums, patterns (durations), formats, lengths, bounds and the CRDs' CEL rules are checked.
//! `status` is not validated (the API server ignores it on apply), and `metadata` is checked as
//! ObjectMeta: known fields, a DNS-1123 name and namespace, valid label values.

mod meta;
#[cfg(test)]
mod tests;
mod values;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use regex::Regex;
use serde_json::Value;

use super::cel;
use crate::analysis::locate::{FieldPath, Step};
pub use meta::is_dns1123;
use meta::metadata;
use values::{check, required, unknown};

/// The vendored CRDs (see schemas/flux/README.md for their sources), by file name.
const CRDS: &[&str] = &[
    "helm.toolkit.fluxcd.io_helmreleases.yaml",
    "kustomize.toolkit.fluxcd.io_kustomizations.yaml",
    "source.toolkit.fluxcd.io_gitrepositories.yaml",
    "source.toolkit.fluxcd.io_helmrepositories.yaml",
    "source.toolkit.fluxcd.io_ocirepositories.yaml",
];

/// The same CRDs as JSON (one object, file name to CRD), made from the YAML by build.rs.
const CRDS_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/flux_crds.json"));

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

/// The Flux CRDs, by (group, kind): compiled once per process, never changed after.
pub struct Schemas {
    crds: BTreeMap<(String, String), Crd>,
}

/// The results of one command's validations ([`Schemas::validate`]), owned by its file store's
/// memos (`FileStore::memos`) and dropped with it.
#[derive(Default)]
pub struct Validations {
    /// Results by object: cells render most Flux objects alike (a layer's Kustomization, a
    /// HelmRepository), and a result depends on the object only.
    /// Keyed by whole objects: foldhash hashes them several times faster than SipHash.
    memo: Mutex<foldhash::HashMap<Value, Validated>>,
    /// Results by shared object (a substitution result every cell whose variables answer alike
    /// holds, see `substitute::Prepared`): found by address, without hashing the object. The
    /// entry holds the object, so no other object can have its address while it is kept.
    shared: Mutex<foldhash::HashMap<usize, (Arc<Value>, Validated)>>,
}

/// A validation's answer: the violations, or `None` when no vendored CRD defines the object.
type Validated = Option<Vec<Violation>>;

/// Distinct objects whose results are kept; past this, new ones are validated every time.
const MEMO_ENTRIES: usize = 20_000;

impl Schemas {
    /// The embedded CRDs, parsed once per process.
    pub fn embedded() -> &'static Schemas {
        static SCHEMAS: OnceLock<Schemas> = OnceLock::new();
        SCHEMAS.get_or_init(|| Schemas::load().expect("the embedded Flux CRDs load (unit-tested)"))
    }

    fn load() -> Result<Schemas, String> {
        let mut all: serde_json::Map<String, Value> =
            serde_json::from_str(CRDS_JSON).map_err(|e| format!("flux_crds.json: {e}"))?;
        let mut crds = Vec::new();
        for &file in CRDS {
            let crd = all
                .remove(file)
                .ok_or(format!("{file}: not among the vendored CRDs"))?;
            crds.push((file, crd));
        }
        Schemas::compile_all(crds)
    }

    /// Validators for other CRDs than the embedded Flux ones (`(name, CRD)`, the name for
    /// messages): the tests check objects cellgen generates for other controllers this way.
    pub fn from_crds(crds: Vec<(&'static str, Value)>) -> Result<Schemas, String> {
        Schemas::compile_all(crds)
    }

    fn compile_all(files: Vec<(&'static str, Value)>) -> Result<Schemas, String> {
        let mut crds = BTreeMap::new();
        for (file, crd) in files {
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
    pub fn validate(&self, object: &Value) -> Validated {
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

impl Validations {
    /// [`Schemas::validate`] of `object`, remembered for the rest of the command.
    pub fn validate(&self, schemas: &Schemas, object: &Value) -> Validated {
        // Whole entries are inserted, never half-written ones.
        let memo = || self.memo.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(known) = memo().get(object) {
            return known.clone();
        }
        let result = schemas.validate(object);
        let mut memo = memo();
        if memo.len() < MEMO_ENTRIES {
            memo.insert(object.clone(), result.clone());
        }
        result
    }

    /// [`Validations::validate`] of a shared object: remembered by the object's address too.
    pub fn validate_shared(&self, schemas: &Schemas, object: &Arc<Value>) -> Validated {
        let shared = || self.shared.lock().unwrap_or_else(|e| e.into_inner());
        let key = Arc::as_ptr(object) as usize;
        if let Some((_, known)) = shared().get(&key) {
            return known.clone();
        }
        let result = self.validate(schemas, object);
        let mut shared = shared();
        if shared.len() < MEMO_ENTRIES {
            shared.insert(key, (object.clone(), result.clone()));
        }
        result
    }
}
