//! The ConfigMap carries identifiers only. A key is a `secret-value` when its value is built
//! from a secret anywhere in the cell's stack (traced by `taint`: sensitive provider
//! attributes, sensitive variables, `sensitive()`, secret-looking literals, through locals,
//! variables, arguments, templates and functions), when its name says it holds one, or when its
//! literal value looks like one.

mod decls;
pub mod sensitive;
mod stack;
mod taint;

use camino::Utf8Path;

use crate::root::filestore::FileStore;
use std::collections::BTreeMap;

pub use stack::HclCaches;
pub use taint::{Taint, Traced, Undeclared};

/// Every data key of the ConfigMap in the stack `stack` (repository-relative) whose value is
/// built from a secret, with the chain that taints it.
pub fn trace(files: &FileStore, stack: &Utf8Path) -> BTreeMap<String, Taint> {
    taint::trace(files, stack)
}

/// [`trace`], and the references of each value that the stack declares nowhere.
pub fn trace_all(files: &FileStore, stack: &Utf8Path) -> Traced {
    taint::trace_all(files, stack)
}

/// The message of a `secret-value` finding on `key`, from its traced chain or from its name or
/// literal value.
pub fn secret_message(key: &str, literal: Option<&str>, traced: Option<&Taint>) -> Option<String> {
    const ADVICE: &str = "cell-metadata holds identifiers only: deliver secrets through External Secrets or Pod Identity";
    if let Some(taint) = traced {
        return Some(format!(
            "`{key}` is built from a secret ({}): {}; {ADVICE}",
            taint.reason,
            taint.chain.join(" <- ")
        ));
    }
    secret_reason(key, literal)
        .map(|reason| format!("`{key}` looks like a secret ({reason}); {ADVICE}"))
}

/// Words that make a name a secret's, unless it ends like an identifier of one.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "token",
    "private_key",
    "privatekey",
    "api_key",
    "apikey",
    "credential",
    "access_key",
];

/// `_arn`/`_name`/`_id`/`_path` name a secret (e.g. a Secrets Manager ARN); that is an identifier.
fn names_an_identifier(lower: &str) -> bool {
    ["_arn", "_name", "_id", "_path"]
        .iter()
        .any(|s| lower.ends_with(s))
}

/// Why a key looks secret by its name or its literal value, if it does.
pub fn secret_reason(key: &str, literal: Option<&str>) -> Option<String> {
    let lower_key = key.to_ascii_lowercase();
    if let Some(word) = SECRET_WORDS.iter().find(|w| holds(&lower_key, w))
        && !names_an_identifier(&lower_key)
    {
        return Some(format!("its name contains `{word}`"));
    }
    literal.and_then(secret_literal)
}

/// `name.contains(word)` for a short name: comparing at each position, where `str::contains`
/// would first build a searcher for `word` (this runs for every key of every cell).
fn holds(name: &str, word: &str) -> bool {
    let word = word.as_bytes();
    let Some(&first) = word.first() else {
        return true;
    };
    // The first byte alone at most positions, not a slice comparison (a call) at each.
    name.as_bytes()
        .windows(word.len())
        .any(|w| w[0] == first && w == word)
}

/// Whether an attribute or output name says it holds a secret (used where no provider schema
/// cellgen knows covers the type, e.g. `aws_db_instance.x.password`, `module.db.master_password`).
/// Narrower than key names: `token_endpoint` or `credential_provider` name no secret.
fn attribute_names_secret(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if names_an_identifier(&lower) {
        return false;
    }
    [
        "password",
        "passwd",
        "private_key",
        "secret_access_key",
        "secret_string",
        "secret_binary",
    ]
    .iter()
    .any(|w| holds(&lower, w))
        || ["secret", "token", "api_key", "client_secret"].contains(&lower.as_str())
        || ["_secret", "_token", "_api_key"]
            .iter()
            .any(|s| lower.ends_with(s))
}

fn secret_literal(value: &str) -> Option<String> {
    if value.contains("-----BEGIN") {
        return Some("its value is a PEM private key or certificate".into());
    }
    const PREFIXES: &[(&str, &str)] = &[
        ("ghp_", "a GitHub token"),
        ("github_pat_", "a GitHub token"),
        ("glpat-", "a GitLab token"),
        ("xoxb-", "a Slack token"),
        ("xoxp-", "a Slack token"),
        ("sk_live_", "a Stripe key"),
        ("AKIA", "an AWS access key ID"),
        ("ASIA", "an AWS access key ID"),
    ];
    if let Some((_, what)) = PREFIXES
        .iter()
        .find(|(p, _)| value.starts_with(p) && value.len() >= 16)
    {
        return Some(format!("its value looks like {what}"));
    }
    // A 40-character base64 string is the shape of an AWS secret access key.
    if value.len() == 40
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'/' || b == b'+')
        && value.bytes().any(|b| b.is_ascii_digit())
        && value.bytes().any(|b| b.is_ascii_uppercase())
        && value.bytes().any(|b| b.is_ascii_lowercase())
    {
        return Some("its value has the shape of an AWS secret access key".into());
    }
    if value.len() >= 32 && !value.contains([':', '/', '.', ' ']) && entropy(value) > 4.0 {
        return Some("its value is a long random-looking string".into());
    }
    None
}

/// Shannon entropy in bits per character.
fn entropy(s: &str) -> f64 {
    let mut counts = [0usize; 256];
    for b in s.bytes() {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|c| **c > 0)
        .map(|c| {
            let p = *c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::{attribute_names_secret, secret_reason};

    #[test]
    fn holds_is_contains() {
        for name in [
            "",
            "a",
            "db_password",
            "passwordpassword",
            "xpasswd",
            "pass",
        ] {
            for word in super::SECRET_WORDS.iter().chain(&["", "pass", "d"]) {
                assert_eq!(
                    super::holds(name, word),
                    name.contains(word),
                    "{name} {word}"
                );
            }
        }
    }

    #[test]
    fn flags_secret_names_and_values_and_spares_identifiers() {
        assert!(secret_reason("db_password", None).is_some());
        assert!(secret_reason("key", Some("-----BEGIN RSA PRIVATE KEY-----")).is_some());
        assert!(secret_reason("key", Some("ghp_abcdefghijklmnopqrstuvwxyz0123456789")).is_some());
        assert!(secret_reason("k", Some("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")).is_some());
        assert!(secret_reason("db_secret_arn", None).is_none());
        assert!(secret_reason("cluster_name", None).is_none());
        assert!(secret_reason("app_role_arn", Some("arn:aws:iam::123456789012:role/x")).is_none());
        assert!(secret_reason("vpc_id", Some("vpc-0a1b2c3d4e5f67890")).is_none());
    }

    #[test]
    fn attribute_names_that_say_secret() {
        for name in [
            "password",
            "master_password",
            "secret",
            "client_secret",
            "token",
            "auth_token",
            "private_key_pem",
            "secret_string",
        ] {
            assert!(attribute_names_secret(name), "{name}");
        }
        for name in [
            "arn",
            "secret_arn",
            "token_endpoint",
            "password_policy_id",
            "name",
            "kms_key_id",
            "credential_provider",
        ] {
            assert!(!attribute_names_secret(name), "{name}");
        }
    }
}
