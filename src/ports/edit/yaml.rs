//! Edits of YAML files users own: a Flux Kustomization's `spec.components` (here) and cellgen.yaml's
//! `schema` and `keys` (`contract`). yaml-edit (lossless) locates; changes are spliced into the
//! text; then the result is parsed again (yaml_serde) and must mean exactly what was intended, or
//! the edit is refused with the line and what to change.
//!
//! `spec.components` in any layout: block or flow list (its own style is kept), `[]` (becomes a
//! block list, the form cellgen generates, unless the list sits in a flow mapping or carries an
//! anchor or tag), `[\n  ]`, `~` or no value, comments anywhere, an anchor no alias uses. A
//! list that is an alias, or an anchor some alias reuses, is refused: editing it would change
//! the other place too. Adding then removing a component gives back the original bytes, except
//! that a null list (`~`, no value) comes back as `[]`.

mod contract;
pub mod patches;
mod scalar;

use std::ops::Range;

use rowan::ast::AstNode;
use yaml_edit::{Document, SyntaxKind as K};

pub use contract::{Field, append_keys, remove_keys, rename_key, set_key_fields, set_schema};
pub use scalar::{flow_scalar, scalar, scalar_like};

use super::list::{self, List, Syntax};
use super::text::{line_end, line_number, line_start};

type Node = rowan::SyntaxNode<yaml_edit::Lang>;
type Value = yaml_serde::Value;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct YamlEditError {
    pub line: Option<usize>,
    pub message: String,
}

fn fail(message: impl Into<String>) -> YamlEditError {
    YamlEditError {
        line: None,
        message: message.into(),
    }
}

fn fail_at(text: &str, offset: usize, message: impl Into<String>) -> YamlEditError {
    YamlEditError {
        line: Some(line_number(text, offset)),
        message: message.into(),
    }
}

/// Parses `text` twice: strictly (yaml_serde, for the meaning and a line number on errors) and
/// losslessly (yaml-edit, for positions). The nesting bound comes first.
fn parse(text: &str) -> Result<(Document, Value), YamlEditError> {
    let value = strict(text)?;
    let doc = crate::ports::yaml::lossless(text).map_err(|e| fail(e.to_string()))?;
    Ok((doc, value))
}

fn strict(text: &str) -> Result<Value, YamlEditError> {
    crate::ports::yaml::from_str::<Value>(text).map_err(|e| YamlEditError {
        line: e.line(),
        message: match e {
            crate::ports::yaml::YamlError::Invalid(e) => format!("not valid YAML: {e}"),
            refused => refused.to_string(),
        },
    })
}

fn range(node: &Node) -> Range<usize> {
    let r = node.text_range();
    usize::from(r.start())..usize::from(r.end())
}

/// The edited text must parse and equal `expected` (the original's meaning, changed as intended).
fn verify(
    edited: String,
    expected: &Value,
    line: usize,
    advice: &str,
) -> Result<String, YamlEditError> {
    match strict(&edited) {
        Ok(value) if &value == expected => Ok(edited),
        _ => Err(YamlEditError {
            line: Some(line),
            message: format!(
                "cellgen cannot edit this layout without changing what the file means; {advice}"
            ),
        }),
    }
}

const LIST_ADVICE: &str = "write `components:` as a block list (one `- path` per line) or a flow list (`[a, b]`) without anchors, aliases or tags";

/// How `spec.components` is written.
enum Shape {
    /// `components:`, `components: ~`, `components: null`: the value's range, if any.
    Null(Option<Range<usize>>),
    /// `- path` lines: each item's range and its dash's offset.
    Block(Vec<(Range<usize>, usize)>),
    /// `[a, b]`: the brackets and the items' ranges.
    Flow {
        open: usize,
        close: usize,
        items: Vec<Range<usize>>,
    },
}

struct Components {
    key_offset: usize,
    /// End of the key, its colon and any anchor or tag: where ` []` goes back.
    properties_end: usize,
    /// Inside a flow mapping or list, where block lists cannot go.
    flow_context: bool,
    /// Carries an anchor or a tag.
    decorated: bool,
    shape: Shape,
    /// The paths, as the strict parser reads them.
    paths: Vec<String>,
}

