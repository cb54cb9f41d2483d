//! A cellgen repository: the directory holding `cellgen.yaml`, found from a start directory upwards
//! (no further than the top of the Git work tree the start directory is in).

use camino::{Utf8Path, Utf8PathBuf};

use crate::error::CellgenError;
use crate::model::config::{CONFIG_FILE, Config};
use crate::root::disk;
use crate::root::filestore::FileStore;
use crate::root::fsguard::Root;

pub const CELLS_DIR: &str = "cells";
pub const TERRAFORM_CELLS_DIR: &str = "terraform/cells";

#[derive(Debug, Clone)]
pub struct Repo {
    pub root: Utf8PathBuf,
    pub config: Config,
    /// The text of cellgen.yaml, for line numbers and lossless edits.
    pub config_text: String,
}

impl Repo {
    /// The nearest directory at or above `start` that has a cellgen.yaml, if any. The search
    /// stops at the top of the Git work tree `start` is in (a directory with `.git`): a
    /// cellgen.yaml above it belongs to another project, and cellgen never works outside the
    /// repository it found.
    pub fn find_root(start: &Utf8Path) -> Option<Utf8PathBuf> {
        for dir in start.ancestors() {
            let config = dir.join(CONFIG_FILE);
            if disk::exists(&config) && !disk::is_dir(&config) {
                return Some(dir.to_path_buf());
            }
            if disk::exists(dir.join(".git")) {
                return None;
            }
        }
        None
    }

    /// Reads `root`'s cellgen.yaml (which must not be a link out of `root`).
    pub fn open(root: &Utf8Path) -> Result<Repo, CellgenError> {
        let text = Root::new(root)
            .read(Utf8Path::new(CONFIG_FILE))?
            .map(|t| t.text)
            .ok_or_else(|| CellgenError::NotARepository {
                start: root.to_path_buf(),
            })?;
        // Messages name files relative to the repository root, as findings do.
        let config = Config::parse(&text, Utf8Path::new(CONFIG_FILE))?;
        Ok(Repo {
            root: root.to_path_buf(),
            config,
            config_text: text,
        })
    }

    pub fn discover(start: &Utf8Path) -> Result<Repo, CellgenError> {
        let root = Repo::find_root(start).ok_or_else(|| CellgenError::NotARepository {
            start: start.to_path_buf(),
        })?;
        Repo::open(&root)
    }

    /// Cells that have a directory under cells/, sorted.
    pub fn cells(&self) -> Result<Vec<String>, CellgenError> {
        list_dirs(&self.root.join(CELLS_DIR))
    }
}

pub fn cell_flux_dir(cell: &str) -> Utf8PathBuf {
    Utf8Path::new(CELLS_DIR).join(cell)
}

/// The variables file of a cell's stack, the values `cellgen new` chose.
pub const TFVARS_FILE: &str = "terraform.tfvars";

pub fn cell_terraform_dir(cell: &str) -> Utf8PathBuf {
    Utf8Path::new(TERRAFORM_CELLS_DIR).join(cell)
}

/// Names of the directories in `dir` (not hidden ones), sorted; none when `dir` is missing. A
/// cell or component whose name is not UTF-8 cannot be named in a message or record: an error
/// naming it, never a directory silently left out.
pub fn list_dirs(dir: &Utf8Path) -> Result<Vec<String>, CellgenError> {
    let entries = match disk::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(CellgenError::Read {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    let mut names: Vec<String> = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        if name.as_encoded_bytes().starts_with(b".") || !disk::is_dir(entry.path()) {
            continue;
        }
        names.push(crate::paths::entry_name(dir, &name)?.to_owned());
    }
    names.sort();
    Ok(names)
}

/// Regular files (and links, not followed) under `dir`, repository-relative, sorted. It
/// descends into subdirectories when `deep`; `skip(name, is_dir)` leaves an entry out (and a
/// directory's content with it). An entry whose name is not UTF-8 is an error naming its
/// directory, whatever `skip` would say: cellgen cannot tell the user which file it means, nor
/// leave out silently a file Flux reads.
pub fn files_under(
    root: &Utf8Path,
    dir: &Utf8Path,
    deep: bool,
    skip: &dyn Fn(&str, bool) -> bool,
) -> Result<Vec<Utf8PathBuf>, CellgenError> {
    // One walker: a store made for this walk lists each directory once, as a command's does.
    files_under_in(&FileStore::new(root), dir, deep, skip)
}

/// [`files_under`], each directory listed through `files` (a command's store, which other
/// readers of the command list them through too).
pub fn files_under_in(
    files: &FileStore,
    dir: &Utf8Path,
    deep: bool,
    skip: &dyn Fn(&str, bool) -> bool,
) -> Result<Vec<Utf8PathBuf>, CellgenError> {
    let mut out = Vec::new();
    walk_listed(files, dir, deep, skip, &mut out)?;
    debug_assert!(out.is_sorted_by(|a, b| by_components(a.as_str(), b.as_str()).is_le()));
    Ok(out)
}

/// The walk of [`files_under_in`], on the store's listings.
fn walk_listed(
    files: &FileStore,
    dir: &Utf8Path,
    deep: bool,
    skip: &dyn Fn(&str, bool) -> bool,
    out: &mut Vec<Utf8PathBuf>,
) -> Result<(), CellgenError> {
    let root = files.root();
    let listing = files.list(dir);
    if !listing.opened {
        return match listing.error() {
            Some(e)
                if !matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                Err(CellgenError::Read {
                    path: root.join(dir),
                    source: e,
                })
            }
            _ => Ok(()),
        };
    }
    let mut entries = Vec::new();
    for (name, kind) in listing.entries() {
        let name = crate::paths::entry_name(dir, name)?;
        let kind = kind.map_err(|source| CellgenError::Read {
            path: root.join(crate::paths::join(dir, name)),
            source,
        })?;
        entries.push((name, kind == crate::root::filestore::Kind::Dir));
    }
    // Names in byte order, each directory walked in its place: the paths come out in
    // `by_components` order (a name before every longer one it begins, and `/` sorts first).
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    for (name, is_dir) in entries {
        if skip(name, is_dir) {
            continue;
        }
        let rel = crate::paths::join(dir, name);
        if is_dir {
            if deep {
                walk_listed(files, &rel, deep, skip, out)?;
            }
        } else {
            out.push(rel);
        }
    }
    match listing.error() {
        Some(source) => Err(CellgenError::Read {
            path: root.join(dir),
            source,
        }),
        None => Ok(()),
    }
}

