//! UTF-8 paths (camino), so that a message or a record names a path exactly.
//!
//! Paths enter cellgen as UTF-8 or not at all: the current directory and `-C`
//! (`commands::run`) and the directories cellgen lists by name (cells, components:
//! `repo::list_dirs`) are checked where they enter, with an error naming a path that is not
//! (the one place a path is shown lossily). Every path built from them is UTF-8 too.

use std::path::Path;

use camino::{Utf8Path, Utf8PathBuf};

/// `path` as a UTF-8 path. Paths built inside cellgen are UTF-8 (see the module); the only
/// exception is a file name read from a walk of the user's tree (a layer the kustomize builder
/// reads), which is then shown with U+FFFD for the bytes that are not UTF-8, as `Path::display`
/// would.
pub fn utf8(path: impl AsRef<Path>) -> Utf8PathBuf {
    let path = path.as_ref();
    match Utf8Path::from_path(path) {
        Some(path) => path.to_path_buf(),
        None => Utf8PathBuf::from(path.to_string_lossy().into_owned()),
    }
}

/// `path` as a UTF-8 path, or None when it is not one.
pub fn try_utf8(path: &Path) -> Option<&Utf8Path> {
    Utf8Path::from_path(path)
}

/// A path given by the user (a flag's file or directory) as a UTF-8 path, or an error naming it
/// (`what`, e.g. "the file") and saying what to do (`fix`).
pub fn from_user(
    path: &Path,
    what: &'static str,
    fix: &'static str,
) -> Result<Utf8PathBuf, crate::error::CellgenError> {
    match try_utf8(path) {
        Some(path) => Ok(path.to_path_buf()),
        None => Err(crate::error::CellgenError::NotUtf8Path {
            what,
            path: path.to_string_lossy().into_owned(),
            fix,
        }),
    }
}

/// `path.utf8()`: a path for a message, as a UTF-8 path (see [`utf8`]); what cellgen shows
/// instead of `Path::display`.
pub trait PathExt {
    fn utf8(&self) -> Utf8PathBuf;
}

impl PathExt for Path {
    fn utf8(&self) -> Utf8PathBuf {
        utf8(self)
    }
}
