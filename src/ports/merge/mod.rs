//! Three-way merge of one generated file: `base` is what cellgen generated before, `ours` the
//! file as the user has it, `theirs` what cellgen generates now.
//!
//! Where only one side changed something it is taken, whatever the other side did elsewhere.
//! YAML and HCL are merged by their structure, read from indentation: a mapping's keys (an HCL
//! body's attributes and blocks, an object's entries) are merged key by key, so changes to
//! different keys never conflict even on touching lines, and alignment-only changes of `=` do not
//! count; list items both sides inserted at one place are all kept. What that reading does not
//! cover is merged line by line (diff3). A result that no longer parses is not trusted: the file
//! is then merged line by line, and, if that still does not parse, is one conflict. Conflicts are
//! written the way `git merge` writes them with `merge.conflictStyle=diff3`.

mod blocks;
mod diff3;
mod entries;

use camino::Utf8Path;

/// How a file is read for merging.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    Yaml,
    Hcl,
    Text,
}

impl Syntax {
    pub fn of(path: &Utf8Path) -> Syntax {
        match path.extension() {
            Some("yaml" | "yml") => Syntax::Yaml,
            Some("tf" | "tfvars" | "hcl") => Syntax::Hcl,
            _ => Syntax::Text,
        }
    }
}

/// A piece of the merged file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Chunk {
    Clean(Vec<String>),
    Conflict {
        base: Vec<String>,
        ours: Vec<String>,
        theirs: Vec<String>,
    },
}

/// The merged text and how many conflicts it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    pub text: String,
    pub conflicts: usize,
}

pub const OURS_MARKER: &str = "<<<<<<<";
pub const BASE_MARKER: &str = "|||||||";
pub const SPLIT_MARKER: &str = "=======";
pub const THEIRS_MARKER: &str = ">>>>>>>";

/// Merges `theirs` into `ours`; `base` is None when what cellgen generated before is unknown (each
/// difference is then a conflict). `label` names theirs in conflict markers (`cellgen 0.2.0`).
pub fn merge(base: Option<&str>, ours: &str, theirs: &str, syntax: Syntax, label: &str) -> Merged {
    let (b, o, t) = (base.map(lines), lines(ours), lines(theirs));
    let structured = entries::merge(b.as_deref(), &o, &t, syntax);
    let (text, conflicts) = render(&structured, label);
    if conflicts > 0
        || parses_as(syntax, &text)
        || !parses_as(syntax, ours)
        || !parses_as(syntax, theirs)
    {
        return Merged { text, conflicts };
    }
    // The structure was misread: line by line, else the whole file is the conflict.
    let textual = match &b {
        Some(b) => diff3::merge(b, &o, &t),
        None => diff3::two_way(&o, &t),
    };
    let (text, conflicts) = render(&textual, label);
    if conflicts > 0 || parses_as(syntax, &text) {
        return Merged { text, conflicts };
    }
    let whole = diff3::conflict(b.as_deref().unwrap_or_default(), &o, &t);
    let (text, conflicts) = render(&whole, label);
    Merged { text, conflicts }
}

fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// The text of `chunks`, conflicts as `git merge` writes them (diff3 style), and their number.
pub fn render(chunks: &[Chunk], label: &str) -> (String, usize) {
    let mut out = String::new();
    let mut conflicts = 0;
    let push_all = |out: &mut String, lines: &[String]| {
        for line in lines {
            out.push_str(line);
        }
        // A marker always starts a line, even after a last line without a newline.
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
    };
    for chunk in chunks {
        match chunk {
            Chunk::Clean(lines) => out.extend(lines.iter().map(String::as_str)),
            Chunk::Conflict { base, ours, theirs } => {
                conflicts += 1;
                if !out.is_empty() && !out.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str(&format!("{OURS_MARKER} ours\n"));
                push_all(&mut out, ours);
                out.push_str(&format!("{BASE_MARKER} base\n"));
                push_all(&mut out, base);
                out.push_str(&format!("{SPLIT_MARKER}\n"));
                push_all(&mut out, theirs);
                out.push_str(&format!("{THEIRS_MARKER} {label}\n"));
            }
        }
    }
    (out, conflicts)
}

