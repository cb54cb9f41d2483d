//! Reads confined to the repository root, the way Flux sees the repository.
//!
//! Flux builds from source-controller's artifact of the repository: a tarball of regular
//! files and directories only (symbolic links are left out, `storage.Archive`), unpacked in
//! a temporary directory and read through fluxcd/pkg's secure file system, which refuses any
//! path that is not in or below that directory ("path '…' is not in or below '…'"). Inside
//! it, kustomize runs with LoadRestrictionsNone, so `../` is fine while it stays inside.
//! Here: `..` is resolved lexically (there are no links to make it differ), a path leaving
//! the root or written absolute is refused, and a symbolic link anywhere on a path is
//! reported (Flux would not find the file). Files source-controller leaves out of the
//! artifact (`.sourceignore` and its default exclusions, see `sourceignore`) are reported
//! when referenced and skipped when a directory is scanned. Text is checked to be UTF-8.
//! Every answer comes from the [`BuildFiles`] the caller opened the repository with (the
//! working tree or a commit's tree, see `files`).

use camino::{Utf8Component as Component, Utf8Path, Utf8PathBuf};
use std::collections::HashSet;
use std::sync::{Arc, RwLock};

use super::BuildError;
use super::Caches;
use super::files::{self, Access, BuildFiles, Recorder, Scratch};
use super::load::KUSTOMIZATION_FILES;
use super::sourceignore::{self, Matcher, Origin, Pattern};
use crate::paths::Kind;

/// What a path is, as Flux's artifact has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    File,
    Dir,
    Missing,
}

/// What a directory scan finds, as Flux's artifact has it.
pub enum Listed {
    File(Utf8PathBuf),
    Dir(Utf8PathBuf),
}

pub struct Fs {
    /// Canonical repository root.
    pub root: Utf8PathBuf,
    /// Directories (absolute, by their text) already known to be free of symbolic links. A
    /// path written two ways is asked about twice, which costs a lookup, not an answer.
    clean_dirs: Arc<RwLock<HashSet<String, foldhash::fast::RandomState>>>,
    /// What source-controller leaves out of the artifact.
    ignore: Arc<Matcher>,
    /// Where files are read from: the working tree, or a commit's tree.
    files: Arc<dyn BuildFiles>,
    /// What this command's builds remember (see `caches`).
    caches: Arc<Caches>,
}

/// Lexical normalisation: `.` dropped, `..` pops (kustomize cleans paths the same way).
pub fn normalize(path: &Utf8Path) -> Utf8PathBuf {
    let mut out = Utf8PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            Component::CurDir => {}
            other => out.push(other.as_str()),
        }
    }
    out
}

impl Fs {
    /// The repository at `root` as `files` has it.
    pub fn new(root: &Utf8Path, files: Arc<dyn BuildFiles>) -> Result<Fs, BuildError> {
        Fs::with_caches(root, files, Arc::default())
    }

    /// [`Fs::new`], remembering into `caches` (shared with another repository's builds).
    pub fn with_caches(
        root: &Utf8Path,
        files: Arc<dyn BuildFiles>,
        caches: Arc<Caches>,
    ) -> Result<Fs, BuildError> {
        let root = files
            .canonical_root(root)
            .map_err(|source| BuildError::Io {
                path: root.to_path_buf(),
                source,
            })?;
        let ignore = sourceignore::load(&*files, &root)?;
        Ok(Fs {
            root,
            clean_dirs: Arc::default(),
            ignore: Arc::new(ignore),
            files,
            caches,
        })
    }

    /// This repository, each read of a build through the copy (and each answer it takes from
    /// what earlier builds found) kept by the recorder returned with it.
    pub fn recorded(&self) -> (Fs, Arc<Recorder>) {
        let (files, recorder) = files::recorded(self.files.clone());
        let fs = Fs {
            root: self.root.clone(),
            clean_dirs: self.clean_dirs.clone(),
            ignore: self.ignore.clone(),
            files,
            caches: self.caches.clone(),
        };
        (fs, recorder)
    }

    /// Where the external tool's copy of the files goes.
    pub fn scratch(&self) -> &dyn Scratch {
        self.files.scratch()
    }

    /// What this command's builds remember.
    pub fn caches(&self) -> &Caches {
        &self.caches
    }

    /// The same, to share with another repository's builds.
    pub fn shared_caches(&self) -> Arc<Caches> {
        self.caches.clone()
    }

    /// Whether `other` reads the same root with the same artifact rules (`.sourceignore`):
    /// then a build reading the same answers from both gives the same result.
    pub fn same_rules(&self, other: &Fs) -> bool {
        self.root == other.root && self.ignore == other.ignore
    }

    /// The rule that leaves `abs` (a file, or with `is_dir` a directory) out of the artifact.
    pub fn ignored(&self, abs: &Utf8Path, is_dir: bool) -> Option<&Pattern> {
        self.ignore.excluded_by(&self.rel(abs), is_dir)
    }

