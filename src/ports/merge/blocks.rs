//! Reading YAML and HCL as blocks of entries, from indentation alone (for `entries`): what an
//! entry is, its key, and HCL's `=` alignment as `terraform fmt` writes it.

use std::collections::BTreeMap;

use super::{Chunk, Syntax};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Keyed entries: YAML `key:`, HCL attributes and blocks.
    Mapping,
    /// Items: YAML `- …`, HCL list elements.
    Sequence,
}

#[derive(Debug, Clone)]
pub(super) struct Entry<'a> {
    pub(super) key: String,
    /// Comments and blank lines above it.
    pub(super) trivia: Vec<&'a str>,
    pub(super) head: &'a str,
    /// The more indented lines below it.
    pub(super) body: Vec<&'a str>,
    /// HCL: the closing `}`/`]`/`)` at the entry's own indentation.
    pub(super) close: Option<&'a str>,
    /// A YAML block scalar or an HCL heredoc: its lines are text, not structure.
    pub(super) opaque: bool,
}

pub(super) fn lookup<'a>(
    block: &Block<'a>,
    index: &BTreeMap<String, usize>,
    key: &str,
) -> Option<Entry<'a>> {
    index.get(key).map(|i| block.entries[*i].clone())
}

pub(super) fn lines_of<'a>(entries: &[Entry<'a>]) -> Vec<&'a str> {
    entries.iter().flat_map(Entry::lines).collect()
}

impl<'a> Entry<'a> {
    pub(super) fn lines(&self) -> Vec<&'a str> {
        let mut out = self.trivia.clone();
        out.push(self.head);
        out.extend(&self.body);
        out.extend(self.close);
        out
    }
}

#[derive(Debug)]
pub(super) struct Block<'a> {
    pub(super) kind: Option<Kind>,
    pub(super) indent: Option<usize>,
    pub(super) entries: Vec<Entry<'a>>,
    /// Comments and blank lines after the last entry.
    pub(super) tail: Vec<&'a str>,
}

pub(super) fn same_lines(syntax: Syntax, a: &[&str], b: &[&str]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x == y || normalise(syntax, x) == normalise(syntax, y))
}

/// A line as compared: an HCL attribute with its `=` alignment taken out.
pub(super) fn normalise(syntax: Syntax, line: &str) -> String {
    if syntax == Syntax::Hcl
        && let Some(attr) = hcl_attribute(line)
    {
        return format!("{}{} = {}", " ".repeat(attr.indent), attr.key, attr.value);
    }
    line.to_string()
}

pub(super) fn is_trivia(syntax: Syntax, line: &str) -> bool {
    let text = line.trim();
    text.is_empty() || text.starts_with('#') || (syntax == Syntax::Hcl && text.starts_with("//"))
}

/// Leading spaces; a tab in the indentation is not read (None).
pub(super) fn indent_of(line: &str) -> Option<usize> {
    let spaces = line.len() - line.trim_start_matches(' ').len();
    (!line[spaces..].starts_with('\t')).then_some(spaces)
}

pub(super) fn parse<'a>(lines: &[&'a str], syntax: Syntax) -> Option<Block<'a>> {
    let mut block = Block {
        kind: None,
        indent: None,
        entries: Vec::new(),
        tail: Vec::new(),
    };
    let mut pending: Vec<&'a str> = Vec::new();
    for &line in lines {
        if is_trivia(syntax, line) {
            pending.push(line);
            continue;
        }
        let indent = indent_of(line)?;
        let text = line.trim();
        let level = *block.indent.get_or_insert(indent);
        if indent < level {
            return None;
        }
        let closer = syntax == Syntax::Hcl && text.starts_with(['}', ']', ')']);
        let compact_list = syntax == Syntax::Yaml
            && block.kind == Some(Kind::Mapping)
            && (text == "-" || text.starts_with("- "))
            && block
                .entries
                .last()
                .is_some_and(|e| yaml_value(e.head).is_empty());
        if indent > level || closer || compact_list {
            let entry = block.entries.last_mut()?;
            if entry.close.is_some() {
                return None;
            }
            entry.body.append(&mut pending);
            if closer && indent == level {
                entry.close = Some(line);
            } else {
                entry.body.push(line);
            }
            continue;
        }
        let (key, kind, opaque) = match syntax {
            Syntax::Yaml => yaml_key(text)?,
            _ => hcl_key(text)?,
        };
        if *block.kind.get_or_insert(kind) != kind {
            return None;
        }
        block.entries.push(Entry {
            key,
            trivia: std::mem::take(&mut pending),
            head: line,
            body: Vec::new(),
            close: None,
            opaque,
        });
    }
    block.tail = pending;
    if block.kind == Some(Kind::Mapping) {
        let mut keys: Vec<&str> = block.entries.iter().map(|e| e.key.as_str()).collect();
        keys.sort_unstable();
        if keys.windows(2).any(|w| w[0] == w[1]) {
            return None;
        }
    }
    Some(block)
}

/// What follows `key:` on a YAML line (trimmed, comment dropped), or a list item's value.
pub(super) fn yaml_value(line: &str) -> &str {
    let text = line.trim();
    let rest = match text.strip_prefix('-') {
        Some(rest) if rest.is_empty() || rest.starts_with(' ') => rest,
        _ => match yaml_key_end(text) {
            Some(end) => &text[end + 1..],
            None => text,
        },
    };
    let rest = rest.trim();
    if rest.starts_with('#') { "" } else { rest }
}

