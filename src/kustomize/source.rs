//! Where the builder's files come from: the working tree on disk, or a Git tree held in memory
//! (`cellgen diff` renders a commit without checking it out). `Fs` reads only through this, so a
//! build at a commit runs exactly the code a build of the working tree runs.
//!
//! A Git tree is read once, whole, with `git ls-tree -r -z` and `git cat-file --batch`: the
//! repository is not touched and nothing is written. Paths are relative to the cellgen
//! repository root (which may be a sub-directory of the Git work tree: `ls-tree` run there lists
//! that sub-tree only, relative to it).

use camino::{Utf8Component as Component, Utf8Path, Utf8PathBuf};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Read, Write};
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
    files: BTreeMap<Utf8PathBuf, Vec<u8>>,
    links: BTreeSet<Utf8PathBuf>,
    /// Every directory holding an entry (the root excluded).
    dirs: BTreeSet<Utf8PathBuf>,
    others: BTreeSet<Utf8PathBuf>,
    /// Each directory's entries (the root's under ""), sorted by name.
    children: BTreeMap<Utf8PathBuf, Vec<(OsString, Kind)>>,
}

/// Why a Git tree could not be read.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("`{command}` failed: {message}")]
    Command { command: String, message: String },
}

fn git(root: &Utf8Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(root);
    // Never a pager, never a prompt, never the user's replace refs.
    cmd.env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .env("GIT_OPTIONAL_LOCKS", "0");
    cmd
}

/// Runs `git args` in `root` and returns its standard output.
pub fn git_output(root: &Utf8Path, args: &[&str]) -> Result<Vec<u8>, GitError> {
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
    pub fn load(root: &Utf8Path, rev: &str) -> Result<GitTree, GitError> {
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
        let mut blobs: Vec<(String, Utf8PathBuf)> = Vec::new();
        for record in listing.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            // "<mode> <type> <oid>\t<path>"
            let Some(tab) = record.iter().position(|b| *b == b'\t') else {
                continue;
            };
            let meta = String::from_utf8_lossy(&record[..tab]);
            // A commit's listing is where its paths are first met: UTF-8, or an error naming
            // the path (lossily: the one way to show it).
            let path = std::str::from_utf8(&record[tab + 1..]).map_err(|_| GitError::Command {
                command: format!("git ls-tree -r {commit}"),
                message: format!(
                    "the commit has a path that is not valid UTF-8, `{}` (shown with U+FFFD for the bytes that are not): cellgen works with UTF-8 paths only",
                    String::from_utf8_lossy(&record[tab + 1..])
                ),
            })?;
            let mut parts = meta.split(' ');
            let (mode, oid) = (parts.next().unwrap_or(""), parts.nth(1).unwrap_or(""));
            let path = Utf8PathBuf::from(path);
            let mut parent = path.parent();
            while let Some(p) = parent.filter(|p| !p.as_str().is_empty()) {
                tree.dirs.insert(p.to_path_buf());
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
        let mut children: BTreeMap<Utf8PathBuf, BTreeMap<OsString, Kind>> = BTreeMap::new();
        let entries = (tree.files.keys().map(|p| (p, Kind::File)))
            .chain(tree.dirs.iter().map(|p| (p, Kind::Dir)))
            .chain(tree.links.iter().map(|p| (p, Kind::Link)))
            .chain(tree.others.iter().map(|p| (p, Kind::Other)));
        for (path, kind) in entries {
            if let (Some(parent), Some(name)) = (path.parent(), path.file_name()) {
                children
                    .entry(parent.to_path_buf())
                    .or_default()
                    .insert(OsString::from(name), kind);
            }
        }
        tree.children = children
            .into_iter()
            .map(|(dir, names)| (dir, names.into_iter().collect()))
            .collect();
        Ok(tree)
    }

    fn kind(&self, rel: &Utf8Path) -> Kind {
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

    fn children(&self, rel: &Utf8Path) -> Vec<(OsString, Kind)> {
        self.children.get(rel).cloned().unwrap_or_default()
    }
}

/// The contents of `blobs` (object id, path), read in one `git cat-file --batch`.
fn cat_blobs(
    root: &Utf8Path,
    blobs: Vec<(String, Utf8PathBuf)>,
) -> Result<BTreeMap<Utf8PathBuf, Vec<u8>>, GitError> {
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
fn relative(root: &Utf8Path, abs: &Utf8Path) -> Utf8PathBuf {
    let rel = abs.strip_prefix(root).unwrap_or(abs);
    rel.components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect()
}

impl Source {
    /// What `abs` (under `root`) is, without following a symbolic link.
    pub fn kind(&self, root: &Utf8Path, abs: &Utf8Path) -> io::Result<Kind> {
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

    pub fn read(&self, root: &Utf8Path, abs: &Utf8Path) -> io::Result<Vec<u8>> {
        match self {
            Source::Disk => std::fs::read(abs),
            Source::Tree(tree) => tree
                .files
                .get(&relative(root, abs))
                .cloned()
                .ok_or_else(not_found),
        }
    }

    /// The entries of directory `abs`, unsorted for the disk.
    pub fn read_dir(&self, root: &Utf8Path, abs: &Utf8Path) -> io::Result<Vec<(OsString, Kind)>> {
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
    pub fn read_text(&self, root: &Utf8Path, rel: &Utf8Path) -> Option<String> {
        let abs = root.join(rel);
        if self.kind(root, &abs).ok()? != Kind::File {
            return None;
        }
        String::from_utf8(self.read(root, &abs).ok()?).ok()
    }

    /// The sub-directories of `rel` (names not starting with a dot), sorted.
    pub fn list_dirs(&self, root: &Utf8Path, rel: &Utf8Path) -> Vec<String> {
        let mut names: Vec<String> = self
            .read_dir(root, &root.join(rel))
            .unwrap_or_default()
            .into_iter()
            .filter(|(_, kind)| *kind == Kind::Dir)
            // Always UTF-8 in a commit's tree (checked when it is loaded); a working tree's
            // directories are listed by `repo::list_dirs`, which refuses other names.
            .filter_map(|(name, _)| name.into_string().ok())
            .filter(|n| !n.starts_with('.'))
            .collect();
        names.sort();
        names
    }
}
