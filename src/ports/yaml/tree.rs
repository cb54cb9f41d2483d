//! One YAML document as go-yaml's node tree (an arena), and kyaml's `DeAnchor`: aliases
//! replaced by copies of what they name, merge keys (`<<`) folded in, in kyaml's order.

use std::collections::HashMap;

use super::LoadError;
use super::events::{Event, Parser, ScalarStyle};
use super::resolve::{self, MERGE, STR};

/// Deeper nesting (indentation included) is refused: kustomize recurses on it too, and a bound
/// keeps every walk of the tree safe. Bracket nesting is bounded far lower, before parsing
/// (`crate::ports::yaml::depth`).
pub const MAX_DEPTH: usize = 512;

#[derive(Debug, Clone)]
pub struct Scalar {
    pub value: String,
    pub style: ScalarStyle,
    /// The tag go-yaml's parser gives the node (short form): explicit, or `!!str` for a
    /// quoted/block scalar, `!!merge` for a plain `<<`, else resolved from the text.
    pub tag: std::borrow::Cow<'static, str>,
    /// Whether the tag was written in the document.
    pub explicit: bool,
}

#[derive(Debug, Clone)]
pub enum Kind {
    Scalar(Scalar),
    Seq(Vec<usize>),
    /// Keys and values alternating, as go-yaml's Content.
    Map(Vec<usize>),
    Alias(usize),
}

#[derive(Debug, Clone)]
pub struct Node {
    pub kind: Kind,
    pub line: usize,
}

pub struct Doc {
    pub nodes: Vec<Node>,
    pub root: usize,
    /// Whether the document has aliases or merge keys (else DeAnchor changes nothing).
    pub needs_deanchor: bool,
    /// Node budget: copies made for aliases may not exceed it (billion laughs).
    budget: usize,
}

impl Doc {
    fn push(&mut self, node: Node) -> Result<usize, LoadError> {
        if self.nodes.len() >= self.budget {
            return Err(LoadError::Fails(format!(
                "aliases expand the document beyond {} nodes",
                self.budget
            )));
        }
        self.nodes.push(node);
        Ok(self.nodes.len() - 1)
    }

    pub fn scalar(&self, i: usize) -> Option<&Scalar> {
        match &self.nodes[i].kind {
            Kind::Scalar(s) => Some(s),
            _ => None,
        }
    }

    fn is_merge_key(&self, i: usize) -> bool {
        self.scalar(i).is_some_and(|s| s.tag == MERGE)
    }
}

enum Open {
    Seq(usize),
    Map(usize),
}

