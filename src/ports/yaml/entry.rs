//! The one way into a YAML parser for all of cellgen: every text is bounded in size and in
//! bracket nesting ([`guard`]) before any parser sees it, and a stream of documents stops at
//! its first error. `tests/yaml_entry.rs` fails on a parser call anywhere else in `src`.
//!
//! Three parsers sit behind it: yaml_serde (libyaml, strict, typed values), yaml-edit (lossless,
//! for edits that keep the user's bytes) and this module's own libyaml port of kustomize
//! (`tree::parse_first`, which calls [`guard`] itself).

use serde::de::DeserializeOwned;

use super::depth::{self, DepthError};

/// The largest YAML text cellgen parses: 32 MiB, far above any file of a repository (the largest
/// CRD bundles are a few MiB) and small enough that parsing it cannot exhaust memory (libyaml's
/// events take several times the text).
pub const MAX_BYTES: usize = 32 * 1024 * 1024;

/// Why a YAML text was not read. Its message is whole (no `source()`): error chains print it once.
#[derive(Debug, thiserror::Error)]
pub enum YamlError {
    #[error(
        "{size} bytes, more than the {MAX_BYTES} bytes (32 MiB) cellgen reads from one YAML text: split the file, or check that it is the file you meant"
    )]
    TooLarge { size: usize },
    #[error(transparent)]
    TooDeep(DepthError),
    /// yaml_serde's message, which says where ("at line 3 column 1").
    #[error("{0}")]
    Invalid(yaml_serde::Error),
    /// yaml-edit refuses the text (it accepts one document only, for instance).
    #[error("not valid YAML: {0}")]
    Lossless(String),
}

impl From<DepthError> for YamlError {
    fn from(e: DepthError) -> Self {
        YamlError::TooDeep(e)
    }
}

impl From<yaml_serde::Error> for YamlError {
    fn from(e: yaml_serde::Error) -> Self {
        YamlError::Invalid(e)
    }
}

impl crate::error::LinedProblem for YamlError {
    fn line(&self) -> Option<usize> {
        YamlError::line(self)
    }
}

impl YamlError {
    /// 1-based line of the problem, where known.
    pub fn line(&self) -> Option<usize> {
        match self {
            YamlError::TooLarge { .. } | YamlError::Lossless(_) => None,
            YamlError::TooDeep(e) => Some(e.line),
            YamlError::Invalid(e) => e.location().map(|l| l.line()),
        }
    }
}

/// The bounds every parser relies on: size first (so the depth scan is bounded too), then
/// nesting (libyaml is quadratic in it).
pub fn guard(text: &str) -> Result<(), YamlError> {
    if text.len() > MAX_BYTES {
        return Err(YamlError::TooLarge { size: text.len() });
    }
    depth::check_yaml(text)?;
    Ok(())
}

/// One document (a stream of several is an error), as `T`.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, YamlError> {
    guard(text)?;
    Ok(yaml_serde::from_str(text)?)
}

/// Every document of a stream, in order, as `T` (empty documents included, as null where `T`
/// allows it). The first error ends the stream: yaml_serde's document iterator repeats a
/// syntax error forever, so nothing may read past one.
pub fn documents<T: DeserializeOwned>(text: &str) -> Result<Vec<T>, YamlError> {
    guard(text)?;
    let mut out = Vec::new();
    for doc in yaml_serde::Deserializer::from_str(text) {
        out.push(T::deserialize(doc)?);
    }
    Ok(out)
}

/// The text as yaml-edit's lossless tree (one document), for edits that keep every other byte.
pub fn lossless(text: &str) -> Result<yaml_edit::Document, YamlError> {
    guard(text)?;
    text.parse::<yaml_edit::Document>()
        .map_err(|e| YamlError::Lossless(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    type V = yaml_serde::Value;

    /// Texts that made readers loop forever or that every parser must refuse, as the hostile
    /// table and the fuzz corpus have them.
    const INVALID: &[&str] = &[
        "<<<<<<< ours\na: 1\n=======\na: 2\n>>>>>>> theirs\n",
        "a: 1\n---\nx: [a, b\n---\nc: 3\n",
        "\tx: 1\n",
        "a:\n  b: 1\n c: 2\n",
        "a: 1\n---\n- b\nc: d\n",
    ];

    #[test]
    fn a_stream_ends_at_its_first_error() {
        for text in INVALID {
            let err = documents::<V>(text).unwrap_err();
            assert!(err.line().is_some(), "{text:?}: {err}");
        }
        let docs = documents::<V>("a: 1\n---\nb: 2\n").unwrap();
        assert_eq!(docs.len(), 2);
    }

    #[test]
    fn every_parser_refuses_what_is_too_large_or_too_deep() {
        let big = format!("a: \"{}\"\n", "x".repeat(MAX_BYTES));
        assert!(matches!(
            from_str::<V>(&big),
            Err(YamlError::TooLarge { .. })
        ));
        assert!(matches!(
            documents::<V>(&big),
            Err(YamlError::TooLarge { .. })
        ));
        assert!(matches!(lossless(&big), Err(YamlError::TooLarge { .. })));
        let deep = format!("a: {}{}\n", "[".repeat(100), "]".repeat(100));
        let err = from_str::<V>(&format!("x: 1\n{deep}")).unwrap_err();
        assert_eq!(err.line(), Some(2), "{err}");
        assert!(matches!(lossless(&deep), Err(YamlError::TooDeep(_))));
    }
}
