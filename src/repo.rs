//! A cellgen repository: the directory holding `cellgen.yaml`, found from a start directory upwards
//! (no further than the top of the Git work tree the start directory is in).

use std::path::{Path, PathBuf};

use crate::config::{CONFIG_FILE, Config};
use crate::error::CellgenError;
use crate::fsguard::Root;

pub const CELLS_DIR: &str = "cells";
pub const TERRAFORM_CELLS_DIR: &str = "terraform/cells";

#[derive(Debug, Clone)]
pub struct Repo {
    pub root: PathBuf,
    pub config: Config,
    /// The text of cellgen.yaml, for line numbers and lossless edits.
    pub config_text: String,
}

impl Repo {
    /// The nearest directory at or above `start` that has a cellgen.yaml, if any. The search
    /// stops at the top of the Git work tree `start` is in (a directory with `.git`): a
    /// cellgen.yaml above it belongs to another project, and cellgen never works outside the
    /// repository it found.
    pub fn find_root(start: &Path) -> Option<PathBuf> {
        for dir in start.ancestors() {
            let config = dir.join(CONFIG_FILE);
            if std::fs::symlink_metadata(&config).is_ok() && !config.is_dir() {
                return Some(dir.to_path_buf());
            }
            if dir.join(".git").exists() {
                return None;
            }
        }
        None
    }

    /// Reads `root`'s cellgen.yaml (which must not be a link out of `root`).
    pub fn open(root: &Path) -> Result<Repo, CellgenError> {
        let text = Root::new(root)
            .read(Path::new(CONFIG_FILE))?
            .map(|t| t.text)
            .ok_or_else(|| CellgenError::NotARepository {
                start: crate::paths::utf8(root),
            })?;
        // Messages name files relative to the repository root, as findings do.
        let config = Config::parse(&text, Path::new(CONFIG_FILE))?;
        Ok(Repo {
            root: root.to_path_buf(),
            config,
            config_text: text,
        })
    }

    pub fn discover(start: &Path) -> Result<Repo, CellgenError> {
        let root = Repo::find_root(start).ok_or_else(|| CellgenError::NotARepository {
            start: crate::paths::utf8(start),
        })?;
        Repo::open(&root)
    }

    /// Cells that have a directory under cells/, sorted.
    pub fn cells(&self) -> Result<Vec<String>, CellgenError> {
        list_dirs(&self.root.join(CELLS_DIR))
    }
}

pub fn cell_flux_dir(cell: &str) -> PathBuf {
    Path::new(CELLS_DIR).join(cell)
}

pub fn cell_terraform_dir(cell: &str) -> PathBuf {
    Path::new(TERRAFORM_CELLS_DIR).join(cell)
}

pub fn list_dirs(dir: &Path) -> Result<Vec<String>, CellgenError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(CellgenError::Read {
                path: crate::paths::utf8(dir),
                source,
            });
        }
    };
    let mut names: Vec<String> = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        if name.as_encoded_bytes().starts_with(b".") || !entry.path().is_dir() {
            continue;
        }
        // A cell or component whose name is not UTF-8 cannot be named in a message or record:
        // an error naming it, never a directory silently left out.
        match name.into_string() {
            Ok(name) => names.push(name),
            Err(name) => {
                return Err(CellgenError::NotUtf8Path {
                    what: "the directory",
                    path: dir.join(name).to_string_lossy().into_owned(),
                    fix: "Rename it (cell and component names are lowercase ASCII) or move it out of the repository",
                });
            }
        }
    }
    names.sort();
    Ok(names)
}
