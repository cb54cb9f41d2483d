//! Pointing a finding at the line a person has to edit: the source file a rendered object came
//! from (or a patch that changed it), and in it the line of a `${...}` or of a field path.
//! Field paths are followed through block-style YAML by indentation, which is how manifests are
//! written; where the path cannot be followed (flow style, a field added by a patch), the deepest
//! line found is used.

use camino::{Utf8Path, Utf8PathBuf};
use std::collections::HashMap;
use std::sync::Arc;

use std::fmt;

use crate::ports::kustomize::Resource;
use crate::root::filestore::FileStore;

/// One step of a path into an object.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// A field path, shown the way the API server does (`spec.chart.spec.version`, `dependsOn[0]`).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct FieldPath(pub Vec<Step>);

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("<root>");
        }
        for (i, step) in self.0.iter().enumerate() {
            match step {
                Step::Key(k) if i == 0 => write!(f, "{k}")?,
                Step::Key(k) => write!(f, ".{k}")?,
                Step::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

impl FieldPath {
    pub(crate) fn with(&self, step: Step) -> FieldPath {
        let mut p = self.clone();
        p.0.push(step);
        p
    }
}

/// Source texts, read once (through the command's store), kept as text per thread.
pub struct SourceFiles {
    files: Arc<FileStore>,
    texts: HashMap<Utf8PathBuf, String>,
}

impl SourceFiles {
    pub fn new(root: &Utf8Path) -> SourceFiles {
        SourceFiles::reading(Arc::new(FileStore::new(root)))
    }

    /// Texts read through `files`, shared with the command's other readers.
    pub fn reading(files: Arc<FileStore>) -> SourceFiles {
        SourceFiles {
            files,
            texts: HashMap::new(),
        }
    }

    /// The store the texts are read through.
    pub fn files(&self) -> &FileStore {
        &self.files
    }

    pub fn text(&mut self, file: &Utf8Path) -> &str {
        let files = &self.files;
        self.texts
            .entry(file.to_path_buf())
            .or_insert_with(|| files.read_to_string(file).unwrap_or_default())
    }

    /// The file and line where `needle` (e.g. `${cluster_nam`) was written, for an object built
    /// from `resource`.
    pub fn locate(&mut self, resource: &Resource, needle: &str) -> (Utf8PathBuf, Option<usize>) {
        for file in std::iter::once(&resource.origin).chain(&resource.patched_by) {
            if let Some(line) = source_line_of(self.text(file), needle) {
                return (file.clone(), Some(line));
            }
        }
        (resource.origin.clone(), None)
    }

    /// The file and line of the field at `path` in the object `kind`/`name` built from
    /// `files[0]` (its origin) and patched by the others. `value`, the field's text, prefers the
    /// file that wrote it (a patch) over the one the path was merely found in.
    pub fn locate_field(
        &mut self,
        files: &[Utf8PathBuf],
        kind: &str,
        name: &str,
        path: &[Step],
        value: Option<&str>,
    ) -> (Utf8PathBuf, Option<usize>) {
        let Some(origin) = files.first() else {
            return (Utf8PathBuf::new(), None);
        };
        let mut partial: Option<(Utf8PathBuf, usize)> = None;
        let mut complete: Option<(Utf8PathBuf, usize)> = None;
        for (i, file) in files.iter().enumerate() {
            let text = self.text(file).to_string();
            let Some((line, whole)) = field_line(&text, kind, name, path, i == 0) else {
                continue;
            };
            let line_text = text.lines().nth(line - 1).unwrap_or("");
            if whole && value.is_none_or(|v| line_text.contains(v)) {
                return (file.clone(), Some(line));
            }
            if whole && complete.is_none() {
                complete = Some((file.clone(), line));
            } else if partial.is_none() {
                partial = Some((file.clone(), line));
            }
        }
        // An inline patch (a block string) cannot be followed by path: look for `key: value`.
        if let (Some(v), Some(Step::Key(key))) = (value, path.last()) {
            for file in files {
                let found = self.text(file).lines().position(|l| {
                    let t = l.trim_start().trim_start_matches("- ");
                    t.starts_with(&format!("{key}:")) && t.contains(v)
                });
                if let Some(at) = found {
                    return (file.clone(), Some(at + 1));
                }
            }
        }
        match complete.or(partial) {
            Some((file, line)) => (file, Some(line)),
            None => (origin.clone(), None),
        }
    }
}

/// The first line holding `needle` where it is not cut out of a longer name (`${cluster_nam`
/// must not match `${cluster_name}`), preferring lines that are not YAML comments: Flux never
/// substitutes a comment, kustomize drops them first.
pub fn source_line_of(text: &str, needle: &str) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let ends_in_name = needle.ends_with(is_name);
    let holds = |line: &str| {
        line.match_indices(needle)
            .any(|(at, _)| !ends_in_name || !line[at + needle.len()..].starts_with(is_name))
    };
    let lines = || text.lines().enumerate();
    lines()
        .find(|(_, l)| !l.trim_start().starts_with('#') && holds(l))
        .or_else(|| lines().find(|(_, l)| holds(l)))
        .map(|(i, _)| i + 1)
}

/// A significant line: not blank, not a comment.
#[derive(Clone, Copy)]
struct Line<'a> {
    no: usize,
    indent: usize,
    text: &'a str,
}

