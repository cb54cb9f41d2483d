//! `cellgen diff` on a three-cell repository (two prod cells with karpenter, one staging cell)
//! committed on `main`, changed in the working tree.

use std::fs;

use super::*;

fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let path = dir.join(file);
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} has no `{from}`");
    fs::write(&path, text.replace(from, to)).unwrap();
}

fn diff(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["diff"];
    all.extend_from_slice(args);
    run(dir, &all)
}

fn json(dir: &Path) -> serde_json::Value {
    let out = diff(dir, &["--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn group_cells(json: &serde_json::Value) -> Vec<Vec<String>> {
    json["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            g["cells"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn no_change_exits_zero_even_with_exit_code() {
    let dir = repo_with_history();
    let before = tree_hash(dir.path());
    let out = diff(dir.path(), &["--exit-code"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("no change: 0 of 3 cells affected"),
        "{}",
        stdout(&out)
    );
    assert_tree_unchanged(&before, &tree_hash(dir.path()), "cellgen diff");
}

#[test]
fn a_shared_layer_change_reaches_every_cell_as_one_change() {
    let dir = repo_with_history();
    edit(
        dir.path(),
        "infrastructure/controllers/platform-namespace.yaml",
        "metadata:\n",
        "metadata:\n  annotations:\n    team: core\n",
    );
    let before = tree_hash(dir.path());
    let out = diff(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("3 of 3 cells affected, 1 distinct change"),
        "{text}"
    );
    assert!(text.contains("2 prod, 1 staging"), "{text}");
    assert!(
        text.contains("~ changed Namespace platform-system (infrastructure/controllers/platform-namespace.yaml)"),
        "{text}"
    );
    assert!(
        text.contains("+  annotations:\n") || text.contains("      +  annotations:"),
        "{text}"
    );
    assert!(text.contains("+    team: core"), "{text}");
    // Each cell's own values differ, yet it is one change.
    let j = json(dir.path());
    assert_eq!(group_cells(&j), vec![vec![STAGING, PROD_A, PROD_B]]);
    let changes = &j["groups"][0]["example"]["layers"][0]["changes"];
    assert_eq!(changes[0]["change"], "changed");
    assert_eq!(changes[0]["kind"], "Namespace");
    assert_eq!(changes[0]["group"], "");
    assert_eq!(changes[0]["name"], "platform-system");

    let code = diff(dir.path(), &["--exit-code"]);
    assert_eq!(code.status.code(), Some(1));

    // github: a notice on the changed line of the shared file.
    let gh = stdout(&diff(dir.path(), &["--format", "github"]));
    assert!(
        gh.contains("::notice file=infrastructure/controllers/platform-namespace.yaml,line=5,title=cellgen diff::This file's change reaches 1 object in 3 cells: changed Namespace platform-system"),
        "{gh}"
    );
    assert!(
        gh.contains("::notice title=cellgen diff::3 of 3 cells affected"),
        "{gh}"
    );

    // markdown: a summary table and a collapsible diff.
    let md = stdout(&diff(dir.path(), &["--format", "markdown"]));
    assert!(
        md.starts_with("## cellgen diff\n\n**3 of 3 cells affected, 1 distinct change**"),
        "{md}"
    );
    assert!(md.contains("| change | cells | layers | objects |"), "{md}");
    assert!(
        md.contains("<details><summary>Change 1: 3 cells (2 prod, 1 staging)"),
        "{md}"
    );
    assert!(
        md.contains("```diff\n# changed Namespace platform-system\n@@"),
        "{md}"
    );
    assert!(md.contains("</details>"), "{md}");
    assert_tree_unchanged(&before, &tree_hash(dir.path()), "cellgen diff");
}

#[test]
fn a_one_cell_change_affects_that_cell_only() {
    let dir = repo_with_history();
    edit(
        dir.path(),
        &format!("cells/{STAGING}/apps.yaml"),
        "interval: 10m",
        "interval: 5m",
    );
    let j = json(dir.path());
    assert_eq!(group_cells(&j), vec![vec![STAGING]]);
    let layer = &j["groups"][0]["example"]["layers"][0];
    assert_eq!(layer["layer"], "(cell directory)");
    assert_eq!(layer["changes"][0]["kind"], "Kustomization");
    assert_eq!(layer["changes"][0]["group"], "kustomize.toolkit.fluxcd.io");
    assert!(
        layer["changes"][0]["diff"]
            .as_str()
            .unwrap()
            .contains("-  interval: 10m\n+  interval: 5m\n"),
        "{layer}"
    );
    let text = stdout(&diff(dir.path(), &[]));
    assert!(text.contains("1 of 3 cells affected"), "{text}");
    let gh = stdout(&diff(dir.path(), &["--format", "github"]));
    assert!(
        gh.contains(&format!("::notice file=cells/{STAGING}/apps.yaml,line=")),
        "{gh}"
    );
}

#[test]
fn a_component_change_affects_the_cells_that_run_it() {
    let dir = repo_with_history();
    edit(
        dir.path(),
        "components/karpenter/configs/ec2nodeclass.yaml",
        "role: ${karpenter_node_role}",
        "role: ${karpenter_node_role}-v2",
    );
    let j = json(dir.path());
    assert_eq!(group_cells(&j), vec![vec![PROD_A, PROD_B]]);
    let text = stdout(&diff(dir.path(), &[]));
    assert!(
        text.contains("2 of 3 cells affected, 1 distinct change"),
        "{text}"
    );
    assert!(text.contains("2 cells (2 prod)"), "{text}");
    // Shown with the first cell's own value.
    assert!(
        text.contains(&format!("+  role: {PROD_A}-karpenter-node-v2")),
        "{text}"
    );
}

#[test]
fn a_key_rename_done_everywhere_changes_nothing_and_one_missed_cell_is_named() {
    let dir = repo_with_history();
    edit(dir.path(), "cellgen.yaml", "  aws_region:\n", "  region:\n");
    for file in [
        "infrastructure/controllers/platform-namespace.yaml",
        "infrastructure/configs/cluster-identity.yaml",
    ] {
        edit(dir.path(), file, "${aws_region}", "${region}");
    }
    for cell in [PROD_A, PROD_B] {
        edit(
            dir.path(),
            &format!("terraform/cells/{cell}/cell-metadata.tf"),
            "    aws_region      ",
            "    region          ",
        );
    }
    // The staging cell's ConfigMap still writes aws_region: strict substitution fails there.
    let j = json(dir.path());
    assert_eq!(group_cells(&j), vec![vec![STAGING]], "{j:#}");
    let layers = j["groups"][0]["example"]["layers"].as_array().unwrap();
    assert!(
        layers
            .iter()
            .any(|l| l["error"].as_str().is_some_and(|e| e.contains("region"))),
        "{j:#}"
    );
    edit(
        dir.path(),
        &format!("terraform/cells/{STAGING}/cell-metadata.tf"),
        "    aws_region      ",
        "    region          ",
    );
    let out = diff(dir.path(), &["--exit-code"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[test]
fn a_new_cell_is_all_added_and_the_base_can_be_given() {
    let dir = repo_with_history();
    git(dir.path(), &["checkout", "-q", "-b", "feature"]);
    new_cell(dir.path(), &["ap-southeast-2-staging"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "new cell"]);
    // Default base: the merge-base with main, so the committed cell is a change.
    let j = json(dir.path());
    assert_eq!(group_cells(&j), vec![vec!["ap-southeast-2-staging"]]);
    assert_eq!(j["groups"][0]["example"]["status"], "added");
    assert_eq!(j["cells"].as_array().unwrap().len(), 4);
    // Against HEAD nothing changed.
    let out = diff(dir.path(), &["--base", "HEAD", "--exit-code"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[test]
fn an_unknown_base_is_a_usage_error() {
    let dir = repo_with_history();
    let out = diff(dir.path(), &["--base", "no-such-branch"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--base"), "{}", stderr(&out));
    assert!(stderr(&out).contains("no-such-branch"), "{}", stderr(&out));
}

#[test]
fn without_the_branch_the_message_says_to_give_a_base() {
    let dir = repo_with_history();
    git(dir.path(), &["branch", "-m", "main", "trunk"]);
    let out = diff(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("neither origin/main nor main"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_repository_in_a_subdirectory_of_the_git_work_tree_is_read_at_its_own_path() {
    let top = temp_dir();
    git(top.path(), &["init", "-q", "-b", "main"]);
    let dir = top.path().join("platform");
    std::fs::create_dir(&dir).unwrap();
    new_cell(&dir, &[STAGING]);
    // A file beside the repository, at a path the repository also has: never read.
    std::fs::create_dir_all(top.path().join("infrastructure/controllers")).unwrap();
    std::fs::write(
        top.path()
            .join("infrastructure/controllers/kustomization.yaml"),
        "not: [valid",
    )
    .unwrap();
    git(top.path(), &["add", "-A"]);
    git(top.path(), &["commit", "-q", "-m", "platform"]);
    edit(
        &dir,
        "infrastructure/controllers/platform-namespace.yaml",
        "metadata:\n",
        "metadata:\n  annotations:\n    team: core\n",
    );
    let j = json(&dir);
    assert_eq!(group_cells(&j), vec![vec![STAGING]], "{j:#}");
    let layer = &j["groups"][0]["example"]["layers"][0];
    assert_eq!(layer["layer"], "controllers", "{j:#}");
    assert!(layer.get("base_error").is_none(), "{j:#}");
}

#[test]
fn a_symbolic_link_committed_at_the_base_is_what_flux_would_not_find() {
    let dir = repo_with_history();
    let shared = dir
        .path()
        .join("infrastructure/controllers/platform-namespace.yaml");
    let moved = dir.path().join("platform-namespace.yaml");
    std::fs::rename(&shared, &moved).unwrap();
    std::os::unix::fs::symlink("../../platform-namespace.yaml", &shared).unwrap();
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "a link"]);
    // The working tree puts the file back: the base (a link in Git) did not build.
    std::fs::remove_file(&shared).unwrap();
    std::fs::rename(&moved, &shared).unwrap();
    let j = json(dir.path());
    let layer = &j["groups"][0]["example"]["layers"][0];
    assert_eq!(layer["layer"], "controllers", "{j:#}");
    assert!(
        layer["base_error"]
            .as_str()
            .is_some_and(|e| e.contains("symbolic link")),
        "{j:#}"
    );
    assert!(layer.get("error").is_none(), "{j:#}");
    assert_eq!(group_cells(&j).concat().len(), 3);
}

/// A Git submodule under a layer is what source-controller's GitRepository (no
/// `spec.recurseSubmodules`) makes of it, an empty directory, on both sides of `diff` and in
/// `check`: unreferenced, nothing changes; referenced, the build fails on both sides alike,
/// naming the submodule as the reason, as Flux would fail.
#[test]
fn a_submodule_under_a_layer_is_an_empty_directory_on_both_sides() {
    let sub = temp_dir();
    git(sub.path(), &["init", "-q", "-b", "main"]);
    fs::write(
        sub.path().join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sub\n  namespace: apps\n",
    )
    .unwrap();
    git(sub.path(), &["add", "-A"]);
    git(sub.path(), &["commit", "-q", "-m", "sub"]);
    let dir = new_repo(&["eu-west-2-prod"]);
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    let url = sub.path().to_str().unwrap();
    git(
        root,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            url,
            "apps/vendored",
        ],
    );
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "base"]);
    assert!(root.join("apps/vendored/cm.yaml").exists());

    // Not referenced: nothing to say, and check is green.
    let out = diff(root, &["--base", "HEAD"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("no change"), "{}", stdout(&out));
    assert!(run(root, &["check"]).status.success());

    // Referenced in the working tree: Flux sees nothing there, and neither does cellgen.
    edit(
        root,
        "apps/kustomization.yaml",
        "  - service-account.yaml\n",
        "  - service-account.yaml\n  - vendored/cm.yaml\n",
    );
    let reason = "inside a Git submodule, which Flux's GitRepository checks out empty without spec.recurseSubmodules";
    let out = diff(root, &["--base", "HEAD"]);
    let text = stdout(&out);
    assert!(
        text.contains("rendering at the base: fine") && text.contains(reason),
        "{text}"
    );
    let check = run(root, &["check"]);
    assert_eq!(check.status.code(), Some(1));
    assert!(stdout(&check).contains(reason), "{}", stdout(&check));

    // Committed: the base reads the gitlink as the same empty directory, so both sides agree.
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "reference"]);
    let out = diff(root, &["--base", "HEAD"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("no change"), "{}", stdout(&out));
}

/// Git is started one hardened way (`src/root/git.rs`): a `GIT_DIR` or `GIT_WORK_TREE` in the
/// caller's environment (a CI job's, a hook's) does not send it to another repository.
#[test]
fn the_callers_git_environment_does_not_redirect_the_base() {
    let dir = repo_with_history();
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args(["diff", "--base", "HEAD", "--exit-code"])
        .env("GIT_DIR", "/nonexistent/.git")
        .env("GIT_WORK_TREE", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("no change"), "{}", stdout(&out));
}
