//! Nodes that never roll by themselves: the node groups' image is pinned per environment and
//! Kubernetes version in cellgen.yaml, nodes follow Cilium through a value (no module-level
//! depends_on, which defers every data source of the module), the add-ons EKS never updates get
//! versions, the Pod Identity agent comes before Cilium, two-zone regions plan, prod clusters are
//! protected from deletion (issue 19).

use super::*;
use support::console::{eval, local_source, source_of};

/// Every module call of a stack, by file: (file, name, block).
fn modules(parsed: &Value) -> Vec<(String, String, Value)> {
    let mut found = Vec::new();
    for (file, body) in parsed.as_object().unwrap() {
        for (name, blocks) in body["module"].as_object().into_iter().flatten() {
            found.push((file.clone(), name.clone(), blocks[0].clone()));
        }
    }
    found
}

#[test]
fn no_module_call_has_depends_on_and_nodes_follow_cilium_through_a_value() {
    let all = catalog_names().join(",");
    let dir = new_repo(&[&format!("{PROD} --egress-gateway --components {all}")]);
    let parsed = hcl_parse_dir(&stack_dir(dir.path(), PROD));
    let calls = modules(&parsed);
    assert!(calls.len() >= 6, "{calls:?}");
    for (file, name, block) in &calls {
        assert!(
            block.get("depends_on").is_none(),
            "{file}: module.{name} has depends_on, which defers every data source inside it to apply time whenever what it names changes"
        );
    }
    // The node groups read the cluster's name through Cilium's release: created after it.
    let after_cni = local_source(&parsed, "cluster_name_after_cni");
    assert_mentions(&after_cni, &["helm_release.cilium.name"]);
    assert_mentions(&after_cni, &["module.eks.cluster_name"]);
    for (file, module) in [
        ("cluster.tf", "system_node_group"),
        ("egress.tf", "egress_node_group"),
    ] {
        let nodes = block(&parsed, file, &["module", module]);
        assert_eq!(
            nodes["cluster_name"], "${local.cluster_name_after_cni}",
            "{module}"
        );
    }
    // ... and the value is known when Terraform plans: the release's configured name, through
    // the stack's own expression.
    let values = eval(
        &stack_dir(dir.path(), PROD),
        &[],
        &[],
        &[&after_cni
            .replace("helm_release.cilium.name", "\"cilium\"")
            .replace("module.eks.cluster_name", "var.name")],
    )
    .unwrap();
    assert_eq!(values, [serde_json::json!(PROD)]);

    // CoreDNS waits for the node group as a resource (no data source of a module deferred).
    let coredns = block(
        &parsed,
        "cluster.tf",
        &["resource", "aws_eks_addon", "coredns"],
    );
    assert_eq!(
        strings(&coredns["depends_on"]),
        ["${module.system_node_group}"]
    );
}

