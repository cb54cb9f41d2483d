//! What a journal must prove before cellgen obeys it.
//!
//! A journal is only evidence of cellgen's own interrupted apply, never an instruction: a planted
//! or committed one must not make cellgen delete, rename or overwrite a file it did not write.
//! So each operation must name paths inside the root (never under `.git/`, never through a
//! symbolic link), temporary files and backups whose names cellgen's naming made (beside their
//! target, `.<name>.cellgen-<pid>[-<n>].tmp|bak`), and every file on disk must be one of the
//! states an apply passes through, with the content hashes the journal recorded: the target as
//! it was (`backup_sha256`) or as staged (`temp_sha256`). Only then does repair act, and it acts
//! only on those files: it removes a temporary file, a backup, or a target whose content is
//! exactly what cellgen staged, and renames a backup back. Any other state is a mismatch: nothing
//! is done, and the caller names the journal and what did not match.

use crate::root::disk;
use camino::{Utf8Path, Utf8PathBuf};

use sha2::{Digest, Sha256};

use super::{Op, Record, State};

/// One action of a repair, on paths relative to the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Step {
    Remove(String),
    /// The backup back to its target's name.
    Restore {
        backup: String,
        target: String,
    },
    /// After a deletion is finished: directories it emptied.
    RemoveEmptyParents(String),
}

/// A file as repair finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    Missing,
    File {
        sha256: String,
        len: u64,
        id: FileId,
    },
    /// A directory, a link, a device: never something an apply leaves.
    Other(&'static str),
}

type FileId = (u64, u64);

pub(super) fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

#[cfg(unix)]
fn file_id(meta: &disk::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn file_id(_meta: &disk::Metadata) -> FileId {
    (0, 0)
}

fn look(root: &Utf8Path, rel: &str) -> Seen {
    let path = root.join(rel);
    let Ok(meta) = disk::symlink_metadata(&path) else {
        return Seen::Missing;
    };
    if meta.file_type().is_symlink() {
        return Seen::Other("a symbolic link");
    }
    if !meta.is_file() {
        return Seen::Other(if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file"
        });
    }
    match disk::read(&path) {
        Ok(bytes) => Seen::File {
            sha256: sha256(&bytes),
            len: bytes.len() as u64,
            id: file_id(&meta),
        },
        Err(_) => Seen::Other("a file cellgen cannot read"),
    }
}

