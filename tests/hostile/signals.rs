//! Hostile input: signals. These cases need processes of their own, so each is a test; `CASES`
//! counts them for the table.
//!
//! Each test stops a real cellgen at an exact step of its apply with the test-only hook
//! `CELLGEN_TEST_PAUSE` (inert unless set; see `src/writer/journal/`), sends a real signal, and
//! compares the whole tree: as before (rolled back) or as an uninterrupted run leaves it.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, ChildStderr, Command, ExitStatus, Stdio};

use super::filesystem::{PROD, prod, set_mode, to_crlf};
use super::*;

pub const CASES: usize = 11;

/// A cellgen run stopped at a pause point. Dropped without `finish` (a failing test), it is
/// killed and reaped rather than left paused.
pub struct Paused {
    child: Option<Child>,
    stderr: BufReader<ChildStderr>,
    seen: String,
}

impl Drop for Paused {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cellgen"));
    isolate(&mut cmd);
    cmd.env("CELLGEN_NO_INPUT", "1")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Starts `cellgen -C dir args…` and returns once it is paused at `point`.
#[allow(clippy::zombie_processes)] // the child is waited for by `Paused::finish` or its Drop
pub fn start_paused(dir: &Path, point: &str, args: &[&str]) -> Paused {
    let mut child = command(dir, args)
        .env("CELLGEN_TEST_PAUSE", point)
        .spawn()
        .expect("cannot start cellgen");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let marker = format!("cellgen-test-pause: {point}");
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap() == 0 {
            let status = child.wait().unwrap();
            panic!("cellgen ended ({status}) before pausing at {point}:\n{seen}");
        }
        seen.push_str(&line);
        if line.trim_end() == marker {
            return Paused {
                child: Some(child),
                stderr,
                seen,
            };
        }
    }
}

impl Paused {
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    pub fn signal(&self, signal: i32) {
        // SAFETY: kill only sends a signal to our own child.
        let rc = unsafe { libc::kill(self.pid() as libc::pid_t, signal) };
        assert_eq!(rc, 0, "cannot signal cellgen");
    }

    /// Waits for the end; returns the status and the whole stderr.
    pub fn finish(mut self) -> (ExitStatus, String) {
        let mut rest = String::new();
        self.stderr.read_to_string(&mut rest).unwrap();
        let status = self.child.take().expect("running").wait().unwrap();
        (status, std::mem::take(&mut self.seen) + &rest)
    }
}

/// Runs cellgen to the end (no pause): status, stdout, stderr.
pub fn run(dir: &Path, envs: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
    let out = command(dir, args)
        .envs(envs.iter().copied())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Cellgen's own debris: temporary files, backups, the journal.
fn debris(dir: &Path) -> Vec<String> {
    tree_hash(dir)
        .keys()
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| p.contains(".cellgen-") || p.starts_with(".cellgen/journal"))
        .collect()
}

/// The tree an uninterrupted run leaves, from the same setup.
fn uninterrupted(setup: fn(&Path), args: &[&str]) -> Tree {
    let twin = temp_dir();
    setup(twin.path());
    let (code, _, err) = run(twin.path(), &[], args);
    assert_eq!(code, 0, "the uninterrupted run failed: {err}");
    tree_hash(twin.path())
}

fn twelve_cells(dir: &Path) {
    for region in ["eu-west-1", "eu-west-2", "eu-central-1", "us-east-1"] {
        for env in ["dev", "staging", "prod"] {
            new_cell(dir, &[&format!("{region}-{env}")]);
        }
    }
}

const NEW: &[&str] = &[
    "new",
    PROD,
    "--git-url",
    GIT_URL,
    "--admin-role-arn",
    ADMIN_ROLE,
];
const ADD_KARPENTER: &[&str] = &["add-component", "karpenter", "--cell", "eu-west-1-dev"];

#[track_caller]
fn assert_interrupted(status: ExitStatus, stderr: &str, code: i32, name: &str) {
    assert_eq!(status.code(), Some(code), "{stderr}");
    assert!(
        stderr.contains(&format!("interrupted by {name}"))
            && stderr.contains("every change was rolled back"),
        "{stderr}"
    );
}

#[test]
fn sigint_while_new_is_staging_its_files_writes_nothing() {
    let dir = temp_dir();
    let paused = start_paused(dir.path(), "staged", NEW);
    assert!(!debris(dir.path()).is_empty(), "nothing staged yet");
    paused.signal(libc::SIGINT);
    let (status, stderr) = paused.finish();
    assert_interrupted(status, &stderr, 130, "SIGINT");
    assert_tree_unchanged(&Tree::new(), &tree_hash(dir.path()), "SIGINT while staging");
}

