//! Edits for `set-version`: one scalar of a manifest (a chart's version in the shared
//! component), and one entry of a cell's Flux Kustomization `spec.patches` (the cell's own
//! version). Located with yaml-edit, spliced into the text, and verified like every YAML edit:
//! the result must mean the original with exactly that change.
//!
//! `spec.patches` is handled as a block list (or absent, or `[]`); an entry cellgen writes is a
//! JSON 6902 `replace` of one path on one target, so it is recognised by meaning, whatever its
//! formatting, and replaced or removed whole. Removing the last entry removes `patches:` too,
//! so a cell without an override reads as it did before it had one.

use rowan::ast::AstNode;
use yaml_edit::SyntaxKind as K;

use super::contract::content_end;
use super::{Node, Value, YamlEditError, fail, fail_at, parse, range, scalar, scalar_like, verify};
use crate::ports::edit::list::{self, Edit};
use crate::ports::edit::text::{indent_at, line_end, line_number, line_start};

/// The object a version patch targets, and the field it replaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchTarget {
    pub group: String,
    pub kind: String,
    pub name: String,
    pub namespace: Option<String>,
    /// JSON pointer of the replaced field, e.g. `/spec/chart/spec/version`.
    pub path: String,
}

impl PatchTarget {
    /// The `spec.patches` entry replacing the field with `value`.
    pub fn entry(&self, value: &str) -> Value {
        let mut target = yaml_serde::Mapping::new();
        let put = |m: &mut yaml_serde::Mapping, k: &str, v: &str| {
            m.insert(Value::String(k.into()), Value::String(v.into()));
        };
        put(&mut target, "group", &self.group);
        put(&mut target, "kind", &self.kind);
        put(&mut target, "name", &self.name);
        if let Some(ns) = &self.namespace {
            put(&mut target, "namespace", ns);
        }
        let mut entry = yaml_serde::Mapping::new();
        entry.insert(Value::String("target".into()), Value::Mapping(target));
        entry.insert(
            Value::String("patch".into()),
            Value::String(self.patch_text(value)),
        );
        Value::Mapping(entry)
    }

    fn patch_text(&self, value: &str) -> String {
        format!(
            "- op: replace\n  path: {}\n  value: {}\n",
            scalar(&self.path),
            scalar(value)
        )
    }

    /// The entry as block YAML, its `-` at column `indent`.
    fn render(&self, indent: usize, value: &str) -> String {
        let pad = " ".repeat(indent);
        let mut out = format!("{pad}- target:\n");
        out.push_str(&format!("{pad}    group: {}\n", scalar(&self.group)));
        out.push_str(&format!("{pad}    kind: {}\n", scalar(&self.kind)));
        out.push_str(&format!("{pad}    name: {}\n", scalar(&self.name)));
        if let Some(ns) = &self.namespace {
            out.push_str(&format!("{pad}    namespace: {}\n", scalar(ns)));
        }
        out.push_str(&format!("{pad}  patch: |\n"));
        for line in self.patch_text(value).lines() {
            out.push_str(&format!("{pad}    {line}\n"));
        }
        out
    }

    /// The value `entry` sets, when it is a version patch of this target (cellgen's form: a
    /// target naming the object, one `replace` of the field).
    pub fn value_of(&self, entry: &Value) -> Option<String> {
        let map = entry.as_mapping()?;
        if map.len() != 2 {
            return None;
        }
        let target = entry.get("target")?.as_mapping()?;
        let field = |k: &str| target.get(k).and_then(Value::as_str);
        let known = ["group", "version", "kind", "name", "namespace"];
        if target
            .keys()
            .any(|k| k.as_str().is_none_or(|k| !known.contains(&k)))
        {
            return None;
        }
        if field("kind") != Some(self.kind.as_str())
            || field("name") != Some(self.name.as_str())
            || field("group").is_some_and(|g| g != self.group)
            || field("namespace").is_some_and(|n| Some(n) != self.namespace.as_deref())
        {
            return None;
        }
        let ops: Value = crate::ports::yaml::from_str(entry.get("patch")?.as_str()?).ok()?;
        let [op] = ops.as_sequence()?.as_slice() else {
            return None;
        };
        let op = op.as_mapping()?;
        let get = |k: &str| op.get(k).and_then(Value::as_str);
        (op.len() == 3 && get("op") == Some("replace") && get("path") == Some(&self.path))
            .then(|| get("value").map(str::to_string))
            .flatten()
    }
}

