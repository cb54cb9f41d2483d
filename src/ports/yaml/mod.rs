//! Reading YAML exactly as kustomize does, into JSON values.
//!
//! kustomize reads two ways. Resources and strategic-merge patches go through kyaml
//! (`kio.FromBytes`): the text is split at `---` lines, each part decoded with go-yaml v3
//! into a node tree, anchors and merge keys (`<<`) expanded (`DeAnchor`), and at the end
//! every object becomes JSON by emitting its tree and reading it back into Go values
//! (`RNode.MarshalJSON`): YAML 1.1 octals (`0775` is 509), timestamps as RFC 3339 strings,
//! go-yaml's folded-scalar bug. Kustomization files, JSON patches and configuration files go
//! through sigs.k8s.io/yaml (`YAMLToJSON`, go-yaml v2: `yes`/`on` are booleans, timestamps
//! stay text, keys become strings). Both are reproduced here on top of libyaml's parser;
//! what this port does not reproduce is reported as unsupported, never guessed.

pub mod depth;
mod entry;
mod events;
mod folded;
pub mod holes;
pub mod resolve;
mod tree;

use serde_json::{Map, Number, Value};

use resolve::{Resolved, STR, Unresolved};
use tree::{Doc, Kind};

pub use entry::{MAX_BYTES, YamlError, documents, from_str, guard, lossless};
pub use events::ScalarStyle;

/// Why a text did not load.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadError {
    /// libyaml (and go-yaml) reject the text; 1-based line in the whole text.
    Yaml { line: usize, message: String },
    /// go-yaml/kustomize accept the syntax but fail on the content.
    Fails(String),
    /// kustomize accepts it; this port does not reproduce it.
    Unsupported(String),
    /// cellgen refuses it before parsing ([`guard`]); 1-based line in the whole text.
    Refused { line: usize, message: String },
}

/// One part of a kyaml-split stream.
struct Part<'a> {
    text: std::borrow::Cow<'a, str>,
    /// Lines before this part in the whole text.
    line_offset: usize,
}

/// kio.ByteReader's splitDocuments: `\n---.*\n` separates documents; anything but a
/// comment after the dashes is an error. Every part but the last keeps its final newline.
fn split_documents(s: &str) -> Result<Vec<Part<'_>>, LoadError> {
    let mut parts = Vec::new();
    let bytes = s.as_bytes();
    let (mut prev, mut search, mut line) = (0, 0, 0);
    while let Some(rel) = s[search..].find("\n---") {
        let start = search + rel;
        let Some(eol) = s[start + 1..].find('\n').map(|e| start + 1 + e) else {
            break;
        };
        let after = s[start + 4..eol].trim();
        if !after.is_empty() && !after.starts_with('#') {
            return Err(LoadError::Yaml {
                line: line + s[prev..start].matches('\n').count() + 2,
                message: format!("invalid document separator: {}", s[start + 1..eol].trim()),
            });
        }
        parts.push(Part {
            text: format!("{}\n", &s[prev..start]).into(),
            line_offset: line,
        });
        line += bytes[prev..=eol].iter().filter(|&&b| b == b'\n').count();
        prev = eol + 1;
        search = prev;
    }
    if !s.is_empty() {
        parts.push(Part {
            text: s[prev..].into(),
            line_offset: line,
        });
    }
    Ok(parts)
}

fn shift(e: LoadError, offset: usize) -> LoadError {
    match e {
        LoadError::Yaml { line, message } => LoadError::Yaml {
            line: line + offset,
            message,
        },
        LoadError::Refused { line, message } => LoadError::Refused {
            line: line + offset,
            message,
        },
        other => other,
    }
}

/// A document read the kyaml way, before its conversion to JSON.
pub struct KDoc {
    doc: Doc,
    /// The kio reader found the stream to be this single document.
    pub only_document: bool,
    line_offset: usize,
}