/// Byte offset of the `:` that ends a YAML mapping key on this (trimmed) line.
pub(super) fn yaml_key_end(text: &str) -> Option<usize> {
    let start = match text.chars().next()? {
        quote @ ('"' | '\'') => {
            let close = text[1..].find(quote)? + 1;
            close + 1
        }
        _ => 0,
    };
    let rest = &text[start..];
    let colon = rest
        .match_indices(':')
        .find(|(i, _)| rest[i + 1..].is_empty() || rest[i + 1..].starts_with([' ', '\t']))?
        .0;
    Some(start + colon)
}

pub(super) fn yaml_key(text: &str) -> Option<(String, Kind, bool)> {
    if text == "---" || text == "..." || text.starts_with("--- ") {
        return None;
    }
    if text == "-" || text.starts_with("- ") {
        let value = yaml_value(text);
        return Some((
            format!("- {}", text[1..].trim()),
            Kind::Sequence,
            value.starts_with(['|', '>']),
        ));
    }
    if text.starts_with(['{', '[', '?', '&', '*', '!', '|', '>', '%', '@', '`']) {
        return None;
    }
    let end = yaml_key_end(text)?;
    let key = text[..end].trim_end();
    if key.is_empty() || key.contains(" #") {
        return None;
    }
    let value = yaml_value(text);
    Some((
        format!("k {key}"),
        Kind::Mapping,
        value.starts_with(['|', '>']),
    ))
}

/// An HCL attribute line: `name = value` or `"name" = value` (a block's or an object's).
pub(super) struct Attribute<'a> {
    pub(super) indent: usize,
    pub(super) key: &'a str,
    /// After `=`, leading spaces dropped, line end kept.
    pub(super) value: &'a str,
}

pub(super) fn hcl_attribute(line: &str) -> Option<Attribute<'_>> {
    let indent = indent_of(line)?;
    let text = &line[indent..];
    let key_len = match text.chars().next()? {
        '"' => text[1..].find('"')? + 2,
        c if c.is_ascii_alphabetic() || c == '_' => text
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .unwrap_or(text.len()),
        _ => return None,
    };
    let rest = text[key_len..].trim_start_matches(' ');
    let value = rest.strip_prefix('=')?;
    if value.starts_with(['=', '>']) {
        return None;
    }
    Some(Attribute {
        indent,
        key: &text[..key_len],
        value: value.trim_start_matches(' '),
    })
}

pub(super) fn hcl_key(text: &str) -> Option<(String, Kind, bool)> {
    if text.starts_with(['}', ']', ')']) || text.starts_with("/*") {
        return None;
    }
    let opaque = text.contains("<<");
    if let Some(attr) = hcl_attribute(text) {
        return Some((format!("= {}", attr.key), Kind::Mapping, opaque));
    }
    let code = text.split(" #").next().unwrap_or(text).trim_end();
    if let Some(header) = code.strip_suffix('{') {
        let header: Vec<&str> = header.split_whitespace().collect();
        return Some((format!("{{ {}", header.join(" ")), Kind::Mapping, opaque));
    }
    Some((
        format!("- {}", code.trim_end_matches(',').trim_end()),
        Kind::Sequence,
        opaque,
    ))
}

/// Entries of a block `terraform fmt` aligns together: consecutive one-line attributes, with
/// no comment or blank line between them. As (first entry, end) index ranges.
pub(super) fn groups(block: &Block) -> Vec<std::ops::Range<usize>> {
    let single = |e: &Entry| {
        e.body.is_empty() && e.close.is_none() && !e.opaque && hcl_attribute(e.head).is_some()
    };
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    for (i, entry) in block.entries.iter().enumerate() {
        if !single(entry) {
            continue;
        }
        match out.last_mut() {
            Some(group) if group.end == i && entry.trivia.is_empty() => group.end = i + 1,
            _ => out.push(i..i + 1),
        }
    }
    out
}

/// The head of each entry of a group as `terraform fmt` writes it.
pub(super) fn aligned_heads(block: &Block, group: std::ops::Range<usize>) -> Vec<String> {
    let attrs: Vec<Attribute> = block.entries[group]
        .iter()
        .filter_map(|e| hcl_attribute(e.head))
        .collect();
    let width = attrs.iter().map(|a| a.key.len()).max().unwrap_or(0);
    attrs
        .iter()
        .map(|a| format!("{}{:width$} = {}", " ".repeat(a.indent), a.key, a.value))
        .collect()
}

/// Whether every attribute group of the block is aligned as `terraform fmt` aligns it.
pub(super) fn aligned(block: &Block) -> bool {
    groups(block).into_iter().all(|group| {
        let heads = aligned_heads(block, group.clone());
        block.entries[group]
            .iter()
            .zip(heads)
            .all(|(e, head)| e.head == head)
    })
}

/// Realigns a block merged without conflict (a conflict is left for the user to lay out).
pub(super) fn realign_clean(chunks: Vec<Chunk>) -> Vec<Chunk> {
    let mut lines: Vec<String> = Vec::new();
    for chunk in &chunks {
        match chunk {
            Chunk::Clean(l) => lines.extend(l.iter().cloned()),
            Chunk::Conflict { .. } => return chunks,
        }
    }
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let Some(block) = parse(&refs, Syntax::Hcl) else {
        return chunks;
    };
    let mut heads: Vec<usize> = Vec::new();
    let mut at = 0;
    for entry in &block.entries {
        at += entry.trivia.len();
        heads.push(at);
        at += 1 + entry.body.len() + usize::from(entry.close.is_some());
    }
    let mut out = lines.clone();
    for group in groups(&block) {
        for (i, head) in group.clone().zip(aligned_heads(&block, group)) {
            out[heads[i]] = head;
        }
    }
    vec![Chunk::Clean(out)]
}
