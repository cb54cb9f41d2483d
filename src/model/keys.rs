//! Names of ConfigMap keys, which Flux substitutes as `${key}`.

/// Flux's rule for variable names: `^[_[:alpha:]][_[:alpha:][:digit:]]*$`.
pub fn is_valid_key_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b) if b == b'_' || b.is_ascii_alphabetic())
        && bytes.all(|b| b == b'_' || b.is_ascii_alphanumeric())
}