#[test]
fn sigterm_in_the_middle_of_the_renames_of_new_writes_nothing() {
    let dir = temp_dir();
    let paused = start_paused(dir.path(), "renamed:8", NEW);
    let written = files_of(&tree_hash(dir.path()))
        .keys()
        .filter(|p| !p.to_string_lossy().contains(".cellgen-") && !p.starts_with(".cellgen"))
        .count();
    assert!(written > 0, "nothing was renamed into place at the pause");
    paused.signal(libc::SIGTERM);
    let (status, stderr) = paused.finish();
    assert_interrupted(status, &stderr, 143, "SIGTERM");
    assert_tree_unchanged(&Tree::new(), &tree_hash(dir.path()), "SIGTERM mid-rename");
}

#[test]
fn sigint_during_a_schema_bump_over_many_cells_rolls_back_every_cell() {
    let dir = temp_dir();
    twelve_cells(dir.path());
    let before = tree_hash(dir.path());
    let paused = start_paused(dir.path(), "renamed:8", ADD_KARPENTER);
    let half = tree_diff(&before, &tree_hash(dir.path()));
    assert!(
        half.iter().any(|l| l.starts_with("changed")),
        "nothing was half-applied at the pause: {half:?}"
    );
    paused.signal(libc::SIGINT);
    let (status, stderr) = paused.finish();
    assert_interrupted(status, &stderr, 130, "SIGINT");
    assert_tree_unchanged(&before, &tree_hash(dir.path()), "SIGINT in a schema bump");
}

#[test]
fn sighup_after_the_first_rename_rolls_back() {
    let dir = temp_dir();
    prod(dir.path());
    let before = tree_hash(dir.path());
    let paused = start_paused(dir.path(), "renamed:1", &["add-component", "karpenter"]);
    paused.signal(libc::SIGHUP);
    let (status, stderr) = paused.finish();
    assert_interrupted(status, &stderr, 129, "SIGHUP");
    assert_tree_unchanged(&before, &tree_hash(dir.path()), "SIGHUP");
}

#[test]
fn sigterm_after_the_commit_point_finishes_the_whole_plan() {
    let dir = temp_dir();
    twelve_cells(dir.path());
    let expected = uninterrupted(twelve_cells, ADD_KARPENTER);
    let paused = start_paused(dir.path(), "committed", ADD_KARPENTER);
    paused.signal(libc::SIGTERM);
    let (status, stderr) = paused.finish();
    assert_eq!(status.code(), Some(143), "{stderr}");
    assert!(
        stderr.contains("every change had already been written"),
        "{stderr}"
    );
    assert_tree_unchanged(
        &expected,
        &tree_hash(dir.path()),
        "SIGTERM after the commit",
    );
}

#[test]
fn modes_and_crlf_survive_a_rollback() {
    fn setup(dir: &Path) {
        prod(dir);
        to_crlf(dir, "terraform/cells/eu-west-2-prod/cell-metadata.tf");
        set_mode(
            dir,
            "terraform/cells/eu-west-2-prod/cell-metadata.tf",
            0o600,
        );
        set_mode(dir, "cellgen.yaml", 0o600);
    }
    let dir = temp_dir();
    setup(dir.path());
    let before = tree_hash(dir.path());
    // The plan's last rename; every file it replaced is replaced by then.
    let renames = {
        let twin = temp_dir();
        setup(twin.path());
        let (_, out, _) = run(twin.path(), &[], &["add-component", "karpenter"]);
        out.lines()
            .filter(|l| l.contains("created") || l.contains("updated"))
            .count()
    };
    let paused = start_paused(
        dir.path(),
        &format!("renamed:{renames}"),
        &["add-component", "karpenter"],
    );
    paused.signal(libc::SIGINT);
    let (status, stderr) = paused.finish();
    assert_interrupted(status, &stderr, 130, "SIGINT");
    assert_tree_unchanged(&before, &tree_hash(dir.path()), "rollback");
    for rel in [
        "terraform/cells/eu-west-2-prod/cell-metadata.tf",
        "cellgen.yaml",
    ] {
        assert_eq!(super::filesystem::mode(dir.path(), rel), 0o600, "{rel}");
    }
}

/// A command that only reads says a repair is pending, names the journal and the command that
/// left it, exits 1 and changes nothing.
#[track_caller]
fn assert_repair_pending(dir: &Path, args: &[&str], left_by: &str) {
    let before = tree_hash(dir);
    let (code, _, stderr) = run(dir, &[("CELLGEN_LOCK_WAIT", "0")], args);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(".cellgen/journal: a repair is pending")
            && stderr.contains(left_by)
            && stderr.contains("cellgen repair"),
        "{stderr}"
    );
    assert_tree_unchanged(&before, &tree_hash(dir), "a reader never repairs");
}

