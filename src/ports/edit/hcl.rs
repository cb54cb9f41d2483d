//! Edits of `cell-metadata.tf`: the ConfigMap's `data` entries, its `schema` value and its
//! `depends_on` list. hcl-edit parses and gives spans; edits are spliced into the original text
//! (one pass for any number of keys), then the result is read again and must hold exactly the
//! intended entries, with every byte outside them unchanged, or the edit is refused with the line
//! and what to change.
//!
//! Any layout of `data`: one entry per line or several, the whole object on one line, the closing
//! `}` on the last entry's line, trailing commas, comments, heredocs. Alignment follows
//! `terraform fmt` when the object was aligned that way (see `align`), so add-then-remove
//! restores the original bytes either way.

mod align;
mod proof;
pub mod syntax;
pub mod tfvars;

use std::ops::Range;

use hcl_edit::Span;
use hcl_edit::expr::{Expression, ObjectKey};
use hcl_edit::structure::{Block, Body, Structure};

use super::list::{self, Edit, List, Syntax};
use super::text::{line_number, line_start};

pub const CONFIG_MAP_TYPE: &str = "kubernetes_config_map_v1";
pub const CONFIG_MAP_NAME: &str = "cell_metadata";
/// `metadata.name` and `metadata.namespace` of the ConfigMap every Flux Kustomization reads.
pub const CONFIG_MAP_OBJECT: (&str, &str) = ("cell-metadata", "flux-system");

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (line {line})")]
pub struct HclEditError {
    pub line: usize,
    pub message: String,
}

/// One `key = value` of the ConfigMap's data, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataEntry {
    pub key: String,
    /// The value's source text, e.g. `module.eks.cluster_name` or `"1"`.
    pub value: String,
    /// The literal string when the value is a plain string without interpolation.
    pub literal: Option<String>,
    pub line: usize,
    key_span: Range<usize>,
    value_span: Range<usize>,
}

/// What cellgen reads from `cell-metadata.tf`.
#[derive(Debug, Clone)]
pub struct CellMetadata {
    pub entries: Vec<DataEntry>,
    pub depends_on: Vec<String>,
    depends_on_spans: Vec<Range<usize>>,
    /// The `{ ... }` of data.
    data_span: Range<usize>,
    /// The `[ ... ]` of depends_on, when there is one.
    depends_on_list: Option<Range<usize>>,
    /// The whole `depends_on = [ ... ]` attribute, when there is one.
    depends_on_attr: Option<Range<usize>>,
    /// The resource block, and the text of everything in it but data and depends_on.
    block_span: Range<usize>,
    others: Vec<String>,
}

fn err(text: &str, offset: usize, message: impl Into<String>) -> HclEditError {
    HclEditError {
        line: line_number(text, offset),
        message: message.into(),
    }
}

pub fn parse_body(text: &str) -> Result<Body, HclEditError> {
    hcl_edit::parser::parse_body(text).map_err(|e| HclEditError {
        line: e.location().line(),
        message: format!("not valid HCL: {}", e.message()),
    })
}

/// A string attribute of a nested block, e.g. `metadata { name = "x" }`.
fn nested_string(block: &Block, nested: &str, attr: &str) -> Option<Option<String>> {
    let inner = block.body.get_blocks(nested).next()?;
    let value = &inner.body.get_attribute(attr)?.value;
    Some(match value {
        Expression::String(s) => Some(s.as_str().to_string()),
        _ => None,
    })
}

