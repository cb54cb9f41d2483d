//! Hostile environment: standard output that cannot be written. A full device (`> /dev/full`)
//! is a clear error, exit 1, never a panic; a command that changes files has written them by
//! then, and says to look. A reader that went away (`| head`) ends the command quietly. These
//! cases need their own standard output, so each table row runs here; `CASES` counts them.

use std::fs::File;
use std::process::{Command, Stdio};

use super::edits::{CELL, cell, run_ok};
use super::*;

struct FullCase {
    name: &'static str,
    setup: fn(&Path),
    args: &'static [&'static str],
    /// A file the command writes before it reports (repository-relative), with a word of it.
    writes: Option<(&'static str, &'static str)>,
}

fn full_cases() -> Vec<FullCase> {
    vec![
        FullCase {
            name: "list",
            setup: cell,
            args: &["list"],
            writes: None,
        },
        FullCase {
            name: "list --format json",
            setup: cell,
            args: &["list", "--format", "json"],
            writes: None,
        },
        FullCase {
            name: "check",
            setup: cell,
            args: &["check"],
            writes: None,
        },
        FullCase {
            name: "render",
            setup: cell,
            args: &["render", CELL],
            writes: None,
        },
        FullCase {
            name: "schema",
            setup: |_| {},
            args: &["schema", "cellgen.yaml"],
            writes: None,
        },
        FullCase {
            name: "a dry run's diff",
            setup: cell,
            args: &["add-component", "karpenter", "--dry-run"],
            writes: None,
        },
        FullCase {
            name: "key add, after writing its change",
            setup: cell,
            args: &[
                "key",
                "add",
                "team_id",
                "--terraform",
                "var.name",
                "--example",
                "t",
                "--description",
                "d",
            ],
            writes: Some(("cellgen.yaml", "team_id:")),
        },
        FullCase {
            name: "set-version, after writing its change",
            setup: |d| {
                cell(d);
                run_ok(d, &["add-component", "karpenter"]);
            },
            args: &["set-version", "karpenter", "1.9.0"],
            writes: Some((
                "components/karpenter/controllers/ocirepository.yaml",
                "tag: 1.9.0",
            )),
        },
    ]
}

/// Cases of the table: the /dev/full rows and the closed pipe.
pub const CASES: usize = 9;

fn cellgen_with_stdout(dir: &Path, args: &[&str], stdout: Stdio) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cellgen"));
    isolate(&mut cmd);
    cmd.env("CELLGEN_NO_INPUT", "1")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .expect("cellgen runs")
}

#[test]
fn a_full_stdout_is_an_error_never_a_panic() {
    let rows = full_cases();
    assert_eq!(rows.len() + 1, CASES);
    let mut failures = Vec::new();
    for case in rows {
        let dir = temp_dir();
        (case.setup)(dir.path());
        let full = File::options().write(true).open("/dev/full").unwrap();
        let out = cellgen_with_stdout(dir.path(), case.args, Stdio::from(full));
        let err = String::from_utf8_lossy(&out.stderr);
        let mut problems = Vec::new();
        if out.status.code() != Some(1) {
            problems.push(format!("exit {:?}, expected 1", out.status.code()));
        }
        if err.contains("panicked") {
            problems.push("panicked".into());
        }
        if !err.contains("cannot write to standard output: No space left on device") {
            problems.push("no error naming standard output".into());
        }
        if let Some((file, word)) = case.writes {
            if !read(&dir.path().join(file)).contains(word) {
                problems.push(format!("{file} was not written"));
            }
            if !err.contains("git status") {
                problems.push("the error does not say to look at what was written".into());
            }
        }
        if !problems.is_empty() {
            failures.push(format!("{}: {}\n{err}", case.name, problems.join("; ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A reader that closed the pipe before cellgen wrote (`cellgen list | true`): no panic, no
/// message; the command ends as a Unix tool does (SIGPIPE, or quietly on EPIPE).
#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    let dir = temp_dir();
    cell(dir.path());
    let mut child = {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cellgen"));
        isolate(&mut cmd);
        cmd.env("CELLGEN_NO_INPUT", "1")
            .arg("-C")
            .arg(dir.path())
            .arg("list")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.is_empty(), "{err}");
    assert_ne!(out.status.code(), Some(101), "{err}");
}
