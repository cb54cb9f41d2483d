//! Plan, then apply: every command collects its file changes here, in memory, then writes them
//! all or none. A failed apply puts back every file and directory as it was.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::CellgenError;

#[derive(Debug, Clone, PartialEq, Eq)]
struct FileChange {
    before: Option<String>,
    after: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Create,
    Update,
    Delete,
}

/// Pending changes to files under `root`, keyed by path relative to it.
#[derive(Debug)]
pub struct Plan {
    root: PathBuf,
    changes: BTreeMap<PathBuf, FileChange>,
}

impl Plan {
    pub fn new(root: impl Into<PathBuf>) -> Plan {
        Plan {
            root: root.into(),
            changes: BTreeMap::new(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file as it will be after the plan: planned content, else what is on disk.
    pub fn read(&self, rel: impl AsRef<Path>) -> Result<Option<String>, CellgenError> {
        let rel = rel.as_ref();
        match self.changes.get(rel) {
            Some(change) => Ok(change.after.clone()),
            None => read_optional(&self.root.join(rel)),
        }
    }

    pub fn exists(&self, rel: impl AsRef<Path>) -> bool {
        let rel = rel.as_ref();
        match self.changes.get(rel) {
            Some(change) => change.after.is_some(),
            None => self.root.join(rel).exists(),
        }
    }

    pub fn write(
        &mut self,
        rel: impl Into<PathBuf>,
        contents: impl Into<String>,
    ) -> Result<(), CellgenError> {
        self.set(rel.into(), Some(contents.into()))
    }

    pub fn delete(&mut self, rel: impl Into<PathBuf>) -> Result<(), CellgenError> {
        self.set(rel.into(), None)
    }

    fn set(&mut self, rel: PathBuf, after: Option<String>) -> Result<(), CellgenError> {
        debug_assert!(
            crate::config::is_relative_clean(&rel.to_string_lossy()),
            "{rel:?}"
        );
        if let Some(change) = self.changes.get_mut(&rel) {
            change.after = after;
            return Ok(());
        }
        let before = read_optional(&self.root.join(&rel))?;
        self.changes.insert(rel, FileChange { before, after });
        Ok(())
    }

    /// Changes that actually change bytes, in path order.
    pub fn summary(&self) -> Vec<(ChangeKind, &Path)> {
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

    fn effective(&self) -> impl Iterator<Item = (&PathBuf, &FileChange)> {
        self.changes.iter().filter(|(_, c)| c.before != c.after)
    }

    /// The whole plan as a unified diff (paths as `a/…` and `b/…`, like git).
    pub fn diff(&self) -> String {
        let mut out = String::new();
        for (path, change) in self.effective() {
            let path = path.to_string_lossy();
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

    /// Writes every change atomically: each file goes to a temporary file in its own directory and
    /// is renamed into place; if anything fails, what was already replaced is restored.
    pub fn apply(&self) -> Result<(), CellgenError> {
        let mut journal = Journal::default();
        match self.apply_with(&mut journal) {
            Ok(()) => {
                journal.commit();
                Ok(())
            }
            Err(err) => {
                journal.rollback();
                Err(err)
            }
        }
    }

    fn apply_with(&self, journal: &mut Journal) -> Result<(), CellgenError> {
        // Stage everything first: most failures (permissions, a file where a directory should be)
        // happen here, before a single user file has changed.
        let mut staged = Vec::new();
        for (rel, change) in self.effective() {
            let target = self.root.join(rel);
            if let Some(after) = &change.after {
                let dir = target.parent().unwrap_or(&self.root);
                journal.create_dirs(dir)?;
                let tmp = temp_path(&target);
                write_new(&tmp, after).map_err(|source| CellgenError::Write {
                    path: target.clone(),
                    source,
                })?;
                journal.temps.push(tmp.clone());
                staged.push((target, Some(tmp), change));
            } else {
                staged.push((target, None, change));
            }
        }
        for (target, tmp, change) in staged {
            match tmp {
                Some(tmp) => {
                    fs::rename(&tmp, &target).map_err(|source| CellgenError::Write {
                        path: target.clone(),
                        source,
                    })?;
                    journal.temps.retain(|t| t != &tmp);
                }
                None => {
                    fs::remove_file(&target).map_err(|source| CellgenError::Write {
                        path: target.clone(),
                        source,
                    })?;
                    remove_empty_parents(&target, &self.root);
                }
            }
            journal.replaced.push((target, change.before.clone()));
        }
        Ok(())
    }
}

/// What an apply has done so far, to undo it.
#[derive(Default)]
struct Journal {
    created_dirs: Vec<PathBuf>,
    temps: Vec<PathBuf>,
    replaced: Vec<(PathBuf, Option<String>)>,
}

impl Journal {
    fn create_dirs(&mut self, dir: &Path) -> Result<(), CellgenError> {
        let mut missing = Vec::new();
        let mut cur = Some(dir);
        while let Some(d) = cur {
            if d.exists() {
                break;
            }
            missing.push(d.to_path_buf());
            cur = d.parent();
        }
        for d in missing.into_iter().rev() {
            fs::create_dir(&d).map_err(|source| CellgenError::Write {
                path: d.clone(),
                source,
            })?;
            self.created_dirs.push(d);
        }
        Ok(())
    }

    fn commit(self) {}

    fn rollback(self) {
        for tmp in &self.temps {
            let _ = fs::remove_file(tmp);
        }
        for (path, before) in self.replaced.iter().rev() {
            let _ = match before {
                Some(text) => {
                    if let Some(parent) = path.parent() {
                        let _ = fs::create_dir_all(parent);
                    }
                    fs::write(path, text)
                }
                None => fs::remove_file(path),
            };
        }
        for dir in self.created_dirs.iter().rev() {
            let _ = fs::remove_dir(dir);
        }
    }
}

fn temp_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(".{name}.cellgen-{}.tmp", std::process::id()))
}

fn write_new(path: &Path, contents: &str) -> std::io::Result<()> {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    file.write_all(contents.as_bytes())?;
    file.sync_all()
}

/// Deleting a cell's last file should not leave empty directories behind.
fn remove_empty_parents(path: &Path, root: &Path) {
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d == root || !d.starts_with(root) || fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

pub fn read_optional(path: &Path) -> Result<Option<String>, CellgenError> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(err)
            if matches!(
                err.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(None)
        }
        Err(source) => Err(CellgenError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_writes_and_rolls_back_on_failure() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("keep.txt"), "old").unwrap();
        // A file where a directory must go makes the second write fail during staging.
        fs::write(dir.path().join("blocker"), "x").unwrap();
        let mut plan = Plan::new(dir.path());
        plan.write("keep.txt", "new").unwrap();
        plan.write("a/b/c.txt", "c").unwrap();
        plan.write("blocker/d.txt", "d").unwrap();
        assert!(plan.apply().is_err());
        assert_eq!(
            fs::read_to_string(dir.path().join("keep.txt")).unwrap(),
            "old"
        );
        assert!(!dir.path().join("a").exists());
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    #[test]
    fn diff_shows_creation_and_unchanged_files_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("same.txt"), "same\n").unwrap();
        let mut plan = Plan::new(dir.path());
        plan.write("same.txt", "same\n").unwrap();
        plan.write("new.txt", "hello\n").unwrap();
        let diff = plan.diff();
        assert!(diff.contains("--- /dev/null\n+++ b/new.txt\n"), "{diff}");
        assert!(diff.contains("+hello"));
        assert!(!diff.contains("same.txt"));
        assert_eq!(plan.summary().len(), 1);
    }
}
