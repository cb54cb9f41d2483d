use super::*;

/// Where each of `needles` first appears in `text`, asserting they appear in that order.
#[track_caller]
fn assert_in_order(text: &str, needles: &[&str]) {
    let mut from = 0;
    for needle in needles {
        let at = text[from..]
            .find(needle)
            .unwrap_or_else(|| panic!("no `{needle}` after byte {from} of:\n{text}"));
        from += at + needle.len();
    }
}

/// The tear-down a cell's removal prints: layers last first, then the stack's destroy.
fn teardown_order(cell: &str) -> Vec<String> {
    vec![
        format!("aws eks update-kubeconfig --region us-east-1 --name {cell}"),
        "patch kustomization flux-system".into(),
        "delete kustomization apps --wait".into(),
        "delete kustomization configs --wait".into(),
        "delete kustomization controllers --wait".into(),
        format!("terraform -chdir=terraform/cells/{cell} destroy"),
        format!("cellgen remove-cell {cell} --terraform-destroyed"),
    ]
}

#[test]
fn remove_cell_takes_the_git_side_keeps_the_stack_and_prints_the_tear_down_in_order() {
    let dir = fleet();
    let root = dir.path();
    // Committed, as a cellgen repository is: a re-run of a removal finds the cell in Git's
    // history, which is how it knows the cell was removed rather than misspelt.
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "fleet"]);
    // A key only dev writes leaves with it; one dev and prod write stays, for prod only.
    run_ok(
        root,
        &[
            "key",
            "add",
            "dev_only",
            "--terraform",
            "var.name",
            "--example",
            "x",
            "--description",
            "d",
            "--cell",
            DEV,
        ],
    );
    run_ok(
        root,
        &[
            "key",
            "add",
            "shared_key",
            "--terraform",
            "var.name",
            "--example",
            "x",
            "--description",
            "d",
            "--cell",
            DEV,
            "--cell",
            PROD,
        ],
    );
    let start = contract_number(root);
    let prod_metadata = read(&root.join(format!("terraform/cells/{PROD}/cell-metadata.tf")));

    let (out, changed) = apply_once(root, &["remove-cell", DEV]);
    assert!(
        changed
            .iter()
            .all(|p| p.starts_with(&format!("cells/{DEV}/"))
                || p == &format!(".cellgen/cells/{DEV}.json")
                || p.starts_with("components/karpenter/")
                || p == "cellgen.yaml"
                || p == ".cellgen/repository.json"),
        "{changed:?}"
    );
    assert!(!root.join(format!("cells/{DEV}")).exists());
    assert!(!root.join(format!(".cellgen/cells/{DEV}.json")).exists());
    assert!(
        !root.join("components/karpenter").exists(),
        "no other cell runs it"
    );
    assert!(
        root.join("components/external-dns").exists(),
        "other cells run it"
    );
    let record = read(&root.join(".cellgen/repository.json"));
    assert!(
        !record.contains("components/karpenter/") && record.contains("components/external-dns/"),
        "the repository's record lists what is left:\n{record}"
    );
    assert!(
        root.join(format!("terraform/cells/{DEV}/main.tf")).exists()
            || root
                .join(format!("terraform/cells/{DEV}/cluster.tf"))
                .exists(),
        "the stack stays until it is destroyed"
    );
    let config = read(&root.join("cellgen.yaml"));
    assert_never_mentions(&config, &["karpenter_role_arn:"]);
    assert_never_mentions(&config, &["dev_only:"]);
    assert_mentions(&config, &["  shared_key:"]);
    assert_mentions(&config, &[&format!("    cells: [{PROD}]")]);
    assert_eq!(
        contract_number(root),
        start + 1,
        "one move for the whole command"
    );
    assert_eq!(
        read(&root.join(format!("terraform/cells/{PROD}/cell-metadata.tf"))),
        prod_metadata,
        "prod's ConfigMap is not touched"
    );
    let order = teardown_order(DEV);
    assert_in_order(&out, &order.iter().map(String::as_str).collect::<Vec<_>>());
    assert_mentions(&out, &[&format!("Kept terraform/cells/{DEV}")]);
    check_green(root);
    let rows = list_json(root);
    assert_eq!(rows.len(), 2);

    // Run again (the Git side already gone): the same steps, nothing written.
    let again = run_ok(root, &["remove-cell", DEV]);
    assert_in_order(
        &again,
        &order.iter().map(String::as_str).collect::<Vec<_>>(),
    );

    // Once destroyed: the stack leaves Git too.
    let (out, changed) = apply_once(root, &["remove-cell", DEV, "--terraform-destroyed"]);
    assert!(
        changed
            .iter()
            .all(|p| p.starts_with(&format!("terraform/cells/{DEV}/"))),
        "{changed:?}"
    );
    assert!(
        !root.join(format!("terraform/cells/{DEV}")).exists(),
        "{out}"
    );
    check_green(root);
    let out = run_ok(root, &["remove-cell", DEV]);
    assert_mentions(&out, &[&format!("Cell `{DEV}` was already removed")]);
}

