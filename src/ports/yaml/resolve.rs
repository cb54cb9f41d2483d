//! Plain-scalar resolution as go-yaml does it: v3 (kyaml, which reads resources and
//! patches) and v2 (sigs.k8s.io/yaml, which reads kustomization files and JSON patches).
//! Ported from resolve.go of both; Go's strconv and time.Parse are reproduced for the
//! forms they accept here, and anything this port cannot decide is reported, not guessed.

use crate::ports::golang::yaml_resolve::{
    go_parse_float, go_parse_int, go_parse_uint, yaml_style_float,
};

/// A resolved scalar, as the Go value json.Marshal later prints.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(String),
}

/// Why a scalar has no JSON value here.
#[derive(Debug, Clone, PartialEq)]
pub enum Unresolved {
    /// go-yaml fails too (e.g. `!!bool x`); the message is go-yaml's.
    Fails(String),
    /// Valid for go-yaml, but not reproduced by this port.
    Unsupported(String),
}

pub const STR: &str = "!!str";
pub const MERGE: &str = "!!merge";
const LONG_PREFIX: &str = "tag:yaml.org,2002:";

/// go-yaml's shortTag: `tag:yaml.org,2002:int` → `!!int`.
pub fn short_tag(tag: &str) -> String {
    match tag.strip_prefix(LONG_PREFIX) {
        Some(rest) => format!("!!{rest}"),
        None => tag.to_string(),
    }
}

fn map_lookup(v2: bool, s: &str) -> Option<Resolved> {
    Some(match s {
        "true" | "True" | "TRUE" => Resolved::Bool(true),
        "false" | "False" | "FALSE" => Resolved::Bool(false),
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" if v2 => Resolved::Bool(true),
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" if v2 => Resolved::Bool(false),
        "" | "~" | "null" | "Null" | "NULL" => Resolved::Null,
        ".nan" | ".NaN" | ".NAN" => Resolved::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => Resolved::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => Resolved::Float(f64::NEG_INFINITY),
        _ => return None,
    })
}

/// The tag go-yaml's resolve("", s) gives a plain scalar (used for node tags and keys).
pub fn implicit_tag(s: &str, v2: bool) -> &'static str {
    if s == "<<" {
        return MERGE;
    }
    match resolve_plain(s, v2, true) {
        Ok(Some((r, timestamp))) => match r {
            _ if timestamp => "!!timestamp",
            Resolved::Null => "!!null",
            Resolved::Bool(_) => "!!bool",
            Resolved::Int(_) | Resolved::Uint(_) => "!!int",
            Resolved::Float(_) => "!!float",
            Resolved::Str(_) => STR,
        },
        Ok(None) => STR,
        // Not decidable here: treat as non-string so callers refuse it.
        Err(_) => "!!unknown",
    }
}

/// Resolves `value` under (short) tag `tag` ("" for none), as go-yaml's resolve + decode
/// into interface{} do. v3 turns timestamps into RFC 3339 strings (time.Time's JSON);
/// v2 keeps their text.
pub fn resolve(tag: &str, value: &str, v2: bool) -> Result<Resolved, Unresolved> {
    match tag {
        "" => {}
        STR | "!" => {
            if tag == "!" {
                // go-yaml treats the non-specific tag like no tag.
                return resolve("", value, v2);
            }
            return Ok(Resolved::Str(value.to_string()));
        }
        "!!binary" => return Err(Unresolved::Unsupported("a `!!binary` scalar".into())),
        "!!int" | "!!float" | "!!bool" | "!!null" | "!!timestamp" => {
            let got =
                resolve_plain(value, v2, tag == "!!timestamp").map_err(Unresolved::Unsupported)?;
            let fail = || Unresolved::Fails(format!("cannot decode `{value}` as a {tag}"));
            return match (tag, got) {
                ("!!int", Some((r @ (Resolved::Int(_) | Resolved::Uint(_)), false))) => Ok(r),
                ("!!float", Some((r @ Resolved::Float(_), false))) => Ok(r),
                ("!!float", Some((Resolved::Int(i), false))) => Ok(Resolved::Float(i as f64)),
                ("!!bool", Some((r @ Resolved::Bool(_), _))) => Ok(r),
                ("!!null", Some((Resolved::Null, _))) => Ok(Resolved::Null),
                ("!!timestamp", Some((r, true))) if !v2 => Ok(r),
                ("!!timestamp", Some((_, true))) => Ok(Resolved::Str(value.to_string())),
                _ => Err(fail()),
            };
        }
        other if other.starts_with("!!") => {
            return Err(Unresolved::Unsupported(format!("a `{other}` tag")));
        }
        other => {
            // Application tags: go-yaml keeps the text as a string.
            let _ = other;
            return Ok(Resolved::Str(value.to_string()));
        }
    }
    match resolve_plain(value, v2, true).map_err(Unresolved::Unsupported)? {
        Some((_, true)) if v2 => Ok(Resolved::Str(value.to_string())),
        Some((r, _)) => Ok(r),
        None => Ok(Resolved::Str(value.to_string())),
    }
}

