//! Adding and removing items of a bracketed list in place: a YAML flow sequence `[a, b]`, an HCL
//! tuple `[a, b]` or an HCL object `{ a = 1, b = 2 }`. The parsers locate the brackets and the
//! items; this module decides the bytes, for every layout: one line or many, trailing comma or
//! not, comments after items, the closing bracket on the last item's line.
//!
//! New items go at the end, in the style of the items before them, and removing them again
//! gives back the original bytes. Edits are computed against the original text and applied in one
//! pass, so a batch of N items costs one pass, not N.

use std::ops::Range;

use super::text::{line_end, line_start};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// `#` comments (after whitespace).
    Yaml,
    /// `#`, `//` and `/* */` comments.
    Hcl,
}

/// One replacement of a byte range of the original text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub range: Range<usize>,
    pub with: String,
}

impl Edit {
    pub fn insert(at: usize, with: impl Into<String>) -> Edit {
        Edit {
            range: at..at,
            with: with.into(),
        }
    }
    pub fn delete(range: Range<usize>) -> Edit {
        Edit {
            range,
            with: String::new(),
        }
    }
}

/// Applies non-overlapping edits of `text` in one pass.
pub fn apply(text: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|e| (e.range.start, e.range.end));
    let mut out =
        String::with_capacity(text.len() + edits.iter().map(|e| e.with.len()).sum::<usize>());
    let mut at = 0;
    for edit in edits {
        debug_assert!(edit.range.start >= at, "overlapping edits");
        let start = edit.range.start.max(at);
        out.push_str(&text[at..start]);
        out.push_str(&edit.with);
        at = edit.range.end.max(start);
    }
    out.push_str(&text[at..]);
    out
}

/// A bracketed list of `text`: where its brackets and items are.
#[derive(Debug)]
pub struct List<'a> {
    text: &'a str,
    open: usize,
    close: usize,
    items: Vec<Range<usize>>,
    /// The comma after each item, if any.
    commas: Vec<Option<usize>>,
    syntax: Syntax,
    /// Tuples and YAML sequences need a comma between items; HCL objects also take newlines.
    commas_required: bool,
}

/// Leading spaces and tabs of the line containing `offset`.
pub fn indent_str(text: &str, offset: usize) -> &str {
    let start = line_start(text, offset);
    let len = text[start..]
        .bytes()
        .take_while(|b| *b == b' ' || *b == b'\t')
        .count();
    &text[start..start + len]
}

