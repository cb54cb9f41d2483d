//! Hostile input: names read from files that end up in the commands cellgen prints for a user to
//! paste into a shell (the tear-down of `remove-cell`). Every printed command is run here through
//! /bin/sh with fake `kubectl`, `aws`, `terraform` and `cellgen` that only echo their arguments:
//! each name must arrive as one argument, exactly, and nothing else may run.

use std::fs;
use std::process::Command;

use super::edits::{CELL, cell, replace};
use super::*;

const APPS: &str = "cells/eu-west-2-prod/apps.yaml";

/// The cell, with its apps layer's Kustomization renamed and moved to `namespace`.
fn layer_named(root: &Path, name: &str, namespace: &str) {
    cell(root);
    replace(root, APPS, "  name: apps\n", &format!("  name: {name}\n"));
    replace(
        root,
        APPS,
        "  namespace: flux-system\n",
        &format!("  namespace: {namespace}\n"),
    );
}

/// Runs every command line of `printed` (the indented lines of the tear-down that hold no
/// `<placeholder>` for the user to fill in) through /bin/sh with echoing fakes; returns the
/// argument lists they received, and fails if anything else ran.
fn run_printed(printed: &str) -> Vec<Vec<String>> {
    let work = temp_dir();
    let bin = work.path().join("bin");
    fs::create_dir(&bin).unwrap();
    let log = work.path().join("argv.log");
    for tool in ["kubectl", "aws", "terraform", "cellgen"] {
        let script = format!(
            "#!/bin/sh\nprintf '%s\\037' \"$(basename \"$0\")\" \"$@\" >> '{}'\nprintf '\\036' >> '{}'\n",
            log.display(),
            log.display()
        );
        let path = bin.join(tool);
        fs::write(&path, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    }
    let lines: Vec<&str> = printed
        .lines()
        .filter(|l| l.starts_with("       ") && !l.contains('<'))
        .map(str::trim)
        .collect();
    assert!(!lines.is_empty(), "no command printed:\n{printed}");
    for line in &lines {
        let status = Command::new("/bin/sh")
            .arg("-c")
            .arg(line)
            .current_dir(work.path())
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .status()
            .unwrap();
        assert!(status.success(), "`{line}` failed");
    }
    let entries: Vec<String> = fs::read_dir(work.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mut expected = vec!["argv.log".to_string(), "bin".to_string()];
    expected.sort();
    let mut entries = entries;
    entries.sort();
    assert_eq!(entries, expected, "a printed command ran something else");
    let logged = fs::read_to_string(&log).unwrap();
    let calls: Vec<Vec<String>> = logged
        .split_terminator('\u{1e}')
        .map(|call| {
            call.split_terminator('\u{1f}')
                .map(str::to_string)
                .collect()
        })
        .collect();
    assert_eq!(calls.len(), lines.len(), "{logged:?}");
    calls
}

/// The tear-down deletes the layer `name` in `namespace` with exactly these arguments.
fn deletes(out: &Output, name: &str, namespace: &str) {
    let calls = run_printed(&String::from_utf8_lossy(&out.stdout));
    let want: Vec<String> = [
        "kubectl",
        "--namespace",
        namespace,
        "delete",
        "kustomization",
        name,
        "--wait",
        "--timeout",
        "15m",
    ]
    .map(str::to_string)
    .to_vec();
    assert!(calls.contains(&want), "no call {want:?} among:\n{calls:#?}");
}

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "a layer named `flux-system;id`",
            setup: |d| layer_named(d, "flux-system;id", "flux-system"),
            args: &["remove-cell", CELL],
            expect: Expect::Succeeds(|_, out| deletes(out, "flux-system;id", "flux-system")),
        },
        Case {
            name: "a namespace that is a command substitution",
            setup: |d| layer_named(d, "apps", "'$(touch PWNED)'"),
            args: &["remove-cell", CELL],
            expect: Expect::Succeeds(|_, out| deletes(out, "apps", "$(touch PWNED)")),
        },
        Case {
            name: "a layer name with backquotes, a quote and a space",
            setup: |d| layer_named(d, "\"a`touch PWNED` it's\"", "flux-system"),
            args: &["remove-cell", CELL],
            expect: Expect::Succeeds(|_, out| deletes(out, "a`touch PWNED` it's", "flux-system")),
        },
        Case {
            name: "a namespace that is a glob and a variable",
            setup: |d| layer_named(d, "apps", "'* $HOME'"),
            args: &["remove-cell", CELL],
            expect: Expect::Succeeds(|_, out| deletes(out, "apps", "* $HOME")),
        },
    ]
}

#[test]
fn shell_quoting_table() {
    run_table("shell quoting", &cases());
}
