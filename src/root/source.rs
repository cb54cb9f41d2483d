//! Where the builder's files come from: the working tree on disk, or a Git tree held in memory
//! (`cellgen diff` renders a commit without checking it out). [`Source`] implements the kustomize
//! port's `BuildFiles` (the port names what it reads, this layer answers it), and a build reads
//! only through that, so a build at a commit runs exactly the code a build of the working tree
//! runs.
//!
//! A Git tree is listed once with `git ls-tree -r -z`; a file's contents are read when first
//! asked for, from one `git cat-file --batch` kept open (most files of a commit are never read,
//! or are compared by object id, see `Source::replays`). The repository is not touched and
//! nothing is written to it (the external kustomize's scratch copy, `TempDirectory`, goes to
//! the system's temporary directory). Paths are relative to the cellgen
//! repository root (which may be a sub-directory of the Git work tree: `ls-tree` run there lists
//! that sub-tree only, relative to it).

use camino::{Utf8Component as Component, Utf8Path, Utf8PathBuf};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::{Arc, Mutex, OnceLock};

use crate::ports::kustomize::files::{self, BuildFiles, Scratch, io_error, sorted};
use crate::root::disk;
use crate::root::filestore::FileStore;

pub use crate::paths::Kind;
pub use crate::ports::kustomize::files::{Access, IoError, Recorder};

/// The files of one commit: listed in memory, read on demand.
#[derive(Debug, Default)]
pub struct GitTree {
    /// The commit read, as `git rev-parse` printed it.
    pub commit: String,
    files: BTreeMap<Utf8PathBuf, Blob>,
    /// Where `git cat-file` runs, and the process once started.
    root: Utf8PathBuf,
    reader: Mutex<Option<CatFile>>,
    links: BTreeSet<Utf8PathBuf>,
    /// Every directory holding an entry (the root excluded).
    dirs: BTreeSet<Utf8PathBuf>,
    others: BTreeSet<Utf8PathBuf>,
    /// Submodules (gitlinks): empty directories, as source-controller checks them out.
    submodules: BTreeSet<Utf8PathBuf>,
    /// Each directory's entries (the root's under ""), sorted by name.
    children: BTreeMap<Utf8PathBuf, Vec<(OsString, Kind)>>,
}

/// A regular file of the tree: its object id, and its contents once read.
#[derive(Debug, Default)]
struct Blob {
    oid: String,
    contents: OnceLock<Result<Vec<u8>, String>>,
}

