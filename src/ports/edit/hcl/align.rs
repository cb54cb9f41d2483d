//! `terraform fmt`'s alignment of `=` in the data object, so an edit keeps a formatted file
//! formatted. hclwrite aligns a *chain*: consecutive lines that each start with an entry whose
//! line holds a whole expression (a heredoc counts as one); a blank line, a comment line, a
//! line that opens or closes a bracket, or a multi-line value ends the chain. Within a chain `=`
//! sits one column after the longest key.
//!
//! A block aligned by hand across chains (one `=` column for every entry, comment lines
//! between) keeps that style instead: [`Style::Global`].

#[cfg(test)]
use super::read;
use super::{CellMetadata, DataEntry};
use crate::ports::edit::list::{self, Edit};
use crate::ports::edit::text::{LineIndex, line_end, line_start};

/// Column (in characters) of `offset` in its line.
fn column(text: &str, offset: usize) -> usize {
    text[line_start(text, offset)..offset].chars().count()
}

/// Offset of the `=` between an entry's key and value.
fn equals(text: &str, e: &DataEntry) -> usize {
    text[e.key_span.end..e.value_span.start]
        .find(['=', ':'])
        .map_or(e.key_span.end, |i| e.key_span.end + i)
}

/// Net brackets opened in `s`, outside strings and comments.
fn net_brackets(s: &str) -> i64 {
    let mut net = 0;
    let mut in_string = false;
    let mut escaped = false;
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'#' => break,
                b'/' if bytes.get(i + 1) == Some(&b'/') => break,
                b'{' | b'[' | b'(' => net += 1,
                b'}' | b']' | b')' => net -= 1,
                _ => {}
            }
        }
        i += 1;
    }
    net
}

/// How a data object is aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Every chain as `terraform fmt` aligns it.
    Chains,
    /// One `=` column for every entry that could be aligned.
    Global,
    /// Neither: edits touch no padding.
    None,
}

pub fn style(text: &str, meta: &CellMetadata) -> Style {
    if chains_of(text, meta).iter().all(|(_, aligned)| *aligned) {
        return Style::Chains;
    }
    let all: Vec<usize> = chains(text, meta).into_iter().flatten().collect();
    let (longest, cols) = widths(text, meta, &all);
    if cols.iter().all(|(_, eq)| *eq == longest + 1) {
        Style::Global
    } else {
        Style::None
    }
}

/// The chains of `meta`'s entries, as indices.
fn chains(text: &str, meta: &CellMetadata) -> Vec<Vec<usize>> {
    let mut chains: Vec<Vec<usize>> = Vec::new();
    let mut open = false;
    // Line of the end of the previous entry's value, and whether a chain may continue after it.
    let mut prev_end_line: Option<usize> = None;
    let lines = LineIndex::new(text);
    for (i, e) in meta.entries.iter().enumerate() {
        let key_line = lines.line(e.key_span.start);
        let starts_line = text[line_start(text, e.key_span.start)..e.key_span.start]
            .bytes()
            .all(|b| b == b' ' || b == b'\t');
        let value = &text[e.value_span.clone()];
        let heredoc = value.starts_with("<<");
        let one_line = heredoc || !value.contains('\n');
        let rest_end = line_end(text, e.value_span.end);
        let whole = one_line && net_brackets(&text[e.value_span.end..rest_end]) == 0;
        if starts_line {
            let adjacent = prev_end_line.is_some_and(|l| l + 1 == key_line);
            if whole {
                if open && adjacent {
                    chains.last_mut().expect("an open chain").push(i);
                } else {
                    chains.push(vec![i]);
                }
                open = true;
            } else {
                open = false;
            }
        }
        if !one_line && !heredoc {
            open = false;
        }
        prev_end_line = Some(lines.line(e.value_span.end));
    }
    chains
}

fn widths(text: &str, meta: &CellMetadata, chain: &[usize]) -> (usize, Vec<(usize, usize)>) {
    let cols: Vec<(usize, usize)> = chain
        .iter()
        .map(|i| {
            let e = &meta.entries[*i];
            (column(text, e.key_span.end), column(text, equals(text, e)))
        })
        .collect();
    let longest = cols.iter().map(|(k, _)| *k).max().unwrap_or(0);
    (longest, cols)
}