/// kio.FromBytes: the non-empty documents of a stream, anchors expanded.
pub fn kio_documents(text: &str) -> Result<Vec<KDoc>, LoadError> {
    let text = text.replace("\r\n", "\n");
    let parts = split_documents(&text)?;
    let only = parts.len() == 1;
    let mut out = Vec::new();
    for part in &parts {
        let Some(mut doc) =
            tree::parse_first(&part.text, false).map_err(|e| shift(e, part.line_offset))?
        else {
            continue;
        };
        if doc.scalar(doc.root).is_some_and(|s| s.tag == "!!null") {
            continue;
        }
        if doc.needs_deanchor {
            let root = doc
                .deanchor(doc.root, 0)
                .map_err(|e| shift(e, part.line_offset))?;
            doc.root = root;
        }
        out.push(KDoc {
            doc,
            only_document: only,
            line_offset: part.line_offset,
        });
    }
    Ok(out)
}

impl KDoc {
    /// The document as kustomize's final JSON (`MarshalJSON`). `folded_bug` is false where
    /// kustomize decodes the nodes without re-emitting them (items of List kinds).
    pub fn to_json(&self, folded_bug: bool) -> Result<Value, LoadError> {
        self.to_json_marked(folded_bug).map(|(v, _)| v)
    }

    /// The JSON, and where it holds nulls written with no text at all (`key:`): kyaml's
    /// strategic merge drops those from the objects it merges into, and keeps other nulls.
    pub fn to_json_marked(&self, folded_bug: bool) -> Result<(Value, Vec<JsonPath>), LoadError> {
        let conv = V3 {
            doc: &self.doc,
            folded_bug,
            path: Default::default(),
            empty_nulls: Default::default(),
        };
        let v = conv
            .value(self.doc.root, 0)
            .map_err(|e| shift(e, self.line_offset))?;
        Ok((v, conv.empty_nulls.into_inner()))
    }

    /// Whether the document is a mapping (objects are; a JSON patch list is not).
    pub fn is_mapping(&self) -> bool {
        matches!(self.doc.nodes[self.doc.root].kind, Kind::Map(_))
    }
}

/// A step into a JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

pub type JsonPath = Vec<Seg>;

struct V3<'a> {
    doc: &'a Doc,
    folded_bug: bool,
    path: std::cell::RefCell<JsonPath>,
    empty_nulls: std::cell::RefCell<Vec<JsonPath>>,
}