/// go-yaml's resolve for an untagged plain scalar. `Ok(None)` means a string; the flag says
/// the value is a timestamp (then the value is its RFC 3339 JSON text). `Err` names a form
/// this port cannot decide.
fn resolve_plain(
    s: &str,
    v2: bool,
    try_timestamp: bool,
) -> Result<Option<(Resolved, bool)>, String> {
    let Some(&first) = s.as_bytes().first() else {
        return Ok(Some((Resolved::Null, false)));
    };
    let hint = match first {
        b'+' | b'-' => 'S',
        b'0'..=b'9' => 'D',
        b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~' => 'M',
        b'.' => '.',
        _ => return Ok(None),
    };
    if let Some(r) = map_lookup(v2, s) {
        return Ok(Some((r, false)));
    }
    match hint {
        'M' => Ok(None),
        '.' => Ok(go_parse_float(s).map(|f| (Resolved::Float(f), false))),
        _ => {
            if try_timestamp && let Some(ts) = timestamp(s)? {
                return Ok(Some((Resolved::Str(ts), true)));
            }
            let plain = s.replace('_', "");
            if let Some(i) = go_parse_int(&plain) {
                return Ok(Some((Resolved::Int(i), false)));
            }
            if let Some(u) = go_parse_uint(&plain) {
                return Ok(Some((Resolved::Uint(u), false)));
            }
            if yaml_style_float(&plain)
                && let Some(f) = go_parse_float(&plain)
            {
                return Ok(Some((Resolved::Float(f), false)));
            }
            // go-yaml's explicit 0b/0o branches only differ from ParseInt(s, 0) past the
            // uint64 range, where they fail too: a string.
            Ok(None)
        }
    }
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        _ => 28,
    }
}

/// Reads 1-2 digits (Go's non-fixed numeric layout fields).
fn num12(s: &str) -> Option<(u32, &str)> {
    let n = s.bytes().take(2).take_while(u8::is_ascii_digit).count();
    if n == 0 {
        return None;
    }
    Some((s[..n].parse().ok()?, &s[n..]))
}

