//! `list components` outside a repository, and the CLI defects issue 12 found: remove-component
//! offering --with-requirements, --egress-gateway with --no-egress-gateway accepted, and
//! add-component asking for the cell before checking the component's name.

use std::fs;

use serde_json::Value;

use super::*;

#[test]
fn list_components_works_outside_a_repository() {
    let dir = temp_dir();
    let before = tree_hash(dir.path());
    let table = run_ok(dir.path(), &["list", "components"]);
    let json: Value = serde_json::from_str(&run_ok(
        dir.path(),
        &["list", "components", "--format", "json"],
    ))
    .unwrap();
    let names: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(c["origin"], "embedded", "{c}");
            c["name"].as_str().unwrap()
        })
        .collect();
    assert!(
        names.contains(&"karpenter") && names.len() >= 8,
        "{names:?}"
    );
    for name in &names {
        assert!(table.contains(name), "the table lacks {name}:\n{table}");
    }
    assert_tree_unchanged(&before, &tree_hash(dir.path()), "list components");

    // A components/ directory outside a repository is not a catalog.
    fs::create_dir_all(dir.path().join("components/stray")).unwrap();
    fs::write(
        dir.path().join("components/stray/component.yaml"),
        "description: not in a repository\nlayers: [apps]\n",
    )
    .unwrap();
    assert!(!run_ok(dir.path(), &["list", "components"]).contains("stray"));

    // Cells still need a repository.
    let out = run(dir.path(), &["list"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no cellgen repository"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn list_components_in_a_repository_adds_its_own() {
    let dir = new_repo(&[PROD]);
    let root = dir.path();
    fs::create_dir_all(root.join("components/billing/apps")).unwrap();
    fs::write(
        root.join("components/billing/component.yaml"),
        "description: Billing service\nlayers: [apps]\n",
    )
    .unwrap();
    // From a subdirectory: the repository is found upwards.
    let out = cellgen()
        .current_dir(root.join("cells"))
        .args(["list", "components", "--format", "json"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let billing = json
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "billing")
        .unwrap_or_else(|| panic!("billing is not listed: {json}"));
    assert_eq!(billing["origin"], "repository");
}

#[test]
fn remove_component_offers_no_with_requirements() {
    let dir = temp_dir();
    let help = run_ok(dir.path(), &["remove-component", "--help"]);
    assert!(
        !help.contains("--with-requirements") && !help.contains("Also add"),
        "remove-component --help:\n{help}"
    );
    assert!(run_ok(dir.path(), &["add-component", "--help"]).contains("--with-requirements"));

    let repo = new_repo(&["eu-west-2-prod --components karpenter"]);
    let before = tree_hash(repo.path());
    let out = run(
        repo.path(),
        &["remove-component", "karpenter", "--with-requirements"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--with-requirements"),
        "{}",
        stderr(&out)
    );
    assert_tree_unchanged(&before, &tree_hash(repo.path()), "a refused flag");
}

#[test]
fn egress_gateway_and_no_egress_gateway_conflict() {
    let dir = temp_dir();
    for args in [
        ["--egress-gateway", "--no-egress-gateway"],
        ["--no-egress-gateway", "--egress-gateway"],
    ] {
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
            ])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let message = stderr(&out);
        assert!(
            message.contains("--egress-gateway") && message.contains("--no-egress-gateway"),
            "{message}"
        );
        assert!(
            fs::read_dir(dir.path()).unwrap().next().is_none(),
            "{args:?} wrote files"
        );
    }
    // Each alone still works.
    new_cell(dir.path(), &[PROD, "--no-egress-gateway"]);
    new_cell(dir.path(), &[DEV, "--egress-gateway"]);
    assert!(
        dir.path()
            .join("terraform/cells/us-east-1-dev/egress.tf")
            .is_file()
    );
    assert!(
        !dir.path()
            .join("terraform/cells/eu-west-2-prod/egress.tf")
            .exists()
    );
}

/// Two cells and no --cell: without a terminal the cell would be an error listing the cells,
/// with one a question; a misspelt component is reported first, either way.
#[test]
fn a_misspelt_component_fails_before_the_cell_is_resolved() {
    let dir = new_repo(&[PROD, DEV]);
    let before = tree_hash(dir.path());
    for verb in ["add-component", "remove-component"] {
        let out = run(dir.path(), &[verb, "karpentr"]);
        let message = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{verb}: {message}");
        assert!(
            message.contains("unknown component `karpentr`. Did you mean `karpenter`?"),
            "{verb}: {message}"
        );
        assert!(!message.contains("which cell"), "{verb}: {message}");
    }
    assert_tree_unchanged(&before, &tree_hash(dir.path()), "a misspelt component");
}

#[cfg(unix)]
#[test]
fn on_a_terminal_a_misspelt_component_is_not_preceded_by_the_cell_question() {
    use std::time::Duration;

    use expectrl::{Eof, Session, WaitStatus};

    let dir = new_repo(&[PROD, DEV]);
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_cellgen"));
    cmd.current_dir(dir.path())
        .args(["add-component", "karpentr"])
        .env_remove("CELLGEN_NO_INPUT")
        .env("TERM", "dumb");
    isolate(&mut cmd);
    let mut session = Session::spawn(cmd).expect("cannot start cellgen on a PTY");
    session.set_expect_timeout(Some(Duration::from_secs(30)));
    let mut output = Vec::new();
    session
        .expect(Eof)
        .map(|found| output.extend_from_slice(found.get(0).unwrap_or_default()))
        .expect("cellgen did not exit (is it waiting for an answer?)");
    let text = String::from_utf8_lossy(&output);
    let status = session.get_process().wait().unwrap();
    assert!(
        matches!(status, WaitStatus::Exited(_, 2)),
        "{status:?}: {text}"
    );
    assert!(text.contains("Did you mean `karpenter`?"), "{text}");
    assert!(
        !text.contains("Which cell?"),
        "it asked for the cell first:\n{text}"
    );
}

/// `init --git-url/--git-branch` in an existing repository does what the flags say: cellgen.yaml's
/// Git source changes in place (reported as updated, the old and new values named), a second run
/// changes nothing, and `upgrade` carries it to the cells. A settings flag init does not change
/// there is refused, naming it, unless it says what cellgen.yaml already says.
#[test]
fn init_in_an_existing_repository_applies_the_git_source_flags() {
    let dir = new_repo(&[PROD]);
    let root = dir.path();
    let config = root.join("cellgen.yaml");
    let original = read(&config);
    let args = [
        "init",
        "--git-url",
        "git@github.com:acme/platform.git",
        "--git-branch",
        "release",
    ];
    let out = run_ok(root, &args);
    assert!(
        out.contains(
            "git.url: ssh://git@github.com/acme/infra.git -> ssh://git@github.com/acme/platform.git"
        ) && out.contains("git.branch: main -> release")
            && out.contains("updated  cellgen.yaml")
            && out.contains(
                "`cellgen upgrade` carries it to the terraform.tfvars of 1 existing cell(s)"
            ),
        "{out}"
    );
    assert_eq!(
        read(&config),
        original
            .replace(
                "url: ssh://git@github.com/acme/infra.git",
                "url: ssh://git@github.com/acme/platform.git"
            )
            .replace("branch: main", "branch: release")
    );
    let before = tree_hash(root);
    let out = run_ok(root, &args);
    assert!(out.contains("nothing to do"), "{out}");
    assert_tree_unchanged(&before, &tree_hash(root), "init with the same Git source");
    run_ok(root, &["upgrade"]);
    let tfvars = read(&root.join(format!("terraform/cells/{PROD}/terraform.tfvars")));
    assert!(
        tfvars.contains("\"ssh://git@github.com/acme/platform.git\"")
            && tfvars.contains("\"release\""),
        "{tfvars}"
    );

    // The same admin roles as cellgen.yaml's: nothing to refuse. Others: refused, nothing written.
    let roles = yaml_serde::from_str::<yaml_serde::Value>(&read(&config)).unwrap()["cluster_access"]
        ["admin_role_arns"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect::<Vec<_>>()
        .join(",");
    run_ok(root, &["init", "--admin-role-arn", &roles]);
    for (flag, value, field) in [
        (
            "--admin-role-arn",
            "arn:aws:iam::123456789012:role/other",
            "cluster_access.admin_role_arns",
        ),
        (
            "--state-bucket",
            "acme-other-state",
            "terraform.state_bucket",
        ),
        (
            "--public-endpoint-cidrs",
            "203.0.113.0/24",
            "cluster_access.public_endpoint_cidrs",
        ),
    ] {
        let before = tree_hash(root);
        let out = run(root, &["init", flag, value, "--git-branch", "next"]);
        assert_eq!(out.status.code(), Some(2), "{flag}");
        let err = stderr(&out);
        assert!(
            err.contains(flag)
                && err.contains(&format!("change `{field}` in it yourself"))
                && err.contains("Nothing was written"),
            "{err}"
        );
        assert_tree_unchanged(&before, &tree_hash(root), flag);
    }
}
