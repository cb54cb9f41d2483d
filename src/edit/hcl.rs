//! Edits of `cell-metadata.tf`: the ConfigMap's `data` entries, its `schema` value and its
//! `depends_on` list. hcl-edit parses and gives spans; edits are spliced into the original text.
//! Alignment follows `terraform fmt` when the block was aligned, so add-then-remove restores the
//! original bytes either way.

use std::ops::Range;

use hcl_edit::Span;
use hcl_edit::expr::{Expression, ObjectKey};
use hcl_edit::structure::{Block, Body};

use super::text::{line_end, line_number, line_start, splice};

pub const CONFIG_MAP_TYPE: &str = "kubernetes_config_map_v1";
pub const CONFIG_MAP_NAME: &str = "cell_metadata";

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
    data_close: usize,
    depends_on_attr: Option<Range<usize>>,
    block_end: usize,
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

fn find_config_map(body: &Body) -> Option<&Block> {
    body.get_blocks("resource")
        .find(|b| b.has_exact_labels(&[CONFIG_MAP_TYPE, CONFIG_MAP_NAME]))
}

/// Reads the ConfigMap resource `kubernetes_config_map_v1.cell_metadata` from `text`.
pub fn read(text: &str) -> Result<CellMetadata, HclEditError> {
    let body = parse_body(text)?;
    let block = find_config_map(&body).ok_or_else(|| HclEditError {
        line: 1,
        message: format!("no `resource \"{CONFIG_MAP_TYPE}\" \"{CONFIG_MAP_NAME}\"` block"),
    })?;
    let block_end = block.span().map_or(text.len(), |s| s.end);
    let data = block.body.get_attribute("data").ok_or_else(|| {
        err(
            text,
            block.span().map_or(0, |s| s.start),
            "the ConfigMap has no `data` attribute",
        )
    })?;
    let Expression::Object(object) = &data.value else {
        return Err(err(
            text,
            data.span().map_or(0, |s| s.start),
            "`data` is not an object literal `{ key = value }`",
        ));
    };
    let mut entries = Vec::new();
    for (key, value) in object.iter() {
        let key_name = match key {
            ObjectKey::Ident(ident) => ident.as_str().to_string(),
            ObjectKey::Expression(Expression::String(s)) => s.as_str().to_string(),
            ObjectKey::Expression(other) => {
                return Err(err(
                    text,
                    other.span().map_or(0, |s| s.start),
                    "a data key is an expression; cellgen needs literal keys",
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
            line: line_number(text, key_span.start),
            key_span,
            value_span,
        });
    }
    let data_span = data
        .value
        .span()
        .ok_or_else(|| err(text, 0, "internal: data without span"))?;
    let (depends_on, depends_on_spans, depends_on_attr) =
        match block.body.get_attribute("depends_on") {
            None => (Vec::new(), Vec::new(), None),
            Some(attr) => {
                let Expression::Array(array) = &attr.value else {
                    return Err(err(
                        text,
                        attr.span().map_or(0, |s| s.start),
                        "`depends_on` is not a list",
                    ));
                };
                let spans: Vec<Range<usize>> = array.iter().filter_map(|e| e.span()).collect();
                let names = spans.iter().map(|s| text[s.clone()].to_string()).collect();
                (names, spans, attr.value.span())
            }
        };
    Ok(CellMetadata {
        entries,
        depends_on,
        depends_on_spans,
        data_close: data_span.end - 1,
        depends_on_attr,
        block_end,
    })
}

impl CellMetadata {
    pub fn get(&self, key: &str) -> Option<&DataEntry> {
        self.entries.iter().find(|e| e.key == key)
    }
}

/// Width `terraform fmt` aligns `=` to, if every single-line entry is aligned that way.
fn aligned_width(text: &str, entries: &[DataEntry]) -> Option<usize> {
    let widths: Vec<(usize, usize)> = entries
        .iter()
        .map(|e| {
            let start = line_start(text, e.key_span.start);
            let eq = text[e.key_span.end..e.value_span.start]
                .find('=')
                .map_or(0, |i| i + e.key_span.end);
            (e.key_span.end - start, eq - start)
        })
        .collect();
    let eq_col = widths.first()?.1;
    let key_width = widths.iter().map(|(k, _)| *k).max()?;
    (widths.iter().all(|(_, eq)| *eq == eq_col) && eq_col == key_width + 1).then_some(key_width)
}

/// Re-pads every entry so `=` sits one column after the longest key (terraform fmt's layout).
fn realign(text: &str) -> Result<String, HclEditError> {
    let meta = read(text)?;
    let Some(longest) = meta
        .entries
        .iter()
        .map(|e| e.key_span.end - line_start(text, e.key_span.start))
        .max()
    else {
        return Ok(text.to_string());
    };
    let mut out = text.to_string();
    for e in meta.entries.iter().rev() {
        let gap = e.key_span.end
            ..text[e.key_span.end..]
                .find('=')
                .map_or(e.key_span.end, |i| i + e.key_span.end);
        let key_end_col = e.key_span.end - line_start(text, e.key_span.start);
        out = splice(&out, gap, &" ".repeat(longest - key_end_col + 1));
    }
    Ok(out)
}

/// Adds `key = value` as the last data entry; an existing key is an error.
pub fn add_data_entry(text: &str, key: &str, value: &str) -> Result<String, HclEditError> {
    let meta = read(text)?;
    if let Some(existing) = meta.get(key) {
        return Err(err(
            text,
            existing.key_span.start,
            format!("data already has a `{key}` entry"),
        ));
    }
    let aligned = aligned_width(text, &meta.entries);
    let indent = meta
        .entries
        .last()
        .map_or(4, |e| e.key_span.start - line_start(text, e.key_span.start));
    let insert_at = match meta.entries.last() {
        Some(last) => line_end(text, last.value_span.end),
        None => line_start(text, meta.data_close),
    };
    let line = format!("{}{key} = {value}\n", " ".repeat(indent));
    let edited = splice(text, insert_at..insert_at, &line);
    match aligned {
        Some(_) => realign(&edited),
        None => Ok(edited),
    }
}

/// Removes the data entry `key`, with its line(s).
pub fn remove_data_entry(text: &str, key: &str) -> Result<String, HclEditError> {
    let meta = read(text)?;
    let Some(entry) = meta.get(key) else {
        return Ok(text.to_string());
    };
    let others: Vec<DataEntry> = meta
        .entries
        .iter()
        .filter(|e| e.key != key)
        .cloned()
        .collect();
    let was_aligned = aligned_width(text, &meta.entries).is_some();
    let edited = splice(
        text,
        line_start(text, entry.key_span.start)..line_end(text, entry.value_span.end),
        "",
    );
    if was_aligned && !others.is_empty() {
        realign(&edited)
    } else {
        Ok(edited)
    }
}

/// Replaces the value of an existing data entry.
pub fn set_data_value(text: &str, key: &str, value: &str) -> Result<String, HclEditError> {
    let meta = read(text)?;
    let entry = meta
        .get(key)
        .ok_or_else(|| err(text, meta.data_close, format!("data has no `{key}` entry")))?;
    Ok(splice(text, entry.value_span.clone(), value))
}

/// Adds `reference` to `depends_on` (creating the attribute if needed).
pub fn add_depends_on(text: &str, reference: &str) -> Result<String, HclEditError> {
    let meta = read(text)?;
    if meta.depends_on.iter().any(|d| d == reference) {
        return Ok(text.to_string());
    }
    match (&meta.depends_on_attr, meta.depends_on_spans.last()) {
        (Some(attr), Some(last)) if text[attr.clone()].contains('\n') => {
            let indent = last.start - line_start(text, last.start);
            let at = line_end(text, last.end);
            Ok(splice(
                text,
                at..at,
                &format!("{}{reference},\n", " ".repeat(indent)),
            ))
        }
        (Some(_), Some(last)) => Ok(splice(text, last.end..last.end, &format!(", {reference}"))),
        (Some(attr), None) => Ok(splice(text, attr.clone(), &format!("[{reference}]"))),
        (None, _) => {
            let close = line_start(text, meta.block_end - 1);
            Ok(splice(
                text,
                close..close,
                &format!("\n  depends_on = [{reference}]\n"),
            ))
        }
    }
}

/// Removes `reference` from `depends_on`.
pub fn remove_depends_on(text: &str, reference: &str) -> Result<String, HclEditError> {
    let meta = read(text)?;
    let Some(index) = meta.depends_on.iter().position(|d| d == reference) else {
        return Ok(text.to_string());
    };
    let span = meta.depends_on_spans[index].clone();
    let attr = meta.depends_on_attr.clone().unwrap_or(span.clone());
    if text[attr.clone()].contains('\n')
        && text[line_start(text, span.start)..span.start]
            .trim()
            .is_empty()
    {
        return Ok(splice(
            text,
            line_start(text, span.start)..line_end(text, span.end),
            "",
        ));
    }
    // One-line list: drop the item with the separator next to it.
    let range = if index + 1 < meta.depends_on_spans.len() {
        span.start..meta.depends_on_spans[index + 1].start
    } else if index > 0 {
        meta.depends_on_spans[index - 1].end..span.end
    } else {
        span.clone()
    };
    Ok(splice(text, range, ""))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TF: &str = r#"# keep me
resource "kubernetes_config_map_v1" "cell_metadata" {
  metadata {
    name      = "cell-metadata"
    namespace = "flux-system"
  }

  data = {
    schema       = "1" # the contract version
    cell_name    = var.name
    cluster_name = module.eks.cluster_name
  }

  depends_on = [
    flux_bootstrap_git.this,
  ]
}
"#;

    #[test]
    fn reads_entries_and_literals() {
        let meta = read(TF).unwrap();
        let keys: Vec<_> = meta.entries.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["schema", "cell_name", "cluster_name"]);
        assert_eq!(meta.get("schema").unwrap().literal.as_deref(), Some("1"));
        assert_eq!(meta.get("cell_name").unwrap().value, "var.name");
        assert_eq!(meta.get("cell_name").unwrap().line, 10);
        assert_eq!(meta.depends_on, ["flux_bootstrap_git.this"]);
    }

    #[test]
    fn add_then_remove_restores_bytes_and_keeps_alignment() {
        let added = add_data_entry(
            TF,
            "karpenter_interruption_queue",
            "module.karpenter.queue_name",
        )
        .unwrap();
        assert!(
            added.contains("    karpenter_interruption_queue = module.karpenter.queue_name\n"),
            "{added}"
        );
        assert!(
            added.contains("    schema                       = \"1\" # the contract version\n"),
            "{added}"
        );
        let added = add_depends_on(&added, "module.karpenter").unwrap();
        assert!(
            added.contains("    flux_bootstrap_git.this,\n    module.karpenter,\n"),
            "{added}"
        );
        let removed = remove_depends_on(
            &remove_data_entry(&added, "karpenter_interruption_queue").unwrap(),
            "module.karpenter",
        )
        .unwrap();
        assert_eq!(removed, TF);
    }

    #[test]
    fn short_keys_do_not_realign() {
        let added = add_data_entry(TF, "vpc_id", "module.vpc.vpc_id").unwrap();
        assert!(
            added.contains("    vpc_id       = module.vpc.vpc_id\n"),
            "{added}"
        );
        assert_eq!(remove_data_entry(&added, "vpc_id").unwrap(), TF);
    }

    #[test]
    fn sets_schema_value() {
        let bumped = set_data_value(TF, "schema", "\"2\"").unwrap();
        assert!(bumped.contains("schema       = \"2\" # the contract version"));
    }

    #[test]
    fn malformed_hcl_names_the_line() {
        let e = read("resource \"x\" {\n  a = \n}\n").unwrap_err();
        assert!(e.line >= 2, "{e:?}");
    }
}