    /// Repository-relative form of an absolute path under the root.
    pub fn rel(&self, abs: &Utf8Path) -> Utf8PathBuf {
        // By text where that is what `strip_prefix` answers (a clean path below the root);
        // the component-wise strip is most of a build's path work.
        if !self.root.as_str().is_empty()
            && let Some(rest) = abs.as_str().strip_prefix(self.root.as_str())
            && let Some(rest) = rest.strip_prefix('/')
            && is_clean_relative(rest)
        {
            return Utf8PathBuf::from(rest);
        }
        abs.strip_prefix(&self.root)
            .map(Utf8Path::to_path_buf)
            .unwrap_or_else(|_| abs.to_path_buf())
    }

    /// The absolute path of `entry`, written in `file` (repository-relative) and relative
    /// to directory `dir` (absolute), refused when it is absolute or leaves the root.
    pub fn resolve(
        &self,
        dir: &Utf8Path,
        entry: &str,
        file: &Utf8Path,
    ) -> Result<Utf8PathBuf, BuildError> {
        let outside = |why: &str| BuildError::OutsideRoot {
            file: file.to_path_buf(),
            entry: entry.to_string(),
            why: why.to_string(),
        };
        if Utf8Path::new(entry).is_absolute() {
            return Err(outside(
                "it is an absolute path, and Flux builds from a copy of the repository",
            ));
        }
        let abs = joined_normalized(dir, entry);
        if !abs.starts_with(&self.root) {
            return Err(outside("it leaves the repository root"));
        }
        Ok(abs)
    }

    /// What `abs` (under the root) is; a symbolic link on the way is an error naming the
    /// reference, because Flux's artifact has no links.
    pub fn entry(
        &self,
        abs: &Utf8Path,
        file: &Utf8Path,
        reference: &str,
    ) -> Result<Entry, BuildError> {
        let rel = self.rel(abs);
        let mut cur = self.root.clone();
        let mut comps = rel.components().peekable();
        while let Some(c) = comps.next() {
            cur.push(c);
            let last = comps.peek().is_none();
            if !last && self.is_clean(&cur) {
                // Known from an earlier build: a recording of this build still needs it.
                self.files.note(&|| Access::Kind {
                    root: self.root.clone(),
                    abs: cur.clone(),
                    seen: Ok(Kind::Dir),
                });
                continue;
            }
            let asked = if last {
                self.files.kind(&self.root, &cur)
            } else {
                self.files.kind_on_the_way(&self.root, &cur)
            };
            let kind = match asked {
                Ok(Kind::Missing) => return Ok(Entry::Missing),
                Ok(kind) => kind,
                Err(source) => {
                    return Err(BuildError::Io {
                        path: self.rel(&cur),
                        source,
                    });
                }
            };
            if kind == Kind::Link {
                return Err(BuildError::Symlink {
                    file: file.to_path_buf(),
                    entry: reference.to_string(),
                    link: self.rel(&cur),
                });
            }
            if last {
                if kind == Kind::Dir {
                    return Ok(Entry::Dir);
                }
                if kind != Kind::File {
                    return Ok(Entry::Missing);
                }
                if let Some(rule) = self.ignore.excluded_by(&rel, false) {
                    return Err(BuildError::Ignored {
                        file: file.to_path_buf(),
                        entry: reference.to_string(),
                        path: rel,
                        rule: describe(rule),
                    });
                }
                return Ok(Entry::File);
            }
            if kind != Kind::Dir {
                return Ok(Entry::Missing);
            }
            self.clean_dirs
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .insert(cur.as_str().to_owned());
        }
        // `abs` is the root itself.
        Ok(Entry::Dir)
    }

