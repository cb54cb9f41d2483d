use super::*;

// ---------------------------------------------------------------------------------------------
// Golden trees
// ---------------------------------------------------------------------------------------------

#[test]
fn add_karpenter_to_a_hand_edited_cell() {
    let (_dir, out) = fixture_case("add-karpenter", &[&["add-component", "karpenter"]]);
    assert_contains(
        &out[0],
        &[
            "created  terraform/cells/eu-west-2-prod/karpenter.tf",
            "updated  cellgen.yaml",
            "Added karpenter to cell eu-west-2-prod.",
            "schema 3 -> 4",
        ],
        "add-component karpenter",
    );
}

#[test]
fn add_a_second_component() {
    let (_dir, out) = fixture_case("add-second", &[&["add-component", "external-dns"]]);
    assert_contains(
        &out[0],
        &[
            "Added external-dns to cell eu-west-2-prod.",
            "schema 2 -> 3",
        ],
        "add-component external-dns",
    );
}

#[test]
fn remove_a_component_that_was_not_the_last_bump() {
    // karpenter's keys came with schema 2, cert-manager's with 3: dropping karpenter's makes a
    // key set no earlier number stood for, so the schema moves on to 4; the cell's own number is
    // that of its newest key, cert-manager's 3.
    let (_dir, out) = fixture_case("remove", &[&["remove-component", "karpenter"]]);
    assert_contains(
        &out[0],
        &[
            "deleted  components/karpenter/controllers/helmrelease.yaml",
            "deleted  terraform/cells/eu-west-2-prod/karpenter.tf",
            "Removed karpenter from cell eu-west-2-prod.",
            "schema 3 -> 4",
        ],
        "remove-component karpenter",
    );
}

#[test]
fn removing_from_one_of_two_cells_keeps_the_shared_component_and_its_keys() {
    let (dir, out) = fixture_case(
        "shared-remove",
        &[&["remove-component", "karpenter", "--cell", DEV]],
    );
    let root = dir.path();
    assert!(
        !out[0].contains("schema"),
        "the key set did not change, yet the schema moved:\n{}",
        out[0]
    );
    // Independent of the golden tree: what must hold whatever `out` says.
    for file in [
        "components/karpenter/controllers/helmrelease.yaml",
        "components/karpenter/configs/nodepool.yaml",
        "terraform/cells/eu-west-2-prod/karpenter.tf",
    ] {
        assert!(root.join(file).is_file(), "{file} was removed");
    }
    assert!(
        !root
            .join("terraform/cells/us-east-1-dev/karpenter.tf")
            .exists()
    );
    let config = read(&root.join("cellgen.yaml"));
    assert_contains(
        &config,
        &["  karpenter_node_role:", "schema: 2"],
        "cellgen.yaml",
    );
    let dev_meta = read(&root.join("terraform/cells/us-east-1-dev/cell-metadata.tf"));
    assert!(
        !dev_meta.contains("karpenter"),
        "the dev cell still has karpenter in its ConfigMap:\n{dev_meta}"
    );
    let prod_meta = read(&root.join("terraform/cells/eu-west-2-prod/cell-metadata.tf"));
    assert_contains(
        &prod_meta,
        &["karpenter_node_role", "module.karpenter,"],
        "prod cell-metadata.tf",
    );

    // Removing it from the last cell takes the shared directory and the keys too.
    let out = run_ok(root, &["remove-component", "karpenter", "--cell", PROD]);
    assert_contains(&out, &["schema 2 -> 1"], "remove from the last cell");
    assert!(!root.join("components/karpenter").exists());
    assert!(!read(&root.join("cellgen.yaml")).contains("karpenter"));
    for cell in [PROD, DEV] {
        let meta = read(&root.join(format!("terraform/cells/{cell}/cell-metadata.tf")));
        assert!(
            meta.contains("\"1\""),
            "{cell} keeps the old schema:\n{meta}"
        );
    }
}

#[test]
fn repository_defined_component_add_and_remove() {
    let (dir, out) = fixture_case("repo-defined", &[&["add-component", "team-agent"]]);
    assert_contains(
        &out[0],
        &[
            "created  terraform/cells/eu-west-2-prod/team-agent.tf",
            "Added team-agent to cell eu-west-2-prod.",
        ],
        "add-component team-agent",
    );
    let out = run_ok(dir.path(), &["remove-component", "team-agent"]);
    assert_contains(
        &out,
        &[
            "Removed team-agent from cell eu-west-2-prod.",
            "schema 4 -> 3",
        ],
        "remove-component team-agent",
    );
    // The repository's own definition is the user's: it stays.
    assert_tree_unchanged(
        &tree_hash(&fixtures().join("repo-defined/in")),
        &tree_hash(dir.path()),
        "add then remove of a repository-defined component",
    );
}

