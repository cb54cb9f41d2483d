//! Values against their schema: types, enums, patterns, formats, bounds, unknown and required
//! fields, and the CEL rules.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

use super::{FieldPath, Schema, Step, Violation, cel};

pub(super) fn unknown(schema: &Schema, key: &str, parent: &FieldPath) -> Violation {
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

pub(super) fn required(
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

pub(super) fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

pub(super) fn check(schema: &Schema, value: &Value, path: &FieldPath, out: &mut Vec<Violation>) {
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
        // Objects are checked as created: a rule on updates does not apply.
        if cel::is_transition(source) {
            continue;
        }
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