#[test]
fn after_sigkill_mid_rename_readers_say_a_repair_is_pending_and_repair_rolls_back() {
    let dir = temp_dir();
    twelve_cells(dir.path());
    let before = tree_hash(dir.path());
    let paused = start_paused(dir.path(), "renamed:3", ADD_KARPENTER);
    paused.signal(libc::SIGKILL);
    let (status, _) = paused.finish();
    assert_eq!(status.code(), None, "SIGKILL did not kill");
    let left = debris(dir.path());
    assert!(left.iter().any(|p| p == ".cellgen/journal"), "{left:?}");
    assert!(left.iter().any(|p| p.ends_with(".tmp")), "{left:?}");
    // The killed holder's lock went with it: no waiting.
    assert_repair_pending(
        dir.path(),
        &["list"],
        "add-component karpenter --cell eu-west-1-dev",
    );
    let (code, stdout, stderr) = run(dir.path(), &[("CELLGEN_LOCK_WAIT", "0")], &["repair"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("add-component karpenter --cell eu-west-1-dev")
            && stderr.contains("was interrupted")
            && stderr.contains("rolled back"),
        "{stderr}"
    );
    assert!(!stdout.contains("Nothing to repair"), "{stdout}");
    assert_tree_unchanged(&before, &tree_hash(dir.path()), "repair after SIGKILL");
    let (code, stdout, _) = run(dir.path(), &[], &["repair"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("Nothing to repair"), "{stdout}");
    let (code, stdout, _) = run(dir.path(), &[], &["list"]);
    assert_eq!(code, 0);
    assert!(!stdout.contains("karpenter"), "{stdout}");
}

#[test]
fn after_sigkill_while_staging_check_never_repairs_a_writer_does() {
    let dir = temp_dir();
    prod(dir.path());
    let before = tree_hash(dir.path());
    let paused = start_paused(dir.path(), "staged", &["add-component", "karpenter"]);
    paused.signal(libc::SIGKILL);
    paused.finish();
    assert!(!debris(dir.path()).is_empty());
    assert_repair_pending(dir.path(), &["check"], "add-component karpenter");
    let (code, _, stderr) = run(dir.path(), &[], &["repair"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("rolled back"), "{stderr}");
    assert_tree_unchanged(&before, &tree_hash(dir.path()), "repair");
}

#[test]
fn after_sigkill_past_the_commit_point_the_next_command_finishes_the_plan() {
    let dir = temp_dir();
    twelve_cells(dir.path());
    let expected = uninterrupted(twelve_cells, ADD_KARPENTER);
    let paused = start_paused(dir.path(), "committed", ADD_KARPENTER);
    paused.signal(libc::SIGKILL);
    paused.finish();
    let left = debris(dir.path());
    assert!(left.iter().any(|p| p.ends_with(".bak")), "{left:?}");
    assert_repair_pending(
        dir.path(),
        &["render", "eu-west-1-dev"],
        "add-component karpenter",
    );
    let (code, _, stderr) = run(dir.path(), &[], &["repair"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("finished its cleanup"), "{stderr}");
    assert_tree_unchanged(&expected, &tree_hash(dir.path()), "roll forward");
}

#[test]
fn after_sigkill_before_staging_a_dry_run_says_a_repair_is_pending() {
    let dir = temp_dir();
    prod(dir.path());
    let before = tree_hash(dir.path());
    let paused = start_paused(dir.path(), "journal", &["add-component", "karpenter"]);
    paused.signal(libc::SIGKILL);
    paused.finish();
    assert!(dir.path().join(".cellgen/journal").exists());
    assert_repair_pending(
        dir.path(),
        &["add-component", "kyverno", "--dry-run"],
        "add-component karpenter",
    );
    let (code, _, stderr) = run(dir.path(), &[], &["repair"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("rolled back"), "{stderr}");
    assert_tree_unchanged(&before, &tree_hash(dir.path()), "repair after SIGKILL");
    let (code, stdout, stderr) = run(dir.path(), &[], &["add-component", "kyverno", "--dry-run"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("+++ b/cells/eu-west-2-prod/controllers.yaml"),
        "{stdout}"
    );
    assert_tree_unchanged(&before, &tree_hash(dir.path()), "dry run after repair");
}

#[test]
fn after_sigkill_a_writer_repairs_then_applies_its_own_change() {
    fn setup(dir: &Path) {
        prod(dir);
    }
    let dir = temp_dir();
    setup(dir.path());
    let expected = uninterrupted(setup, &["add-component", "kyverno"]);
    let paused = start_paused(dir.path(), "renamed:2", &["add-component", "karpenter"]);
    paused.signal(libc::SIGKILL);
    paused.finish();
    let (code, _, stderr) = run(dir.path(), &[], &["add-component", "kyverno"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("rolled back"), "{stderr}");
    assert_tree_unchanged(&expected, &tree_hash(dir.path()), "repair, then kyverno");
}