/// Whether `rel` is a path repair may touch: relative, plain components only, nothing under
/// `.git` (in any letter case), and no symbolic link on the way under `root`.
pub(super) fn safe_path(root: &Utf8Path, rel: &str) -> Result<(), String> {
    let path = Utf8Path::new(rel);
    // Textually: camino's components() would drop a `.` in the middle, or a doubled `/`.
    let plain = path.is_relative()
        && !rel.contains('\\')
        && rel
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..");
    if !plain {
        return Err(format!("`{rel}` is not a plain path inside the repository"));
    }
    if path
        .components()
        .any(|c| c.as_str().eq_ignore_ascii_case(".git"))
    {
        return Err(format!(
            "`{rel}` is under .git/, which cellgen never writes"
        ));
    }
    let mut at = root.to_path_buf();
    for part in path.components() {
        at.push(part.as_str());
        match disk::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(format!(
                    "`{rel}` leads through the symbolic link {} (cellgen writes real paths only)",
                    at.strip_prefix(root).unwrap_or(&at)
                ));
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    Ok(())
}

/// Whether `name` is one cellgen's naming made for `target` in an apply by `pid`:
/// `.<file name>.cellgen-<pid>[-<n>].<ext>` in the target's directory.
fn our_name(target: &str, name: &str, pid: u32, ext: &str) -> bool {
    let target = Utf8Path::new(target);
    let name = Utf8Path::new(name);
    let (Some(file), Some(given)) = (target.file_name(), name.file_name()) else {
        return false;
    };
    if name.parent() != target.parent() {
        return false;
    }
    let Some(rest) = given
        .strip_prefix(&format!(".{file}.cellgen-{pid}"))
        .and_then(|r| r.strip_suffix(&format!(".{ext}")))
    else {
        return false;
    };
    rest.is_empty()
        || rest
            .strip_prefix('-')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Checks every path and name the journal gives, before anything on disk is looked at.
pub(super) fn check_names(root: &Utf8Path, record: &Record) -> Result<(), String> {
    for op in &record.ops {
        safe_path(root, &op.path)?;
        if op.temp.is_none() && op.backup.is_none() {
            return Err(format!(
                "its entry for `{}` names neither a temporary file nor a backup",
                op.path
            ));
        }
        for (name, hash, ext) in [
            (&op.temp, &op.temp_sha256, "tmp"),
            (&op.backup, &op.backup_sha256, "bak"),
        ] {
            let Some(name) = name else { continue };
            safe_path(root, name)?;
            if !our_name(&op.path, name, record.pid, ext) {
                return Err(format!(
                    "it names `{name}` for `{}`, a name cellgen's apply (pid {}) does not make (`.<name>.cellgen-{}.{ext}` beside it)",
                    op.path, record.pid, record.pid
                ));
            }
            if hash
                .as_deref()
                .is_none_or(|h| h.len() != 64 || !h.bytes().all(|b| b.is_ascii_hexdigit()))
            {
                return Err(format!(
                    "it gives no sha256 for `{name}`: this cellgen did not write it (an older cellgen recorded no hashes), or no cellgen did"
                ));
            }
        }
    }
    for dir in &record.dirs {
        safe_path(root, dir)?;
        let ancestor = dir == super::JOURNAL_DIR
            || record
                .ops
                .iter()
                .any(|op| Utf8Path::new(&op.path).starts_with(dir) && op.path != *dir);
        if !ancestor {
            return Err(format!(
                "it names the directory `{dir}`, which holds none of the files it changes"
            ));
        }
    }
    Ok(())
}

/// A journal, temporary file or backup Git tracks: committed, so another machine's (or a
/// planted) file, never this machine's evidence of its own interrupted apply. Where Git cannot
/// tell (no work tree, no git), the disk's evidence alone decides.
pub(super) fn check_untracked(root: &Utf8Path, record: &Record) -> Result<(), String> {
    let mut args: Vec<&str> = vec![
        "--literal-pathspecs",
        "ls-files",
        "-z",
        "--",
        super::JOURNAL,
    ];
    for op in &record.ops {
        args.extend(op.temp.as_deref());
        args.extend(op.backup.as_deref());
    }
    let Ok(out) = crate::root::source::git_output(root, &args) else {
        return Ok(());
    };
    match out.split(|b| *b == 0).find(|p| !p.is_empty()) {
        Some(path) => Err(format!(
            "`{}` is committed to Git, and a journal and its files are never committed (they are this machine's evidence of its own interrupted apply)",
            String::from_utf8_lossy(path)
        )),
        None => Ok(()),
    }
}

/// One operation with what is on disk for it.
struct Found<'a> {
    op: &'a Op,
    target: Seen,
    temp: Option<Seen>,
    backup: Option<Seen>,
}

impl Found<'_> {
    fn staged(&self, seen: &Seen) -> bool {
        matches!(seen, Seen::File { sha256, .. } if Some(sha256) == self.op.temp_sha256.as_ref())
    }

    fn original(&self, seen: &Seen) -> bool {
        matches!(seen, Seen::File { sha256, .. } if Some(sha256) == self.op.backup_sha256.as_ref())
    }

    /// A temporary file cut short by the kill while staging: shorter than what was staged.
    fn partly_staged(&self, seen: &Seen) -> bool {
        matches!(seen, Seen::File { len, .. } if self.op.temp_size.is_some_and(|size| *len < size))
    }

    /// Whether this operation's rename has happened (as far as the disk says).
    fn renamed(&self) -> bool {
        match (&self.temp, &self.backup) {
            (Some(Seen::Missing), _) => self.staged(&self.target),
            (None, Some(b)) => *b != Seen::Missing && self.target == Seen::Missing,
            _ => false,
        }
    }

    fn describe(&self, seen: &Seen) -> String {
        match seen {
            Seen::Missing => "missing".into(),
            Seen::File { sha256, .. } => format!("sha256 {}…", short(sha256)),
            Seen::Other(what) => (*what).into(),
        }
    }

    fn mismatch(&self, what: &str, name: &str, seen: &Seen, expected: &str) -> String {
        format!(
            "{what} `{name}` is {} where the journal says {expected}",
            self.describe(seen)
        )
    }

    fn expect_original(&self) -> String {
        match &self.op.backup_sha256 {
            Some(h) => format!("the file it replaced (sha256 {}…)", short(h)),
            None => "no file (it created it)".into(),
        }
    }

    fn expect_staged(&self) -> String {
        match &self.op.temp_sha256 {
            Some(h) => format!("what cellgen staged (sha256 {}…)", short(h)),
            None => "nothing (it deleted it)".into(),
        }
    }
}

fn target_is_original(found: &Found) -> Result<(), String> {
    let ok = match &found.op.backup {
        Some(_) => found.original(&found.target),
        None => found.target == Seen::Missing,
    };
    if ok {
        Ok(())
    } else {
        Err(found.mismatch(
            "the target",
            &found.op.path,
            &found.target,
            &found.expect_original(),
        ))
    }
}

