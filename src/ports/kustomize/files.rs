//! What a build reads, and where the external tool's scratch copy goes, as the builder names
//! them. The port owns these traits and the file layer implements them (`root::source::Source`,
//! the working tree or a commit's tree): the builder never imports `src/root/`, which sits a
//! layer above it (CONTRIBUTING.md), and reads nothing but what the caller hands it.
//!
//! A build reads only through [`BuildFiles`] (the builder's `Fs` holds one), so a build whose
//! reads all answer the same on another source builds the same there: [`recorded`] keeps each
//! read and what it saw ([`Access`]), for `cellgen diff` to build an unchanged layer once for
//! the base and the working tree (`root::source::Source::replays`, `render::BuildCache`).

use camino::{Utf8Path, Utf8PathBuf};
use std::ffi::OsString;
use std::io;
use std::path::Path;
use std::sync::{Arc, Mutex};

pub use crate::paths::Kind;

/// The repository's files as a build reads them. Paths are absolute, under `root` (the
/// repository root as the build names it, see [`BuildFiles::canonical_root`]).
pub trait BuildFiles: Send + Sync {
    /// `root` with its symbolic links resolved: the builder confines every path to it. A
    /// canonical form that is not UTF-8 (a link above the repository to such a directory) is
    /// not used; `root` itself is then (lexical), as `fsguard::Root` does.
    fn canonical_root(&self, root: &Utf8Path) -> io::Result<Utf8PathBuf>;

    /// What `abs` is, without following a symbolic link.
    fn kind(&self, root: &Utf8Path, abs: &Utf8Path) -> io::Result<Kind>;

    /// [`BuildFiles::kind`] of a directory on the way to a path (nothing of it is read, so a
    /// source may answer it more cheaply).
    fn kind_on_the_way(&self, root: &Utf8Path, abs: &Utf8Path) -> io::Result<Kind>;

    /// The bytes of file `abs`.
    fn read(&self, root: &Utf8Path, abs: &Utf8Path) -> io::Result<Vec<u8>>;

    /// The entries of directory `abs` with their kinds, in no fixed order.
    fn list(&self, root: &Utf8Path, abs: &Utf8Path) -> io::Result<Vec<(OsString, Kind)>>;

    /// Adds `access` to the recording this reads through, if any: for answers a caller
    /// remembers instead of asking again (`Fs` knows which directories hold no link). A source
    /// keeps no log of its own; [`recorded`] does.
    fn note(&self, access: &dyn Fn() -> Access) {
        let _ = access;
    }

    /// Where the external tool's copy of the files goes (`external`).
    fn scratch(&self) -> &dyn Scratch;
}

/// What the external `kustomize`/`kubectl` fallback needs of the machine besides the
/// repository: whether a tool is on PATH, and a private directory in the system's temporary
/// directory holding a copy of just the files the build reads (the tool reads only a real
/// directory). `external` writes nothing else, and removes the directory when done.
pub trait Scratch: Send + Sync {
    /// Whether `path` is a regular file (a link to one followed).
    fn is_file(&self, path: &Path) -> bool;
    /// A new directory only its owner may enter (an error when anything is at `dir`).
    fn create_private_dir(&self, dir: &Utf8Path) -> io::Result<()>;
    fn create_dir_all(&self, dir: &Utf8Path) -> io::Result<()>;
    fn write(&self, file: &Utf8Path, bytes: &[u8]) -> io::Result<()>;
    fn remove_dir_all(&self, dir: &Utf8Path) -> io::Result<()>;
}

/// One read a build made, and what it saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    Kind {
        root: Utf8PathBuf,
        abs: Utf8PathBuf,
        seen: Result<Kind, IoError>,
    },
    Read {
        root: Utf8PathBuf,
        abs: Utf8PathBuf,
        seen: Result<Vec<u8>, IoError>,
    },
    /// Entries sorted by name (the disk lists them in no fixed order).
    ReadDir {
        root: Utf8PathBuf,
        abs: Utf8PathBuf,
        seen: Result<Vec<(OsString, Kind)>, IoError>,
    },
}

