//! The ConfigMap carries identifiers only. These rules flag what looks like a secret: by key
//! name, by the Terraform expression that produces the value, or by the literal value itself.

/// Why a key or value looks secret, if it does.
pub fn secret_reason(key: &str, expression: &str, literal: Option<&str>) -> Option<String> {
    let lower_key = key.to_ascii_lowercase();
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
    if let Some(word) = SECRET_WORDS.iter().find(|w| lower_key.contains(*w))
        // `_arn`/`_name`/`_id` keys name a secret (e.g. a Secrets Manager ARN); that is an identifier.
        && !["_arn", "_name", "_id", "_path"].iter().any(|s| lower_key.ends_with(s))
    {
        return Some(format!("its name contains `{word}`"));
    }
    let expr = expression.to_ascii_lowercase();
    const SECRET_SOURCES: &[(&str, &str)] = &[
        ("random_password.", "it comes from a random_password"),
        (
            "aws_secretsmanager_secret_version.",
            "it reads a Secrets Manager secret version",
        ),
        (".secret_string", "it reads a secret_string"),
        ("sensitive(", "it is marked sensitive()"),
        ("nonsensitive(", "it strips sensitivity with nonsensitive()"),
        ("tls_private_key.", "it comes from a tls_private_key"),
        (".private_key", "it reads a private key"),
        (".secret_access_key", "it reads an access key secret"),
        (".password", "it reads a password attribute"),
        (
            "aws_ssm_parameter.",
            "it reads an SSM parameter value, which may be a SecureString",
        ),
    ];
    if let Some((_, reason)) = SECRET_SOURCES
        .iter()
        .find(|(needle, _)| expr.contains(needle))
    {
        return Some(reason.to_string());
    }
    literal.and_then(secret_literal)
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
    use super::secret_reason;

    #[test]
    fn flags_secrets_and_spares_identifiers() {
        assert!(secret_reason("db_password", "var.x", None).is_some());
        assert!(secret_reason("db", "random_password.db.result", None).is_some());
        assert!(
            secret_reason(
                "db",
                "aws_secretsmanager_secret_version.db.secret_string",
                None
            )
            .is_some()
        );
        assert!(secret_reason("db", "sensitive(var.x)", None).is_some());
        assert!(secret_reason("key", "\"x\"", Some("-----BEGIN RSA PRIVATE KEY-----")).is_some());
        assert!(
            secret_reason(
                "key",
                "\"x\"",
                Some("ghp_abcdefghijklmnopqrstuvwxyz0123456789")
            )
            .is_some()
        );
        assert!(
            secret_reason(
                "k",
                "\"x\"",
                Some("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
            )
            .is_some()
        );
        assert!(secret_reason("db_secret_arn", "aws_secretsmanager_secret.db.arn", None).is_none());
        assert!(secret_reason("cluster_name", "module.eks.cluster_name", None).is_none());
        assert!(
            secret_reason(
                "app_role_arn",
                "aws_iam_role.app_abac.arn",
                Some("arn:aws:iam::123456789012:role/x")
            )
            .is_none()
        );
        assert!(
            secret_reason("vpc_id", "module.vpc.vpc_id", Some("vpc-0a1b2c3d4e5f67890")).is_none()
        );
    }
}