/// The steps that undo (`Applying`) or finish (`Committed`) the apply `record` describes, or
/// what on disk does not match it.
pub(super) fn steps(root: &Utf8Path, record: &Record) -> Result<Vec<Step>, String> {
    let found: Vec<Found> = record
        .ops
        .iter()
        .map(|op| Found {
            op,
            target: look(root, &op.path),
            temp: op.temp.as_deref().map(|t| look(root, t)),
            backup: op.backup.as_deref().map(|b| look(root, b)),
        })
        .collect();
    match record.state {
        State::Applying => {
            // A file cut short is only what a kill while staging (or backing up) leaves, when no
            // rename has happened yet.
            let renamed = found.iter().any(Found::renamed);
            let mut out = Vec::new();
            for f in &found {
                out.extend(undo_steps(f, !renamed)?);
            }
            Ok(out)
        }
        State::Committed => {
            let mut out = Vec::new();
            for f in &found {
                out.extend(finish_steps(f)?);
            }
            Ok(out)
        }
    }
}

fn undo_steps(f: &Found, staging: bool) -> Result<Vec<Step>, String> {
    let op = f.op;
    let temp_ok = |seen: &Seen| f.staged(seen) || (staging && f.partly_staged(seen));
    match (&op.temp, &op.backup) {
        // A replacement.
        (Some(temp), Some(backup)) => {
            let (t, b) = (f.temp.as_ref().unwrap(), f.backup.as_ref().unwrap());
            match (t, b) {
                (Seen::Missing, Seen::Missing) => target_is_original(f).map(|()| Vec::new()),
                (t, Seen::Missing) if temp_ok(t) => {
                    target_is_original(f)?;
                    Ok(vec![Step::Remove(temp.clone())])
                }
                (t, Seen::File { id, len, .. }) if f.staged(t) => {
                    target_is_original(f)?;
                    let same = matches!(&f.target, Seen::File { id: tid, .. } if tid == id);
                    let copy_cut_short =
                        staging && matches!(&f.target, Seen::File { len: tlen, .. } if len < tlen);
                    if same || f.original(b) || copy_cut_short {
                        Ok(vec![
                            Step::Remove(backup.clone()),
                            Step::Remove(temp.clone()),
                        ])
                    } else {
                        Err(f.mismatch("the backup", backup, b, &f.expect_original()))
                    }
                }
                (Seen::Missing, b) if f.original(b) => {
                    if f.target == Seen::Missing || f.staged(&f.target) {
                        Ok(vec![Step::Restore {
                            backup: backup.clone(),
                            target: op.path.clone(),
                        }])
                    } else {
                        Err(f.mismatch("the target", &op.path, &f.target, &f.expect_staged()))
                    }
                }
                (Seen::Missing, b) => {
                    Err(f.mismatch("the backup", backup, b, &f.expect_original()))
                }
                (t, _) => Err(f.mismatch("the temporary file", temp, t, &f.expect_staged())),
            }
        }
        // A creation.
        (Some(temp), None) => {
            let t = f.temp.as_ref().unwrap();
            match (t, &f.target) {
                (Seen::Missing, Seen::Missing) => Ok(Vec::new()),
                (Seen::Missing, target) if f.staged(target) => {
                    Ok(vec![Step::Remove(op.path.clone())])
                }
                (Seen::Missing, target) => Err(format!(
                    "{}; the temporary file `{temp}` it names does not exist",
                    f.mismatch("the target", &op.path, target, &f.expect_staged())
                )),
                (t, Seen::Missing) if temp_ok(t) => Ok(vec![Step::Remove(temp.clone())]),
                (t, Seen::Missing) => {
                    Err(f.mismatch("the temporary file", temp, t, &f.expect_staged()))
                }
                (_, target) => Err(f.mismatch(
                    "the target",
                    &op.path,
                    target,
                    "no file (the apply was to create it)",
                )),
            }
        }
        // A deletion.
        (None, Some(backup)) => {
            let b = f.backup.as_ref().unwrap();
            match (b, &f.target) {
                (Seen::Missing, Seen::Missing) => Ok(Vec::new()),
                (Seen::Missing, _) => target_is_original(f).map(|()| Vec::new()),
                (b, Seen::Missing) if f.original(b) => Ok(vec![Step::Restore {
                    backup: backup.clone(),
                    target: op.path.clone(),
                }]),
                (b, Seen::Missing) => {
                    Err(f.mismatch("the backup", backup, b, &f.expect_original()))
                }
                (_, target) => Err(f.mismatch(
                    "the target",
                    &op.path,
                    target,
                    "no file (renamed to its backup)",
                )),
            }
        }
        (None, None) => Err(format!("its entry for `{}` names nothing", op.path)),
    }
}

