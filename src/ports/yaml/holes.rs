//! [`yaml_to_json`](super::yaml_to_json) for a text with marked scalars ("holes"), and the
//! value of the same text with other words in the holes, without parsing it again. Substitution
//! uses it: an object's text is parsed once with a placeholder in place of each `${...}`, and
//! each cell's result is that value with the cell's words in the holes, where the words cannot
//! change how the text is read (see `substitute::memo`).

use std::borrow::Cow;

use serde_json::Value;

use super::events::ScalarStyle;
use super::tree::{self, Kind};
use super::{LoadError, Seg, V2, scalar_json};

/// A scalar holding a mark: where its value is, how it is resolved, and its text.
#[derive(Debug, Clone)]
pub struct Hole {
    pub path: Vec<Seg>,
    /// The tag [`V2`] resolves the scalar with ("" for a plain scalar without a tag: resolved
    /// from its text).
    tag: Cow<'static, str>,
    pub value: String,
    line: usize,
}

/// `yaml_to_json(text)` and the scalars whose text `marked` says hold a mark; `None` when the
/// text does not read as one document, has aliases or merge keys, a mark in a key, or a hole
/// whose place the value does not hold (a key given twice).
pub fn with_holes(text: &str, marked: &dyn Fn(&str) -> bool) -> Option<(Value, Vec<Hole>)> {
    let doc = tree::parse_first(text, true).ok()??;
    if doc.needs_deanchor {
        return None;
    }
    let conv = V2::new(&doc);
    let value = conv.value(doc.root, 0).ok()?;
    let mut holes = Vec::new();
    walk(&conv, doc.root, &mut Vec::new(), marked, &mut holes)?;
    for hole in &holes {
        if at(&value, &hole.path) != Some(&hole.resolve(&hole.value).ok()?) {
            return None;
        }
    }
    Some((value, holes))
}

fn walk(
    conv: &V2,
    i: usize,
    path: &mut Vec<Seg>,
    marked: &dyn Fn(&str) -> bool,
    holes: &mut Vec<Hole>,
) -> Option<()> {
    let node = &conv.doc.nodes[i];
    match &node.kind {
        Kind::Scalar(s) => {
            if marked(&s.value) {
                // As V2::value picks the tag.
                let tag = if s.explicit || s.style != ScalarStyle::Plain {
                    s.tag.clone()
                } else {
                    Cow::Borrowed("")
                };
                holes.push(Hole {
                    path: path.clone(),
                    tag,
                    value: s.value.clone(),
                    line: node.line,
                });
            }
        }
        Kind::Seq(items) => {
            for (n, &item) in items.iter().enumerate() {
                path.push(Seg::Index(n));
                walk(conv, item, path, marked, holes)?;
                path.pop();
            }
        }
        Kind::Map(items) => {
            for pair in items.chunks(2) {
                let key = conv.doc.scalar(pair[0])?;
                if marked(&key.value) || key.value == "<<" {
                    return None;
                }
                let Ok(Value::String(key)) = conv.value(pair[0], 0) else {
                    return None;
                };
                path.push(Seg::Key(key));
                walk(conv, pair[1], path, marked, holes)?;
                path.pop();
            }
        }
        Kind::Alias(_) => return None,
    }
    Some(())
}

impl Hole {
    /// The value the scalar has with `text` as its text.
    pub fn resolve(&self, text: &str) -> Result<Value, LoadError> {
        scalar_json(super::resolve::resolve(&self.tag, text, true), self.line)
    }
}

/// `template` with each hole's value replaced by its text in `texts` (one per hole), resolved
/// as the hole's scalar is; an error when a value cannot be resolved.
pub fn fill(template: &Value, holes: &[Hole], texts: &[String]) -> Result<Value, LoadError> {
    let mut out = template.clone();
    for (hole, text) in holes.iter().zip(texts) {
        let value = hole.resolve(text)?;
        let Some(slot) = at_mut(&mut out, &hole.path) else {
            return Err(LoadError::Fails("a hole's place is gone".into()));
        };
        *slot = value;
    }
    Ok(out)
}

fn at<'a>(value: &'a Value, path: &[Seg]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, seg| match seg {
        Seg::Key(k) => v.get(k),
        Seg::Index(n) => v.get(n),
    })
}

fn at_mut<'a>(value: &'a mut Value, path: &[Seg]) -> Option<&'a mut Value> {
    path.iter().try_fold(value, |v, seg| match seg {
        Seg::Key(k) => v.get_mut(k),
        Seg::Index(n) => v.get_mut(n),
    })
}
