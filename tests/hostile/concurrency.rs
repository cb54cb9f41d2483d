//! Hostile input: concurrency. These cases need processes of their own, so each is a test; `CASES`
//! counts them for the table.

#[allow(unused_imports)]
use super::*;

pub const CASES: usize = 0;
