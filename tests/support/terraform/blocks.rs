//! A resource, data source or provider body against its provider schema, as `terraform validate`
//! checks it: every argument and block exists, is written as an argument or as a block exactly
//! as the schema says, required arguments are there, block counts fit, literal values fit.

use std::collections::BTreeMap;
use std::ops::Range;

use hcl_edit::Span;
use hcl_edit::expr::Expression;
use hcl_edit::structure::{Block, Body, Structure};
use serde_json::{Map, Value};

use super::types::{Report, Shape, check_object_keys, check_value, did_you_mean, shape};

/// Meta-arguments and meta-blocks Terraform handles itself, per kind of block.
pub struct Meta {
    pub attrs: &'static [&'static str],
    pub blocks: &'static [&'static str],
}

pub const RESOURCE_META: Meta = Meta {
    attrs: &["count", "for_each", "depends_on", "provider"],
    blocks: &["lifecycle", "provisioner", "connection"],
};
pub const DATA_META: Meta = Meta {
    attrs: &["count", "for_each", "depends_on", "provider"],
    blocks: &["lifecycle"],
};
pub const PROVIDER_META: Meta = Meta {
    attrs: &["alias", "version"],
    blocks: &[],
};
pub const NO_META: Meta = Meta {
    attrs: &[],
    blocks: &[],
};

fn empty() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

fn attributes(schema: &Value) -> &Map<String, Value> {
    schema["attributes"].as_object().unwrap_or(empty())
}

fn block_types(schema: &Value) -> &Map<String, Value> {
    schema["block_types"].as_object().unwrap_or(empty())
}

/// An attribute Terraform computes and the configuration cannot set.
fn computed_only(attr: &Value) -> bool {
    attr["computed"] == true && attr["optional"] != true && attr["required"] != true
}

/// How to write a nested attribute, for messages.
fn nested_form(nested: &Value) -> &'static str {
    match nested["nesting_mode"].as_str() {
        Some("list" | "set") => "[{ ... }]",
        Some("map") => "{ key = { ... } }",
        _ => "{ ... }",
    }
}

/// Checks `body` against a block `schema` (`attributes`, `block_types`); `what` names the block
/// in messages (`helm_release.cilium`), `origin` the provider (`hashicorp/helm 3.1.2`).
pub fn check_body(
    body: &Body,
    schema: &Value,
    what: &str,
    origin: &str,
    meta: &Meta,
    report: &mut Report,
) {
    let attrs = attributes(schema);
    let blocks = block_types(schema);
    // block type → (count, any `dynamic`, first span)
    let mut counts: BTreeMap<String, (usize, bool)> = BTreeMap::new();
    let names = || attrs.keys().chain(blocks.keys());
    for structure in body.iter() {
        match structure {
            Structure::Attribute(attr) => {
                let name = attr.key.as_str();
                if meta.attrs.contains(&name) {
                    continue;
                }
                let span = attr.key.span();
                if let Some(a) = attrs.get(name) {
                    if computed_only(a) {
                        report(
                            span,
                            format!("`{what}.{name}` cannot be set: {origin} computes it"),
                        );
                    } else if let Some(nested) = a.get("nested_type") {
                        check_nested(
                            &attr.value,
                            nested,
                            &format!("{what}.{name}"),
                            origin,
                            report,
                        );
                    } else {
                        check_value(&attr.value, &a["type"], &format!("{what}.{name}"), report);
                    }
                } else if blocks.contains_key(name) {
                    report(
                        span,
                        format!(
                            "`{what}.{name}` is a block in {origin}: write `{name} {{ ... }}`, not `{name} = ...`"
                        ),
                    );
                } else {
                    report(
                        span,
                        format!(
                            "`{what}` has no argument `{name}` in {origin}{}",
                            did_you_mean(name, names())
                        ),
                    );
                }
            }
            Structure::Block(block) => {
                let name = block.ident.as_str();
                let span = block.ident.span();
                if meta.blocks.contains(&name) {
                    if name == "lifecycle" {
                        check_lifecycle(block, what, report);
                    }
                    continue;
                }
                if name == "dynamic" {
                    let Some(ty) = block.labels.first().map(|l| l.as_str().to_string()) else {
                        report(span, format!("`{what}`: a dynamic block needs a label"));
                        continue;
                    };
                    let Some(bt) = blocks.get(&ty) else {
                        report(
                            span,
                            format!(
                                "`{what}` has no block type `{ty}` in {origin}, so `dynamic \"{ty}\"` cannot generate it{}",
                                did_you_mean(&ty, blocks.keys())
                            ),
                        );
                        continue;
                    };
                    counts.entry(ty.clone()).or_default().1 = true;
                    match block.body.get_blocks("content").next() {
                        Some(content) => check_body(
                            &content.body,
                            &bt["block"],
                            &format!("{what}.{ty}"),
                            origin,
                            &NO_META,
                            report,
                        ),
                        None => report(
                            span,
                            format!("`{what}`: `dynamic \"{ty}\"` has no content block"),
                        ),
                    }
                    continue;
                }
                if let Some(bt) = blocks.get(name) {
                    if !block.labels.is_empty() {
                        report(span, format!("`{what}.{name}` blocks take no labels"));
                    }
                    counts.entry(name.to_string()).or_default().0 += 1;
                    check_body(
                        &block.body,
                        &bt["block"],
                        &format!("{what}.{name}"),
                        origin,
                        &NO_META,
                        report,
                    );
                } else if let Some(a) = attrs.get(name) {
                    let form = a.get("nested_type").map_or("<value>", nested_form);
                    let kind = if a.get("nested_type").is_some() {
                        "a nested attribute"
                    } else {
                        "an argument"
                    };
                    report(
                        span,
                        format!(
                            "`{what}.{name}` is {kind} in {origin}, not a block: write `{name} = {form}`"
                        ),
                    );
                } else {
                    report(
                        span,
                        format!(
                            "`{what}` has no block type `{name}` in {origin}{}",
                            did_you_mean(name, names())
                        ),
                    );
                }
            }
        }
    }
    let body_span = body_span(body);
    for (name, a) in attrs {
        if a["required"] == true && !body.has_attribute(name) {
            report(
                body_span.clone(),
                format!("`{what}` lacks the required argument `{name}` ({origin})"),
            );
        }
    }
    for (name, bt) in blocks {
        let (count, dynamic) = counts.get(name).copied().unwrap_or_default();
        if dynamic {
            continue; // how many a dynamic block generates is known only at plan time
        }
        let min = bt["min_items"].as_u64().unwrap_or(0) as usize;
        let max = match bt["nesting_mode"].as_str() {
            Some("single" | "group") => Some(1),
            _ => bt["max_items"].as_u64().map(|m| m as usize),
        };
        if count < min {
            report(
                body_span.clone(),
                format!(
                    "`{what}` needs at least {min} `{name}` block{} ({origin}), found {count}",
                    if min == 1 { "" } else { "s" }
                ),
            );
        }
        if let Some(max) = max.filter(|m| count > *m) {
            report(
                body_span.clone(),
                format!(
                    "`{what}` takes at most {max} `{name}` block{} ({origin}), found {count}",
                    if max == 1 { "" } else { "s" }
                ),
            );
        }
    }
}

