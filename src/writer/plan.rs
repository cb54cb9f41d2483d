//! Plan, then apply: every command collects its file changes here, in memory, then writes them
//! all or none. A failed apply puts back every file and directory as it was.

use camino::{Utf8Path, Utf8PathBuf};
use std::collections::BTreeMap;

use crate::error::CellgenError;
use crate::root::fsguard::{FileStyle, Root};

#[derive(Debug, Clone, PartialEq, Eq)]
struct FileChange {
    /// The file as it was on disk (LF line endings), or None.
    before: Option<String>,
    after: Option<String>,
    /// How the file was stored (CRLF, mode): a rewrite keeps it.
    style: FileStyle,
    /// Where the file really is, relative to the canonical root (links inside the root followed).
    real: Utf8PathBuf,
    /// The file on disk is not text (a saved Terraform plan): the plan may only delete it, and
    /// `before` is empty.
    binary: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Create,
    Update,
    Delete,
}

/// Pending changes to files under `root`, keyed by path relative to it.
///
/// Text goes in and out with LF line endings: a file stored with CRLF is read as LF and written
/// back with CRLF (every line), and a rewritten file keeps its permission bits, so editors never
/// deal with either. Every path is resolved inside the root (`crate::root::fsguard`): a symbolic link
/// out of the repository is an error naming it, for reads as for writes.
#[derive(Debug, Clone)]
pub struct Plan {
    root: Root,
    /// Repository-relative, UTF-8: what the report, the diff and the records name.
    changes: BTreeMap<Utf8PathBuf, FileChange>,
    /// Which paths Flux reads, so must not go through a symbolic link.
    read_by_flux: fn(&Utf8Path) -> bool,
}

impl Plan {
    /// A plan for the repository at `root`; `read_by_flux` tells which repository-relative
    /// paths Flux reads (the writer knows no repository layout).
    pub fn new(root: impl Into<Utf8PathBuf>, read_by_flux: fn(&Utf8Path) -> bool) -> Plan {
        Plan {
            root: Root::new(root),
            read_by_flux,
            changes: BTreeMap::new(),
        }
    }

    pub fn root(&self) -> &Utf8Path {
        self.root.given()
    }

    /// The file as it will be after the plan: planned content, else what is on disk.
    pub fn read(&self, rel: impl AsRef<Utf8Path>) -> Result<Option<String>, CellgenError> {
        let rel = rel.as_ref();
        match self.changes.get(rel) {
            Some(change) => Ok(change.after.clone()),
            None => self.read_on_disk(rel),
        }
    }

    /// The file as it is on disk now, whatever the plan says.
    pub fn read_on_disk(&self, rel: impl AsRef<Utf8Path>) -> Result<Option<String>, CellgenError> {
        self.flux_guard(rel.as_ref())?;
        Ok(self.root.read(rel.as_ref())?.map(|t| t.text))
    }

    /// What Flux reads (the caller's `read_by_flux` says which paths) may not go through a
    /// symbolic link, even one that stays inside: source-controller leaves links out of its
    /// artifact, so Flux would not see it. (A component directory that is a link is the build's
    /// error to report.)
    fn flux_guard(&self, rel: &Utf8Path) -> Result<(), CellgenError> {
        let read_by_flux = (self.read_by_flux)(rel);
        if !read_by_flux {
            return Ok(());
        }
        match self.root.resolve_traced(rel)? {
            (_, Some((link, target))) => Err(CellgenError::FluxSymlink {
                path: rel.to_path_buf(),
                link,
                target,
            }),
            (_, None) => Ok(()),
        }
    }

    /// Whether the file will exist after the plan. A path that leads out of the repository does
    /// not exist for cellgen (writing it is the error that names the link).
    pub fn exists(&self, rel: impl AsRef<Utf8Path>) -> bool {
        let rel = rel.as_ref();
        match self.changes.get(rel) {
            Some(change) => change.after.is_some(),
            None => self.root.resolve(rel).is_ok_and(crate::root::disk::exists),
        }
    }

    pub fn write(
        &mut self,
        rel: impl Into<Utf8PathBuf>,
        contents: impl Into<String>,
    ) -> Result<(), CellgenError> {
        self.set(rel.into(), Some(contents.into()))
    }

    /// Deletes a file, text or not (a file that is not UTF-8 text can be deleted, never edited).
    pub fn delete(&mut self, rel: impl Into<Utf8PathBuf>) -> Result<(), CellgenError> {
        self.set(rel.into(), None)
    }

