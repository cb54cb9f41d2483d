//! Unit tests for the envsubst engine; data-driven Flux cases live in tests/substitute_*.rs.

use super::*;
use std::collections::{BTreeMap, HashMap};

fn vars(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn run(input: &str, pairs: &[(&str, &str)], strict: bool) -> Result<String, SubstError> {
    let m = vars(pairs);
    envsubst(input, &|k| m.get(k).cloned(), strict)
}

fn ok(input: &str, pairs: &[(&str, &str)]) -> String {
    run(input, pairs, false).expect("substitution failed")
}

#[test]
fn smoke() {
    assert_eq!(ok("a ${v} b", &[("v", "x")]), "a x b");
}

#[test]
fn forms_table() {
    let v = &[("v", "Hello"), ("e", ""), ("p", "a/b/c.tar.gz")];
    let cases: &[(&str, &str)] = &[
        ("${v}", "Hello"),
        ("$v", "$v"),
        ("$$", "$"),
        ("$${v}", "${v}"),
        ("${e:-d}", "d"),
        ("${u:-d}", "d"),
        ("${v:-d}", "Hello"),
        ("${e:=d}", "d"),
        ("${u=d}", "d"),
        ("${u:+d}", "d"),
        ("${u:?d}", "d"),
        ("${#v}", "5"),
        ("${v^}", "Hello"),
        ("${v^^}", "HELLO"),
        ("${v,}", "hello"),
        ("${v,,}", "hello"),
        ("${v:1}", "ello"),
        ("${v:1:3}", "ell"),
        ("${v:-3}", "Hello"),
        ("${v: -3}", "Hello"),
        ("${v:10}", ""),
        ("${p#*/}", "b/c.tar.gz"),
        ("${p##*/}", "c.tar.gz"),
        ("${p%.*}", "a/b/c.tar"),
        ("${p%%.*}", "a/b/c"),
        ("${p/\\//-}", "a-b/c.tar.gz"),
        ("${p//\\//-}", "a-b-c.tar.gz"),
        ("${p/#a/X}", "X/b/c.tar.gz"),
        ("${p/%gz/bz2}", "a/b/c.tar.bz2"),
        ("${u:-${e:-x}}", "x"),
        ("${u:-${v}-z}", "Hello-z"),
        ("a\\b", "a\\b"),
    ];
    for (input, want) in cases {
        assert_eq!(&ok(input, v), want, "input {input}");
    }
}

#[test]
fn unicode_case_ops() {
    let v = &[("u", "élan ßtraße"), ("g", "ÉCOLE")];
    assert_eq!(ok("${u^}", v), "Élan ßtraße");
    // Go's simple case mapping leaves ß alone (Rust's full mapping would give SS).
    assert_eq!(ok("${u^^}", v), "ÉLAN ßTRAßE");
    assert_eq!(ok("${g,}", v), "éCOLE");
    assert_eq!(ok("${g,,}", v), "école");
    assert_eq!(ok("${#u}", v), "14");
}

#[test]
fn globs() {
    let v = &[("f", "v1.2.3-rc1"), ("d", "[x]")];
    assert_eq!(ok("${f#v}", v), "1.2.3-rc1");
    assert_eq!(ok("${f#?}", v), "1.2.3-rc1");
    assert_eq!(ok("${f#[a-z]}", v), "1.2.3-rc1");
    // Go's path.Match negates with `^` only; `!` is just a class member.
    assert_eq!(ok("${f#[!a-z]}", v), "1.2.3-rc1");
    assert_eq!(ok("${f#[^a-z]}", v), "v1.2.3-rc1");
    assert_eq!(ok("${f%-*}", v), "v1.2.3");
    assert_eq!(ok("${f##*.}", v), "3-rc1");
    // A malformed class makes Go's path.Match fail: the value comes back untouched.
    assert_eq!(ok("${f#[}", v), "v1.2.3-rc1");
    assert_eq!(ok("${d#\\[}", v), "x]");
}

#[test]
fn syntax_errors_match_flux() {
    let cases: &[(&str, &str, usize)] = &[
        ("${v-d}", "missing closing brace", 0),
        ("x ${v+d}", "missing closing brace", 2),
        ("${v?d}", "missing closing brace", 0),
        ("${cluster-name}", "missing closing brace", 0),
        ("${}", "unable to parse variable name", 0),
        ("${", "unable to parse variable name", 0),
        ("${v", "missing closing brace", 0),
        ("${v:-x", "unable to parse substitution within function", 0),
        ("${v#}", "unable to parse substitution within function", 0),
        ("${v/a}", "bad substitution", 0),
        ("${#}", "bad substitution", 0),
        ("ok ${a:-${b-c}}", "missing closing brace", 8),
    ];
    for (input, msg, off) in cases {
        match run(input, &[], false) {
            Err(SubstError::Syntax { message, offset }) => {
                assert_eq!(&message, msg, "input {input}");
                assert_eq!(offset, *off, "input {input}");
            }
            other => panic!("{input}: expected syntax error, got {other:?}"),
        }
    }
}

#[test]
fn strict_mode() {
    let v = &[("set", "x"), ("empty", "")];
    assert_eq!(run("${empty}", v, true).as_deref(), Ok(""));
    let err = run("a\n${missing}", v, true).unwrap_err();
    assert_eq!(
        err,
        SubstError::VariableNotSet {
            name: "missing".into(),
            offset: 2
        }
    );
    assert_eq!(
        err.to_string(),
        r#"variable not set (strict mode): "missing""#
    );
    for op in [
        "${missing:-d}",
        "${missing=d}",
        "${missing:=d}",
        "${missing:+d}",
    ] {
        assert_eq!(run(op, v, true).as_deref(), Ok("d"), "{op}");
    }
    for op in [
        "${#missing}",
        "${missing^^}",
        "${missing,}",
        "${missing:0}",
        "${missing/a/b}",
        "${missing%a}",
    ] {
        assert!(
            matches!(run(op, v, true), Err(SubstError::VariableNotSet { .. })),
            "{op}"
        );
    }
    // Defaults are evaluated eagerly, even when unused.
    assert!(run("${set:-${missing}}", v, true).is_err());
    // Non-strict: missing reads as empty.
    assert_eq!(run("[${missing}]", v, false).as_deref(), Ok("[]"));
}

#[test]
fn substring_panic_becomes_error() {
    let v = &[("a", "hello")];
    assert!(matches!(
        run("${a:1:-1}", v, false),
        Err(SubstError::SubstringOutOfRange { .. })
    ));
    assert_eq!(ok("${a:-2:5}", v), "hello"); // ":-" is the default operator
    assert_eq!(ok("${a:1:0}", v), "");
    assert_eq!(ok("${a:9:-1}", v), "");
}

#[test]
fn var_names() {
    for good in ["a", "_", "A_1", "cluster_name", "_9"] {
        assert!(is_valid_var_name(good), "{good}");
    }
    for bad in ["", "1a", "a-b", "a.b", "é", "a b"] {
        assert!(!is_valid_var_name(bad), "{bad}");
    }
}

#[test]
fn references_with_offsets() {
    let text = "a: ${x}\nb: ${y:-${z}}\nc: $${no}\nd: ${bad-name}\ne: ${w}";
    let a = analyze(text);
    let names: Vec<_> = a.refs.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["x", "y", "z", "w"]);
    let y = &a.refs[1];
    assert_eq!(y.text, "${y:-${z}}");
    assert!(y.has_default);
    assert!(!a.refs[2].has_default);
    assert_eq!(&text[y.offset..y.offset + y.len], y.text);
    assert_eq!(a.errors.len(), 1);
    assert_eq!(a.errors[0].offset(), text.find("${bad"));
}