impl V3<'_> {
    fn value(&self, i: usize, depth: usize) -> Result<Value, LoadError> {
        let node = &self.doc.nodes[i];
        match &node.kind {
            Kind::Scalar(s) => {
                let mut text = std::borrow::Cow::Borrowed(s.value.as_str());
                if self.folded_bug && s.style == ScalarStyle::Folded {
                    let v = folded::roundtrip(&s.value).map_err(|what| {
                        LoadError::Unsupported(format!("line {}: {what}", node.line))
                    })?;
                    text = v.into();
                }
                let tag = if s.explicit || s.style != ScalarStyle::Plain {
                    s.tag.as_ref()
                } else {
                    ""
                };
                let r = resolve::resolve(tag, &text, false);
                let v = scalar_json(r, node.line)?;
                if self.folded_bug
                    && v.is_null()
                    && s.value.is_empty()
                    && s.style == ScalarStyle::Plain
                    && !s.explicit
                {
                    self.empty_nulls
                        .borrow_mut()
                        .push(self.path.borrow().clone());
                }
                Ok(v)
            }
            Kind::Seq(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (n, &c) in items.iter().enumerate() {
                    self.path.borrow_mut().push(Seg::Index(n));
                    let v = self.value(c, depth + 1);
                    self.path.borrow_mut().pop();
                    out.push(v?);
                }
                Ok(Value::Array(out))
            }
            Kind::Map(items) => {
                let mut m = Map::new();
                for pair in items.chunks(2) {
                    let key = self.key(pair[0])?;
                    let line = self.doc.nodes[pair[0]].line;
                    if m.contains_key(&key) {
                        return Err(LoadError::Fails(format!(
                            "line {line}: mapping key \"{key}\" already defined"
                        )));
                    }
                    self.path.borrow_mut().push(Seg::Key(key.clone()));
                    let v = if self.folded_bug
                        && depth == 1
                        && key == "annotations"
                        && self.in_metadata(i)
                    {
                        self.annotations(pair[1])
                    } else {
                        self.value(pair[1], depth + 1)
                    };
                    self.path.borrow_mut().pop();
                    m.insert(key, v?);
                }
                Ok(Value::Object(m))
            }
            Kind::Alias(_) => Err(LoadError::Unsupported("an unexpanded alias".into())),
        }
    }

    /// Whether mapping `i` is the document's top-level `metadata`.
    fn in_metadata(&self, i: usize) -> bool {
        let Kind::Map(top) = &self.doc.nodes[self.doc.root].kind else {
            return false;
        };
        top.chunks(2)
            .any(|p| p[1] == i && self.doc.scalar(p[0]).is_some_and(|k| k.value == "metadata"))
    }

    /// An object's annotations as kustomize prints them: it rewrites them from their text
    /// at the end of every build (RemoveBuildAnnotations), so a scalar keeps its text as a
    /// string and a collection becomes "".
    fn annotations(&self, i: usize) -> Result<Value, LoadError> {
        let Kind::Map(items) = &self.doc.nodes[i].kind else {
            return self.value(i, 2);
        };
        if items.is_empty() {
            return Ok(Value::Object(Map::new()));
        }
        let mut m = Map::new();
        for pair in items.chunks(2) {
            let key = self.key(pair[0])?;
            let v = match &self.doc.nodes[pair[1]].kind {
                Kind::Scalar(s) => s.value.clone(),
                _ => String::new(),
            };
            m.insert(key, Value::String(v));
        }
        Ok(Value::Object(m))
    }

    /// A mapping key: go-yaml decodes a map with any non-string key into a type
    /// json.Marshal rejects.
    fn key(&self, i: usize) -> Result<String, LoadError> {
        let node = &self.doc.nodes[i];
        match &node.kind {
            Kind::Scalar(s) if s.tag == STR => Ok(s.value.clone()),
            Kind::Scalar(s) => Err(LoadError::Fails(format!(
                "line {}: map key `{}` is a {}, not a string (json: unsupported type)",
                node.line, s.value, s.tag
            ))),
            _ => Err(LoadError::Fails(format!(
                "line {}: invalid map key (a collection)",
                node.line
            ))),
        }
    }
}

fn scalar_json(r: Result<Resolved, Unresolved>, line: usize) -> Result<Value, LoadError> {
    let r = r.map_err(|e| match e {
        Unresolved::Fails(m) => LoadError::Fails(format!("line {line}: {m}")),
        Unresolved::Unsupported(m) => LoadError::Unsupported(format!("line {line}: {m}")),
    })?;
    Ok(match r {
        Resolved::Null => Value::Null,
        Resolved::Bool(b) => Value::Bool(b),
        Resolved::Int(i) => Value::from(i),
        Resolved::Uint(u) => Value::from(u),
        Resolved::Str(s) => Value::String(s),
        Resolved::Float(f) => float_json(f).ok_or_else(|| {
            LoadError::Fails(format!("line {line}: json: unsupported value: {f}"))
        })?,
    })
}

/// A float64 as json.Marshal prints it and sigs.k8s.io/yaml reads it back: integral values
/// below 1e21 print without a fraction and come back as integers.
pub fn float_json(f: f64) -> Option<Value> {
    if !f.is_finite() {
        return None;
    }
    if f.fract() == 0.0 && f.abs() < 1e21 {
        if f >= i64::MIN as f64 && f < i64::MAX as f64 {
            return Some(Value::from(f as i64));
        }
        if f >= 0.0 && f < u64::MAX as f64 {
            return Some(Value::from(f as u64));
        }
    }
    Number::from_f64(f).map(Value::Number)
}

/// sigs.k8s.io/yaml's YAMLToJSON: the first document, read by go-yaml v2 (`Ok(None)` for an
/// empty text).
pub fn yaml_to_json(text: &str) -> Result<Option<Value>, LoadError> {
    let Some(doc) = tree::parse_first(text, true)? else {
        return Ok(None);
    };
    let conv = V2::new(&doc);
    conv.value(doc.root, 0).map(Some)
}

