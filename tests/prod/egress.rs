//! The egress gateway: fixed addresses, an output listing them, a policy selecting the gateway nodes.

use super::*;

#[test]
fn the_egress_gateway_has_fixed_addresses_an_output_and_a_policy_for_its_nodes() {
    let dir = new_repo(&[&format!("{PROD} --egress-gateway"), STAGING]);
    let root = dir.path();
    let parsed = hcl_parse_dir(&stack_dir(root, PROD));
    let resource = |ty: &str| block(&parsed, "egress.tf", &["resource", ty, "egress"]).clone();
    // Per zone: an Elastic IP, a NAT gateway holding it, and the gateway subnet routed through it.
    assert_eq!(resource("aws_eip")["domain"], "vpc");
    assert_eq!(
        resource("aws_nat_gateway")["allocation_id"],
        "${aws_eip.egress[count.index].id}"
    );
    assert_eq!(
        resource("aws_nat_gateway")["subnet_id"],
        "${module.vpc.public_subnets[count.index]}"
    );
    let route = &resource("aws_route_table")["route"][0];
    assert_eq!(route["cidr_block"], "0.0.0.0/0");
    assert_eq!(
        route["nat_gateway_id"],
        "${aws_nat_gateway.egress[count.index].id}"
    );
    assert_eq!(
        resource("aws_route_table_association")["subnet_id"],
        "${aws_subnet.egress[count.index].id}"
    );
    for ty in [
        "aws_subnet",
        "aws_eip",
        "aws_nat_gateway",
        "aws_route_table",
        "aws_route_table_association",
    ] {
        assert_eq!(
            resource(ty)["count"],
            "${length(local.azs)}",
            "{ty} is not one per zone"
        );
    }
    let nodes = block(&parsed, "egress.tf", &["module", "egress_node_group"]);
    // The gateway subnets, read through their route table associations: the nodes start once the
    // NAT gateway is their default route.
    assert_eq!(
        nodes["subnet_ids"], "${aws_route_table_association.egress[*].subnet_id}",
        "gateway nodes are not in the gateway subnets"
    );
    let output = block(&parsed, "egress.tf", &["output", "egress_ips"]);
    assert_eq!(output["value"], "${aws_eip.egress[*].public_ip}");
    // Cilium: the feature, its requirements, and the tunnel port between nodes.
    let values = block(&parsed, "cni.tf", &["resource", "helm_release", "cilium"])["values"][0]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        values.contains("egressGateway = { enabled = true }")
            && values.contains("bpf           = { masquerade = true }")
            && values.contains("kubeProxyReplacement = true")
    );
    let rule = &block(&parsed, "cluster.tf", &["module", "eks"])["node_security_group_additional_rules"]
        ["egress_gateway_vxlan"];
    assert_eq!(
        (
            rule["protocol"].as_str(),
            rule["from_port"].as_u64(),
            rule["to_port"].as_u64(),
            rule["self"].as_bool()
        ),
        (Some("udp"), Some(8472), Some(8472), Some(true))
    );

    // Gateway nodes follow Cilium and their NAT route through values, never a module-level
    // depends_on (which defers every data source inside the module at each Cilium change).
    assert!(
        nodes.get("depends_on").is_none(),
        "module.egress_node_group has depends_on"
    );
    assert_eq!(nodes["cluster_name"], "${local.cluster_name_after_cni}");

    // The policy: in the cell's directory, listed by its kustomization, selecting the gateway
    // nodes by the label their node group gives them, and leaving VPC traffic alone.
    let policy = &load_yaml_file(&root.join(format!("cells/{PROD}/egress-gateway.yaml")))[0].value;
    assert_eq!(policy["apiVersion"], "cilium.io/v2");
    assert_eq!(policy["kind"], "CiliumEgressGatewayPolicy");
    assert!(
        policy["metadata"]["namespace"].is_null(),
        "the policy is cluster-scoped"
    );
    let selector = policy["spec"]["egressGateway"]["nodeSelector"]["matchLabels"]
        .as_object()
        .unwrap();
    let labels = nodes["labels"].as_object().unwrap();
    for (key, value) in selector {
        assert_eq!(
            labels.get(key),
            Some(value),
            "the gateway nodes lack the selector's {key}"
        );
    }
    assert_eq!(
        policy["spec"]["destinationCIDRs"],
        serde_json::json!(["0.0.0.0/0"])
    );
    // The whole VPC pool, not only this cell's block: traffic to every other cell stays on the
    // private routes, never out through the NAT gateways (issue 19).
    let pool: Value = yaml_serde::from_str::<Value>(&read(&root.join("cellgen.yaml"))).unwrap()
        ["network"]["vpc_cidr_pool"]
        .clone();
    assert_eq!(pool, "10.0.0.0/8");
    assert_eq!(policy["spec"]["excludedCIDRs"], serde_json::json!([pool]));
    assert_ne!(tfvars_cidr(root, PROD), "10.0.0.0/8");
    assert_eq!(
        policy["spec"]["selectors"][0]["podSelector"]["matchLabels"]["egress.cellgen.io/gateway"],
        "true"
    );
    let listed = load_yaml_file(&root.join(format!("cells/{PROD}/kustomization.yaml")));
    assert!(strings(&listed[0].value["resources"]).contains(&"egress-gateway.yaml".to_string()));

    // Without --egress-gateway, none of it.
    let parsed = hcl_parse_dir(&stack_dir(root, STAGING));
    assert!(parsed.get("egress.tf").is_none());
    assert!(
        block(&parsed, "cluster.tf", &["module", "eks"])
            .get("node_security_group_additional_rules")
            .is_none()
    );
    assert!(
        !root
            .join(format!("cells/{STAGING}/egress-gateway.yaml"))
            .exists()
    );
}
