//! UTF-8 paths (camino), so that a message or a record names a path exactly.
//!
//! Every path inside cellgen is a `Utf8Path`. Paths enter as UTF-8 or not at all, checked where
//! they are first met: the current directory and `-C` (`commands::run`), a path given in a flag
//! or an environment variable ([`from_user`]), a name read from a directory listing
//! ([`entry_name`]) and the target of a symbolic link (`fsguard`). Each refusal is an error
//! naming the path (the parent directory, for a listed name) and what to do; the name that is
//! not UTF-8 is shown with U+FFFD there, the only place cellgen shows a path lossily.
//!
//! Also what a path is ([`Kind`]). Nothing here touches the file system, so the ports may use it:
//! CONTRIBUTING.md places this file in the base layer.

use std::ffi::OsStr;
use std::path::Path;

use camino::{Utf8Path, Utf8PathBuf};

use crate::error::CellgenError;

/// A path given by the user (a flag's file or directory, an environment variable) as a UTF-8
/// path, or an error naming it (`what`, e.g. "the file") and saying what to do (`fix`).
pub fn from_user(
    path: &Path,
    what: &'static str,
    fix: &'static str,
) -> Result<Utf8PathBuf, CellgenError> {
    match Utf8Path::from_path(path) {
        Some(path) => Ok(path.to_path_buf()),
        None => Err(CellgenError::NotUtf8Path {
            what,
            path: path.to_string_lossy().into_owned(),
            fix,
        }),
    }
}

/// The name of an entry of `dir` (a directory listing) as UTF-8, or an error naming `dir` and
/// the entry (lossily: the one thing that cannot be shown exactly).
pub fn entry_name<'a>(dir: &Utf8Path, name: &'a OsStr) -> Result<&'a str, CellgenError> {
    name.to_str().ok_or_else(|| CellgenError::NotUtf8Name {
        dir: dir.to_path_buf(),
        name: name.to_string_lossy().into_owned(),
        fix: "Rename it to a UTF-8 name or move it out of the repository, then run cellgen again",
    })
}

/// `base.join(rel)`, the room made once: `Path::join` copies `base`, then grows the copy for
/// `rel` (a reallocation per join; joins were a few percent of `check`'s instructions).
pub fn join(base: &Utf8Path, rel: impl AsRef<str>) -> Utf8PathBuf {
    let (base_text, rel) = (base.as_str(), rel.as_ref());
    if base_text.is_empty() {
        return Utf8PathBuf::from(rel);
    }
    if base_text.ends_with('/') || rel.is_empty() || rel.starts_with('/') {
        return base.join(rel);
    }
    let mut out = String::with_capacity(base_text.len() + 1 + rel.len());
    out.push_str(base_text);
    out.push('/');
    out.push_str(rel);
    Utf8PathBuf::from(out)
}

/// Whether `rest` is a clean repository-relative path, written as `Path` components would give
/// it back: not empty, not absolute, no empty, `.` or `..` segment, no trailing `/`. The one
/// check of a relative path cellgen makes (a layer path, a plan's or record's path, a path a
/// build meets). Only its dots and a `//` are looked at: this runs for every path a build meets.
pub fn is_clean_relative(rest: &str) -> bool {
    let b = rest.as_bytes();
    if b.is_empty()
        || b[0] == b'/'
        || b[b.len() - 1] == b'/'
        // Each `/` and the byte after it: a substring search sets itself up on every call.
        || memchr::memchr_iter(b'/', b).any(|i| b.get(i + 1) == Some(&b'/'))
    {
        return false;
    }
    memchr::memchr_iter(b'.', b).all(|i| {
        if i > 0 && b[i - 1] != b'/' {
            return true;
        }
        !matches!(&b[i + 1..], [] | [b'/', ..] | [b'.'] | [b'.', b'/', ..])
    })
}

/// What a path is, before Flux's artifact rules are applied (see `Fs::entry`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Link,
    /// A device, socket, submodule...: not in Flux's artifact.
    Other,
    Missing,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_is_path_join() {
        for base in ["", "/", "a", "a/", "/r/a", "a//", ".", "..", "/r/a.b"] {
            for rel in [
                "", "b", "b/c.yaml", "/abs", "./b", "../b", "b/", ".", "b//c",
            ] {
                let joined = join(Utf8Path::new(base), rel);
                assert_eq!(joined, Utf8Path::new(base).join(rel), "{base:?} {rel:?}");
                assert_eq!(joined.as_str(), Utf8Path::new(base).join(rel).as_str());
            }
        }
    }
}