pub(crate) struct V2<'a> {
    doc: &'a Doc,
    /// go-yaml v2's decodeCount and aliasCount (nodes decoded, of which through an alias).
    decoded: std::cell::Cell<usize>,
    aliased: std::cell::Cell<usize>,
}

impl<'a> V2<'a> {
    pub(crate) fn new(doc: &'a Doc) -> V2<'a> {
        V2 {
            doc,
            decoded: Default::default(),
            aliased: Default::default(),
        }
    }

    fn target(&self, mut i: usize) -> usize {
        while let Kind::Alias(t) = self.doc.nodes[i].kind {
            i = t;
        }
        i
    }

    /// go-yaml v2 (2.2.8 on)'s guard against alias bombs: past 100 aliased and 1,000 decoded
    /// nodes, too high a share of aliased ones fails ("excessive aliasing"), the share allowed
    /// falling from 0.99 at 400,000 nodes to 0.10 at 4,000,000. Counted per node this port visits.
    fn count(&self, through_alias: bool) -> Result<(), LoadError> {
        let decoded = self.decoded.get() + 1;
        self.decoded.set(decoded);
        let aliased = self.aliased.get() + usize::from(through_alias);
        self.aliased.set(aliased);
        let allowed = match decoded {
            ..=400_000 => 0.99,
            4_000_000.. => 0.10,
            n => 0.99 - 0.89 * ((n - 400_000) as f64 / 3_600_000.0),
        };
        if aliased > 100 && decoded > 1_000 && aliased as f64 / decoded as f64 > allowed {
            return Err(LoadError::Fails(
                "document contains excessive aliasing".into(),
            ));
        }
        Ok(())
    }

    fn value(&self, i: usize, depth: usize) -> Result<Value, LoadError> {
        self.value_in(i, depth, false)
    }

    fn value_in(&self, i: usize, depth: usize, in_alias: bool) -> Result<Value, LoadError> {
        if depth > tree::MAX_DEPTH {
            return Err(LoadError::Fails(format!(
                "aliases nest deeper than {} levels",
                tree::MAX_DEPTH
            )));
        }
        let in_alias = in_alias || matches!(self.doc.nodes[i].kind, Kind::Alias(_));
        self.count(in_alias)?;
        let i = self.target(i);
        let node = &self.doc.nodes[i];
        match &node.kind {
            Kind::Scalar(s) => {
                let tag = if s.explicit || s.style != ScalarStyle::Plain {
                    s.tag.as_ref()
                } else {
                    ""
                };
                scalar_json(resolve::resolve(tag, &s.value, true), node.line)
            }
            Kind::Seq(items) => items
                .iter()
                .map(|&c| self.value_in(c, depth + 1, in_alias))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array),
            Kind::Map(_) => {
                let mut m = Map::new();
                self.fill(i, &mut m, depth, in_alias)?;
                Ok(Value::Object(m))
            }
            Kind::Alias(_) => unreachable!("target() follows aliases"),
        }
    }

