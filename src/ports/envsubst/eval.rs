//! Evaluation of a parse tree: a port of fluxcd/pkg `envsubst/template.go` and `funcs.go`,
//! plus the glob matcher of drone/envsubst's `path` package (Go's `path.Match` with `*` and
//! `?` allowed to match `/`). Values are byte strings, as in Go: substrings cut by byte.

use super::SubstError;
use super::parse::{Func, Node, decode_rune};

/// Evaluate `node`, appending to `out`.
pub(crate) fn eval(
    node: &Node,
    lookup: &dyn Fn(&str) -> Option<String>,
    strict: bool,
    out: &mut Vec<u8>,
) -> Result<(), SubstError> {
    match node {
        Node::Text(t) => out.extend_from_slice(t),
        Node::List(nodes) => {
            for n in nodes {
                eval(n, lookup, strict, out)?;
            }
        }
        Node::Func(f) => eval_func(f, lookup, strict, out)?,
    }
    Ok(())
}

/// Operators that supply their own fallback, so strict mode lets a missing variable through
/// (template.go `isDefaultOp`).
pub(crate) fn is_default_op(name: &str) -> bool {
    matches!(name, "-" | "+" | "=" | "?" | ":-" | ":+" | ":=" | ":?")
}

fn eval_func(
    f: &Func,
    lookup: &dyn Fn(&str) -> Option<String>,
    strict: bool,
    out: &mut Vec<u8>,
) -> Result<(), SubstError> {
    // Go evaluates every argument first, even a default that ends up unused.
    let mut args = Vec::with_capacity(f.args.len());
    for a in &f.args {
        let mut buf = Vec::new();
        eval(a, lookup, strict, &mut buf)?;
        args.push(buf);
    }
    let (value, exists) = match lookup(&f.param) {
        Some(v) => (v, true),
        None => (String::new(), !strict),
    };
    if !exists && !is_default_op(&f.name) {
        return Err(SubstError::VariableNotSet {
            name: f.param.clone(),
            offset: f.start,
        });
    }
    match apply(&f.name, &value, &args) {
        Some(v) => {
            out.extend_from_slice(&v);
            Ok(())
        }
        None => Err(SubstError::SubstringOutOfRange {
            name: f.param.clone(),
            offset: f.start,
        }),
    }
}

/// template.go `lookupFunc` + the call. `None` only where Go would panic.
fn apply(name: &str, s: &str, args: &[Vec<u8>]) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    Some(match name {
        "," => first_mapped(s, lower_char),
        ",," => s.chars().map(lower_char).collect::<String>().into_bytes(),
        "^" => first_mapped(s, upper_char),
        "^^" => s.chars().map(upper_char).collect::<String>().into_bytes(),
        "#" if args.is_empty() => b.len().to_string().into_bytes(),
        "#" => trim_prefix(b, &args[0], false),
        "##" => trim_prefix(b, &args[0], true),
        "%" => trim_suffix(b, &args[0], false),
        "%%" => trim_suffix(b, &args[0], true),
        ":" => return substr(b, args),
        "/#" => replace_prefix(b, args),
        "/%" => replace_suffix(b, args),
        "/" => replace_n(b, args, Some(1)),
        "//" => replace_n(b, args, None),
        _ => {
            if b.is_empty() && !args.is_empty() {
                args.concat()
            } else {
                b.to_vec()
            }
        }
    })
}

