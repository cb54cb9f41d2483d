//! What a component.yaml may contain. A repository component is input cellgen pastes into
//! Terraform and YAML, so every value is either checked against what it must be (a DNS name, an
//! IAM policy ARN, one Terraform expression, a reference) or escaped where it lands (see
//! `edit::hcl::syntax` and `edit::yaml::scalar`). Nothing in a component.yaml can add a block,
//! an attribute or a key of its own.

use camino::Utf8Path;

use super::ComponentSpec;
use crate::error::CellgenError;
use crate::model::config::{SCHEMA_KEY, is_dns_label, line_of};
use crate::ports::edit::hcl::syntax::{check_expression, check_one_line, check_reference};

/// Words HCL reads as something else when they stand as an object key.
pub const HCL_KEYWORDS: &[&str] = &[
    "true", "false", "null", "for", "in", "if", "endif", "endfor",
];

fn invalid(path: &Utf8Path, text: &str, needle: &str, message: String) -> CellgenError {
    let line = line_of(text, needle)
        .map(|l| format!("line {l}: "))
        .unwrap_or_default();
    CellgenError::InvalidFile {
        path: path.to_path_buf(),
        message: format!("{line}{message}"),
    }
}

fn invalid_at(path: &Utf8Path, line: Option<usize>, message: String) -> CellgenError {
    CellgenError::InvalidFile {
        path: path.to_path_buf(),
        message: format!(
            "{}{message}",
            line.map(|l| format!("line {l}: ")).unwrap_or_default()
        ),
    }
}

/// The line of `keys.<key>.<field>` in a component.yaml: the first `<field>:` after `<key>:`
/// (a multi-line value cannot be found by its text).
fn key_field_line(text: &str, key: &str, field: &str) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let key_at = lines.iter().position(|l| {
        let t = l.trim_start().trim_start_matches(['"', '\'']);
        t.strip_prefix(key)
            .is_some_and(|r| r.trim_start_matches(['"', '\'']).starts_with(':'))
    })?;
    lines[key_at + 1..]
        .iter()
        .position(|l| l.trim_start().starts_with(&format!("{field}:")))
        .map(|i| key_at + 2 + i)
        .or(Some(key_at + 1))
}

/// A DNS-1123 subdomain: dot-separated labels, at most 253 characters (Kubernetes object names,
/// e.g. service accounts).
pub fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_dns_label)
}

/// An IAM managed policy ARN, in any partition: `arn:<partition>:iam::<account|aws>:policy/[path/]name`.
pub fn is_policy_arn(s: &str) -> bool {
    let parts: Vec<&str> = s.splitn(6, ':').collect();
    let [arn, partition, service, region, account, resource] = parts.as_slice() else {
        return false;
    };
    let partition_ok = partition.strip_prefix("aws").is_some_and(|rest| {
        rest.split('-')
            .skip(1)
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase()))
            && (rest.is_empty() || rest.starts_with('-'))
    });
    let account_ok =
        *account == "aws" || (account.len() == 12 && account.bytes().all(|b| b.is_ascii_digit()));
    let Some(policy) = resource.strip_prefix("policy/") else {
        return false;
    };
    let segments: Vec<&str> = policy.split('/').collect();
    let name = segments.last().copied().unwrap_or_default();
    *arn == "arn"
        && partition_ok
        && *service == "iam"
        && region.is_empty()
        && account_ok
        && (1..=128).contains(&name.len())
        && s.len() <= 2048
        && segments.iter().all(|seg| {
            !seg.is_empty()
                && seg
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"+=,.@_-".contains(&b))
        })
}