    fn set(&mut self, rel: Utf8PathBuf, after: Option<String>) -> Result<(), CellgenError> {
        debug_assert!(crate::paths::is_clean_relative(rel.as_str()), "{rel:?}");
        if let Some(change) = self.changes.get_mut(&rel) {
            if change.binary && after.is_some() {
                return Err(CellgenError::InvalidFile {
                    path: self.root().join(&rel),
                    message: "is not UTF-8 text, which cellgen can delete but not write".into(),
                });
            }
            change.after = after;
            return Ok(());
        }
        let real = self.root.resolve(&rel)?;
        self.flux_guard(&rel)?;
        let real = real
            .strip_prefix(self.root.canonical())
            .map(Utf8Path::to_path_buf)
            .unwrap_or_else(|_| rel.clone());
        if real.as_str().is_empty() {
            return Err(CellgenError::InvalidFile {
                path: self.root().to_path_buf(),
                message: "is the repository root; cellgen writes files, not the root itself".into(),
            });
        }
        let (before, style, binary) = match self.root.read(&rel) {
            Ok(Some(text)) => (Some(text.text), text.style, false),
            Ok(None) => (None, FileStyle::default(), false),
            Err(CellgenError::NotUtf8 { .. }) if after.is_none() => {
                (Some(String::new()), FileStyle::default(), true)
            }
            Err(e) => return Err(e),
        };
        self.changes.insert(
            rel,
            FileChange {
                before,
                after,
                style,
                real,
                binary,
            },
        );
        Ok(())
    }

    /// Changes that actually change bytes, in path order.
    pub fn summary(&self) -> Vec<(ChangeKind, &Utf8Path)> {
        self.effective()
            .map(|(path, change)| {
                let kind = match (&change.before, &change.after) {
                    (None, Some(_)) => ChangeKind::Create,
                    (Some(_), None) => ChangeKind::Delete,
                    _ => ChangeKind::Update,
                };
                (kind, path.as_path())
            })
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.effective().next().is_none()
    }

    /// Every path the plan has been given, changed or not, with its contents after it.
    pub fn planned(&self) -> impl Iterator<Item = (&Utf8Path, Option<&str>)> {
        self.changes
            .iter()
            .map(|(path, change)| (path.as_path(), change.after.as_deref()))
    }

    /// Paths the plan writes or deletes, with their contents after it (None: deleted).
    pub fn changed(&self) -> impl Iterator<Item = (&Utf8Path, Option<&str>)> {
        self.effective()
            .map(|(path, change)| (path.as_path(), change.after.as_deref()))
    }

    /// The file as it was on disk when the plan first touched it (None if it was not there or
    /// the plan has not touched it).
    pub fn original(&self, rel: impl AsRef<Utf8Path>) -> Option<Option<&str>> {
        self.changes.get(rel.as_ref()).map(|c| c.before.as_deref())
    }

    fn effective(&self) -> impl Iterator<Item = (&Utf8PathBuf, &FileChange)> {
        self.changes.iter().filter(|(_, c)| c.before != c.after)
    }

    /// The whole plan as a unified diff (paths as `a/…` and `b/…`, like git).
    pub fn diff(&self) -> String {
        self.diff_of(|_| true)
    }

    /// [`Plan::diff`] of the changed paths `include` accepts.
    pub fn diff_of(&self, include: impl Fn(&Utf8Path) -> bool) -> String {
        let mut out = String::new();
        for (path, change) in self.effective().filter(|(p, _)| include(p)) {
            if change.binary {
                // As git says it: a binary file's bytes are no diff.
                out.push_str(&format!(
                    "diff --cellgen a/{path} b/{path}\nBinary file a/{path} deleted\n"
                ));
                continue;
            }
            let before = change.before.as_deref().unwrap_or("");
            let after = change.after.as_deref().unwrap_or("");
            let old = if change.before.is_some() {
                format!("a/{path}")
            } else {
                "/dev/null".into()
            };
            let new = if change.after.is_some() {
                format!("b/{path}")
            } else {
                "/dev/null".into()
            };
            let diff = similar::TextDiff::from_lines(before, after);
            out.push_str(&format!("diff --cellgen a/{path} b/{path}\n"));
            out.push_str(
                &diff
                    .unified_diff()
                    .context_radius(3)
                    .header(&old, &new)
                    .to_string(),
            );
            if !after.is_empty() && !after.ends_with('\n')
                || !before.is_empty() && !before.ends_with('\n')
            {
                out.push_str("\\ No newline at end of file\n");
            }
        }
        out
    }