/// Parses the first document of `text` (go-yaml's Decoder.Decode reads one). `None` for
/// a stream without a document. `v2` selects go-yaml v2's resolution for node tags.
pub fn parse_first(text: &str, v2: bool) -> Result<Option<Doc>, LoadError> {
    // Size and bracket nesting (libyaml is quadratic in it) are bounded before it parses.
    super::guard(text).map_err(|e| LoadError::Refused {
        line: e.line().unwrap_or(1),
        message: e.to_string(),
    })?;
    let mut parser = Parser::new(text);
    let mut doc = Doc {
        nodes: Vec::new(),
        root: 0,
        needs_deanchor: false,
        budget: 100_000 + 16 * text.len(),
    };
    let mut anchors: HashMap<String, usize> = HashMap::new();
    let mut stack: Vec<Open> = Vec::new();
    let mut root = None;
    loop {
        let (ev, line) = parser.next_event().map_err(|e| LoadError::Yaml {
            line: e.line,
            message: e.message,
        })?;
        let (anchor, node) = match ev {
            Event::StreamStart => continue,
            Event::StreamEnd => break,
            Event::DocumentStart => continue,
            Event::DocumentEnd => break,
            Event::Alias(name) => {
                let Some(&target) = anchors.get(&name) else {
                    return Err(LoadError::Yaml {
                        line,
                        message: format!("unknown anchor '{name}' referenced"),
                    });
                };
                doc.needs_deanchor = true;
                let open = |o: &Open| matches!(o, Open::Seq(i) | Open::Map(i) if *i == target);
                if stack.iter().any(open) {
                    return Err(LoadError::Fails(format!(
                        "line {line}: alias *{name} refers to a node that contains it"
                    )));
                }
                (
                    None,
                    Node {
                        kind: Kind::Alias(target),
                        line,
                    },
                )
            }
            Event::Scalar {
                anchor,
                tag,
                value,
                style,
            } => {
                let explicit = tag.as_deref().is_some_and(|t| t != "!");
                let tag: std::borrow::Cow<'static, str> = match tag.filter(|t| t != "!") {
                    Some(t) => resolve::short_tag(&t).into(),
                    None if style != ScalarStyle::Plain => STR.into(),
                    None => resolve::implicit_tag(&value, v2).into(),
                };
                doc.needs_deanchor |= tag == MERGE;
                let s = Scalar {
                    value,
                    style,
                    tag,
                    explicit,
                };
                (
                    anchor,
                    Node {
                        kind: Kind::Scalar(s),
                        line,
                    },
                )
            }
            Event::SequenceStart { anchor, tag } => {
                check_collection_tag(tag.as_deref(), "!!seq", line)?;
                (
                    anchor,
                    Node {
                        kind: Kind::Seq(Vec::new()),
                        line,
                    },
                )
            }
            Event::MappingStart { anchor, tag } => {
                check_collection_tag(tag.as_deref(), "!!map", line)?;
                (
                    anchor,
                    Node {
                        kind: Kind::Map(Vec::new()),
                        line,
                    },
                )
            }
            Event::SequenceEnd | Event::MappingEnd => {
                stack.pop();
                continue;
            }
        };
        let is_collection = matches!(node.kind, Kind::Seq(_) | Kind::Map(_));
        let i = doc.push(node)?;
        if let Some(a) = anchor {
            anchors.insert(a, i);
        }
        match stack.last() {
            Some(Open::Seq(p) | Open::Map(p)) => match &mut doc.nodes[*p].kind {
                Kind::Seq(items) | Kind::Map(items) => items.push(i),
                _ => unreachable!("open collections are sequences or mappings"),
            },
            None => root = Some(i),
        }
        if is_collection {
            if stack.len() >= MAX_DEPTH {
                return Err(LoadError::Yaml {
                    line,
                    message: format!("nesting deeper than {MAX_DEPTH} levels"),
                });
            }
            stack.push(match doc.nodes[i].kind {
                Kind::Seq(_) => Open::Seq(i),
                _ => Open::Map(i),
            });
        }
    }
    Ok(root.map(|r| {
        doc.root = r;
        doc
    }))
}

/// Tags on collections: go-yaml decodes them as plain collections; anything but the
/// standard ones is refused rather than guessed about.
fn check_collection_tag(tag: Option<&str>, std: &str, line: usize) -> Result<(), LoadError> {
    match tag.map(resolve::short_tag) {
        None => Ok(()),
        Some(t) if t == std || t == "!" => Ok(()),
        Some(t) => Err(LoadError::Unsupported(format!(
            "line {line}: the `{t}` tag on a collection"
        ))),
    }
}

impl Doc {
    /// A deep copy of node `i` (aliases copied as aliases).
    fn copy(&mut self, i: usize) -> Result<usize, LoadError> {
        let node = self.nodes[i].clone();
        let kind = match node.kind {
            Kind::Seq(items) => Kind::Seq(self.copy_all(&items)?),
            Kind::Map(items) => Kind::Map(self.copy_all(&items)?),
            other => other,
        };
        self.push(Node { kind, ..node })
    }

    fn copy_all(&mut self, items: &[usize]) -> Result<Vec<usize>, LoadError> {
        items.iter().map(|&c| self.copy(c)).collect()
    }

    /// kyaml's deAnchor (rnode.go): returns the node to use in place of `i`.
    pub fn deanchor(&mut self, i: usize, depth: usize) -> Result<usize, LoadError> {
        if depth > MAX_DEPTH {
            return Err(LoadError::Fails(format!(
                "aliases nest deeper than {MAX_DEPTH} levels"
            )));
        }
        let alias_target = match &self.nodes[i].kind {
            Kind::Scalar(_) => return Ok(i),
            Kind::Alias(target) => Some(*target),
            _ => None,
        };
        match (alias_target, &self.nodes[i].kind) {
            (Some(target), _) => {
                let resolved = self.deanchor(target, depth + 1)?;
                self.copy(resolved)
            }
            (None, Kind::Map(_)) => {
                let to_merge = self.remove_merge_tags(i)?;
                if !to_merge.is_empty() {
                    self.merge_all(i, &to_merge)?;
                }
                self.deanchor_children(i, depth)
            }
            _ => self.deanchor_children(i, depth),
        }
    }

