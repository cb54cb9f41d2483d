//! Least privilege (issue 19): external-dns and cert-manager reach the hosted zones cellgen.yaml
//! gives the cell's environment and no other; a namespace reads only its own secrets through
//! the External Secrets store, as through the app role; the app role's buckets are the cell's;
//! no ARN names the `aws` partition by hand; external-dns deletes the records it owns.

use super::*;
use support::console::{eval, local_source, source_of};

/// The cell's objects of `layer` rendered with `values` for cell-metadata.
fn render(root: &Path, cell: &str, layer: &str, values: &[(&str, &str)]) -> Vec<Value> {
    let file = root.join("values.yaml");
    let text: String = values
        .iter()
        .map(|(k, v)| format!("{k}: {}\n", serde_json::to_string(v).unwrap()))
        .collect();
    let mut command = cellgen();
    command
        .arg("-C")
        .arg(root)
        .args(["render", cell, "--layer", layer]);
    if !values.is_empty() {
        fs::write(&file, text).unwrap();
        command.arg("--values").arg(&file);
    }
    let out = command.output().unwrap();
    let _ = fs::remove_file(&file);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    parse_yaml_docs("render", &String::from_utf8_lossy(&out.stdout))
        .unwrap()
        .into_iter()
        .map(|d| d.value)
        .collect()
}

fn object<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

#[test]
fn external_dns_and_cert_manager_reach_only_the_zones_of_the_environment() {
    let dir = new_repo(&[&format!("{PROD} --components external-dns,cert-manager")]);
    let root = dir.path();
    let stack = stack_dir(root, PROD);
    let parsed = hcl_parse_dir(&stack);
    for (component, zones_local, data, module, arns) in [
        (
            "external-dns.tf",
            "external_dns_zones",
            "external_dns",
            "external_dns_pod_identity",
            "external_dns_hosted_zone_arns",
        ),
        (
            "cert-manager.tf",
            "cert_manager_zones",
            "cert_manager",
            "cert_manager_pod_identity",
            "cert_manager_hosted_zone_arns",
        ),
    ] {
        let zones = local_source(&parsed, zones_local);
        assert_eq!(
            zones, "local.settings.dns.zones[var.environment]",
            "{component}"
        );
        let lookup = block(&parsed, component, &["data", "aws_route53_zone", data]);
        assert_eq!(lookup["name"], "${each.value}");
        assert_eq!(lookup["private_zone"], false);
        let for_each = source_of(&lookup["for_each"]);
        let arn_expression = source_of(&block(&parsed, component, &["module", module])[arns])
            .replace(
                &format!("data.aws_route53_zone.{data}"),
                r#"{ "example.com" = { arn = "arn:aws:route53:::hostedzone/Z0EXAMPLE" } }"#,
            )
            .replace("data.aws_partition.current.partition", "\"aws\"");
        let evaluate = || {
            eval(
                &stack,
                &[(zones_local, zones.clone())],
                &[],
                &[&format!("local.{zones_local}"), &for_each, &arn_expression],
            )
            .unwrap()
        };
        // The zones of prod in cellgen.yaml (--dns-zones gave every environment example.com).
        assert_eq!(
            evaluate(),
            [
                serde_json::json!([DNS_ZONE]),
                serde_json::json!([DNS_ZONE]),
                serde_json::json!(["arn:aws:route53:::hostedzone/Z0EXAMPLE"]),
            ],
            "{component}"
        );
        // "*" is every zone, as before, and looks none up.
        let config = root.join("cellgen.yaml");
        let text = read(&config);
        fs::write(
            &config,
            text.replace(&format!("prod: [\"{DNS_ZONE}\"]"), "prod: [\"*\"]"),
        )
        .unwrap();
        assert_eq!(
            evaluate(),
            [
                serde_json::json!(["*"]),
                serde_json::json!([]),
                serde_json::json!(["arn:aws:route53:::hostedzone/*"]),
            ],
            "{component}"
        );
        fs::write(&config, text).unwrap();
    }

    // external-dns filters on the same domains (cell-metadata's external_dns_domains, Terraform's
    // JSON list read back by YAML as a list), owns its records by cell, and deletes them with
    // their Services and Ingresses.
    let metadata = block(
        &parsed,
        "cell-metadata.tf",
        &["resource", "kubernetes_config_map_v1", "cell_metadata"],
    );
    let domains = source_of(&metadata["data"]["external_dns_domains"]);
    let value = eval(
        &stack,
        &[(
            "external_dns_zones",
            local_source(&parsed, "external_dns_zones"),
        )],
        &[],
        &[&domains],
    )
    .unwrap()
    .remove(0);
    assert_eq!(value, serde_json::json!(format!("[\"{DNS_ZONE}\"]")));
    let objects = render(
        root,
        PROD,
        "controllers",
        &[
            ("external_dns_domains", value.as_str().unwrap()),
            ("cluster_name", PROD),
        ],
    );
    let values = &object(&objects, "HelmRelease", "external-dns")["spec"]["values"];
    assert_eq!(values["domainFilters"], serde_json::json!([DNS_ZONE]));
    assert_eq!(values["policy"], "sync");
    assert_eq!(values["txtOwnerId"], PROD);
    assert_eq!(values["registry"], "txt");
}

