//! Hostile input: files.

use super::*;

pub fn cases() -> Vec<Case> {
    vec![]
}

#[test]
fn files_table() {
    run_table("files", &cases());
}
