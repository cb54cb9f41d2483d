//! Go's glob matching, in the two versions cellgen's ports need:
//!
//! - [`filepath_match`]: `path/filepath.Match` of today's Go on Unix (`*` and `?` stop at `/`,
//!   `\` escapes, the whole pattern is checked for `ErrBadPattern` even after a mismatch), which
//!   the gitignore matcher of source-controller runs on each path component;
//! - [`drone_match`]: the copy of an older `path.Match` in drone/envsubst (Flux's `${var#pat}`
//!   and friends), where `*` and `?` match `/` too and matching stops at the first mismatch.
//!
//! `Err(BadPattern)` is Go's `ErrBadPattern`.

use super::decode_rune;

/// Go's `ErrBadPattern`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadPattern;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Flavor {
    Filepath,
    Drone,
}

/// Go's `path/filepath.Match` (Unix).
pub fn filepath_match(pattern: &[u8], name: &[u8]) -> Result<bool, BadPattern> {
    glob(pattern, name, Flavor::Filepath)
}

/// drone/envsubst's `path.Match`: `*` and `?` may match `/`.
pub fn drone_match(pattern: &[u8], name: &[u8]) -> Result<bool, BadPattern> {
    glob(pattern, name, Flavor::Drone)
}

fn glob(mut pattern: &[u8], mut name: &[u8], flavor: Flavor) -> Result<bool, BadPattern> {
    let separator = |b: u8| flavor == Flavor::Filepath && b == b'/';
    'pattern: while !pattern.is_empty() {
        let (star, chunk, rest) = scan_chunk(pattern);
        pattern = rest;
        if star && chunk.is_empty() {
            // A trailing `*` matches the rest, up to a separator.
            return Ok(!name.iter().any(|b| separator(*b)));
        }
        let (t, ok, err) = match_chunk(chunk, name, flavor);
        if ok && (t.is_empty() || !pattern.is_empty()) {
            name = t;
            continue;
        }
        if err {
            return Err(BadPattern);
        }
        if star {
            // Look for a match, skipping i bytes (never a separator).
            let mut i = 0;
            while i < name.len() && !separator(name[i]) {
                let (t, ok, err) = match_chunk(chunk, &name[i + 1..], flavor);
                if ok {
                    if pattern.is_empty() && !t.is_empty() {
                        i += 1;
                        continue;
                    }
                    name = t;
                    continue 'pattern;
                }
                if err {
                    return Err(BadPattern);
                }
                i += 1;
            }
        }
        if flavor == Flavor::Filepath {
            // Today's Go: the rest of the pattern must still be well-formed.
            while !pattern.is_empty() {
                let (_, chunk, rest) = scan_chunk(pattern);
                pattern = rest;
                if match_chunk(chunk, b"", flavor).2 {
                    return Err(BadPattern);
                }
            }
        }
        return Ok(false);
    }
    Ok(name.is_empty())
}

/// Go's scanChunk: (leading star, the chunk up to the next unbracketed `*`, the rest).
fn scan_chunk(mut pattern: &[u8]) -> (bool, &[u8], &[u8]) {
    let mut star = false;
    while let Some(rest) = pattern.strip_prefix(b"*") {
        pattern = rest;
        star = true;
    }
    let mut in_range = false;
    let mut i = 0;
    while i < pattern.len() {
        match pattern[i] {
            b'\\' if i + 1 < pattern.len() => i += 1,
            b'[' => in_range = true,
            b']' => in_range = false,
            b'*' if !in_range => break,
            _ => {}
        }
        i += 1;
    }
    (star, &pattern[..i], &pattern[i..])
}

/// Go's matchChunk: (rest of `s`, matched, bad pattern). Today's Go reads the whole chunk after
/// a mismatch (to report a bad pattern); the drone copy stops at the mismatch.
fn match_chunk<'s>(mut chunk: &[u8], mut s: &'s [u8], flavor: Flavor) -> (&'s [u8], bool, bool) {
    let mut failed = false;
    while let Some(&c0) = chunk.first() {
        if !failed && s.is_empty() {
            failed = true;
        }
        if failed && flavor == Flavor::Drone {
            return (s, false, false);
        }
        match c0 {
            b'[' => {
                let mut r = char::REPLACEMENT_CHARACTER;
                if !failed {
                    let (c, n) = decode_rune(s);
                    r = c;
                    s = &s[n..];
                }
                chunk = &chunk[1..];
                let mut negated = false;
                if chunk.first() == Some(&b'^') {
                    negated = true;
                    chunk = &chunk[1..];
                }
                let mut matched = false;
                let mut nrange = 0;
                loop {
                    if chunk.first() == Some(&b']') && nrange > 0 {
                        chunk = &chunk[1..];
                        break;
                    }
                    let Some((lo, rest)) = get_esc(chunk) else {
                        return (b"", false, true);
                    };
                    chunk = rest;
                    let mut hi = lo;
                    if chunk.first() == Some(&b'-') {
                        let Some((h, rest)) = get_esc(&chunk[1..]) else {
                            return (b"", false, true);
                        };
                        hi = h;
                        chunk = rest;
                    }
                    if lo <= r && r <= hi {
                        matched = true;
                    }
                    nrange += 1;
                }
                if matched == negated {
                    failed = true;
                }
            }
            b'?' => {
                if !failed {
                    if flavor == Flavor::Filepath && s[0] == b'/' {
                        failed = true;
                    }
                    let (_, n) = decode_rune(s);
                    s = &s[n..];
                }
                chunk = &chunk[1..];
            }
            c => {
                let c = if c == b'\\' {
                    chunk = &chunk[1..];
                    match chunk.first() {
                        Some(c) => *c,
                        None => return (b"", false, true),
                    }
                } else {
                    c
                };
                if !failed {
                    if c != s[0] {
                        failed = true;
                    }
                    s = &s[1..];
                }
                chunk = &chunk[1..];
            }
        }
    }
    if failed {
        return (b"", false, false);
    }
    (s, true, false)
}

/// Go's getEsc: one (possibly escaped) character of a class, which may not end the pattern.
fn get_esc(mut chunk: &[u8]) -> Option<(char, &[u8])> {
    match chunk.first() {
        None | Some(b'-') | Some(b']') => return None,
        Some(b'\\') => {
            chunk = &chunk[1..];
            if chunk.is_empty() {
                return None;
            }
        }
        Some(_) => {}
    }
    let (r, n) = decode_rune(chunk);
    if r == char::REPLACEMENT_CHARACTER && n == 1 {
        return None;
    }
    let rest = &chunk[n..];
    if rest.is_empty() {
        return None;
    }
    Some((r, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flavors_differ_only_where_go_versions_do() {
        // `*` and `?` cross `/` in drone's copy only.
        assert_eq!(filepath_match(b"a*", b"a/b"), Ok(false));
        assert_eq!(drone_match(b"a*", b"a/b"), Ok(true));
        assert_eq!(filepath_match(b"a?b", b"a/b"), Ok(false));
        assert_eq!(drone_match(b"a?b", b"a/b"), Ok(true));
        // Today's Go reports a bad pattern after a mismatch; the older copy stops first.
        assert_eq!(filepath_match(b"x[", b"a"), Err(BadPattern));
        assert_eq!(drone_match(b"x[", b"a"), Ok(false));
        for (p, n) in [("*.yaml", "a.yaml"), ("[a-c]?", "bz"), ("\\*", "*")] {
            assert_eq!(filepath_match(p.as_bytes(), n.as_bytes()), Ok(true), "{p}");
            assert_eq!(drone_match(p.as_bytes(), n.as_bytes()), Ok(true), "{p}");
        }
    }
}
