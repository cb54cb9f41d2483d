//! What Rust CLI and Kubernetes-tooling users expect of cellgen (issue 12): shell completions and
//! man pages, JSON Schemas for editors, `list components` anywhere, colours that follow
//! `--color` and `NO_COLOR`, progress only on a terminal, and the small CLI fixes.

#[path = "../support/mod.rs"]
mod support;

mod cli_fixes;
mod docs;
mod output;
mod schemas;

use std::path::Path;
use std::process::Output;

use support::*;

const PROD: &str = "eu-west-2-prod";
const DEV: &str = "us-east-1-dev";

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `cellgen -C dir args…`.
fn run(dir: &Path, args: &[&str]) -> Output {
    cellgen()
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("cannot run cellgen")
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

/// Every subcommand a user can type (clap's `help` aside), from the CLI definition itself so a
/// new subcommand cannot be forgotten by these tests.
fn subcommands() -> Vec<String> {
    use clap::CommandFactory;
    cellgen::cli::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect()
}

const ESC: char = '\u{1b}';
