//! Line-based splicing shared by the YAML and HCL editors.

/// Byte offset of the start of the line containing `offset`.
pub fn line_start(text: &str, offset: usize) -> usize {
    text[..offset].rfind('\n').map_or(0, |i| i + 1)
}

/// Byte offset just past the newline ending the line containing `offset` (or the text's end).
pub fn line_end(text: &str, offset: usize) -> usize {
    text[offset..]
        .find('\n')
        .map_or(text.len(), |i| offset + i + 1)
}

/// 1-based line number of a byte offset.
pub fn line_number(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|b| *b == b'\n')
        .count()
        + 1
}

/// Leading spaces of the line containing `offset`.
pub fn indent_at(text: &str, offset: usize) -> usize {
    let start = line_start(text, offset);
    text[start..].bytes().take_while(|b| *b == b' ').count()
}

/// `lines` (each with its line break) joined, `line` inserted after line `at` at that line's
/// indentation.
pub fn insert_line_after(lines: &[&str], at: usize, line: &str) -> String {
    let indent = lines[at].len() - lines[at].trim_start().len();
    let mut out: String = lines[..=at].concat();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!("{}{line}\n", " ".repeat(indent)));
    out.push_str(&lines[at + 1..].concat());
    out
}

/// Replaces `range` of `text` with `with`.
pub fn splice(text: &str, range: std::ops::Range<usize>, with: &str) -> String {
    let mut out = String::with_capacity(text.len() + with.len());
    out.push_str(&text[..range.start]);
    out.push_str(with);
    out.push_str(&text[range.end..]);
    out
}

/// 1-based line numbers of many offsets of one text, each in logarithmic time.
pub struct LineIndex {
    newlines: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        LineIndex {
            newlines: text
                .bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i)
                .collect(),
        }
    }

    /// Same as [`line_number`].
    pub fn line(&self, offset: usize) -> usize {
        self.newlines.partition_point(|&n| n < offset) + 1
    }
}
