//! Cilium's operator: its own identity with exactly the EC2 actions Cilium documents for ENI mode; no node role manages interfaces.

use super::*;

#[test]
fn cilium_operator_has_exactly_the_eni_privileges_cilium_documents_and_the_nodes_none() {
    let dir = new_repo(&[
        &format!("{PROD} --components karpenter"),
        &format!("{STAGING} --egress-gateway"),
    ]);
    for cell in [PROD, STAGING] {
        let parsed = hcl_parse_dir(&stack_dir(dir.path(), cell));
        let document = block(
            &parsed,
            "cni.tf",
            &["data", "aws_iam_policy_document", "cilium_operator"],
        );
        let statements = document["statement"].as_array().unwrap();
        assert_eq!(statements.len(), 1, "{cell}: one statement expected");
        let actions: BTreeSet<String> = strings(&statements[0]["actions"]).into_iter().collect();
        let documented: BTreeSet<String> = CILIUM_ENI_PRIVILEGES
            .iter()
            .map(|a| format!("ec2:{a}"))
            .collect();
        assert_eq!(
            actions, documented,
            "{cell}: the operator's actions are not Cilium's list"
        );
        assert_eq!(strings(&statements[0]["resources"]), ["*"]);
        assert!(statements[0]["effect"].is_null() || statements[0]["effect"] == "Allow");

        // Its own identity, for the service account the chart runs the operator as, created
        // before the release so EKS injects the credentials into the first operator pod.
        let association = block(
            &parsed,
            "cni.tf",
            &[
                "resource",
                "aws_eks_pod_identity_association",
                "cilium_operator",
            ],
        );
        assert_eq!(association["namespace"], "kube-system");
        assert_eq!(association["service_account"], "cilium-operator");
        assert_eq!(
            association["role_arn"],
            "${aws_iam_role.cilium_operator.arn}"
        );
        let policy = block(
            &parsed,
            "cni.tf",
            &["resource", "aws_iam_role_policy", "cilium_operator"],
        );
        assert_eq!(policy["role"], "${aws_iam_role.cilium_operator.id}");
        assert_eq!(
            policy["policy"],
            "${data.aws_iam_policy_document.cilium_operator.json}"
        );
        let trust = block(
            &parsed,
            "cni.tf",
            &["data", "aws_iam_policy_document", "cilium_operator_trust"],
        );
        assert_eq!(
            trust["statement"][0]["principals"][0]["identifiers"][0],
            "pods.eks.amazonaws.com"
        );
        let cilium = block(&parsed, "cni.tf", &["resource", "helm_release", "cilium"]);
        let depends = strings(&cilium["depends_on"]);
        for needed in [
            "${aws_eks_pod_identity_association.cilium_operator}",
            "${aws_iam_role_policy.cilium_operator}",
        ] {
            assert!(
                depends.contains(&needed.to_string()),
                "{cell}: helm_release.cilium does not wait for {needed}"
            );
        }
        let values = cilium["values"][0].as_str().unwrap();
        for expected in [
            "serviceAccounts      = { operator = { name = \"cilium-operator\" } }",
            // With a cluster name, ENI garbage collection needs no ec2:DescribeTags.
            "cluster              = { name = var.name }",
        ] {
            assert!(
                values.contains(expected),
                "{cell}: Cilium values lack `{expected}`:\n{values}"
            );
        }

        // No node role carries the CNI policy: only the operator manages interfaces.
        let mut groups = vec![(
            "cluster.tf",
            "system_node_group",
            "iam_role_attach_cni_policy",
        )];
        if cell == STAGING {
            groups.push((
                "egress.tf",
                "egress_node_group",
                "iam_role_attach_cni_policy",
            ));
        } else {
            groups.push((
                "karpenter.tf",
                "karpenter",
                "node_iam_role_attach_cni_policy",
            ));
        }
        for (file, module, attribute) in groups {
            assert_eq!(
                block(&parsed, file, &["module", module])[attribute],
                false,
                "{cell}: module.{module} attaches AmazonEKS_CNI_Policy"
            );
        }
        let text = fs::read_to_string(stack_dir(dir.path(), cell).join("cluster.tf")).unwrap();
        assert!(
            !text.contains("AmazonEKS_CNI_Policy\"")
                && !text.contains("iam_role_attach_cni_policy = true")
        );
    }
}