/// A `git cat-file --batch` answering one object id at a time.
#[derive(Debug)]
struct CatFile {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl CatFile {
    fn start(root: &Utf8Path) -> io::Result<CatFile> {
        let mut child = git(root)
            .args(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        Ok(CatFile {
            child,
            stdin,
            stdout,
        })
    }

    fn read(&mut self, oid: &str) -> io::Result<Vec<u8>> {
        let stdin = self.stdin.as_mut().expect("open until dropped");
        stdin.write_all(format!("{oid}\n").as_bytes())?;
        stdin.flush()?;
        let mut header = String::new();
        self.stdout.read_line(&mut header)?;
        // "<oid> blob <size>", or "<oid> missing".
        let size: usize = header
            .split_whitespace()
            .nth(2)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| {
                io::Error::other(format!(
                    "`git cat-file --batch` answered `{}` for {oid}",
                    header.trim()
                ))
            })?;
        let mut body = vec![0; size + 1];
        self.stdout.read_exact(&mut body)?;
        body.pop();
        Ok(body)
    }
}

impl Drop for CatFile {
    fn drop(&mut self) {
        // Closing its input ends it.
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

pub use crate::root::git::GitError;
pub(crate) use crate::root::git::command as git;
pub use crate::root::git::output as git_output;

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
            root: root.to_path_buf(),
            ..GitTree::default()
        };
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
                // A submodule (gitlink): source-controller's GitRepository, without
                // `spec.recurseSubmodules`, checks it out as an empty directory (go-git's
                // `checkoutChangeSubmodule` makes the directory and nothing in it).
                "160000" => {
                    tree.dirs.insert(path.clone());
                    tree.submodules.insert(path);
                }
                "100644" | "100755" | "100664" => {
                    tree.files.insert(
                        path,
                        Blob {
                            oid: oid.to_string(),
                            contents: OnceLock::new(),
                        },
                    );
                }
                _ => {
                    tree.others.insert(path);
                }
            }
        }
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

    /// The contents of file `rel`, read from Git the first time.
    fn contents(&self, rel: &Utf8Path) -> io::Result<Vec<u8>> {
        let blob = self.files.get(rel).ok_or_else(not_found)?;
        let contents = blob.contents.get_or_init(|| {
            let mut reader = self.reader.lock().unwrap_or_else(|e| e.into_inner());
            if reader.is_none() {
                *reader = Some(CatFile::start(&self.root).map_err(|e| e.to_string())?);
            }
            let cat = reader.as_mut().expect("started");
            cat.read(&blob.oid).map_err(|e| {
                // A broken exchange leaves the process unusable: start another next time.
                *reader = None;
                format!("cannot read {rel} from Git: {e}")
            })
        });
        contents.clone().map_err(io::Error::other)
    }

    /// Whether file `rel` holds exactly `bytes`: by object id when the repository's hash is
    /// known, without reading the file from Git.
    fn holds(&self, rel: &Utf8Path, bytes: &[u8]) -> bool {
        let Some(blob) = self.files.get(rel) else {
            return false;
        };
        match object_id(bytes, blob.oid.len()) {
            Some(oid) => oid == blob.oid,
            None => self.contents(rel).is_ok_and(|c| c == bytes),
        }
    }

    /// Whether `rel` is inside a submodule (see [`in_submodule`]).
    fn in_submodule(&self, rel: &Utf8Path) -> bool {
        !self.submodules.is_empty() && rel.ancestors().skip(1).any(|a| self.submodules.contains(a))
    }

    fn children(&self, rel: &Utf8Path) -> Vec<(OsString, Kind)> {
        self.children.get(rel).cloned().unwrap_or_default()
    }
}

/// Git's object id of a blob holding `bytes`, in the repository's hash (`hex_len`: 40 for
/// SHA-1, 64 for SHA-256); `None` for another.
fn object_id(bytes: &[u8], hex_len: usize) -> Option<String> {
    use sha1::Digest as _;
    let header = format!("blob {}\0", bytes.len());
    let digest: Vec<u8> = match hex_len {
        40 => {
            let mut h = sha1::Sha1::new();
            h.update(header.as_bytes());
            h.update(bytes);
            h.finalize().to_vec()
        }
        64 => {
            let mut h = sha2::Sha256::new();
            h.update(header.as_bytes());
            h.update(bytes);
            h.finalize().to_vec()
        }
        _ => return None,
    };
    Some(digest.iter().map(|b| format!("{b:02x}")).collect())
}

/// Where a build reads from (as the kustomize port's `BuildFiles`).
#[derive(Debug, Clone)]
pub enum Source {
    /// The working tree, each file read once (shared with the command's other readers).
    Disk(Arc<FileStore>),
    /// A commit's tree, in memory.
    Tree(Arc<GitTree>),
}

impl Source {
    /// The working tree at `root`, read through a store of its own.
    pub fn disk(root: &Utf8Path) -> Source {
        Source::Disk(Arc::new(FileStore::new(root)))
    }

    /// This source as a build reads it.
    pub fn files(&self) -> Arc<dyn BuildFiles> {
        Arc::new(self.clone())
    }

    /// This source, each read through the copy also kept by the recorder returned with it
    /// (see `kustomize::files::recorded`).
    pub fn recorded(&self) -> (Arc<dyn BuildFiles>, Arc<Recorder>) {
        files::recorded(self.files())
    }
}

/// What `abs` is, a link at its end not followed: `std::fs::symlink_metadata` for a path
/// outside the store's root.
fn disk_kind(abs: &Utf8Path) -> io::Result<Kind> {
    match std::fs::symlink_metadata(abs) {
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
    }
}

/// The entries of directory `abs` with their kinds, for a path outside the store's root.
fn list_disk(abs: &Utf8Path) -> io::Result<Vec<(OsString, Kind)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(abs)? {
        let entry = entry?;
        out.push((
            entry.file_name(),
            crate::root::disk::kind_of(entry.file_type()?),
        ));
    }
    Ok(out)
}