#[test]
fn add_then_remove_restores_every_file_byte_for_byte() {
    for (case, component, cell) in [
        ("add-karpenter", "karpenter", PROD),
        ("add-karpenter", "external-dns", PROD),
        ("add-karpenter", "metrics-server", PROD),
        ("add-second", "external-dns", PROD),
        ("add-second", "aws-ebs-csi-driver", PROD),
        ("remove", "cert-manager", PROD),
        ("shared-remove", "external-secrets", DEV),
        ("repo-defined", "team-agent", PROD),
    ] {
        let dir = fixture_input(case);
        let before = tree_hash(dir.path());
        run_ok(dir.path(), &["add-component", component, "--cell", cell]);
        assert!(
            tree_diff(&before, &tree_hash(dir.path())).len() > 1,
            "{case}: adding {component} changed (almost) nothing"
        );
        run_ok(dir.path(), &["remove-component", component, "--cell", cell]);
        assert_tree_unchanged(
            &before,
            &tree_hash(dir.path()),
            &format!("{case}: add-component {component}, then remove-component {component}"),
        );
    }
}

#[test]
fn adding_a_present_component_changes_nothing() {
    let dir = fixture_input("add-karpenter");
    run_ok(dir.path(), &["add-component", "karpenter"]);
    let before = tree_hash(dir.path());
    for args in [
        &["add-component", "karpenter"][..],
        &["add-component", "karpenter", "--dry-run"],
        &["add-component", "karpenter", "--with-requirements"],
    ] {
        let out = run_ok(dir.path(), args);
        assert_contains(
            &out,
            &["karpenter is already in cell eu-west-2-prod; nothing changed."],
            &args.join(" "),
        );
        assert!(
            !out.contains("updated") && !out.contains("created") && !out.contains("+++"),
            "{}: reports changes:\n{out}",
            args.join(" ")
        );
        assert_tree_unchanged(&before, &tree_hash(dir.path()), &args.join(" "));
    }
    // The inverse: removing an absent component.
    let out = run_ok(dir.path(), &["remove-component", "external-dns"]);
    assert_contains(
        &out,
        &["external-dns is not in cell eu-west-2-prod; nothing changed."],
        "remove-component of an absent component",
    );
    assert_tree_unchanged(&before, &tree_hash(dir.path()), "remove of an absent one");
}

/// Applies a unified diff (as `cellgen --dry-run` prints it, paths `a/…`/`b/…` or /dev/null) to
/// the tree at `root`. Fails on any line that does not match.
pub(crate) fn apply_unified_diff(root: &Path, diff: &str) {
    let lines: Vec<&str> = diff.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let Some(old) = lines[i].strip_prefix("--- ") else {
            i += 1;
            continue;
        };
        let new = lines
            .get(i + 1)
            .and_then(|l| l.strip_prefix("+++ "))
            .unwrap_or_else(|| panic!("`--- {old}` is not followed by `+++`"));
        i += 2;
        let path = if new == "/dev/null" {
            old.strip_prefix("a/").expect("old path without a/")
        } else {
            new.strip_prefix("b/").expect("new path without b/")
        };
        let file = root.join(path);
        let original = if old == "/dev/null" {
            assert!(!file.exists(), "the diff creates {path}, which exists");
            String::new()
        } else {
            read(&file)
        };
        let src: Vec<&str> = original.split_inclusive('\n').collect();
        let mut out = String::new();
        let mut at = 0; // next line of `src` to copy
        let mut last_added = false;
        while i < lines.len() && lines[i].starts_with("@@ ") {
            let header = lines[i];
            let start: usize = header[4..]
                .split([',', ' '])
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("bad hunk header `{header}`"));
            let start = start.saturating_sub(1).max(at);
            out.extend(src[at..start].iter().copied());
            at = start;
            i += 1;
            while i < lines.len() && !lines[i].starts_with("@@ ") && !lines[i].starts_with("diff ")
            {
                let line = lines[i];
                if line.starts_with("\\ No newline") {
                    if last_added && out.ends_with('\n') {
                        out.pop();
                    }
                } else if let Some(text) = line.strip_prefix('+') {
                    out.push_str(text);
                    out.push('\n');
                    last_added = true;
                } else if let Some(text) = line.strip_prefix('-').or(line.strip_prefix(' ')) {
                    let have = src.get(at).map(|l| l.trim_end_matches('\n'));
                    assert_eq!(
                        have,
                        Some(text),
                        "{path}: the diff does not apply at line {}",
                        at + 1
                    );
                    if line.starts_with(' ') {
                        out.push_str(src[at]);
                        last_added = false;
                    }
                    at += 1;
                } else {
                    break;
                }
                i += 1;
            }
        }
        out.extend(src[at..].iter().copied());
        if new == "/dev/null" {
            assert!(out.is_empty(), "{path}: deleted, but the diff keeps lines");
            fs::remove_file(&file).unwrap();
        } else {
            fs::create_dir_all(file.parent().unwrap()).unwrap();
            fs::write(&file, out).unwrap();
        }
    }
}

