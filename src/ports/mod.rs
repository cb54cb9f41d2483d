//! Layer 2 (CONTRIBUTING.md), ports: other tools' semantics reproduced faithfully (kustomize,
//! Flux's envsubst, go-yaml, and the Go standard library they share) and format-level editors
//! (YAML, HCL, lists, three-way merge). Nothing here knows of cells, `cellgen.yaml` or the file
//! system: a port that reads files does it through a trait it defines, which the file layer
//! implements.

pub mod edit;
pub mod envsubst;
pub mod golang;
pub mod kustomize;
pub mod merge;
pub mod shell;
pub mod templates;
pub mod yaml;
