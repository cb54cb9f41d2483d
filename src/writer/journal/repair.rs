//! Undoing or finishing an apply from what is on disk: after a failure or a signal (in the same
//! process), or after a crash (`recover`, in the next cellgen that writes). Either way only what
//! the journal proves is cellgen's is touched (`evidence`).

use crate::root::disk;

use super::evidence;
use super::*;

/// Puts everything back as it was before the apply, from what is on disk. Best effort: a step
/// that fails does not stop the others. Returns the first failure; on a failure, or when the
/// disk does not match the journal, the journal stays for the next cellgen to report.
pub(super) fn undo(root: &Utf8Path, record: &Record) -> Option<String> {
    let steps = match evidence::steps(root, record) {
        Ok(steps) => steps,
        Err(mismatch) => return Some(mismatch),
    };
    let mut failure = evidence::execute(root, &steps);
    for dir in evidence::created_dirs(root, record) {
        // Not empty means it holds something that is not ours: leave it.
        let _ = disk::remove_dir(dir);
    }
    // What was put back must stay put back once the journal is gone.
    barrier(root, record, false);
    if failure.is_none()
        && let Err(e) = remove_journal(root, record)
    {
        failure = Some(e);
    }
    failure
}

/// The plan is applied: removes backups (and directories a deletion emptied), then the journal.
/// `ours`: the apply that just committed, in this process, which knows its own files; a journal
/// found on disk is checked against it first (`evidence`).
pub(super) fn finish(root: &Utf8Path, record: &Record, ours: bool) -> Result<(), CellgenError> {
    let recovery = |message| CellgenError::Recovery {
        path: root.join(JOURNAL),
        message,
    };
    let steps = if ours {
        evidence::own_finish_steps(record)
    } else {
        evidence::steps(root, record).map_err(recovery)?
    };
    if let Some(message) = evidence::execute(root, &steps) {
        return Err(recovery(message));
    }
    // The backups must be gone for good before the journal that names them is.
    barrier(root, record, false);
    remove_journal(root, record).map_err(recovery)
}

fn remove_journal(root: &Utf8Path, record: &Record) -> Result<(), String> {
    let _ = disk::remove_file(root.join(JOURNAL_TMP));
    match disk::remove_file(root.join(JOURNAL)) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot remove the journal: {e}")),
    }
    if record.dirs.first().map(String::as_str) == Some(JOURNAL_DIR) {
        let _ = disk::remove_dir(root.join(JOURNAL_DIR));
    }
    sync_dir(root);
    Ok(())
}

/// A journal a killed apply left, as a command that only reads reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    pub journal: Utf8PathBuf,
    /// The command that left it and its pid, if the journal says (it may not be readable).
    pub command: Option<(String, u32)>,
}

/// Whether a killed apply left a journal under `root`: a repair is pending. (A journal's
/// temporary file alone is not: nothing else had been touched yet, and the next command that
/// writes removes it.)
pub fn pending(root: &Utf8Path) -> Option<Pending> {
    let path = root.join(JOURNAL);
    if !exists(&path) {
        return None;
    }
    let command = disk::read(&path)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Record>(&bytes).ok())
        .map(|r| (r.command, r.pid));
    Some(Pending {
        journal: path,
        command,
    })
}

/// Whether a killed apply left the start of a journal (its temporary file) under `root`.
pub fn started(root: &Utf8Path) -> bool {
    exists(&root.join(JOURNAL_TMP))
}

/// Repairs what a killed apply left: rolls it back, or finishes it if it had committed; only once
/// the journal proved it is cellgen's own (`evidence`), else nothing is done and the error names
/// what did not match. Call with the write lock held, before reading anything else of the
/// repository.
pub fn recover(root: &Utf8Path) -> Result<Option<Recovered>, CellgenError> {
    confined(root)?;
    let path = root.join(JOURNAL);
    let text = match disk::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Killed while writing the first journal: nothing else had been touched yet.
            let tmp = root.join(JOURNAL_TMP);
            if !exists(&tmp) {
                return Ok(None);
            }
            disk::remove_file(&tmp).map_err(|source| CellgenError::Write {
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
    let unproven = |problem: String| CellgenError::JournalUnproven {
        path: path.to_path_buf(),
        problem,
    };
    let record: Record = serde_json::from_slice(&text)
        .map_err(|e| unproven(format!("it is not a journal cellgen can read ({e})")))?;
    evidence::check_names(root, &record).map_err(unproven)?;
    evidence::check_untracked(root, &record).map_err(unproven)?;
    // Decided before anything is done: a journal that does not match is not obeyed at all.
    evidence::steps(root, &record).map_err(unproven)?;
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
            finish(root, &record, false)?;
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
