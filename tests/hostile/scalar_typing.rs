//! Hostile input: strings that YAML would read back as something else. Every scalar cellgen
//! writes (a chart version, a per-cell version patch, a contract field, a repository setting)
//! must read back as the same string for each tool that reads the file: kubectl's kustomize
//! (go-yaml v2 and v3) for manifests and patches, Terraform's `yamldecode` for cellgen.yaml
//! (each cell's settings.tf reads it at plan time).

use std::fs;
use std::process::Command;

use super::edits::{CELL, cell, run_ok};
use super::*;

const DEV: &str = "us-east-1-dev";
const OCI: &str = "components/karpenter/controllers/ocirepository.yaml";

fn with_karpenter(dir: &Path) {
    cell(dir);
    run_ok(dir, &["add-component", "karpenter"]);
}

fn two_cells_with_karpenter(dir: &Path) {
    with_karpenter(dir);
    new_cell(dir, &[DEV, "--components", "karpenter"]);
}

/// `field` (dot-separated) of the object in `file` as `kubectl kustomize` builds it, with the
/// `spec.patches` of the cell's layer `layer` applied when given: what Flux would apply.
fn built(dir: &Path, file: &str, patched_by: Option<&str>, field: &str) -> yaml_serde::Value {
    let work = temp_dir();
    fs::copy(dir.join(file), work.path().join("object.yaml")).unwrap();
    let mut kustomization: yaml_serde::Value =
        yaml_serde::from_str("resources: [object.yaml]\n").unwrap();
    if let Some(layer) = patched_by {
        let text = read(&dir.join(layer));
        let value: yaml_serde::Value = yaml_serde::from_str(&text).unwrap();
        kustomization["patches"] = value["spec"]["patches"].clone();
    }
    fs::write(
        work.path().join("kustomization.yaml"),
        yaml_serde::to_string(&kustomization).unwrap(),
    )
    .unwrap();
    let out = kustomize_build(work.path()).unwrap_or_else(|e| panic!("{e}"));
    let doc: yaml_serde::Value = yaml_serde::from_str(&out).unwrap();
    let mut at = &doc;
    for part in field.split('.') {
        at = &at[part];
    }
    at.clone()
}

fn is_string(value: &yaml_serde::Value, want: &str, what: &str) {
    assert_eq!(
        value.as_str(),
        Some(want),
        "{what} reads back as {value:?}, not the string `{want}`"
    );
}

