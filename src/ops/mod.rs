//! Layer 7 (CONTRIBUTING.md), operations: the changes commands make to a repository, each built
//! on a plan (new and regenerate, components, keys, upgrade, remove-cell). Apart from the
//! analyses: what both need is in the model or the analysis library. They never prompt or print.

pub mod cilium_version;
pub mod components;
pub mod git_source;
pub mod keys;
pub mod regenerate;
pub mod teardown;
pub mod upgrade;