fn finish_steps(f: &Found) -> Result<Vec<Step>, String> {
    let op = f.op;
    let mut out = Vec::new();
    let target_ok = match &op.temp {
        Some(_) => f.staged(&f.target),
        None => f.target == Seen::Missing,
    };
    if !target_ok {
        return Err(f.mismatch("the target", &op.path, &f.target, &f.expect_staged()));
    }
    if let (Some(temp), Some(t)) = (&op.temp, &f.temp) {
        match t {
            Seen::Missing => {}
            t if f.staged(t) => out.push(Step::Remove(temp.clone())),
            t => return Err(f.mismatch("the temporary file", temp, t, &f.expect_staged())),
        }
    }
    if let (Some(backup), Some(b)) = (&op.backup, &f.backup) {
        match b {
            Seen::Missing => {}
            b if f.original(b) => out.push(Step::Remove(backup.clone())),
            b => return Err(f.mismatch("the backup", backup, b, &f.expect_original())),
        }
    }
    if op.temp.is_none() {
        out.push(Step::RemoveEmptyParents(op.path.clone()));
    }
    Ok(out)
}

/// What finishing an apply this process just committed removes: its backups and any temporary
/// file left, and the directories its deletions emptied. (No hashes: it wrote them itself.)
pub(super) fn own_finish_steps(record: &Record) -> Vec<Step> {
    let mut out = Vec::new();
    for op in &record.ops {
        out.extend(op.backup.iter().chain(&op.temp).cloned().map(Step::Remove));
        if op.temp.is_none() {
            out.push(Step::RemoveEmptyParents(op.path.clone()));
        }
    }
    out
}

/// Carries out `steps` under `root`, best effort: a step that fails does not stop the others.
/// Returns the first failure.
pub(super) fn execute(root: &Utf8Path, steps: &[Step]) -> Option<String> {
    let mut failure: Option<String> = None;
    for step in steps {
        let result = match step {
            Step::Remove(rel) => match disk::remove_file(root.join(rel)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(format!("cannot remove {rel}: {e}"))
                }
                _ => Ok(()),
            },
            Step::Restore { backup, target } => disk::rename(root.join(backup), root.join(target))
                .map_err(|e| format!("cannot restore {target}: {e}")),
            Step::RemoveEmptyParents(rel) => {
                remove_empty_parents(&root.join(rel), root);
                Ok(())
            }
        };
        if let Err(e) = result {
            failure.get_or_insert(e);
        }
    }
    failure
}

/// Deleting a cell's last file should not leave empty directories behind.
fn remove_empty_parents(path: &Utf8Path, root: &Utf8Path) {
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d == root || !d.starts_with(root) || disk::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

/// The directories an undo removes (when empty), deepest first, never the root.
pub(super) fn created_dirs(root: &Utf8Path, record: &Record) -> Vec<Utf8PathBuf> {
    record
        .dirs
        .iter()
        .rev()
        .filter(|d| *d != super::JOURNAL_DIR)
        .map(|d| root.join(d))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_cellgen_s_names_beside_the_target() {
        assert!(our_name("a/b.tf", "a/.b.tf.cellgen-42.tmp", 42, "tmp"));
        assert!(our_name("a/b.tf", "a/.b.tf.cellgen-42-3.bak", 42, "bak"));
        assert!(!our_name("a/b.tf", ".b.tf.cellgen-42.tmp", 42, "tmp"));
        assert!(!our_name("a/b.tf", "a/.b.tf.cellgen-43.tmp", 42, "tmp"));
        assert!(!our_name("a/b.tf", "a/.b.tf.cellgen-42.bak", 42, "tmp"));
        assert!(!our_name("a/b.tf", "a/.b.tf.cellgen-42-.tmp", 42, "tmp"));
        assert!(!our_name("a/b.tf", "a/b.tf", 42, "tmp"));
    }

    #[test]
    fn git_and_escapes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        assert!(safe_path(root, "a/b.tf").is_ok());
        for bad in [
            ".git/config",
            "x/.GIT/hooks/pre-commit",
            "../x",
            "/etc/passwd",
            "a/./b",
            "a//b",
            "a/",
            "",
        ] {
            assert!(safe_path(root, bad).is_err(), "{bad}");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/tmp", root.join("link")).unwrap();
            let err = safe_path(root, "link/x").unwrap_err();
            assert!(err.contains("symbolic link link"), "{err}");
        }
    }
}