/// Whether directory `rel` of the working tree is a Git submodule (or another repository inside
/// this one): it holds a `.git`. The root's own `.git` is the repository's, never counted.
fn is_submodule(files: &FileStore, rel: &Utf8Path) -> bool {
    !rel.as_str().is_empty()
        && files
            .lstat(&crate::paths::join(rel, ".git"))
            .is_ok_and(|kind| kind != Kind::Missing)
}

/// Whether `rel` is inside a submodule of the working tree. source-controller's artifact has
/// a submodule as an empty directory (see `GitTree::load`), so the working tree is read the
/// same way: what a build sees there is what Flux sees, on both sides of `diff` and in `check`.
fn in_submodule(files: &FileStore, rel: &Utf8Path) -> bool {
    let text = rel.as_str();
    if text.starts_with('/') || text.split('/').any(|c| c.is_empty() || c == ".") {
        // Not as `relative` gives it: the directories above as `Path` reads them.
        return rel
            .ancestors()
            .skip(1)
            .take_while(|a| !a.as_str().is_empty())
            .any(|a| is_submodule(files, a));
    }
    // Each directory above, by its text (asked for every file a build reads).
    let mut dir = text;
    while let Some((parent, _)) = dir.rsplit_once('/') {
        if is_submodule(files, Utf8Path::new(parent)) {
            return true;
        }
        dir = parent;
    }
    false
}

fn not_in_artifact() -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        "inside a Git submodule, which Flux's GitRepository checks out empty without spec.recurseSubmodules",
    )
}

fn not_found() -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, "not in the Git tree")
}

/// `abs` relative to `root`, for a Git tree (paths are lexically normal there).
fn relative<'a>(root: &Utf8Path, abs: &'a Utf8Path) -> Cow<'a, Utf8Path> {
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

impl Source {
    /// Whether every read of `log` (a recording of a build or a sample, see
    /// `kustomize::files::recorded`) answers the same on this source: a build reads nothing
    /// else, so it builds the same here.
    pub fn replays(&self, log: &[Access]) -> bool {
        log.iter().all(|access| match access {
            Access::Kind { root, abs, seen } => self.kind(root, abs).map_err(io_error) == *seen,
            Access::Read { root, abs, seen } => match self {
                // Compared in place: the tree is in memory.
                Source::Tree(tree) if seen.is_ok() => {
                    tree.holds(&relative(root, abs), seen.as_deref().unwrap_or_default())
                }
                _ => {
                    let now = self.read(root, abs).map_err(io_error);
                    now.as_deref() == seen.as_deref()
                }
            },
            Access::ReadDir { root, abs, seen } => {
                self.list(root, abs).map(sorted).map_err(io_error) == *seen
            }
        })
    }

    /// [`Source::kind`] of a directory on the way to a path: the disk's store asks `lstat`
    /// rather than opening it, since nothing of it is read.
    pub fn kind_on_the_way(&self, root: &Utf8Path, abs: &Utf8Path) -> io::Result<Kind> {
        match self {
            Source::Disk(files) => match files.relative(abs) {
                Some(rel) => files.lstat(rel),
                None => disk_kind(abs),
            },
            Source::Tree(_) => self.kind(root, abs),
        }
    }

    /// What `abs` (under `root`) is, without following a symbolic link.
    pub fn kind(&self, root: &Utf8Path, abs: &Utf8Path) -> io::Result<Kind> {
        match self {
            Source::Disk(files) => match files.relative(abs) {
                Some(rel) if in_submodule(files, rel) => Err(not_in_artifact()),
                Some(rel) => files.kind(rel),
                None => disk_kind(abs),
            },
            Source::Tree(tree) => {
                let rel = relative(root, abs);
                if tree.in_submodule(&rel) {
                    return Err(not_in_artifact());
                }
                Ok(tree.kind(&rel))
            }
        }
    }

    pub fn read(&self, root: &Utf8Path, abs: &Utf8Path) -> io::Result<Vec<u8>> {
        match self {
            Source::Disk(files) => match files.relative(abs) {
                Some(rel) if in_submodule(files, rel) => Err(not_in_artifact()),
                Some(rel) => files.read(rel).map(|bytes| bytes.as_ref().clone()),
                None => std::fs::read(abs),
            },
            Source::Tree(tree) => tree.contents(&relative(root, abs)),
        }
    }