#[test]
fn dry_run_prints_a_unified_diff_and_writes_nothing() {
    for (case, args) in [
        (
            "add-karpenter",
            &["add-component", "karpenter", "--dry-run", "--verbose"][..],
        ),
        (
            "remove",
            &["remove-component", "karpenter", "--dry-run", "--verbose"],
        ),
        (
            "shared-remove",
            &[
                "remove-component",
                "karpenter",
                "--cell",
                DEV,
                "--dry-run",
                "--verbose",
            ],
        ),
    ] {
        let dir = fixture_input(case);
        let before = tree_hash(dir.path());
        let out = run(dir.path(), args);
        assert!(out.status.success(), "{case}: {}", stderr(&out));
        let diff = stdout(&out);
        assert_contains(&stderr(&out), &["nothing was written"], case);
        assert_tree_unchanged(
            &before,
            &tree_hash(dir.path()),
            &format!("{case}: --dry-run"),
        );
        assert!(
            diff.contains("\n--- a/cells/")
                && diff.contains("\n+++ b/cells/")
                && diff.contains("\n@@ -"),
            "{case}: --dry-run does not print a unified diff:\n{diff}"
        );
        assert!(
            !diff.contains("Added") && !diff.contains("Removed"),
            "{case}: --dry-run claims it changed something:\n{diff}"
        );
        // Applied to the input, the diff gives exactly what the command writes.
        apply_unified_diff(dir.path(), &diff);
        for empty in empty_dirs(dir.path()) {
            fs::remove_dir(dir.path().join(empty)).unwrap();
        }
        let expected = fixture_input(case);
        // The whole diff, records included (--verbose), is what applying writes.
        let real: Vec<&str> = args
            .iter()
            .copied()
            .filter(|a| *a != "--dry-run" && *a != "--verbose")
            .collect();
        run_ok(expected.path(), &real);
        assert_eq!(
            text_files(dir.path()),
            text_files(expected.path()),
            "{case}: the --dry-run diff, applied, differs from what `cellgen {}` writes",
            real.join(" ")
        );
    }
}

#[test]
fn new_with_components_equals_new_then_add_component() {
    let url = [
        "--git-url",
        GIT_URL,
        "--dns-zones",
        DNS_ZONE,
        "--admin-role-arn",
        ADMIN_ROLE,
    ];
    // A first cell.
    let together = temp_dir();
    run_ok(
        together.path(),
        &[
            &["new", PROD, "--components", "karpenter,external-dns"][..],
            &url,
        ]
        .concat(),
    );
    let apart = temp_dir();
    run_ok(apart.path(), &[&["new", PROD][..], &url].concat());
    run_ok(apart.path(), &["add-component", "karpenter"]);
    run_ok(apart.path(), &["add-component", "external-dns"]);
    // The same files, but one command moves the contract's number once.
    assert_eq!(
        files_but_numbers(apart.path()),
        files_but_numbers(together.path()),
        "`new --components karpenter,external-dns` differs from `new` + two `add-component`"
    );
    assert_eq!(numbers(together.path()).0, 2);
    assert_eq!(numbers(apart.path()).0, 3);
    assert_eq!(cell_number(together.path(), PROD), "2");

    // A second cell, in a repository where one key set is already in the contract.
    run_ok(
        together.path(),
        &["new", DEV, "--components", "external-dns,cert-manager"],
    );
    run_ok(apart.path(), &["new", DEV]);
    run_ok(
        apart.path(),
        &["add-component", "external-dns", "--cell", DEV],
    );
    run_ok(
        apart.path(),
        &["add-component", "cert-manager", "--cell", DEV],
    );
    assert_eq!(
        files_but_numbers(apart.path()),
        files_but_numbers(together.path()),
        "second cell: `new --components` differs from `new` + `add-component`"
    );
    // cert-manager's keys joined with the second `new`: one more number, which only the cell
    // running it carries; the first cell keeps its own.
    assert_eq!(numbers(together.path()).0, 3);
    assert_eq!(cell_number(together.path(), DEV), "3");
    assert_eq!(cell_number(together.path(), PROD), "2");
}
