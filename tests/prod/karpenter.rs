//! Karpenter's AMI: pinned per environment in cellgen.yaml, reaching the EC2NodeClass through the ConfigMap.

use super::*;

#[test]
fn karpenter_runs_the_ami_cellgen_yaml_pins_for_the_environment() {
    let dir = new_repo(&[
        &format!("{PROD} --components karpenter"),
        &format!("{DEV} --components karpenter"),
    ]);
    let root = dir.path();
    let config: Value = yaml_serde::from_str(&read(&root.join("cellgen.yaml"))).unwrap();
    let aliases = &config["karpenter"]["ami_alias"];
    assert_eq!(aliases["dev"], "al2023@latest");
    for env in ["staging", "prod"] {
        let alias = aliases[env].as_str().unwrap();
        assert!(
            alias.starts_with("al2023@v") && !alias.ends_with("@latest"),
            "{env} is not pinned: {alias}"
        );
    }
    for (cell, env) in [(PROD, "prod"), (DEV, "dev")] {
        let parsed = hcl_parse_dir(&stack_dir(root, cell));
        let local = &parsed["karpenter.tf"]["locals"][0]["karpenter_ami_alias"];
        assert_eq!(
            local,
            "${local.settings.karpenter.ami_alias[var.environment]}"
        );
        assert_eq!(parsed["terraform.tfvars"]["environment"], env);
        let data = block(
            &parsed,
            "cell-metadata.tf",
            &["resource", "kubernetes_config_map_v1", "cell_metadata"],
        );
        assert_eq!(
            data["data"]["karpenter_ami_alias"],
            "${local.karpenter_ami_alias}"
        );
    }
    // The EC2NodeClass reads it from the ConfigMap.
    let rendered = run(root, &["render", PROD, "--layer", "configs"]);
    assert!(
        rendered.status.success(),
        "{}",
        String::from_utf8_lossy(&rendered.stderr)
    );
    let docs = parse_yaml_docs("render", &String::from_utf8_lossy(&rendered.stdout)).unwrap();
    let class = docs
        .iter()
        .find(|d| d.value["kind"] == "EC2NodeClass")
        .unwrap();
    assert_eq!(
        class.value["spec"]["amiSelectorTerms"],
        serde_json::json!([{ "alias": aliases["prod"] }])
    );
    let text = read(&root.join("components/karpenter/configs/ec2nodeclass.yaml"));
    assert!(text.contains("- alias: ${karpenter_ami_alias}") && !text.contains("@latest"));
}

#[test]
fn cellgen_yaml_ami_aliases_are_checked() {
    let cases = [
        (
            "    prod: al2023@v20260714\n",
            "",
            "no entry for environment `prod`",
        ),
        (
            "    prod: al2023@v20260714\n",
            "    prod: al2023-v1\n",
            "is not a Karpenter AMI alias",
        ),
        (
            "    dev: al2023@latest\n",
            "    dev: al2023@latest\n    qa: al2023@latest\n",
            "`qa`, which is not an environment",
        ),
    ];
    for (from, to, words) in cases {
        let dir = new_repo(&[PROD]);
        let config = dir.path().join("cellgen.yaml");
        fs::write(&config, read(&config).replacen(from, to, 1)).unwrap();
        let out = run(dir.path(), &["check"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains(words) && stderr.contains("cellgen.yaml:"),
            "no `{words}` in {stderr}"
        );
    }
}
