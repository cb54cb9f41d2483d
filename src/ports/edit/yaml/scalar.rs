//! Strings as YAML scalars that read back as exactly the same string.

/// A string as a YAML scalar in block context: plain when that reads back as the same string,
/// single-quoted when only quotes are needed, double-quoted with escapes when the string holds a
/// line break or another character a quote cannot carry (so no value can start a new line, a
/// new key or a comment).
pub fn scalar(value: &str) -> String {
    quote(value, |v| format!("k: {v}"))
}

/// A string as an item of a flow list `[a, b]`.
pub fn flow_scalar(value: &str) -> String {
    quote(value, |v| format!("k: [{v}]"))
}

fn quote(value: &str, context: impl Fn(&str) -> String) -> String {
    if value.chars().any(needs_escape) {
        return double_quoted(value);
    }
    let plain_ok = !value.is_empty() && !value.contains('\'') && reads_back(&context(value), value);
    if plain_ok {
        return value.to_string();
    }
    let single = format!("'{}'", value.replace('\'', "''"));
    if reads_back(&context(&single), value) {
        single
    } else {
        double_quoted(value)
    }
}

fn reads_back(document: &str, value: &str) -> bool {
    let Ok(parsed) = yaml_serde::from_str::<yaml_serde::Value>(document) else {
        return false;
    };
    let got = parsed.get("k");
    let got = match got {
        Some(yaml_serde::Value::Sequence(items)) if items.len() == 1 => items.first(),
        other => other,
    };
    got.and_then(|v| v.as_str()) == Some(value)
}

/// Characters only a double-quoted scalar can hold as they are meant: line breaks (YAML 1.1's
/// too, which libyaml honours), other control characters, and non-characters.
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
        )
}

fn double_quoted(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            '\u{85}' => out.push_str("\\N"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            c if needs_escape(c) => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn plain_when_safe_quoted_otherwise() {
        assert_eq!(scalar("eu-west-2"), "eu-west-2");
        assert_eq!(scalar("B: colon"), "'B: colon'");
        assert_eq!(scalar("it's"), "'it''s'");
        assert_eq!(scalar("123"), "'123'");
        assert_eq!(scalar("a\nb: c"), "\"a\\nb: c\"");
        assert_eq!(scalar("x # y"), "'x # y'");
        assert_eq!(flow_scalar("a, b"), "'a, b'");
        assert_eq!(
            flow_scalar("../../components/x/controllers"),
            "../../components/x/controllers"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn every_string_reads_back(value in "\\PC*|[\\x00-\\x7f\u{85}\u{2028}\u{feff}]{0,12}") {
            for (doc, flow) in [(format!("k: {}\n", scalar(&value)), false), (format!("k: [{}]\n", flow_scalar(&value)), true)] {
                let parsed: yaml_serde::Value = yaml_serde::from_str(&doc).unwrap_or_else(|e| panic!("{doc:?}: {e}"));
                let got = if flow { parsed["k"][0].clone() } else { parsed["k"].clone() };
                prop_assert_eq!(got.as_str(), Some(value.as_str()), "{:?}", doc);
                // One line: nothing can start a new key or a comment.
                prop_assert_eq!(doc.lines().count(), 1);
            }
        }
    }
}