/// The resource that is the cell-metadata ConfigMap: labelled `cell_metadata`, or named
/// `cell-metadata` in `flux-system`. Two candidates are ambiguous: cellgen refuses to guess.
fn find_config_map<'a>(text: &str, body: &'a Body) -> Result<&'a Block, HclEditError> {
    let candidates: Vec<&Block> = body
        .get_blocks("resource")
        .filter(|b| {
            let labels: Vec<&str> = b.labels.iter().map(|l| l.as_str()).collect();
            if labels.first() != Some(&CONFIG_MAP_TYPE) {
                return false;
            }
            if labels.get(1) == Some(&CONFIG_MAP_NAME) {
                return true;
            }
            let name = nested_string(b, "metadata", "name").flatten();
            let namespace = nested_string(b, "metadata", "namespace");
            name.as_deref() == Some(CONFIG_MAP_OBJECT.0)
                && namespace.is_none_or(|ns| ns.is_none_or(|ns| ns == CONFIG_MAP_OBJECT.1))
        })
        .collect();
    let start = |b: &Block| b.span().map_or(0, |s| s.start);
    match candidates.as_slice() {
        [one] => Ok(one),
        [] => Err(HclEditError {
            line: 1,
            message: format!(
                "no `resource \"{CONFIG_MAP_TYPE}\" \"{CONFIG_MAP_NAME}\"` block: cellgen edits the ConfigMap `{}` in `{}` that Flux substitutes from",
                CONFIG_MAP_OBJECT.0, CONFIG_MAP_OBJECT.1
            ),
        }),
        [first, rest @ ..] => {
            let lines: Vec<String> = std::iter::once(first)
                .chain(rest)
                .map(|b| {
                    let labels: Vec<&str> = b.labels.iter().map(|l| l.as_str()).collect();
                    format!(
                        "`{}` (line {})",
                        labels.join("."),
                        line_number(text, start(b))
                    )
                })
                .collect();
            Err(err(
                text,
                start(rest[0]),
                format!(
                    "{} could each be the cell-metadata ConfigMap; cellgen will not guess which to edit. Keep one `resource \"{CONFIG_MAP_TYPE}\" \"{CONFIG_MAP_NAME}\"` with `metadata {{ name = \"{}\" }}` and rename the other (label and metadata.name)",
                    lines.join(" and "),
                    CONFIG_MAP_OBJECT.0
                ),
            ))
        }
    }
}

/// Reads the cell-metadata ConfigMap resource from `text`.
pub fn read(text: &str) -> Result<CellMetadata, HclEditError> {
    read_parsed(text, &parse_body(text)?)
}

/// [`read`] on `text` already parsed into `body`.
pub fn read_parsed(text: &str, body: &Body) -> Result<CellMetadata, HclEditError> {
    if let Some((at, delimiter)) = proof::heredoc_read_past_its_end(text, body) {
        return Err(err(
            text,
            at,
            format!(
                "a heredoc `<<{delimiter}` has a line `{delimiter}` inside it: Terraform ends the heredoc at that line and runs what follows as Terraform code (a block could hide there). Close the heredoc once, or write the value as a quoted string"
            ),
        ));
    }
    let block = find_config_map(text, body)?;
    let block_span = block.span().unwrap_or(0..text.len());
    let data = block.body.get_attribute("data").ok_or_else(|| {
        err(
            text,
            block_span.start,
            "the ConfigMap has no `data = { ... }` attribute: add one, e.g. `data = { schema = \"1\" }`",
        )
    })?;
    let Expression::Object(object) = &data.value else {
        return Err(err(
            text,
            data.span().map_or(0, |s| s.start),
            "`data` is not an object literal `{ key = value, ... }`, so cellgen cannot add or remove keys in it: write the keys out as `data = { key = value }` (a `merge(...)` or a variable hides them from cellgen check too)",
        ));
    };
    let lines = super::text::LineIndex::new(text);
    let mut entries = Vec::new();
    for (key, value) in object.iter() {
        let key_name = match key {
            ObjectKey::Ident(ident) => ident.as_str().to_string(),
            ObjectKey::Expression(Expression::String(s)) => s.as_str().to_string(),
            ObjectKey::Expression(other) => {
                return Err(err(
                    text,
                    other.span().map_or(0, |s| s.start),
                    "a data key is an expression; cellgen needs literal keys (`name = value`)",
                ));
            }
        };
        let key_span = key
            .span()
            .ok_or_else(|| err(text, 0, "internal: key without span"))?;
        let value_span = value
            .expr()
            .span()
            .ok_or_else(|| err(text, 0, "internal: value without span"))?;
        let literal = match value.expr() {
            Expression::String(s) => Some(s.as_str().to_string()),
            _ => None,
        };
        entries.push(DataEntry {
            key: key_name,
            value: text[value_span.clone()].to_string(),
            literal,
            line: lines.line(key_span.start),
            key_span,
            value_span,
        });
    }
    let data_span = data
        .value
        .span()
        .ok_or_else(|| err(text, 0, "internal: data without span"))?;
    let depends_on_attr = block
        .body
        .get_attribute("depends_on")
        .and_then(|a| a.span());
    let (depends_on, depends_on_spans, depends_on_list) =
        match block.body.get_attribute("depends_on") {
            None => (Vec::new(), Vec::new(), None),
            Some(attr) => {
                let Expression::Array(array) = &attr.value else {
                    return Err(err(
                        text,
                        attr.span().map_or(0, |s| s.start),
                        "`depends_on` is not a list `[a, b]`",
                    ));
                };
                let spans: Vec<Range<usize>> = array.iter().filter_map(|e| e.span()).collect();
                let names = spans.iter().map(|s| text[s.clone()].to_string()).collect();
                (names, spans, attr.value.span())
            }
        };
    let others = block
        .body
        .iter()
        .filter(|s| match s {
            Structure::Attribute(a) => !matches!(a.key.as_str(), "data" | "depends_on"),
            Structure::Block(_) => true,
        })
        .filter_map(|s| s.span().map(|r| text[r].to_string()))
        .collect();
    Ok(CellMetadata {
        entries,
        depends_on,
        depends_on_spans,
        data_span,
        depends_on_list,
        depends_on_attr,
        block_span,
        others,
    })
}

