//! Day 2 for a fleet (issue 10): `set-version`, `key add|rename|remove`, `remove-cell`,
//! `remove-component`'s tear-down, `init` in an existing repository, and (issue 12) `render`'s
//! layer markers. Each command runs end to end on a three-environment repository with
//! components and hand edits: a dry run writes nothing, a second run changes nothing, `check`
//! stays green, and failures name the file:line or flag and leave the tree as it was.

#[path = "../support/mod.rs"]
mod support;

mod adoption;
mod keys;
mod remove_cell;
mod set_version;

use std::fs;
use std::path::Path;
use std::process::Output;

use serde_json::Value;
use support::*;

const DEV: &str = "us-east-1-dev";
const STAGING: &str = "eu-west-1-staging";
const PROD: &str = "eu-west-2-prod";
const CELLS: [&str; 3] = [DEV, STAGING, PROD];

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

/// Runs cellgen and fails the test unless it succeeds; returns stdout.
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

/// Runs a command that must fail with `code`, say each of `words` on stderr, print nothing on
/// stdout and leave the tree as it was (with and without --dry-run). Returns stderr.
#[track_caller]
fn run_fails(dir: &Path, args: &[&str], code: i32, words: &[&str]) -> String {
    let before = tree_hash(dir);
    let out = run(dir, args);
    let err = stderr(&out);
    let what = format!("`cellgen {}`", args.join(" "));
    assert_eq!(out.status.code(), Some(code), "{what}: exit code\n{err}");
    for word in words {
        assert!(err.contains(word), "{what}: stderr lacks `{word}`:\n{err}");
    }
    assert!(
        stdout(&out).trim().is_empty(),
        "{what}: printed on stdout although it failed:\n{}",
        stdout(&out)
    );
    assert_tree_unchanged(&before, &tree_hash(dir), &what);
    if !args.contains(&"--dry-run") {
        let mut dry = args.to_vec();
        dry.push("--dry-run");
        let out = run(dir, &dry);
        assert_eq!(out.status.code(), Some(code), "{what} --dry-run: exit code");
        assert_tree_unchanged(&before, &tree_hash(dir), &format!("{what} --dry-run"));
    }
    err
}

/// The repository-relative paths whose content differs between two trees (added, changed or
/// removed).
fn changed_paths(before: &Tree, after: &Tree) -> Vec<String> {
    let (a, b) = (files_of(before), files_of(after));
    let mut paths: Vec<String> = a
        .keys()
        .chain(b.keys())
        .filter(|p| a.get(*p) != b.get(*p))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

/// Runs `args` the way a reviewer would: `--dry-run` first (prints a diff, writes nothing), then
/// for real (changes the tree), then again (changes nothing). Returns the real run's stdout and
/// the paths it changed.
#[track_caller]
fn apply_once(dir: &Path, args: &[&str]) -> (String, Vec<String>) {
    let what = format!("`cellgen {}`", args.join(" "));
    let before = tree_hash(dir);
    let mut dry = args.to_vec();
    dry.push("--dry-run");
    let diff = run_ok(dir, &dry);
    assert!(
        diff.contains("diff --cellgen a/") && diff.contains("--- a/"),
        "{what} --dry-run prints no diff:\n{diff}"
    );
    assert_tree_unchanged(&before, &tree_hash(dir), &format!("{what} --dry-run"));
    let out = run_ok(dir, args);
    let after = tree_hash(dir);
    let changed = changed_paths(&before, &after);
    assert!(!changed.is_empty(), "{what} changed nothing:\n{out}");
    run_ok(dir, args);
    assert_tree_unchanged(&after, &tree_hash(dir), &format!("{what}, run again"));
    (out, changed)
}

/// `cellgen check` passes (warnings allowed).
#[track_caller]
fn check_green(dir: &Path) {
    let out = run(dir, &["check"]);
    assert!(
        out.status.success(),
        "check fails:\n{}{}",
        stdout(&out),
        stderr(&out)
    );
}

/// Replaces `from` (which must be there) with `to` in a file of the repository.
#[track_caller]
fn edit_file(root: &Path, file: &str, from: &str, to: &str) {
    let path = root.join(file);
    let text = read(&path);
    assert!(text.contains(from), "{file} has no `{from}`:\n{text}");
    fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

/// `cellgen list --format json`, by cell.
fn list_json(dir: &Path) -> Vec<Value> {
    let out = run_ok(dir, &["list", "--format", "json"]);
    let rows: Value = serde_json::from_str(&out).expect("list prints JSON");
    rows.as_array().unwrap().clone()
}

fn row<'a>(rows: &'a [Value], cell: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["cell"] == cell)
        .unwrap_or_else(|| panic!("no {cell} in {rows:?}"))
}

/// `schema` in cellgen.yaml.
fn contract_number(root: &Path) -> u32 {
    let config: serde_json::Value =
        yaml_serde::from_str(&read(&root.join("cellgen.yaml"))).unwrap();
    config["schema"].as_u64().unwrap() as u32
}

/// `schema` in a cell's cell-metadata.tf.
fn cell_number(root: &Path, cell: &str) -> u32 {
    let text = read(&root.join(format!("terraform/cells/{cell}/cell-metadata.tf")));
    text.lines()
        .find_map(|l| {
            let l = l.trim();
            l.strip_prefix("schema")
                .filter(|rest| rest.trim_start().starts_with('='))
                .map(|rest| rest.trim_start()[1..].trim().trim_matches('"').to_string())
        })
        .unwrap_or_else(|| panic!("no schema entry in {cell}'s cell-metadata.tf:\n{text}"))
        .parse()
        .unwrap()
}

/// Three cells, one per environment, each running external-dns; dev also runs karpenter; prod
/// has an egress gateway and its own VPC block; a comment added by hand in prod's controllers
/// layer file and in the shared external-dns HelmRelease.
fn fleet() -> tempfile::TempDir {
    let dir = temp_dir();
    let root = dir.path();
    new_cell(root, &[DEV]);
    new_cell(root, &[STAGING]);
    new_cell(
        root,
        &[
            PROD,
            "--egress-gateway",
            "--vpc-cidr",
            "10.42.0.0/16",
            "--kubernetes-version",
            "1.33",
        ],
    );
    for cell in CELLS {
        run_ok(root, &["add-component", "external-dns", "--cell", cell]);
    }
    run_ok(root, &["add-component", "karpenter", "--cell", DEV]);
    edit_file(
        root,
        &format!("cells/{PROD}/controllers.yaml"),
        "spec:\n",
        "spec:\n  # prod: reviewed by the platform team\n",
    );
    edit_file(
        root,
        "components/external-dns/controllers/helmrelease.yaml",
        "spec:\n",
        "spec:\n  # shared by every cell\n",
    );
    dir
}
