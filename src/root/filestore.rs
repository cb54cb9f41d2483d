//! Each repository file read once per command. `check` reads a cell's files from several
//! places (the builder, the contract, the secret trace, the VPC check, the conflict-marker
//! scan), on every core; they all ask this store, which opens a file the first time it is asked
//! for and keeps what it found: the contents, what the path is, or the error. A reader done
//! with a file gives its contents back ([`FileStore::release`]); what the path is stays known.
//!
//! A file is opened without following a symbolic link at its end (`O_NOFOLLOW`, and
//! `O_NONBLOCK` so that a FIFO is not waited on) and then asked what it is on the open
//! descriptor: one open, one `fstat` and the reads, instead of `lstat`, `open`, `fstat` for a
//! size hint. Readers keep their own policy on links: [`FileStore::kind`] and
//! [`FileStore::contents`] answer without following one (the builder, which refuses links as
//! Flux's artifact drops them; the secret trace, which follows a link only inside the root),
//! [`FileStore::read`] follows one, as `std::fs::read` does.

use camino::{Utf8Component, Utf8Path, Utf8PathBuf};
use std::hash::BuildHasher;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

pub use crate::paths::Kind;
pub use listing::Listing;
use listing::list;

mod listing;
mod open;

use open::{is_a_directory, is_missing, lstat, not_found, open_nofollow, read_all};

/// A file's contents, shared by every reader.
pub type Bytes = Arc<Vec<u8>>;

/// Keyed by the path's text (hashing and comparing a `Utf8Path` walks its components), by a
/// hash found once per look-up for both the shard and the table.
type Slots = hashbrown::HashTable<(Box<str>, Arc<Slot>)>;

const SHARDS: usize = 32;

/// An io error kept to be handed out again (`io::Error` is not `Clone`): the OS error number
/// when there is one, so the message is the same.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Failure {
    Os(i32),
    Other(io::ErrorKind, String),
}

impl Failure {
    fn of(e: &io::Error) -> Failure {
        match e.raw_os_error() {
            Some(code) => Failure::Os(code),
            None => Failure::Other(e.kind(), e.to_string()),
        }
    }

    fn error(&self) -> io::Error {
        match self {
            Failure::Os(code) => io::Error::from_raw_os_error(*code),
            Failure::Other(kind, message) => io::Error::new(*kind, message.clone()),
        }
    }
}

/// What opening a path without following a link at its end found.
#[derive(Debug)]
struct Opened {
    kind: Result<Kind, Failure>,
    /// A regular file's contents (or why it could not be read); the open's error for a path
    /// that could not be opened (missing, ...); None for a directory, a link or another kind.
    contents: Option<Result<Kept, Failure>>,
}

/// A file's contents as kept by the store, until [`FileStore::release`] drops them.
#[derive(Debug)]
struct Kept(Mutex<Option<Bytes>>);

impl Kept {
    fn new(bytes: Bytes) -> Kept {
        Kept(Mutex::new(Some(bytes)))
    }

    fn into_bytes(self) -> Bytes {
        self.0
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .unwrap_or_default()
    }
}

#[derive(Debug, Default)]
struct Slot {
    opened: OnceLock<Opened>,
    /// The contents reached through a link at the end of the path.
    followed: OnceLock<Result<Bytes, Failure>>,
    /// What `lstat` says, for a path only asked about (a directory on the way).
    lstat: OnceLock<Result<Kind, Failure>>,
    listed: OnceLock<Arc<Listing>>,
    /// Whether `opened` was answered by the directory's listing (not there), without an open.
    by_listing: std::sync::atomic::AtomicBool,
}

impl Slot {
    /// Whether the path was opened (or read through a link).
    fn was_opened(&self) -> bool {
        (self.opened.get().is_some() && !self.by_listing.load(Ordering::Relaxed))
            || self.followed.get().is_some()
    }
}

/// The files of one repository, read once each (see the module's comment). Shared by the
/// threads of a command.
#[derive(Debug)]
pub struct FileStore {
    root: Utf8PathBuf,
    canonical: OnceLock<Option<Utf8PathBuf>>,
    /// Paths by the hash of their name, each shard locked on its own: the cells' threads and
    /// the repository-wide checks ask at once.
    shards: Box<[Mutex<Slots>]>,
    hasher: foldhash::fast::RandomState,
    /// Files opened, to show each is opened once.
    opens: AtomicUsize,
    /// Directories listed.
    listings: AtomicUsize,
    /// What the command's readers remember of these files ([`FileStore::memos`]).
    memos: crate::root::memos::Memos,
    /// A planned change seen as if written (`FileStore::planned`): each changed path's text
    /// after it (None: deleted), and the directories the new files make.
    planned: Option<Planned>,
}