impl CellMetadata {
    pub fn get(&self, key: &str) -> Option<&DataEntry> {
        self.entries.iter().find(|e| e.key == key)
    }

    fn data_list<'a>(&self, text: &'a str) -> List<'a> {
        List::new(
            text,
            self.data_span.start,
            self.data_span.end - 1,
            self.entries
                .iter()
                .map(|e| e.key_span.start..e.value_span.end)
                .collect(),
            Syntax::Hcl,
            false,
        )
    }

    fn depends_list<'a>(&self, text: &'a str) -> Option<List<'a>> {
        self.depends_on_list.as_ref().map(|span| {
            List::new(
                text,
                span.start,
                span.end - 1,
                self.depends_on_spans.clone(),
                Syntax::Hcl,
                true,
            )
        })
    }
}

const LAYOUT_ADVICE: &str = "put each `key = value` of `data` on a line of its own, with the closing `}` on a line of its own";

/// An edit whose result does not even read back.
fn unreadable(text: &str, before: &CellMetadata, e: &HclEditError) -> HclEditError {
    err(
        text,
        before.data_span.start,
        format!(
            "cellgen cannot edit this layout safely (the result would not read back: {}); {LAYOUT_ADVICE}",
            e.message
        ),
    )
}

/// The edited text must hold exactly `entries` and `depends_on`, and nothing else may change.
fn verify(
    before: &CellMetadata,
    text: &str,
    edited: String,
    entries: &[(String, String)],
    depends_on: &[String],
) -> Result<String, HclEditError> {
    let refuse = |why: &str| {
        err(
            text,
            before.data_span.start,
            format!("cellgen cannot edit this layout safely ({why}); {LAYOUT_ADVICE}"),
        )
    };
    let after = read(&edited).map_err(|e| unreadable(text, before, &e))?;
    let got: Vec<(&str, &str)> = after
        .entries
        .iter()
        .map(|e| (e.key.as_str(), e.value.as_str()))
        .collect();
    let want: Vec<(&str, &str)> = entries
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    if got != want {
        return Err(refuse("the data entries would not be the intended ones"));
    }
    if after.depends_on != depends_on {
        return Err(refuse("depends_on would not be the intended list"));
    }
    let (b, a) = (&before.block_span, &after.block_span);
    let outside_same = text[..b.start] == edited[..a.start] && text[b.end..] == edited[a.end..];
    if !outside_same || after.others != before.others {
        return Err(refuse("something outside data and depends_on would change"));
    }
    proof::structure_kept(text, before, &edited, &after).map_err(|why| refuse(&why))?;
    Ok(edited)
}

