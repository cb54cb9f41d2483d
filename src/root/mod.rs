//! Layer 3 (CONTRIBUTING.md), file access: every read and write of a repository file, confined to its root, and
//! the Git tree `diff --base` reads (UTF-8 paths themselves are `crate::paths`, below the ports). Nothing here knows of cells.

pub mod disk;
pub mod filestore;
pub mod fsguard;
pub mod git;
pub mod limited;
pub mod memos;
pub mod source;
