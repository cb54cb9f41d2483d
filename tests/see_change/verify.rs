//! `cellgen verify [CELL] --from FILE`, with the ConfigMap as kubectl prints it and as
//! `terraform show -json` has it.

use std::collections::BTreeMap;

use super::*;

/// The sample data of `cell` (what `cellgen values` prints).
fn sample(dir: &Path, cell: &str) -> BTreeMap<String, String> {
    let out = run(dir, &["values", cell]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = yaml_serde::from_str(&stdout(&out)).unwrap();
    serde_json::from_value(doc["data"].clone()).unwrap()
}

/// The ConfigMap as `kubectl get configmap cell-metadata -n flux-system -o yaml` prints it.
fn kubectl_yaml(data: &BTreeMap<String, String>) -> String {
    let mut out = String::from("apiVersion: v1\ndata:\n");
    for (k, v) in data {
        out.push_str(&format!("  {k}: {}\n", serde_json::to_string(v).unwrap()));
    }
    out.push_str(
        "kind: ConfigMap\nmetadata:\n  creationTimestamp: \"2026-11-02T10:00:00Z\"\n  labels:\n    app.kubernetes.io/managed-by: Terraform\n  name: cell-metadata\n  namespace: flux-system\n  resourceVersion: \"48213\"\n  uid: 5d0c3f0e-8c1e-4f7a-9d55-2c1f3b0b8a11\n",
    );
    out
}

/// `terraform show -json` of an applied stack whose ConfigMap is in a child module.
fn terraform_json(data: &BTreeMap<String, String>) -> String {
    serde_json::json!({
        "format_version": "1.0",
        "terraform_version": "1.11.4",
        "values": {
            "root_module": {
                "resources": [{
                    "address": "aws_iam_role.app_abac",
                    "mode": "managed",
                    "type": "aws_iam_role",
                    "name": "app_abac",
                    "values": {"name": "x"}
                }],
                "child_modules": [{
                    "address": "module.bridge",
                    "resources": [{
                        "address": "module.bridge.kubernetes_config_map_v1.cell_metadata",
                        "mode": "managed",
                        "type": "kubernetes_config_map_v1",
                        "name": "cell_metadata",
                        "provider_name": "registry.terraform.io/hashicorp/kubernetes",
                        "values": {
                            "binary_data": null,
                            "data": data,
                            "immutable": false,
                            "metadata": [{"name": "cell-metadata", "namespace": "flux-system"}]
                        },
                        "sensitive_values": {}
                    }]
                }]
            }
        }
    })
    .to_string()
}

fn verify(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["verify"];
    all.extend_from_slice(args);
    run(dir, &all)
}

/// A real ConfigMap that drifted: one component key missing, one key the contract lacks, and a
/// secret-looking value.
fn drifted(dir: &Path) -> BTreeMap<String, String> {
    let mut data = sample(dir, PROD_A);
    data.remove("karpenter_node_role");
    data.insert("team_owner".into(), "platform".into());
    data.insert(
        "deploy_key".into(),
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
    );
    data
}

fn assert_drift_found(out: &std::process::Output, file: &str, with_lines: bool) {
    assert_eq!(out.status.code(), Some(1), "{}", stderr(out));
    let text = stdout(out);
    assert_mentions(
        &text,
        &[
            "error[missing-key]: the contract has `karpenter_node_role` (a key of component karpenter)",
        ],
    );
    assert!(
        text.contains("error[uncontracted-key]: the cluster's ConfigMap has `team_owner`")
            || text.contains(
                "error[uncontracted-key]: the ConfigMap in Terraform's output has `team_owner`"
            ),
        "{text}"
    );
    assert_mentions(
        &text,
        &[
            "error[secret-value]: `deploy_key` looks like a secret (its value has the shape of an AWS secret access key)",
        ],
    );
    // Rendering with the real values: the EC2NodeClass asks for the missing key.
    assert_mentions(
        &text,
        &["--> components/karpenter/configs/ec2nodeclass.yaml:10"],
    );
    assert_mentions(&text, &[&format!("cell {PROD_A} (layer configs)")]);
    if with_lines {
        assert_mentions(&text, &[&format!("--> {file}:")]);
    }
}

#[test]
fn a_kubectl_configmap_that_drifted_is_reported_and_its_cell_found_by_name() {
    let dir = repo_with_history();
    let file = dir.path().join("real.yaml");
    std::fs::write(&file, kubectl_yaml(&drifted(dir.path()))).unwrap();
    let before = tree_hash(dir.path());
    // No CELL: cell_name says which.
    let out = verify(dir.path(), &["--from", "real.yaml"]);
    assert_drift_found(&out, "real.yaml", true);
    assert_tree_unchanged(&before, &tree_hash(dir.path()), "cellgen verify");
    // JSON and GitHub formats carry the same findings.
    let json: serde_json::Value = serde_json::from_slice(
        &verify(dir.path(), &["--from", "real.yaml", "--format", "json"]).stdout,
    )
    .unwrap();
    let codes: Vec<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    for code in ["missing-key", "uncontracted-key", "secret-value"] {
        assert!(codes.contains(&code), "{codes:?}");
    }
    let gh = stdout(&verify(
        dir.path(),
        &["--from", "real.yaml", "--format", "github"],
    ));
    assert_mentions(&gh, &["::error file=real.yaml,line="]);
}

#[test]
fn terraform_show_json_that_drifted_is_reported() {
    let dir = repo_with_history();
    let file = dir.path().join("show.json");
    std::fs::write(&file, terraform_json(&drifted(dir.path()))).unwrap();
    let out = verify(dir.path(), &[PROD_A, "--from", "show.json"]);
    assert_drift_found(&out, "show.json", false);
}

#[test]
fn the_real_values_that_match_the_contract_pass_in_both_formats() {
    let dir = repo_with_history();
    let mut data = sample(dir.path(), PROD_B);
    // Real values differ from the sample's examples; they are identifiers all the same.
    data.insert("cluster_name".into(), "prod-use1".into());
    data.insert("vpc_id".into(), "vpc-0123456789abcdef0".into());
    std::fs::write(dir.path().join("real.yaml"), kubectl_yaml(&data)).unwrap();
    std::fs::write(dir.path().join("show.json"), terraform_json(&data)).unwrap();
    for file in ["real.yaml", "show.json"] {
        let out = verify(dir.path(), &["--from", file]);
        assert_eq!(out.status.code(), Some(0), "{file}: {}", stdout(&out));
        assert!(
            stdout(&out).contains("1 cell checked: 0 errors"),
            "{}",
            stdout(&out)
        );
    }
}

#[test]
fn a_schema_behind_and_a_configmap_of_another_cell_are_named() {
    let dir = repo_with_history();
    let mut data = sample(dir.path(), PROD_A);
    data.insert("schema".into(), "1".into());
    std::fs::write(dir.path().join("real.yaml"), kubectl_yaml(&data)).unwrap();
    let out = verify(dir.path(), &[PROD_B, "--from", "real.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert_mentions(&text, &["error[schema-mismatch]: schema is `1`"]);
    assert_mentions(
        &text,
        &[&format!("error[cell-mismatch]: cell_name is `{PROD_A}`")],
    );
}

#[test]
fn unreadable_inputs_and_an_unknown_cell_name_are_errors() {
    let dir = repo_with_history();
    std::fs::write(
        dir.path().join("other.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\ndata: {}\n",
    )
    .unwrap();
    let out = verify(dir.path(), &["--from", "other.yaml"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not `cell-metadata`"),
        "{}",
        stderr(&out)
    );

    std::fs::write(
        dir.path().join("empty.json"),
        r#"{"values": {"root_module": {}}}"#,
    )
    .unwrap();
    let out = verify(dir.path(), &[PROD_A, "--from", "empty.json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no kubernetes_config_map_v1.cell_metadata"),
        "{}",
        stderr(&out)
    );

    let mut data = sample(dir.path(), PROD_A);
    data.insert("cell_name".into(), "nowhere-prod".into());
    std::fs::write(dir.path().join("real.yaml"), kubectl_yaml(&data)).unwrap();
    let out = verify(dir.path(), &["--from", "real.yaml"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("`nowhere-prod` is not a cell"),
        "{}",
        stderr(&out)
    );
}

/// A file a flag names is read through `root::limited`, which bounds it: a `--from` that never ends is a
/// clear error, not a read until memory runs out.
#[cfg(target_os = "linux")]
#[test]
fn a_from_file_that_never_ends_is_refused() {
    let dir = repo_with_history();
    let out = run(dir.path(), &["verify", STAGING, "--from", "/dev/zero"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("/dev/zero")
            && stderr(&out).contains("(32 MiB), the most cellgen reads"),
        "{}",
        stderr(&out)
    );
}