/// `expression` of cellgen.yaml as Terraform's `yamldecode` reads it (`terraform console`, no
/// provider needed), as JSON.
fn terraform_reads(dir: &Path, expression: &str) -> serde_json::Value {
    let out = Command::new("terraform")
        .arg("console")
        .current_dir(dir)
        .env("TF_CLI_CONFIG_FILE", "/dev/null")
        .stdin({
            let input = format!("jsonencode(yamldecode(file(\"cellgen.yaml\")).{expression})\n");
            let path = dir.join(".cellgen-console-input");
            fs::write(&path, input).unwrap();
            let file = fs::File::open(&path).unwrap();
            fs::remove_file(&path).unwrap();
            file
        })
        .output()
        .expect("terraform runs");
    assert!(
        out.status.success(),
        "terraform console: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The console prints the JSON text as an HCL string literal.
    let printed = String::from_utf8_lossy(&out.stdout);
    let json: String = serde_json::from_str(printed.trim()).expect("an HCL string is JSON");
    serde_json::from_str(&json).unwrap()
}

fn oci_tag_0777(dir: &Path, _: &Output) {
    is_string(&built(dir, OCI, None, "spec.ref.tag"), "0777", OCI);
}

fn oci_tag_1_0(dir: &Path, _: &Output) {
    is_string(&built(dir, OCI, None, "spec.ref.tag"), "1_0", OCI);
}

fn oci_tag_date(dir: &Path, _: &Output) {
    is_string(&built(dir, OCI, None, "spec.ref.tag"), "2001-12-14", OCI);
}

fn oci_tag_yes(dir: &Path, _: &Output) {
    is_string(&built(dir, OCI, None, "spec.ref.tag"), "yes", OCI);
}

fn boolean_and_float(dir: &Path, _: &Output) {
    let key = terraform_reads(dir, "keys.team_id");
    assert_eq!(key["example"], "yes", "{key}");
    assert_eq!(key["description"], "1e3", "{key}");
}

/// One cell on its own version: its patch reads back as the string; the shared definition
/// (the other cell's) is untouched.
fn patch_0777(dir: &Path, _: &Output) {
    let layer = format!("cells/{CELL}/controllers.yaml");
    is_string(
        &built(dir, OCI, Some(&layer), "spec.ref.tag"),
        "0777",
        &layer,
    );
    assert_ne!(built(dir, OCI, None, "spec.ref.tag").as_str(), Some("0777"));
}

/// Both cells on the timestamp-like version: the change converges to the shared definition.
fn shared_after_patch(dir: &Path, _: &Output) {
    is_string(&built(dir, OCI, None, "spec.ref.tag"), "2001-12-14", OCI);
    let layer = read(&dir.join(format!("cells/{CELL}/controllers.yaml")));
    assert_never_mentions(&layer, &["patches:"]);
}

fn example_and_description(dir: &Path, _: &Output) {
    let key = terraform_reads(dir, "keys.team_id");
    assert_eq!(key["example"], "0777", "{key}");
    assert_eq!(key["description"], "2001-12-14", "{key}");
}

fn branch_0777(dir: &Path, _: &Output) {
    assert_eq!(terraform_reads(dir, "git.branch"), "0777");
    let workflow: yaml_serde::Value =
        yaml_serde::from_str(&read(&dir.join(".github/workflows/cellgen.yaml"))).unwrap();
    assert_eq!(workflow["on"]["push"]["branches"][0].as_str(), Some("0777"));
}

fn bucket_0777(dir: &Path, _: &Output) {
    assert_eq!(terraform_reads(dir, "terraform.state_bucket"), "0777");
}

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "set-version 0777 writes a string, not an octal integer",
            setup: with_karpenter,
            args: &["set-version", "karpenter", "0777"],
            expect: Expect::Succeeds(oci_tag_0777),
        },
        Case {
            name: "set-version 1_0 writes a string, not the integer 10",
            setup: with_karpenter,
            args: &["set-version", "karpenter", "1_0"],
            expect: Expect::Succeeds(oci_tag_1_0),
        },
        Case {
            name: "set-version 2001-12-14 writes a string, not a timestamp",
            setup: with_karpenter,
            args: &["set-version", "karpenter", "2001-12-14"],
            expect: Expect::Succeeds(oci_tag_date),
        },
        Case {
            name: "set-version yes writes a string, not YAML 1.1's true",
            setup: with_karpenter,
            args: &["set-version", "karpenter", "yes"],
            expect: Expect::Succeeds(oci_tag_yes),
        },
        Case {
            name: "key add with a YAML 1.1 boolean example and a float description",
            setup: cell,
            args: &[
                "key",
                "add",
                "team_id",
                "--terraform",
                "var.name",
                "--example",
                "yes",
                "--description",
                "1e3",
            ],
            expect: Expect::Succeeds(boolean_and_float),
        },
        Case {
            name: "a per-cell version patch of 0777 reads back as the string",
            setup: two_cells_with_karpenter,
            args: &["set-version", "karpenter", "0777", "--cell", CELL],
            expect: Expect::Succeeds(patch_0777),
        },
        Case {
            name: "the shared definition written after a per-cell patch is quoted too",
            setup: |d| {
                two_cells_with_karpenter(d);
                run_ok(
                    d,
                    &["set-version", "karpenter", "2001-12-14", "--cell", CELL],
                );
            },
            args: &["set-version", "karpenter", "2001-12-14"],
            expect: Expect::Succeeds(shared_after_patch),
        },
        Case {
            name: "key add with an octal-looking example and a date description",
            setup: cell,
            args: &[
                "key",
                "add",
                "team_id",
                "--terraform",
                "var.name",
                "--example",
                "0777",
                "--description",
                "2001-12-14",
            ],
            expect: Expect::Succeeds(example_and_description),
        },
        Case {
            name: "new with --git-branch 0777 writes the branch as a string",
            setup: |_| {},
            args: &["new", CELL, "--git-url", GIT_URL, "--git-branch", "0777"],
            expect: Expect::Succeeds(branch_0777),
        },
        Case {
            name: "new with --state-bucket 0777 writes the bucket as a string",
            setup: |_| {},
            args: &[
                "new",
                CELL,
                "--git-url",
                GIT_URL,
                "--state-bucket",
                "0777",
                "--state-region",
                "us-east-1",
            ],
            expect: Expect::Succeeds(bucket_0777),
        },
    ]
}

#[test]
fn scalar_typing_table() {
    run_table("scalar typing", &cases());
}