    /// Writes every change all or nothing, through the journal (`crate::writer::journal`): a failure, or
    /// SIGINT/SIGTERM/SIGHUP, leaves every file as it was; SIGKILL leaves a journal the next
    /// cellgen command repairs. Needs the repository's write lock (`crate::writer::lock`), taken by
    /// `commands::run` before the command read anything.
    pub fn apply(&self) -> Result<(), CellgenError> {
        if !crate::writer::lock::holds_write(self.root.canonical()) {
            return Err(CellgenError::InvalidFile {
                path: self.root().to_path_buf(),
                message: "internal error: a plan was applied without the repository's write lock; nothing was written".into(),
            });
        }
        let changes: Vec<crate::writer::journal::Change> = self
            .effective()
            .map(|(_, change)| crate::writer::journal::Change {
                path: change.real.clone(),
                contents: change
                    .after
                    .as_deref()
                    .map(|text| change.style.encode(text)),
                mode: change.style.mode,
                existed: change.before.is_some(),
            })
            .collect();
        crate::writer::journal::apply(self.root.canonical(), &changes)
    }
}

/// Reads a file that is not under a plan's root (e.g. a `--values` file): UTF-8 checked, LF.
pub fn read_optional(path: &Utf8Path) -> Result<Option<String>, CellgenError> {
    Ok(crate::root::fsguard::read_text(path, path)?.map(|t| t.text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::writer::lock::{self, Access};
    use std::fs;

    fn entries(dir: &Utf8Path) -> Vec<String> {
        let mut names: Vec<_> = dir
            .read_dir_utf8()
            .unwrap()
            .map(|e| e.unwrap().file_name().to_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn apply_writes_and_rolls_back_on_failure() {
        let dir = tempfile::tempdir().unwrap();
        let _lock = lock::acquire(
            Utf8Path::from_path(dir.path()).unwrap(),
            Access::Write,
            |_| {},
        )
        .unwrap();
        fs::write(
            Utf8Path::from_path(dir.path()).unwrap().join("keep.txt"),
            "old",
        )
        .unwrap();
        // A file where a directory must go makes the third write fail during staging.
        fs::write(
            Utf8Path::from_path(dir.path()).unwrap().join("blocker"),
            "x",
        )
        .unwrap();
        let mut plan = Plan::new(Utf8Path::from_path(dir.path()).unwrap(), |_| true);
        plan.write("keep.txt", "new").unwrap();
        plan.write("a/b/c.txt", "c").unwrap();
        plan.write("blocker/d.txt", "d").unwrap();
        assert!(plan.apply().is_err());
        assert_eq!(
            fs::read_to_string(Utf8Path::from_path(dir.path()).unwrap().join("keep.txt")).unwrap(),
            "old"
        );
        assert_eq!(
            entries(Utf8Path::from_path(dir.path()).unwrap()),
            ["blocker", "keep.txt"]
        );
    }

    #[test]
    fn apply_needs_the_write_lock() {
        let dir = tempfile::tempdir().unwrap();
        let mut plan = Plan::new(Utf8Path::from_path(dir.path()).unwrap(), |_| true);
        plan.write("a.txt", "a").unwrap();
        let err = plan.apply().unwrap_err().to_string();
        assert!(err.contains("without the repository's write lock"), "{err}");
        let _lock = lock::acquire(
            Utf8Path::from_path(dir.path()).unwrap(),
            Access::Write,
            |_| {},
        )
        .unwrap();
        plan.apply().unwrap();
        assert_eq!(entries(Utf8Path::from_path(dir.path()).unwrap()), ["a.txt"]);
    }

    #[cfg(unix)]
    #[test]
    fn rewrites_keep_crlf_and_the_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let _lock = lock::acquire(
            Utf8Path::from_path(dir.path()).unwrap(),
            Access::Write,
            |_| {},
        )
        .unwrap();
        let path = Utf8Path::from_path(dir.path()).unwrap().join("secret.tf");
        fs::write(&path, "a = 1\r\nb = 2\r\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        let mut plan = Plan::new(Utf8Path::from_path(dir.path()).unwrap(), |_| true);
        let text = plan.read("secret.tf").unwrap().unwrap();
        assert_eq!(text, "a = 1\nb = 2\n");
        plan.write("secret.tf", format!("{text}c = 3\n")).unwrap();
        plan.apply().unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"a = 1\r\nb = 2\r\nc = 3\r\n");
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(
            entries(Utf8Path::from_path(dir.path()).unwrap()),
            ["secret.tf"]
        );
    }

    #[test]
    fn diff_shows_creation_and_unchanged_files_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            Utf8Path::from_path(dir.path()).unwrap().join("same.txt"),
            "same\n",
        )
        .unwrap();
        let mut plan = Plan::new(Utf8Path::from_path(dir.path()).unwrap(), |_| true);
        plan.write("same.txt", "same\n").unwrap();
        plan.write("new.txt", "hello\n").unwrap();
        let diff = plan.diff();
        assert!(diff.contains("--- /dev/null\n+++ b/new.txt\n"), "{diff}");
        assert!(diff.contains("+hello"));
        assert!(!diff.contains("same.txt"));
        assert_eq!(plan.summary().len(), 1);
    }
}
