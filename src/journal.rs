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
//! A failure or a SIGINT/SIGTERM/SIGHUP (deferred by `crate::signals`) before step 4 undoes
//! everything: backups are renamed back, created files and directories and every temporary file
//! are removed. After step 4 the plan is finished instead. The next cellgen command (any command,
//! under the lock, before it reads anything) finds a journal a killed process left and does the
//! same: `recover`. Undoing needs no memory of how far the apply got: what exists on disk says it.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::CellgenError;
use crate::signals::Deferred;

pub const JOURNAL_DIR: &str = ".cellgen";
pub const JOURNAL: &str = ".cellgen/journal";
const JOURNAL_TMP: &str = ".cellgen/journal.tmp";

/// One change to apply: `contents` None deletes the file.
#[derive(Debug, Clone)]
pub struct Change {
    /// Path relative to the canonical root, links already resolved.
    pub path: PathBuf,
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
    /// The old file's backup (none for a creation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    backup: Option<String>,
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
pub fn apply(root: &Path, changes: &[Change]) -> Result<(), CellgenError> {
    if changes.is_empty() {
        return Ok(());
    }
    confined(root)?;
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
fn plan_record(root: &Path, changes: &[Change]) -> Result<Record, CellgenError> {
    let pid = std::process::id();
    let mut dirs: Vec<String> = Vec::new();
    if !root.join(JOURNAL_DIR).exists() {
        dirs.push(JOURNAL_DIR.into());
    }
    let mut ops = Vec::new();
    for change in changes {
        let path = rel_string(&change.path)?;
        let mut missing = Vec::new();
        let mut dir = change.path.parent();
        while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
            if root.join(d).exists() {
                break;
            }
            missing.push(rel_string(d)?);
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
        ops.push(Op { path, temp, backup });
    }
    Ok(Record {
        cellgen: crate::scaffold::VERSION.into(),
        pid,
        command: command_line(),
        state: State::Applying,
        dirs,
        ops,
    })
}

fn rel_string(path: &Path) -> Result<String, CellgenError> {
    path.to_str()
        .map(str::to_string)
        .ok_or_else(|| CellgenError::InvalidFile {
            path: path.to_path_buf(),
            message: "the path is not valid UTF-8; cellgen only writes UTF-8 paths".into(),
        })
}

/// `.<name>.cellgen-<pid>.<ext>` next to the target, with a counter if that exists.
fn free_name(root: &Path, target: &Path, pid: u32, ext: &str) -> Result<String, CellgenError> {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for n in 0.. {
        let suffix = if n == 0 {
            String::new()
        } else {
            format!("-{n}")
        };
        let candidate = target.with_file_name(format!(".{name}.cellgen-{pid}{suffix}.{ext}"));
        if fs::symlink_metadata(root.join(&candidate)).is_err() {
            return rel_string(&candidate);
        }
    }
    unreachable!("an unbounded counter always finds a free name")
}

fn command_line() -> String {
    let mut args = std::env::args();
    let program = args
        .next()
        .map(|p| {
            Path::new(&p)
                .file_name()
                .map_or(p.clone(), |n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "cellgen".into());
    std::iter::once(program)
        .chain(args)
        .collect::<Vec<_>>()
        .join(" ")
}

fn write_err(root: &Path, rel: &str) -> impl FnOnce(std::io::Error) -> CellgenError {
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
    root: &Path,
    record: &mut Record,
    changes: &[Change],
    signals: &Deferred,
) -> Result<(), CellgenError> {
    if record.dirs.first().map(String::as_str) == Some(JOURNAL_DIR) {
        fs::create_dir(root.join(JOURNAL_DIR)).map_err(write_err(root, JOURNAL_DIR))?;
    }
    write_record(root, record)?;
    pause("journal", signals);
    interrupted(signals)?;

    for dir in record.dirs.iter().filter(|d| *d != JOURNAL_DIR) {
        fs::create_dir(root.join(dir)).map_err(write_err(root, dir))?;
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
            (Some(temp), _) => fs::rename(root.join(temp), &target),
            (None, Some(backup)) => fs::rename(&target, root.join(backup)),
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
    finish(root, record)
}

/// Writes `contents` to a new file at `path`, with `mode` (`barrier` makes it durable).
fn stage(path: &Path, contents: &[u8], mode: Option<u32>) -> std::io::Result<()> {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    #[cfg(unix)]
    if let Some(mode) = mode {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(fs::Permissions::from_mode(mode))?;
    }
    #[cfg(not(unix))]
    let _ = mode;
    file.write_all(contents)
}

/// A second name for the file about to be replaced; a copy where hard links are not supported.
fn make_backup(target: &Path, backup: &Path) -> std::io::Result<()> {
    if fs::hard_link(target, backup).is_ok() {
        return Ok(());
    }
    fs::copy(target, backup).map(|_| ())
}

/// Makes everything the apply wrote so far durable before its next step. On Linux that is one
/// `syncfs` per filesystem the plan touches: a schema bump over 300 cells would otherwise cost
/// some 600 file and 300 directory fsyncs. Elsewhere each staged file (with `files`) and each
/// touched directory is fsynced.
fn barrier(root: &Path, record: &Record, files: bool) {
    let dirs = touched_dirs(root, record);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        use std::os::unix::io::AsRawFd;
        let _ = files;
        let mut synced = std::collections::BTreeSet::new();
        for dir in dirs.iter().map(PathBuf::as_path).chain([root]) {
            let Ok(meta) = fs::metadata(dir) else {
                continue;
            };
            if synced.insert(meta.dev())
                && let Ok(handle) = fs::File::open(dir)
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
                if let Ok(file) = fs::File::open(root.join(temp)) {
                    let _ = file.sync_all();
                }
            }
        }
        sync_dirs(&dirs);
    }
}

/// Writes the journal atomically: a temporary file, fsynced, renamed over it, directory fsynced.
fn write_record(root: &Path, record: &Record) -> Result<(), CellgenError> {
    let mut text = serde_json::to_string_pretty(record).expect("a journal always serialises");
    text.push('\n');
    let tmp = root.join(JOURNAL_TMP);
    let result = (|| {
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        fs::rename(&tmp, root.join(JOURNAL))
    })();
    if let Err(source) = result {
        let _ = fs::remove_file(&tmp);
        return Err(CellgenError::Write {
            path: root.join(JOURNAL),
            source,
        });
    }
    sync_dir(&root.join(JOURNAL_DIR));
    Ok(())
}

/// Every directory whose entries the apply changes.
fn touched_dirs(root: &Path, record: &Record) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = record
        .ops
        .iter()
        .filter_map(|op| root.join(&op.path).parent().map(Path::to_path_buf))
        .chain(
            record
                .dirs
                .iter()
                .filter_map(|d| root.join(d).parent().map(Path::to_path_buf)),
        )
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

#[cfg(not(target_os = "linux"))]
fn sync_dirs(dirs: &[PathBuf]) {
    for dir in dirs {
        sync_dir(dir);
    }
}

/// Makes a directory's entries durable; not every filesystem supports it, which is no error.
fn sync_dir(dir: &Path) {
    if let Ok(file) = fs::File::open(dir) {
        let _ = file.sync_all();
    }
}

fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

#[cfg(unix)]
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (fs::symlink_metadata(a), fs::symlink_metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_a: &Path, _b: &Path) -> bool {
    false
}

/// Puts everything back as it was before the apply, from what is on disk. Best effort: a step
/// that fails does not stop the others. Returns the first failure.
fn undo(root: &Path, record: &Record) -> Option<String> {
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
            note(format!("cannot remove {}: {e}", temp.display()));
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
fn finish(root: &Path, record: &Record) -> Result<(), CellgenError> {
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

fn remove_journal(root: &Path, record: &Record) -> Result<(), String> {
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
fn remove_empty_parents(path: &Path, root: &Path) {
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d == root || !d.starts_with(root) || fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

/// The journal's directory must not lead out of the repository either.
fn confined(root: &Path) -> Result<(), CellgenError> {
    crate::fsguard::Root::new(root)
        .resolve(Path::new(JOURNAL))
        .map(|_| ())
}

/// Whether a killed apply left a journal (or the start of one) under `root`.
pub fn pending(root: &Path) -> bool {
    exists(&root.join(JOURNAL)) || exists(&root.join(JOURNAL_TMP))
}

/// Repairs what a killed apply left: rolls it back, or finishes it if it had committed. Call with
/// the write lock held, before reading anything else of the repository.
pub fn recover(root: &Path) -> Result<Option<Recovered>, CellgenError> {
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
            fs::remove_file(&tmp).map_err(|source| CellgenError::Write { path: tmp, source })?;
            return Ok(Some(Recovered {
                command: "an earlier cellgen".into(),
                pid: 0,
                changes: 0,
                rolled_back: true,
            }));
        }
        Err(source) => return Err(CellgenError::Read { path, source }),
    };
    let record: Record = serde_json::from_slice(&text).map_err(|e| CellgenError::Recovery {
        path: path.clone(),
        message: format!("it is not a journal cellgen can read ({e})"),
    })?;
    for rel in record
        .ops
        .iter()
        .flat_map(|op| [Some(&op.path), op.temp.as_ref(), op.backup.as_ref()])
        .flatten()
        .chain(&record.dirs)
    {
        if !crate::config::is_relative_clean(rel) {
            return Err(CellgenError::Recovery {
                path,
                message: format!("it names `{rel}`, which is not a path inside the repository"),
            });
        }
    }
    let _signals = Deferred::start();
    let rolled_back = match record.state {
        State::Applying => {
            if let Some(message) = undo(root, &record) {
                return Err(CellgenError::Recovery { path, message });
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
mod tests {
    use super::*;

    fn change(path: &str, contents: Option<&str>, existed: bool) -> Change {
        Change {
            path: path.into(),
            contents: contents.map(|c| c.as_bytes().to_vec()),
            mode: None,
            existed,
        }
    }

    fn listing(root: &Path) -> Vec<String> {
        let mut out = Vec::new();
        for entry in walk(root) {
            let rel = entry
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let kind = if entry.is_dir() {
                "/".to_string()
            } else {
                format!("={}", fs::read_to_string(&entry).unwrap())
            };
            out.push(format!("{rel}{kind}"));
        }
        out.sort();
        out
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                out.extend(walk(&path));
            }
            out.push(path);
        }
        out
    }

    #[test]
    fn every_interruption_point_of_a_record_undoes_to_the_original() {
        let changes = [
            change("a.txt", Some("new a"), true),
            change("gone.txt", None, true),
            change("d/e/new.txt", Some("created"), false),
        ];
        // Replays the apply step by step, and at each step undoes from the disk alone.
        for stop in 0..=9 {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            fs::write(root.join("a.txt"), "old a").unwrap();
            fs::write(root.join("gone.txt"), "bye").unwrap();
            let original = listing(root);
            let record = plan_record(root, &changes).unwrap();
            let mut step = 0;
            let mut go = |f: &mut dyn FnMut()| {
                if step < stop {
                    f();
                }
                step += 1;
            };
            go(&mut || fs::create_dir(root.join(JOURNAL_DIR)).unwrap());
            go(&mut || write_record(root, &record).unwrap());
            go(&mut || {
                for d in record.dirs.iter().skip(1) {
                    fs::create_dir(root.join(d)).unwrap();
                }
            });
            for (op, c) in record.ops.iter().zip(&changes) {
                if let (Some(t), Some(bytes)) = (&op.temp, &c.contents) {
                    let t = root.join(t);
                    let bytes = bytes.clone();
                    go(&mut || stage(&t, &bytes, None).unwrap());
                }
            }
            go(&mut || {
                make_backup(
                    &root.join("a.txt"),
                    &root.join(record.ops[0].backup.as_ref().unwrap()),
                )
                .unwrap()
            });
            for op in &record.ops {
                let op = op.clone();
                go(&mut || match (&op.temp, &op.backup) {
                    (Some(t), _) => fs::rename(root.join(t), root.join(&op.path)).unwrap(),
                    (None, Some(b)) => fs::rename(root.join(&op.path), root.join(b)).unwrap(),
                    _ => {}
                });
            }
            let recovered = recover(root).unwrap();
            assert_eq!(recovered.is_some(), stop >= 2, "stop {stop}");
            if stop == 1 {
                // Only the journal directory exists: that is all a kill can leave so early.
                fs::remove_dir(root.join(JOURNAL_DIR)).unwrap();
            }
            assert_eq!(listing(root), original, "after stopping at step {stop}");
        }
    }

    #[test]
    fn a_committed_journal_is_finished() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("x/y")).unwrap();
        fs::write(root.join("x/y/gone.txt"), "bye").unwrap();
        fs::write(root.join("keep.txt"), "old").unwrap();
        let changes = [
            change("x/y/gone.txt", None, true),
            change("keep.txt", Some("new"), true),
        ];
        let mut record = plan_record(root, &changes).unwrap();
        fs::create_dir(root.join(JOURNAL_DIR)).unwrap();
        fs::write(root.join(record.ops[1].temp.as_ref().unwrap()), "new").unwrap();
        make_backup(
            &root.join("keep.txt"),
            &root.join(record.ops[1].backup.as_ref().unwrap()),
        )
        .unwrap();
        fs::rename(
            root.join("x/y/gone.txt"),
            root.join(record.ops[0].backup.as_ref().unwrap()),
        )
        .unwrap();
        fs::rename(
            root.join(record.ops[1].temp.as_ref().unwrap()),
            root.join("keep.txt"),
        )
        .unwrap();
        record.state = State::Committed;
        write_record(root, &record).unwrap();
        let recovered = recover(root).unwrap().unwrap();
        assert!(!recovered.rolled_back);
        assert_eq!(listing(root), ["keep.txt=new"]);
    }
}
