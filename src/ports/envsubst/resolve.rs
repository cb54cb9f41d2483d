//! go-yaml v2's implicit typing of plain scalars (resolve.go, `isBase60Float`,
//! `parseTimestamp`): a string it would read back as non-string must be quoted when written.
//! Its number forms are the go-yaml reader's (`crate::ports::golang::yaml_resolve`).

use crate::ports::golang::yaml_resolve::{
    go_parse_float, go_parse_int, go_parse_uint, yaml_style_float,
};

/// go-yaml v2 `resolve("", s)` yields `!!str` (so the string may be written plain).
pub(crate) fn resolves_to_str(s: &str) -> bool {
    const MAP: &[&str] = &[
        "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", "n", "N", "no",
        "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", "", "~", "null", "Null",
        "NULL", ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf",
        "-.Inf", "-.INF",
    ];
    let hint = match s.as_bytes().first() {
        None => b'N',
        Some(b'+' | b'-') => b'S',
        Some(b'0'..=b'9') => b'D',
        Some(b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~') => b'M',
        Some(b'.') => b'.',
        Some(_) => return true,
    };
    if MAP.contains(&s) {
        return false;
    }
    match hint {
        b'.' => s.parse::<f64>().is_err(),
        b'D' | b'S' => {
            if is_timestamp(s) {
                return false;
            }
            let plain: String = s.chars().filter(|&c| c != '_').collect();
            if go_parse_int(&plain).is_some() || go_parse_uint(&plain).is_some() {
                return false;
            }
            if yaml_style_float(&plain) && go_parse_float(&plain).is_some() {
                return false;
            }
            if let Some(b) = plain
                .strip_prefix("0b")
                .or_else(|| plain.strip_prefix("-0b"))
                && !b.is_empty()
                && b.bytes().all(|c| c == b'0' || c == b'1')
                && b.len() <= 64
            {
                return false;
            }
            true
        }
        _ => true,
    }
}

/// `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$` (YAML 1.1 base 60 floats).
pub(crate) fn is_base60_float(s: &str) -> bool {
    let b = s.as_bytes();
    if !s.contains(':') {
        return false;
    }
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return false;
    }
    while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while b.get(i) == Some(&b':') {
        i += 1;
        let st = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) && i - st < 2 {
            i += 1;
        }
        let g = &b[st..i];
        let ok = match g {
            [d] => d.is_ascii_digit(),
            [a, d] => (b'0'..=b'5').contains(a) && d.is_ascii_digit(),
            _ => false,
        };
        if !ok {
            return false;
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

/// go-yaml v2 `parseTimestamp`: the four layouts it tries with Go's `time.Parse`.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let year = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if year != 4 || b.get(4) != Some(&b'-') {
        return false;
    }
    let mut i = 5;
    let num = |i: &mut usize, max_len: usize| -> Option<u32> {
        let st = *i;
        while *i < b.len() && b[*i].is_ascii_digit() && *i - st < max_len {
            *i += 1;
        }
        if *i == st {
            return None;
        }
        std::str::from_utf8(&b[st..*i]).ok()?.parse().ok()
    };
    let date = (|| {
        let y: u32 = s.get(..4)?.parse().ok()?;
        let m = num(&mut i, 2)?;
        if b.get(i) != Some(&b'-') {
            return None;
        }
        i += 1;
        let d = num(&mut i, 2)?;
        let leap = (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400);
        let days = match m {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => return None,
        };
        (1..=days).contains(&d).then_some(())
    })();
    if date.is_none() {
        return false;
    }
    if i == b.len() {
        return true;
    }
    let sep = b[i];
    if !matches!(sep, b'T' | b't' | b' ') {
        return false;
    }
    i += 1;
    let time = (|| {
        let h = num(&mut i, 2)?;
        (b.get(i) == Some(&b':')).then_some(())?;
        i += 1;
        let m = num(&mut i, 2)?;
        (b.get(i) == Some(&b':')).then_some(())?;
        i += 1;
        let sec = num(&mut i, 2)?;
        (h < 24 && m < 60 && sec < 60).then_some(())?;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let st = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            (i > st).then_some(())?;
        }
        Some(())
    })();
    if time.is_none() {
        return false;
    }
    if sep == b' ' {
        return i == b.len();
    }
    match &b[i..] {
        [b'Z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit()),
        _ => false,
    }
}
