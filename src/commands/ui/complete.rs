//! The names shells complete dynamically (`source <(COMPLETE=bash cellgen)`): the cells,
//! components, layers, keys and environments of the repository the shell is in, read when the
//! user presses Tab. Here, below the commands, because `cli.rs` names them on its arguments.

use clap_complete::engine::CompletionCandidate;

use crate::model::repo::Repo;

/// The repository of the current directory, if there is one that reads: completing never fails
/// loudly, it offers nothing.
fn repository() -> Option<Repo> {
    let cwd = std::env::current_dir().ok()?;
    let cwd = camino::Utf8PathBuf::from_path_buf(cwd).ok()?;
    Repo::open(&Repo::find_root(&cwd)?).ok()
}

fn candidates(names: impl IntoIterator<Item = String>) -> Vec<CompletionCandidate> {
    names.into_iter().map(CompletionCandidate::new).collect()
}

/// The repository's cells.
pub fn cells() -> Vec<CompletionCandidate> {
    candidates(
        repository()
            .and_then(|r| r.cells().ok())
            .unwrap_or_default(),
    )
}

/// The components a cell can add: the catalog with the repository's own.
pub fn components() -> Vec<CompletionCandidate> {
    let templates = crate::ports::templates::Templates::new();
    let catalog = match repository() {
        Some(repo) => crate::model::catalog::Catalog::load(
            &templates,
            &crate::writer::plan::Plan::new(&repo.root, crate::model::repo::read_by_flux),
        )
        .ok(),
        None => crate::model::catalog::Catalog::embedded(&templates).ok(),
    };
    candidates(catalog.map(|c| c.names()).unwrap_or_default())
}

/// The layers of cellgen.yaml.
pub fn layers() -> Vec<CompletionCandidate> {
    candidates(
        repository()
            .map(|r| {
                r.config
                    .layers
                    .into_iter()
                    .map(|l| l.name)
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default(),
    )
}

/// The keys of the contract.
pub fn keys() -> Vec<CompletionCandidate> {
    candidates(
        repository()
            .map(|r| r.config.keys.into_keys().collect::<Vec<_>>())
            .unwrap_or_default(),
    )
}

/// The environments of cellgen.yaml.
pub fn environments() -> Vec<CompletionCandidate> {
    candidates(
        repository()
            .map(|r| r.config.environments)
            .unwrap_or_default(),
    )
}