fn spec_of(value: &Value) -> Option<&yaml_serde::Mapping> {
    value.get("spec").and_then(Value::as_mapping)
}

/// Finds `spec.components`; `None` when the spec has no such key.
fn components(
    text: &str,
    doc: &Document,
    value: &Value,
) -> Result<Option<Components>, YamlEditError> {
    let spec = doc
        .as_mapping()
        .and_then(|m| m.get_mapping("spec"))
        .filter(|_| spec_of(value).is_some())
        .ok_or_else(|| fail("no `spec` mapping: is this a Flux Kustomization?"))?;
    let Some(entry) = spec.find_entry_by_key("components") else {
        return Ok(None);
    };
    let entry = entry.syntax().clone();
    let key_offset = range(&entry).start;
    let at = |message: &str| fail_at(text, key_offset, message);
    let colon_end = entry
        .children_with_tokens()
        .find(|c| c.kind() == K::COLON)
        .map_or(key_offset, |c| usize::from(c.text_range().end()));
    let flow_context = entry.ancestors().any(|n| {
        matches!(n.kind(), K::MAPPING | K::SEQUENCE)
            && n.first_token()
                .is_some_and(|t| matches!(t.kind(), K::LEFT_BRACE | K::LEFT_BRACKET))
    });
    let mut found = Components {
        key_offset,
        properties_end: colon_end,
        flow_context,
        decorated: false,
        shape: Shape::Null(None),
        paths: Vec::new(),
    };
    // The value, through any anchor (`&c`) and tag (`!!seq`) it carries.
    let mut node = entry.children().find(|n| n.kind() == K::VALUE);
    while let Some(current) = node.take() {
        for child in current.children_with_tokens() {
            match child.kind() {
                K::ANCHOR => {
                    let name = child.to_string();
                    let name = name.trim_start_matches('&');
                    if let Some(alias) = doc.syntax().descendants().find(|n| {
                        n.kind() == K::ALIAS && n.to_string().trim() == format!("*{name}")
                    }) {
                        return Err(at(&format!(
                            "`spec.components` is anchored as `&{name}` and line {} reuses it as `*{name}`: editing the list would change both places. Write the list out in both places",
                            line_number(text, range(&alias).start)
                        )));
                    }
                    found.decorated = true;
                    found.properties_end = usize::from(child.text_range().end());
                }
                K::TAG => {
                    found.decorated = true;
                    found.properties_end = usize::from(child.text_range().end());
                }
                K::TAGGED_NODE => node = child.into_node(),
                K::ALIAS => {
                    return Err(at(&format!(
                        "`spec.components` is the alias `{}`: cellgen would have to edit the list it names, elsewhere. Write the list here instead",
                        child.to_string().trim()
                    )));
                }
                K::SEQUENCE => {
                    let seq = child.into_node().expect("a sequence is a node");
                    found.shape = sequence_shape(text, &seq, key_offset)?;
                    break;
                }
                K::SCALAR => {
                    let r = range(child.as_node().expect("a scalar is a node"));
                    let is_null =
                        matches!(text[r.clone()].trim(), "" | "~" | "null" | "Null" | "NULL");
                    if !is_null {
                        return Err(at("`spec.components` is not a list"));
                    }
                    found.shape = Shape::Null((!r.is_empty()).then_some(r));
                }
                K::MAPPING => return Err(at("`spec.components` is not a list")),
                _ => {}
            }
        }
    }
    let strict_value = spec_of(value).and_then(|s| s.get("components"));
    found.paths = match strict_value {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Sequence(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| at("`spec.components` must be a list of paths"))?,
        Some(_) => return Err(at("`spec.components` is not a list")),
    };
    let located = match &found.shape {
        Shape::Null(_) => 0,
        Shape::Block(items) => items.len(),
        Shape::Flow { items, .. } => items.len(),
    };
    if located != found.paths.len() {
        return Err(at(&format!(
            "cellgen cannot locate every item of `spec.components`; {LIST_ADVICE}"
        )));
    }
    Ok(Some(found))
}

