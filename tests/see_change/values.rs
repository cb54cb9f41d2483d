//! `cellgen values CELL`.

use super::*;

#[test]
fn values_is_the_configmap_render_substitutes_with() {
    let dir = repo_with_history();
    let out = run(dir.path(), &["values", PROD_A]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    // The file says which values are the cell's own and which are the contract's examples.
    assert!(
        text.starts_with(&format!("# Sample cell-metadata of {PROD_A},"))
            && text.contains("is the contract's example (cellgen.yaml keys.<key>.example)"),
        "{text}"
    );
    let doc: serde_json::Value = yaml_serde::from_str(&text).unwrap();
    assert_eq!(doc["apiVersion"], "v1");
    assert_eq!(doc["kind"], "ConfigMap");
    assert_eq!(doc["metadata"]["name"], "cell-metadata");
    assert_eq!(doc["metadata"]["namespace"], "flux-system");
    assert_eq!(doc["data"]["cell_name"], PROD_A);
    assert_eq!(doc["data"]["aws_region"], "eu-west-2");
    // The component's keys are there for the cell that runs it, not for the other.
    assert!(doc["data"]["karpenter_node_role"].is_string(), "{text}");
    let staging: serde_json::Value =
        yaml_serde::from_str(&stdout(&run(dir.path(), &["values", STAGING]))).unwrap();
    assert!(staging["data"].get("karpenter_node_role").is_none());

    // Rendering with the printed file as --values gives exactly what render gives.
    let file = dir.path().join("values.yaml");
    std::fs::write(&file, &text).unwrap();
    let plain = run(dir.path(), &["render", PROD_A]);
    let with = run(
        dir.path(),
        &["render", PROD_A, "--values", file.to_str().unwrap()],
    );
    assert!(plain.status.success() && with.status.success());
    assert_eq!(stdout(&plain), stdout(&with));
    // And with one value changed it differs (the file is really read).
    std::fs::write(&file, text.replace(PROD_A, "other-name")).unwrap();
    let changed = run(
        dir.path(),
        &["render", PROD_A, "--values", file.to_str().unwrap()],
    );
    assert_ne!(stdout(&plain), stdout(&changed));
}

#[test]
fn values_of_an_unknown_cell_suggests_one() {
    let dir = repo_with_history();
    let out = run(dir.path(), &["values", "eu-west-2-prd"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("Did you mean `{PROD_A}`?")),
        "{}",
        stderr(&out)
    );
}
