//! Hostile input: symlinks.

use super::*;

pub fn cases() -> Vec<Case> {
    vec![]
}

#[test]
fn symlinks_table() {
    run_table("symlinks", &cases());
}
