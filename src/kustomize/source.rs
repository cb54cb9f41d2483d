//! Where the builder's files come from: the working tree on disk, or a Git tree held in memory
//! (`cellgen diff` renders a commit without checking it out). `Fs` reads only through this, so a
//! build at a commit runs exactly the code a build of the working tree runs.
//!
//! A Git tree is read once, whole, with `git ls-tree -r -z` and `git cat-file --batch`: the
//! repository is not touched and nothing is written. Paths are relative to the cellgen
//! repository root (which may be a sub-directory of the Git work tree: `ls-tree` run there lists
//! that sub-tree only, relative to it).

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

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

/// The files of one commit, in memory.
#[derive(Debug, Default)]
pub struct GitTree {
    /// The commit read, as `git rev-parse` printed it.
    pub commit: String,
    files: BTreeMap<PathBuf, Vec<u8>>,
    links: BTreeSet<PathBuf>,
    /// Every directory holding an entry (the root excluded).
    dirs: BTreeSet<PathBuf>,
    others: BTreeSet<PathBuf>,
    /// Each directory's entries (the root's under ""), sorted by name.
    children: BTreeMap<PathBuf, Vec<(OsString, Kind)>>,
}

/// Why a Git tree could not be read.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("`{command}` failed: {message}")]
    Command { command: String, message: String },
}

fn git(root: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(root);
    // Never a pager, never a prompt, never the user's replace refs.
    cmd.env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .env("GIT_OPTIONAL_LOCKS", "0");
    cmd
}

/// Runs `git args` in `root` and returns its standard output.
pub fn git_output(root: &Path, args: &[&str]) -> Result<Vec<u8>, GitError> {
    let shown = format!("git {}", args.join(" "));
    let out = git(root)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| GitError::Command {
            command: shown.clone(),
            message: e.to_string(),
        })?;
    if !out.status.success() {
        return Err(GitError::Command {
            command: shown,
            message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(out.stdout)
}

impl GitTree {
    /// The tree of commit `rev` below `root` (a directory of a Git work tree).
    pub fn load(root: &Path, rev: &str) -> Result<GitTree, GitError> {
        let spec = format!("{rev}^{{commit}}");
        let commit = git_output(
            root,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                &spec,
            ],
        )
        .map_err(|_| GitError::Command {
            command: format!("git rev-parse --verify {spec}"),
            message: format!("`{rev}` is not a commit of this repository"),
        })?;
        let commit = String::from_utf8_lossy(&commit).trim().to_string();
        let listing = git_output(root, &["ls-tree", "-r", "-z", &commit])?;
        let mut tree = GitTree {
            commit: commit.clone(),
            ..GitTree::default()
        };
        let mut blobs: Vec<(String, PathBuf)> = Vec::new();
        for record in listing.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            // "<mode> <type> <oid>\t<path>"
            let text = String::from_utf8_lossy(record);
            let Some((meta, path)) = text.split_once('\t') else {
                continue;
            };
            let mut parts = meta.split(' ');
            let (mode, oid) = (parts.next().unwrap_or(""), parts.nth(1).unwrap_or(""));
            let path = PathBuf::from(path);
            let mut parent = path.parent();
            while let Some(p) = parent.filter(|p| !p.as_os_str().is_empty()) {
                // A directory already there has its parents there too.
                if tree.dirs.contains(p) || !tree.dirs.insert(p.to_path_buf()) {
                    break;
                }
                parent = p.parent();
            }
            match mode {
                "120000" => {
                    tree.links.insert(path);
                }
                "100644" | "100755" | "100664" => blobs.push((oid.to_string(), path)),
                _ => {
                    tree.others.insert(path);
                }
            }
        }
        tree.files = cat_blobs(root, blobs)?;
        let mut children: BTreeMap<PathBuf, BTreeMap<OsString, Kind>> = BTreeMap::new();
        let entries = (tree.files.keys().map(|p| (p, Kind::File)))
            .chain(tree.dirs.iter().map(|p| (p, Kind::Dir)))
            .chain(tree.links.iter().map(|p| (p, Kind::Link)))
            .chain(tree.others.iter().map(|p| (p, Kind::Other)));
        for (path, kind) in entries {
            if let (Some(parent), Some(name)) = (path.parent(), path.file_name()) {
                children
                    .entry(parent.to_path_buf())
                    .or_default()
                    .insert(name.to_os_string(), kind);
            }
        }
        tree.children = children
            .into_iter()
            .map(|(dir, names)| (dir, names.into_iter().collect()))
            .collect();
        Ok(tree)
    }

    fn kind(&self, rel: &Path) -> Kind {
        if rel.as_os_str().is_empty() {
            Kind::Dir
        } else if self.files.contains_key(rel) {
            Kind::File
        } else if self.dirs.contains(rel) {
            Kind::Dir
        } else if self.links.contains(rel) {
            Kind::Link
        } else if self.others.contains(rel) {
            Kind::Other
        } else {
            Kind::Missing
        }
    }

    fn children(&self, rel: &Path) -> Vec<(OsString, Kind)> {
        self.children.get(rel).cloned().unwrap_or_default()
    }
}

