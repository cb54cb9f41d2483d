//! Which resource and data source attributes hold secrets: the attributes provider schemas mark
//! `sensitive`. Referencing one (or a value containing one) in cell-metadata puts a secret in a
//! ConfigMap.
//!
//! [`DERIVED`] is derived from the vendored schemas in `schemas/terraform/providers` (a test below
//! derives it again and compares). Those files carry no sensitivity for hashicorp/aws and
//! hashicorp/kubernetes (they are extracted from the cdktf bindings, which drop the flag), and the
//! stacks do not pin hashicorp/random or hashicorp/tls at all, so [`KNOWN`] lists what those
//! providers mark, read from their sources (tags named in each entry). Write-only attributes
//! (`*_wo`) are left out: reading one always yields null.

/// Where an attribute lives: a managed resource or a data source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Resource,
    Data,
}

/// One sensitive attribute: `path` is the attribute name, nested attributes joined with `.`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Sensitive {
    pub kind: Kind,
    pub ty: &'static str,
    pub path: &'static str,
    /// The provider release whose schema says so.
    pub provider: &'static str,
}

const fn s(kind: Kind, ty: &'static str, path: &'static str, provider: &'static str) -> Sensitive {
    Sensitive {
        kind,
        ty,
        path,
        provider,
    }
}

use Kind::{Data, Resource};

const HELM: &str = "hashicorp/helm 3.1.2";

/// Every attribute the vendored provider schemas mark sensitive, in resources and data sources
/// (provider configuration blocks cannot be referenced, so their sensitive attributes are not here).
pub const DERIVED: &[Sensitive] = &[
    s(Data, "helm_template", "repository_password", HELM),
    s(Data, "helm_template", "set_sensitive.value", HELM),
    s(Resource, "helm_release", "repository_password", HELM),
    s(Resource, "helm_release", "set_sensitive.value", HELM),
];

const AWS: &str = "hashicorp/aws";
const KUBERNETES: &str = "hashicorp/kubernetes 2.38.0";
const RANDOM: &str = "hashicorp/random v3.9.0";
const TLS: &str = "hashicorp/tls v4.2.1";

/// Sensitive attributes of providers whose vendored schema lacks the flag or that are not
/// vendored, from their sources: terraform-provider-random `internal/provider/resource_password.go`
/// and `resource_bytes.go`; terraform-provider-tls `internal/provider/resource_*.go` and
/// `data_source_public_key.go`; terraform-provider-kubernetes v2.38.0
/// `kubernetes/{resource,data_source}_kubernetes_secret_v1.go`, `resource_kubernetes_tokenrequest_v1.go`
/// (`kubernetes_secret` is the same schema under its old name); terraform-provider-aws
/// `internal/service/iam/access_key.go`, `secretsmanager/secret_version{,_data_source}.go`,
/// `ssm/parameter{,_data_source}.go`, `eks/cluster_auth_data_source.go`.
pub const KNOWN: &[Sensitive] = &[
    s(Resource, "random_password", "result", RANDOM),
    s(Resource, "random_password", "bcrypt_hash", RANDOM),
    s(Resource, "random_bytes", "base64", RANDOM),
    s(Resource, "random_bytes", "hex", RANDOM),
    s(Resource, "tls_private_key", "private_key_pem", TLS),
    s(Resource, "tls_private_key", "private_key_openssh", TLS),
    s(Resource, "tls_private_key", "private_key_pem_pkcs8", TLS),
    s(Resource, "tls_cert_request", "private_key_pem", TLS),
    s(Resource, "tls_self_signed_cert", "private_key_pem", TLS),
    s(
        Resource,
        "tls_locally_signed_cert",
        "ca_private_key_pem",
        TLS,
    ),
    s(Data, "tls_public_key", "private_key_pem", TLS),
    s(Data, "tls_public_key", "private_key_openssh", TLS),
    s(Resource, "aws_iam_access_key", "secret", AWS),
    s(Resource, "aws_iam_access_key", "ses_smtp_password_v4", AWS),
    s(
        Resource,
        "aws_secretsmanager_secret_version",
        "secret_string",
        AWS,
    ),
    s(
        Resource,
        "aws_secretsmanager_secret_version",
        "secret_binary",
        AWS,
    ),
    s(
        Data,
        "aws_secretsmanager_secret_version",
        "secret_string",
        AWS,
    ),
    s(
        Data,
        "aws_secretsmanager_secret_version",
        "secret_binary",
        AWS,
    ),
    s(Resource, "aws_ssm_parameter", "value", AWS),
    s(Data, "aws_ssm_parameter", "value", AWS),
    s(Data, "aws_eks_cluster_auth", "token", AWS),
    s(Resource, "kubernetes_secret_v1", "data", KUBERNETES),
    s(Resource, "kubernetes_secret_v1", "binary_data", KUBERNETES),
    s(Resource, "kubernetes_secret", "data", KUBERNETES),
    s(Resource, "kubernetes_secret", "binary_data", KUBERNETES),
    s(Data, "kubernetes_secret_v1", "data", KUBERNETES),
    s(Data, "kubernetes_secret_v1", "binary_data", KUBERNETES),
    s(Data, "kubernetes_secret", "data", KUBERNETES),
    s(Data, "kubernetes_secret", "binary_data", KUBERNETES),
    s(Resource, "kubernetes_token_request_v1", "token", KUBERNETES),
];

