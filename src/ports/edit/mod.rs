//! Minimal, format-preserving edits of files users own. A lossless parser (yaml-edit, hcl-edit)
//! finds what to change; the change itself is spliced into the original text, so comments,
//! ordering, blank lines and everything cellgen does not own keep their bytes. Every edit is
//! checked by parsing the result again: it means what was intended, or it is refused.

pub mod hcl;
pub mod list;
pub mod text;
pub mod yaml;
