//! `cellgen add-component`, `remove-component` and `list`.
//!
//! Golden trees in the style of cargo's `cargo_add` tests: `tests/fixtures/components/<case>/in`
//! is a hand-edited repository, `out` the whole tree expected after the command. A mismatch shows
//! a unified diff per file; `CELLGEN_BLESS=1 cargo test --test components` rewrites `out` (review
//! the result with `git diff` before committing it).
//!
//! Then every catalog component in a fresh cell against the real tools (kubectl kustomize,
//! HashiCorp's HCL parser, the Flux CRDs, `cellgen check`), bad input, cell resolution and `list`.

#[path = "../support/mod.rs"]
mod support;

mod bad_input;
mod catalog;
mod cells;
mod golden;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use support::*;

const PROD: &str = "eu-west-2-prod";
const DEV: &str = "us-east-1-dev";

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/components")
}

/// Copies the files (and directories) under `from` into `to`, which may exist.
fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from).min_depth(1) {
        let entry = entry.unwrap_or_else(|e| panic!("cannot walk {}: {e}", from.display()));
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            fs::create_dir_all(&target).unwrap();
        } else {
            fs::copy(entry.path(), &target).unwrap_or_else(|e| {
                panic!(
                    "cannot copy {} to {}: {e}",
                    entry.path().display(),
                    target.display()
                )
            });
        }
    }
}

/// A temporary copy of `tests/fixtures/components/<case>/in`.
fn fixture_input(case: &str) -> tempfile::TempDir {
    let input = fixtures().join(case).join("in");
    assert!(input.is_dir(), "no fixture {}", input.display());
    let dir = temp_dir();
    copy_dir(&input, dir.path());
    dir
}

