//! The first hour of a new user (issue 21): true next steps, a readable dry run, a command that
//! refuses what `check` would reject, warnings that do not scroll away, did-you-mean that names
//! the right thing, and the smaller slips (https URLs, cellgen.yaml errors, `list components`,
//! `--help`, examples and exit status, dynamic completion, going back a version, `--format json`).

mod support;

use std::path::Path;
use std::process::Command;

use support::*;

const PROD: &str = "eu-west-2-prod";
const DEV: &str = "ap-southeast-2-dev";

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `cellgen ARGS` in `dir`, stdout and stderr in one pipe as a terminal shows them.
fn combined(dir: &Path, args: &str) -> (i32, String) {
    let mut cmd = Command::new("bash");
    cmd.args(["-c", &format!("exec 2>&1; \"$CELLGEN\" {args}")])
        .current_dir(dir)
        .env("CELLGEN", env!("CARGO_BIN_EXE_cellgen"))
        .env("CELLGEN_NO_INPUT", "1");
    isolate(&mut cmd);
    let out = cmd.output().unwrap();
    (out.status.code().unwrap_or(-1), stdout(&out))
}

// ---------------------------------------------------------------------------------------------
// 2. Next steps that are true
// ---------------------------------------------------------------------------------------------

/// The `git add` and `cd` that `new` prints work where it was run: from terraform/cells/ the
/// paths lead back to the repository's root.
#[test]
fn next_steps_printed_in_a_subdirectory_work_there() {
    let dir = new_repo(&[PROD]);
    git(dir.path(), &["init", "-q"]);
    let sub = dir.path().join("terraform/cells");
    let out = cellgen()
        .current_dir(&sub)
        .args(["new", DEV])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let add = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("1. Review and commit: "))
        .and_then(|l| l.split(" && git commit").next())
        .unwrap_or_else(|| panic!("no git add line:\n{text}"));
    assert!(add.contains("../../cells/ap-southeast-2-dev"), "{add}");
    let status = Command::new("bash")
        .args(["-c", add])
        .current_dir(&sub)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .unwrap();
    assert!(status.success(), "`{add}` fails in terraform/cells");
    let staged = git(dir.path(), &["diff", "--cached", "--name-only"]);
    assert!(
        staged.contains("terraform/cells/ap-southeast-2-dev/cluster.tf")
            && staged.contains("cells/ap-southeast-2-dev/kustomization.yaml"),
        "{staged}"
    );
    let cd = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("cd "))
        .unwrap_or_else(|| panic!("no cd line:\n{text}"));
    assert!(sub.join(cd).join("cluster.tf").is_file(), "cd {cd}");
    // The pull request's check is real, and says what it needs.
    assert!(text.contains("CELLGEN_RELEASES"), "{text}");
}