/// Adds `entries` (key, expression) at the end of data and `depends_on` references, in one pass.
/// A key data has already is an error; a reference depends_on has already is skipped.
pub fn add(
    text: &str,
    entries: &[(String, String)],
    depends_on: &[String],
) -> Result<String, HclEditError> {
    let meta = read(text)?;
    for (i, (key, _)) in entries.iter().enumerate() {
        if let Some(existing) = meta.get(key) {
            return Err(err(
                text,
                existing.key_span.start,
                format!("data already has a `{key}` entry"),
            ));
        }
        if entries[..i].iter().any(|(k, _)| k == key) {
            return Err(err(
                text,
                meta.data_span.start,
                format!("`{key}` is added twice"),
            ));
        }
    }
    let style = align::style(text, &meta);
    let items: Vec<String> = entries.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    let mut edits = meta.data_list(text).append(&items);
    let mut new_depends: Vec<String> = Vec::new();
    for dep in depends_on {
        if !meta.depends_on.contains(dep) && !new_depends.contains(dep) {
            new_depends.push(dep.clone());
        }
    }
    if !new_depends.is_empty() {
        match meta.depends_list(text) {
            Some(l) => edits.extend(l.append(&new_depends)),
            None => edits.push(new_depends_on(text, &meta, &new_depends)?),
        }
    }
    let edited = list::apply(text, edits);
    let after = read(&edited).map_err(|e| unreadable(text, &meta, &e))?;
    let old_keys: Vec<String> = meta.entries.iter().map(|e| e.key.clone()).collect();
    let style = if align::stable((text, &meta), (&edited, &after), &old_keys) {
        style
    } else {
        align::Style::None
    };
    let edited = match style {
        // The new entries join the last chain (or start one): aligned like the rest.
        align::Style::Chains => {
            let keys: Vec<String> = entries.iter().map(|(k, _)| k.clone()).collect();
            align::realign_where(&edited, &after, &keys)
        }
        align::Style::Global => align::realign_global(&edited, &after),
        align::Style::None => edited,
    };
    let mut want: Vec<(String, String)> = meta
        .entries
        .iter()
        .map(|e| (e.key.clone(), e.value.clone()))
        .collect();
    want.extend(entries.iter().cloned());
    let mut deps = meta.depends_on.clone();
    deps.extend(new_depends);
    verify(&meta, text, edited, &want, &deps)
}

/// A `depends_on` attribute for a ConfigMap that has none, before the block's closing `}`.
fn new_depends_on(text: &str, meta: &CellMetadata, deps: &[String]) -> Result<Edit, HclEditError> {
    let close = meta.block_span.end - 1;
    let at = line_start(text, close);
    if !text[at..close].trim().is_empty() {
        return Err(err(
            text,
            close,
            "the ConfigMap resource closes on a line with other content; put its closing `}` on a line of its own so cellgen can add `depends_on`",
        ));
    }
    let indent = format!("{}  ", list::indent_str(text, meta.block_span.start));
    Ok(Edit::insert(
        at,
        format!("\n{indent}depends_on = [{}]\n", deps.join(", ")),
    ))
}

