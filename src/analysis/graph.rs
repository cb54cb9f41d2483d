//! The bridge made visible: for each cell-metadata key, the Terraform expression that writes it
//! (file:line, per cell), the identities it waits for (the `depends_on` entries of
//! `kubernetes_config_map_v1.cell_metadata` the expression refers to), and every manifest that
//! consumes it (file:line, which cells, which layers). `cellgen graph` prints it as Mermaid, DOT
//! or text; `cellgen explain KEY` prints one key.

use camino::{Utf8Path, Utf8PathBuf};
use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::analysis::contract::metadata_path;
use crate::analysis::render::{BuildCache, load_cell};
use crate::analysis::snapshot::Snapshot;
use crate::model::config::SCHEMA_KEY;
use crate::ports::edit::hcl;

/// Where a key is written: one Terraform expression, the cells that write it so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Producer {
    pub expression: String,
    /// `depends_on` entries of cell_metadata the expression refers to.
    pub waits_for: Vec<String>,
    /// (cell, file, line).
    pub places: Vec<(String, Utf8PathBuf, usize)>,
}

/// Where a key is used: one line of one manifest, in the cells and layers that apply it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Consumer {
    pub file: Utf8PathBuf,
    pub line: Option<usize>,
    /// The expression as written, e.g. `${karpenter_node_role}`.
    pub text: String,
    /// The object it is in, e.g. `EC2NodeClass default`.
    pub object: String,
    /// (cell, layer).
    pub places: Vec<(String, String)>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct KeyNode {
    pub key: String,
    /// In cellgen.yaml's contract.
    pub contracted: bool,
    pub description: Option<String>,
    pub producers: Vec<Producer>,
    pub consumers: Vec<Consumer>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Graph {
    pub cells: Vec<String>,
    pub keys: Vec<KeyNode>,
    /// Cells whose layers could not be built (their consumers are missing), with why.
    pub incomplete: Vec<(String, String)>,
}

/// Whether `expression` refers to `address` (`module.karpenter` in
/// `module.karpenter.node_iam_role_name`, `aws_iam_role.x` in `aws_iam_role.x.arn`).
fn refers_to(expression: &str, address: &str) -> bool {
    let bytes = expression.as_bytes();
    let mut from = 0;
    while let Some(i) = expression[from..].find(address) {
        let start = from + i;
        let end = start + address.len();
        // `x.module.karpenter` is another address; `module.karpenter.name` refers to it.
        let before_ok = start == 0 || !(is_word(bytes[start - 1]) || bytes[start - 1] == b'.');
        let after_ok = end == bytes.len() || !is_word(bytes[end]);
        if before_ok && after_ok {
            return true;
        }
        from = start + 1;
    }
    false
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// The lines of `text` where `needle` occurs, YAML comments aside (a file's header may name
/// `${...}` in prose).
fn lines_of(text: &str, needle: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle) && !l.trim_start().starts_with('#'))
        .map(|(i, _)| i + 1)
        .collect()
}