#[test]
fn odd_input_does_not_panic() {
    for input in [
        "${v:é}",
        "${é:😀}",
        "${v:😀}",
        "$",
        "${",
        "}",
        "${a:",
        "${a:1:",
        "${a/",
        "${a//",
        "${a/x/",
        "\0${a}",
        "$$$${a}",
        "${a:${b:${c}}}",
        "${#a",
        "${a,,,}",
    ] {
        let _ = run(input, &[("a", "😀x"), ("v", "y")], true);
        let _ = analyze(input);
    }
    let deep = "${a:-".repeat(10_000);
    assert!(run(&deep, &[], false).is_err());
}

/// `substituteFrom` in list order, later wins, the inline `substitute` over all; newlines are
/// dropped from every value, the first source's too (it is taken whole).
#[test]
fn post_build_variables_merge_in_flux_order() {
    let map = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let vars = flux::PostBuild {
        substitute: map(&[("c", "inline")]),
        substitute_from: vec![
            map(&[("a", "first\nline"), ("b", "first"), ("c", "first")]),
            map(&[("b", "sec\nond")]),
        ],
        strategy_always: false,
        strict: true,
    }
    .into_vars();
    assert_eq!(vars.get("a"), Some("firstline"));
    assert_eq!(vars.get("b"), Some("second"));
    assert_eq!(vars.get("c"), Some("inline"));
    let none = flux::PostBuild {
        substitute: BTreeMap::new(),
        substitute_from: Vec::new(),
        strategy_always: false,
        strict: true,
    }
    .into_vars();
    assert!(none.is_empty());
}