/// Removes the data entries `keys` and the `depends_on` references, in one pass; what is not
/// there is skipped.
pub fn remove(text: &str, keys: &[String], depends_on: &[String]) -> Result<String, HclEditError> {
    let meta = read(text)?;
    let indices: Vec<usize> = (0..meta.entries.len())
        .filter(|i| keys.contains(&meta.entries[*i].key))
        .collect();
    let dep_indices: Vec<usize> = (0..meta.depends_on.len())
        .filter(|i| depends_on.contains(&meta.depends_on[*i]))
        .collect();
    if indices.is_empty() && dep_indices.is_empty() {
        return Ok(text.to_string());
    }
    // An aligned chain that loses an entry is aligned again (it may have set the width).
    let style = align::style(text, &meta);
    let realign: Vec<String> = align::chains_of(text, &meta)
        .into_iter()
        .filter(|(chain, aligned)| *aligned && chain.iter().any(|k| keys.contains(k)))
        .flat_map(|(chain, _)| chain)
        .filter(|k| !keys.contains(k))
        .collect();
    let mut edits = meta.data_list(text).remove(&indices);
    if let Some(l) = meta.depends_list(text) {
        edits.extend(l.remove(&dep_indices));
    }
    let edited = list::apply(text, edits);
    let after = read(&edited).map_err(|e| unreadable(text, &meta, &e))?;
    let kept: Vec<String> = meta
        .entries
        .iter()
        .filter(|e| !keys.contains(&e.key))
        .map(|e| e.key.clone())
        .collect();
    let edited = if !align::stable((text, &meta), (&edited, &after), &kept) {
        edited
    } else if style == align::Style::Global && !kept.is_empty() {
        align::realign_global(&edited, &after)
    } else {
        align::realign_where(&edited, &after, &realign)
    };
    let want: Vec<(String, String)> = meta
        .entries
        .iter()
        .filter(|e| !keys.contains(&e.key))
        .map(|e| (e.key.clone(), e.value.clone()))
        .collect();
    let deps: Vec<String> = meta
        .depends_on
        .iter()
        .filter(|d| !depends_on.contains(d))
        .cloned()
        .collect();
    verify(&meta, text, edited, &want, &deps)
}

/// Renames the data entry `old` to `new`: its value, comments and place stay; the `=` of its
/// chain is re-padded when the block was aligned (`terraform fmt` or one column), so a
/// formatted file stays formatted.
pub fn rename_key(text: &str, old: &str, new: &str) -> Result<String, HclEditError> {
    let meta = read(text)?;
    let entry = meta.get(old).ok_or_else(|| {
        err(
            text,
            meta.data_span.start,
            format!("data has no `{old}` entry"),
        )
    })?;
    if let Some(existing) = meta.get(new) {
        return Err(err(
            text,
            existing.key_span.start,
            format!("data already has a `{new}` entry"),
        ));
    }
    let style = align::style(text, &meta);
    let edited = super::text::splice(text, entry.key_span.clone(), new);
    let after = read(&edited).map_err(|e| unreadable(text, &meta, &e))?;
    let edited = match style {
        align::Style::Chains => align::realign_where(&edited, &after, &[new.to_string()]),
        align::Style::Global => align::realign_global(&edited, &after),
        align::Style::None => edited,
    };
    let want: Vec<(String, String)> = meta
        .entries
        .iter()
        .map(|e| {
            let key = if e.key == old { new } else { &e.key };
            (key.to_string(), e.value.clone())
        })
        .collect();
    verify(&meta, text, edited, &want, &meta.depends_on.clone())
}

/// Replaces the value of an existing data entry.
pub fn set_data_value(text: &str, key: &str, value: &str) -> Result<String, HclEditError> {
    let meta = read(text)?;
    let entry = meta.get(key).ok_or_else(|| {
        err(
            text,
            meta.data_span.start,
            format!("data has no `{key}` entry"),
        )
    })?;
    let edited = super::text::splice(text, entry.value_span.clone(), value);
    let want: Vec<(String, String)> = meta
        .entries
        .iter()
        .map(|e| {
            let v = if e.key == key { value } else { &e.value };
            (e.key.clone(), v.to_string())
        })
        .collect();
    verify(&meta, text, edited, &want, &meta.depends_on.clone())
}

#[cfg(test)]
mod tests;
