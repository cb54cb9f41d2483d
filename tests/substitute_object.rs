//! `substitute_object` and `to_flux_yaml`: Flux's per-object behaviour.

use std::collections::BTreeMap;

use cellgen::ports::envsubst::{
    PostBuild, SubstError, SubstituteOptions, Vars, substitute_object, to_flux_yaml,
};
use serde_json::json;

fn vars(pairs: &[(&str, &str)]) -> Vars {
    Vars::new(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

const STRICT: SubstituteOptions = SubstituteOptions {
    strict: true,
    strategy_always: false,
};

#[test]
fn quoted_number_becomes_integer() {
    let obj = json!({"kind": "Deployment", "spec": {"replicas": "${n}"}});
    let out = substitute_object(&obj, &vars(&[("n", "3")]), &STRICT).unwrap();
    assert_eq!(out["spec"]["replicas"], json!(3));
}

#[test]
fn strings_go_yaml_would_retype_stay_strings() {
    let obj =
        json!({"a": "true", "b": "1", "c": "null", "d": "yes", "e": "~", "f": "", "g": "${v}"});
    let out = substitute_object(&obj, &vars(&[("v", "x")]), &STRICT).unwrap();
    assert_eq!(
        out,
        json!({"a": "true", "b": "1", "c": "null", "d": "yes", "e": "~", "f": "", "g": "x"})
    );
}

/// kustomize-controller reads the substituted text back with sigs.k8s.io/yaml's YAMLToJSON
/// (go-yaml v2, YAML 1.1), so what a variable writes into a plain scalar is retyped that way.
#[test]
fn substituted_scalars_read_back_as_yaml_1_1() {
    let obj = json!({"spec": {
        "yes": "${yes}", "on": "${on}", "octal": "${octal}", "exp": "${exp}", "tilde": "${tilde}",
        "hex": "${hex}", "stamp": "${stamp}", "float": "${float}", "sexagesimal": "${sexa}"
    }});
    let v = vars(&[
        ("yes", "yes"),
        ("on", "On"),
        ("octal", "0775"),
        ("exp", "1e3"),
        ("tilde", "~"),
        ("hex", "0x1F"),
        ("stamp", "2024-01-02"),
        ("float", "1.5"),
        ("sexa", "1:30"),
    ]);
    let out = substitute_object(&obj, &v, &STRICT).unwrap();
    assert_eq!(
        out["spec"],
        json!({
            "yes": true, "on": true, "octal": 509, "exp": 1000, "tilde": null, "hex": 31,
            "stamp": "2024-01-02", "float": 1.5, "sexagesimal": "1:30"
        })
    );
    // What Go's JSON encoder refuses fails as Flux fails.
    let err =
        substitute_object(&json!({"x": "${inf}"}), &vars(&[("inf", ".inf")]), &STRICT).unwrap_err();
    assert!(err.to_string().contains("unsupported value"), "{err}");
    // A value nesting brackets deeper than cellgen reads is refused, not parsed for minutes.
    let deep = "[".repeat(100_000);
    let err =
        substitute_object(&json!({"x": "${d}"}), &vars(&[("d", &deep)]), &STRICT).unwrap_err();
    assert!(
        err.to_string().contains("nest more than 64 levels"),
        "{err}"
    );
}

#[test]
fn disabled_label_or_annotation_skips() {
    for field in ["labels", "annotations"] {
        let obj = json!({"metadata": {field: {"kustomize.toolkit.fluxcd.io/substitute": "disabled"}}, "x": "${missing}"});
        assert_eq!(
            substitute_object(&obj, &vars(&[("a", "b")]), &STRICT).unwrap(),
            obj
        );
    }
}

#[test]
fn empty_vars_skip_unless_always() {
    let obj = json!({"x": "${missing}", "n": "${n:-5}"});
    assert_eq!(substitute_object(&obj, &vars(&[]), &STRICT).unwrap(), obj);
    let always = SubstituteOptions {
        strict: true,
        strategy_always: true,
    };
    assert!(matches!(
        substitute_object(&obj, &vars(&[]), &always),
        Err(SubstError::VariableNotSet { .. })
    ));
    let lenient = SubstituteOptions {
        strict: false,
        strategy_always: true,
    };
    assert_eq!(
        substitute_object(&obj, &vars(&[]), &lenient).unwrap(),
        json!({"x": null, "n": 5})
    );
}

#[test]
fn precedence_and_newline_stripping() {
    let pb = PostBuild {
        substitute: BTreeMap::from([("b".into(), "inline".into())]),
        substitute_from: vec![
            BTreeMap::from([("a".into(), "first".into()), ("b".into(), "first".into())]),
            BTreeMap::from([("a".into(), "sec\nond\r\n".into())]),
        ],
        strategy_always: false,
        strict: true,
    };
    let v = pb.vars();
    assert_eq!(v.get("a"), Some("second\r"));
    assert_eq!(v.get("b"), Some("inline"));
}

#[test]
fn invalid_key_is_named() {
    let err =
        substitute_object(&json!({"a": 1}), &vars(&[("cluster-name", "x")]), &STRICT).unwrap_err();
    assert_eq!(
        err,
        SubstError::InvalidVarName {
            name: "cluster-name".into()
        }
    );
    assert_eq!(
        err.flux_message(),
        "envsubst error: 'cluster-name' var name is invalid, must match '^[_[:alpha:]][_[:alpha:][:digit:]]*$'"
    );
}

#[test]
fn value_breaking_yaml_is_a_clear_error() {
    let obj = json!({"spec": {"host": "${h}"}});
    let err = substitute_object(&obj, &vars(&[("h", "a: b: c")]), &STRICT).unwrap_err();
    assert!(matches!(err, SubstError::Yaml { .. }), "{err:?}");
    assert!(err.to_string().starts_with("YAMLToJSON: "));
}

#[test]
fn strict_error_has_flux_text() {
    let err =
        substitute_object(&json!({"x": "${nope}"}), &vars(&[("a", "b")]), &STRICT).unwrap_err();
    assert_eq!(
        err.flux_message(),
        r#"envsubst error: variable substitution failed: variable not set (strict mode): "nope""#
    );
}

#[test]
fn go_yaml_layout() {
    let obj = json!({
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"name": "x", "labels": {}},
        "data": {"script": "echo hi\nexit 0\n", "k10": "a", "k9": "b", "sp": " lead", "colon": "a: b"},
        "list": [{"name": "a", "args": ["x", 1, true, null]}, [1, 2], []],
        "num": 1.5,
        "big": 1e21,
        "int_float": 3.0
    });
    let want = "\
apiVersion: v1
big: 1e+21
data:
  colon: 'a: b'
  k9: b
  k10: a
  script: |
    echo hi
    exit 0
  sp: ' lead'
int_float: 3
kind: ConfigMap
list:
- args:
  - x
  - 1
  - true
  - null
  name: a
- - 1
  - 2
- []
metadata:
  labels: {}
  name: x
num: 1.5
";
    assert_eq!(to_flux_yaml(&obj), want);
}

#[test]
fn go_yaml_quoting() {
    for (s, want) in [
        ("true", "\"true\""),
        ("yes", "\"yes\""),
        ("Off", "\"Off\""),
        ("1", "\"1\""),
        ("0x1F", "\"0x1F\""),
        ("1e3", "\"1e3\""),
        ("1_000", "\"1_000\""),
        ("2024-01-02", "\"2024-01-02\""),
        ("12:30", "\"12:30\""),
        ("", "\"\""),
        ("~", "\"~\""),
        ("*x", "'*x'"),
        ("- a", "'- a'"),
        ("a #b", "'a #b'"),
        ("a#b", "a#b"),
        ("${v}", "${v}"),
        ("tab\there", "\"tab\\there\""),
        ("it's", "it's"),
        ("trail ", "'trail '"),
        ("1.2.3", "1.2.3"),
        ("-", "'-'"),
    ] {
        assert_eq!(
            to_flux_yaml(&json!({"k": s})),
            format!("k: {want}\n"),
            "{s:?}"
        );
    }
    assert_eq!(to_flux_yaml(&json!({"k": "a\nb"})), "k: |-\n  a\n  b\n");
    assert_eq!(to_flux_yaml(&json!({"k": "a \nb"})), "k: \"a \\nb\"\n");
}