/// Builds the graph of `cells` (all of the snapshot's when empty).
pub fn build(snapshot: &Snapshot, cells: &[String], cache: &mut BuildCache) -> Graph {
    let some = !cells.is_empty();
    let cells: Vec<String> = if cells.is_empty() {
        snapshot.cells.clone()
    } else {
        cells.to_vec()
    };
    let mut keys: BTreeMap<String, KeyNode> = BTreeMap::new();
    for (key, spec) in &snapshot.config.keys {
        keys.insert(
            key.clone(),
            KeyNode {
                key: key.clone(),
                contracted: true,
                description: Some(spec.description.clone()),
                ..KeyNode::default()
            },
        );
    }
    keys.insert(
        SCHEMA_KEY.to_string(),
        KeyNode {
            key: SCHEMA_KEY.to_string(),
            contracted: true,
            description: Some(format!(
                "the number of the cell's key set: the newest `since` among its keys (cellgen.yaml is at {})",
                snapshot.config.schema
            )),
            ..KeyNode::default()
        },
    );
    let mut incomplete = Vec::new();
    let read = |rel: &Utf8Path| snapshot.source.read_text(&snapshot.root, rel);
    for cell in &cells {
        // Producers: cell-metadata.tf's data.
        let path = metadata_path(cell);
        if let Some(meta) = read(&path).and_then(|t| hcl::read(&t).ok()) {
            for entry in &meta.entries {
                let waits_for: Vec<String> = meta
                    .depends_on
                    .iter()
                    .filter(|d| refers_to(&entry.value, d))
                    .cloned()
                    .collect();
                let k = keys.entry(entry.key.clone()).or_insert_with(|| KeyNode {
                    key: entry.key.clone(),
                    ..KeyNode::default()
                });
                let place = (cell.clone(), path.clone(), entry.line);
                match k
                    .producers
                    .iter_mut()
                    .find(|p| p.expression == entry.value && p.waits_for == waits_for)
                {
                    Some(p) => p.places.push(place),
                    None => k.producers.push(Producer {
                        expression: entry.value.clone(),
                        waits_for,
                        places: vec![place],
                    }),
                }
            }
        }
        // Consumers: every `${key}` in what each layer builds (before substitution).
        let loaded = match load_cell(&snapshot.root, cell, cache) {
            Ok(l) => l,
            Err(e) => {
                incomplete.push((cell.clone(), e.message));
                continue;
            }
        };
        for layer in &loaded.layers {
            if layer.post_build.is_none() {
                continue; // Flux substitutes nothing there.
            }
            let built = cache.build(&layer.build_path(), &layer.flux);
            let resources = match built.as_ref() {
                Ok(r) => r,
                Err(e) => {
                    incomplete.push((cell.clone(), format!("layer {}: {e}", layer.name)));
                    continue;
                }
            };
            for resource in resources {
                if crate::ports::envsubst::flux::substitution_disabled(&resource.object) {
                    continue;
                }
                let yaml = crate::ports::envsubst::to_flux_yaml(&resource.object);
                let object = crate::analysis::layer_check::object_name(&resource.object);
                let mut seen = BTreeSet::new();
                for r in crate::ports::envsubst::references(&yaml) {
                    if !seen.insert(r.text.clone()) {
                        continue;
                    }
                    // The line in the file that wrote it: the object's file, else a patch.
                    let mut found = None;
                    let origin = resource.origin.clone();
                    let patched_by = resource.patched_by.iter().cloned();
                    for file in std::iter::once(origin.clone()).chain(patched_by) {
                        if let Some(text) = read(&file)
                            && let Some(line) = lines_of(&text, &r.text).first()
                        {
                            found = Some((file, Some(*line)));
                            break;
                        }
                    }
                    let (file, line) = found.unwrap_or((origin, None));
                    let k = keys.entry(r.name.clone()).or_insert_with(|| KeyNode {
                        key: r.name.clone(),
                        ..KeyNode::default()
                    });
                    let place = (cell.clone(), layer.name.clone());
                    match k.consumers.iter_mut().find(|c| {
                        c.file == file && c.line == line && c.text == r.text && c.object == object
                    }) {
                        Some(c) => {
                            if !c.places.contains(&place) {
                                c.places.push(place);
                            }
                        }
                        None => k.consumers.push(Consumer {
                            file,
                            line,
                            text: r.text.clone(),
                            object: object.clone(),
                            places: vec![place],
                        }),
                    }
                }
            }
        }
    }
    let mut keys: Vec<KeyNode> = keys
        .into_values()
        // For some cells, the contract's keys they neither write nor use are not theirs.
        .filter(|k| !some || !k.producers.is_empty() || !k.consumers.is_empty())
        .collect();
    for k in &mut keys {
        k.consumers
            .sort_by(|a, b| (&a.file, a.line, &a.object).cmp(&(&b.file, b.line, &b.object)));
    }
    Graph {
        cells,
        keys,
        incomplete,
    }
}

