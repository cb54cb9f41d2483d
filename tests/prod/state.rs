//! No secret in Terraform state: no resource or argument that stores one, secret variables ephemeral.

use super::*;

/// Resource types whose state holds a secret value, whatever their arguments.
const SECRET_RESOURCES: &[&str] = &[
    "tls_private_key",
    "random_password",
    "aws_iam_access_key",
    "aws_secretsmanager_secret_version",
    "kubernetes_secret",
];

/// Arguments that are stored in state and hold a secret value (write-only `*_wo` ones are not
/// stored): (resource type, argument).
const SECRET_ARGUMENTS: &[(&str, &str)] = &[
    ("kubernetes_secret_v1", "data"),
    ("kubernetes_secret_v1", "binary_data"),
    ("helm_release", "set_sensitive"),
    ("aws_ssm_parameter", "value"),
];

#[test]
fn no_secret_valued_attribute_in_any_resource() {
    let all = catalog_names();
    let dir = new_repo(&[&format!(
        "{PROD} --egress-gateway --with-requirements --components {}",
        all.join(",")
    )]);
    let parsed = hcl_parse_dir(&stack_dir(dir.path(), PROD));
    let files = parsed.as_object().unwrap();

    // Which variables hold secrets: sensitive ones, and any named like one.
    let mut secret_vars = BTreeSet::new();
    for (file, body) in files {
        for (name, decl) in body["variable"].as_object().into_iter().flatten() {
            let decl = &decl[0];
            let named_secret = ["key", "password", "token", "secret"]
                .iter()
                .any(|w| name.contains(w));
            if decl["sensitive"] == true || named_secret {
                // Ephemeral: never in a plan file or state (Terraform >= 1.10).
                assert_eq!(
                    decl["ephemeral"], true,
                    "{file}: variable {name} holds a secret but is not ephemeral"
                );
                secret_vars.insert(format!("var.{name}"));
            }
        }
    }
    assert!(
        secret_vars.contains("var.flux_git_ssh_private_key"),
        "{secret_vars:?}"
    );

    let mut problems = Vec::new();
    for (file, body) in files.iter().filter(|(f, _)| f.ends_with(".tf")) {
        for (ty, resources) in body["resource"].as_object().into_iter().flatten() {
            if SECRET_RESOURCES.contains(&ty.as_str()) {
                problems.push(format!(
                    "{file}: resource type {ty} keeps its secret in state"
                ));
            }
            for (name, instances) in resources.as_object().unwrap() {
                for (argument, value) in instances[0].as_object().unwrap() {
                    if SECRET_ARGUMENTS.contains(&(ty.as_str(), argument.as_str())) {
                        problems.push(format!("{file}: {ty}.{name}.{argument} is stored in state"));
                    }
                    let text = value.to_string();
                    for var in &secret_vars {
                        if text.contains(var.as_str()) && !argument.ends_with("_wo") {
                            problems.push(format!("{file}: {ty}.{name}.{argument} stores {var}"));
                        }
                    }
                }
            }
        }
        // Outside provider configuration, a secret variable reaches nothing persisted.
        for kind in ["data", "module", "output", "locals"] {
            let text = body[kind].to_string();
            for var in &secret_vars {
                if text.contains(var.as_str()) {
                    problems.push(format!("{file}: {kind} uses {var}"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    // The deploy key goes to the write-only data of the Secret Flux reads Git with, and nowhere
    // else: no provider is configured with it either.
    let secret = &parsed["flux.tf"]["resource"]["kubernetes_secret_v1"]["flux_git"][0];
    assert_eq!(
        secret["data_wo"]["identity"],
        "${var.flux_git_ssh_private_key}"
    );
    for (file, body) in files {
        let uses = body
            .to_string()
            .matches("var.flux_git_ssh_private_key")
            .count();
        let expected = usize::from(file == "flux.tf");
        assert_eq!(uses, expected, "{file} reads the deploy key {uses} times");
    }
}