/// What [`FileStore::planned`] lays over the working tree.
#[derive(Debug, Default)]
struct Planned {
    files: std::collections::HashMap<String, Option<Bytes>>,
    dirs: std::collections::HashSet<String>,
}

impl FileStore {
    pub fn new(root: &Utf8Path) -> FileStore {
        FileStore {
            root: root.to_path_buf(),
            canonical: OnceLock::new(),
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            hasher: foldhash::fast::RandomState::default(),
            opens: AtomicUsize::new(0),
            listings: AtomicUsize::new(0),
            memos: Default::default(),
            planned: None,
        }
    }

    /// The working tree at `root` as it will be once `changes` (repository-relative paths, each
    /// with its text after the change, None for a deletion) are written: what a command checks
    /// before it writes. Everything else is read from disk as [`FileStore::new`] reads it.
    pub fn planned<'a>(
        root: &Utf8Path,
        changes: impl IntoIterator<Item = (&'a Utf8Path, Option<&'a str>)>,
    ) -> FileStore {
        let mut planned = Planned::default();
        for (path, text) in changes {
            if text.is_some() {
                for dir in path.ancestors().skip(1) {
                    planned.dirs.insert(dir.as_str().to_string());
                }
            }
            planned.files.insert(
                path.as_str().to_string(),
                text.map(|t| Arc::new(t.as_bytes().to_vec())),
            );
        }
        FileStore {
            planned: Some(planned),
            ..FileStore::new(root)
        }
    }

    /// What the planned change makes of `rel`, if it changes it.
    fn planned_kind(&self, rel: &Utf8Path) -> Option<Opened> {
        let planned = self.planned.as_ref()?;
        match planned.files.get(rel.as_str()) {
            Some(Some(bytes)) => Some(Opened {
                kind: Ok(Kind::File),
                contents: Some(Ok(Kept::new(bytes.clone()))),
            }),
            Some(None) => Some(Opened {
                kind: Ok(Kind::Missing),
                contents: Some(Err(not_found())),
            }),
            None if planned.dirs.contains(rel.as_str()) => Some(Opened {
                kind: Ok(Kind::Dir),
                contents: None,
            }),
            None => None,
        }
    }

    /// What the readers above this layer remember of these files (parses by text): the
    /// command's, living exactly as long as this store.
    pub fn memos(&self) -> &crate::root::memos::Memos {
        &self.memos
    }

    /// Whether a planned change is laid over the working tree (see [`FileStore::planned`]).
    pub fn is_planned(&self) -> bool {
        self.planned.is_some()
    }

    /// The root as given.
    pub fn root(&self) -> &Utf8Path {
        &self.root
    }

    /// The root with every link resolved, found once (None when it cannot be, or is not UTF-8).
    pub fn canonical_root(&self) -> Option<&Utf8Path> {
        self.canonical
            .get_or_init(|| self.root.canonicalize_utf8().ok())
            .as_deref()
    }

    /// How many times a file was opened.
    pub fn opens(&self) -> usize {
        self.opens.load(Ordering::Relaxed)
    }

    /// The paths opened, sorted.
    pub fn paths(&self) -> Vec<Utf8PathBuf> {
        let mut out: Vec<Utf8PathBuf> = self
            .shards
            .iter()
            .flat_map(|shard| {
                lock(shard)
                    .iter()
                    .filter(|(_, s)| s.was_opened())
                    .map(|(p, _)| Utf8PathBuf::from(p.to_string()))
                    .collect::<Vec<_>>()
            })
            .collect();
        out.sort();
        out
    }

    /// How many times a directory was listed.
    pub fn listings(&self) -> usize {
        self.listings.load(Ordering::Relaxed)
    }

    /// How many distinct paths were opened.
    pub fn paths_opened(&self) -> usize {
        self.shards
            .iter()
            .map(|shard| lock(shard).iter().filter(|(_, s)| s.was_opened()).count())
            .sum()
    }

    /// The repository-relative path of `abs` when it is under the root as given or its
    /// canonical form; None for a path elsewhere.
    pub fn relative<'a>(&self, abs: &'a Utf8Path) -> Option<&'a Utf8Path> {
        // The text first (`root/rest`, what joining the root gives): `strip_prefix` walks
        // components, for the other spellings of the same path.
        let under = |root: &Utf8Path| {
            let rest = abs.as_str().strip_prefix(root.as_str())?;
            match rest.strip_prefix('/') {
                Some(rest) if !root.as_str().ends_with('/') => Some(Utf8Path::new(rest)),
                _ if rest.is_empty() => Some(Utf8Path::new("")),
                _ => None,
            }
        };
        under(&self.root)
            .or_else(|| under(self.canonical_root()?))
            .or_else(|| abs.strip_prefix(&self.root).ok())
            .or_else(|| abs.strip_prefix(self.canonical_root()?).ok())
    }

    /// The hash of `key` and its shard (from bits the table does not use to place it).
    fn hashed(&self, key: &str) -> (u64, &Mutex<Slots>) {
        let hash = self.hasher.hash_one(key);
        (hash, &self.shards[(hash >> 32) as usize % SHARDS])
    }

    fn slot(&self, rel: &Utf8Path) -> Arc<Slot> {
        let key = rel.as_str();
        let (hash, shard) = self.hashed(key);
        let mut slots = lock(shard);
        if let Some((_, slot)) = slots.find(hash, |(k, _)| **k == *key) {
            return slot.clone();
        }
        let slot = Arc::new(Slot::default());
        slots.insert_unique(hash, (key.into(), slot.clone()), |(k, _)| {
            self.hasher.hash_one(&**k)
        });
        slot
    }

    /// `f` of the slot of `rel`, opened when first asked for.
    fn with_opened<T>(&self, rel: &Utf8Path, f: impl FnOnce(&Slot, &Opened) -> T) -> T {
        let slot = self.slot(rel);
        let opened = slot
            .opened
            .get_or_init(|| match self.answered_by_listing(rel) {
                Some(opened) => {
                    slot.by_listing.store(true, Ordering::Relaxed);
                    opened
                }
                None => self.open(rel),
            });
        f(&slot, opened)
    }

    /// What `rel` is when its directory was listed already and that says enough: missing when
    /// the listing lacks it (the `.sourceignore` walk lists every directory before the builds
    /// probe the names a kustomization file may have); a directory when it is one, as a
    /// directory is only asked what it is (listed, never read), without an open, an `fstat`
    /// and a close. None when the directory was not listed (or not fully), or `rel` must be
    /// opened.
    fn answered_by_listing(&self, rel: &Utf8Path) -> Option<Opened> {
        let (listing, name) = self.parent_listing(rel)?;
        match listing.position(name) {
            None => Some(Opened {
                kind: Ok(Kind::Missing),
                contents: Some(Err(not_found())),
            }),
            Some(at) => matches!(listing.entries[at].1, Ok(Kind::Dir)).then_some(Opened {
                kind: Ok(Kind::Dir),
                contents: None,
            }),
        }
    }

    /// The kind of `rel` as its directory's listing (when listed already) has it: missing when
    /// the listing does not hold its name (a submodule's `.git` is asked of every directory).
    fn kind_in_listing(&self, rel: &Utf8Path) -> Option<Kind> {
        let (listing, name) = self.parent_listing(rel)?;
        match listing.position(name) {
            Some(at) => listing.entries[at].1.clone().ok(),
            None => Some(Kind::Missing),
        }
    }

    /// The whole listing of `rel`'s directory, when it was listed already, and `rel`'s name.
    fn parent_listing<'r>(&self, rel: &'r Utf8Path) -> Option<(Arc<Listing>, &'r str)> {
        // Only the text `join` gives, `parent/name` (or a name at the root).
        let (parent, name) = rel.as_str().rsplit_once('/').unwrap_or(("", rel.as_str()));
        if name.is_empty() || name == "." || name == ".." || parent.ends_with('/') {
            return None;
        }
        let listing = self
            .existing_slot(Utf8Path::new(parent))?
            .listed
            .get()?
            .clone();
        (listing.opened && listing.error.is_none()).then_some((listing, name))
    }

    fn existing_slot(&self, rel: &Utf8Path) -> Option<Arc<Slot>> {
        let key = rel.as_str();
        let (hash, shard) = self.hashed(key);
        lock(shard)
            .find(hash, |(k, _)| **k == *key)
            .map(|(_, slot)| slot.clone())
    }

    fn open(&self, rel: &Utf8Path) -> Opened {
        if let Some(planned) = self.planned_kind(rel) {
            return planned;
        }
        let path = crate::paths::join(&self.root, rel);
        self.opens.fetch_add(1, Ordering::Relaxed);
        match open_nofollow(&path) {
            Ok(mut file) => match file.metadata() {
                Ok(meta) if meta.is_file() => Opened {
                    kind: Ok(Kind::File),
                    contents: Some(
                        read_all(&mut file, meta.len())
                            .map(Kept::new)
                            .map_err(|e| Failure::of(&e)),
                    ),
                },
                Ok(meta) if meta.is_dir() => Opened {
                    kind: Ok(Kind::Dir),
                    contents: None,
                },
                Ok(_) => Opened {
                    kind: Ok(Kind::Other),
                    contents: None,
                },
                Err(e) => Opened {
                    kind: Err(Failure::of(&e)),
                    contents: Some(Err(Failure::of(&e))),
                },
            },
            Err(e) if is_missing(&e) => Opened {
                kind: Ok(Kind::Missing),
                contents: Some(Err(Failure::of(&e))),
            },
            // A link at the end (ELOOP), a socket (ENXIO), a file that may not be read: what
            // `lstat` says it is.
            Err(e) => {
                let failure = Failure::of(&e);
                match std::fs::symlink_metadata(&path) {
                    Ok(m) if m.file_type().is_symlink() => Opened {
                        kind: Ok(Kind::Link),
                        contents: None,
                    },
                    Ok(m) => Opened {
                        kind: Ok(if m.is_dir() {
                            Kind::Dir
                        } else if m.is_file() {
                            Kind::File
                        } else {
                            Kind::Other
                        }),
                        contents: Some(Err(failure)),
                    },
                    Err(e) if is_missing(&e) => Opened {
                        kind: Ok(Kind::Missing),
                        contents: Some(Err(failure)),
                    },
                    Err(e) => Opened {
                        kind: Err(Failure::of(&e)),
                        contents: Some(Err(failure)),
                    },
                }
            }
        }
    }

    /// What `rel` is, a link at its end not followed (as `std::fs::symlink_metadata` says; a
    /// path that is not there, or under something that is not a directory, is `Missing`).
    pub fn kind(&self, rel: &Utf8Path) -> io::Result<Kind> {
        self.with_opened(rel, |_, opened| opened.kind.clone().map_err(|f| f.error()))
    }

    /// The contents of `rel` when it is a regular file, a link at its end not followed: None
    /// for a link, a directory or another kind of file; the error when it could not be read.
    pub fn contents(&self, rel: &Utf8Path) -> Option<io::Result<Bytes>> {
        self.with_opened(rel, |_, opened| match opened.kind {
            Ok(Kind::File) => opened
                .contents
                .as_ref()
                .map(|c| self.kept(rel, c).map_err(|f| f.error())),
            _ => None,
        })
    }

    /// The contents of `rel`, a link followed: what `std::fs::read` gives.
    pub fn read(&self, rel: &Utf8Path) -> io::Result<Bytes> {
        self.with_opened(rel, |slot, opened| match (&opened.kind, &opened.contents) {
            (Ok(Kind::Link), _) => slot
                .followed
                .get_or_init(|| {
                    self.opens.fetch_add(1, Ordering::Relaxed);
                    std::fs::read(self.root.join(rel))
                        .map(Arc::new)
                        .map_err(|e| Failure::of(&e))
                })
                .clone()
                .map_err(|f| f.error()),
            // A file, or what could not be opened (the open's error, as `std::fs::read`'s).
            (_, Some(contents)) => self.kept(rel, contents).map_err(|f| f.error()),
            (Ok(Kind::Dir), None) => Err(is_a_directory()),
            // A FIFO or a device: read as before, never kept.
            _ => {
                self.opens.fetch_add(1, Ordering::Relaxed);
                std::fs::read(self.root.join(rel)).map(Arc::new)
            }
        })
    }

    /// The contents kept for `rel`, or read again when [`FileStore::release`] dropped them.
    fn kept(&self, rel: &Utf8Path, contents: &Result<Kept, Failure>) -> Result<Bytes, Failure> {
        let kept = contents.as_ref().map_err(Clone::clone)?;
        if let Some(bytes) = lock(&kept.0).as_ref() {
            return Ok(bytes.clone());
        }
        match self.open(rel).contents {
            Some(Ok(again)) => Ok(again.into_bytes()),
            Some(Err(failure)) => Err(failure),
            // Replaced since by a directory, a link or another kind of file.
            None => Err(Failure::Other(
                io::ErrorKind::InvalidInput,
                "no longer a regular file".into(),
            )),
        }
    }

    /// Drops the contents kept for `rel`, when it was read: `check` gives back a cell's files
    /// once the cell is checked, so that it holds one cell's files per core, not the whole
    /// repository's. What it was stays known; a later read opens the file again.
    pub fn release(&self, rel: &Utf8Path) {
        let Some(slot) = self.existing_slot(rel) else {
            return;
        };
        if let Some(Opened {
            contents: Some(Ok(kept)),
            ..
        }) = slot.opened.get()
        {
            lock(&kept.0).take();
        }
    }

    /// Whether the store keeps the contents of `rel`: read as a file, and not released.
    pub fn holds(&self, rel: &Utf8Path) -> bool {
        self.existing_slot(rel).is_some_and(|slot| {
            matches!(
                slot.opened.get(),
                Some(Opened { contents: Some(Ok(kept)), .. }) if lock(&kept.0).is_some()
            )
        })
    }

    /// `rel` as text, a link followed: what `std::fs::read_to_string` gives (the error for
    /// text that is not UTF-8 included).
    pub fn read_to_string(&self, rel: &Utf8Path) -> io::Result<String> {
        let bytes = self.read(rel)?;
        String::from_utf8(bytes.as_ref().clone()).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                "stream did not contain valid UTF-8",
            )
        })
    }

    /// What `rel` is, as [`FileStore::kind`] says, without opening it when it was not opened
    /// already: for directories on the way to a file.
    pub fn lstat(&self, rel: &Utf8Path) -> io::Result<Kind> {
        let slot = self.slot(rel);
        if let Some(opened) = slot.opened.get() {
            return opened.kind.clone().map_err(|f| f.error());
        }
        if let Some(planned) = self.planned_kind(rel) {
            return planned.kind.map_err(|f| f.error());
        }
        slot.lstat
            .get_or_init(|| match self.kind_in_listing(rel) {
                // The listing's kind is the entry's own (`d_type`, or `lstat` where the file
                // system gives none): what `lstat` would say.
                Some(kind) => Ok(kind),
                None => lstat(&crate::paths::join(&self.root, rel)).map_err(|e| Failure::of(&e)),
            })
            .clone()
            .map_err(|f| f.error())
    }

    /// The entries of directory `rel`, listed once.
    pub fn list(&self, rel: &Utf8Path) -> Arc<Listing> {
        let slot = self.slot(rel);
        slot.listed
            .get_or_init(|| {
                self.listings.fetch_add(1, Ordering::Relaxed);
                let mut listing = list(&self.root.join(rel));
                if let Some(planned) = &self.planned {
                    planned.relist(rel, &mut listing);
                }
                Arc::new(listing)
            })
            .clone()
    }

    /// Whether directory `rel` (lexically normal, no `..`) is inside the root, links on its way
    /// resolved: when no component is a link it is, without asking the file system to resolve
    /// the path; otherwise its canonical form must start with the canonical root. False when
    /// it is not there.
    pub fn dir_inside(&self, rel: &Utf8Path) -> bool {
        let Some(real_root) = self.canonical_root() else {
            return false;
        };
        let mut prefix = Utf8PathBuf::new();
        for c in rel.components() {
            let Utf8Component::Normal(name) = c else {
                return self.resolved_inside(rel, real_root);
            };
            prefix.push(name);
            match self.lstat(&prefix) {
                Ok(Kind::Dir) => {}
                Ok(Kind::Link) => return self.resolved_inside(rel, real_root),
                _ => return false,
            }
        }
        true
    }

    fn resolved_inside(&self, rel: &Utf8Path, real_root: &Utf8Path) -> bool {
        self.root
            .join(rel)
            .canonicalize()
            .is_ok_and(|real| real.starts_with(real_root))
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
#[path = "filestore/tests.rs"]
mod tests;
