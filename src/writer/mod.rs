//! Layer 4 (CONTRIBUTING.md), the transactional writer: a plan of changes held in memory (with its dry-run
//! diff), applied all or nothing through a journal, under the repository lock, with signals
//! deferred. It knows no repository layout: the caller passes what it needs.

pub mod journal;
pub mod lock;
pub mod plan;
pub mod signals;
