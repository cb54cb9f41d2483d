//! The number forms of go-yaml's resolve.go (v2 and v3 alike) and the Go `strconv` functions it
//! calls on them: one copy for the go-yaml reader (`ports::yaml::resolve`) and for the go-yaml
//! v2 writer of Flux's envsubst (`ports::envsubst::resolve`). Underscores are removed by callers,
//! as resolve.go does.

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`
pub fn yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// strconv.ParseFloat for the decimal forms go-yaml hands it (callers guarantee the shape,
/// or start with '.'); Go and Rust both round correctly.
pub fn go_parse_float(s: &str) -> Option<f64> {
    let ok = s
        .bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'));
    if !ok {
        return None;
    }
    s.parse::<f64>().ok()
}

/// Splits Go's base-0 prefix: sign, radix and digits.
fn go_base0(s: &str, signed: bool) -> Option<(bool, u32, &str)> {
    let (neg, rest) = match s.as_bytes().first()? {
        b'-' if signed => (true, &s[1..]),
        b'+' if signed => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = rest.get(..2).map(str::to_ascii_lowercase);
    let (radix, digits) = match lower.as_deref() {
        Some("0x") => (16, &rest[2..]),
        Some("0b") => (2, &rest[2..]),
        Some("0o") => (8, &rest[2..]),
        _ if rest.len() > 1 && rest.starts_with('0') => (8, &rest[1..]),
        _ => (10, rest),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    Some((neg, radix, digits))
}

/// strconv.ParseInt(s, 0, 64).
pub fn go_parse_int(s: &str) -> Option<i64> {
    let (neg, radix, digits) = go_base0(s, true)?;
    let mag = u64::from_str_radix(digits, radix).ok()?;
    if neg {
        if mag <= i64::MAX as u64 + 1 {
            Some((mag as i64).wrapping_neg())
        } else {
            None
        }
    } else {
        i64::try_from(mag).ok()
    }
}

/// strconv.ParseUint(s, 0, 64).
pub fn go_parse_uint(s: &str) -> Option<u64> {
    let (_, radix, digits) = go_base0(s, false)?;
    u64::from_str_radix(digits, radix).ok()
}