fn sequence_shape(text: &str, seq: &Node, key_offset: usize) -> Result<Shape, YamlEditError> {
    let open = seq
        .children_with_tokens()
        .find(|c| c.kind() == K::LEFT_BRACKET)
        .map(|c| usize::from(c.text_range().start()));
    let mut items = Vec::new();
    for entry in seq.children().filter(|n| n.kind() == K::SEQUENCE_ENTRY) {
        let Some(scalar) = entry.children().find(|n| n.kind() == K::SCALAR) else {
            return Err(fail_at(
                text,
                range(&entry).start,
                "`spec.components` must be a list of paths",
            ));
        };
        let dash = entry
            .children_with_tokens()
            .find(|c| c.kind() == K::DASH)
            .map(|c| usize::from(c.text_range().start()));
        items.push((range(&scalar), dash));
    }
    match open {
        Some(open) => {
            let close = seq
                .children_with_tokens()
                .filter(|c| c.kind() == K::RIGHT_BRACKET)
                .last()
                .map(|c| usize::from(c.text_range().start()))
                .ok_or_else(|| fail_at(text, key_offset, "unclosed `[`"))?;
            Ok(Shape::Flow {
                open,
                close,
                items: items.into_iter().map(|(r, _)| r).collect(),
            })
        }
        None => items
            .into_iter()
            .map(|(r, dash)| dash.map(|d| (r, d)))
            .collect::<Option<Vec<_>>>()
            .map(Shape::Block)
            .ok_or_else(|| fail_at(text, key_offset, "a block list item without its `-`")),
    }
}

fn same_path(listed: &str, path: &str) -> bool {
    listed.trim_end_matches('/') == path
}

/// Paths listed in a Flux Kustomization's `spec.components`.
pub fn flux_components(text: &str) -> Result<Vec<String>, YamlEditError> {
    let (doc, value) = parse(text)?;
    Ok(components(text, &doc, &value)?
        .map(|c| c.paths)
        .unwrap_or_default())
}

/// The document with `spec.components` set to `paths`: what an edit must mean.
fn with_components(value: &Value, paths: &[String]) -> Value {
    let mut expected = value.clone();
    if let Some(Value::Mapping(spec)) = expected.get_mut("spec") {
        spec.insert(
            Value::String("components".into()),
            Value::Sequence(paths.iter().cloned().map(Value::String).collect()),
        );
    }
    expected
}

/// Appends `path` to `spec.components` (nothing changes when it is listed already).
pub fn add_flux_component(text: &str, path: &str) -> Result<String, YamlEditError> {
    let (doc, value) = parse(text)?;
    let Some(list) = components(text, &doc, &value)? else {
        return Err(fail(
            "no `spec.components` list; add `components: []` under spec",
        ));
    };
    if list.paths.iter().any(|p| same_path(p, path)) {
        return Ok(text.to_string());
    }
    let line = line_number(text, list.key_offset);
    let block_ok = !list.flow_context;
    let edited = match &list.shape {
        Shape::Block(items) => {
            let (last, dash) = items.last().expect("a block list has items");
            let dash_indent = &text[line_start(text, *dash)..*dash];
            let at = line_end(text, last.end);
            let item = format!("{dash_indent}- {}", scalar(path));
            super::text::splice(text, at..at, &new_line(text, at, &item))
        }
        Shape::Flow { open, close, items } => {
            let canonical = items.is_empty() && close == &(open + 1) && !list.decorated;
            if canonical && block_ok {
                // `components: []`, the generated form, becomes a block list.
                let start = text[..*open].trim_end_matches(' ').len();
                let without = super::text::splice(text, start..close + 1, "");
                block_after_key(&without, list.key_offset, path)
            } else {
                let l = List::new(text, *open, *close, items.clone(), Syntax::Yaml, true);
                list::apply(text, l.append(&[flow_scalar(path)]))
            }
        }
        Shape::Null(value) => {
            if block_ok {
                let without = match value {
                    Some(r) => {
                        let start = text[..r.start].trim_end_matches(' ').len();
                        super::text::splice(text, start..r.end, "")
                    }
                    None => text.to_string(),
                };
                // The empty form comes back when the last item goes: the key line says which.
                let form = value.as_ref().map_or(NO_VALUE, |r| &text[r.clone()]);
                let at = list.properties_end;
                let marked =
                    super::text::splice(&without, at..at, &format!(" {}", null_mark(form)));
                block_after_key(&marked, list.key_offset, path)
            } else {
                let item = format!("[{}]", flow_scalar(path));
                match value {
                    Some(r) => super::text::splice(text, r.clone(), &item),
                    None => super::text::splice(
                        text,
                        list.properties_end..list.properties_end,
                        &format!(" {item}"),
                    ),
                }
            }
        }
    };
    let mut paths = list.paths.clone();
    paths.push(path.to_string());
    verify(edited, &with_components(&value, &paths), line, LIST_ADVICE)
}

