//! Hostile input: filesystem.

use super::*;

pub fn cases() -> Vec<Case> {
    vec![]
}

#[test]
fn filesystem_table() {
    run_table("filesystem", &cases());
}