/// Go's `unicode.ToUpper`: simple (one-to-one) case mapping. Rust's mapping can expand a
/// character (ß → SS); Go leaves such characters alone.
fn upper_char(c: char) -> char {
    let mut it = c.to_uppercase();
    match (it.next(), it.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

fn lower_char(c: char) -> char {
    if c == '\u{130}' {
        // Go maps İ to plain i; Rust's full mapping adds a combining dot.
        return 'i';
    }
    let mut it = c.to_lowercase();
    match (it.next(), it.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

fn first_mapped(s: &str, f: fn(char) -> char) -> Vec<u8> {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => {
            let mut out = String::with_capacity(s.len());
            out.push(f(c));
            out.push_str(chars.as_str());
            out.into_bytes()
        }
        None => Vec::new(),
    }
}

/// Go's `strconv.Atoi` (64-bit int): optional sign, ASCII digits, nothing else.
fn atoi(b: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(b).ok()?;
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse::<i64>().ok()
}

/// funcs.go `toSubstr` as of Flux 2.9.0: a slice Go would panic on yields `None`.
fn substr(s: &[u8], args: &[Vec<u8>]) -> Option<Vec<u8>> {
    let Some(a0) = args.first() else {
        return Some(s.to_vec());
    };
    let Some(mut pos) = atoi(a0) else {
        return Some(s.to_vec());
    };
    let len = i64::try_from(s.len()).unwrap_or(i64::MAX);
    if pos < 0 {
        pos = (len + pos).max(0);
    }
    let tail = |pos: i64| -> Vec<u8> {
        usize::try_from(pos)
            .ok()
            .and_then(|p| s.get(p..))
            .map(<[u8]>::to_vec)
            .unwrap_or_default()
    };
    let Some(a1) = args.get(1) else {
        return Some(if pos < len { tail(pos) } else { Vec::new() });
    };
    let Some(length) = atoi(a1) else {
        return Some(s.to_vec());
    };
    // Go's int addition wraps.
    let end = pos.wrapping_add(length);
    if end >= len {
        return Some(if pos < len { tail(pos) } else { Vec::new() });
    }
    if end < pos || end < 0 {
        return None;
    }
    let (p, e) = (usize::try_from(pos).ok()?, usize::try_from(end).ok()?);
    s.get(p..e).map(<[u8]>::to_vec)
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if needle.is_empty() {
        return Some(from);
    }
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| i + from)
}

/// Go's `strings.Replace(s, old, new, n)`; an empty `old` matches at every rune boundary.
fn replace(s: &[u8], old: &[u8], new: &[u8], limit: Option<usize>) -> Vec<u8> {
    if old == new {
        return s.to_vec();
    }
    let m = if old.is_empty() {
        let mut runes = 0;
        let mut i = 0;
        while i < s.len() {
            i += decode_rune(&s[i..]).1.max(1);
            runes += 1;
        }
        runes + 1
    } else {
        let mut count = 0;
        let mut i = 0;
        while let Some(at) = find(s, old, i) {
            count += 1;
            i = at + old.len();
        }
        count
    };
    let n = limit.map_or(m, |l| l.min(m));
    let mut out = Vec::with_capacity(s.len());
    let mut start = 0;
    for i in 0..n {
        let mut j = start;
        if old.is_empty() {
            if i > 0 {
                j += decode_rune(&s[start..]).1;
            }
        } else {
            j = find(s, old, start).unwrap_or(s.len());
        }
        out.extend_from_slice(&s[start..j]);
        out.extend_from_slice(new);
        start = (j + old.len()).min(s.len());
    }
    out.extend_from_slice(&s[start..]);
    out
}

fn replace_n(s: &[u8], args: &[Vec<u8>], limit: Option<usize>) -> Vec<u8> {
    match args {
        [] => s.to_vec(),
        [old] => replace(s, old, b"", limit),
        [old, new, ..] => replace(s, old, new, limit),
    }
}

fn replace_prefix(s: &[u8], args: &[Vec<u8>]) -> Vec<u8> {
    match args {
        [old, new] if s.starts_with(old) => replace(s, old, new, Some(1)),
        _ => s.to_vec(),
    }
}

fn replace_suffix(s: &[u8], args: &[Vec<u8>]) -> Vec<u8> {
    match args {
        [old, new] if s.ends_with(old) => {
            let mut out = s[..s.len() - old.len()].to_vec();
            out.extend_from_slice(new);
            out
        }
        _ => s.to_vec(),
    }
}

/// Go's rune-wise `reverse` (invalid bytes become U+FFFD, as `[]rune(s)` does).
fn reverse(b: &[u8]) -> Vec<u8> {
    let mut chars = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let (c, w) = decode_rune(&b[i..]);
        chars.push(c);
        i += w.max(1);
    }
    chars.iter().rev().collect::<String>().into_bytes()
}

fn trim_prefix(s: &[u8], pat: &[u8], longest: bool) -> Vec<u8> {
    let mut shortest = 0;
    // Go tries prefixes from the whole string down to one byte, never the empty one.
    for i in 0..s.len() {
        let prefix = &s[..s.len() - i];
        match glob_match(pat, prefix) {
            Err(()) => return s.to_vec(),
            Ok(true) if longest => return s[prefix.len()..].to_vec(),
            Ok(true) => shortest = prefix.len(),
            Ok(false) => {}
        }
    }
    s[shortest..].to_vec()
}

fn trim_suffix(s: &[u8], pat: &[u8], longest: bool) -> Vec<u8> {
    reverse(&trim_prefix(&reverse(s), &reverse(pat), longest))
}

/// drone/envsubst `path.Match`: Go's `path.Match` where `*` and `?` may match `/`.
/// `Err(())` is Go's `ErrBadPattern`.
pub(crate) fn glob_match(pattern: &[u8], name: &[u8]) -> Result<bool, ()> {
    crate::ports::golang::path_match::drone_match(pattern, name).map_err(|_| ())
}
