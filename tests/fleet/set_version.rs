use super::*;

const SHARED: &str = "components/external-dns/controllers/helmrelease.yaml";

/// A field of the chart object (`kind`, named after its component) in a cell's rendering.
fn rendered_version(root: &Path, cell: &str, kind: &str, field: &str) -> String {
    let out = run_ok(root, &["render", cell]);
    let docs = parse_yaml_docs("render", &out).unwrap();
    let doc = docs
        .iter()
        .find(|d| {
            d.value["kind"] == kind
                && ["external-dns", "karpenter"]
                    .contains(&d.value["metadata"]["name"].as_str().unwrap_or(""))
        })
        .unwrap_or_else(|| panic!("no {kind} in {cell}'s rendering"));
    let mut at = &doc.value;
    for part in field.split('.') {
        at = &at[part];
    }
    at.as_str()
        .unwrap_or_else(|| panic!("{kind}: no {field}"))
        .to_string()
}

fn helm_version(root: &Path, cell: &str) -> String {
    rendered_version(root, cell, "HelmRelease", "spec.chart.spec.version")
}

#[test]
fn a_staged_roll_out_moves_one_environment_per_change_and_converges_to_one_definition() {
    let dir = fleet();
    let root = dir.path();
    let original = helm_version(root, DEV);
    let files_before = files_of(&tree_hash(root));
    let target = "1.20.0";
    assert_ne!(original, target);

    // dev: one file, the cell's layer file; its hand edits kept.
    let (out, changed) = apply_once(
        root,
        &["set-version", "external-dns", target, "--env", "dev"],
    );
    assert_eq!(changed, [format!("cells/{DEV}/controllers.yaml")], "{out}");
    assert_mentions(
        &out,
        &[&format!("{DEV}: external-dns chart {original} -> {target}")],
    );
    let dev_file = read(&root.join(format!("cells/{DEV}/controllers.yaml")));
    assert!(
        dev_file.contains("patches:") && dev_file.contains(&format!("value: {target}\n")),
        "{dev_file}"
    );
    assert_eq!(helm_version(root, DEV), target);
    assert_eq!(helm_version(root, STAGING), original);
    assert_eq!(helm_version(root, PROD), original);
    let rows = list_json(root);
    assert_eq!(
        row(&rows, DEV)["versions"]["external-dns"],
        serde_json::json!({"version": target, "own": true})
    );
    assert_eq!(
        row(&rows, PROD)["versions"]["external-dns"],
        serde_json::json!({"version": original, "own": false})
    );
    assert!(
        run_ok(root, &["list"]).contains(&format!("external-dns {target}*")),
        "the table marks the cell's own version"
    );
    check_green(root);

    // staging: by name this time.
    let (_, changed) = apply_once(
        root,
        &["set-version", "external-dns", target, "--cell", STAGING],
    );
    assert_eq!(changed, [format!("cells/{STAGING}/controllers.yaml")]);
    assert_eq!(helm_version(root, STAGING), target);
    assert_eq!(helm_version(root, PROD), original);
    check_green(root);

    // prod, the last one: the shared definition moves and the overrides go.
    let (out, changed) = apply_once(
        root,
        &["set-version", "external-dns", target, "--env", "prod"],
    );
    assert_eq!(
        changed,
        [
            format!("cells/{STAGING}/controllers.yaml"),
            format!("cells/{DEV}/controllers.yaml"),
            SHARED.to_string(),
        ]
        .into_iter()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>(),
        "{out}"
    );
    assert_mentions(&out, &["no cell overrides it"]);
    let files_after = files_of(&tree_hash(root));
    for cell in CELLS {
        let path = std::path::PathBuf::from(format!("cells/{cell}/controllers.yaml"));
        assert_eq!(
            files_after[&path], files_before[&path],
            "{cell}: back to its text before the roll-out (no leftover patch)"
        );
        assert_eq!(helm_version(root, cell), target);
        assert_eq!(
            row(&list_json(root), cell)["versions"]["external-dns"],
            serde_json::json!({"version": target, "own": false})
        );
    }
    // The shared file: one line changed, the hand-written comment kept.
    let before = String::from_utf8(files_before[Path::new(SHARED)].clone()).unwrap();
    let after = read(&root.join(SHARED));
    assert_eq!(
        after,
        before.replace(
            &format!("version: {original}"),
            &format!("version: {target}")
        )
    );
    assert!(after.contains("# shared by every cell"));
    check_green(root);

    // And back, all at once: one file.
    let (_, changed) = apply_once(root, &["set-version", "external-dns", &original]);
    assert_eq!(changed, [SHARED]);
}

