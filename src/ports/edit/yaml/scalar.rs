//! Strings as YAML scalars that read back as exactly the same string: the one way cellgen writes
//! a string into YAML (a cellgen.yaml field, a chart version, a patch value, a list item).
//!
//! "Reads back" means for every reader of the file: the YAML 1.1 resolution of go-yaml v2
//! (sigs.k8s.io/yaml: kustomization files, JSON patches, kustomize-controller reading back what
//! it built), the YAML 1.2 resolution of go-yaml v3 (kyaml: resources and patches), both ported
//! in `crate::ports::yaml::resolve`, and cellgen's own parser. A plain scalar any of them would
//! resolve otherwise (`0777` an octal integer, `1_0` the integer 10, `2001-12-14` a timestamp,
//! `yes` a boolean in YAML 1.1) is quoted.

use crate::ports::yaml::resolve;

/// A string as a YAML scalar in block context: plain when that reads back as the same string,
/// single-quoted when only quotes are needed, double-quoted with escapes when the string holds a
/// line break or another character a quote cannot carry (so no value can start a new line, a
/// new key or a comment).
pub fn scalar(value: &str) -> String {
    quote(value, |v| format!("k: {v}"))
}

/// [`scalar`], keeping the quoting style of the scalar it replaces (`existing`, as written)
/// where that style carries the value: a double-quoted field stays double-quoted, a
/// single-quoted one single-quoted.
pub fn scalar_like(existing: &str, value: &str) -> String {
    let chosen = scalar(value);
    match existing.chars().next() {
        Some('"') if !chosen.starts_with('"') => double_quoted(value),
        Some('\'') if !chosen.starts_with('"') && !chosen.starts_with('\'') => single_quoted(value),
        _ => chosen,
    }
}

/// Whether both go-yaml resolvers read `value`, written plain, as a string.
fn plain_is_a_string(value: &str) -> bool {
    [true, false]
        .into_iter()
        .all(|v2| resolve::implicit_tag(value, v2) == resolve::STR)
}

fn single_quoted(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

/// A string as an item of a flow list `[a, b]`.
pub fn flow_scalar(value: &str) -> String {
    quote(value, |v| format!("k: [{v}]"))
}

fn quote(value: &str, context: impl Fn(&str) -> String) -> String {
    if value.chars().any(needs_escape) {
        return double_quoted(value);
    }
    let plain_ok = !value.is_empty()
        && !value.contains('\'')
        && plain_is_a_string(value)
        && reads_back(&context(value), value);
    if plain_ok {
        return value.to_string();
    }
    let single = single_quoted(value);
    if reads_back(&context(&single), value) {
        single
    } else {
        double_quoted(value)
    }
}

fn reads_back(document: &str, value: &str) -> bool {
    let Ok(parsed) = crate::ports::yaml::from_str::<yaml_serde::Value>(document) else {
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

    #[test]
    fn what_go_yaml_would_type_is_quoted() {
        // YAML 1.1 (go-yaml v2) and YAML 1.2 (go-yaml v3) integers, floats, booleans, nulls
        // and timestamps.
        for value in [
            "0777",
            "1_0",
            "2001-12-14",
            "2001-12-14t21:59:43.10-05:00",
            "yes",
            "off",
            "y",
            "~",
            "null",
            "1e3",
            "0x1F",
            "0o17",
            "0b11",
            ".inf",
            "-.inf",
            ".NaN",
            "+12",
            "08",
            "True",
        ] {
            let written = scalar(value);
            assert!(written.starts_with('\''), "{value} -> {written}");
            assert_eq!(go_yaml_reads(&format!("k: {written}\n")), [value, value]);
        }
        assert_eq!(scalar("1.2.3"), "1.2.3");
        assert_eq!(scalar("v1.0"), "v1.0");
        assert_eq!(scalar_like("\"v1\"", "0777"), "\"0777\"");
        assert_eq!(scalar_like("'v1'", "v2"), "'v2'");
        assert_eq!(scalar_like("'v1'", "a\nb"), "\"a\\nb\"");
        assert_eq!(scalar_like("v1", "1_0"), "'1_0'");
    }

    /// `k`'s value in `doc` as go-yaml v2 (sigs.k8s.io/yaml) and v3 (kyaml) read it, as JSON
    /// text of strings (a non-string is `<json>`), through the ports of both.
    fn go_yaml_reads(doc: &str) -> Vec<String> {
        let show = |v: &serde_json::Value| match v {
            serde_json::Value::String(s) => s.clone(),
            other => format!("<{other}>"),
        };
        let v2 = crate::ports::yaml::yaml_to_json(doc)
            .unwrap_or_else(|e| panic!("{doc:?}: {e:?}"))
            .expect("a document");
        let v3 = crate::ports::yaml::kio_documents(doc)
            .unwrap_or_else(|e| panic!("{doc:?}: {e:?}"))[0]
            .to_json(false)
            .unwrap_or_else(|e| panic!("{doc:?}: {e:?}"));
        let at = |v: &serde_json::Value| match &v["k"] {
            serde_json::Value::Array(items) if items.len() == 1 => show(&items[0]),
            other => show(other),
        };
        vec![at(&v2), at(&v3)]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn every_string_reads_back(value in "\\PC*|[\\x00-\\x7f\u{85}\u{2028}\u{feff}]{0,12}|[-+0-9._:eEoxTtZ ]{1,12}") {
            for (doc, flow) in [(format!("k: {}\n", scalar(&value)), false), (format!("k: [{}]\n", flow_scalar(&value)), true)] {
                let parsed: yaml_serde::Value = crate::ports::yaml::from_str(&doc).unwrap_or_else(|e| panic!("{doc:?}: {e}"));
                let got = if flow { parsed["k"][0].clone() } else { parsed["k"].clone() };
                prop_assert_eq!(got.as_str(), Some(value.as_str()), "{:?}", doc);
                // go-yaml v2 (YAML 1.1) and v3 (YAML 1.2) read the same string.
                prop_assert_eq!(go_yaml_reads(&doc), [value.clone(), value.clone()], "{:?}", doc);
                // One line: nothing can start a new key or a comment.
                prop_assert_eq!(doc.lines().count(), 1);
            }
        }
    }
}
