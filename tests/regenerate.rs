//! `cellgen new CELL --force`: regenerates only the files the user has not changed, never drops a
//! component, key, identity or line the cell has, says which files it kept, and a second run
//! changes no byte, whichever file the user edited.

mod support;

use std::fs;
use std::path::Path;

use support::*;

const PROD: &str = "eu-west-2-prod";

/// A cell made with non-default inputs, whose components were added in an order that is not the
/// alphabetical one.
fn setup(dir: &Path) {
    new_cell(
        dir,
        &[PROD, "--egress-gateway", "--kubernetes-version", "1.33"],
    );
    for name in ["kyverno", "karpenter"] {
        let out = cellgen()
            .arg("-C")
            .arg(dir)
            .args(["add-component", name])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn force(dir: &Path, extra: &[&str]) -> String {
    let out = cellgen()
        .arg("-C")
        .arg(dir)
        .args(["new", PROD, "--force"])
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "new --force failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn rel(path: &str) -> String {
    path.replace("<cell>", PROD)
}

/// Everything the cell has: both components in every layer they use, the keys and identities in
/// the ConfigMap, the component stacks, the egress gateway, the Kubernetes version.
#[track_caller]
fn assert_cell_complete(dir: &Path) {
    let text = |p: &str| read(&dir.join(rel(p)));
    for (file, needles) in [
        (
            "cells/<cell>/controllers.yaml",
            &[
                "components/kyverno/controllers",
                "components/karpenter/controllers",
            ][..],
        ),
        (
            "cells/<cell>/configs.yaml",
            &["components/kyverno/configs", "components/karpenter/configs"][..],
        ),
        (
            "terraform/cells/<cell>/cell-metadata.tf",
            &[
                "karpenter_role_arn",
                "karpenter_interruption_queue",
                "karpenter_node_role",
                "module.karpenter",
                "aws_eks_pod_identity_association.app",
            ][..],
        ),
        ("terraform/cells/<cell>/terraform.tfvars", &["\"1.33\""][..]),
        ("terraform/cells/<cell>/cni.tf", &["egressGateway"][..]),
    ] {
        let content = text(file);
        for needle in needles {
            assert!(
                content.contains(needle),
                "{file} lost `{needle}`:\n{content}"
            );
        }
    }
    for file in ["karpenter.tf", "egress.tf"] {
        assert!(
            dir.join(rel(&format!("terraform/cells/<cell>/{file}")))
                .is_file(),
            "{file} is gone"
        );
    }
}

#[test]
fn force_on_an_untouched_cell_changes_nothing_at_all() {
    let dir = temp_dir();
    setup(dir.path());
    let before = tree_hash(dir.path());
    let stdout = force(dir.path(), &[]);
    assert_mentions(&stdout, &["Nothing to change"]);
    assert_never_mentions(&stdout, &["kept"]);
    assert_tree_unchanged(
        &before,
        &tree_hash(dir.path()),
        "new --force on an untouched cell",
    );
    assert_cell_complete(dir.path());
}

/// The kinds of file a user edits, and an edit of each.
const EDITS: &[(&str, &str)] = &[
    (
        "cells/<cell>/controllers.yaml",
        "# pinned by the platform team\n",
    ),
    ("cells/<cell>/kustomization.yaml", "# reviewed\n"),
    ("terraform/cells/<cell>/cell-metadata.tf", "# reviewed\n"),
    (
        "terraform/cells/<cell>/karpenter.tf",
        "# larger nodes soon\n",
    ),
    ("terraform/cells/<cell>/cluster.tf", "# see the runbook\n"),
    (
        "terraform/cells/<cell>/terraform.tfvars",
        "# cost centre 42\n",
    ),
];

#[test]
fn force_keeps_each_kind_of_edited_file_regenerates_the_rest_and_a_second_run_changes_nothing() {
    for (file, line) in EDITS {
        let file = rel(file);
        let dir = temp_dir();
        let root = dir.path();
        setup(root);
        let outputs = rel("terraform/cells/<cell>/outputs.tf");
        let original_outputs = fs::read(root.join(&outputs)).unwrap();

        // The user's edit (a line at the top, so a parser would see it first), a deleted
        // generated file, and a setting change every layer file follows.
        let edited = format!("{line}{}", read(&root.join(&file)));
        fs::write(root.join(&file), &edited).unwrap();
        fs::remove_file(root.join(&outputs)).unwrap();
        let config = read(&root.join("cellgen.yaml"));
        let config = config.replace("  - name: ", "  - interval: 5m\n    name: ");
        fs::write(root.join("cellgen.yaml"), config).unwrap();
        let before = tree_hash(root);

        let stdout = force(root, &[]);
        let context = format!("editing {file}");
        assert_eq!(
            read(&root.join(&file)),
            edited,
            "{context}: the edit was overwritten"
        );
        assert!(
            stdout.contains(&format!("kept  {file} (you changed it")),
            "{context}: no word of keeping it:\n{stdout}"
        );
        assert_eq!(
            fs::read(root.join(&outputs)).unwrap(),
            original_outputs,
            "{context}: the deleted file was not regenerated"
        );
        assert_cell_complete(root);
        // Exactly: the deleted file back, the layer files the user did not edit regenerated
        // with the new interval, and the record.
        let mut expected = vec![format!("added    {outputs}")];
        for layer in ["apps", "configs", "controllers"] {
            let layer = rel(&format!("cells/<cell>/{layer}.yaml"));
            if layer != file {
                assert!(
                    read(&root.join(&layer)).contains("interval: 5m"),
                    "{context}: {layer}"
                );
                expected.push(format!("changed  {layer}"));
            }
        }
        expected.push(format!("changed  .cellgen/cells/{PROD}.json"));
        expected.sort();
        let mut diff = tree_diff(&before, &tree_hash(root));
        diff.sort();
        assert_eq!(diff, expected, "{context}");

        let after = tree_hash(root);
        let stdout = force(root, &[]);
        assert_tree_unchanged(
            &after,
            &tree_hash(root),
            &format!("{context}: a second --force"),
        );
        assert!(
            stdout.contains(&format!("kept  {file}")),
            "{context}:\n{stdout}"
        );
    }
}

/// Issue 12: "Nothing to change." followed by "kept ..." contradicted itself. The kept files come
/// first, then the line that says nothing else changed; a dry run's notes stay off the diff.
#[test]
fn force_that_only_keeps_files_says_so_once() {
    let dir = temp_dir();
    let root = dir.path();
    setup(root);
    let cni = rel("terraform/cells/<cell>/cni.tf");
    let edited = format!("# ours\n{}", read(&root.join(&cni)));
    fs::write(root.join(&cni), &edited).unwrap();
    let before = tree_hash(root);
    let stdout = force(root, &[]);
    assert_tree_unchanged(&before, &tree_hash(root), "--force keeping the only edit");
    assert_never_mentions(&stdout, &["Nothing to change"]);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            format!("     kept  {cni} (you changed it; delete it and run again to regenerate)")
                .as_str(),
            "Nothing else to change."
        ],
        "{stdout}"
    );

    let out = cellgen()
        .arg("-C")
        .arg(root)
        .args(["new", PROD, "--force", "--dry-run"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "",
        "the diff is empty"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_mentions(&stderr, &[&format!("kept  {cni}")]);
    assert!(stderr.ends_with("Nothing else to change.\n"), "{stderr}");
}

#[test]
fn force_with_a_new_component_adds_it_to_kept_files_too() {
    let dir = temp_dir();
    let root = dir.path();
    setup(root);
    let controllers = root.join(rel("cells/<cell>/controllers.yaml"));
    let edited = format!("# ours\n{}", read(&controllers));
    fs::write(&controllers, &edited).unwrap();
    let stdout = force(root, &["--components", "metrics-server"]);
    let text = read(&controllers);
    assert!(text.starts_with("# ours\n"), "{text}");
    assert_mentions(&text, &["components/metrics-server/controllers"]);
    // One line for the file, saying both what happened and why: not "updated" and "kept".
    let layer = rel("cells/<cell>/controllers.yaml");
    assert!(
        stdout.contains(&format!(
            "updated  {layer} (you changed it: the new components were added to it"
        )),
        "{stdout}"
    );
    assert_never_mentions(&stdout, &[&format!("kept  {layer}")]);
    assert_mentions(&stdout, &[&format!("Added metrics-server to cell {PROD}.")]);
    assert_cell_complete(root);
    let after = tree_hash(root);
    force(root, &["--components", "metrics-server"]);
    assert_tree_unchanged(&after, &tree_hash(root), "a second run");
}

#[test]
fn force_follows_explicit_flags_over_what_the_cell_has() {
    let dir = temp_dir();
    let root = dir.path();
    setup(root);
    force(
        root,
        &["--no-egress-gateway", "--kubernetes-version", "1.34"],
    );
    assert!(!root.join(rel("terraform/cells/<cell>/egress.tf")).exists());
    assert!(!read(&root.join(rel("terraform/cells/<cell>/cni.tf"))).contains("egressGateway"));
    assert!(read(&root.join(rel("terraform/cells/<cell>/terraform.tfvars"))).contains("\"1.34\""));
    // The components stay.
    let meta = read(&root.join(rel("terraform/cells/<cell>/cell-metadata.tf")));
    assert_mentions(&meta, &["karpenter_role_arn"]);
}

#[test]
fn the_record_says_which_version_generated_each_file() {
    let dir = temp_dir();
    let root = dir.path();
    setup(root);
    let path = root.join(format!(".cellgen/cells/{PROD}.json"));
    let mut record: serde_json::Value = serde_json::from_str(&read(&path)).unwrap();
    let files = record["files"].as_object_mut().unwrap();
    for file in files.values_mut() {
        assert!(
            file["sha256"].as_str().is_some_and(|h| h.len() == 64),
            "{file}"
        );
        assert_eq!(file["cellgen"], env!("CARGO_PKG_VERSION"));
        // As if an older cellgen had generated every file.
        file["cellgen"] = "0.0.9".into();
    }
    assert!(files.contains_key(&rel("terraform/cells/<cell>/karpenter.tf")));
    fs::write(&path, serde_json::to_string_pretty(&record).unwrap()).unwrap();
    fs::remove_file(root.join(rel("terraform/cells/<cell>/outputs.tf"))).unwrap();
    force(root, &[]);
    let record: serde_json::Value = serde_json::from_str(&read(&path)).unwrap();
    let version = |f: &str| {
        record["files"][rel(f)]["cellgen"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        version("terraform/cells/<cell>/outputs.tf"),
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(version("terraform/cells/<cell>/cluster.tf"), "0.0.9");
}