/// The entries of a Flux Kustomization's `spec.patches`, as the strict parser reads them.
pub fn spec_patches(text: &str) -> Result<Vec<Value>, YamlEditError> {
    let (_, value) = parse(text)?;
    Ok(value
        .get("spec")
        .and_then(|s| s.get("patches"))
        .and_then(Value::as_sequence)
        .cloned()
        .unwrap_or_default())
}

const PATCHES_ADVICE: &str = "write `spec.patches` as a block list (one `- target: ...` entry per item) without anchors or aliases";

/// An item of a block list: its range, and the offset of its dash.
type Item = (std::ops::Range<usize>, usize);

/// Where `spec.patches` is.
struct Located {
    /// The `spec` entry (for a new `patches:` key after its last field).
    spec: std::ops::Range<usize>,
    /// Column of spec's keys.
    key_indent: usize,
    /// The `patches` entry, when there is one: its range, and its items (range, dash offset);
    /// `None` items for `patches: []`.
    patches: Option<(std::ops::Range<usize>, Option<Vec<Item>>)>,
}

fn locate(text: &str, doc: &yaml_edit::Document) -> Result<Located, YamlEditError> {
    let root = doc
        .as_mapping()
        .ok_or_else(|| fail("not a YAML mapping: is this a Flux Kustomization?"))?;
    let spec_entry = root
        .find_entry_by_key("spec")
        .ok_or_else(|| fail("no `spec` mapping: is this a Flux Kustomization?"))?;
    let spec = root
        .get_mapping("spec")
        .filter(|m| {
            m.syntax()
                .first_token()
                .is_none_or(|t| t.kind() != K::LEFT_BRACE)
        })
        .ok_or_else(|| {
            fail_at(
                text,
                range(spec_entry.syntax()).start,
                "`spec` is not a block mapping",
            )
        })?;
    let first_key = spec
        .entries()
        .next()
        .and_then(|e| e.key_node())
        .ok_or_else(|| fail("`spec` is empty"))?;
    let key_indent = indent_at(text, first_key.byte_range().start as usize);
    let Some(entry) = spec.find_entry_by_key("patches") else {
        return Ok(Located {
            spec: range(spec_entry.syntax()),
            key_indent,
            patches: None,
        });
    };
    let entry_node = entry.syntax().clone();
    let at = range(&entry_node).start;
    let refuse = || fail_at(text, at, PATCHES_ADVICE);
    let value = entry_node
        .children()
        .find(|n| n.kind() == K::VALUE)
        .ok_or_else(refuse)?;
    let seq = value
        .children()
        .find(|n| n.kind() == K::SEQUENCE)
        .ok_or_else(refuse)?;
    if value
        .children_with_tokens()
        .any(|c| matches!(c.kind(), K::ANCHOR | K::TAG | K::ALIAS))
    {
        return Err(refuse());
    }
    let flow = seq
        .first_token()
        .is_some_and(|t| t.kind() == K::LEFT_BRACKET);
    let entries: Vec<Node> = seq
        .children()
        .filter(|n| n.kind() == K::SEQUENCE_ENTRY)
        .collect();
    let items = if flow {
        if !entries.is_empty() {
            return Err(refuse());
        }
        None
    } else {
        let mut items = Vec::new();
        for e in entries {
            let dash = e
                .children_with_tokens()
                .find(|c| c.kind() == K::DASH)
                .map(|c| usize::from(c.text_range().start()))
                .ok_or_else(refuse)?;
            items.push((range(&e), dash));
        }
        Some(items)
    };
    Ok(Located {
        spec: range(spec_entry.syntax()),
        key_indent,
        patches: Some((range(&entry_node), items)),
    })
}

/// The document with `spec.patches` set to `entries` (removed when empty).
fn with_patches(value: &Value, entries: Vec<Value>) -> Value {
    let mut expected = value.clone();
    if let Some(Value::Mapping(spec)) = expected.get_mut("spec") {
        if entries.is_empty() {
            spec.shift_remove(Value::String("patches".into()));
        } else {
            spec.insert(Value::String("patches".into()), Value::Sequence(entries));
        }
    }
    expected
}