#[test]
fn the_node_image_is_the_one_cellgen_yaml_pins_for_the_environment_and_version() {
    let dir = new_repo(&[&format!("{PROD} --egress-gateway"), DEV]);
    let root = dir.path();
    let settings: Value = yaml_serde::from_str(&read(&root.join("cellgen.yaml"))).unwrap();
    assert_eq!(
        settings["node_groups"]["ami_release_version"]["prod"]["1.34"],
        "1.34.9-20260714"
    );
    let parsed = hcl_parse_dir(&stack_dir(root, PROD));
    for (file, module) in [
        ("cluster.tf", "system_node_group"),
        ("egress.tf", "egress_node_group"),
    ] {
        let nodes = block(&parsed, file, &["module", module]);
        assert_eq!(
            nodes["use_latest_ami_release_version"], "${local.node_ami_release == \"latest\"}",
            "{module}"
        );
        assert_eq!(
            nodes["ami_release_version"],
            "${local.node_ami_release == \"latest\" ? null : local.node_ami_release}",
            "{module}"
        );
    }
    let release = local_source(&parsed, "node_ami_release");
    let preconditions = &block(&parsed, "cluster.tf", &["data", "aws_partition", "current"])["lifecycle"]
        [0]["precondition"];
    let conditions: Vec<String> = preconditions
        .as_array()
        .unwrap()
        .iter()
        .map(|p| source_of(&p["condition"]))
        .filter(|c| c.contains("node_ami_release"))
        .collect();
    assert_eq!(conditions.len(), 2, "{preconditions}");
    let check = |cell: &str, vars: &[(&str, &str)]| {
        let mut expressions = vec!["local.node_ami_release"];
        expressions.extend(conditions.iter().map(String::as_str));
        eval(
            &stack_dir(root, cell),
            &[("node_ami_release", release.clone())],
            vars,
            &expressions,
        )
        .unwrap()
    };
    // The pin of the cell's environment and version; a version with no pin stops the plan.
    assert_eq!(
        check(PROD, &[]),
        [
            serde_json::json!("1.34.9-20260714"),
            true.into(),
            true.into()
        ]
    );
    assert_eq!(
        check(PROD, &[("kubernetes_version", "1.35")]),
        [Value::Null, false.into(), true.into()]
    );
    // A pin of another Kubernetes version stops it too; `latest` follows AWS.
    let config = root.join("cellgen.yaml");
    let text = read(&config);
    fs::write(
        &config,
        text.replacen(
            "    dev:\n      \"1.34\": 1.34.9-20260714",
            "    dev:\n      \"1.34\": latest",
            1,
        )
        .replacen(
            "    prod:\n      \"1.34\": 1.34.9-20260714",
            "    prod:\n      \"1.34\": 1.33.13-20260714",
            1,
        ),
    )
    .unwrap();
    assert_eq!(
        check(PROD, &[]),
        [
            serde_json::json!("1.33.13-20260714"),
            true.into(),
            false.into()
        ]
    );
    assert_eq!(
        check(DEV, &[]),
        [serde_json::json!("latest"), true.into(), true.into()]
    );
    // cellgen itself refuses that pin, naming the line.
    let out = run(root, &["check"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("node_groups.ami_release_version.prod.\"1.34\"")
            && stderr.contains("another Kubernetes version"),
        "{stderr}"
    );
    fs::write(&config, &text).unwrap();

    // A new cell of a version its environment pins no image for: cellgen.yaml gains the pin of
    // the release cellgen knows, one line the pull request shows.
    let out = run(
        root,
        &["new", "eu-west-1-prod", "--kubernetes-version", "1.35"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_mentions(
        &stderr,
        &["node_groups.ami_release_version.prod.\"1.35\" is 1.35.6-20260714"],
    );
    let settings: Value = yaml_serde::from_str(&read(&config)).unwrap();
    assert_eq!(
        settings["node_groups"]["ami_release_version"]["prod"],
        serde_json::json!({"1.34": "1.34.9-20260714", "1.35": "1.35.6-20260714"})
    );
    // Where cellgen cannot edit the section, the cell is refused before anything is written,
    // naming what to add.
    let text = read(&config);
    fs::write(
        &config,
        text.replacen(
            "    staging:\n      \"1.34\": 1.34.9-20260714\n",
            "    staging: {\"1.34\": 1.34.9-20260714}\n",
            1,
        ),
    )
    .unwrap();
    let before = tree_hash(root);
    let out = run(
        root,
        &["new", "eu-west-1-staging", "--kubernetes-version", "1.33"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("node_groups.ami_release_version.staging.\"1.33\"")
            && stderr.contains("1.33.13-20260714"),
        "{stderr}"
    );
    assert_tree_unchanged(&before, &tree_hash(root), "refused new");
}

#[test]
fn an_unquoted_kubernetes_version_in_the_pins_is_refused_naming_its_line() {
    let dir = new_repo(&[PROD]);
    let config = dir.path().join("cellgen.yaml");
    let text = read(&config).replacen(
        "      \"1.34\": 1.34.9",
        "      1.30: 1.30.14-20260714\n      \"1.34\": 1.34.9",
        1,
    );
    fs::write(&config, &text).unwrap();
    let out = run(dir.path(), &["check"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let line = text.lines().position(|l| l.contains("1.30:")).unwrap() + 1;
    assert!(
        stderr.contains(&format!("cellgen.yaml:{line}"))
            && stderr.contains("quote the Kubernetes version `1.30` (\"1.30\")")
            && stderr.contains("read it as the number 1.3"),
        "{stderr}"
    );
}

#[test]
fn coredns_and_the_pod_identity_agent_get_versions_and_the_agent_comes_before_cilium() {
    let dir = new_repo(&[PROD]);
    let parsed = hcl_parse_dir(&stack_dir(dir.path(), PROD));
    let version = block(
        &parsed,
        "cluster.tf",
        &["data", "aws_eks_addon_version", "coredns"],
    );
    assert_eq!(version["addon_name"], "coredns");
    assert_eq!(version["kubernetes_version"], "${var.kubernetes_version}");
    assert_eq!(version["most_recent"], true);
    let coredns = block(
        &parsed,
        "cluster.tf",
        &["resource", "aws_eks_addon", "coredns"],
    );
    assert_eq!(
        coredns["addon_version"],
        "${data.aws_eks_addon_version.coredns.version}"
    );
    // The agent: the eks module picks its addon_version with aws_eks_addon_version for
    // var.kubernetes_version (main.tf at v21.19.0), the most recent one as asked here.
    let eks = block(&parsed, "cluster.tf", &["module", "eks"]);
    let agent = &eks["addons"]["eks-pod-identity-agent"];
    assert_eq!(
        (&agent["before_compute"], &agent["most_recent"]),
        (&Value::Bool(true), &Value::Bool(true)),
        "{agent}"
    );
    assert_eq!(eks["kubernetes_version"], "${var.kubernetes_version}");
    // Cilium waits for its operator's association, which reads the cluster through the agent's
    // add-on: the agent is installed first, whatever the node groups do.
    let association = block(
        &parsed,
        "cni.tf",
        &[
            "resource",
            "aws_eks_pod_identity_association",
            "cilium_operator",
        ],
    );
    assert_eq!(
        association["cluster_name"],
        "${module.eks.cluster_addons[\"eks-pod-identity-agent\"].cluster_name}"
    );
    let cilium = block(&parsed, "cni.tf", &["resource", "helm_release", "cilium"]);
    assert!(
        strings(&cilium["depends_on"])
            .contains(&"${aws_eks_pod_identity_association.cilium_operator}".to_string())
    );
}

#[test]
fn two_zone_regions_plan_and_prod_clusters_are_protected_from_deletion() {
    let dir = new_repo(&[PROD, DEV]);
    let root = dir.path();
    let parsed = hcl_parse_dir(&stack_dir(root, PROD));
    let azs = local_source(&parsed, "azs");
    let zones = |names: &str| {
        eval(
            &stack_dir(root, PROD),
            &[],
            &[],
            &[&azs.replace("data.aws_availability_zones.available.names", names)],
        )
        .unwrap()
        .remove(0)
    };
    assert_eq!(
        zones(r#"["us-west-1a", "us-west-1c"]"#),
        serde_json::json!(["us-west-1a", "us-west-1c"])
    );
    assert_eq!(
        zones(r#"["a", "b", "c", "d"]"#),
        serde_json::json!(["a", "b", "c"])
    );

    let eks = block(&parsed, "cluster.tf", &["module", "eks"]);
    let protection = source_of(&eks["deletion_protection"]);
    let protected = |cell: &str, vars: &[(&str, &str)]| {
        eval(&stack_dir(root, cell), &[], vars, &[&protection]).unwrap()[0].clone()
    };
    assert_eq!(protected(PROD, &[("deletion_protection", "null")]), true);
    assert_eq!(protected(DEV, &[("deletion_protection", "null")]), false);
    // The way out for a tear-down: -var deletion_protection=false.
    assert_eq!(protected(PROD, &[("deletion_protection", "false")]), false);
    let variable = block(&parsed, "cluster.tf", &["variable", "deletion_protection"]);
    assert_eq!(variable["type"], "${bool}");
    assert!(variable["default"].is_null());
}

/// `check` reports a cell whose version has no node image pin, before its plan would stop there;
/// `new --force` pins the release cellgen knows.
#[test]
fn check_reports_a_cell_without_a_node_image_pin() {
    let dir = new_repo(&[PROD]);
    let root = dir.path();
    let tfvars = stack_dir(root, PROD).join("terraform.tfvars");
    fs::write(&tfvars, read(&tfvars).replace("\"1.34\"", "\"1.33\"")).unwrap();
    let out = run(root, &["check"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("unpinned-node-image")
            && stdout.contains(&format!("cell {PROD} runs Kubernetes 1.33"))
            && stdout.contains("e.g. 1.33.13-20260714"),
        "{stdout}"
    );
    let out = run(root, &["new", PROD, "--force"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(root, &["check"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
