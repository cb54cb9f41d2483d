//! Unit tests for the envsubst engine; data-driven Flux cases live in tests/substitute_*.rs.

use super::*;
use std::collections::HashMap;

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