fn cells_text(places: impl Iterator<Item = String>, all: usize) -> String {
    let cells: BTreeSet<String> = places.collect();
    if cells.len() == all && all > 1 {
        format!("all {all} cells")
    } else {
        cells.into_iter().collect::<Vec<_>>().join(", ")
    }
}

fn at(file: &Utf8Path, line: Option<usize>) -> String {
    match line {
        Some(l) => format!("{}:{l}", file),
        None => file.to_string(),
    }
}

impl KeyNode {
    /// A few lines: where the key comes from and who uses it.
    pub fn to_text(&self, all_cells: usize) -> String {
        let mut out = self.key.clone();
        match (&self.description, self.contracted) {
            (Some(d), _) => out.push_str(&format!(" — {d}\n")),
            (None, false) => out.push_str(" (not in cellgen.yaml's contract)\n"),
            (None, true) => out.push('\n'),
        }
        if self.producers.is_empty() {
            out.push_str("  written by: no cell's cell-metadata.tf\n");
        }
        for p in &self.producers {
            let files: BTreeSet<String> =
                p.places.iter().map(|(_, f, l)| at(f, Some(*l))).collect();
            let shown: Vec<String> = files.iter().take(3).cloned().collect();
            let more = files.len().saturating_sub(3);
            out.push_str(&format!(
                "  written by: {} ({}{}) [{}]\n",
                p.expression,
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                },
                cells_text(p.places.iter().map(|(c, _, _)| c.clone()), all_cells)
            ));
            if p.waits_for.is_empty() {
                out.push_str("    waits for: nothing it refers to (cell_metadata's depends_on names none of it)\n");
            } else {
                out.push_str(&format!("    waits for: {}\n", p.waits_for.join(", ")));
            }
        }
        if self.consumers.is_empty() {
            out.push_str("  used by: no manifest\n");
        }
        for c in &self.consumers {
            let layers: BTreeSet<&str> = c.places.iter().map(|(_, l)| l.as_str()).collect();
            out.push_str(&format!(
                "  used by: {} {} in {} [{}; layer {}]\n",
                at(&c.file, c.line),
                c.text,
                c.object,
                cells_text(c.places.iter().map(|(c, _)| c.clone()), all_cells),
                layers.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
        out
    }
}

impl Graph {
    pub fn key(&self, key: &str) -> Option<&KeyNode> {
        self.keys.iter().find(|k| k.key == key)
    }

    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for k in &self.keys {
            out.push_str(&k.to_text(self.cells.len()));
            out.push('\n');
        }
        for (cell, why) in &self.incomplete {
            out.push_str(&format!(
                "note: cell {cell}: not every manifest could be read: {why}\n"
            ));
        }
        out
    }

    /// Nodes and edges, shared by Mermaid and DOT: (id, label, shape) and (from, to, label).
    fn parts(&self) -> (Vec<Node>, Vec<Edge>) {
        let mut nodes: Vec<(String, String, Shape)> = Vec::new();
        let mut ids: BTreeMap<(Shape, String), String> = BTreeMap::new();
        let mut id = |nodes: &mut Vec<(String, String, Shape)>, shape: Shape, label: String| {
            ids.entry((shape, label.clone()))
                .or_insert_with(|| {
                    let id = format!("{}{}", shape.prefix(), nodes.len());
                    nodes.push((id.clone(), label, shape));
                    id
                })
                .clone()
        };
        let mut edges = Vec::new();
        let all = self.cells.len();
        for k in &self.keys {
            let key = id(&mut nodes, Shape::Key, k.key.clone());
            for p in &k.producers {
                let expr = id(&mut nodes, Shape::Terraform, p.expression.clone());
                edges.push((
                    expr.clone(),
                    key.clone(),
                    cells_text(p.places.iter().map(|(c, _, _)| c.clone()), all),
                ));
                for w in &p.waits_for {
                    let identity = id(&mut nodes, Shape::Identity, w.clone());
                    edges.push((identity, expr.clone(), "waits for".to_string()));
                }
            }
            for c in &k.consumers {
                let manifest = id(
                    &mut nodes,
                    Shape::Manifest,
                    format!("{} ({})", at(&c.file, c.line), c.object),
                );
                let layers: BTreeSet<&str> = c.places.iter().map(|(_, l)| l.as_str()).collect();
                edges.push((
                    key.clone(),
                    manifest,
                    format!(
                        "{}; {}",
                        cells_text(c.places.iter().map(|(c, _)| c.clone()), all),
                        layers.into_iter().collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
        }
        edges.sort();
        edges.dedup();
        (nodes, edges)
    }

    /// A Mermaid flowchart (renders in GitHub Markdown): identities -> Terraform expressions ->
    /// keys -> manifests. Ids are generated (`k0`, `t1`...); labels are quoted and escaped.
    pub fn to_mermaid(&self) -> String {
        let (nodes, edges) = self.parts();
        let mut out = String::from("flowchart LR\n");
        for (id, label, shape) in &nodes {
            let (open, close) = shape.mermaid();
            out.push_str(&format!("  {id}{open}\"{}\"{close}\n", mermaid_text(label)));
        }
        for (from, to, label) in &edges {
            out.push_str(&format!("  {from} -->|\"{}\"| {to}\n", mermaid_text(label)));
        }
        out
    }

    /// Graphviz DOT.
    pub fn to_dot(&self) -> String {
        let (nodes, edges) = self.parts();
        let mut out =
            String::from("digraph cellgen {\n  rankdir=LR;\n  node [fontname=\"Helvetica\"];\n");
        for (id, label, shape) in &nodes {
            out.push_str(&format!(
                "  {id} [label=\"{}\", shape={}];\n",
                dot_text(label),
                shape.dot()
            ));
        }
        for (from, to, label) in &edges {
            out.push_str(&format!(
                "  {from} -> {to} [label=\"{}\"];\n",
                dot_text(label)
            ));
        }
        out.push_str("}\n");
        out
    }
}

/// (id, label, shape).
type Node = (String, String, Shape);
/// (from, to, label).
type Edge = (String, String, String);

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Shape {
    Identity,
    Terraform,
    Key,
    Manifest,
}

impl Shape {
    fn prefix(self) -> &'static str {
        match self {
            Shape::Identity => "i",
            Shape::Terraform => "t",
            Shape::Key => "k",
            Shape::Manifest => "m",
        }
    }

    fn mermaid(self) -> (&'static str, &'static str) {
        match self {
            Shape::Identity => ("[/", "/]"),
            Shape::Terraform => ("[", "]"),
            Shape::Key => ("([", "])"),
            Shape::Manifest => ("[[", "]]"),
        }
    }

    fn dot(self) -> &'static str {
        match self {
            Shape::Identity => "parallelogram",
            Shape::Terraform => "box",
            Shape::Key => "ellipse",
            Shape::Manifest => "note",
        }
    }
}

/// Text inside a quoted Mermaid label: `"` and the characters Mermaid reads as markup become
/// entity codes (`#quot;`, `#35;`...).
fn mermaid_text(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '#' => out.push_str("#35;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '|' => out.push_str("#124;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Text inside a DOT double-quoted string.
fn dot_text(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_match_whole_addresses() {
        assert!(refers_to(
            "module.karpenter.node_iam_role_name",
            "module.karpenter"
        ));
        assert!(!refers_to("module.karpenter_x.name", "module.karpenter"));
        assert!(refers_to("aws_iam_role.app.arn", "aws_iam_role.app"));
        assert!(!refers_to(
            "aws_iam_role.application.arn",
            "aws_iam_role.app"
        ));
        assert!(refers_to("\"${module.eks.cluster_name}-x\"", "module.eks"));
    }

    #[test]
    fn labels_are_escaped() {
        assert_eq!(mermaid_text("a\"b#c|d<e>"), "a#quot;b#35;c#124;d#lt;e#gt;");
        assert_eq!(dot_text("a\"b\\c"), "a\\\"b\\\\c");
    }
}
