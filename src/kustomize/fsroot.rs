//! Reads confined to the repository root, the way Flux sees the repository.
//!
//! Flux builds from source-controller's artifact of the repository: a tarball of regular
//! files and directories only (symbolic links are left out, `storage.Archive`), unpacked in
//! a temporary directory and read through fluxcd/pkg's secure file system, which refuses any
//! path that is not in or below that directory ("path '…' is not in or below '…'"). Inside
//! it, kustomize runs with LoadRestrictionsNone, so `../` is fine while it stays inside.
//! Here: `..` is resolved lexically (there are no links to make it differ), a path leaving
//! the root or written absolute is refused, and a symbolic link anywhere on a path is
//! reported (Flux would not find the file). Text is checked to be UTF-8.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use super::BuildError;

/// What a path is, as Flux's artifact has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    File,
    Dir,
    Missing,
}

pub struct Fs {
    /// Canonical repository root.
    pub root: PathBuf,
    /// Directories (absolute) already known to be free of symbolic links.
    clean_dirs: Mutex<HashSet<PathBuf>>,
}

/// Lexical normalisation: `.` dropped, `..` pops (kustomize cleans paths the same way).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

impl Fs {
    pub fn new(root: &Path) -> Result<Fs, BuildError> {
        let root = std::fs::canonicalize(root).map_err(|source| BuildError::Io {
            path: root.to_path_buf(),
            source,
        })?;
        Ok(Fs {
            root,
            clean_dirs: Mutex::new(HashSet::new()),
        })
    }

    /// Repository-relative form of an absolute path under the root.
    pub fn rel(&self, abs: &Path) -> PathBuf {
        abs.strip_prefix(&self.root)
            .map(Path::to_path_buf)
            .unwrap_or_else(|_| abs.to_path_buf())
    }

    /// The absolute path of `entry`, written in `file` (repository-relative) and relative
    /// to directory `dir` (absolute), refused when it is absolute or leaves the root.
    pub fn resolve(&self, dir: &Path, entry: &str, file: &Path) -> Result<PathBuf, BuildError> {
        let outside = |why: &str| BuildError::OutsideRoot {
            file: file.to_path_buf(),
            entry: entry.to_string(),
            why: why.to_string(),
        };
        if Path::new(entry).is_absolute() {
            return Err(outside(
                "it is an absolute path, and Flux builds from a copy of the repository",
            ));
        }
        let abs = normalize(&dir.join(entry));
        if !abs.starts_with(&self.root) {
            return Err(outside("it leaves the repository root"));
        }
        Ok(abs)
    }

    /// What `abs` (under the root) is; a symbolic link on the way is an error naming the
    /// reference, because Flux's artifact has no links.
    pub fn entry(&self, abs: &Path, file: &Path, reference: &str) -> Result<Entry, BuildError> {
        let rel = self.rel(abs);
        let mut cur = self.root.clone();
        let mut comps = rel.components().peekable();
        while let Some(c) = comps.next() {
            cur.push(c);
            let last = comps.peek().is_none();
            if !last && self.is_clean(&cur) {
                continue;
            }
            let meta = match std::fs::symlink_metadata(&cur) {
                Ok(m) => m,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Entry::Missing),
                Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
                    return Ok(Entry::Missing);
                }
                Err(source) => {
                    return Err(BuildError::Io {
                        path: self.rel(&cur),
                        source,
                    });
                }
            };
            if meta.file_type().is_symlink() {
                return Err(BuildError::Symlink {
                    file: file.to_path_buf(),
                    entry: reference.to_string(),
                    link: self.rel(&cur),
                });
            }
            if last {
                return Ok(if meta.is_dir() {
                    Entry::Dir
                } else if meta.is_file() {
                    Entry::File
                } else {
                    Entry::Missing
                });
            }
            if !meta.is_dir() {
                return Ok(Entry::Missing);
            }
            self.clean_dirs
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(cur.clone());
        }
        // `abs` is the root itself.
        Ok(Entry::Dir)
    }

    fn is_clean(&self, dir: &Path) -> bool {
        self.clean_dirs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(dir)
    }

    pub fn read_bytes(&self, abs: &Path) -> Result<Vec<u8>, BuildError> {
        std::fs::read(abs).map_err(|source| BuildError::Io {
            path: self.rel(abs),
            source,
        })
    }

    /// A text file kustomize parses: UTF-8 (a leading byte-order mark is dropped, as
    /// go-yaml does).
    pub fn read_text(&self, abs: &Path) -> Result<String, BuildError> {
        text(self.read_bytes(abs)?, &self.rel(abs))
    }
}

/// Bytes as text, or the error naming the file and the first bad byte.
pub fn text(bytes: Vec<u8>, path: &Path) -> Result<String, BuildError> {
    if bytes.starts_with(&[0xff, 0xfe]) || bytes.starts_with(&[0xfe, 0xff]) {
        return Err(BuildError::Unsupported {
            file: path.to_path_buf(),
            field: "UTF-16 text".into(),
        });
    }
    let mut s = String::from_utf8(bytes).map_err(|e| BuildError::NotUtf8 {
        path: path.to_path_buf(),
        offset: e.utf8_error().valid_up_to(),
    })?;
    if s.starts_with('\u{feff}') {
        s.drain(..3);
    }
    Ok(s)
}
