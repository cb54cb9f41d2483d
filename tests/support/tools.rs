//! Outside tools a test runs (kubectl, terraform, node, dot, man, bash): a test without its tool
//! says so on stderr and skips on a developer's machine, and fails under CI (`CI=true`), which
//! installs every one of them (.ci/run), so a green CI never hides a test that did not run.
#![allow(dead_code)]

use std::process::Command;

/// Whether CI is running the tests (`CI=true`, as GitHub Actions and most CI systems set).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// Whether `program` runs (`program probe...` exits 0).
pub fn runs(program: &str, probe: &[&str]) -> bool {
    Command::new(program)
        .args(probe)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether the test can use `program` (checked by running `program probe...`) for `what`:
/// `true` when it runs; otherwise says the test skips `what`, and under CI fails the test.
#[track_caller]
pub fn tool_or_skip(program: &str, probe: &[&str], what: &str) -> bool {
    if runs(program, probe) {
        return true;
    }
    skip_without(program, what);
    false
}

/// The test cannot use `program` for `what`: under CI the test fails; elsewhere it says so.
#[track_caller]
pub fn skip_without(program: &str, what: &str) {
    skip_or_fail(in_ci(), program, what);
}

/// [`skip_without`] with CI given: fails when `ci`, says the test skips otherwise.
#[track_caller]
pub fn skip_or_fail(ci: bool, program: &str, what: &str) {
    assert!(
        !ci,
        "`{program}` is not on the PATH, and CI=true: CI must install it ({what} does not run without it; see .ci/run)"
    );
    eprintln!("skipped: {what}: `{program}` is not on the PATH (CI=true makes this a failure)");
}

/// A test that cannot run in this environment for a reason that is not a missing tool (root
/// ignores permissions, a filesystem refuses a name): it says so, whatever CI is.
pub fn skip_environment(what: &str, why: &str) {
    eprintln!("skipped: {what}: {why}");
}