/// Whether a merged text still reads as its syntax: YAML documents (no duplicate key), HCL
/// without an attribute or object key defined twice.
pub fn parses_as(syntax: Syntax, text: &str) -> bool {
    match syntax {
        Syntax::Text => true,
        Syntax::Yaml => crate::ports::yaml::documents::<yaml_serde::Value>(text).is_ok(),
        Syntax::Hcl => hcl_edit::parser::parse_body(text).is_ok_and(|body| unique_hcl(&body)),
    }
}

fn unique_hcl(body: &hcl_edit::structure::Body) -> bool {
    use hcl_edit::structure::Structure;
    let mut names = std::collections::BTreeSet::new();
    body.iter().all(|structure| match structure {
        Structure::Attribute(attr) => {
            names.insert(attr.key.as_str().to_string()) && unique_expr(&attr.value)
        }
        Structure::Block(block) => unique_hcl(&block.body),
    })
}

fn unique_expr(expr: &hcl_edit::expr::Expression) -> bool {
    use hcl_edit::expr::{Expression, ObjectKey};
    match expr {
        Expression::Object(object) => {
            let mut keys = std::collections::BTreeSet::new();
            object.iter().all(|(key, value)| {
                let name = match key {
                    ObjectKey::Ident(ident) => ident.as_str().to_string(),
                    ObjectKey::Expression(Expression::String(s)) => s.as_str().to_string(),
                    ObjectKey::Expression(other) => other.to_string(),
                };
                keys.insert(name) && unique_expr(value.expr())
            })
        }
        Expression::Array(array) => array.iter().all(unique_expr),
        _ => true,
    }
}

/// Lines of `text` that are conflict markers cellgen (or Git) writes, 1-based.
pub fn marker_lines(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| {
            [OURS_MARKER, BASE_MARKER, THEIRS_MARKER].iter().any(|m| {
                line.strip_prefix(m)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
            })
        })
        .map(|(i, _)| i + 1)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_follows_the_extension() {
        assert_eq!(Syntax::of(Utf8Path::new("a/b.yaml")), Syntax::Yaml);
        assert_eq!(Syntax::of(Utf8Path::new("terraform.tfvars")), Syntax::Hcl);
        assert_eq!(Syntax::of(Utf8Path::new("x.tf")), Syntax::Hcl);
        assert_eq!(Syntax::of(Utf8Path::new("README")), Syntax::Text);
    }

    #[test]
    fn duplicates_do_not_parse() {
        assert!(!parses_as(Syntax::Hcl, "a = 1\na = 2\n"));
        assert!(!parses_as(Syntax::Hcl, "x = {\n  k = 1\n  k = 2\n}\n"));
        assert!(parses_as(Syntax::Hcl, "x = {\n  k = 1\n  j = 2\n}\n"));
        assert!(!parses_as(Syntax::Yaml, "a: 1\na: 2\n"));
        assert!(parses_as(Syntax::Yaml, "a: 1\n---\nb: 2\n"));
    }

    #[test]
    fn markers_are_found_at_line_starts() {
        let text =
            "a\n<<<<<<< ours\nb\n||||||| base\n=======\nc\n>>>>>>> cellgen 0.2.0\n# <<<<<<< not\n";
        assert_eq!(marker_lines(text), [2, 4, 7]);
    }

    #[test]
    fn a_duplicate_the_structure_would_make_becomes_a_line_merge() {
        // Both sides add the same attribute at different places: one attribute, not two.
        let base = "name   = \"x\"\nregion = \"y\"\n";
        let ours = "name   = \"x\"\nregion = \"y\"\nvpc_cidr = \"10.1.0.0/16\"\n";
        let theirs = "name     = \"x\"\nvpc_cidr = \"10.1.0.0/16\"\nregion   = \"y\"\n";
        let merged = merge(Some(base), ours, theirs, Syntax::Hcl, "cellgen");
        assert_eq!(merged.conflicts, 0, "{}", merged.text);
        assert!(parses_as(Syntax::Hcl, &merged.text), "{}", merged.text);
        assert_eq!(
            merged.text.matches("vpc_cidr").count(),
            1,
            "{}",
            merged.text
        );
    }
}