/// The contents of `blobs` (object id, path), read in one `git cat-file --batch`.
fn cat_blobs(
    root: &Path,
    blobs: Vec<(String, PathBuf)>,
) -> Result<BTreeMap<PathBuf, Vec<u8>>, GitError> {
    let failed = |message: String| GitError::Command {
        command: "git cat-file --batch".into(),
        message,
    };
    let mut child = git(root)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| failed(e.to_string()))?;
    let mut stdin = child.stdin.take().expect("piped");
    let ids: String = blobs.iter().map(|(oid, _)| format!("{oid}\n")).collect();
    // Written from a thread: git answers while it reads, and both pipes have limited buffers.
    let writer = std::thread::spawn(move || stdin.write_all(ids.as_bytes()));
    let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
    let mut files = BTreeMap::new();
    for (oid, path) in blobs {
        let mut header = String::new();
        stdout
            .read_line(&mut header)
            .map_err(|e| failed(e.to_string()))?;
        // "<oid> blob <size>"
        let size: usize = header
            .split_whitespace()
            .nth(2)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| failed(format!("unexpected answer for {oid}: {}", header.trim())))?;
        let mut body = vec![0; size + 1];
        stdout
            .read_exact(&mut body)
            .map_err(|e| failed(e.to_string()))?;
        body.pop();
        files.insert(path, body);
    }
    let _ = writer.join();
    let status = child.wait().map_err(|e| failed(e.to_string()))?;
    if !status.success() {
        return Err(failed(format!("exited with {status}")));
    }
    Ok(files)
}

/// Where `Fs` reads from.
#[derive(Debug, Clone)]
pub enum Source {
    /// The working tree.
    Disk,
    /// A commit's tree, in memory.
    Tree(Arc<GitTree>),
}

fn not_found() -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, "not in the Git tree")
}

/// `abs` relative to `root`, for a Git tree (paths are lexically normal there).
fn relative<'a>(root: &Path, abs: &'a Path) -> Cow<'a, Path> {
    let rel = abs.strip_prefix(root).unwrap_or(abs);
    if rel.components().any(|c| matches!(c, Component::CurDir)) {
        Cow::Owned(
            rel.components()
                .filter(|c| !matches!(c, Component::CurDir))
                .collect(),
        )
    } else {
        Cow::Borrowed(rel)
    }
}

/// One read a build made through a [`Source`], and what it saw. A build reads nothing else
/// (the kustomize code reads only through `Fs`, and `Fs` only through `Source`), so a build
/// whose reads all answer the same on another source builds the same there: `cellgen diff`
/// builds an unchanged layer once for the base and the working tree (`render::BuildCache`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    Kind {
        root: PathBuf,
        abs: PathBuf,
        seen: Result<Kind, IoError>,
    },
    Read {
        root: PathBuf,
        abs: PathBuf,
        seen: Result<Vec<u8>, IoError>,
    },
    /// Entries sorted by name (the disk lists them in no fixed order).
    ReadDir {
        root: PathBuf,
        abs: PathBuf,
        seen: Result<Vec<(OsString, Kind)>, IoError>,
    },
}

/// An I/O error as a build reports it: its kind and message.
pub type IoError = (io::ErrorKind, String);

fn io_error(e: impl std::borrow::Borrow<io::Error>) -> IoError {
    let e = e.borrow();
    (e.kind(), e.to_string())
}

thread_local! {
    /// The reads of the recording under way on this thread (builds run on one thread each).
    static LOG: RefCell<Option<Vec<Access>>> = const { RefCell::new(None) };
}

/// Runs `f` and returns what it read through any [`Source`] on this thread.
pub fn recording<T>(f: impl FnOnce() -> T) -> (T, Vec<Access>) {
    let outer = LOG.with(|l| l.borrow_mut().replace(Vec::new()));
    let out = f();
    let log = LOG
        .with(|l| std::mem::replace(&mut *l.borrow_mut(), outer))
        .unwrap_or_default();
    // An enclosing recording saw these reads too.
    LOG.with(|l| {
        if let Some(outer) = l.borrow_mut().as_mut() {
            outer.extend(log.iter().cloned());
        }
    });
    (out, log)
}

/// Adds `access` to the recording under way, if any: for answers a caller remembers instead of
/// asking again (`Fs` knows which directories hold no link).
pub fn note(access: impl FnOnce() -> Access) {
    LOG.with(|l| {
        if let Some(log) = l.borrow_mut().as_mut() {
            log.push(access());
        }
    });
}

fn sorted(mut entries: Vec<(OsString, Kind)>) -> Vec<(OsString, Kind)> {
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries
}

