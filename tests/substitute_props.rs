//! Property tests for the envsubst engine.

use cellgen::substitute::{envsubst, is_valid_var_name, to_flux_yaml};
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
        let _ = cellgen::substitute::analyze(&input);
    }

    #[test]
    fn never_panics_dense(input in "[${}:#%/,^=?+\\-a-c0-9\\\\ é😀]{0,40}", strict in any::<bool>()) {
        let _ = envsubst(&input, &|_| Some("x😀y".into()), strict);
        let _ = cellgen::substitute::references(&input);
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