/// The sensitive attribute a reference reaches, if any. `path` is the reference's attribute
/// names after `TYPE.NAME` (indexes left out): it is sensitive when it names a sensitive
/// attribute or something inside one, or contains one (a whole resource, `set_sensitive`).
pub fn lookup(kind: Kind, ty: &str, path: &[&str]) -> Option<&'static Sensitive> {
    DERIVED.iter().chain(KNOWN).find(|s| {
        s.kind == kind && s.ty == ty && {
            let parts: Vec<&str> = s.path.split('.').collect();
            let n = parts.len().min(path.len());
            parts[..n] == path[..n]
        }
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::Value;

    use super::*;

    fn providers() -> Vec<Value> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/schemas/terraform/providers");
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        assert!(files.len() >= 4, "no provider schemas in {dir}");
        files
            .iter()
            .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
            .collect()
    }

    /// Sensitive attribute paths of a schema block (attributes, nested attributes, blocks).
    fn walk(block: &Value, prefix: &str, out: &mut Vec<String>) {
        let join = |name: &str| {
            if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix}.{name}")
            }
        };
        for (name, attr) in block["attributes"].as_object().into_iter().flatten() {
            if attr["sensitive"] == true {
                out.push(join(name));
            }
            if let Some(nested) = attr.get("nested_type") {
                walk(nested, &join(name), out);
            }
        }
        for (name, bt) in block["block_types"].as_object().into_iter().flatten() {
            walk(&bt["block"], &join(name), out);
        }
    }

    #[test]
    fn the_derived_table_is_exactly_what_the_vendored_schemas_mark_sensitive() {
        let mut derived = BTreeSet::new();
        for provider in providers() {
            let label = format!(
                "{} {}",
                provider["source"].as_str().unwrap(),
                provider["version"].as_str().unwrap()
            );
            for (key, kind) in [
                ("resource_schemas", Resource),
                ("data_source_schemas", Data),
            ] {
                for (ty, schema) in provider[key].as_object().unwrap() {
                    let mut paths = Vec::new();
                    walk(schema, "", &mut paths);
                    for path in paths {
                        derived.insert((kind, ty.clone(), path, label.clone()));
                    }
                }
            }
        }
        let table: BTreeSet<_> = DERIVED
            .iter()
            .map(|s| {
                (
                    s.kind,
                    s.ty.to_string(),
                    s.path.to_string(),
                    s.provider.to_string(),
                )
            })
            .collect();
        assert_eq!(
            table, derived,
            "DERIVED differs from schemas/terraform/providers"
        );
    }

    #[test]
    fn known_entries_name_attributes_the_vendored_schemas_have_and_do_not_mark() {
        for provider in providers() {
            for (key, kind) in [
                ("resource_schemas", Resource),
                ("data_source_schemas", Data),
            ] {
                for (ty, schema) in provider[key].as_object().unwrap() {
                    for entry in KNOWN.iter().filter(|s| s.kind == kind && s.ty == ty) {
                        let attr = &schema["attributes"][entry.path];
                        assert!(attr.is_object(), "{ty}.{}: no such attribute", entry.path);
                        assert!(
                            attr["sensitive"] != true,
                            "{ty}.{} belongs in DERIVED",
                            entry.path
                        );
                    }
                }
            }
        }
        // kubernetes_secret_v1 is vendored: the check above really ran for some entries.
        assert!(KNOWN.iter().any(|s| s.ty == "kubernetes_secret_v1"));
    }

    #[test]
    fn lookup_matches_the_attribute_what_contains_it_and_what_it_contains() {
        assert!(lookup(Resource, "random_password", &["result"]).is_some());
        assert!(lookup(Resource, "random_password", &[]).is_some());
        assert!(lookup(Resource, "random_password", &["length"]).is_none());
        assert!(lookup(Data, "random_password", &["result"]).is_none());
        assert!(lookup(Resource, "helm_release", &["set_sensitive"]).is_some());
        assert!(lookup(Resource, "helm_release", &["set_sensitive", "value"]).is_some());
        assert!(lookup(Resource, "helm_release", &["set_sensitive", "name"]).is_none());
        assert!(lookup(Resource, "helm_release", &["set"]).is_none());
        assert!(lookup(Resource, "kubernetes_secret_v1", &["data", "password"]).is_some());
        assert!(lookup(Resource, "tls_private_key", &["public_key_openssh"]).is_none());
        assert!(lookup(Resource, "aws_iam_access_key", &["id"]).is_none());
    }
}