#[test]
fn external_dns_needs_the_zones_of_the_environment_first() {
    let dir = temp_dir();
    let root = dir.path();
    let out = cellgen()
        .arg("-C")
        .arg(root)
        .args([
            "new",
            PROD,
            "--git-url",
            GIT_URL,
            "--admin-role-arn",
            ADMIN_ROLE,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(read(&root.join("cellgen.yaml")).contains("# dns:\n#   zones:\n"));
    let before = tree_hash(root);
    let out = run(root, &["add-component", "external-dns", "--cell", PROD]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("needs the setting `dns.zones.prod`")
            && stderr.contains("prod: [example.com]"),
        "{stderr}"
    );
    assert_tree_unchanged(&before, &tree_hash(root), "refused add-component");
}

#[test]
fn a_namespace_reads_only_its_own_secrets_through_the_cluster_secret_store() {
    let dir = new_repo(&[&format!("{PROD} --components external-secrets")]);
    let root = dir.path();
    let parsed = hcl_parse_dir(&stack_dir(root, PROD));
    let file = "external-secrets.tf";
    // The operator's own role reads nothing: it may only assume the reader.
    let operator = block(&parsed, file, &["module", "external_secrets_pod_identity"]);
    assert!(operator.get("attach_external_secrets_policy").is_none());
    assert_eq!(operator["attach_custom_policy"], true);
    let statements = operator["policy_statements"].as_array().unwrap();
    assert_eq!(statements.len(), 1, "{statements:?}");
    assert_eq!(
        strings(&statements[0]["actions"]),
        ["sts:AssumeRole", "sts:TagSession"]
    );
    assert_eq!(
        strings(&statements[0]["resources"]),
        ["${aws_iam_role.external_secrets_reader.arn}"]
    );
    // The reader trusts the operator's role alone, and reads the cell's secrets tagged with the
    // namespace the operator tags each session with (esoNamespace).
    let trust = block(
        &parsed,
        file,
        &[
            "data",
            "aws_iam_policy_document",
            "external_secrets_reader_trust",
        ],
    );
    assert_eq!(
        trust["statement"][0]["principals"][0]["identifiers"][0],
        "${module.external_secrets_pod_identity.iam_role_arn}"
    );
    assert!(strings(&trust["statement"][0]["actions"]).contains(&"sts:TagSession".to_string()));
    let policy = block(
        &parsed,
        file,
        &["data", "aws_iam_policy_document", "external_secrets_reader"],
    );
    let read_statement = policy["statement"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sid"] == "NamespaceSecrets")
        .unwrap();
    assert_eq!(
        strings(&read_statement["resources"]),
        [
            "arn:${data.aws_partition.current.partition}:secretsmanager:${var.region}:${data.aws_caller_identity.current.account_id}:secret:${var.name}/*"
        ]
    );
    let condition = &read_statement["condition"][0];
    assert_eq!(
        condition["variable"],
        "aws:ResourceTag/kubernetes-namespace"
    );
    assert_eq!(
        strings(&condition["values"]),
        ["$${aws:PrincipalTag/esoNamespace}"]
    );
    // Every statement that reads a value is confined: the others list names or decrypt only
    // through Secrets Manager.
    for statement in policy["statement"].as_array().unwrap() {
        let actions = strings(&statement["actions"]);
        if actions.iter().any(|a| a == "secretsmanager:GetSecretValue") {
            assert_eq!(statement["sid"], "NamespaceSecrets");
        }
        if actions.iter().any(|a| a == "kms:Decrypt") {
            assert_eq!(statement["condition"][0]["variable"], "kms:ViaService");
        }
    }

    // The store assumes the reader with the namespace tag; namespaced stores are ignored, since
    // their authors choose their session tags.
    let arn = "arn:aws:iam::123456789012:role/eu-west-2-prod-external-secrets-reader";
    let configs = render(
        root,
        PROD,
        "configs",
        &[("external_secrets_reader_role_arn", arn)],
    );
    let aws =
        &object(&configs, "ClusterSecretStore", "aws-secrets-manager")["spec"]["provider"]["aws"];
    assert_eq!(aws["role"], arn);
    assert_eq!(aws["sessionTagsPolicy"], "Simple");
    assert!(aws.get("auth").is_none());
    let controllers = render(root, PROD, "controllers", &[]);
    let values = &object(&controllers, "HelmRelease", "external-secrets")["spec"]["values"];
    assert_eq!(values["processSecretStore"], false);
}

#[test]
fn the_app_roles_buckets_are_the_cells_and_no_arn_names_the_aws_partition_by_hand() {
    let all = catalog_names().join(",");
    let dir = new_repo(&[&format!("{PROD} --egress-gateway --components {all}")]);
    let stack = stack_dir(dir.path(), PROD);
    let parsed = hcl_parse_dir(&stack);
    let policy = block(
        &parsed,
        "app-role.tf",
        &["data", "aws_iam_policy_document", "app_abac"],
    );
    for statement in policy["statement"].as_array().unwrap() {
        let conditions: Vec<(String, Vec<String>)> = statement["condition"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["variable"].as_str().unwrap().to_string(),
                    strings(&c["values"]),
                )
            })
            .collect();
        for tag in ["kubernetes-namespace", "eks-cluster-name"] {
            assert!(
                conditions.contains(&(
                    format!("aws:ResourceTag/{tag}"),
                    vec![format!("$${{aws:PrincipalTag/{tag}}}")]
                )),
                "{}: no {tag} condition: {conditions:?}",
                statement["sid"]
            );
        }
    }
    for entry in fs::read_dir(&stack).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "tf") {
            let text = read(&path);
            assert!(
                !text.contains("\"arn:aws:"),
                "{} writes the aws partition by hand (aws-cn and aws-us-gov have others)",
                path.display()
            );
        }
    }
}