/// A component with neither an identity nor keys needs no `terraform apply`, and its next step
/// does not promise one; one with both says so.
#[test]
fn add_component_next_steps_match_what_the_component_has() {
    let dir = new_repo(&[PROD]);
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args(["add-component", "metrics-server"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        !text.contains("creates the identity") && text.contains("no `terraform apply`"),
        "{text}"
    );
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args(["add-component", "external-dns"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("creates the identity"), "{text}");
}

// ---------------------------------------------------------------------------------------------
// 3. A dry run you can read
// ---------------------------------------------------------------------------------------------

#[test]
fn a_dry_run_shows_the_real_files_and_summarises_the_records() {
    let dir = temp_dir();
    let args = [
        "new",
        PROD,
        "--dry-run",
        "--git-url",
        GIT_URL,
        "--admin-role-arn",
        ADMIN_ROLE,
    ];
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let diff = stdout(&out);
    assert!(
        diff.contains("+++ b/terraform/cells/eu-west-2-prod/cluster.tf"),
        "{diff}"
    );
    assert!(
        !diff.contains("+++ b/.cellgen/"),
        "records in the dry run's diff"
    );
    assert!(
        stderr(&out).contains("of cellgen's records under .cellgen/, not shown: --verbose"),
        "{}",
        stderr(&out)
    );
    let verbose = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args(args)
        .arg("--verbose")
        .output()
        .unwrap();
    assert!(stdout(&verbose).contains("+++ b/.cellgen/cells/eu-west-2-prod.json"));
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

// ---------------------------------------------------------------------------------------------
// 4. Nothing written that check then rejects
// ---------------------------------------------------------------------------------------------

#[test]
fn a_command_refuses_what_check_would_reject_with_the_same_finding() {
    let dir = new_repo(&[PROD]);
    // The stack declares the password (a key may only refer to what the stack declares), so
    // what stops the key is the secret it would put in the ConfigMap.
    std::fs::write(
        dir.path()
            .join("terraform/cells/eu-west-2-prod/database.tf"),
        "resource \"random_password\" \"db\" {\n  length = 32\n}\n",
    )
    .unwrap();
    let metadata = dir
        .path()
        .join("terraform/cells/eu-west-2-prod/cell-metadata.tf");
    let before = read(&metadata);
    let config_before = read(&dir.path().join("cellgen.yaml"));
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args([
            "key",
            "add",
            "db_password",
            "--terraform",
            "random_password.db.result",
            "--example",
            "x",
            "--description",
            "the database password",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains("nothing was written") && err.contains("error[secret-value]"),
        "{err}"
    );
    assert_eq!(read(&metadata), before);
    assert_eq!(read(&dir.path().join("cellgen.yaml")), config_before);
    // What the refusal names is what check reports once the key is there.
    let check = cellgen()
        .arg("-C")
        .arg(dir.path())
        .arg("check")
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", stdout(&check));
    // A key check accepts is written.
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args([
            "key",
            "add",
            "jobs_queue_url",
            "--terraform",
            "\"https://sqs.example.com/jobs\"",
            "--example",
            "https://sqs.example.com/jobs",
            "--description",
            "the jobs queue",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(read(&metadata).contains("jobs_queue_url"));
}

// ---------------------------------------------------------------------------------------------
// 5. Warnings that stay in sight; an admin role or --allow-no-admin
// ---------------------------------------------------------------------------------------------

#[test]
fn warnings_come_after_the_file_list() {
    let dir = temp_dir();
    let (code, text) = combined(
        dir.path(),
        &format!("new {PROD} --git-url {GIT_URL} --admin-role-arn {ADMIN_ROLE}"),
    );
    assert_eq!(code, 0, "{text}");
    let last_created = text.rfind("  created  ").unwrap();
    let warning = text
        .find("warning: the clusters' API stays private")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        warning > last_created,
        "the warning scrolls away above the list:\n{text}"
    );
}

#[test]
fn a_repository_without_an_admin_role_needs_allow_no_admin() {
    let dir = temp_dir();
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args(["new", PROD, "--git-url", GIT_URL])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("--admin-role-arn") && err.contains("--allow-no-admin"),
        "{err}"
    );
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    let (code, text) = combined(
        dir.path(),
        &format!("new {PROD} --git-url {GIT_URL} --allow-no-admin"),
    );
    assert_eq!(code, 0, "{text}");
    let warning = text
        .find("warning: cellgen.yaml names no cluster admin role")
        .unwrap();
    assert!(warning > text.rfind("  created  ").unwrap(), "{text}");
}

// ---------------------------------------------------------------------------------------------
// 6. Did-you-mean that names the right thing
// ---------------------------------------------------------------------------------------------

#[test]
fn cell_names_are_suggested_whole_and_their_shape_explained() {
    let dir = new_repo(&[PROD, DEV]);
    let fails = |args: &[&str]| {
        let out = cellgen()
            .arg("-C")
            .arg(dir.path())
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stdout(&out));
        stderr(&out)
    };
    let err = fails(&["new", "eu-west-2", "--dry-run"]);
    assert!(
        err.contains("`<region>-<environment>`")
            && err.contains("Did you mean `eu-west-2-dev`?")
            && !err.contains("eu-west-3"),
        "{err}"
    );
    let err = fails(&["new", "us-east-1-staging-2", "--dry-run"]);
    assert!(err.contains("Did you mean `us-east-1-staging`?"), "{err}");
    assert!(!err.contains("us-east-1-2"), "{err}");
    let err = fails(&["remove-cell", "ap-southeast-2-dve"]);
    assert!(
        err.contains("Did you mean `ap-southeast-2-dev`?") && !err.contains("environments"),
        "{err}"
    );
    // No cell is near: the environment is what is misspelt.
    let err = fails(&["remove-cell", "us-east-1-dve"]);
    assert!(err.contains("Did you mean `us-east-1-dev`?"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// 8. The smaller slips
// ---------------------------------------------------------------------------------------------

#[test]
fn an_https_git_url_is_rewritten_aloud() {
    let dir = temp_dir();
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args([
            "new",
            PROD,
            "--git-url",
            "https://github.com/acme/infra",
            "--admin-role-arn",
            ADMIN_ROLE,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "the Git URL https://github.com/acme/infra is written as ssh://git@github.com/acme/infra.git"
        ),
        "{}",
        stderr(&out)
    );
    assert!(
        read(&dir.path().join("cellgen.yaml")).contains("url: ssh://git@github.com/acme/infra.git")
    );
}

#[test]
fn cellgen_yaml_errors_speak_of_the_file_not_of_rust() {
    let dir = new_repo(&[PROD]);
    let config = dir.path().join("cellgen.yaml");
    let good = read(&config);
    let list = || {
        let out = cellgen()
            .arg("-C")
            .arg(dir.path())
            .arg("list")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        stderr(&out)
    };
    std::fs::write(&config, good.replace("\nenvironments:", "\nenviroments:")).unwrap();
    let err = list();
    assert!(
        err.contains(
            "`enviroments` is not a setting cellgen knows here. Did you mean `environments`?"
        ),
        "{err}"
    );
    assert!(!err.contains("column"), "{err}");
    let prefix = good
        .lines()
        .find(|l| l.trim_start().starts_with("vpc_prefix_length:"))
        .unwrap();
    std::fs::write(&config, good.replace(prefix, "  vpc_prefix_length: 300")).unwrap();
    let err = list();
    assert!(
        err.contains("a whole number from 0 to 255") && !err.contains("u8"),
        "{err}"
    );
}

#[test]
fn list_components_is_narrow_and_shows_chart_versions() {
    let out = cellgen().args(["list", "components"]).output().unwrap();
    assert!(out.status.success());
    let text = stdout(&out);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["COMPONENT", "VERSION", "REQUIRES", "DESCRIPTION"]);
    let karpenter = text.lines().find(|l| l.starts_with("karpenter ")).unwrap();
    let version = karpenter.split_whitespace().nth(1).unwrap();
    assert!(
        version.trim_start_matches('v').split('.').count() == 3,
        "{karpenter}"
    );
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest < 160, "{widest} columns:\n{text}");
}

#[test]
fn help_groups_global_options_once_and_ends_with_examples_and_exit_status() {
    let out = cellgen().args(["new", "--help"]).output().unwrap();
    let help = stdout(&out);
    assert_eq!(help.matches("Global options:").count(), 1, "{help}");
    let global = help.split("Global options:").nth(1).unwrap();
    // One short block each, not the --color value list in every command.
    assert!(!global.contains("Possible values"), "{global}");
    assert!(global.contains("--color") && global.contains("--no-input"));
    let options = help.split("Global options:").next().unwrap();
    assert!(!options.contains("--color"), "{options}");
    assert!(
        help.contains("Examples:\n") && help.contains("Exit status:\n"),
        "{help}"
    );
    assert!(help.contains("  2    usage error"), "{help}");
    // Every command says how it exits.
    for command in ["check", "list", "schema", "key"] {
        let out = cellgen().args([command, "--help"]).output().unwrap();
        assert!(stdout(&out).contains("Exit status:"), "{command}");
    }
    let dir = temp_dir();
    let out = cellgen()
        .args(["man", "--out-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let page = read(&dir.path().join("cellgen-new.1"));
    assert!(
        page.contains(".SH EXAMPLES") && page.contains(".SH \"EXIT STATUS\""),
        "{page}"
    );
    assert!(!page.contains(".SH EXTRA"), "{page}");
}

/// `source <(COMPLETE=bash cellgen)`: the shell asks cellgen, which answers with the
/// repository's names.
#[test]
fn completion_offers_the_repository_names() {
    let dir = new_repo(&[PROD, DEV]);
    let complete = |index: &str, words: &[&str]| {
        let out = cellgen()
            .current_dir(dir.path())
            .env("COMPLETE", "bash")
            .env("_CLAP_COMPLETE_INDEX", index)
            .args(["--", "cellgen"])
            .args(words)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let cells = complete("2", &["remove-cell", ""]);
    assert!(
        cells.contains("eu-west-2-prod") && cells.contains(DEV),
        "{cells}"
    );
    let components = complete("2", &["add-component", "kar"]);
    assert_eq!(components.trim(), "karpenter");
    let layers = complete("4", &["render", PROD, "--layer", ""]);
    assert!(
        layers.contains("controllers") && layers.contains("configs"),
        "{layers}"
    );
    let keys = complete("2", &["explain", "cluster_n"]);
    assert_eq!(keys.trim(), "cluster_name");
    // The registration a shell sources.
    let out = cellgen().env("COMPLETE", "bash").output().unwrap();
    assert!(stdout(&out).contains("_CLAP_COMPLETE_INDEX"));
}

#[test]
fn set_version_to_an_older_version_warns() {
    let dir = new_repo(&[&format!("{PROD} --components cert-manager")]);
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args(["set-version", "cert-manager", "v1.0.0"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("goes back from cert-manager"),
        "{}",
        stderr(&out)
    );
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args(["set-version", "cert-manager", "v9.0.0"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!stderr(&out).contains("goes back"), "{}", stderr(&out));
}

#[test]
fn writing_commands_report_as_json() {
    let dir = temp_dir();
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args([
            "new",
            PROD,
            "--git-url",
            GIT_URL,
            "--admin-role-arn",
            ADMIN_ROLE,
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)));
    assert_eq!(report["dry_run"], false);
    let changes = report["changes"].as_array().unwrap();
    assert!(
        changes.iter().any(|c| c["action"] == "created"
            && c["path"] == "terraform/cells/eu-west-2-prod/cluster.tf")
    );
    assert!(
        report["warnings"][0]
            .as_str()
            .unwrap()
            .contains("API stays private")
    );
    assert!(
        report["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("Cell eu-west-2-prod is ready")),
        "{report}"
    );
    assert!(!stderr(&out).contains("warning:"), "{}", stderr(&out));
    // Every writing command has the option.
    for command in [
        &["add-component", "--help"][..],
        &["set-version", "--help"],
        &["key", "add", "--help"],
        &["upgrade", "--help"],
        &["remove-cell", "--help"],
    ] {
        let help = stdout(&cellgen().args(command).output().unwrap());
        assert!(help.contains("--format <FORMAT>"), "{command:?}");
    }
}

#[test]
fn new_refuses_a_cell_whose_stack_lacks_what_a_key_refers_to() {
    let dir = new_repo(&[PROD]);
    std::fs::write(
        dir.path().join("terraform/cells/eu-west-2-prod/queue.tf"),
        "resource \"aws_sqs_queue\" \"jobs\" {\n  name = \"jobs\"\n}\n",
    )
    .unwrap();
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args([
            "key",
            "add",
            "jobs_queue_url",
            "--terraform",
            "aws_sqs_queue.jobs.url",
            "--example",
            "https://sqs.example.com/jobs",
            "--description",
            "the jobs queue",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let before = tree_hash(dir.path());
    // The new cell's cell-metadata.tf would refer to a queue its own stack does not declare:
    // refused, dry run or not, with check's finding, and nothing written.
    for dry in [true, false] {
        let mut cmd = cellgen();
        cmd.arg("-C").arg(dir.path()).args(["new", DEV]);
        if dry {
            cmd.arg("--dry-run");
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
        let err = stderr(&out);
        assert!(
            err.contains("nothing was written")
                && err.contains("error[undeclared-reference]")
                && err.contains("terraform/cells/ap-southeast-2-dev/cell-metadata.tf"),
            "{err}"
        );
        assert!(!stdout(&out).contains("+++"), "{}", stdout(&out));
        assert_tree_unchanged(&before, &tree_hash(dir.path()), "refused new");
    }
}

#[test]
fn remove_cell_is_not_refused_for_the_cell_it_removes() {
    let dir = new_repo(&[PROD, DEV]);
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args(["remove-cell", DEV, "--terraform-destroyed"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!dir.path().join("cells").join(DEV).exists());
    let check = cellgen()
        .arg("-C")
        .arg(dir.path())
        .arg("check")
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", stdout(&check));
}
