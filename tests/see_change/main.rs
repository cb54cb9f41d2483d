//! Seeing a change before it lands: `cellgen values` and `cellgen diff`, on a multi-cell
//! repository with a Git history.

#[path = "../support/mod.rs"]
mod support;

mod diff;
mod graph;
mod values;
mod verify;
mod workflow;

use std::path::Path;

use support::*;

pub const PROD_A: &str = "eu-west-2-prod";
pub const PROD_B: &str = "us-east-1-prod";
pub const STAGING: &str = "eu-west-1-staging";

/// Three cells (two prod, one staging with karpenter), committed on `main`.
pub fn repo_with_history() -> tempfile::TempDir {
    let dir = temp_dir();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    new_cell(dir.path(), &[PROD_A, "--components", "karpenter"]);
    new_cell(dir.path(), &[PROD_B, "--components", "karpenter"]);
    new_cell(dir.path(), &[STAGING]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "cells"]);
    dir
}

/// `cellgen -C dir args…`.
pub fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    cellgen().arg("-C").arg(dir).args(args).output().unwrap()
}

pub fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
