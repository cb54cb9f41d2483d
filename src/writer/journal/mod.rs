//! Applying a plan so that it is never left half done, even by SIGKILL or a power loss.
//!
//! Before the first byte of the first file is written, `.cellgen/journal` lists every operation
//! with the names of its temporary file and its backup, written atomically (a `.tmp` file,
//! fsynced, renamed into place, directory fsynced). Then:
//!
//! 1. the directories the plan needs are created and each new content is staged in its temporary
//!    file (with the mode of the file it replaces);
//! 2. each file to be replaced gets a backup: a hard link to it (so mode, owner and inode stay);
//!    all of it is made durable (`barrier`);
//! 3. the renames: temporary file over target, or, to delete, target to its backup; durable;
//! 4. the journal is rewritten with `"state": "committed"`;
//! 5. backups and the journal are removed.
//!
//! A failure or a SIGINT/SIGTERM/SIGHUP (deferred by `crate::writer::signals`) before step 4 undoes
//! everything: backups are renamed back, created files and directories and every temporary file
//! are removed. After step 4 the plan is finished instead. The next cellgen command that writes
//! (under the lock, before it reads anything) finds a journal a killed process left and does the
//! same: `recover`; a command that only reads never repairs (`pending` tells it to stop). Undoing
//! needs no memory of how far the apply got: what exists on disk says it.
//!
//! The journal records the sha256 of each staged content and of each file it replaces or
//! deletes, so that it proves it is cellgen's own before it is obeyed (`evidence`): a planted or
//! committed journal never makes cellgen touch a file it did not write. Git never sees it:
//! [`GITIGNORE`] names what the commands that set a repository up keep out of it.

use crate::root::disk;
use camino::{Utf8Path, Utf8PathBuf};
use std::io::Write as _;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::CellgenError;
use crate::writer::signals::Deferred;

mod evidence;
mod repair;

pub use repair::{Pending, pending, recover, started};
use repair::{finish, undo};

pub const JOURNAL_DIR: &str = ".cellgen";
pub const JOURNAL: &str = ".cellgen/journal";
const JOURNAL_TMP: &str = ".cellgen/journal.tmp";

/// The Git ignore file beside the journal, and the names in it (relative to its directory): the
/// journal and the file it is written through. The lock is `flock` on the root: no file.
pub const GITIGNORE: &str = ".cellgen/.gitignore";
pub const GITIGNORED: &[&str] = &["/journal", "/journal.tmp"];