impl<'a> List<'a> {
    /// `open` and `close` are the offsets of the brackets; `items` the spans of the items.
    pub fn new(
        text: &'a str,
        open: usize,
        close: usize,
        items: Vec<Range<usize>>,
        syntax: Syntax,
        commas_required: bool,
    ) -> List<'a> {
        let commas = items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let limit = items.get(i + 1).map_or(close, |next| next.start);
                let at = skip_trivia(text, item.end, limit, syntax);
                (at < limit && text.as_bytes()[at] == b',').then_some(at)
            })
            .collect();
        List {
            text,
            open,
            close,
            items,
            commas,
            syntax,
            commas_required,
        }
    }

    fn multi_line(&self) -> bool {
        self.text[self.open..self.close].contains('\n')
    }

    fn starts_line(&self, i: usize) -> bool {
        let item = &self.items[i];
        self.text[line_start(self.text, item.start)..item.start]
            .bytes()
            .all(|b| b == b' ' || b == b'\t')
    }

    /// The item's whole line(s), when nothing but its comma and a comment shares them.
    fn alone(&self, i: usize) -> Option<Range<usize>> {
        if !self.starts_line(i) {
            return None;
        }
        let bytes = self.text.as_bytes();
        let mut p = self.commas[i].map_or(self.items[i].end, |c| c + 1);
        if self.commas[i].is_none() {
            // A comment may sit between the item and its comma only across lines; not alone.
            while p < bytes.len() && (bytes[p] == b' ' || bytes[p] == b'\t') {
                p += 1;
            }
        } else {
            let between = &self.text[self.items[i].end..p - 1];
            if !between.bytes().all(|b| b == b' ' || b == b'\t') {
                return None;
            }
        }
        while p < bytes.len() && (bytes[p] == b' ' || bytes[p] == b'\t') {
            p += 1;
        }
        let rest = &self.text[p..];
        let ends = rest.is_empty()
            || rest.starts_with('\n')
            || rest.starts_with("\r\n")
            || rest.starts_with('#')
            || (self.syntax == Syntax::Hcl && rest.starts_with("//"));
        ends.then(|| line_start(self.text, self.items[i].start)..line_end(self.text, p))
    }

    /// Edits that append `new` (item texts) after the last item.
    pub fn append(&self, new: &[String]) -> Vec<Edit> {
        if new.is_empty() {
            return Vec::new();
        }
        let text = self.text;
        let Some(last) = self.items.len().checked_sub(1) else {
            let inner = &text[self.open + 1..self.close];
            if let Some(newline) = inner.find('\n') {
                // `[ # comment` stays on the bracket's line; the items go on lines of their own.
                let indent = format!("{}  ", indent_str(text, self.open));
                let sep = if self.commas_required { "," } else { "" };
                let body: String = new
                    .iter()
                    .enumerate()
                    .map(|(k, item)| {
                        let comma = if k + 1 < new.len() { sep } else { "" };
                        format!("\n{indent}{item}{comma}")
                    })
                    .collect();
                let at = self.open + 1 + newline;
                return vec![Edit::insert(at, body)];
            }
            let joined = new.join(", ");
            let with = if inner.is_empty() {
                joined
            } else {
                format!(" {joined}")
            };
            return vec![Edit::insert(self.open + 1, with)];
        };
        let trailing = self.commas[last];
        let item_comma = |k: usize| {
            if k + 1 < new.len() {
                if self.commas_required || trailing.is_some() {
                    ","
                } else {
                    ""
                }
            } else if trailing.is_some() {
                ","
            } else {
                ""
            }
        };
        let indent = indent_str(text, self.items[last].start).to_string();
        let mut edits = Vec::new();
        if self.multi_line() && self.starts_line(last) {
            if self.commas_required && trailing.is_none() {
                edits.push(Edit::insert(self.items[last].end, ","));
            }
            if let Some(line) = self.alone(last) {
                // One line per new item, after the last item's line.
                let mut body = String::new();
                if !text[..line.end].ends_with('\n') {
                    body.push('\n');
                }
                for (k, item) in new.iter().enumerate() {
                    body.push_str(&format!("{indent}{item}{}\n", item_comma(k)));
                }
                edits.push(Edit::insert(line.end, body));
            } else {
                // The closing bracket (or a block comment) follows the last item: the new
                // items go between them, each on a line of its own.
                let at = trailing.map_or(self.items[last].end, |c| c + 1);
                let body: String = new
                    .iter()
                    .enumerate()
                    .map(|(k, item)| format!("\n{indent}{item}{}", item_comma(k)))
                    .collect();
                edits.push(Edit::insert(at, body));
            }
            return edits;
        }
        let joined = new.join(", ");
        match trailing {
            Some(comma) => edits.push(Edit::insert(comma + 1, format!(" {joined},"))),
            None => edits.push(Edit::insert(self.items[last].end, format!(", {joined}"))),
        }
        edits
    }

    /// Edits that remove the items at `indices`.
    pub fn remove(&self, indices: &[usize]) -> Vec<Edit> {
        let mut indices: Vec<usize> = indices.to_vec();
        indices.sort_unstable();
        indices.dedup();
        let n = self.items.len();
        let mut edits = Vec::new();
        let mut k = 0;
        while k < indices.len() {
            let i = indices[k];
            let mut j = i;
            while k + 1 < indices.len() && indices[k + 1] == j + 1 {
                k += 1;
                j += 1;
            }
            k += 1;
            edits.extend(self.remove_run(i, j, n));
        }
        edits
    }

    fn remove_run(&self, i: usize, j: usize, n: usize) -> Vec<Edit> {
        let items = &self.items;
        let all_alone: Option<Vec<Range<usize>>> = (i..=j).map(|k| self.alone(k)).collect();
        if let Some(lines) = all_alone
            && self.multi_line()
        {
            let mut edits = vec![Edit::delete(lines[0].start..lines[lines.len() - 1].end)];
            if j + 1 == n
                && i > 0
                && self.commas[j].is_none()
                && self.commas_required
                && let Some(comma) = self.commas[i - 1]
            {
                edits.push(Edit::delete(comma..comma + 1));
            }
            return edits;
        }
        if j + 1 < n {
            return vec![Edit::delete(items[i].start..items[j + 1].start)];
        }
        if i > 0 {
            return vec![match self.commas[j] {
                Some(comma) => {
                    let from = self.commas[i - 1].map_or(items[i - 1].end, |c| c + 1);
                    Edit::delete(from..comma + 1)
                }
                None => Edit::delete(items[i - 1].end..items[j].end),
            }];
        }
        // Every item goes: back to the brackets with the whitespace they had.
        let bytes = self.text.as_bytes();
        let mut start = items[0].start;
        while start > self.open + 1 && bytes[start - 1].is_ascii_whitespace() {
            start -= 1;
        }
        let end = self.commas[j].map_or(items[j].end, |c| c + 1);
        vec![Edit::delete(start..end)]
    }
}