/// The empty forms of `spec.components` that are null, and how the key line names them while
/// the list has items (`components: # cellgen: ~ when empty`), so that removing the last item
/// gives back the very bytes the first add replaced. (`[]`, cellgen's own form, needs no mark.)
const NULL_FORMS: [&str; 5] = ["~", "null", "Null", "NULL", NO_VALUE];
const NO_VALUE: &str = "no value";

fn null_mark(form: &str) -> String {
    format!("# cellgen: {form} when empty")
}

/// A block list of one item under the key at `key_offset` (whose value has been dropped).
fn block_after_key(text: &str, key_offset: usize, path: &str) -> String {
    let key_indent = super::text::indent_at(text, key_offset);
    let at = line_end(text, key_offset);
    let item = format!("{}  - {}", " ".repeat(key_indent), scalar(path));
    super::text::splice(text, at..at, &new_line(text, at, &item))
}

/// `line` as a line of its own at `at` (a line start, or the end of a text without a final
/// newline, which stays without one).
fn new_line(text: &str, at: usize, line: &str) -> String {
    if text[..at].ends_with('\n') || at == 0 {
        format!("{line}\n")
    } else {
        format!("\n{line}")
    }
}

/// Removes `path` from `spec.components`; removing the last item of a block list leaves
/// `components: []`, the form cellgen generates, or the null form the list had before its first
/// item (`NULL_FORMS`).
pub fn remove_flux_component(text: &str, path: &str) -> Result<String, YamlEditError> {
    let (doc, value) = parse(text)?;
    let Some(list) = components(text, &doc, &value)? else {
        return Ok(text.to_string());
    };
    let Some(index) = list.paths.iter().position(|p| same_path(p, path)) else {
        return Ok(text.to_string());
    };
    let line = line_number(text, list.key_offset);
    let mut emptied_to_null = false;
    let edited = match &list.shape {
        Shape::Null(_) => unreachable!("a null list has no items"),
        Shape::Flow { open, close, items } => {
            let l = List::new(text, *open, *close, items.clone(), Syntax::Yaml, true);
            list::apply(text, l.remove(&[index]))
        }
        Shape::Block(items) => {
            let (item, dash) = &items[index];
            let mut start = line_start(text, *dash);
            let end = line_end(text, item.end);
            if end == text.len() && !text.ends_with('\n') && start > 0 {
                // The last line has no newline: the one before it goes instead.
                start -= 1;
            }
            let mut edits = vec![list::Edit::delete(start..end)];
            if items.len() == 1 {
                let at = list.properties_end;
                let after_key = text[at..line_end(text, at)].trim_end_matches(['\n', '\r']);
                let marked = NULL_FORMS
                    .iter()
                    .map(|form| (form, format!(" {}", null_mark(form))))
                    .find(|(_, mark)| {
                        after_key == mark || after_key.starts_with(&format!("{mark} #"))
                    });
                emptied_to_null = marked.is_some();
                edits.push(match marked {
                    Some((form, mark)) => list::Edit {
                        range: at..at + mark.len(),
                        with: if *form == NO_VALUE {
                            String::new()
                        } else {
                            format!(" {form}")
                        },
                    },
                    None => list::Edit::insert(at, " []"),
                });
            }
            list::apply(text, edits)
        }
    };
    let mut paths = list.paths.clone();
    paths.remove(index);
    let mut expected = with_components(&value, &paths);
    if emptied_to_null && let Some(Value::Mapping(spec)) = expected.get_mut("spec") {
        spec.insert(Value::String("components".into()), Value::Null);
    }
    verify(edited, &expected, line, LIST_ADVICE)
}

#[cfg(test)]
mod tests;
