//! Hostile input: concurrency. These cases need processes of their own, so each is a test; `CASES`
//! counts them for the table.
//!
//! cellgen takes a kernel lock (flock) on the repository root before it reads anything: writers
//! one at a time, readers together; a second writer waits (CELLGEN_LOCK_WAIT seconds), then fails
//! naming the holder.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use super::filesystem::{PROD, prod};
use super::signals::{run, start_paused};
use super::*;

pub const CASES: usize = 7;

fn spawn(dir: &Path, args: &[&str]) -> std::process::Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cellgen"));
    isolate(&mut cmd);
    cmd.env("CELLGEN_NO_INPUT", "1")
        // Twenty writers in a queue on a busy machine: wait as long as it takes.
        .env("CELLGEN_LOCK_WAIT", "300")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start cellgen")
}

#[track_caller]
fn all_succeed(children: Vec<std::process::Child>) {
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn twenty_cells() -> Vec<String> {
    let mut cells = Vec::new();
    for region in [
        "eu-west-1",
        "eu-west-2",
        "eu-west-3",
        "eu-central-1",
        "us-east-1",
        "us-east-2",
        "us-west-2",
    ] {
        for env in ["dev", "staging", "prod"] {
            cells.push(format!("{region}-{env}"));
        }
    }
    cells.truncate(20);
    cells
}

#[test]
fn twenty_parallel_add_component_on_twenty_cells_keep_all_twenty() {
    let dir = temp_dir();
    let cells = twenty_cells();
    for cell in &cells {
        new_cell(dir.path(), &[cell]);
    }
    let children: Vec<_> = cells
        .iter()
        .map(|cell| spawn(dir.path(), &["add-component", "karpenter", "--cell", cell]))
        .collect();
    all_succeed(children);
    assert!(read(&dir.path().join("cellgen.yaml")).contains("schema: 2\n"));
    for cell in &cells {
        let controllers = read(&dir.path().join(format!("cells/{cell}/controllers.yaml")));
        assert!(
            controllers.contains("components/karpenter/controllers"),
            "{cell} lost karpenter:\n{controllers}"
        );
        let meta = read(
            &dir.path()
                .join(format!("terraform/cells/{cell}/cell-metadata.tf")),
        );
        assert!(
            meta.contains("karpenter_role_arn") && meta.contains("\"2\""),
            "{cell}:\n{meta}"
        );
        assert!(
            dir.path()
                .join(format!("terraform/cells/{cell}/karpenter.tf"))
                .is_file()
        );
    }
    let (code, stdout, stderr) = run(dir.path(), &[], &["check"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
}

#[test]
fn two_add_component_on_one_cell_at_once_keep_both() {
    let dir = temp_dir();
    prod(dir.path());
    let children = vec![
        spawn(dir.path(), &["add-component", "karpenter"]),
        spawn(dir.path(), &["add-component", "kyverno"]),
        spawn(dir.path(), &["add-component", "metrics-server"]),
    ];
    all_succeed(children);
    let (_, stdout, _) = run(dir.path(), &[], &["list", "--format", "json"]);
    for name in ["karpenter", "kyverno", "metrics-server"] {
        assert!(
            stdout.contains(&format!("\"{name}\"")),
            "{name} was lost:\n{stdout}"
        );
    }
    let tf = dir.path().join("terraform/cells/eu-west-2-prod");
    let meta = read(&tf.join("cell-metadata.tf"));
    assert_mentions(&meta, &["karpenter_role_arn"]);
}

#[test]
fn a_second_writer_waits_then_fails_naming_the_holder() {
    let dir = temp_dir();
    prod(dir.path());
    let before = tree_hash(dir.path());
    let holder = start_paused(dir.path(), "staged", &["add-component", "karpenter"]);
    for args in [
        &["add-component", "kyverno"][..],
        &["new", PROD, "--force"][..],
    ] {
        let (code, _, stderr) = run(dir.path(), &[("CELLGEN_LOCK_WAIT", "0.5")], args);
        assert_eq!(code, 1, "{stderr}");
        for word in [
            "Waiting for the repository lock",
            "is in use by another cellgen",
            &format!("pid {}", holder.pid()),
            "cellgen -C",
            "add-component karpenter",
            "writing since",
            "UTC",
            "CELLGEN_LOCK_WAIT",
        ] {
            assert!(stderr.contains(word), "no `{word}` in:\n{stderr}");
        }
    }
    // A dry run reads: it waits for the writer too.
    let (code, _, stderr) = run(
        dir.path(),
        &[("CELLGEN_LOCK_WAIT", "0")],
        &["add-component", "kyverno", "--dry-run"],
    );
    assert_eq!(code, 1, "{stderr}");
    assert_mentions(&stderr, &[&format!("pid {}", holder.pid())]);
    holder.signal(libc::SIGINT);
    let (status, _) = holder.finish();
    assert_eq!(status.code(), Some(130));
    assert_tree_unchanged(&before, &tree_hash(dir.path()), "refused writers");
}

#[test]
fn a_reader_waits_for_a_half_applied_writer_and_never_sees_its_state() {
    let dir = temp_dir();
    prod(dir.path());
    let writer = start_paused(dir.path(), "renamed:3", &["add-component", "karpenter"]);
    let mut reader = spawn(dir.path(), &["list", "--format", "json"]);
    let mut stderr = BufReader::new(reader.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert_mentions(&line, &["Waiting for the repository lock"]);
    writer.signal(libc::SIGTERM);
    let (status, _) = writer.finish();
    assert_eq!(status.code(), Some(143));
    let out = reader.wait_with_output().unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(PROD) && !stdout.contains("karpenter"),
        "{stdout}"
    );
}

#[test]
fn readers_share_the_lock() {
    let dir = temp_dir();
    prod(dir.path());
    let children: Vec<_> = (0..4).map(|_| spawn(dir.path(), &["check"])).collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_never_mentions(&stderr, &["is in use"]);
    }
}

#[test]
fn two_new_in_one_empty_directory_make_one_repository_with_both_cells() {
    let dir = temp_dir();
    let staging = "us-east-1-staging";
    let children = vec![
        spawn(
            dir.path(),
            &["new", PROD, "--git-url", GIT_URL, "--dns-zones", DNS_ZONE],
        ),
        spawn(
            dir.path(),
            &[
                "new",
                staging,
                "--git-url",
                GIT_URL,
                "--dns-zones",
                DNS_ZONE,
            ],
        ),
    ];
    all_succeed(children);
    // Whichever ran first took the pool's first VPC block: the result is one of the two orders.
    let twins: Vec<Tree> = [[PROD, staging], [staging, PROD]]
        .iter()
        .map(|order| {
            let twin = temp_dir();
            for cell in order {
                new_cell(twin.path(), &[cell]);
            }
            tree_hash(twin.path())
        })
        .collect();
    let got = tree_hash(dir.path());
    if !twins.contains(&got) {
        assert_tree_unchanged(&twins[0], &got, "two at once (vs. prod first)");
    }
}

/// `CELLGEN_LOCK_WAIT` that is no number of seconds in range (huge, negative, not a number) is
/// a usage error naming the variable and what it accepts: never a panic (a float too large for
/// a `Duration`), never the default in silence.
#[test]
fn a_lock_wait_out_of_range_is_an_error_naming_the_variable() {
    let dir = temp_dir();
    prod(dir.path());
    let before = tree_hash(dir.path());
    for value in ["1e300", "-1", "five", "inf", "NaN", "86401"] {
        for args in [&["list"][..], &["add-component", "karpenter"][..]] {
            let (code, _, stderr) = run(dir.path(), &[("CELLGEN_LOCK_WAIT", value)], args);
            assert_eq!(code, 2, "{value}: {stderr}");
            for word in [
                format!("invalid value `{value}` for the environment variable CELLGEN_LOCK_WAIT"),
                "a number from 0 to 86400".to_string(),
            ] {
                assert!(stderr.contains(&word), "{value}: no `{word}` in:\n{stderr}");
            }
        }
    }
    assert_tree_unchanged(&before, &tree_hash(dir.path()), "refused lock waits");
    let (code, _, stderr) = run(dir.path(), &[("CELLGEN_LOCK_WAIT", "86400")], &["list"]);
    assert_eq!(code, 0, "{stderr}");
}
