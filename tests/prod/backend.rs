//! The S3 state backend: the shared bucket's region, S3-native locking, arguments the backend knows.

use super::*;

/// Argument names of Terraform's s3 backend (vendored from Terraform's source).
fn s3_backend_arguments() -> BTreeSet<String> {
    let path = terraform_schema_dir().join("backends/s3@terraform-1.11.4.json");
    let schema: Value = serde_json::from_str(&read(&path)).unwrap();
    schema["attributes"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

#[test]
fn backend_uses_the_shared_bucket_region_and_s3_locking() {
    let known = s3_backend_arguments();
    // With a bucket: its region, not the cell's.
    let dir = temp_dir();
    new_cell(
        dir.path(),
        &[
            PROD,
            "--state-bucket",
            "acme-tf-state",
            "--state-region",
            "us-east-2",
        ],
    );
    new_cell(dir.path(), &[STAGING]);
    for cell in [PROD, STAGING] {
        let parsed = hcl_parse_dir(&stack_dir(dir.path(), cell));
        let s3 = block(&parsed, "backend.tf", &["terraform", "backend", "s3"]);
        let arguments: BTreeSet<String> = s3.as_object().unwrap().keys().cloned().collect();
        let unknown: Vec<&String> = arguments.difference(&known).collect();
        assert!(
            unknown.is_empty(),
            "{cell}: not s3 backend arguments: {unknown:?}"
        );
        assert_eq!(s3["bucket"], "acme-tf-state");
        assert_eq!(
            s3["region"], "us-east-2",
            "{cell}: the backend region is not the bucket's"
        );
        assert_eq!(s3["key"], format!("cells/{cell}/terraform.tfstate"));
        assert_eq!(s3["use_lockfile"], true, "{cell}: no S3 state locking");
        assert_eq!(s3["encrypt"], true);
        assert!(s3["dynamodb_table"].is_null());
        // use_lockfile is generally available from Terraform 1.11.
        let required = block(&parsed, "versions.tf", &["terraform"])["required_version"]
            .as_str()
            .unwrap();
        assert_eq!(required, ">= 1.11.0");
    }
    assert!(
        read(&dir.path().join("cellgen.yaml"))
            .contains("  state_bucket: acme-tf-state\n  state_region: us-east-2\n")
    );

    // Without one: a partial configuration, still locking, with no region guessed.
    let dir = new_repo(&[PROD]);
    let parsed = hcl_parse_dir(&stack_dir(dir.path(), PROD));
    let s3 = block(&parsed, "backend.tf", &["terraform", "backend", "s3"]);
    assert!(s3["bucket"].is_null() && s3["region"].is_null(), "{s3}");
    assert_eq!(s3["use_lockfile"], true);
    let text = read(&stack_dir(dir.path(), PROD).join("backend.tf"));
    assert!(
        text.contains("-backend-config=\"region=<bucket-region>\""),
        "{text}"
    );
}

#[test]
fn a_state_bucket_without_its_region_is_refused() {
    // Flags: no --state-region and no terminal.
    let dir = temp_dir();
    let out = run(
        dir.path(),
        &[
            "new",
            PROD,
            "--git-url",
            GIT_URL,
            "--state-bucket",
            "acme-tf-state",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--state-region") && stderr.contains("acme-tf-state"),
        "{stderr}"
    );
    assert!(tree_hash(dir.path()).is_empty());

    // A cellgen.yaml that names the bucket but not its region.
    let dir = temp_dir();
    new_cell(
        dir.path(),
        &[
            PROD,
            "--state-bucket",
            "acme-tf-state",
            "--state-region",
            "us-east-2",
        ],
    );
    let config = dir.path().join("cellgen.yaml");
    fs::write(
        &config,
        read(&config).replace("  state_region: us-east-2\n", ""),
    )
    .unwrap();
    let before = tree_hash(dir.path());
    let out = run(dir.path(), &["new", STAGING]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("terraform.state_region") && stderr.contains("bucket's own region"),
        "{stderr}"
    );
    assert_tree_unchanged(
        &before,
        &tree_hash(dir.path()),
        "new without the bucket's region",
    );
}
