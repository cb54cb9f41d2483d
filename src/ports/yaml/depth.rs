//! One bound on YAML flow nesting for every YAML text cellgen parses, checked before any parser
//! sees it: cellgen.yaml, component.yaml, layer files (edited or not), `--values` files, every
//! file the kustomize builder reads (resources, kustomizations, patches, the cell's directory)
//! and objects read back after substitution.
//!
//! libyaml (under yaml_serde, yaml-edit's checks and the kustomize builder) takes time quadratic
//! in the depth of `[`/`{` nesting: 100,000 nested brackets take minutes before its recursion
//! limit is even reached. This scan is linear and refuses anything deeper than [`MAX_DEPTH`]
//! first, with the line. Block nesting (indentation, `- - -`) is linear in libyaml and needs no
//! bound here (the kustomize builder caps it at 512 levels to keep its walks safe).
//!
//! Two scans, the larger result wins, so that neither can be fooled alone: a tokenizer that
//! follows YAML's quoting, comments and block scalars (so brackets in strings do not count), and a
//! plain count of every bracket (which a quote the tokenizer misreads cannot hide).

/// Deepest `[`/`{` nesting cellgen reads. Real cellgen files stay below 10, and manifests far
/// below this (kustomize's go-yaml allows 10,000; deeper is refused here, never misread).
pub const MAX_DEPTH: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`[`/`{{` brackets nest more than {MAX_DEPTH} levels deep; cellgen refuses such YAML before parsing it (parsers slow down quadratically on it): flatten the structure"
)]
pub struct DepthError {
    pub line: usize,
}

/// Fails when `text` nests flow collections deeper than [`MAX_DEPTH`].
pub fn check_yaml(text: &str) -> Result<(), DepthError> {
    let naive = naive_depth(text);
    let scanned = Scanner::new(text).run();
    match (naive, scanned) {
        (Err(a), Err(b)) => Err(if a.line <= b.line { a } else { b }),
        (Err(e), _) | (_, Err(e)) => Err(e),
        _ => Ok(()),
    }
}

