//! The last word on an edit of `cell-metadata.tf`: the whole edited file, parsed again, has
//! exactly the structure intended. Reading back the entries (see `verify`) trusts hcl-edit's
//! parse of the new values; this also proves, without that trust, that what changed is only
//! the data entries and `depends_on` items named, each on one line with no heredoc (where
//! hcl-edit and HashiCorp's parser disagree), and that no character is added outside them but
//! layout whitespace and list commas (a removed entry may take its comment with it).

use std::ops::Range;

use hcl_edit::structure::{Body, Structure};

use super::CellMetadata;
use super::syntax::check_expression;

/// Every block and attribute of a body, recursively, as `depth:ident labels` or `depth:key=`:
/// what Terraform sees as structure (object items are values, not structure).
fn skeleton(body: &Body, depth: usize, out: &mut Vec<String>) {
    for structure in body.iter() {
        match structure {
            Structure::Attribute(a) => out.push(format!("{depth}:{}=", a.key.as_str())),
            Structure::Block(b) => {
                let labels: Vec<&str> = b.labels.iter().map(|l| l.as_str()).collect();
                out.push(format!("{depth}:{} {}", b.ident.as_str(), labels.join(" ")));
                skeleton(&b.body, depth + 1, out);
            }
        }
    }
}

fn skeleton_of(text: &str) -> Result<Vec<String>, String> {
    let body = hcl_edit::parser::parse_body(text)
        .map_err(|e| format!("the result would not parse: {}", e.message()))?;
    let mut out = Vec::new();
    skeleton(&body, 0, &mut out);
    Ok(out)
}

/// `text` without `cuts`, and with whitespace and commas dropped: what must stay the same.
fn residue(text: &str, mut cuts: Vec<Range<usize>>) -> String {
    cuts.sort_by_key(|r| r.start);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for cut in cuts {
        if cut.start >= at {
            out.push_str(&text[at..cut.start]);
            at = cut.end;
        }
    }
    out.push_str(&text[at..]);
    out.retain(|c| !c.is_whitespace() && c != ',');
    out
}

/// Spans of the entries and `depends_on` items of `meta` that `other` does not have, and, when
/// only one side has a `depends_on`, its whole attribute.
fn changed_spans(meta: &CellMetadata, other: &CellMetadata, text: &str) -> Vec<Range<usize>> {
    let mut cuts: Vec<Range<usize>> = meta
        .entries
        .iter()
        .filter(|e| {
            !other
                .entries
                .iter()
                .any(|o| o.key == e.key && o.value == e.value)
        })
        .map(|e| e.key_span.start..e.value_span.end)
        .collect();
    match (&meta.depends_on_attr, &other.depends_on_attr) {
        (Some(attr), None) => cuts.push(attr.clone()),
        _ => cuts.extend(
            meta.depends_on_spans
                .iter()
                .filter(|s| !other.depends_on.iter().any(|d| d == &text[(*s).clone()]))
                .cloned(),
        ),
    }
    cuts
}

/// Proves `edited` (read as `after`) is `text` (read as `before`) with only the intended
/// entries and `depends_on` items changed; the reason otherwise.
pub(super) fn structure_kept(
    text: &str,
    before: &CellMetadata,
    edited: &str,
    after: &CellMetadata,
) -> Result<(), String> {
    for entry in after.entries.iter().filter(|e| {
        !before
            .entries
            .iter()
            .any(|b| b.key == e.key && b.value == e.value)
    }) {
        check_expression(&entry.value)
            .map_err(|why| format!("the value of `{}` {why}", entry.key))?;
        if edited[entry.key_span.start..entry.value_span.end].contains('\n') {
            return Err(format!("`{}` would span more than one line", entry.key));
        }
    }
    let (mut was, now) = (skeleton_of(text)?, skeleton_of(edited)?);
    if before.depends_on_attr.is_none() && after.depends_on_attr.is_some() {
        // The one attribute an edit may add: `depends_on` in the ConfigMap block.
        let block = format!(
            "0:resource {} {}",
            super::CONFIG_MAP_TYPE,
            super::CONFIG_MAP_NAME
        );
        let start = now.iter().position(|s| s == &block);
        let added = start.and_then(|b| {
            now[b + 1..]
                .iter()
                .take_while(|s| !s.starts_with("0:"))
                .position(|s| s == "1:depends_on=")
                .map(|i| b + 1 + i)
        });
        match added {
            Some(a) if was.len() >= a => was.insert(a, "1:depends_on=".into()),
            _ => return Err("a `depends_on` would appear outside the ConfigMap".into()),
        }
    }
    if was != now {
        return Err("a block or an attribute would appear, go or move".into());
    }
    let kept = residue(text, changed_spans(before, after, text));
    let edited_kept = residue(edited, changed_spans(after, before, edited));
    // An edit may drop text (the comment above a removed entry goes with it), never add any.
    let mut rest = kept.chars();
    if !edited_kept.chars().all(|c| rest.any(|k| k == c)) {
        return Err("text outside the edited entries would change".into());
    }
    Ok(())
}

/// Spans of every heredoc in a body.
struct HeredocSpans(Vec<(String, Range<usize>)>);

impl hcl_edit::visit::Visit for HeredocSpans {
    fn visit_heredoc_template(&mut self, node: &hcl_edit::template::HeredocTemplate) {
        if let Some(span) = hcl_edit::Span::span(node) {
            self.0.push((node.delimiter.as_str().to_string(), span));
        }
        hcl_edit::visit::visit_heredoc_template(self, node);
    }
}

/// hcl-edit reads a heredoc past a line that is only its delimiter where HashiCorp's parser
/// ends it (an empty heredoc, `<<EOT` then `EOT`): what hcl-edit takes for text, Terraform runs
/// as code. The offset and delimiter of the first heredoc read that way, if any.
pub(super) fn heredoc_read_past_its_end(text: &str, body: &Body) -> Option<(usize, String)> {
    let mut spans = HeredocSpans(Vec::new());
    hcl_edit::visit::Visit::visit_body(&mut spans, body);
    spans.0.into_iter().find_map(|(delimiter, span)| {
        let inner: Vec<&str> = text.get(span.clone())?.lines().collect();
        let inside = inner.get(1..inner.len().saturating_sub(1))?;
        inside
            .iter()
            .any(|l| l.trim() == delimiter)
            .then_some((span.start, delimiter))
    })
}
