//! Hostile input: edits.

use super::*;

pub fn cases() -> Vec<Case> {
    vec![]
}

#[test]
fn edits_table() {
    run_table("edits", &cases());
}