/// One change to apply: `contents` None deletes the file.
#[derive(Debug, Clone)]
pub struct Change {
    /// Path relative to the canonical root, links already resolved.
    pub path: Utf8PathBuf,
    pub contents: Option<Vec<u8>>,
    /// Permission bits for the new file (those of the file it replaces).
    pub mode: Option<u32>,
    pub existed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum State {
    Applying,
    Committed,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Op {
    path: String,
    /// The new content's temporary file (none for a deletion).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    temp: Option<String>,
    /// sha256 and length of the content staged in `temp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    temp_sha256: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    temp_size: Option<u64>,
    /// The old file's backup (none for a creation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    backup: Option<String>,
    /// sha256 of the file it replaces or deletes, as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    backup_sha256: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    cellgen: String,
    pid: u32,
    command: String,
    state: State,
    /// Directories this apply creates, parents first.
    dirs: Vec<String>,
    ops: Vec<Op>,
}

/// What `recover` found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    pub command: String,
    pub pid: u32,
    /// Files the interrupted plan would have changed.
    pub changes: usize,
    /// True: every change was undone; false: the plan had been written and was finished.
    pub rolled_back: bool,
}

/// Writes `changes` under `root` (canonical) all or nothing; see the module documentation.
pub fn apply(root: &Utf8Path, changes: &[Change]) -> Result<(), CellgenError> {
    if changes.is_empty() {
        return Ok(());
    }
    confined(root)?;
    for change in changes {
        // The same rule repair applies: a plan never writes under .git/ (a link inside the
        // repository resolved there, say), and never through a link.
        evidence::safe_path(root, change.path.as_str()).map_err(|why| {
            CellgenError::InvalidFile {
                path: root.join(&change.path),
                message: format!("cellgen will not write it: {why}; nothing was written"),
            }
        })?;
    }
    let signals = Deferred::start();
    let mut record = plan_record(root, changes)?;
    let result = run(root, &mut record, changes, &signals);
    match result {
        Ok(()) => match signals.take() {
            Some(signal) => Err(CellgenError::Interrupted {
                signal,
                applied: true,
            }),
            None => Ok(()),
        },
        Err(err) => {
            undo(root, &record);
            match (signals.take(), err) {
                (_, err @ CellgenError::Interrupted { .. }) => Err(err),
                (Some(signal), _) => Err(CellgenError::Interrupted {
                    signal,
                    applied: false,
                }),
                (None, err) => Err(err),
            }
        }
    }
}

/// Names every temporary file and backup (unused names, so undo never touches a file that is not
/// ours) and every directory to create.
fn plan_record(root: &Utf8Path, changes: &[Change]) -> Result<Record, CellgenError> {
    let pid = std::process::id();
    let mut dirs: Vec<String> = Vec::new();
    if !disk::exists(root.join(JOURNAL_DIR)) {
        dirs.push(JOURNAL_DIR.into());
    }
    let mut ops = Vec::new();
    for change in changes {
        let path = change.path.to_string();
        let mut missing = Vec::new();
        let mut dir = change.path.parent();
        while let Some(d) = dir.filter(|d| !d.as_str().is_empty()) {
            if disk::exists(root.join(d)) {
                break;
            }
            missing.push(d.to_string());
            dir = d.parent();
        }
        for d in missing.into_iter().rev() {
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
        let temp = change
            .contents
            .as_ref()
            .map(|_| free_name(root, &change.path, pid, "tmp"))
            .transpose()?;
        let backup = change
            .existed
            .then(|| free_name(root, &change.path, pid, "bak"))
            .transpose()?;
        // What the backup will hold: the file as it is now (under the lock, nothing changes it).
        let backup_sha256 = if change.existed {
            let bytes =
                disk::read(root.join(&change.path)).map_err(|source| CellgenError::Read {
                    path: root.join(&change.path),
                    source,
                })?;
            Some(evidence::sha256(&bytes))
        } else {
            None
        };
        ops.push(Op {
            path,
            temp,
            temp_sha256: change.contents.as_deref().map(evidence::sha256),
            temp_size: change.contents.as_ref().map(|c| c.len() as u64),
            backup,
            backup_sha256,
        });
    }
    Ok(Record {
        // The version of the program that writes the journal (the repair names it).
        cellgen: env!("CARGO_PKG_VERSION").into(),
        pid,
        command: command_line(),
        state: State::Applying,
        dirs,
        ops,
    })
}

/// `.<name>.cellgen-<pid>.<ext>` next to the target, with a counter if that exists.
fn free_name(
    root: &Utf8Path,
    target: &Utf8Path,
    pid: u32,
    ext: &str,
) -> Result<String, CellgenError> {
    let name = target.file_name().map(str::to_owned).unwrap_or_default();
    for n in 0.. {
        let suffix = if n == 0 {
            String::new()
        } else {
            format!("-{n}")
        };
        let candidate = target.with_file_name(format!(".{name}.cellgen-{pid}{suffix}.{ext}"));
        if disk::symlink_metadata(root.join(&candidate)).is_err() {
            return Ok(candidate.into_string());
        }
    }
    unreachable!("an unbounded counter always finds a free name")
}

fn command_line() -> String {
    let mut args = std::env::args();
    let program = args
        .next()
        .map(|p| {
            Utf8Path::new(&p)
                .file_name()
                .map_or(p.clone(), str::to_owned)
        })
        .unwrap_or_else(|| "cellgen".into());
    std::iter::once(program)
        .chain(args)
        .collect::<Vec<_>>()
        .join(" ")
}

fn write_err(root: &Utf8Path, rel: &str) -> impl FnOnce(std::io::Error) -> CellgenError {
    let path = root.join(rel);
    move |source| CellgenError::Write { path, source }
}

fn interrupted(signals: &Deferred) -> Result<(), CellgenError> {
    match signals.pending() {
        Some(signal) => Err(CellgenError::Interrupted {
            signal,
            applied: false,
        }),
        None => Ok(()),
    }
}

fn run(
    root: &Utf8Path,
    record: &mut Record,
    changes: &[Change],
    signals: &Deferred,
) -> Result<(), CellgenError> {
    if record.dirs.first().map(String::as_str) == Some(JOURNAL_DIR) {
        disk::create_dir(root.join(JOURNAL_DIR)).map_err(write_err(root, JOURNAL_DIR))?;
    }
    write_record(root, record)?;
    pause("journal", signals);
    interrupted(signals)?;

    for dir in record.dirs.iter().filter(|d| *d != JOURNAL_DIR) {
        disk::create_dir(root.join(dir)).map_err(write_err(root, dir))?;
    }
    for (op, change) in record.ops.iter().zip(changes) {
        if let (Some(temp), Some(contents)) = (&op.temp, &change.contents) {
            // The journal already names this file: whatever happens from its first byte on,
            // undo (here or in the next cellgen) removes it.
            stage(&root.join(temp), contents, change.mode).map_err(write_err(root, &op.path))?;
            interrupted(signals)?;
        }
    }
    pause("staged", signals);
    interrupted(signals)?;

    for op in &record.ops {
        if let (Some(backup), Some(_)) = (&op.backup, &op.temp) {
            make_backup(&root.join(&op.path), &root.join(backup))
                .map_err(write_err(root, &op.path))?;
        }
    }
    barrier(root, record, true);
    interrupted(signals)?;

    for (i, op) in record.ops.iter().enumerate() {
        let target = root.join(&op.path);
        match (&op.temp, &op.backup) {
            (Some(temp), _) => disk::rename(root.join(temp), &target),
            (None, Some(backup)) => disk::rename(&target, root.join(backup)),
            (None, None) => Ok(()),
        }
        .map_err(write_err(root, &op.path))?;
        pause(&format!("renamed:{}", i + 1), signals);
        interrupted(signals)?;
    }
    barrier(root, record, false);
    record.state = State::Committed;
    write_record(root, record)?;
    // From here on the plan is applied: a signal waits until the cleanup is done.
    pause("committed", signals);
    finish(root, record, true)
}

/// Writes `contents` to a new file at `path`, with `mode` (`barrier` makes it durable).
fn stage(path: &Utf8Path, contents: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    disk::create_new(path, mode)?.write_all(contents)
}

/// A second name for the file about to be replaced; a copy where hard links are not supported.
fn make_backup(target: &Utf8Path, backup: &Utf8Path) -> std::io::Result<()> {
    if disk::hard_link(target, backup).is_ok() {
        return Ok(());
    }
    disk::copy(target, backup).map(|_| ())
}

/// Makes everything the apply wrote so far durable before its next step. On Linux that is one
/// `syncfs` per filesystem the plan touches: a schema bump over 300 cells would otherwise cost
/// some 600 file and 300 directory fsyncs. Elsewhere each staged file (with `files`) and each
/// touched directory is fsynced.
fn barrier(root: &Utf8Path, record: &Record, files: bool) {
    let dirs = touched_dirs(root, record);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        use std::os::unix::io::AsRawFd;
        let _ = files;
        let mut synced = std::collections::BTreeSet::new();
        for dir in dirs.iter().map(Utf8PathBuf::as_path).chain([root]) {
            let Ok(meta) = disk::metadata(dir) else {
                continue;
            };
            if synced.insert(meta.dev())
                && let Ok(handle) = disk::open(dir)
            {
                // SAFETY: syncfs only reads the descriptor, which stays open for the call.
                unsafe { libc::syncfs(handle.as_raw_fd()) };
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        if files {
            for temp in record.ops.iter().filter_map(|op| op.temp.as_ref()) {
                if let Ok(file) = disk::open(root.join(temp)) {
                    let _ = file.sync_all();
                }
            }
        }
        sync_dirs(&dirs);
    }
}

/// Writes the journal atomically: a temporary file, fsynced, renamed over it, directory fsynced.
fn write_record(root: &Utf8Path, record: &Record) -> Result<(), CellgenError> {
    let mut text = serde_json::to_string_pretty(record).expect("a journal always serialises");
    text.push('\n');
    let tmp = root.join(JOURNAL_TMP);
    let result = (|| {
        // A new file, never one found there: a link planted at this name would be followed.
        match disk::remove_file(&tmp) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let mut file = disk::create_new(&tmp, None)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        disk::rename(&tmp, root.join(JOURNAL))
    })();
    if let Err(source) = result {
        let _ = disk::remove_file(&tmp);
        return Err(CellgenError::Write {
            path: root.join(JOURNAL),
            source,
        });
    }
    sync_dir(&root.join(JOURNAL_DIR));
    Ok(())
}

/// Every directory whose entries the apply changes.
fn touched_dirs(root: &Utf8Path, record: &Record) -> Vec<Utf8PathBuf> {
    let mut dirs: Vec<Utf8PathBuf> = record
        .ops
        .iter()
        .filter_map(|op| root.join(&op.path).parent().map(Utf8Path::to_path_buf))
        .chain(
            record
                .dirs
                .iter()
                .filter_map(|d| root.join(d).parent().map(Utf8Path::to_path_buf)),
        )
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

#[cfg(not(target_os = "linux"))]
fn sync_dirs(dirs: &[Utf8PathBuf]) {
    for dir in dirs {
        sync_dir(dir);
    }
}

/// Makes a directory's entries durable; not every filesystem supports it, which is no error.
fn sync_dir(dir: &Utf8Path) {
    disk::sync_dir(dir);
}

fn exists(path: &Utf8Path) -> bool {
    disk::symlink_metadata(path).is_ok()
}

/// The journal's directory must be a real directory of the repository: not a link, even one
/// that stays inside (to `.git/`, say).
fn confined(root: &Utf8Path) -> Result<(), CellgenError> {
    // A link out of the repository is the error that names it and its target.
    crate::root::fsguard::Root::new(root).resolve(Utf8Path::new(JOURNAL))?;
    evidence::safe_path(root, JOURNAL).map_err(|why| CellgenError::InvalidFile {
        path: root.join(JOURNAL_DIR),
        message: format!(
            "cellgen keeps its journal in this directory, which must be a plain directory of the repository ({why}); nothing was written"
        ),
    })
}

/// Test hook, inert unless `CELLGEN_TEST_PAUSE` names this point (`journal`, `staged`,
/// `renamed:<n>`, `committed`): says so on stderr, then waits (up to a minute) until a signal
/// arrives, so a test can interrupt or kill the apply at an exact step.
fn pause(point: &str, signals: &Deferred) {
    let Ok(wanted) = std::env::var("CELLGEN_TEST_PAUSE") else {
        return;
    };
    if wanted != point {
        return;
    }
    eprintln!("cellgen-test-pause: {point}");
    let until = Instant::now() + Duration::from_secs(60);
    while signals.pending().is_none() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests;
