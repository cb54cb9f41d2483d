//! Reading files and parsing (multi-document) YAML into JSON values.

use std::path::{Component, Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::BuildError;

/// File names kustomize recognises, in its lookup order.
pub const KUSTOMIZATION_FILES: [&str; 3] =
    ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// Paths are resolved lexically (like kustomize) so `..` works through symlinks-free repos
/// and we never leave the repo root.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Repo-relative form of an absolute path, for messages and origins.
pub fn rel(root: &Path, abs: &Path) -> PathBuf {
    abs.strip_prefix(root)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| abs.to_path_buf())
}

pub fn read_to_string(root: &Path, abs: &Path) -> Result<String, BuildError> {
    std::fs::read_to_string(abs).map_err(|source| BuildError::Io {
        path: rel(root, abs),
        source,
    })
}

pub fn read_bytes(root: &Path, abs: &Path) -> Result<Vec<u8>, BuildError> {
    std::fs::read(abs).map_err(|source| BuildError::Io {
        path: rel(root, abs),
        source,
    })
}

/// The kustomization file in `dir`, if any.
pub fn find_kustomization(dir: &Path) -> Option<PathBuf> {
    KUSTOMIZATION_FILES
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
}

fn yaml_error(file: &Path, e: &yaml_serde::Error) -> BuildError {
    BuildError::Yaml {
        file: file.to_path_buf(),
        line: e.location().map(|l| l.line()),
        message: e.to_string(),
    }
}

/// Every non-empty document of a YAML stream.
pub fn parse_docs(file: &Path, text: &str) -> Result<Vec<Value>, BuildError> {
    // libyaml is quadratic in bracket nesting: a deep file is refused before parsing.
    if let Err(e) = crate::edit::depth::check_yaml(text) {
        return Err(BuildError::Yaml {
            file: file.to_path_buf(),
            line: Some(e.line),
            message: e.to_string(),
        });
    }
    let mut docs = Vec::new();
    for de in yaml_serde::Deserializer::from_str(text) {
        let v = Value::deserialize(de).map_err(|e| yaml_error(file, &e))?;
        if !v.is_null() {
            docs.push(v);
        }
    }
    Ok(docs)
}

/// Parses a single YAML document (kustomization files).
pub fn parse_one(file: &Path, text: &str) -> Result<Value, BuildError> {
    let mut docs = parse_docs(file, text)?;
    match docs.len() {
        0 => Ok(Value::Object(Default::default())),
        1 => Ok(docs.remove(0)),
        _ => Err(BuildError::Invalid {
            file: file.to_path_buf(),
            message: "expected a single YAML document".into(),
        }),
    }
}

/// Kubernetes objects of a resource file: `List` kinds are expanded, and every
/// object must have apiVersion, kind and metadata.name like kustomize requires.
pub fn parse_objects(file: &Path, text: &str) -> Result<Vec<Value>, BuildError> {
    let mut out = Vec::new();
    for doc in parse_docs(file, text)? {
        let is_list = doc
            .get("kind")
            .and_then(Value::as_str)
            .is_some_and(|k| k.ends_with("List"))
            && doc.get("items").is_some_and(Value::is_array);
        if is_list {
            if let Some(Value::Array(items)) = doc.get("items") {
                for item in items {
                    out.push(check_object(file, item.clone())?);
                }
            }
        } else {
            out.push(check_object(file, doc)?);
        }
    }
    Ok(out)
}

fn check_object(file: &Path, v: Value) -> Result<Value, BuildError> {
    let bad = |message: String| BuildError::NotKubernetes {
        file: file.to_path_buf(),
        message,
    };
    let Some(map) = v.as_object() else {
        return Err(bad("document is not a mapping".into()));
    };
    for key in ["apiVersion", "kind"] {
        if map
            .get(key)
            .and_then(Value::as_str)
            .is_none_or(|s| s.is_empty())
        {
            return Err(bad(format!("missing Resource metadata (`{key}`)")));
        }
    }
    let name = map
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str);
    if name.is_none_or(str::is_empty) {
        return Err(bad("missing metadata.name".into()));
    }
    Ok(v)
}