    /// The entries of directory `abs`, unsorted for the disk.
    pub fn list(&self, root: &Utf8Path, abs: &Utf8Path) -> io::Result<Vec<(OsString, Kind)>> {
        match self {
            Source::Disk(files) => match files.relative(abs) {
                Some(rel) if in_submodule(files, rel) => Err(not_in_artifact()),
                Some(rel) => {
                    // Listed first: the listing then says whether it holds a `.git`.
                    let listing = files.list(rel);
                    if is_submodule(files, rel) {
                        Ok(Vec::new())
                    } else {
                        listing.kinds()
                    }
                }
                None => list_disk(abs),
            },
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
        read_text(self, root, rel)
    }

    /// The sub-directories of `rel` (names not starting with a dot), sorted.
    pub fn list_dirs(&self, root: &Utf8Path, rel: &Utf8Path) -> Vec<String> {
        let mut names: Vec<String> = self
            .list(root, &root.join(rel))
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

/// A repository file (`rel` to `root`) as text, when it is a regular UTF-8 file, read through
/// `files` (a source, or a recording of one).
pub fn read_text(files: &dyn BuildFiles, root: &Utf8Path, rel: &Utf8Path) -> Option<String> {
    let abs = root.join(rel);
    if files.kind(root, &abs).ok()? != Kind::File {
        return None;
    }
    String::from_utf8(files.read(root, &abs).ok()?).ok()
}

impl BuildFiles for Source {
    fn canonical_root(&self, root: &Utf8Path) -> io::Result<Utf8PathBuf> {
        // The store of the command's other readers has it already.
        if let Source::Disk(files) = self
            && files.root() == root
            && let Some(canonical) = files.canonical_root()
        {
            return Ok(canonical.to_path_buf());
        }
        let canonical = disk::canonicalize(root)?;
        Ok(Utf8PathBuf::from_path_buf(canonical).unwrap_or_else(|_| root.to_path_buf()))
    }

    fn kind(&self, root: &Utf8Path, abs: &Utf8Path) -> io::Result<Kind> {
        Source::kind(self, root, abs)
    }

    fn kind_on_the_way(&self, root: &Utf8Path, abs: &Utf8Path) -> io::Result<Kind> {
        Source::kind_on_the_way(self, root, abs)
    }

    fn read(&self, root: &Utf8Path, abs: &Utf8Path) -> io::Result<Vec<u8>> {
        Source::read(self, root, abs)
    }

    fn list(&self, root: &Utf8Path, abs: &Utf8Path) -> io::Result<Vec<(OsString, Kind)>> {
        Source::list(self, root, abs)
    }

    fn scratch(&self) -> &dyn Scratch {
        &TempDirectory
    }
}

/// The external kustomize's scratch copy (`kustomize::external`: the files one build reads, in a
/// private directory of the system's temporary directory, removed when the build is done) and
/// its PATH lookup, through `disk` like every other file access of cellgen.
struct TempDirectory;

impl Scratch for TempDirectory {
    fn is_file(&self, path: &std::path::Path) -> bool {
        disk::is_file(path)
    }

    fn create_private_dir(&self, dir: &Utf8Path) -> io::Result<()> {
        disk::create_private_dir(dir)
    }

    fn create_dir_all(&self, dir: &Utf8Path) -> io::Result<()> {
        disk::create_dir_all(dir)
    }

    fn write(&self, file: &Utf8Path, bytes: &[u8]) -> io::Result<()> {
        disk::write(file, bytes)
    }

    fn remove_dir_all(&self, dir: &Utf8Path) -> io::Result<()> {
        disk::remove_dir_all(dir)
    }
}

/// Writes `text` to `rel` under `root` for a test, making the directories on the way.
#[cfg(test)]
pub(crate) fn write_for_test(root: &Utf8Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("a file below the root")).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Runs git in `root` with a fixed identity for a test, failing it when git fails.
#[cfg(test)]
pub(crate) fn git_for_test(root: &Utf8Path, args: &[&str]) -> String {
    let out = git(root)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("git prints UTF-8")
}

#[cfg(test)]
mod tests;
