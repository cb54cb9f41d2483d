//! Property tests for the envsubst engine.

use cellgen::ports::envsubst::{envsubst, is_valid_var_name, to_flux_yaml};
use proptest::prelude::*;

fn regex_like(name: &str) -> bool {
    let mut c = name.chars();
    match c.next() {
        Some(f) if f == '_' || f.is_ascii_alphabetic() => {
            c.all(|x| x == '_' || x.is_ascii_alphanumeric())
        }
        _ => false,
    }
}

proptest! {
    #[test]
    fn never_panics(input in any::<String>(), strict in any::<bool>()) {
        let _ = envsubst(&input, &|k| (k.len() % 2 == 0).then(|| k.repeat(2)), strict);
        let _ = cellgen::ports::envsubst::analyze(&input);
    }

    #[test]
    fn never_panics_dense(input in "[${}:#%/,^=?+\\-a-c0-9\\\\ é😀]{0,40}", strict in any::<bool>()) {
        let _ = envsubst(&input, &|_| Some("x😀y".into()), strict);
        let _ = cellgen::ports::envsubst::references(&input);
    }

    #[test]
    fn text_without_dollar_unchanged(input in "[^$\\x00]*") {
        prop_assert_eq!(envsubst(&input, &|_| None, true), Ok(input));
    }

    #[test]
    fn dollar_escape_round_trips(input in "[^\\x00]*") {
        let escaped = input.replace('$', "$$");
        prop_assert_eq!(envsubst(&escaped, &|_| None, true), Ok(input));
    }

    #[test]
    fn braced_var_gives_value(name in "[_a-zA-Z][_a-zA-Z0-9]{0,10}", value in "[^\\x00]*") {
        let v = value.clone();
        prop_assert_eq!(envsubst(&format!("${{{name}}}"), &move |_| Some(v.clone()), true), Ok(value));
    }

    #[test]
    fn name_check_matches_regex(name in "[_a-zA-Z0-9\\-.é]{0,8}") {
        prop_assert_eq!(is_valid_var_name(&name), regex_like(&name));
    }

    #[test]
    fn flux_yaml_round_trips_strings(s in "[ -~\\n]{0,30}") {
        let obj = serde_json::json!({"k": s.clone()});
        let back: serde_json::Value = yaml_serde::from_str(&to_flux_yaml(&obj)).unwrap();
        prop_assert_eq!(back, obj);
    }
}

/// A value whose strings and keys are full of expressions, escapes and broken syntax.
fn object() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let text = prop_oneof![
        "[abc$\\{\\}:\\-#0-9 x]{0,12}",
        prop::sample::select(vec![
            "${a}",
            "${b:-d}",
            "${c}",
            "$${a}",
            "${a",
            "x ${a} ${b}",
            "${a:1:2}",
            "${c:0:-5}",
            "${a:=z}",
            "${#b}",
            "${u}",
            "${c:+set}",
            "true",
            "0775",
            "${a}${b}",
        ])
        .prop_map(str::to_string),
    ];
    let leaf = prop_oneof![
        text.clone().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        Just(Value::Null),
    ];
    leaf.prop_recursive(3, 24, 4, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(text.clone(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Variable maps over a few names and values, so that later maps often answer an object's
/// look-ups as an earlier one did.
fn var_maps() -> impl Strategy<Value = Vec<cellgen::ports::envsubst::Vars>> {
    let value = prop::option::of(prop::sample::select(vec![
        "1", "x", "", "true", "a\nb", "${a}",
    ]));
    let one = (
        value.clone(),
        value.clone(),
        value,
        prop::bool::weighted(0.05),
    )
        .prop_map(|(a, b, c, bad)| {
            let mut vars = std::collections::BTreeMap::new();
            for (name, v) in [("a", a), ("b", b), ("c", c)] {
                if let Some(v) = v {
                    vars.insert(name.to_string(), v.to_string());
                }
            }
            if bad {
                vars.insert("1bad".to_string(), "v".to_string());
            }
            cellgen::ports::envsubst::Vars::new(vars)
        });
    prop::collection::vec(one, 1..8)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// The shared path (`Prepared`: one emit, results remembered by look-ups) gives what
    /// `substitute_object` (emit, substitute, parse back) gives, call after call.
    #[test]
    fn prepared_substitution_is_substitute_object(
        obj in object(),
        disabled in prop::bool::weighted(0.1),
        maps in var_maps(),
        strict in prop::collection::vec(any::<bool>(), 8),
        always in prop::collection::vec(any::<bool>(), 8),
    ) {
        use cellgen::ports::envsubst::{Prepared, SubstituteOptions, substitute_object};
        let mut obj = serde_json::json!({"kind": "ConfigMap", "data": obj});
        if disabled {
            obj["metadata"] = serde_json::json!({"labels": {"kustomize.toolkit.fluxcd.io/substitute": "disabled"}});
        }
        let prepared = Prepared::new(&obj);
        for (i, vars) in maps.iter().enumerate() {
            let opts = SubstituteOptions { strict: strict[i], strategy_always: always[i] };
            prop_assert_eq!(prepared.substitute(&obj, vars, &opts), substitute_object(&obj, vars, &opts));
        }
        prop_assert_eq!(prepared.text(&obj), to_flux_yaml(&obj));
        prop_assert_eq!(prepared.analysis(&obj), &cellgen::ports::envsubst::analyze(&to_flux_yaml(&obj)));
    }
}

/// Variable maps whose values are words a read-back template may take in place of an
/// expression (`Prepared` reads the object's text back once with placeholders), and words that
/// would change how the text reads: types (`1`, `0775`, `yes`, `1:20`, `.inf`), colons, dashes.
fn word_maps() -> impl Strategy<Value = Vec<cellgen::ports::envsubst::Vars>> {
    let value = prop::sample::select(vec![
        "eu-west-1-dev",
        "1",
        "0775",
        "yes",
        "1:20",
        "1e3",
        "0x1F",
        "1_000",
        "null",
        "x",
        "arn:aws:iam::123456789012:role/x",
        "a:",
        "-a",
        "a.b/c",
        ".inf",
        "a b",
        "a#b",
        "",
        "~",
        "a,b",
        "[a]",
        "'a'",
        "\"a\"",
        "a\nb",
        "_",
        "True",
        "2024-01-02",
        "cgph0q",
        "al2023@v20260714",
        "a: b",
        "@a",
        "a@",
        "a@:",
        "`a",
        "a$b",
        "${a}",
    ]);
    let one = (value.clone(), value.clone(), value).prop_map(|(a, b, c)| {
        let vars = [("a", a), ("b", b), ("c", c)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        cellgen::ports::envsubst::Vars::new(vars)
    });
    prop::collection::vec(one, 2..10)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// Results made from the read-back template (second and later computed results of an
    /// object) are the full path's, whatever the words and wherever the expressions stand.
    #[test]
    fn templated_read_back_is_substitute_object(
        obj in object(),
        maps in word_maps(),
        strict in any::<bool>(),
    ) {
        use cellgen::ports::envsubst::{Prepared, SubstituteOptions, substitute_object};
        let obj = serde_json::json!({"kind": "ConfigMap", "data": obj});
        let prepared = Prepared::new(&obj);
        let opts = SubstituteOptions { strict, strategy_always: false };
        for vars in &maps {
            prop_assert_eq!(prepared.substitute(&obj, vars, &opts), substitute_object(&obj, vars, &opts));
        }
    }
}