/// Sets the cell's version patch of `target` to `version`: the entry cellgen wrote is replaced,
/// or a new one goes last (creating `spec.patches` when there is none).
pub fn set_version_patch(
    text: &str,
    target: &PatchTarget,
    version: &str,
) -> Result<String, YamlEditError> {
    let (doc, value) = parse(text)?;
    let mut entries = spec_patches(text)?;
    let located = locate(text, &doc)?;
    let line = line_number(text, located.spec.start);
    let existing = entries.iter().position(|e| target.value_of(e).is_some());
    if existing.is_some_and(|i| target.value_of(&entries[i]).as_deref() == Some(version)) {
        return Ok(text.to_string());
    }
    let edited = match (&located.patches, existing) {
        (Some((_, Some(items))), Some(i)) => {
            let (item, dash) = &items[i];
            let start = line_start(text, *dash);
            let end = content_end(text, item.start, item.end);
            let end = line_end(text, end.saturating_sub(1).max(start));
            let indent = dash - start;
            list::apply(
                text,
                vec![Edit {
                    range: start..end,
                    with: target.render(indent, version),
                }],
            )
        }
        (Some((_, Some(items))), None) => {
            let (last, dash) = items.last().expect("a block list has items");
            let indent = dash - line_start(text, *dash);
            let end = content_end(text, last.start, last.end);
            let at = line_end(text, end.saturating_sub(1).max(*dash));
            let mut block = target.render(indent, version);
            if !text[..at].ends_with('\n') {
                block.insert(0, '\n');
            }
            list::apply(text, vec![Edit::insert(at, block)])
        }
        (Some((entry, None)), _) => {
            // `patches: []`: a block list in its place.
            let key_line = line_start(text, entry.start);
            let end = line_end(text, entry.start);
            let key = &text[entry.start..end];
            let colon = key.find(':').map_or(0, |i| i + 1);
            let mut with = format!("{}\n", &text[key_line..entry.start + colon]);
            with.push_str(&target.render(located.key_indent + 2, version));
            list::apply(
                text,
                vec![Edit {
                    range: key_line..end,
                    with,
                }],
            )
        }
        (None, _) => {
            let end = content_end(text, located.spec.start, located.spec.end);
            let at = line_end(text, end.saturating_sub(1).max(located.spec.start));
            let mut block = format!("{}patches:\n", " ".repeat(located.key_indent));
            block.push_str(&target.render(located.key_indent + 2, version));
            if !text[..at].ends_with('\n') {
                block.insert(0, '\n');
            }
            list::apply(text, vec![Edit::insert(at, block)])
        }
    };
    match existing {
        Some(i) => entries[i] = target.entry(version),
        None => entries.push(target.entry(version)),
    }
    verify(edited, &with_patches(&value, entries), line, PATCHES_ADVICE)
}

/// Removes the cell's version patch of `target`, if it has one; `patches:` goes with its last
/// entry.
pub fn remove_version_patch(text: &str, target: &PatchTarget) -> Result<String, YamlEditError> {
    let (doc, value) = parse(text)?;
    let mut entries = spec_patches(text)?;
    let Some(i) = entries.iter().position(|e| target.value_of(e).is_some()) else {
        return Ok(text.to_string());
    };
    let located = locate(text, &doc)?;
    let Some((entry, Some(items))) = &located.patches else {
        return Err(fail_at(text, located.spec.start, PATCHES_ADVICE));
    };
    let line = line_number(text, entry.start);
    let range = if items.len() == 1 {
        let start = line_start(text, entry.start);
        let end = content_end(text, entry.start, entry.end);
        start..line_end(text, end.saturating_sub(1).max(start))
    } else {
        let (item, dash) = &items[i];
        let start = line_start(text, *dash);
        let end = content_end(text, item.start, item.end);
        start..line_end(text, end.saturating_sub(1).max(start))
    };
    let edited = list::apply(text, vec![Edit::delete(range)]);
    entries.remove(i);
    verify(edited, &with_patches(&value, entries), line, PATCHES_ADVICE)
}