    fn deanchor_children(&mut self, i: usize, depth: usize) -> Result<usize, LoadError> {
        let items = match &mut self.nodes[i].kind {
            Kind::Seq(items) | Kind::Map(items) => std::mem::take(items),
            _ => return Ok(i),
        };
        let mut out = Vec::with_capacity(items.len());
        for c in items {
            out.push(self.deanchor(c, depth + 1)?);
        }
        if let Kind::Seq(items) | Kind::Map(items) = &mut self.nodes[i].kind {
            *items = out;
        }
        Ok(i)
    }

    /// Removes the merge key of mapping `i` and returns what it merges, in kyaml's order.
    fn remove_merge_tags(&mut self, i: usize) -> Result<Vec<usize>, LoadError> {
        let Kind::Map(items) = &self.nodes[i].kind else {
            return Ok(Vec::new());
        };
        let items = items.clone();
        let merges: Vec<usize> = (0..items.len() / 2)
            .filter(|p| self.is_merge_key(items[2 * p]))
            .collect();
        let Some(&p) = merges.first() else {
            return Ok(Vec::new());
        };
        if merges.len() > 1 {
            return Err(LoadError::Fails("duplicate merge key".into()));
        }
        // kyaml removes the first field *named* `<<`; a quoted "<<" key or an explicit
        // !!merge tag on another text makes that a different field.
        let named_first = (0..items.len() / 2)
            .find(|q| self.scalar(items[2 * q]).is_some_and(|s| s.value == "<<"));
        let key = self.scalar(items[2 * p]).cloned();
        if named_first != Some(p) || key.is_some_and(|k| k.explicit) {
            return Err(LoadError::Unsupported(
                "a merge key next to a quoted \"<<\" key, or an explicit !!merge tag".into(),
            ));
        }
        let to_merge = self.find_merge_values(items[2 * p + 1])?;
        if let Kind::Map(items) = &mut self.nodes[i].kind {
            items.drain(2 * p..2 * p + 2);
        }
        Ok(to_merge)
    }

    fn find_merge_values(&self, v: usize) -> Result<Vec<usize>, LoadError> {
        match &self.nodes[v].kind {
            Kind::Map(_) => Ok(vec![v]),
            Kind::Alias(t) => match self.nodes[*t].kind {
                Kind::Map(_) => Ok(vec![*t]),
                _ => Err(LoadError::Fails(
                    "invalid map merge: received alias for a non-map value".into(),
                )),
            },
            Kind::Seq(items) => {
                let mut out: Vec<usize> = Vec::new();
                for &e in items {
                    if matches!(self.nodes[e].kind, Kind::Seq(_)) {
                        return Err(LoadError::Fails(
                            "invalid map merge: received a nested sequence".into(),
                        ));
                    }
                    let mut vals = self.find_merge_values(e)?;
                    vals.extend(out);
                    out = vals;
                }
                Ok(out)
            }
            Kind::Scalar(_) => Err(LoadError::Fails(
                "map merge requires map or sequence of maps as the value".into(),
            )),
        }
    }

    /// kyaml's mergeAll: every merged mapping's fields, then the mapping's own, set in turn
    /// (a later set replaces the first field of that name).
    fn merge_all(&mut self, i: usize, to_merge: &[usize]) -> Result<(), LoadError> {
        let own = match &self.nodes[i].kind {
            Kind::Map(items) => items.clone(),
            _ => return Ok(()),
        };
        let mut result = self.copy_all(&own)?;
        for &src in to_merge.iter().chain(std::iter::once(&i)) {
            let fields = match &self.nodes[src].kind {
                Kind::Map(items) => items.clone(),
                _ => continue,
            };
            let fields = if src == i { own.clone() } else { fields };
            let fields = self.copy_all(&fields)?;
            for pair in fields.chunks(2) {
                let name = self.scalar(pair[0]).map(|s| s.value.clone());
                let found = (0..result.len() / 2)
                    .find(|q| self.scalar(result[2 * q]).map(|s| &s.value) == name.as_ref());
                match found {
                    Some(q) => {
                        result[2 * q] = pair[0];
                        result[2 * q + 1] = pair[1];
                    }
                    None => result.extend_from_slice(pair),
                }
            }
        }
        if let Kind::Map(items) = &mut self.nodes[i].kind {
            *items = result;
        }
        Ok(())
    }
}