/// A span to report a body-level problem at: its first structure, if any.
fn body_span(body: &Body) -> Option<Range<usize>> {
    body.iter().next().and_then(|s| s.span())
}

/// A nested attribute's value (plugin-framework providers: helm 3's `set`, flux's `kubernetes`):
/// an object, or a list/set/map of objects, each checked against the nested attributes.
pub fn check_nested(
    expr: &Expression,
    nested: &Value,
    what: &str,
    origin: &str,
    report: &mut Report,
) {
    let s = shape(expr);
    let mode = nested["nesting_mode"].as_str().unwrap_or("single");
    match (mode, s) {
        (_, Shape::Unknown | Shape::Null) => {}
        ("single", Shape::Object(entries)) => {
            check_nested_object(expr, &entries, nested, what, origin, report)
        }
        ("list" | "set", Shape::Tuple(items)) => {
            for (i, item) in items.iter().enumerate() {
                let path = format!("{what}[{i}]");
                match shape(item) {
                    Shape::Object(entries) => {
                        check_nested_object(item, &entries, nested, &path, origin, report)
                    }
                    Shape::Unknown | Shape::Null => {}
                    _ => report(
                        item.span(),
                        format!("`{path}` must be an object ({origin})"),
                    ),
                }
            }
        }
        ("map", Shape::Object(entries)) => {
            for (key, value) in entries {
                let path = format!("{what}.{}", key.as_deref().unwrap_or("<key>"));
                match shape(value) {
                    Shape::Object(inner) => {
                        check_nested_object(value, &inner, nested, &path, origin, report)
                    }
                    Shape::Unknown | Shape::Null => {}
                    _ => report(
                        value.span(),
                        format!("`{path}` must be an object ({origin})"),
                    ),
                }
            }
        }
        (_, other) => {
            let got = match other {
                Shape::Tuple(_) => "a list",
                Shape::Object(_) => "an object",
                _ => "a primitive value",
            };
            report(
                expr.span(),
                format!(
                    "`{what}` is a nested attribute with nesting mode {mode} in {origin}: write `{} = {}`, not {got}",
                    what.rsplit('.').next().unwrap_or(what),
                    nested_form(nested)
                ),
            );
        }
    }
}

fn check_nested_object(
    expr: &Expression,
    entries: &[(Option<String>, &Expression)],
    nested: &Value,
    what: &str,
    origin: &str,
    report: &mut Report,
) {
    let attrs = attributes(nested);
    check_object_keys(expr, entries, attrs.keys(), what, report);
    for (key, value) in entries {
        let Some(key) = key else { continue };
        let Some(a) = attrs.get(key) else { continue };
        let path = format!("{what}.{key}");
        if computed_only(a) {
            report(
                value.span(),
                format!("`{path}` cannot be set: {origin} computes it"),
            );
        } else if let Some(inner) = a.get("nested_type") {
            check_nested(value, inner, &path, origin, report);
        } else {
            check_value(value, &a["type"], &path, report);
        }
    }
    if entries.iter().all(|(k, _)| k.is_some()) {
        for (name, a) in attrs {
            if a["required"] == true && !entries.iter().any(|(k, _)| k.as_deref() == Some(name)) {
                report(
                    expr.span(),
                    format!("`{what}` lacks the required attribute `{name}` ({origin})"),
                );
            }
        }
    }
}

fn check_lifecycle(block: &Block, what: &str, report: &mut Report) {
    const ATTRS: &[&str] = &[
        "create_before_destroy",
        "prevent_destroy",
        "ignore_changes",
        "replace_triggered_by",
    ];
    const BLOCKS: &[&str] = &["precondition", "postcondition"];
    for structure in block.body.iter() {
        let (name, span, ok) = match structure {
            Structure::Attribute(a) => (
                a.key.as_str(),
                a.key.span(),
                ATTRS.contains(&a.key.as_str()),
            ),
            Structure::Block(b) => (
                b.ident.as_str(),
                b.ident.span(),
                BLOCKS.contains(&b.ident.as_str()),
            ),
        };
        if !ok {
            report(span, format!("`{what}.lifecycle` has no `{name}`"));
        }
    }
}
