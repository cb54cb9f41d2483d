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

/// The default NodePool per environment (issue 19): cellgen.yaml's karpenter.node_pool of the
/// cell's environment, through the cell's ConfigMap (Terraform's JSON lists, which YAML reads back
/// as lists once Flux substitutes them); no spot and one architecture in prod by default.
#[test]
fn the_node_pool_is_the_one_cellgen_yaml_sets_for_the_environment() {
    use support::console::{eval, local_source, source_of};
    let dir = new_repo(&[
        &format!("{PROD} --components karpenter"),
        &format!("{DEV} --components karpenter"),
    ]);
    let root = dir.path();
    let config: Value = yaml_serde::from_str(&read(&root.join("cellgen.yaml"))).unwrap();
    let pools = &config["karpenter"]["node_pool"];
    assert_eq!(
        pools["prod"]["capacity_types"],
        serde_json::json!(["on-demand"])
    );
    assert_eq!(pools["prod"]["architectures"], serde_json::json!(["amd64"]));
    assert!(strings(&pools["dev"]["capacity_types"]).contains(&"spot".to_string()));
    let keys = [
        "karpenter_architectures",
        "karpenter_capacity_types",
        "karpenter_consolidate_after",
        "karpenter_disruption_budgets",
    ];
    for (cell, env) in [(PROD, "prod"), (DEV, "dev")] {
        let stack = stack_dir(root, cell);
        let parsed = hcl_parse_dir(&stack);
        let data = &block(
            &parsed,
            "cell-metadata.tf",
            &["resource", "kubernetes_config_map_v1", "cell_metadata"],
        )["data"];
        let expressions: Vec<String> = keys.iter().map(|k| source_of(&data[*k])).collect();
        let values = eval(
            &stack,
            &[
                (
                    "karpenter_node_pool",
                    local_source(&parsed, "karpenter_node_pool"),
                ),
                (
                    "karpenter_ami_alias",
                    local_source(&parsed, "karpenter_ami_alias"),
                ),
            ],
            &[],
            &expressions.iter().map(String::as_str).collect::<Vec<_>>(),
        )
        .unwrap();
        let values: Vec<String> = values
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        let file = root.join(format!("{cell}.values.yaml"));
        let text: String = keys
            .iter()
            .zip(&values)
            .map(|(k, v)| format!("{k}: {}\n", serde_json::to_string(v).unwrap()))
            .collect();
        fs::write(&file, text).unwrap();
        let rendered = cellgen()
            .arg("-C")
            .arg(root)
            .args(["render", cell, "--layer", "configs", "--values"])
            .arg(&file)
            .output()
            .unwrap();
        fs::remove_file(&file).unwrap();
        assert!(
            rendered.status.success(),
            "{}",
            String::from_utf8_lossy(&rendered.stderr)
        );
        let docs = parse_yaml_docs("render", &String::from_utf8_lossy(&rendered.stdout)).unwrap();
        let pool = &docs
            .iter()
            .find(|d| d.value["kind"] == "NodePool")
            .unwrap()
            .value;
        let requirement = |key: &str| -> Value {
            pool["spec"]["template"]["spec"]["requirements"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["key"] == key)
                .unwrap()["values"]
                .clone()
        };
        let expected = &pools[env];
        assert_eq!(
            requirement("kubernetes.io/arch"),
            expected["architectures"],
            "{cell}"
        );
        assert_eq!(
            requirement("karpenter.sh/capacity-type"),
            expected["capacity_types"],
            "{cell}"
        );
        assert_eq!(
            pool["spec"]["disruption"]["consolidateAfter"],
            expected["consolidate_after"]
        );
        assert_eq!(
            pool["spec"]["disruption"]["budgets"],
            expected["disruption_budgets"]
        );
    }
    // The NodePool holds no setting of its own: every one comes from cellgen.yaml.
    let text = read(&root.join("components/karpenter/configs/nodepool.yaml"));
    for key in keys {
        assert!(
            text.contains(&format!("${{{key}}}")),
            "nodepool.yaml does not read {key}"
        );
    }
}

#[test]
fn node_pool_settings_are_checked() {
    let cases = [
        (
            "      capacity_types: [on-demand]\n",
            "      capacity_types: [ondemand]\n",
            "Did you mean `on-demand`?",
        ),
        (
            "        - nodes: \"10%\"\n",
            "        - nodes: \"10%\"\n          schedule: \"0 9 * * *\"\n",
            "needs a duration",
        ),
        (
            "      consolidate_after: 10m\n",
            "      consolidate_after: soon\n",
            "use a duration such as",
        ),
    ];
    for (from, to, words) in cases {
        let dir = new_repo(&[PROD]);
        let config = dir.path().join("cellgen.yaml");
        let text = read(&config);
        assert!(text.contains(from), "{from}");
        fs::write(&config, text.replacen(from, to, 1)).unwrap();
        let out = run(dir.path(), &["check"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains(words) && stderr.contains("karpenter.node_pool."),
            "no `{words}` in {stderr}"
        );
    }
}
