//! Minimal, format-preserving edits of files users own. A lossless parser (yaml-edit, hcl-edit)
//! finds what to change; the change itself is spliced into the original text, so comments,
//! ordering, blank lines and everything cellgen does not own keep their bytes.

pub mod hcl;
pub mod text;
pub mod yaml;
