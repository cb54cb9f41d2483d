use super::*;

#[test]
fn kubernetes_versions_are_the_ones_eks_supports() {
    assert_eq!(kubernetes_version_problem("1.34"), None);
    let old = kubernetes_version_problem("1.20").unwrap();
    assert!(
        old.contains("EKS does not create clusters of Kubernetes 1.20"),
        "{old}"
    );
    assert!(old.contains("1.32, 1.33, 1.34, 1.35, 1.36"), "{old}");
    assert!(kubernetes_version_problem("1.99").is_some());
    let shape = kubernetes_version_problem("1.34.2").unwrap();
    assert!(shape.contains("not a Kubernetes version"), "{shape}");
}

#[test]
fn node_image_releases_fit_their_kubernetes_version() {
    assert_eq!(ami_release_problem("1.34", "1.34.9-20260714"), None);
    assert_eq!(ami_release_problem("1.34", "latest"), None);
    assert!(
        ami_release_problem("1.35", "1.34.9-20260714")
            .unwrap()
            .contains("another")
    );
    assert!(
        ami_release_problem("1.34", "v20260714")
            .unwrap()
            .contains("not a node image")
    );
    for v in EKS_VERSIONS {
        let release = ami_release_version(v.version).unwrap();
        assert_eq!(ami_release_problem(v.version, release), None);
    }
}

#[test]
fn an_unquoted_kubernetes_version_key_is_refused() {
    let text = "node_groups:\n  ami_release_version:\n    prod:\n      1.30: 1.30.14-20260714\n";
    #[derive(Deserialize)]
    struct Doc {
        node_groups: NodeGroupSettings,
    }
    let doc: Doc = crate::ports::yaml::from_str(text).unwrap();
    let err = doc
        .node_groups
        .validate(&["prod".into()], text)
        .unwrap_err();
    assert!(
        err.message.contains("quote the Kubernetes version `1.30`")
            && err.message.contains("the number 1.3"),
        "{err:?}"
    );
    assert_eq!(err.needle, "1.30:");
    let quoted = text.replace("1.30:", "\"1.30\":");
    let doc: Doc = crate::ports::yaml::from_str(&quoted).unwrap();
    assert_eq!(doc.node_groups.validate(&["prod".into()], &quoted), Ok(()));
}

#[test]
fn a_pin_joins_its_environment() {
    let text = "a: 1\nnode_groups:\n  ami_release_version:\n    dev:\n      \"1.34\": 1.34.9-20260714\n    prod:\n      \"1.34\": 1.34.9-20260714 # ok\n\n# next\ncilium: {}\n";
    let out = NodeGroupSettings::add_pin(text, "prod", "1.33", "1.33.13-20260714").unwrap();
    assert_eq!(
        out,
        text.replace("# ok\n", "# ok\n      \"1.33\": 1.33.13-20260714\n")
    );
    assert_eq!(
        NodeGroupSettings::add_pin(text, "staging", "1.33", "x"),
        None
    );
    let flow = "node_groups:\n  ami_release_version:\n    prod: {\"1.34\": x}\n";
    assert_eq!(NodeGroupSettings::add_pin(flow, "prod", "1.33", "x"), None);
}

#[test]
fn node_pools_are_checked() {
    let envs: Vec<String> = ["dev", "prod"].map(String::from).to_vec();
    let mut pools: IndexMap<String, NodePool> = envs
        .iter()
        .map(|e| (e.clone(), default_node_pool(e)))
        .collect();
    assert_eq!(validate_node_pools(&pools, &envs), Ok(()));
    assert_eq!(pools["prod"].capacity_types, ["on-demand"]);
    pools["prod"].capacity_types = vec!["spott".into()];
    let err = validate_node_pools(&pools, &envs).unwrap_err();
    assert!(err.message.contains("Did you mean `spot`?"), "{err:?}");
    pools["prod"] = default_node_pool("prod");
    pools["prod"].disruption_budgets[0].schedule = Some("0 9 * * *".into());
    assert!(
        validate_node_pools(&pools, &envs)
            .unwrap_err()
            .message
            .contains("needs a duration")
    );
    pools["prod"] = default_node_pool("prod");
    pools["prod"].consolidate_after = "10 minutes".into();
    assert!(validate_node_pools(&pools, &envs).is_err());
    pools.shift_remove("prod");
    assert!(
        validate_node_pools(&pools, &envs)
            .unwrap_err()
            .message
            .contains("no entry for environment `prod`")
    );
}

#[test]
fn dns_zones_are_names_or_every_zone() {
    let envs: Vec<String> = vec!["prod".into()];
    let zones = |z: &[&str]| DnsSettings {
        zones: [(
            "prod".to_string(),
            z.iter().map(|s| s.to_string()).collect(),
        )]
        .into(),
    };
    assert_eq!(
        zones(&["example.com", "prod.example.org."]).validate(&envs),
        Ok(())
    );
    assert_eq!(zones(&["*"]).validate(&envs), Ok(()));
    assert!(zones(&["*", "example.com"]).validate(&envs).is_err());
    assert!(zones(&["Example.com"]).validate(&envs).is_err());
    assert!(zones(&["com"]).validate(&envs).is_err());
    assert!(zones(&[]).validate(&envs).is_err());
}

#[test]
fn cilium_versions_are_releases() {
    assert_eq!(cilium_version("1.19.6"), Some((1, 19, 6)));
    assert_eq!(cilium_version("1.19"), None);
    assert_eq!(cilium_version("v1.19.6"), None);
    let envs: Vec<String> = vec!["dev".into(), "prod".into()];
    let settings = CiliumSettings {
        version: [("dev".to_string(), "1.20.0".to_string())].into(),
    };
    assert!(
        settings
            .validate(&envs)
            .unwrap_err()
            .message
            .contains("`prod`")
    );
}