/// Skips whitespace and comments from `from` (not past `limit`).
pub fn skip_trivia(text: &str, mut from: usize, limit: usize, syntax: Syntax) -> usize {
    let bytes = text.as_bytes();
    while from < limit {
        let b = bytes[from];
        if b.is_ascii_whitespace() {
            from += 1;
        } else if b == b'#' || (syntax == Syntax::Hcl && text[from..].starts_with("//")) {
            from = line_end(text, from).min(limit);
        } else if syntax == Syntax::Hcl && text[from..].starts_with("/*") {
            from = text[from + 2..]
                .find("*/")
                .map_or(limit, |i| from + 2 + i + 2)
                .min(limit);
        } else {
            break;
        }
    }
    from
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A YAML-like flow list of plain words, located by hand.
    fn list(text: &str) -> List<'_> {
        let open = text.find('[').unwrap();
        let close = text.rfind(']').unwrap();
        let mut items = Vec::new();
        let bytes = text.as_bytes();
        let mut i = open + 1;
        while i < close {
            if bytes[i] == b'#' {
                i = line_end(text, i);
            } else if bytes[i].is_ascii_alphanumeric() {
                let start = i;
                while bytes[i].is_ascii_alphanumeric() {
                    i += 1;
                }
                items.push(start..i);
            } else {
                i += 1;
            }
        }
        List::new(text, open, close, items, Syntax::Yaml, true)
    }

    fn round_trip(text: &str, expected_added: &str) {
        let added = apply(text, list(text).append(&["new".into(), "two".into()]));
        assert_eq!(added, expected_added, "adding to {text:?}");
        let l = list(&added);
        let n = l.items.len();
        assert_eq!(
            apply(&added, l.remove(&[n - 2, n - 1])),
            text,
            "removing from {added:?}"
        );
        // One at a time gives the same.
        let one = apply(&added, list(&added).remove(&[n - 1]));
        let l = list(&one);
        assert_eq!(apply(&one, l.remove(&[n - 2])), text);
    }

    #[test]
    fn append_then_remove_restores_every_layout() {
        round_trip("x: []\n", "x: [new, two]\n");
        round_trip("x: [ ]\n", "x: [ new, two ]\n");
        round_trip("x: [a]\n", "x: [a, new, two]\n");
        round_trip("x: [a, ]\n", "x: [a, new, two, ]\n");
        round_trip("x: [\n  a\n]\n", "x: [\n  a,\n  new,\n  two\n]\n");
        round_trip("x: [\n  a,\n]\n", "x: [\n  a,\n  new,\n  two,\n]\n");
        round_trip("x: [\n  a # c\n]\n", "x: [\n  a, # c\n  new,\n  two\n]\n");
        round_trip("x: [\n  a ]\n", "x: [\n  a,\n  new,\n  two ]\n");
        round_trip("x: [\n  ]\n", "x: [\n  new,\n  two\n  ]\n");
        round_trip("x: [ # c\n]\n", "x: [ # c\n  new,\n  two\n]\n");
        round_trip("x: [a,\n   b]\n", "x: [a,\n   b,\n   new,\n   two]\n");
    }

    #[test]
    fn removes_from_the_middle_and_the_front() {
        let text = "x: [a, b, c]\n";
        assert_eq!(apply(text, list(text).remove(&[0])), "x: [b, c]\n");
        assert_eq!(apply(text, list(text).remove(&[1])), "x: [a, c]\n");
        assert_eq!(apply(text, list(text).remove(&[0, 2])), "x: [b]\n");
        assert_eq!(apply(text, list(text).remove(&[0, 1, 2])), "x: []\n");
        let lines = "x: [\n  a,\n  b, # bee\n  c\n]\n";
        assert_eq!(
            apply(lines, list(lines).remove(&[1])),
            "x: [\n  a,\n  c\n]\n"
        );
        assert_eq!(
            apply(lines, list(lines).remove(&[2])),
            "x: [\n  a,\n  b # bee\n]\n"
        );
    }
}