#[test]
fn a_chart_from_an_oci_repository_moves_by_its_tag() {
    let dir = fleet();
    let root = dir.path();
    run_ok(root, &["add-component", "karpenter", "--cell", PROD]);
    let tag = |cell| rendered_version(root, cell, "OCIRepository", "spec.ref.tag");
    let original = tag(PROD);
    let (out, changed) = apply_once(root, &["set-version", "karpenter", "1.13.0", "--cell", DEV]);
    assert_eq!(changed, [format!("cells/{DEV}/controllers.yaml")], "{out}");
    assert_mentions(&out, &["karpenter tag"]);
    assert_eq!(tag(DEV), "1.13.0");
    assert_eq!(tag(PROD), original);
    let text = read(&root.join(format!("cells/{DEV}/controllers.yaml")));
    assert!(
        text.contains("kind: OCIRepository") && text.contains("path: /spec/ref/tag"),
        "{text}"
    );
    check_green(root);
}

#[test]
fn a_cells_own_version_is_kept_by_new_force_like_a_hand_edit() {
    let dir = fleet();
    let root = dir.path();
    run_ok(
        root,
        &["set-version", "external-dns", "1.20.0", "--env", "dev"],
    );
    let layer = root.join(format!("cells/{DEV}/controllers.yaml"));
    let patched = read(&layer);
    let out = run_ok(root, &["new", DEV, "--force"]);
    assert_eq!(read(&layer), patched, "new --force replaced it:\n{out}");
    assert_eq!(helm_version(root, DEV), "1.20.0");
}

#[test]
fn set_version_refuses_what_it_cannot_do_naming_the_flag() {
    let dir = fleet();
    let root = dir.path();
    run_fails(
        root,
        &["set-version", "external-dsn", "1.20.0"],
        2,
        &[
            "unknown component `external-dsn`",
            "Did you mean `external-dns`?",
        ],
    );
    run_fails(
        root,
        &["set-version", "external-dns", "1.20"],
        2,
        &[
            "VERSION",
            "`1.20` is not a chart version",
            "MAJOR.MINOR.PATCH",
        ],
    );
    run_fails(
        root,
        &["set-version", "karpenter", "1.13.0+build!"],
        2,
        &["VERSION", "not an OCI tag"],
    );
    run_fails(
        root,
        &["set-version", "external-dns", "1.20.0", "--env", "qa"],
        2,
        &["--env", "`qa` is not an environment", "dev, staging, prod"],
    );
    run_fails(
        root,
        &[
            "set-version",
            "external-dns",
            "1.20.0",
            "--cell",
            "us-east-1-dv",
        ],
        2,
        &[
            "unknown cell `us-east-1-dv`",
            "Did you mean `us-east-1-dev`?",
        ],
    );
    run_fails(
        root,
        &["set-version", "karpenter", "1.13.0", "--cell", PROD],
        2,
        &["--cell", "does not run karpenter", DEV],
    );
    run_fails(
        root,
        &["set-version", "karpenter", "1.13.0", "--env", "prod"],
        2,
        &["--env", "no cell of prod runs karpenter"],
    );
    run_fails(
        root,
        &["set-version", "cert-manager", "1.19.0"],
        1,
        &[
            "no cell runs cert-manager",
            "cellgen add-component cert-manager",
        ],
    );
}