    /// The kustomization file of `dir` as Flux's artifact has it (one left out of the artifact
    /// is not there; one that is a symbolic link is an error). kustomize refuses a directory
    /// with two.
    pub fn kustomization_file(&self, dir: &Utf8Path) -> Result<Option<Utf8PathBuf>, BuildError> {
        let mut found = Vec::new();
        for name in KUSTOMIZATION_FILES {
            let f = dir.join(name);
            let rel = self.rel(&f);
            match self.entry(&f, &rel, name) {
                Ok(Entry::File) => found.push(f),
                Ok(_) | Err(BuildError::Ignored { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        if found.len() > 1 {
            return Err(BuildError::Invalid {
                file: self.rel(dir),
                message: "Found multiple kustomization files".into(),
            });
        }
        Ok(found.pop())
    }

    /// The regular files and directories of `dir` (absolute, free of links) in Go's walk
    /// order, without what the artifact leaves out. A symbolic link is an error naming it
    /// (`file`, the kustomization being generated, lists what the scan finds): Flux's artifact
    /// has no links, so Flux would silently apply less than the directory shows.
    pub fn list_dir(&self, dir: &Utf8Path, file: &Utf8Path) -> Result<Vec<Listed>, BuildError> {
        let io = |source| BuildError::Io {
            path: self.rel(dir),
            source,
        };
        let mut entries = Vec::new();
        // A listing is where a name is first met: UTF-8, or an error naming the directory
        // (Flux would apply the file; cellgen could neither name it nor leave it out silently).
        for (name, kind) in self.files.list(&self.root, dir).map_err(io)? {
            match name.into_string() {
                Ok(name) => entries.push((name, kind)),
                Err(name) => {
                    return Err(BuildError::NotUtf8Name {
                        dir: self.rel(dir),
                        name: name.to_string_lossy().into_owned(),
                    });
                }
            }
        }
        // filepath.Walk visits names in byte order.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out = Vec::new();
        for (name, kind) in entries {
            let path = dir.join(&name);
            if kind == Kind::Link {
                return Err(BuildError::Symlink {
                    file: file.to_path_buf(),
                    entry: name,
                    link: self.rel(&path),
                });
            }
            if kind == Kind::Dir {
                // Each path is matched on its own: an excluded directory may hold included
                // files, unless no pattern includes anything.
                if self.ignore.has_inclusions() || self.ignored(&path, true).is_none() {
                    out.push(Listed::Dir(path));
                }
            } else if kind == Kind::File && self.ignored(&path, false).is_none() {
                out.push(Listed::File(path));
            }
        }
        Ok(out)
    }

    fn is_clean(&self, dir: &Utf8Path) -> bool {
        self.clean_dirs
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .contains(dir.as_str())
    }

    pub fn read_bytes(&self, abs: &Utf8Path) -> Result<Vec<u8>, BuildError> {
        self.files
            .read(&self.root, abs)
            .map_err(|source| BuildError::Io {
                path: self.rel(abs),
                source,
            })
    }

    /// Reads a file `entry` of `file` resolved to `abs`, naming the reference when it is
    /// missing or goes through a link.
    pub fn read_listed(
        &self,
        abs: &Utf8Path,
        file: &Utf8Path,
        entry: &str,
    ) -> Result<String, BuildError> {
        match self.entry(abs, file, entry)? {
            Entry::File => self.read_text(abs),
            Entry::Dir | Entry::Missing => Err(BuildError::MissingResource {
                file: file.to_path_buf(),
                entry: entry.to_string(),
            }),
        }
    }

    /// A text file kustomize parses: UTF-8 (a leading byte-order mark is dropped, as
    /// go-yaml does).
    pub fn read_text(&self, abs: &Utf8Path) -> Result<String, BuildError> {
        text(self.read_bytes(abs)?, &self.rel(abs))
    }
}

/// `normalize(dir.join(entry))`, without taking the path apart when `dir` is normal already
/// and `entry` is a plain relative path (what almost every kustomization lists).
fn joined_normalized(dir: &Utf8Path, entry: &str) -> Utf8PathBuf {
    let normal_dir = dir.as_str() == "/"
        || dir
            .as_str()
            .strip_prefix('/')
            .is_some_and(is_clean_relative);
    if normal_dir && is_clean_relative(entry) {
        crate::paths::join(dir, entry)
    } else {
        normalize(&dir.join(entry))
    }
}

use crate::paths::is_clean_relative;

/// A rule leaving a file out of the artifact, for messages.
fn describe(rule: &Pattern) -> String {
    match &rule.origin {
        Origin::File { path, line } => {
            format!("the pattern `{}` of {}:{line}", rule.text, path)
        }
        Origin::Vcs => format!(
            "source-controller's exclusion of version-control files `{}`",
            rule.text
        ),
        Origin::Default => format!(
            "source-controller's default exclusion `{}` (a .sourceignore file with any pattern replaces the defaults)",
            rule.text
        ),
    }
}

/// Bytes as text, or the error naming the file and the first bad byte.
pub fn text(bytes: Vec<u8>, path: &Utf8Path) -> Result<String, BuildError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joined_normalized_is_normalize_of_the_join() {
        let paths = [
            "", ".", "..", "a", "a/b.yaml", "./a", "a/./b", "a/../b", "../a", "a//b", "a/", "/x",
            ".a/b", "a..b/c",
        ];
        for dir in [
            "/", "/r", "/r/a", "/r/./a", "/r/../a", "/r//a", "/r/a/", "r/a", "",
        ] {
            for entry in paths {
                let dir = Utf8Path::new(dir);
                let expected = normalize(&dir.join(entry));
                let got = joined_normalized(dir, entry);
                assert_eq!(got.as_str(), expected.as_str(), "{dir:?} {entry:?}");
            }
        }
    }

    #[test]
    fn clean_relative_paths_by_their_dots_as_by_their_segments() {
        for path in [
            "a",
            "a/b.yaml",
            ".a",
            "a/.b",
            "a..b",
            "a/...",
            "..a/b",
            "a/b.",
            ".hidden/x",
            "",
            ".",
            "..",
            "./a",
            "a/.",
            "a/./b",
            "a/../b",
            "a/..",
            "/a",
            "a/",
            "a//b",
            "a/.../b",
        ] {
            // Below the root, `strip_prefix` drops empty and `.` segments and keeps `..`.
            let clean = !path.is_empty()
                && path
                    .split('/')
                    .all(|s| !s.is_empty() && s != "." && s != "..");
            assert_eq!(is_clean_relative(path), clean, "{path:?}");
        }
    }
}