fn naive_depth(text: &str) -> Result<(), DepthError> {
    let mut depth = 0usize;
    let mut line = 1;
    for b in text.bytes() {
        match b {
            b'\n' => line += 1,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(DepthError { line });
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
    line: usize,
    /// Flow nesting: 0 in block context.
    flow: usize,
    /// At a place where a new token (quote, bracket, anchor, ...) may start.
    token_start: bool,
}

fn is_space(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn is_break(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

fn is_blank_or_end(b: Option<u8>) -> bool {
    b.is_none_or(|b| is_space(b) || is_break(b))
}

fn is_flow_indicator(b: u8) -> bool {
    matches!(b, b',' | b'[' | b']' | b'{' | b'}')
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str) -> Scanner<'a> {
        Scanner {
            bytes: text.as_bytes(),
            pos: 0,
            line: 1,
            flow: 0,
            token_start: true,
        }
    }

    fn peek(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos + ahead).copied()
    }

    fn bump(&mut self) {
        if self.bytes[self.pos] == b'\n' {
            self.line += 1;
        }
        self.pos += 1;
    }

    fn skip_to_line_end(&mut self) {
        while self.peek(0).is_some_and(|b| b != b'\n') {
            self.pos += 1;
        }
    }

    /// Column of `pos` in its line.
    fn column(&self, pos: usize) -> usize {
        pos - self.bytes[..pos]
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1)
    }

    fn run(mut self) -> Result<(), DepthError> {
        while let Some(b) = self.peek(0) {
            if b == b'\n' {
                self.bump();
                if self.flow == 0 {
                    // A plain scalar is taken to end with its line in block context.
                    self.token_start = true;
                }
                continue;
            }
            if is_space(b) || b == b'\r' {
                self.bump();
                continue;
            }
            let after_blank = self.pos == 0 || {
                let prev = self.bytes[self.pos - 1];
                is_space(prev) || is_break(prev)
            };
            if b == b'#' && after_blank {
                self.skip_to_line_end();
                continue;
            }
            if self.flow > 0 {
                self.flow_byte(b)?;
            } else {
                self.block_byte(b)?;
            }
        }
        Ok(())
    }

    fn open(&mut self) -> Result<(), DepthError> {
        self.flow += 1;
        self.bump();
        self.token_start = true;
        if self.flow > MAX_DEPTH {
            return Err(DepthError { line: self.line });
        }
        Ok(())
    }

    fn flow_byte(&mut self, b: u8) -> Result<(), DepthError> {
        match b {
            b'[' | b'{' => self.open()?,
            b']' | b'}' => {
                self.flow -= 1;
                self.bump();
                self.token_start = self.flow == 0;
            }
            b',' => {
                self.bump();
                self.token_start = true;
            }
            b'\'' | b'"' if self.token_start => {
                self.quoted(b);
                self.token_start = false;
            }
            b':' | b'?'
                if is_blank_or_end(self.peek(1)) || self.peek(1).is_some_and(is_flow_indicator) =>
            {
                self.bump();
                self.token_start = true;
            }
            b':' if !self.token_start => {
                // `"a":b`: a value indicator right after a quoted key.
                self.bump();
                self.token_start = true;
            }
            b'&' | b'!' if self.token_start => self.property(),
            _ => {
                // A plain scalar: quotes inside it are text; it ends at a flow indicator.
                self.bump();
                self.token_start = false;
            }
        }
        Ok(())
    }

    fn block_byte(&mut self, b: u8) -> Result<(), DepthError> {
        if !self.token_start {
            // Inside a plain scalar: only `: ` ends it.
            if b == b':' && is_blank_or_end(self.peek(1)) {
                self.token_start = true;
            }
            self.bump();
            return Ok(());
        }
        match b {
            b'[' | b'{' => self.open()?,
            b'\'' | b'"' => {
                self.quoted(b);
                self.token_start = false;
            }
            b'-' | b'?' | b':' if is_blank_or_end(self.peek(1)) => {
                self.bump();
            }
            b'&' | b'!' => self.property(),
            b'|' | b'>' => self.block_scalar(),
            _ => {
                self.bump();
                self.token_start = false;
            }
        }
        Ok(())
    }

    /// An anchor or tag: its name, then a node may still start.
    fn property(&mut self) {
        while self.peek(0).is_some_and(|b| {
            !(is_space(b) || is_break(b) || (self.flow > 0 && is_flow_indicator(b)))
        }) {
            self.bump();
        }
        self.token_start = true;
    }

    fn quoted(&mut self, quote: u8) {
        self.bump();
        while let Some(b) = self.peek(0) {
            if quote == b'"' && b == b'\\' {
                self.bump();
                if self.peek(0).is_some() {
                    self.bump();
                }
                continue;
            }
            if b == quote {
                if quote == b'\'' && self.peek(1) == Some(b'\'') {
                    self.bump();
                    self.bump();
                    continue;
                }
                self.bump();
                return;
            }
            self.bump();
        }
    }

    /// `|` or `>`: the header line, then every line more indented than the node that owns the
    /// scalar (a `- ` item, or the key before it), and blank lines.
    fn block_scalar(&mut self) {
        let line_start = self.pos - self.column(self.pos);
        let line = &self.bytes[line_start..self.pos];
        let indent = line.iter().take_while(|b| is_space(**b)).count();
        // `- - |`: the scalar is an item of the sequence whose dash is last; `- key: |`: it is
        // the value of `key`, which starts after the dashes.
        let mut owner = indent;
        let mut i = indent;
        while i + 1 < line.len() && line[i] == b'-' && is_space(line[i + 1]) {
            owner = i;
            i += 2;
            while i < line.len() && is_space(line[i]) {
                i += 1;
            }
        }
        if i < line.len() && !(line[i] == b'|' || line[i] == b'>') {
            owner = i;
        }
        self.skip_to_line_end();
        loop {
            // At a newline (or the end): look at the next line.
            if self.peek(0).is_none() {
                return;
            }
            let next = self.pos + 1;
            let rest = &self.bytes[next.min(self.bytes.len())..];
            let spaces = rest.iter().take_while(|b| is_space(**b)).count();
            let blank = rest.get(spaces).is_none_or(|b| is_break(*b));
            if !blank && spaces <= owner {
                return;
            }
            self.bump();
            self.skip_to_line_end();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(n: usize) -> String {
        format!("a: {}{}\n", "[".repeat(n), "]".repeat(n))
    }

    #[test]
    fn refuses_deep_brackets_with_the_line() {
        assert!(check_yaml(&nested(MAX_DEPTH)).is_ok());
        let err = check_yaml(&format!("x: 1\n{}", nested(MAX_DEPTH + 1))).unwrap_err();
        assert_eq!(err.line, 2);
        assert!(check_yaml(&nested(100_000)).is_err());
        let braces = format!("a: {}{}\n", "{a: ".repeat(100), "}".repeat(100));
        assert!(check_yaml(&braces).is_err());
    }

    #[test]
    fn brackets_in_strings_comments_and_block_scalars_do_not_count() {
        let many = "[".repeat(MAX_DEPTH + 1);
        for text in [
            format!("a: '{many}'\n"),
            format!("a: \"{many}\"\n"),
            format!("a: b # {many}\n"),
            format!("a: |\n  {many}\n  x\nb: 1\n"),
            format!("- k: >-\n    {many}\n  j: 1\n"),
            format!("a: x{many}\n"),
        ] {
            // The naive count sees them; only the tokenizer is asked here.
            assert!(Scanner::new(&text).run().is_ok(), "{text}");
        }
    }

    #[test]
    fn closing_brackets_in_strings_cannot_hide_depth() {
        // Each level closes a quoted `]`: a plain count would stay at one, the tokenizer does not.
        let text = format!("a: {}\n", "[ ']', ".repeat(MAX_DEPTH + 1));
        assert!(check_yaml(&text).is_err());
    }

    #[test]
    fn a_misread_quote_cannot_hide_depth() {
        // A plain scalar continued on a line starting with a quote, then real nesting: if the
        // tokenizer takes the quote for a string, the plain count still sees the brackets.
        let text = format!(
            "a: b\n  'c\nd: {}\ne: '\n",
            nested(MAX_DEPTH + 1).trim_start_matches("a: ")
        );
        assert!(check_yaml(&text).is_err());
    }

    #[test]
    fn linear_on_huge_input() {
        // Not a timing assertion: 1,000,000 brackets must simply finish (quadratic would not).
        assert!(check_yaml(&nested(1_000_000)).is_err());
        let flat = "- [a, b]\n".repeat(100_000);
        assert!(check_yaml(&flat).is_ok());
    }
}