impl Source {
    /// Whether every read of `log` answers the same on this source.
    pub fn replays(&self, log: &[Access]) -> bool {
        log.iter().all(|access| match access {
            Access::Kind { root, abs, seen } => {
                self.kind_unrecorded(root, abs).map_err(io_error) == *seen
            }
            Access::Read { root, abs, seen } => match self {
                // Compared in place: the tree is in memory.
                Source::Tree(tree) if seen.is_ok() => {
                    tree.files
                        .get(relative(root, abs).as_ref())
                        .map(Vec::as_slice)
                        == seen.as_deref().ok()
                }
                _ => {
                    let now = self.read_unrecorded(root, abs).map_err(io_error);
                    now.as_deref() == seen.as_deref()
                }
            },
            Access::ReadDir { root, abs, seen } => {
                self.read_dir_unrecorded(root, abs)
                    .map(sorted)
                    .map_err(io_error)
                    == *seen
            }
        })
    }

    /// What `abs` (under `root`) is, without following a symbolic link.
    pub fn kind(&self, root: &Path, abs: &Path) -> io::Result<Kind> {
        let out = self.kind_unrecorded(root, abs);
        note(|| Access::Kind {
            root: root.to_path_buf(),
            abs: abs.to_path_buf(),
            seen: out.as_ref().map(|k| *k).map_err(io_error),
        });
        out
    }

    pub fn read(&self, root: &Path, abs: &Path) -> io::Result<Vec<u8>> {
        let out = self.read_unrecorded(root, abs);
        note(|| Access::Read {
            root: root.to_path_buf(),
            abs: abs.to_path_buf(),
            seen: out.as_ref().map(Clone::clone).map_err(io_error),
        });
        out
    }

    /// The entries of directory `abs`, unsorted for the disk.
    pub fn read_dir(&self, root: &Path, abs: &Path) -> io::Result<Vec<(OsString, Kind)>> {
        let out = self.read_dir_unrecorded(root, abs);
        note(|| Access::ReadDir {
            root: root.to_path_buf(),
            abs: abs.to_path_buf(),
            seen: out.as_ref().map(|e| sorted(e.clone())).map_err(io_error),
        });
        out
    }

    fn kind_unrecorded(&self, root: &Path, abs: &Path) -> io::Result<Kind> {
        match self {
            Source::Disk => match std::fs::symlink_metadata(abs) {
                Ok(m) if m.file_type().is_symlink() => Ok(Kind::Link),
                Ok(m) if m.is_dir() => Ok(Kind::Dir),
                Ok(m) if m.is_file() => Ok(Kind::File),
                Ok(_) => Ok(Kind::Other),
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                    ) =>
                {
                    Ok(Kind::Missing)
                }
                Err(e) => Err(e),
            },
            Source::Tree(tree) => Ok(tree.kind(&relative(root, abs))),
        }
    }

    fn read_unrecorded(&self, root: &Path, abs: &Path) -> io::Result<Vec<u8>> {
        match self {
            Source::Disk => std::fs::read(abs),
            Source::Tree(tree) => tree
                .files
                .get(relative(root, abs).as_ref())
                .cloned()
                .ok_or_else(not_found),
        }
    }

    fn read_dir_unrecorded(&self, root: &Path, abs: &Path) -> io::Result<Vec<(OsString, Kind)>> {
        match self {
            Source::Disk => {
                let mut out = Vec::new();
                for entry in std::fs::read_dir(abs)? {
                    let entry = entry?;
                    let t = entry.file_type()?;
                    let kind = if t.is_symlink() {
                        Kind::Link
                    } else if t.is_dir() {
                        Kind::Dir
                    } else if t.is_file() {
                        Kind::File
                    } else {
                        Kind::Other
                    };
                    out.push((entry.file_name(), kind));
                }
                Ok(out)
            }
            Source::Tree(tree) => {
                let rel = relative(root, abs);
                match tree.kind(&rel) {
                    Kind::Dir => Ok(tree.children(&rel)),
                    _ => Err(not_found()),
                }
            }
        }
    }

    /// A repository file (`rel` to `root`) as text, when it is a regular UTF-8 file.
    pub fn read_text(&self, root: &Path, rel: &Path) -> Option<String> {
        let abs = root.join(rel);
        if self.kind(root, &abs).ok()? != Kind::File {
            return None;
        }
        String::from_utf8(self.read(root, &abs).ok()?).ok()
    }

    /// The sub-directories of `rel` (names not starting with a dot), sorted.
    pub fn list_dirs(&self, root: &Path, rel: &Path) -> Vec<String> {
        let mut names: Vec<String> = self
            .read_dir(root, &root.join(rel))
            .unwrap_or_default()
            .into_iter()
            .filter(|(_, kind)| *kind == Kind::Dir)
            .filter_map(|(name, _)| name.into_string().ok())
            .filter(|n| !n.starts_with('.'))
            .collect();
        names.sort();
        names
    }
}
