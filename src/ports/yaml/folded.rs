//! go-yaml v3's folded-scalar bug. kustomize turns every object into JSON by emitting its
//! node tree as YAML and reading it back (kyaml's RNode.MarshalJSON), and go-yaml v3's
//! `yaml_emitter_write_folded_scalar` decides whether a line break needs an extra empty
//! line by looking at the *start of the value* (`k := 0`) where libyaml looks after the
//! break. So a folded (`>`) scalar whose first character is not blank gains an empty line
//! before every more-indented line, and one starting with a blank loses the line break
//! between two ordinary lines. This module emits the value as go-yaml does and reads it back.

use super::events::{Event, Parser};

fn is_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// go-yaml's is_printable (tabs are counted apart).
fn is_printable(c: char) -> bool {
    c == '\n'
        || ('\u{20}'..='\u{7e}').contains(&c)
        || ('\u{a0}'..='\u{d7ff}').contains(&c)
        || (('\u{e000}'..='\u{fffd}').contains(&c) && c != '\u{feff}')
}

/// Whether go-yaml's emitter keeps block style for `value` (yaml_emitter_analyze_scalar:
/// no trailing space, no space before a break, no special character).
fn block_allowed(value: &str) -> bool {
    if value.is_empty() || value.ends_with(' ') {
        return false;
    }
    let mut prev_space = false;
    for c in value.chars() {
        if c != '\t' && !is_printable(c) {
            return false;
        }
        if is_break(c) && prev_space {
            return false;
        }
        prev_space = c == ' ';
    }
    true
}

/// The value a folded scalar has after kustomize's emit-and-read. (go-yaml v3 emits without
/// a line width, so long lines are never folded.)
pub fn roundtrip(value: &str) -> Result<String, String> {
    if !block_allowed(value) {
        // Emitted double-quoted, which reads back unchanged.
        return Ok(value.to_string());
    }
    if value.contains(['\u{2028}', '\u{2029}']) {
        return Err("a folded scalar containing a Unicode line separator".into());
    }
    let text = emit(value);
    let mut parser = Parser::new(&text);
    loop {
        match parser.next_event() {
            Ok((Event::Scalar { value: v, .. }, _)) if v != "k" => return Ok(v),
            Ok((Event::StreamEnd, _)) | Err(_) => {
                return Err("a folded scalar go-yaml re-emits unreadably".into());
            }
            Ok(_) => {}
        }
    }
}

/// `k: >` + the value as go-yaml v3's yaml_emitter_write_folded_scalar writes it (with its
/// `k := 0`), at indentation 2.
fn emit(value: &str) -> String {
    let chars: Vec<char> = value.chars().collect();
    let mut out = String::from("k: >");
    // yaml_emitter_write_block_scalar_hints
    if chars.first().is_some_and(|&c| c == ' ' || is_break(c)) {
        out.push('2');
    }
    let n = chars.len();
    if !is_break(chars[n - 1]) {
        out.push('-');
    } else if n == 1 || is_break(chars[n - 2]) {
        out.push('+');
    }
    out.push('\n');
    // The bug: the look-ahead starts at index 0 of the value, not after the break.
    let mut k = 0;
    while k < n && is_break(chars[k]) {
        k += 1;
    }
    let start_is_blankz = k >= n || is_blank(chars[k]) || is_break(chars[k]);
    let mut breaks = true;
    let mut leading_spaces = true;
    for &c in &chars {
        if is_break(c) {
            if !breaks && !leading_spaces && c == '\n' && !start_is_blankz {
                out.push('\n');
            }
            out.push('\n');
            breaks = true;
        } else {
            if breaks {
                out.push_str("  ");
                leading_spaces = is_blank(c);
            }
            out.push(c);
            breaks = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_indented_lines_gain_an_empty_line() {
        let v = "first line\n  more indented\nback\n";
        assert_eq!(
            roundtrip(v).unwrap(),
            "first line\n\n  more indented\nback\n"
        );
    }

    #[test]
    fn ordinary_folded_values_round_trip() {
        for v in ["a b c\n", "a\nb\n", "a\n\nb", "x"] {
            assert_eq!(roundtrip(v).unwrap(), v, "{v:?}");
        }
        // Kept trailing breaks gain one too (checked against kubectl kustomize).
        assert_eq!(roundtrip("a\n\n\n").unwrap(), "a\n\n\n\n");
    }

    #[test]
    fn a_leading_blank_joins_ordinary_lines() {
        assert_eq!(roundtrip(" x\ny\nz\n").unwrap(), " x\ny z\n");
    }

    #[test]
    fn trailing_space_is_emitted_quoted() {
        assert_eq!(roundtrip("a\n  b \n").unwrap(), "a\n  b \n");
    }
}