#[test]
fn a_cells_own_version_leaves_with_the_component() {
    let dir = fleet();
    let root = dir.path();
    let layer = root.join(format!("cells/{DEV}/controllers.yaml"));
    let before = read(&layer);
    run_ok(
        root,
        &["set-version", "external-dns", "1.20.0", "--env", "dev"],
    );
    run_ok(root, &["remove-component", "external-dns", "--cell", DEV]);
    let after = read(&layer);
    assert!(!after.contains("patches:"), "a leftover pin:\n{after}");
    // Added again, it runs the shared version, and the file has the lines it had (the
    // component now listed last).
    run_ok(root, &["add-component", "external-dns", "--cell", DEV]);
    let lines = |text: &str| {
        let mut l: Vec<String> = text.lines().map(str::to_string).collect();
        l.sort();
        l
    };
    assert_eq!(lines(&read(&layer)), lines(&before));
    assert_eq!(helm_version(root, DEV), helm_version(root, PROD));
    check_green(root);
}

/// Cilium is installed by Terraform, so its version is a line per environment in cellgen.yaml,
/// which every cell's cni.tf reads (issue 19): `set-version cilium` moves one environment per
/// change, one minor version at a time, and refuses `--cell`.
#[test]
fn cilium_moves_one_environment_per_change_through_cellgen_yaml() {
    let dir = fleet();
    let root = dir.path();
    let cni = read(&root.join(format!("terraform/cells/{DEV}/cni.tf")));
    assert_mentions(
        &cni,
        &["  version   = local.settings.cilium.version[var.environment]\n"],
    );
    let config = root.join("cellgen.yaml");
    let version_of = |env: &str| -> String {
        let settings: Value = yaml_serde::from_str(&read(&config)).unwrap();
        settings["cilium"]["version"][env]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(version_of("dev"), "1.20.0");
    // Go back a release in every environment first, as a repository that runs 1.19 would.
    edit_file(
        root,
        "cellgen.yaml",
        "    dev: 1.20.0\n    staging: 1.20.0\n    prod: 1.20.0\n",
        "    dev: 1.19.6\n    staging: 1.19.6\n    prod: 1.19.6\n",
    );
    let (out, changed) = apply_once(root, &["set-version", "cilium", "1.20.0", "--env", "dev"]);
    assert_eq!(changed, ["cellgen.yaml"]);
    assert_mentions(&out, &["dev: cilium 1.19.6 -> 1.20.0"]);
    assert_eq!(
        (version_of("dev").as_str(), version_of("staging").as_str()),
        ("1.20.0", "1.19.6")
    );
    check_green(root);
    // A step Cilium does not support, a malformed version, a cell: refused, nothing written.
    run_fails(
        root,
        &["set-version", "cilium", "1.21.0", "--env", "staging"],
        2,
        &[
            "staging runs Cilium 1.19.6",
            "one minor version at a time",
            "1.20.x",
        ],
    );
    run_fails(
        root,
        &["set-version", "cilium", "1.20", "--env", "prod"],
        2,
        &["not a Cilium release"],
    );
    run_fails(
        root,
        &["set-version", "cilium", "1.20.0", "--cell", PROD],
        2,
        &["per environment", "--env"],
    );
    run_fails(
        root,
        &["set-version", "cilium", "1.20.0", "--env", "qa"],
        2,
        &["`qa`"],
    );
    // Every environment at once.
    let (out, _) = apply_once(root, &["set-version", "cilium", "1.20.0"]);
    assert!(
        out.contains("staging: cilium 1.19.6 -> 1.20.0")
            && out.contains("prod: cilium 1.19.6 -> 1.20.0"),
        "{out}"
    );
    let out = run_ok(root, &["set-version", "cilium", "1.20.0"]);
    assert_mentions(&out, &["already run"]);
}