/// The order of `Utf8Path`'s `Ord` (component by component) for the paths [`walk_listed`] makes
/// (names joined by single `/`): bytes compared with `/` below every other byte, since a name
/// ends there. `Ord` walks `Components`, several times the cost of this, on every comparison.
fn by_components(a: &str, b: &str) -> std::cmp::Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let same = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let key = |c: u8| if c == b'/' { 0 } else { u16::from(c) + 1 };
    match (a.get(same), b.get(same)) {
        (Some(x), Some(y)) => key(*x).cmp(&key(*y)),
        _ => a.len().cmp(&b.len()),
    }
}

/// Whether Flux reads a repository-relative path: everything but the Terraform stacks,
/// cellgen's own directory, CI files, files at the top and the `component.yaml` of repository
/// components. The plan refuses a symbolic link on such a path (`Plan::new`).
pub fn read_by_flux(rel: &Utf8Path) -> bool {
    let parts: Vec<_> = rel.components().map(|c| c.as_str()).collect();
    match parts.as_slice() {
        [] | [_] => false,
        [top, ..] if ["terraform", crate::model::names::CELLGEN_DIR, ".github"].contains(top) => {
            false
        }
        [dir, _, file] => {
            !(*dir == crate::model::names::COMPONENTS_DIR
                && *file == crate::model::names::SPEC_FILE)
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::by_components;
    use camino::Utf8PathBuf;

    #[test]
    fn by_components_is_the_order_of_paths() {
        // Names from characters around `/` in byte order, joined one to three deep.
        let names = [
            "a", "a-b", "a.b", "a0", "aB", "a_", "ab", "b", "é", "a b", "-", ".x", "A",
        ];
        let mut paths = Vec::new();
        for a in names {
            paths.push(Utf8PathBuf::from(a));
            for b in names {
                paths.push(Utf8PathBuf::from(format!("{a}/{b}")));
                for c in ["a", "a-b", "z"] {
                    paths.push(Utf8PathBuf::from(format!("{a}/{b}/{c}")));
                }
            }
        }
        let mut expected = paths.clone();
        expected.sort();
        paths.reverse();
        paths.sort_by(|a, b| by_components(a.as_str(), b.as_str()));
        assert_eq!(paths, expected);
    }

    /// The walk gives paths in `Path` order without sorting them: each directory's names in
    /// byte order, a directory's files in its place.
    #[test]
    fn files_under_come_in_path_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = camino::Utf8Path::from_path(dir.path()).unwrap();
        let names = ["a", "a-b", "a.b", "a0", "aB", "b", "é", "a b", "-", "A"];
        let mut expected = Vec::new();
        for a in names {
            std::fs::create_dir(root.join(a)).unwrap();
            for b in names {
                // Half the names a directory, half a file, so files sit between directories.
                if b.len() % 2 == 0 {
                    std::fs::create_dir(root.join(a).join(b)).unwrap();
                    std::fs::write(root.join(a).join(b).join("f"), "").unwrap();
                    expected.push(Utf8PathBuf::from(format!("{a}/{b}/f")));
                } else {
                    std::fs::write(root.join(a).join(b), "").unwrap();
                    expected.push(Utf8PathBuf::from(format!("{a}/{b}")));
                }
            }
        }
        expected.sort();
        let files = crate::root::filestore::FileStore::new(root);
        let walked =
            super::files_under_in(&files, camino::Utf8Path::new(""), true, &|_, _| false).unwrap();
        assert_eq!(walked, expected);
    }
}
