//! Undoing or finishing an apply from what is on disk: after a failure or a signal (in the same
//! process), or after a crash (`recover`, in the next cellgen).

use Utf8Path;
use std::fs;

use super::*;

#[cfg(unix)]
fn same_file(a: &Utf8Path, b: &Utf8Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (fs::symlink_metadata(a), fs::symlink_metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_a: &Utf8Path, _b: &Utf8Path) -> bool {
    false
}

/// Puts everything back as it was before the apply, from what is on disk. Best effort: a step
/// that fails does not stop the others. Returns the first failure.
pub(super) fn undo(root: &Utf8Path, record: &Record) -> Option<String> {
    let mut failure: Option<String> = None;
    let mut note = |what: String| {
        failure.get_or_insert(what);
    };
    for op in record.ops.iter().rev() {
        let target = root.join(&op.path);
        let temp = op.temp.as_ref().map(|t| root.join(t));
        match &op.backup {
            Some(backup) => {
                let backup = root.join(backup);
                if exists(&backup) {
                    // Before the rename the backup is a second link to the unchanged file.
                    let restored = if same_file(&backup, &target) {
                        fs::remove_file(&backup)
                    } else {
                        fs::rename(&backup, &target)
                    };
                    if let Err(e) = restored {
                        note(format!("cannot restore {}: {e}", op.path));
                    }
                }
            }
            None => {
                // A creation: the target exists only once the temporary file was renamed to it.
                if temp.as_ref().is_some_and(|t| !exists(t))
                    && exists(&target)
                    && let Err(e) = fs::remove_file(&target)
                {
                    note(format!("cannot remove {}: {e}", op.path));
                }
            }
        }
        if let Some(temp) = temp
            && exists(&temp)
            && let Err(e) = fs::remove_file(&temp)
        {
            note(format!("cannot remove {}: {e}", temp));
        }
    }
    for dir in record.dirs.iter().rev().filter(|d| *d != JOURNAL_DIR) {
        // Not empty means it holds something that is not ours: leave it.
        let _ = fs::remove_dir(root.join(dir));
    }
    // What was put back must stay put back once the journal is gone.
    barrier(root, record, false);
    if let Err(e) = remove_journal(root, record) {
        note(e);
    }
    failure
}

/// The plan is applied: removes backups (and directories a deletion emptied), then the journal.
pub(super) fn finish(root: &Utf8Path, record: &Record) -> Result<(), CellgenError> {
    for op in &record.ops {
        if let Some(backup) = &op.backup {
            let _ = fs::remove_file(root.join(backup));
        }
        if let Some(temp) = &op.temp {
            let _ = fs::remove_file(root.join(temp));
        }
        if op.temp.is_none() {
            remove_empty_parents(&root.join(&op.path), root);
        }
    }
    // The backups must be gone for good before the journal that names them is.
    barrier(root, record, false);
    remove_journal(root, record).map_err(|message| CellgenError::Recovery {
        path: root.join(JOURNAL),
        message,
    })
}

fn remove_journal(root: &Utf8Path, record: &Record) -> Result<(), String> {
    let _ = fs::remove_file(root.join(JOURNAL_TMP));
    match fs::remove_file(root.join(JOURNAL)) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot remove the journal: {e}")),
    }
    if record.dirs.first().map(String::as_str) == Some(JOURNAL_DIR) {
        let _ = fs::remove_dir(root.join(JOURNAL_DIR));
    }
    sync_dir(root);
    Ok(())
}

/// Deleting a cell's last file should not leave empty directories behind.
fn remove_empty_parents(path: &Utf8Path, root: &Utf8Path) {
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d == root || !d.starts_with(root) || fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

/// Whether a killed apply left a journal (or the start of one) under `root`.
pub fn pending(root: &Utf8Path) -> bool {
    exists(&root.join(JOURNAL)) || exists(&root.join(JOURNAL_TMP))
}

/// Repairs what a killed apply left: rolls it back, or finishes it if it had committed. Call with
/// the write lock held, before reading anything else of the repository.
pub fn recover(root: &Utf8Path) -> Result<Option<Recovered>, CellgenError> {
    confined(root)?;
    let path = root.join(JOURNAL);
    let text = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Killed while writing the first journal: nothing else had been touched yet.
            let tmp = root.join(JOURNAL_TMP);
            if !exists(&tmp) {
                return Ok(None);
            }
            fs::remove_file(&tmp).map_err(|source| CellgenError::Write {
                path: tmp.to_path_buf(),
                source,
            })?;
            return Ok(Some(Recovered {
                command: "an earlier cellgen".into(),
                pid: 0,
                changes: 0,
                rolled_back: true,
            }));
        }
        Err(source) => {
            return Err(CellgenError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let record: Record = serde_json::from_slice(&text).map_err(|e| CellgenError::Recovery {
        path: path.to_path_buf(),
        message: format!("it is not a journal cellgen can read ({e})"),
    })?;
    let guard = crate::root::fsguard::Root::new(root);
    for rel in record
        .ops
        .iter()
        .flat_map(|op| [Some(&op.path), op.temp.as_ref(), op.backup.as_ref()])
        .flatten()
        .chain(&record.dirs)
    {
        // The journal names real paths (links already resolved when it was written): one that
        // now leads through a link, or out of the root, is not one cellgen wrote.
        let inside = crate::model::config::is_relative_clean(rel)
            && guard
                .resolve(Utf8Path::new(rel))
                .is_ok_and(|real| real == guard.canonical().join(rel));
        if !inside {
            return Err(CellgenError::Recovery {
                path: path.to_path_buf(),
                message: format!("it names `{rel}`, which is not a path inside the repository"),
            });
        }
    }
    let _signals = Deferred::start();
    let rolled_back = match record.state {
        State::Applying => {
            if let Some(message) = undo(root, &record) {
                return Err(CellgenError::Recovery {
                    path: path.to_path_buf(),
                    message,
                });
            }
            true
        }
        State::Committed => {
            finish(root, &record)?;
            false
        }
    };
    Ok(Some(Recovered {
        command: record.command,
        pid: record.pid,
        changes: record.ops.len(),
        rolled_back,
    }))
}