/// The documents of a YAML stream as significant lines.
fn documents(text: &str) -> Vec<Vec<Line<'_>>> {
    let mut docs = vec![Vec::new()];
    for (i, raw) in text.lines().enumerate() {
        if raw.starts_with("---") || raw.starts_with("...") {
            docs.push(Vec::new());
            continue;
        }
        let trimmed = raw.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(doc) = docs.last_mut() {
            doc.push(Line {
                no: i + 1,
                indent: raw.len() - trimmed.len(),
                text: trimmed,
            });
        }
    }
    docs.retain(|d| !d.is_empty());
    docs
}

/// The key of a `key: value` / `key:` line, unquoted.
fn key_of(text: &str) -> Option<&str> {
    let (key, rest) = if let Some(q) = text.strip_prefix('"') {
        let end = q.find('"')?;
        (&q[..end], &q[end + 1..])
    } else if let Some(q) = text.strip_prefix('\'') {
        let end = q.find('\'')?;
        (&q[..end], &q[end + 1..])
    } else {
        let end = text.find(':')?;
        (&text[..end], &text[end..])
    };
    let rest = rest.strip_prefix(':')?;
    (rest.is_empty() || rest.starts_with(' ')).then_some(key.trim_end())
}

fn top_value<'a>(doc: &[Line<'a>], key: &str) -> Option<&'a str> {
    doc.iter()
        .filter(|l| l.indent == 0)
        .find(|l| key_of(l.text) == Some(key))
        .map(|l| l.text[key.len() + 1..].trim().trim_matches(['"', '\'']))
}

fn metadata_name<'a>(doc: &[Line<'a>]) -> Option<&'a str> {
    let at = doc
        .iter()
        .position(|l| l.indent == 0 && key_of(l.text) == Some("metadata"))?;
    let block = &doc[at + 1..];
    let child = block.first()?.indent;
    block
        .iter()
        .take_while(|l| l.indent > 0)
        .find(|l| l.indent == child && key_of(l.text) == Some("name"))
        .map(|l| l.text["name:".len()..].trim().trim_matches(['"', '\'']))
}

/// The line of `path` in the document for `kind`/`name` (for an origin file) or in any document
/// (a patch file), and whether the whole path was found.
fn field_line(
    text: &str,
    kind: &str,
    name: &str,
    path: &[Step],
    origin: bool,
) -> Option<(usize, bool)> {
    let docs = documents(text);
    let mut order: Vec<&Vec<Line>> = Vec::new();
    let of_kind: Vec<&Vec<Line>> = docs
        .iter()
        .filter(|d| top_value(d, "kind") == Some(kind))
        .collect();
    // Rendered names gain prefixes, suffixes and hashes, and sources may hold `${...}`.
    let named = |d: &&Vec<Line>| metadata_name(d).is_some_and(|n| n == name);
    let similar = |d: &&Vec<Line>| {
        metadata_name(d).is_some_and(|n| !n.is_empty() && (name.contains(n) || n.contains("${")))
    };
    order.extend(of_kind.iter().filter(|d| named(d)));
    order.extend(of_kind.iter().filter(|d| !named(d) && similar(d)));
    order.extend(of_kind.iter().filter(|d| !named(d) && !similar(d)));
    if !origin || order.is_empty() {
        order.extend(docs.iter().filter(|d| top_value(d, "kind") != Some(kind)));
    }
    let mut best: Option<(usize, bool)> = None;
    for doc in order {
        match descend(doc, path) {
            Some((line, true)) => return Some((line, true)),
            Some(partial) if best.is_none() => best = Some(partial),
            _ => {}
        }
        if origin && best.is_some() {
            break;
        }
    }
    best
}