/// go-yaml's parseTimestamp (layouts "2006-1-2T15:4:5.999999999Z07:00", its lower-case `t`
/// form, "2006-1-2 15:4:5.999999999" and "2006-1-2"), returning time.Time's JSON text.
/// `Err` when the text starts like a timestamp but is outside what this port decides.
fn timestamp(s: &str) -> Result<Option<String>, String> {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return Ok(None);
    }
    let unsure = || Err(format!("the timestamp-like value `{s}`"));
    let year: i64 = s[..4].parse().unwrap_or(0);
    let Some((month, rest)) = num12(&s[5..]) else {
        return Ok(None);
    };
    let Some(rest) = rest.strip_prefix('-') else {
        return Ok(None);
    };
    let Some((day, rest)) = num12(rest) else {
        return Ok(None);
    };
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        // time.Parse rejects it, so go-yaml reads a string; only sure for a bare date.
        return if rest.is_empty() { Ok(None) } else { unsure() };
    }
    let date = format!("{year:04}-{month:02}-{day:02}");
    if rest.is_empty() {
        return Ok(Some(format!("{date}T00:00:00Z")));
    }
    let (sep, rest) = rest.split_at(1);
    if !matches!(sep, "T" | "t" | " ") {
        return Ok(None);
    }
    let clock = (|| {
        let (h, r) = num12(rest)?;
        let (m, r) = num12(r.strip_prefix(':')?)?;
        let (sec, r) = num12(r.strip_prefix(':')?)?;
        (h < 24 && m < 60 && sec < 60).then_some((h, m, sec, r))
    })();
    let Some((h, m, sec, mut r)) = clock else {
        return unsure();
    };
    let mut frac = String::new();
    if let Some(f) = r.strip_prefix('.') {
        let n = f.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 || n > 9 {
            return unsure();
        }
        frac = f[..n].trim_end_matches('0').to_string();
        r = &f[n..];
    }
    let zone = match (sep, r) {
        (" ", "") => "Z".to_string(),
        (" ", _) => return unsure(),
        (_, "Z") => "Z".to_string(),
        (_, z)
            if z.len() == 6
                && matches!(z.as_bytes()[0], b'+' | b'-')
                && z.as_bytes()[3] == b':'
                && z[1..3]
                    .bytes()
                    .chain(z[4..].bytes())
                    .all(|c| c.is_ascii_digit())
                && z[1..3].parse::<u32>().is_ok_and(|h| h <= 24)
                && z[4..].parse::<u32>().is_ok_and(|m| m <= 60) =>
        {
            if &z[1..3] == "00" && &z[4..] == "00" {
                "Z".to_string()
            } else {
                z.to_string()
            }
        }
        _ => return unsure(),
    };
    let frac = if frac.is_empty() {
        frac
    } else {
        format!(".{frac}")
    };
    Ok(Some(format!("{date}T{h:02}:{m:02}:{sec:02}{frac}{zone}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v3(s: &str) -> Resolved {
        resolve("", s, false).unwrap()
    }

    #[test]
    fn go_yaml_v3_plain_scalars() {
        assert_eq!(v3("0775"), Resolved::Int(509));
        assert_eq!(v3("08"), Resolved::Float(8.0));
        assert_eq!(v3("1_000"), Resolved::Int(1000));
        assert_eq!(v3("0x1F"), Resolved::Int(31));
        assert_eq!(v3("0o17"), Resolved::Int(15));
        assert_eq!(v3("0b11"), Resolved::Int(3));
        assert_eq!(v3("+12"), Resolved::Int(12));
        assert_eq!(
            v3("12345678901234567890"),
            Resolved::Uint(12345678901234567890)
        );
        assert_eq!(v3("1e3"), Resolved::Float(1000.0));
        assert_eq!(v3(".5"), Resolved::Float(0.5));
        assert_eq!(v3("yes"), Resolved::Str("yes".into()));
        assert_eq!(v3("True"), Resolved::Bool(true));
        assert_eq!(v3("~"), Resolved::Null);
        assert_eq!(v3("-"), Resolved::Str("-".into()));
        assert_eq!(v3("1.2.3"), Resolved::Str("1.2.3".into()));
        assert_eq!(v3("2024-1-2"), Resolved::Str("2024-01-02T00:00:00Z".into()));
        assert_eq!(v3("2024-02-30"), Resolved::Str("2024-02-30".into()));
        assert_eq!(
            v3("2001-12-14t21:59:43.10-05:00"),
            Resolved::Str("2001-12-14T21:59:43.1-05:00".into())
        );
    }

    #[test]
    fn go_yaml_v2_differs_on_booleans_and_timestamps() {
        assert_eq!(resolve("", "yes", true).unwrap(), Resolved::Bool(true));
        assert_eq!(resolve("", "off", true).unwrap(), Resolved::Bool(false));
        assert_eq!(
            resolve("", "2024-01-02", true).unwrap(),
            Resolved::Str("2024-01-02".into())
        );
    }

    #[test]
    fn explicit_tags() {
        assert_eq!(
            resolve("!!str", "12", false).unwrap(),
            Resolved::Str("12".into())
        );
        assert_eq!(resolve("!!int", "12", false).unwrap(), Resolved::Int(12));
        assert_eq!(
            resolve("!!float", "12", false).unwrap(),
            Resolved::Float(12.0)
        );
        assert!(matches!(
            resolve("!!bool", "x", false),
            Err(Unresolved::Fails(_))
        ));
        assert_eq!(
            resolve("!foo", "bar", false).unwrap(),
            Resolved::Str("bar".into())
        );
    }
}
