//! Edits of cellgen.yaml: the top-level `schema` number and entries of the `keys` mapping. Each
//! edit is one pass over the text, whatever the number of keys, and is verified like every YAML
//! edit.

use rowan::ast::AstNode;
use yaml_edit::SyntaxKind as K;

use super::{Value, YamlEditError, fail, fail_at, parse, range, scalar, verify};
use crate::ports::edit::list::{self, Edit};
use crate::ports::edit::text::{indent_at, line_end, line_number, line_start};

/// A field value of a new `keys` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Field {
    Str(String),
    Int(u32),
    /// A flow list of strings, `[a, b]`.
    List(Vec<String>),
}

impl Field {
    fn yaml(&self) -> String {
        match self {
            Field::Str(s) => scalar(s),
            Field::Int(n) => n.to_string(),
            Field::List(items) => format!(
                "[{}]",
                items
                    .iter()
                    .map(|i| super::flow_scalar(i))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
    fn value(&self) -> Value {
        match self {
            Field::Str(s) => Value::String(s.clone()),
            Field::Int(n) => Value::Number((*n).into()),
            Field::List(items) => {
                Value::Sequence(items.iter().cloned().map(Value::String).collect())
            }
        }
    }
}

const KEYS_ADVICE: &str =
    "write `keys` as a block mapping (one `name:` per line, its fields indented below)";

/// Replaces the top-level `schema: N` of cellgen.yaml.
pub fn set_schema(text: &str, schema: u32) -> Result<String, YamlEditError> {
    let (doc, value) = parse(text)?;
    let node = doc
        .as_mapping()
        .and_then(|m| m.get("schema"))
        .ok_or_else(|| fail("no top-level `schema`"))?;
    let r = node.byte_range();
    let r = r.start as usize..r.end as usize;
    let edited = crate::ports::edit::text::splice(text, r.clone(), &schema.to_string());
    let mut expected = value.clone();
    expected["schema"] = Value::Number(schema.into());
    verify(
        edited,
        &expected,
        line_number(text, r.start),
        "write `schema` as a plain number (`schema: 3`) without anchors or tags",
    )
}

/// Renames the entry `old` of the top-level `keys` mapping to `new` (only the key's text
/// changes; its fields, comments and position stay). Used for cellgen.yaml and component.yaml.
pub fn rename_key(text: &str, old: &str, new: &str) -> Result<String, YamlEditError> {
    let (doc, value) = parse(text)?;
    let keys = keys_mapping(text, &doc)?;
    let entry = keys
        .entries()
        .find(|e| entry_name(e).as_deref() == Some(old))
        .ok_or_else(|| fail(format!("`keys` has no `{old}`")))?;
    let key = entry.key_node().expect("a named entry has a key");
    let r = key.byte_range();
    let r = r.start as usize..r.end as usize;
    let edited = crate::ports::edit::text::splice(text, r.clone(), &scalar(new));
    let mut expected = value.clone();
    if let Some(Value::Mapping(map)) = expected.get_mut("keys") {
        *map = map
            .iter()
            .map(|(k, v)| {
                let k = if k.as_str() == Some(old) {
                    Value::String(new.to_string())
                } else {
                    k.clone()
                };
                (k, v.clone())
            })
            .collect();
    }
    verify(edited, &expected, line_number(text, r.start), KEYS_ADVICE)
}

/// Sets fields of the entry `key` of the top-level `keys` mapping: a field it has gets the new
/// value in place, a field it lacks is added after its last field. One pass, verified.
pub fn set_key_fields(
    text: &str,
    key: &str,
    fields: &[(&str, Field)],
) -> Result<String, YamlEditError> {
    let (doc, value) = parse(text)?;
    let keys = keys_mapping(text, &doc)?;
    let entry = keys
        .entries()
        .find(|e| entry_name(e).as_deref() == Some(key))
        .ok_or_else(|| fail(format!("`keys` has no `{key}`")))?;
    let start = entry.byte_range().start as usize;
    let line = line_number(text, start);
    let body = entry
        .value_node()
        .and_then(|v| v.as_mapping().cloned())
        .filter(|m| is_block(m.syntax()) && m.entries().next().is_some())
        .ok_or_else(|| {
            fail_at(
                text,
                start,
                format!("`keys.{key}` is not a block mapping of fields; {KEYS_ADVICE}"),
            )
        })?;
    let field_indent = body
        .entries()
        .next()
        .and_then(|e| e.key_node())
        .map(|k| indent_at(text, k.byte_range().start as usize))
        .expect("a non-empty mapping has a first key");
    let r = entry.byte_range();
    let end = content_end(text, r.start as usize, r.end as usize);
    let mut edits = Vec::new();
    let mut appended = String::new();
    for (field, new) in fields {
        let existing = body
            .entries()
            .find(|e| entry_name(e).as_deref() == Some(*field));
        match existing.as_ref().and_then(|e| e.value_node()) {
            Some(v) => {
                let r = v.byte_range();
                edits.push(Edit {
                    range: r.start as usize..r.end as usize,
                    with: new.yaml(),
                });
            }
            None if existing.is_some() => {
                return Err(fail_at(
                    text,
                    start,
                    format!("`keys.{key}.{field}` has no value; give it one or remove the line"),
                ));
            }
            None => appended.push_str(&format!(
                "{}{field}: {}\n",
                " ".repeat(field_indent),
                new.yaml()
            )),
        }
    }
    if !appended.is_empty() {
        if !text[..end].ends_with('\n') {
            appended.insert(0, '\n');
        }
        edits.push(Edit::insert(end, appended));
    }
    let edited = list::apply(text, edits);
    let mut expected = value.clone();
    if let Some(Value::Mapping(entry)) = expected.get_mut("keys").and_then(|k| k.get_mut(key)) {
        for (field, new) in fields {
            entry.insert(Value::String((*field).to_string()), new.value());
        }
    }
    verify(edited, &expected, line, KEYS_ADVICE)
}

fn entry_name(entry: &yaml_edit::MappingEntry) -> Option<String> {
    entry
        .key_node()
        .and_then(|k| k.as_scalar().map(|s| s.as_string()))
}

/// A block (not a `{...}` flow) mapping.
fn is_block(node: &rowan::SyntaxNode<yaml_edit::Lang>) -> bool {
    node.first_token().is_none_or(|t| t.kind() != K::LEFT_BRACE)
}

/// The top-level `keys` mapping: its node, refusing a flow mapping.
fn keys_mapping(
    text: &str,
    doc: &yaml_edit::Document,
) -> Result<yaml_edit::Mapping, YamlEditError> {
    let keys = doc
        .as_mapping()
        .and_then(|m| m.get_mapping("keys"))
        .ok_or_else(|| fail("no top-level `keys` mapping"))?;
    let node = keys.syntax();
    if !is_block(node) {
        return Err(fail_at(
            text,
            range(node).start,
            format!("`keys` is a flow mapping `{{...}}`; {KEYS_ADVICE}"),
        ));
    }
    Ok(keys)
}

/// Appends entries to the top-level `keys` mapping of cellgen.yaml, in one edit.
pub fn append_keys(
    text: &str,
    entries: &[(String, Vec<(&str, Field)>)],
) -> Result<String, YamlEditError> {
    if entries.is_empty() {
        return Ok(text.to_string());
    }
    let (doc, value) = parse(text)?;
    let keys = keys_mapping(text, &doc)?;
    let first = keys
        .entries()
        .next()
        .ok_or_else(|| fail("`keys` is empty"))?;
    let last = keys
        .entries()
        .last()
        .expect("a first entry means a last one");
    let key_start = first
        .key_node()
        .map(|k| k.byte_range().start as usize)
        .ok_or_else(|| fail("`keys` is empty"))?;
    let indent = indent_at(text, key_start);
    let field_indent = first
        .value_node()
        .and_then(|v| {
            v.as_mapping()
                .filter(|m| is_block(m.syntax()))
                .and_then(|m| m.entries().next())
                .and_then(|e| e.key_node())
        })
        .map_or(indent + 2, |k| {
            indent_at(text, k.byte_range().start as usize)
        });
    let mut block = String::new();
    for (key, fields) in entries {
        block.push_str(&format!("{}{key}:\n", " ".repeat(indent)));
        for (field, value) in fields {
            block.push_str(&format!(
                "{}{field}: {}\n",
                " ".repeat(field_indent),
                value.yaml()
            ));
        }
    }
    let r = last.byte_range();
    let at = content_end(text, r.start as usize, r.end as usize);
    if !text[..at].ends_with('\n') {
        block.insert(0, '\n');
    }
    let edited = list::apply(text, vec![Edit::insert(at, block)]);
    let mut expected = value.clone();
    if let Some(Value::Mapping(map)) = expected.get_mut("keys") {
        for (key, fields) in entries {
            let mut entry = yaml_serde::Mapping::new();
            for (field, value) in fields {
                entry.insert(Value::String((*field).to_string()), value.value());
            }
            map.insert(Value::String(key.clone()), Value::Mapping(entry));
        }
    }
    verify(edited, &expected, line_number(text, key_start), KEYS_ADVICE)
}

/// Removes top-level `keys.<key>` entries (with their nested fields) from cellgen.yaml.
pub fn remove_keys(text: &str, remove: &[String]) -> Result<String, YamlEditError> {
    let (doc, value) = parse(text)?;
    let keys = keys_mapping(text, &doc)?;
    let edits: Vec<Edit> = keys
        .entries()
        .filter(|e| {
            e.key_node()
                .and_then(|k| k.as_scalar().map(|s| s.as_string()))
                .is_some_and(|k| remove.contains(&k))
        })
        .map(|e| {
            let r = e.byte_range();
            let (start, end) = (r.start as usize, r.end as usize);
            Edit::delete(line_start(text, start)..content_end(text, start, end))
        })
        .collect();
    if edits.is_empty() {
        return Ok(text.to_string());
    }
    let line = line_number(text, range(keys.syntax()).start);
    let edited = list::apply(text, edits);
    let mut expected = value.clone();
    if let Some(Value::Mapping(map)) = expected.get_mut("keys") {
        for key in remove {
            map.shift_remove(Value::String(key.clone()));
        }
    }
    verify(edited, &expected, line, KEYS_ADVICE)
}

/// End of the last line of `start..end` that is neither blank nor a comment: a node's range can
/// run over comments that belong to what follows it.
pub(super) fn content_end(text: &str, start: usize, end: usize) -> usize {
    let mut end = line_end(text, end.saturating_sub(1).max(start));
    while end > start {
        let line_begin = line_start(text, end - 1);
        let line = text[line_begin..end].trim();
        if line_begin <= start || !(line.is_empty() || line.starts_with('#')) {
            break;
        }
        end = line_begin;
    }
    end
}