/// Runs `cellgen -C <dir> <args…>`.
fn run(dir: &Path, args: &[&str]) -> Output {
    cellgen()
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("cannot run cellgen")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs cellgen and fails the test with its output unless it succeeds; returns stdout.
#[track_caller]
fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
    assert!(
        out.status.success(),
        "`cellgen {}` failed with {}\nstdout:\n{}\nstderr:\n{}",
        args.join(" "),
        out.status,
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

/// Files of a tree as text, by relative path.
fn text_files(dir: &Path) -> BTreeMap<PathBuf, String> {
    files_of(&tree_hash(dir))
        .into_iter()
        .map(|(path, bytes)| {
            let text = String::from_utf8(bytes)
                .unwrap_or_else(|_| panic!("{} is not UTF-8", path.display()));
            (path, text)
        })
        .collect()
}

/// Directories without any entry: git cannot hold them, so a command must not leave them behind.
fn empty_dirs(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_dir())
        .filter(|e| fs::read_dir(e.path()).is_ok_and(|mut d| d.next().is_none()))
        .map(|e| e.path().strip_prefix(dir).unwrap().to_path_buf())
        .collect()
}

fn unified_diff(path: &Path, expected: &str, actual: &str) -> String {
    similar::TextDiff::from_lines(expected, actual)
        .unified_diff()
        .context_radius(3)
        .header(
            &format!("expected/{}", path.display()),
            &format!("actual/{}", path.display()),
        )
        .to_string()
}

fn blessing() -> bool {
    std::env::var("CELLGEN_BLESS").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Compares the tree at `actual` with `expected` (a fixture's `out`), file by file, failing with
/// a unified diff of every difference. With `CELLGEN_BLESS=1`, replaces `expected` instead.
#[track_caller]
fn assert_tree_matches(actual: &Path, expected: &Path, context: &str) {
    let empty = empty_dirs(actual);
    assert!(
        empty.is_empty(),
        "{context}: empty directories left behind: {empty:?}"
    );
    if blessing() {
        if expected.exists() {
            fs::remove_dir_all(expected).unwrap();
        }
        fs::create_dir_all(expected).unwrap();
        copy_dir(actual, expected);
        eprintln!("blessed {}", expected.display());
        return;
    }
    assert!(
        expected.is_dir(),
        "{context}: no expected tree at {} (run with CELLGEN_BLESS=1 to create it, then review it)",
        expected.display()
    );
    let want = text_files(expected);
    let got = text_files(actual);
    let paths: BTreeSet<&PathBuf> = want.keys().chain(got.keys()).collect();
    let mut report = String::new();
    for path in paths {
        match (want.get(path), got.get(path)) {
            (Some(w), Some(g)) if w == g => {}
            (Some(w), Some(g)) => report.push_str(&unified_diff(path, w, g)),
            (Some(w), None) => {
                report.push_str(&format!("missing: {}\n", path.display()));
                report.push_str(&unified_diff(path, w, ""));
            }
            (None, Some(g)) => {
                report.push_str(&format!("unexpected: {}\n", path.display()));
                report.push_str(&unified_diff(path, "", g));
            }
            (None, None) => unreachable!(),
        }
    }
    assert!(
        report.is_empty(),
        "{context}: the tree differs from {} (if the change is intended, rerun with \
         CELLGEN_BLESS=1 and review the diff):\n{report}",
        expected.display()
    );
}

/// Runs `commands` in a copy of the case's `in` tree and compares the result with its `out`.
/// Returns the copy (for further checks) and each command's stdout.
fn fixture_case(case: &str, commands: &[&[&str]]) -> (tempfile::TempDir, Vec<String>) {
    let dir = fixture_input(case);
    let outputs = commands
        .iter()
        .map(|args| run_ok(dir.path(), args))
        .collect();
    let context = commands
        .iter()
        .map(|c| format!("`cellgen {}`", c.join(" ")))
        .collect::<Vec<_>>()
        .join(", then ");
    assert_tree_matches(
        dir.path(),
        &fixtures().join(case).join("out"),
        &format!("{case}: {context}"),
    );
    (dir, outputs)
}

/// A tree's text files with the contract's numbers (`schema: N`, `since: N`, `schema = "N"`)
/// blanked and the records (whose hashes cover those numbers) left out: two ways of making the
/// same change that differ only in how often the number moved compare equal.
fn files_but_numbers(dir: &Path) -> BTreeMap<PathBuf, String> {
    let yaml = regex::Regex::new(r"(?m)^(\s*)(schema|since): \d+").unwrap();
    let hcl = regex::Regex::new(r#"(schema\s*=\s*)"\d+""#).unwrap();
    text_files(dir)
        .into_iter()
        .filter(|(path, _)| !path.starts_with(".cellgen/cells"))
        .map(|(path, text)| {
            let text = yaml.replace_all(&text, "${1}${2}: N");
            let text = hcl.replace_all(&text, "${1}\"N\"");
            (path, text.into_owned())
        })
        .collect()
}

/// The contract's number in cellgen.yaml, and each key's `since`.
fn numbers(dir: &Path) -> (u64, BTreeMap<String, u64>) {
    let config: Value = serde_json::to_value(
        yaml_serde::from_str::<yaml_serde::Value>(&read(&dir.join("cellgen.yaml"))).unwrap(),
    )
    .unwrap();
    let since = config["keys"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v["since"].as_u64().unwrap_or(1)))
        .collect();
    (config["schema"].as_u64().unwrap(), since)
}

/// The `schema` a cell's cell-metadata.tf writes.
fn cell_number(dir: &Path, cell: &str) -> String {
    let text = read(&dir.join(format!("terraform/cells/{cell}/cell-metadata.tf")));
    let re = regex::Regex::new(r#"schema\s*=\s*"(\d+)""#).unwrap();
    re.captures(&text)
        .unwrap_or_else(|| panic!("no schema in {cell}'s cell-metadata.tf:\n{text}"))[1]
        .to_string()
}

#[track_caller]
fn assert_contains(haystack: &str, needles: &[&str], what: &str) {
    for needle in needles {
        assert!(
            haystack.contains(needle),
            "{what}: no `{needle}` in:\n{haystack}"
        );
    }
}