/// A cell the repository's Git history has, gone from the working tree (removed and committed,
/// or removed and not committed yet): a re-run says so and succeeds, writing nothing.
#[test]
fn remove_cell_of_a_cell_git_shows_removed_succeeds_writing_nothing() {
    let dir = fleet();
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "fleet"]);
    run_ok(root, &["remove-cell", DEV, "--terraform-destroyed"]);
    for committed in [false, true] {
        if committed {
            git(root, &["add", "-A"]);
            git(root, &["commit", "-q", "-m", "remove dev"]);
        }
        let before = tree_hash(root);
        let out = run_ok(root, &["remove-cell", DEV]);
        assert!(
            out.contains(&format!(
                "Cell `{DEV}` was already removed: Git history has it"
            )) && out.contains("Nothing to change."),
            "{out}"
        );
        assert_tree_unchanged(&before, &tree_hash(root), "a cell already removed");
    }
    // A name Git never had is still a usage error (exit 2, as an unknown cell is everywhere), with
    // the did-you-mean.
    run_fails(
        root,
        &["remove-cell", "eu-west-3-prod"],
        2,
        &[
            "there is no cell `eu-west-3-prod` to remove",
            "Did you mean `eu-west-2-prod`?",
        ],
    );
}

/// A dry run ends with "Dry run: nothing was written." (on stderr, after the tear-down steps), as
/// every other command's does; stdout is the diff alone.
#[test]
fn remove_cell_dry_run_says_nothing_was_written_last() {
    let dir = fleet();
    let root = dir.path();
    let before = tree_hash(root);
    let out = run(root, &["remove-cell", DEV, "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("Tear-down of") && err.ends_with("Dry run: nothing was written.\n"),
        "{err}"
    );
    assert!(
        stdout(&out).starts_with("diff --cellgen a/"),
        "{}",
        stdout(&out)
    );
    assert_tree_unchanged(&before, &tree_hash(root), "remove-cell --dry-run");
}

#[test]
fn remove_cell_will_not_drop_a_stack_whose_local_state_still_lists_resources() {
    let dir = fleet();
    let root = dir.path();
    let state = root.join(format!("terraform/cells/{PROD}/terraform.tfstate"));
    fs::write(
        &state,
        r#"{"version":4,"resources":[{"type":"aws_vpc","name":"this","instances":[{}]}]}"#,
    )
    .unwrap();
    run_fails(
        root,
        &["remove-cell", PROD, "--terraform-destroyed"],
        1,
        &[
            &format!("terraform/cells/{PROD}/terraform.tfstate"),
            "lists 1 resource(s) (aws_vpc.this)",
            "destroy",
        ],
    );
}

#[test]
fn remove_cell_suggests_the_cell_meant() {
    let dir = fleet();
    let root = dir.path();
    run_fails(
        root,
        &["remove-cell", "eu-west-2-prd"],
        2,
        &[
            "invalid cell name `eu-west-2-prd`",
            "Did you mean `eu-west-2-prod`?",
        ],
    );
    // A well-formed name that is no cell, and no cell Git shows removed: an error with the
    // did-you-mean, nothing written (run_fails checks the tree).
    run_fails(
        root,
        &["remove-cell", "eu-west-3-prod"],
        2,
        &[
            "there is no cell `eu-west-3-prod` to remove",
            "no Git commit has them",
            "Did you mean `eu-west-2-prod`?",
        ],
    );
}