/// Every chain's keys, and whether `terraform fmt` would leave it as it is.
pub fn chains_of(text: &str, meta: &CellMetadata) -> Vec<(Vec<String>, bool)> {
    chains(text, meta)
        .into_iter()
        .map(|chain| {
            let (longest, cols) = widths(text, meta, &chain);
            let aligned = cols.iter().all(|(_, eq)| *eq == longest + 1);
            let keys = chain.iter().map(|i| meta.entries[*i].key.clone()).collect();
            (keys, aligned)
        })
        .collect()
}

/// Keys of the entries some chain holds.
pub fn chained(text: &str, meta: &CellMetadata) -> std::collections::BTreeSet<String> {
    chains(text, meta)
        .into_iter()
        .flatten()
        .map(|i| meta.entries[i].key.clone())
        .collect()
}

/// Whether an edit from `before` to `after` left every entry of `keys` in or out of a chain as
/// it was. When it did not (the closing `}` moved off or onto an entry's line), re-padding
/// could not be undone by the inverse edit, so none is done.
pub fn stable(
    (before, was): (&str, &CellMetadata),
    (after, is): (&str, &CellMetadata),
    keys: &[String],
) -> bool {
    let was = chained(before, was);
    let is = chained(after, is);
    keys.iter().all(|k| was.contains(k) == is.contains(k))
}

/// Re-pads the chains holding any of `keys` so `=` sits one column after their longest key, in
/// one pass. Other chains keep their bytes.
pub fn realign_where(text: &str, meta: &CellMetadata, keys: &[String]) -> String {
    if keys.is_empty() {
        return text.to_string();
    }
    let chains = chains(text, meta)
        .into_iter()
        .filter(|chain| chain.iter().any(|i| keys.contains(&meta.entries[*i].key)));
    pad(text, meta, chains)
}

/// Re-pads every entry that could be aligned to one `=` column.
pub fn realign_global(text: &str, meta: &CellMetadata) -> String {
    let all: Vec<usize> = chains(text, meta).into_iter().flatten().collect();
    pad(text, meta, std::iter::once(all))
}

fn pad(text: &str, meta: &CellMetadata, groups: impl Iterator<Item = Vec<usize>>) -> String {
    let mut edits = Vec::new();
    for chain in groups {
        let (longest, cols) = widths(text, meta, &chain);
        for (i, (key_col, eq_col)) in chain.iter().zip(cols) {
            if eq_col != longest + 1 {
                let e = &meta.entries[*i];
                edits.push(Edit {
                    range: e.key_span.end..equals(text, e),
                    with: " ".repeat(longest - key_col + 1),
                });
            }
        }
    }
    list::apply(text, edits)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DATA: &str = "resource \"kubernetes_config_map_v1\" \"cell_metadata\" {\n  data = {\n    a   = 1 # c\n    bcd = 2\n\n    ef = 3\n    # comment\n    g = <<EOT\nx\nEOT\n    hij = 4\n    m = merge(\n      {}, {})\n    n = 5\n  }\n}\n";

    #[test]
    fn chains_follow_terraform_fmt() {
        let meta = read(DATA).unwrap();
        let keys = |chain: &Vec<usize>| -> Vec<&str> {
            chain
                .iter()
                .map(|i| meta.entries[*i].key.as_str())
                .collect()
        };
        let got: Vec<Vec<&str>> = chains(DATA, &meta).iter().map(keys).collect();
        assert_eq!(
            got,
            [vec!["a", "bcd"], vec!["ef"], vec!["g", "hij"], vec!["n"]]
        );
        let aligned: Vec<bool> = chains_of(DATA, &meta).iter().map(|(_, a)| *a).collect();
        assert_eq!(aligned, [true, true, false, true]);
        let all: Vec<String> = meta.entries.iter().map(|e| e.key.clone()).collect();
        let fixed = realign_where(DATA, &meta, &all);
        assert!(fixed.contains("    g   = <<EOT\n"), "{fixed}");
        assert!(
            chains_of(&fixed, &read(&fixed).unwrap())
                .iter()
                .all(|(_, a)| *a)
        );
    }
}
