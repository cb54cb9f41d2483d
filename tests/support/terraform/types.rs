//! Whether a value written in HCL fits a type, the way Terraform converts it: only what is known
//! without evaluating (literals, lists, objects); references and function calls are unknown and
//! fit anything.
//!
//! One deliberate difference: Terraform silently discards an object attribute the type does not
//! name (hashicorp/terraform#29204, #33570). Here it is an error, because a discarded attribute is
//! a misspelt setting that never takes effect.

use std::ops::Range;

use hcl_edit::Span;
use hcl_edit::expr::{Expression, ObjectKey};
use hcl_edit::template::Element;
use serde_json::Value;

/// Where a problem is (a span of the file) and what it is.
pub type Report<'r> = dyn FnMut(Option<Range<usize>>, String) + 'r;

/// What a written value is, as far as type checking can tell without evaluating it.
pub enum Shape<'a> {
    Unknown,
    Null,
    Bool,
    Number,
    /// A string; its text when it is a plain literal.
    String(Option<String>),
    Tuple(Vec<&'a Expression>),
    /// Entries with their key, when the key is a literal.
    Object(Vec<(Option<String>, &'a Expression)>),
}

pub fn shape(expr: &Expression) -> Shape<'_> {
    match expr {
        Expression::Null(_) => Shape::Null,
        Expression::Bool(_) => Shape::Bool,
        Expression::Number(_) => Shape::Number,
        Expression::String(s) => Shape::String(Some(s.as_str().to_string())),
        // A template that is one interpolation and nothing else yields that value unconverted.
        Expression::StringTemplate(t) => {
            let elements: Vec<&Element> = t.iter().collect();
            match elements.as_slice() {
                [Element::Interpolation(_)] => Shape::Unknown,
                _ => Shape::String(None),
            }
        }
        Expression::HeredocTemplate(_) => Shape::String(None),
        Expression::Array(array) => Shape::Tuple(array.iter().collect()),
        Expression::Object(object) => Shape::Object(
            object
                .iter()
                .map(|(key, value)| (key_name(key), value.expr()))
                .collect(),
        ),
        Expression::Parenthesis(p) => shape(p.inner()),
        _ => Shape::Unknown,
    }
}

/// An object key as Terraform reads it: a bare name or a literal string is the name itself.
pub fn key_name(key: &ObjectKey) -> Option<String> {
    match key {
        ObjectKey::Ident(ident) => Some(ident.as_str().to_string()),
        ObjectKey::Expression(Expression::String(s)) => Some(s.as_str().to_string()),
        ObjectKey::Expression(_) => None,
    }
}

fn what(shape: &Shape) -> String {
    match shape {
        Shape::Unknown => "a computed value".into(),
        Shape::Null => "null".into(),
        Shape::Bool => "a bool".into(),
        Shape::Number => "a number".into(),
        Shape::String(Some(s)) => format!("the string {s:?}"),
        Shape::String(None) => "a string template".into(),
        Shape::Tuple(_) => "a list".into(),
        Shape::Object(_) => "an object".into(),
    }
}

/// A type in Terraform's notation, objects shortened to their attribute names.
pub fn type_name(ty: &Value) -> String {
    match ty {
        Value::String(s) if s == "dynamic" => "any".into(),
        Value::String(s) => s.clone(),
        Value::Array(parts) => match parts.first().and_then(Value::as_str) {
            Some(kind @ ("list" | "set" | "map")) => format!("{kind}({})", type_name(&parts[1])),
            Some("object") => {
                let names: Vec<&String> = parts[1]
                    .as_object()
                    .map(|m| m.keys().collect())
                    .unwrap_or_default();
                format!(
                    "object({{{}}})",
                    names
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
            Some("tuple") => format!(
                "tuple([{}])",
                parts[1]
                    .as_array()
                    .map(|e| e.iter().map(type_name).collect::<Vec<_>>().join(", "))
                    .unwrap_or_default()
            ),
            _ => ty.to_string(),
        },
        _ => ty.to_string(),
    }
}

fn join_path(path: &str, part: &str) -> String {
    if path.is_empty() {
        part.to_string()
    } else {
        format!("{path}.{part}")
    }
}

/// Reports where `expr` cannot be converted to `ty`. `path` names the value (e.g.
/// `addons.coredns.before_compute`) in messages.
pub fn check_value(expr: &Expression, ty: &Value, path: &str, report: &mut Report) {
    let s = shape(expr);
    if matches!(s, Shape::Unknown | Shape::Null) {
        return;
    }
    let mismatch = |report: &mut Report, s: &Shape| {
        report(
            expr.span(),
            format!("`{path}` must be {}, not {}", type_name(ty), what(s)),
        )
    };
    match ty {
        Value::String(kind) => match (kind.as_str(), &s) {
            ("dynamic", _) => {}
            ("string", Shape::Bool | Shape::Number | Shape::String(_)) => {}
            ("number", Shape::Number | Shape::String(None)) => {}
            ("number", Shape::String(Some(text))) if text.trim().parse::<f64>().is_ok() => {}
            ("bool", Shape::Bool | Shape::String(None)) => {}
            ("bool", Shape::String(Some(text))) if text == "true" || text == "false" => {}
            _ => mismatch(report, &s),
        },
        Value::Array(parts) => {
            let kind = parts.first().and_then(Value::as_str).unwrap_or_default();
            match (kind, &s) {
                ("list" | "set", Shape::Tuple(items)) => {
                    for (i, item) in items.iter().enumerate() {
                        check_value(item, &parts[1], &format!("{path}[{i}]"), report);
                    }
                }
                ("tuple", Shape::Tuple(items)) => {
                    let types = parts[1].as_array().cloned().unwrap_or_default();
                    if types.len() != items.len() {
                        report(
                            expr.span(),
                            format!(
                                "`{path}` must be a tuple of {} elements, not {}",
                                types.len(),
                                items.len()
                            ),
                        );
                        return;
                    }
                    for (i, (item, t)) in items.iter().zip(&types).enumerate() {
                        check_value(item, t, &format!("{path}[{i}]"), report);
                    }
                }
                ("map", Shape::Object(entries)) => {
                    for (key, value) in entries {
                        let name = key.clone().unwrap_or_else(|| "<key>".into());
                        check_value(value, &parts[1], &join_path(path, &name), report);
                    }
                }
                ("object", Shape::Object(entries)) => {
                    let empty = serde_json::Map::new();
                    let attrs = parts[1].as_object().unwrap_or(&empty);
                    let optional: Vec<&str> = parts
                        .get(2)
                        .and_then(Value::as_array)
                        .map(|o| o.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    check_object_keys(expr, entries, attrs.keys(), path, report);
                    for (key, value) in entries {
                        if let Some(t) = key.as_ref().and_then(|k| attrs.get(k)) {
                            check_value(value, t, &join_path(path, key.as_ref().unwrap()), report);
                        }
                    }
                    if entries.iter().all(|(k, _)| k.is_some()) {
                        for name in attrs.keys() {
                            let given = entries.iter().any(|(k, _)| k.as_deref() == Some(name));
                            if !given && !optional.contains(&name.as_str()) {
                                report(
                                    expr.span(),
                                    format!(
                                        "`{path}` lacks attribute `{name}`, which {} requires",
                                        type_name(ty)
                                    ),
                                );
                            }
                        }
                    }
                }
                _ => mismatch(report, &s),
            }
        }
        _ => {}
    }
}

/// Reports keys of an object literal that are not among `names`.
pub fn check_object_keys<'n>(
    expr: &Expression,
    entries: &[(Option<String>, &Expression)],
    names: impl Iterator<Item = &'n String> + Clone,
    path: &str,
    report: &mut Report,
) {
    for (key, value) in entries {
        let Some(key) = key else { continue };
        if !names.clone().any(|n| n == key) {
            let span = match expr {
                Expression::Object(object) => object
                    .iter()
                    .find(|(k, _)| key_name(k).as_deref() == Some(key.as_str()))
                    .and_then(|(k, _)| k.span()),
                _ => value.span(),
            };
            report(
                span,
                format!(
                    "`{key}` is not an attribute of `{path}`, so Terraform would drop it silently{}",
                    did_you_mean(key, names.clone())
                ),
            );
        }
    }
}

/// `; did you mean `x`?` when a name is close to `name` (cellgen's own suggestion rule).
pub fn did_you_mean<'n>(name: &str, names: impl Iterator<Item = &'n String>) -> String {
    cellgen::suggest::did_you_mean(name, names.map(String::as_str))
        .map(|n| format!("; did you mean `{n}`?"))
        .unwrap_or_default()
}