/// Every check of a component.yaml; `text` is its source, for line numbers.
pub fn validate(spec: &ComponentSpec, path: &Utf8Path, text: &str) -> Result<(), CellgenError> {
    if let Err(why) = check_one_line(&spec.description) {
        return Err(invalid_at(
            path,
            text.lines()
                .position(|l| l.starts_with("description:"))
                .map(|i| i + 1),
            format!(
                "description `{}` {why}: give it on one line (cellgen prints it and writes it as one comment line)",
                spec.description.escape_debug()
            ),
        ));
    }
    if spec.layers.is_empty() {
        return Err(invalid(
            path,
            text,
            "layers",
            "`layers` is empty: a component adds at least one layer".into(),
        ));
    }
    for layer in &spec.layers {
        if !is_dns_label(layer) {
            return Err(invalid(
                path,
                text,
                layer,
                format!("layer `{layer}` is not a layer name (lowercase letters, digits, dashes)"),
            ));
        }
    }
    for name in &spec.requires {
        if !is_dns_label(name) {
            return Err(invalid(
                path,
                text,
                name,
                format!(
                    "`requires` lists `{name}`, which is not a component name (lowercase letters, digits, dashes)"
                ),
            ));
        }
    }
    for (key, k) in &spec.keys {
        if !crate::model::keys::is_valid_key_name(key) {
            return Err(invalid(
                path,
                text,
                key,
                format!(
                    "key `{key}` is not a valid Flux variable name (letters, digits, underscores; e.g. `{}`)",
                    key.replace(['-', '.'], "_")
                ),
            ));
        }
        if key == SCHEMA_KEY || HCL_KEYWORDS.contains(&key.as_str()) {
            return Err(invalid(
                path,
                text,
                key,
                format!(
                    "key `{key}` is reserved (cellgen's schema number, or an HCL keyword); pick another name"
                ),
            ));
        }
        for (field, value) in [("description", &k.description), ("example", &k.example)] {
            if let Err(why) = check_one_line(value) {
                return Err(invalid_at(
                    path,
                    key_field_line(text, key, field),
                    format!(
                        "keys.{key}.{field} `{}` {why}: give it on one line (cellgen writes it into cellgen.yaml as one line)",
                        value.escape_debug()
                    ),
                ));
            }
        }
        if let Err(why) = check_expression(&k.terraform) {
            return Err(invalid_at(
                path,
                key_field_line(text, key, "terraform"),
                format!(
                    "keys.{key}.terraform {why}: write one Terraform expression on one line, e.g. `aws_iam_role.x.arn` or `module.x.y` (no heredoc)"
                ),
            ));
        }
    }
    if let Some(identity) = &spec.identity {
        if !is_dns_label(&identity.namespace) {
            return Err(invalid(
                path,
                text,
                "namespace",
                format!(
                    "identity.namespace `{}` is not a Kubernetes namespace name (a DNS-1123 label: lowercase letters, digits, dashes, at most 63)",
                    identity.namespace.escape_debug()
                ),
            ));
        }
        if !is_dns_subdomain(&identity.service_account) {
            return Err(invalid(
                path,
                text,
                "service_account",
                format!(
                    "identity.service_account `{}` is not a Kubernetes service account name (a DNS-1123 subdomain: lowercase letters, digits, dashes and dots)",
                    identity.service_account.escape_debug()
                ),
            ));
        }
        for arn in &identity.policy_arns {
            if !is_policy_arn(arn) {
                return Err(invalid(
                    path,
                    text,
                    "policy_arns",
                    format!(
                        "identity.policy_arns has `{}`, which is not an IAM policy ARN (arn:<partition>:iam::<account-id or aws>:policy/[path/]name)",
                        arn.escape_debug()
                    ),
                ));
            }
        }
    }
    if let Some(teardown) = &spec.teardown {
        if teardown.commands.is_empty() {
            return Err(invalid(
                path,
                text,
                "teardown",
                "`teardown.commands` is empty: list the commands, or drop `teardown`".into(),
            ));
        }
        for command in teardown
            .commands
            .iter()
            .chain(std::iter::once(&teardown.description))
        {
            if command.trim().is_empty() || command.chars().any(char::is_control) {
                return Err(invalid(
                    path,
                    text,
                    "teardown",
                    format!(
                        "`teardown` has `{}`: each command (and the description) is one non-empty line, printed as it is",
                        command.escape_debug()
                    ),
                ));
            }
        }
    }
    for reference in &spec.depends_on {
        if let Err(why) = check_reference(reference) {
            return Err(invalid(
                path,
                text,
                "depends_on",
                format!("depends_on has `{}`, which {why}", reference.escape_debug()),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_arns() {
        for ok in [
            "arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess",
            "arn:aws-us-gov:iam::123456789012:policy/team/billing-read",
            "arn:aws-cn:iam::aws:policy/service-role/AmazonEKSClusterPolicy",
            "arn:aws-iso-b:iam::123456789012:policy/x",
        ] {
            assert!(is_policy_arn(ok), "{ok}");
        }
        for bad in [
            "arn:aws:iam::aws:policy/x\"",
            "arn:aws:iam::aws:policy/x\n",
            "arn:aws:iam::aws:role/x",
            "arn:aws:iam::12345:policy/x",
            "arn:aws:s3:::bucket",
            "arn:aws:iam:eu-west-1:aws:policy/x",
            "arn:aws:iam::aws:policy/",
            "arn:aws:iam::aws:policy//x",
            "arn:gcp:iam::aws:policy/x",
            "arn:aws-:iam::aws:policy/x",
            "arn:aws:iam::aws:policy/${var.x}",
            "",
        ] {
            assert!(!is_policy_arn(bad), "{bad:?}");
        }
    }

    #[test]
    fn service_account_names() {
        assert!(is_dns_subdomain("billing"));
        assert!(is_dns_subdomain("team.billing-1"));
        assert!(!is_dns_subdomain("Billing"));
        assert!(!is_dns_subdomain("a..b"));
        assert!(!is_dns_subdomain("x\" }"));
    }
}