/// Follows `steps` into `block` (the lines of one node's children).
fn descend(block: &[Line], steps: &[Step]) -> Option<(usize, bool)> {
    let (step, rest) = steps.split_first()?;
    let indent = block.first()?.indent;
    let (at, sub): (usize, Vec<Line>) = match step {
        Step::Key(key) => {
            let i = block
                .iter()
                .position(|l| l.indent == indent && key_of(l.text) == Some(key))?;
            let mut sub: Vec<Line> = Vec::new();
            for l in &block[i + 1..] {
                // A sequence may sit at its key's indentation (`key:\n- a`).
                let compact_item = l.indent == indent && l.text.starts_with('-');
                if l.indent > indent || compact_item {
                    sub.push(*l);
                } else {
                    break;
                }
            }
            (block[i].no, sub)
        }
        Step::Index(n) => {
            let items: Vec<usize> = block
                .iter()
                .enumerate()
                .filter(|(_, l)| l.indent == indent && (l.text == "-" || l.text.starts_with("- ")))
                .map(|(i, _)| i)
                .collect();
            let i = *items.get(*n)?;
            let item = block[i];
            let mut sub = Vec::new();
            let inline = item.text.trim_start_matches('-').trim_start();
            if !inline.is_empty() {
                sub.push(Line {
                    no: item.no,
                    indent: indent + (item.text.len() - inline.len()),
                    text: inline,
                });
            }
            sub.extend(block[i + 1..].iter().take_while(|l| l.indent > indent));
            (item.no, sub)
        }
    };
    if rest.is_empty() {
        return Some((at, true));
    }
    Some(descend(&sub, rest).unwrap_or((at, false)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> Step {
        Step::Key(k.into())
    }

    #[test]
    fn source_line_of_respects_name_ends_and_skips_comments() {
        let text = "# uses ${cluster_nam}\na: ${cluster_name}\nb: ${cluster_nam}\nc: ${\n";
        assert_eq!(source_line_of(text, "${cluster_nam"), Some(3));
        assert_eq!(source_line_of(text, "${cluster_name"), Some(2));
        assert_eq!(source_line_of(text, "${"), Some(2));
        assert_eq!(source_line_of("# only ${x}\n", "${x"), Some(1));
        assert_eq!(source_line_of("a: ${xy}\n", "${x"), None);
        assert_eq!(source_line_of("a\n", ""), None);
    }

    const TEXT: &str = "\
# a comment
apiVersion: v1
kind: HelmRepository
metadata:
  name: other
spec:
  url: https://x
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: karpenter
  namespace: kube-system
spec:
  interval: 1h
  dependsOn:
  - name: a
  - name: b
    namespace: c
  chart:
    spec:
      chart: karpenter
      verison: 1.0.0
      sourceRef: {kind: HelmRepository, name: x}
  values:
    list:
      - first: 1
        second: 2
";

    #[test]
    fn field_paths_are_followed_by_indentation() {
        let at = |path: &[Step]| field_line(TEXT, "HelmRelease", "karpenter", path, true);
        assert_eq!(
            at(&[key("spec"), key("chart"), key("spec"), key("verison")]),
            Some((23, true))
        );
        assert_eq!(
            at(&[
                key("spec"),
                key("dependsOn"),
                Step::Index(1),
                key("namespace")
            ]),
            Some((19, true))
        );
        assert_eq!(
            at(&[key("spec"), key("dependsOn"), Step::Index(0)]),
            Some((17, true))
        );
        assert_eq!(
            at(&[
                key("spec"),
                key("values"),
                key("list"),
                Step::Index(0),
                key("second")
            ]),
            Some((28, true))
        );
        // Flow style and missing fields stop at the deepest line found.
        assert_eq!(
            at(&[
                key("spec"),
                key("chart"),
                key("spec"),
                key("sourceRef"),
                key("kind")
            ]),
            Some((24, false))
        );
        assert_eq!(at(&[key("spec"), key("prune")]), Some((14, false)));
        assert_eq!(at(&[key("metadata"), key("namespace")]), Some((13, true)));
        // The document is picked by kind and name.
        assert_eq!(
            field_line(
                TEXT,
                "HelmRepository",
                "other",
                &[key("spec"), key("url")],
                true
            ),
            Some((7, true))
        );
    }

    #[test]
    fn patch_files_are_searched_in_every_document() {
        let patch = "apiVersion: x\nkind: Other\nspec:\n  interval: 10minutes\n";
        assert_eq!(
            field_line(
                patch,
                "HelmRelease",
                "k",
                &[key("spec"), key("interval")],
                false
            ),
            Some((4, true))
        );
    }

    #[test]
    fn keys_are_unquoted() {
        assert_eq!(key_of("a: b"), Some("a"));
        assert_eq!(key_of("\"a b\": c"), Some("a b"));
        assert_eq!(key_of("'a': c"), Some("a"));
        assert_eq!(key_of("url: https://x"), Some("url"));
        assert_eq!(key_of("https://x"), None);
    }
}
