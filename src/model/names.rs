//! The names a cellgen repository and its cells share with Terraform and Flux, defined once:
//! every other file refers to these, so a rename is one edit.

/// The ConfigMap Terraform writes into each cluster and Flux substitutes from.
pub const METADATA_CONFIGMAP: &str = "cell-metadata";

/// The Terraform file of a cell's stack that writes [`METADATA_CONFIGMAP`].
pub const METADATA_FILE: &str = "cell-metadata.tf";

/// Flux's own namespace, and the name of the bootstrap GitRepository and Kustomization in it
/// (also the directory cellgen 0.2.0's bootstrap committed into each cell).
pub const FLUX_SYSTEM: &str = "flux-system";

/// Where the repository's own components live, one directory each.
pub const COMPONENTS_DIR: &str = "components";

/// A repository component's description, in its directory.
pub const SPEC_FILE: &str = "component.yaml";

/// The Terraform file that makes a cell's state forget cellgen 0.2.0's `flux_bootstrap_git`.
pub const FLUX_BOOTSTRAP_REMOVED: &str = "flux-bootstrap-removed.tf";

/// cellgen's own directory at the repository's top (records, the journal, the lock): the
/// writer owns it, since it keeps its journal there before anything else exists.
pub const CELLGEN_DIR: &str = crate::writer::journal::JOURNAL_DIR;

/// Where a cell's record lies (`.cellgen/cells/<cell>.json`).
pub const CELL_RECORDS_DIR: &str = ".cellgen/cells";

/// The record of the repository's own generated files.
pub const REPOSITORY_RECORD: &str = ".cellgen/repository.json";