/// An I/O error as a build reports it: its kind and message.
pub type IoError = (io::ErrorKind, String);

/// `e` as an [`Access`] keeps it.
pub fn io_error(e: impl std::borrow::Borrow<io::Error>) -> IoError {
    let e = e.borrow();
    (e.kind(), e.to_string())
}

/// Directory entries in the order an [`Access::ReadDir`] keeps them: by name.
pub fn sorted(mut entries: Vec<(OsString, Kind)>) -> Vec<(OsString, Kind)> {
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries
}

/// The reads made through a [`recorded`] source, in order: what one build or one sample read,
/// for a cache of another source to replay. Held by the caller for that one build: nothing is
/// recorded anywhere else.
#[derive(Debug, Default)]
pub struct Recorder {
    reads: Mutex<Vec<Access>>,
}

impl Recorder {
    /// What was read so far.
    pub fn reads(&self) -> Vec<Access> {
        self.lock().clone()
    }

    fn push(&self, access: Access) {
        self.lock().push(access);
    }

    /// Whole entries are pushed, never half-written ones: a poisoned lock's log is whole.
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Access>> {
        self.reads.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// `files`, each read through the copy also kept by the recorder returned with it (a recorded
/// source's reads reach its own recorder too: recordings nest).
pub fn recorded(files: Arc<dyn BuildFiles>) -> (Arc<dyn BuildFiles>, Arc<Recorder>) {
    let recorder = Arc::new(Recorder::default());
    let wrapped = Recorded {
        inner: files,
        recorder: recorder.clone(),
    };
    (Arc::new(wrapped), recorder)
}

/// A source whose every answer is also written to a recorder.
struct Recorded {
    inner: Arc<dyn BuildFiles>,
    recorder: Arc<Recorder>,
}

impl BuildFiles for Recorded {
    fn canonical_root(&self, root: &Utf8Path) -> io::Result<Utf8PathBuf> {
        self.inner.canonical_root(root)
    }

    fn kind(&self, root: &Utf8Path, abs: &Utf8Path) -> io::Result<Kind> {
        let out = self.inner.kind(root, abs);
        self.recorder.push(Access::Kind {
            root: root.to_path_buf(),
            abs: abs.to_path_buf(),
            seen: out.as_ref().map(|k| *k).map_err(io_error),
        });
        out
    }

    fn kind_on_the_way(&self, root: &Utf8Path, abs: &Utf8Path) -> io::Result<Kind> {
        let out = self.inner.kind_on_the_way(root, abs);
        self.recorder.push(Access::Kind {
            root: root.to_path_buf(),
            abs: abs.to_path_buf(),
            seen: out.as_ref().map(|k| *k).map_err(io_error),
        });
        out
    }

    fn read(&self, root: &Utf8Path, abs: &Utf8Path) -> io::Result<Vec<u8>> {
        let out = self.inner.read(root, abs);
        self.recorder.push(Access::Read {
            root: root.to_path_buf(),
            abs: abs.to_path_buf(),
            seen: out.as_ref().map(Clone::clone).map_err(io_error),
        });
        out
    }

    fn list(&self, root: &Utf8Path, abs: &Utf8Path) -> io::Result<Vec<(OsString, Kind)>> {
        let out = self.inner.list(root, abs);
        self.recorder.push(Access::ReadDir {
            root: root.to_path_buf(),
            abs: abs.to_path_buf(),
            seen: out.as_ref().map(|e| sorted(e.clone())).map_err(io_error),
        });
        out
    }

    fn note(&self, access: &dyn Fn() -> Access) {
        let access = access();
        self.inner.note(&|| access.clone());
        self.recorder.push(access);
    }

    fn scratch(&self) -> &dyn Scratch {
        self.inner.scratch()
    }
}

#[cfg(test)]
pub(crate) mod tests;
