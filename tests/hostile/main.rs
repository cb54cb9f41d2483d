//! The hostile-input table: names, files, edits, filesystem, symlinks, forged journals and
//! records, signals, concurrency, state files, scalar typing, write errors, shell quoting,
//! injection into generated Terraform, references to nothing, hangs on invalid YAML, unbounded
//! input.
//!
//! Every case sets up a repository, runs cellgen and states what must come out: a failure with
//! a given exit code whose message names what to fix, with the tree byte-for-byte unchanged; or
//! a success whose result a check function inspects. No case may panic (exit 101, "panicked")
//! or run past [`CASE_TIMEOUT`] (a hang: it is killed and reported).
//! Each module contributes one table; `hostile_table_counts` prints how many cases each has.

#[path = "../support/mod.rs"]
mod support;

mod concurrency;
mod edits;
mod files;
mod filesystem;
mod forged;
mod hang_yaml;
mod injection;
mod names;
mod references;
mod scalar_typing;
mod shell_quoting;
mod signals;
mod state_files;
mod symlinks;
mod unbounded;
mod write_errors;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use support::messages;
use support::*;

/// Longer than any case takes (a debug build on a loaded machine); a case still running then hangs.
pub const CASE_TIMEOUT: Duration = Duration::from_secs(120);

/// What a case expects of cellgen.
pub enum Expect {
    /// Fails with this exit code; stderr contains every word (or stdout, for `check`, whose
    /// findings are its output); the tree is unchanged.
    Fails {
        code: i32,
        words: &'static [&'static str],
    },
    /// Succeeds; the function inspects the repository and the output and panics on a problem.
    Succeeds(fn(&Path, &Output)),
}

pub struct Case {
    pub name: &'static str,
    /// Builds the repository in an empty directory.
    pub setup: fn(&Path),
    /// cellgen's arguments (run with `-C <dir>`).
    pub args: &'static [&'static str],
    pub expect: Expect,
}

/// A directory outside a case's repository `dir`, for cases that need one (a symbolic link out of
/// the root): the setup creates it if it wants; it must be unchanged after the case, whatever the
/// outcome, and is removed afterwards.
pub fn outside_dir(dir: &Path) -> PathBuf {
    let name = dir
        .file_name()
        .expect("a temp dir has a name")
        .to_string_lossy();
    dir.with_file_name(format!("{name}-outside"))
}

struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs one case in a fresh directory; returns a description of what went wrong, if anything.
pub fn run_case(case: &Case) -> Option<String> {
    let dir = temp_dir();
    let outside = RemoveOnDrop(outside_dir(dir.path()));
    (case.setup)(dir.path());
    let outside_before = outside.0.exists().then(|| tree_hash(&outside.0));
    if let Some(problem) = run_in(case, dir.path()) {
        return Some(problem);
    }
    let outside_after = outside.0.exists().then(|| tree_hash(&outside.0));
    if outside_before != outside_after {
        let diff = tree_diff(
            &outside_before.unwrap_or_default(),
            &outside_after.unwrap_or_default(),
        );
        return Some(format!(
            "{}: the directory outside the repository changed:\n    {}",
            case.name,
            diff.join("\n    ")
        ));
    }
    None
}

fn run_in(case: &Case, dir: &Path) -> Option<String> {
    let before = tree_hash(dir);
    let started = Instant::now();
    let output = cellgen()
        .arg("-C")
        .arg(dir)
        .args(case.args)
        .timeout(CASE_TIMEOUT)
        .output()
        .expect("cannot run cellgen");
    if output.status.code().is_none() && started.elapsed() >= CASE_TIMEOUT {
        return Some(format!(
            "{}: hung (killed after {} s)",
            case.name,
            CASE_TIMEOUT.as_secs()
        ));
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let code = output.status.code().unwrap_or(-1);
    if code == 101 || stderr.contains("panicked") {
        return Some(format!("{}: panicked\n{stderr}", case.name));
    }
    match &case.expect {
        Expect::Fails { code: want, words } => {
            let mut problems = Vec::new();
            if code != *want {
                problems.push(format!("exit code {code}, expected {want}"));
            }
            let stdout = String::from_utf8_lossy(&output.stdout);
            let checking = case.args.first() == Some(&"check");
            // `check` says its findings on stdout.
            let lacking = messages::missing(&stderr, words);
            let lacking = match checking {
                true => messages::missing(&stdout, &lacking),
                false => lacking,
            };
            if !lacking.is_empty() {
                problems.push(format!("stderr lacks {lacking:?}"));
            }
            let diff = tree_diff(&before, &tree_hash(dir));
            if !diff.is_empty() {
                problems.push(format!("tree changed:\n    {}", diff.join("\n    ")));
            }
            (!problems.is_empty()).then(|| {
                format!(
                    "{}: {}\nstdout:\n{}\nstderr:\n{stderr}",
                    case.name,
                    problems.join("; "),
                    String::from_utf8_lossy(&output.stdout)
                )
            })
        }
        Expect::Succeeds(check) => {
            if !output.status.success() {
                return Some(format!("{}: failed with {code}\n{stderr}", case.name));
            }
            let result =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(dir, &output)));
            result.err().map(|e| {
                let msg = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                format!("{}: {msg}\nstderr:\n{stderr}", case.name)
            })
        }
    }
}

/// Runs a table and fails listing every case that went wrong.
pub fn run_table(table: &str, cases: &[Case]) {
    let failures: Vec<String> = cases.iter().filter_map(run_case).collect();
    assert!(
        failures.is_empty(),
        "{} of {} `{table}` cases failed:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

/// The table's size, by module; signals and concurrency cases are tests of their own, counted
/// by their modules' `CASES` constants.
#[test]
fn hostile_table_counts() {
    let counts = [
        ("names", names::cases().len()),
        ("files", files::cases().len()),
        ("edits", edits::cases().len()),
        ("filesystem", filesystem::cases().len()),
        ("symlinks", symlinks::cases().len()),
        ("forged", forged::cases().len()),
        ("signals", signals::CASES),
        ("concurrency", concurrency::CASES),
        ("state files", state_files::cases().len()),
        ("scalar typing", scalar_typing::cases().len()),
        ("write errors", write_errors::CASES),
        ("shell quoting", shell_quoting::cases().len()),
        ("hang on invalid YAML", hang_yaml::cases().len()),
        // The table's cases and the test of 100,000 keys.
        ("unbounded input", unbounded::cases().len() + 1),
        ("injection", injection::cases().len()),
        ("references", references::cases().len()),
    ];
    let total: usize = counts.iter().map(|(_, n)| n).sum();
    for (module, n) in counts {
        eprintln!("{module:>20}: {n}");
    }
    eprintln!("{:>20}: {total}", "total");
    // Issue 7's floor: at least 60 cases, and every category represented.
    for (module, n) in counts {
        assert!(n > 0, "the hostile table has no {module} case");
    }
    assert!(
        total >= 60,
        "the hostile table has {total} cases, fewer than 60"
    );
}
