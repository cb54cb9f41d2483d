//! Parses remembered by content. Cells are written from one template, so most of the files a
//! check builds hold the same text (a layer file), or the same text after a comment header that
//! names the cell (the cell's kustomization.yaml): each distinct content is parsed once per
//! command (the memo is the command's, in `Caches`). A parse that succeeds is a pure function of the text (the file's name appears only
//! in errors), and leading comment lines change nothing in it (see [`content_key`]). Errors are
//! never remembered: a text that fails is parsed whole again, so its error, line and file are
//! exactly the unmemoised ones.

use std::sync::{Arc, Mutex};

/// Texts longer than this are parsed every time (a rare large file is not worth the memory).
const MAX_TEXT: usize = 256 * 1024;
/// Distinct contents remembered per kind of parse; past this, new ones are not remembered.
const MAX_ENTRIES: usize = 50_000;

/// Keys are whole file texts: hashed with foldhash, which reads long keys several times faster
/// than std's SipHash (no key here is chosen by an adversary against this process's seed).
type HashMap<K, V> = foldhash::HashMap<K, V>;

/// One kind of parse, remembered by content (held by the command's `Caches`).
pub struct Memo<T> {
    map: Mutex<HashMap<Box<str>, Arc<T>>>,
}

impl<T> Default for Memo<T> {
    fn default() -> Memo<T> {
        Memo {
            map: Mutex::new(HashMap::default()),
        }
    }
}

impl<T> Memo<T> {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Box<str>, Arc<T>>> {
        super::super::lock_cache(&self.map)
    }

    /// `parse(text)`, or what it gave for the same content before. `parse` of a text without
    /// its leading comment lines is tried first; when it fails, `parse(text)` is the answer,
    /// so an error is reported on the text's own lines.
    pub fn get<E>(&self, text: &str, parse: impl Fn(&str) -> Result<T, E>) -> Result<Arc<T>, E> {
        if text.len() > MAX_TEXT {
            return parse(text).map(Arc::new);
        }
        let key = content_key(text);
        if let Some(hit) = self.lock().get(key) {
            return Ok(hit.clone());
        }
        let parsed = match parse(key) {
            Ok(v) => Arc::new(v),
            Err(e) if key.len() == text.len() => return Err(e),
            Err(_) => return parse(text).map(Arc::new),
        };
        let mut map = self.lock();
        if map.len() < MAX_ENTRIES {
            map.insert(key.into(), parsed.clone());
        }
        Ok(parsed)
    }
}

/// `text` without its leading lines that are blank or a comment, when dropping them cannot
/// change a successful parse: each such line is spaces, optionally followed by `#` and
/// characters YAML allows in a comment (no line break of YAML's other than `\n`, a final `\r`
/// aside, and no `[`/`{`, which `crate::ports::yaml::depth`'s plain count sees even in comments); and
/// what remains does not start with a `---`/`...` line (kio splits documents at `\n---`, so the
/// line before it matters). Otherwise `text` itself.
pub fn content_key(text: &str) -> &str {
    let mut start = 0;
    while let Some(len) = text[start..].find('\n') {
        let line = &text[start..start + len];
        let line = line.strip_suffix('\r').unwrap_or(line);
        if !droppable(line) {
            break;
        }
        start += len + 1;
    }
    let rest = &text[start..];
    if rest.starts_with("---") || rest.starts_with("...") {
        return text;
    }
    rest
}

fn droppable(line: &str) -> bool {
    let comment = line.trim_start_matches(' ');
    match comment.strip_prefix('#') {
        None => comment.is_empty(),
        Some(body) => body.chars().all(comment_char),
    }
}

/// A character libyaml reads inside a comment without ending the line or failing.
fn comment_char(c: char) -> bool {
    match c {
        '[' | '{' => false,
        '\t' | ' '..='~' => true,
        '\u{a0}'..='\u{d7ff}' => c != '\u{2028}' && c != '\u{2029}',
        '\u{e000}'..='\u{fffd}' => c != '\u{feff}',
        '\u{10000}'.. => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_comments_are_dropped_only_when_harmless() {
        assert_eq!(content_key("# a\n\n  # b\nx: 1\n# c\n"), "x: 1\n# c\n");
        assert_eq!(content_key("# a\r\nx: 1\n"), "x: 1\n");
        assert_eq!(content_key("x: 1\n"), "x: 1\n");
        assert_eq!(content_key("# only\n"), "");
        // A document marker after the comments: kio would split there.
        assert_eq!(content_key("# a\n---\nx: 1\n"), "# a\n---\nx: 1\n");
        // A tab before `#`, a lone \r, a bracket, a control character: kept.
        assert_eq!(content_key("\t# a\nx: 1\n"), "\t# a\nx: 1\n");
        assert_eq!(content_key("# a\rb: 2\nx: 1\n"), "# a\rb: 2\nx: 1\n");
        assert_eq!(content_key("# [\nx: 1\n"), "# [\nx: 1\n");
        assert_eq!(content_key("# \u{1}\nx: 1\n"), "# \u{1}\nx: 1\n");
        assert_eq!(content_key("\u{feff}# a\nx: 1\n"), "\u{feff}# a\nx: 1\n");
    }

    #[test]
    fn errors_are_not_remembered_and_come_from_the_whole_text() {
        let memo: Memo<usize> = Memo::default();
        let parse = |t: &str| {
            if t.contains("bad") {
                Err(t.lines().count())
            } else {
                Ok(t.len())
            }
        };
        assert_eq!(memo.get("# c\nbad\n", parse), Err(2));
        assert_eq!(memo.get("# c\nok\n", parse).map(|v| *v), Ok(3));
        // The same content after another header: the remembered answer.
        assert_eq!(memo.get("# other\nok\n", parse).map(|v| *v), Ok(3));
        assert_eq!(memo.lock().len(), 1);
    }
}
