//! Versions a new cell may take (issue 19): Kubernetes versions EKS creates clusters of, from
//! the table cellgen vendors with its source and date; a cell keeps the version it runs.

use super::*;

const SUPPORTED: &str = "1.32, 1.33, 1.34, 1.35, 1.36";

#[test]
fn kubernetes_versions_eks_does_not_create_are_refused_naming_the_flag() {
    let dir = new_repo(&[PROD]);
    let root = dir.path();
    for version in ["1.99", "1.20", "1.31", "2"] {
        let before = tree_hash(root);
        let out = run(root, &["new", DEV, "--kubernetes-version", version]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{version}: {stderr}");
        assert!(
            stderr.contains("--kubernetes-version"),
            "{version}: {stderr}"
        );
        if version.contains('.') {
            assert!(
                stderr.contains(&format!(
                    "EKS does not create clusters of Kubernetes {version}"
                )) && stderr.contains(SUPPORTED)
                    && stderr.contains("as of 2026-12-04"),
                "{version}: {stderr}"
            );
        }
        assert_tree_unchanged(&before, &tree_hash(root), version);
    }
    // The newest one EKS supports is taken, with its node image pinned.
    let out = run(root, &["new", DEV, "--kubernetes-version", "1.36"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The default of cellgen.yaml is checked too, naming where it comes from.
    let config = root.join("cellgen.yaml");
    fs::write(
        &config,
        read(&config).replace(
            "  kubernetes_version: \"1.34\"",
            "  kubernetes_version: \"1.29\"",
        ),
    )
    .unwrap();
    let out = run(root, &["new", STAGING]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("defaults.kubernetes_version in cellgen.yaml")
            && stderr.contains(SUPPORTED),
        "{stderr}"
    );

    // A cell keeps the version it runs, supported or not any more (EKS never downgrades it).
    let tfvars = stack_dir(root, PROD).join("terraform.tfvars");
    fs::write(&tfvars, read(&tfvars).replace("\"1.34\"", "\"1.31\"")).unwrap();
    let text = read(&config).replacen(
        "    prod:\n      \"1.34\"",
        "    prod:\n      \"1.31\": 1.31.14-20260714\n      \"1.34\"",
        1,
    );
    fs::write(&config, text).unwrap();
    let out = run(root, &["new", PROD, "--force"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(read(&tfvars).contains("kubernetes_version = \"1.31\""));
}