    /// go-yaml v2's decoder.mapping: fields in order, later ones replacing earlier ones; a
    /// merge key sets the merged mapping's fields at its place (earlier list items win).
    fn fill(
        &self,
        i: usize,
        m: &mut Map<String, Value>,
        depth: usize,
        in_alias: bool,
    ) -> Result<(), LoadError> {
        let Kind::Map(items) = &self.doc.nodes[i].kind else {
            return Err(LoadError::Fails(
                "map merge requires map or sequence of maps as the value".into(),
            ));
        };
        for pair in items.chunks(2) {
            let key_node = self.target(pair[0]);
            let is_merge = self.doc.scalar(key_node).is_some_and(|s| {
                s.value == "<<" && (s.style == ScalarStyle::Plain || s.tag == resolve::MERGE)
            });
            if is_merge {
                let merged_alias =
                    in_alias || matches!(self.doc.nodes[pair[1]].kind, Kind::Alias(_));
                let v = self.target(pair[1]);
                match &self.doc.nodes[v].kind {
                    Kind::Seq(list) => {
                        for &e in list.iter().rev() {
                            let e = self.target(e);
                            if !matches!(self.doc.nodes[e].kind, Kind::Map(_)) {
                                return Err(LoadError::Fails(
                                    "map merge requires map or sequence of maps as the value"
                                        .into(),
                                ));
                            }
                            self.fill(e, m, depth + 1, merged_alias)?;
                        }
                    }
                    _ => self.fill(v, m, depth + 1, merged_alias)?,
                }
                continue;
            }
            let key = match self.value_in(key_node, depth + 1, in_alias)? {
                Value::String(s) => s,
                Value::Bool(b) => b.to_string(),
                Value::Number(n) if n.is_f64() => {
                    return Err(LoadError::Unsupported(format!("the float map key {n}")));
                }
                Value::Number(n) => n.to_string(),
                other => {
                    return Err(LoadError::Fails(format!(
                        "unsupported map key of type: {other}"
                    )));
                }
            };
            let v = self.value_in(pair[1], depth + 1, in_alias)?;
            m.insert(key, v);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn go_yaml_v2_refuses_an_alias_bomb_as_it_does() {
        // Nine copies of the level below, ten levels: 9^10 scalars if expanded.
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
        for c in b'b'..=b'k' {
            let (p, c) = ((c - 1) as char, c as char);
            text.push_str(&format!(
                "{c}: &{c} [{}]\n",
                vec![format!("*{p}"); 9].join(", ")
            ));
        }
        assert_eq!(
            yaml_to_json(&text),
            Err(LoadError::Fails(
                "document contains excessive aliasing".into()
            ))
        );
        // Ordinary reuse stays fine.
        let small = "a: &a {x: 1}\nb: *a\nc: [*a, *a]\n";
        assert!(yaml_to_json(small).is_ok());
    }

    fn kio(text: &str) -> Vec<Value> {
        kio_documents(text)
            .unwrap()
            .iter()
            .map(|d| d.to_json(true).unwrap())
            .collect()
    }

    #[test]
    fn splits_like_kio() {
        assert_eq!(
            kio("a: 1\n---\nb: 2\n"),
            vec![json!({"a": 1}), json!({"b": 2})]
        );
        assert_eq!(
            kio("a: 1\n--- # c\nb: 2"),
            vec![json!({"a": 1}), json!({"b": 2})]
        );
        assert!(matches!(
            kio_documents("a: 1\n--- x\nb: 2\n"),
            Err(LoadError::Yaml { line: 2, .. })
        ));
        // One decode per part: a second document after `...` is not read.
        assert_eq!(kio("a: 1\n...\nb: 2\n"), vec![json!({"a": 1})]);
    }

    #[test]
    fn merge_keys_as_kyaml() {
        let v =
            kio("base: &b {x: 1, y: 2}\nc:\n  <<: *b\n  y: 3\nd:\n  <<: [{x: 5}, {x: 6, z: 7}]\n");
        assert_eq!(v[0]["c"], json!({"x": 1, "y": 3}));
        assert_eq!(v[0]["d"], json!({"x": 5, "z": 7}));
        assert!(matches!(
            kio_documents("a:\n  <<: 1\n"),
            Err(LoadError::Fails(_))
        ));
    }

    #[test]
    fn billion_laughs_is_bounded() {
        let mut t = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let p = i - 1;
            t.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        assert!(matches!(kio_documents(&t), Err(LoadError::Fails(_))));
    }

    #[test]
    fn marks_nulls_written_without_text() {
        let d = kio_documents("a:\n  e:\n  n: null\n  l: [x, ]\n").unwrap();
        let (_, m) = d[0].to_json_marked(true).unwrap();
        assert_eq!(m, vec![vec![Seg::Key("a".into()), Seg::Key("e".into())]]);
    }

    #[test]
    fn v2_reads_yaml_1_1() {
        let v = yaml_to_json("a: yes\nb: 0775\nc: 2024-01-02\n1: x\n")
            .unwrap()
            .unwrap();
        assert_eq!(v, json!({"a": true, "b": 509, "c": "2024-01-02", "1": "x"}));
    }
}