/// Sets the scalar at `path` (mapping keys from the document's root) to `value`, keeping its
/// quoting style where that still reads back as the string.
pub fn set_scalar(text: &str, path: &[&str], value: &str) -> Result<String, YamlEditError> {
    let (doc, parsed) = parse(text)?;
    let (last, parents) = path.split_last().expect("a path has a last key");
    let mut mapping = doc.as_mapping().ok_or_else(|| fail("not a YAML mapping"))?;
    for key in parents {
        mapping = mapping
            .get_mapping(*key)
            .ok_or_else(|| fail(format!("no `{}`", path.join("."))))?;
    }
    let node = mapping
        .get(*last)
        .ok_or_else(|| fail(format!("no `{}`", path.join("."))))?;
    let r = node.byte_range();
    let r = r.start as usize..r.end as usize;
    let with = scalar_like(&text[r.clone()], value);
    let edited = crate::ports::edit::text::splice(text, r.clone(), &with);
    let mut expected = parsed.clone();
    let mut at = &mut expected;
    for key in parents {
        at = at
            .get_mut(*key)
            .ok_or_else(|| fail(format!("no `{}`", path.join("."))))?;
    }
    if let Some(Value::Mapping(map)) = Some(at) {
        map.insert(Value::String((*last).into()), Value::String(value.into()));
    }
    verify(
        edited,
        &expected,
        line_number(text, r.start),
        "write the field as a plain or quoted scalar without anchors or tags",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAYER: &str = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: controllers\n  namespace: flux-system\nspec:\n  interval: 10m\n  # mine\n  components:\n    - ../../components/cert-manager/controllers\n  postBuild:\n    substituteFrom:\n      - kind: ConfigMap\n        name: cell-metadata\n";

    fn target() -> PatchTarget {
        PatchTarget {
            group: "helm.toolkit.fluxcd.io".into(),
            kind: "HelmRelease".into(),
            name: "cert-manager".into(),
            namespace: Some("cert-manager".into()),
            path: "/spec/chart/spec/version".into(),
        }
    }

    #[test]
    fn a_version_patch_is_added_changed_and_removed_back_to_the_original() {
        let t = target();
        let added = set_version_patch(LAYER, &t, "v1.21.0").unwrap();
        assert!(added.starts_with(LAYER), "{added}");
        assert!(
            added.contains("  patches:\n    - target:\n        group: helm.toolkit.fluxcd.io\n"),
            "{added}"
        );
        let entries = spec_patches(&added).unwrap();
        assert_eq!(t.value_of(&entries[0]).as_deref(), Some("v1.21.0"));
        assert_eq!(set_version_patch(&added, &t, "v1.21.0").unwrap(), added);
        let changed = set_version_patch(&added, &t, "v1.22.0").unwrap();
        assert_eq!(changed, added.replace("v1.21.0", "v1.22.0"));
        assert_eq!(remove_version_patch(&changed, &t).unwrap(), LAYER);
        assert_eq!(remove_version_patch(LAYER, &t).unwrap(), LAYER);
    }

    #[test]
    fn a_users_patches_stay_and_ours_goes_last() {
        let t = target();
        let mine = format!(
            "{LAYER}  patches:\n    - patch: |\n        - op: add\n          path: /metadata/labels/x\n          value: y\n      target:\n        kind: HelmRelease\n"
        );
        let added = set_version_patch(&mine, &t, "v1.21.0").unwrap();
        assert!(added.starts_with(&mine), "{added}");
        assert_eq!(spec_patches(&added).unwrap().len(), 2);
        assert_eq!(remove_version_patch(&added, &t).unwrap(), mine);
        let empty = format!("{LAYER}  patches: []\n");
        let added = set_version_patch(&empty, &t, "1.2").unwrap();
        assert_eq!(
            t.value_of(&spec_patches(&added).unwrap()[0]).as_deref(),
            Some("1.2")
        );
    }

    #[test]
    fn a_scalar_keeps_its_quotes() {
        let text = "spec:\n  chart:\n    spec:\n      version: \"v1.20.2\" # pinned\n";
        let edited = set_scalar(text, &["spec", "chart", "spec", "version"], "v1.21.0").unwrap();
        assert_eq!(edited, text.replace("v1.20.2", "v1.21.0"));
        let plain = "spec:\n  ref:\n    tag: 1.12.1\n";
        let edited = set_scalar(plain, &["spec", "ref", "tag"], "1.13").unwrap();
        assert_eq!(edited, "spec:\n  ref:\n    tag: '1.13'\n");
    }
}
