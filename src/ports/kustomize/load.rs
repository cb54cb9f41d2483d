//! Reading files and turning them into JSON values the way kustomize does (see `yaml`).

use camino::{Utf8Path, Utf8PathBuf};

use serde_json::Value;

use super::BuildError;
use super::Caches;
use crate::ports::yaml::{self, JsonPath, LoadError, Seg};

pub(super) mod memo;

/// Parsed resource files by absolute path: each object with where it holds nulls written
/// without text (see yaml::KDoc::to_json_marked).
pub type Parsed = std::collections::HashMap<Utf8PathBuf, MarkedObjects>;

/// A file's objects, each with where it holds nulls written without text.
pub type MarkedObjects = Vec<(Value, Vec<JsonPath>)>;

/// File names kustomize recognises, in its lookup order.
pub const KUSTOMIZATION_FILES: [&str; 3] =
    ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// A loading error, attributed to `file`.
pub fn load_error(file: &Utf8Path, e: LoadError) -> BuildError {
    match e {
        LoadError::Yaml { line, message } => BuildError::Yaml {
            file: file.to_path_buf(),
            line: Some(line),
            message,
        },
        LoadError::Fails(message) => BuildError::Invalid {
            file: file.to_path_buf(),
            message,
        },
        LoadError::Unsupported(field) => BuildError::Unsupported {
            file: file.to_path_buf(),
            field,
        },
        LoadError::Refused { line, message } => BuildError::Refused {
            file: file.to_path_buf(),
            line,
            message,
        },
    }
}

/// A kustomization (or configuration) file, as sigs.k8s.io/yaml reads it: the first
/// document, go-yaml v2 rules. An empty file is an empty mapping.
pub fn parse_kustomization(
    caches: &Caches,
    file: &Utf8Path,
    text: &str,
) -> Result<Value, BuildError> {
    Ok(Value::clone(&*parse_kustomization_shared(
        caches, file, text,
    )?))
}

/// [`parse_kustomization`], shared with the command's memo: texts of one content give one
/// `Arc` while the memo keeps it (see `native::plain`).
pub fn parse_kustomization_shared(
    caches: &Caches,
    file: &Utf8Path,
    text: &str,
) -> Result<std::sync::Arc<Value>, BuildError> {
    caches
        .kustomizations
        .get(text, |text| parse_kustomization_text(file, text))
}

fn parse_kustomization_text(file: &Utf8Path, text: &str) -> Result<Value, BuildError> {
    Ok(yaml::yaml_to_json(text)
        .map_err(|e| load_error(file, e))?
        .unwrap_or_else(|| Value::Object(Default::default())))
}

fn not_k8s(file: &Utf8Path, message: String) -> BuildError {
    BuildError::NotKubernetes {
        file: file.to_path_buf(),
        message,
    }
}

fn str_field<'a>(file: &Utf8Path, obj: &'a Value, path: &[&str]) -> Result<&'a str, BuildError> {
    let mut cur = obj;
    for seg in path {
        match cur.get(seg) {
            Some(next) => cur = next,
            None => return Ok(""),
        }
    }
    match cur {
        Value::Null => Ok(""),
        Value::String(s) => Ok(s),
        other => Err(BuildError::Unsupported {
            file: file.to_path_buf(),
            field: format!("{} `{other}` that is not a string", path.join(".")),
        }),
    }
}

/// kyaml's GetValidatedMetadata: a kind, and a name unless the kind is a list.
fn validate(file: &Utf8Path, obj: &Value) -> Result<(), BuildError> {
    if !obj.is_object() {
        return Err(not_k8s(
            file,
            "missing Resource metadata (not a mapping)".into(),
        ));
    }
    str_field(file, obj, &["apiVersion"])?;
    str_field(file, obj, &["metadata", "namespace"])?;
    let kind = str_field(file, obj, &["kind"])?;
    let name = str_field(file, obj, &["metadata", "name"])?;
    if kind.is_empty() {
        return Err(not_k8s(file, "missing kind in object".into()));
    }
    if name.is_empty() && !kind.ends_with("List") {
        return Err(not_k8s(
            file,
            format!("missing metadata.name in {kind} object"),
        ));
    }
    Ok(())
}

/// Kubernetes objects of a resource or strategic-merge patch file, as kustomize's resource
/// factory reads them (`RNodesFromBytes`): kio unwraps a lone `List`/`ResourceList`; any
/// other kind ending in `List` with `items` is replaced by its items (decoded without
/// re-emission, appended after the file's other objects), and every object needs a kind
/// and a name.
pub fn parse_objects(
    caches: &Caches,
    file: &Utf8Path,
    text: &str,
) -> Result<Vec<Value>, BuildError> {
    Ok(parse_objects_marked(caches, file, text)?
        .into_iter()
        .map(|(v, _)| v)
        .collect())
}

/// `parse_objects`, with where each object holds nulls written without text (see
/// yaml::KDoc::to_json_marked).
pub fn parse_objects_marked(
    caches: &Caches,
    file: &Utf8Path,
    text: &str,
) -> Result<Vec<(Value, Vec<JsonPath>)>, BuildError> {
    Ok(Vec::clone(&*parse_objects_marked_shared(
        caches, file, text,
    )?))
}

/// [`parse_objects_marked`], shared with its memo (see [`parse_kustomization_shared`]).
pub fn parse_objects_marked_shared(
    caches: &Caches,
    file: &Utf8Path,
    text: &str,
) -> Result<std::sync::Arc<MarkedObjects>, BuildError> {
    caches
        .objects
        .get(text, |text| parse_objects_text(file, text))
}

fn parse_objects_text(
    file: &Utf8Path,
    text: &str,
) -> Result<Vec<(Value, Vec<JsonPath>)>, BuildError> {
    let err = |e| load_error(file, e);
    let docs = yaml::kio_documents(text).map_err(err)?;
    let mut queue: std::collections::VecDeque<(Value, Vec<JsonPath>)> = Default::default();
    for doc in &docs {
        let (v, marks) = doc.to_json_marked(true).map_err(err)?;
        let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
        let unwrap = doc.only_document
            && matches!(kind, "List" | "ResourceList")
            && (v.get("items").is_some() || v.get("functionConfig").is_some());
        if unwrap {
            match v.get("items") {
                Some(Value::Array(items)) => {
                    for (n, item) in items.iter().enumerate() {
                        let prefix = [Seg::Key("items".into()), Seg::Index(n)];
                        let own = marks
                            .iter()
                            .filter(|m| m.starts_with(&prefix))
                            .map(|m| m[2..].to_vec())
                            .collect();
                        queue.push_back((item.clone(), own));
                    }
                }
                None | Some(Value::Null) => {}
                Some(_) => {
                    return Err(BuildError::Unsupported {
                        file: file.to_path_buf(),
                        field: format!("{kind} whose items are not a list"),
                    });
                }
            }
            continue;
        }
        if kind.ends_with("List") && v.get("items").is_some() {
            // kustomize decodes list items from the nodes, without go-yaml's re-emission.
            queue.push_back((doc.to_json(false).map_err(err)?, Vec::new()));
        } else {
            queue.push_back((v, marks));
        }
    }
    let mut out = Vec::new();
    while let Some((v, marks)) = queue.pop_front() {
        if v.is_null() {
            continue;
        }
        let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
        if kind.ends_with("List") && v.get("items").is_some() {
            match &v["items"] {
                Value::Null => {}
                Value::Array(items) => queue.extend(items.iter().map(|i| (i.clone(), Vec::new()))),
                _ => {
                    return Err(not_k8s(file, format!("expected array in {kind}/items")));
                }
            }
            continue;
        }
        validate(file, &v)?;
        out.push((v, marks));
    }
    Ok(out)
}

/// JSON 6902 operations as kustomize decodes them: JSON when the text starts with `[`,
/// else YAML read by sigs.k8s.io/yaml.
pub fn parse_json_patch(file: &Utf8Path, text: &str) -> Result<Value, BuildError> {
    if text.starts_with('[') {
        return serde_json::from_str(text).map_err(|e| BuildError::Patch {
            file: file.to_path_buf(),
            message: format!("invalid JSON patch: {e}"),
        });
    }
    Ok(yaml::yaml_to_json(text)
        .map_err(|e| load_error(file, e))?
        .unwrap_or(Value::Null))
}

/// Every document of the YAML stream `kubectl kustomize` printed.
pub fn parse_output(source: &Utf8Path, text: &str) -> Result<Vec<Value>, BuildError> {
    let err = |e| load_error(source, e);
    yaml::kio_documents(text)
        .map_err(err)?
        .iter()
        .map(|d| d.to_json(false).map_err(err))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Header lines: harmless comments, and lines that must not be dropped.
    const HEADERS: &[&str] = &[
        "# cell a",
        "",
        "   # b",
        "\t# tab",
        "# [",
        "# {{",
        "# ]",
        "# a\rkind: X",
        "---",
        "--- # c",
        "...",
        "%YAML 1.1",
        "# \u{85}",
        "# \u{1}",
        "\u{feff}# bom",
        "# é ✓",
        "a: 1",
        "   ",
    ];
    /// Bodies: valid streams, lists kio unwraps, and broken ones.
    const BODIES: &[&str] = &[
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n",
        "kind: List\nitems:\n- kind: A\n  metadata: {name: b}\n",
        "---\nkind: B\nmetadata:\n  name: c\n---\nkind: D\nmetadata:\n  name: d\n",
        "kind: E\nmetadata:\n  name: e\n  labels:\n    x:\n",
        "kind: F\nmetadata:\n  name: [\n",
        "kind: G\nmetadata: *nope\n",
        "kind: H\n",
        "resources:\n  - a.yaml\nnamespace: x\n",
        "",
    ];

    fn same<T: PartialEq + std::fmt::Debug>(
        a: Result<T, BuildError>,
        b: Result<T, BuildError>,
    ) -> Result<(), TestCaseError> {
        match (a, b) {
            (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
            (Err(a), Err(b)) => prop_assert_eq!(format!("{a:?}"), format!("{b:?}")),
            (a, b) => prop_assert!(false, "{:?} / {:?}", a.is_ok(), b.is_ok()),
        }
        Ok(())
    }

    /// One command's caches for every case, so a case meets what earlier ones remembered.
    static CASES_CACHES: std::sync::LazyLock<Caches> = std::sync::LazyLock::new(Caches::default);

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        /// The memoised parses give what parsing the whole text gives, errors included, on
        /// first and later calls (a later call may be answered by another header's text).
        #[test]
        fn memoised_parses_are_the_parses(
            header in proptest::collection::vec(proptest::sample::select(HEADERS), 0..4),
            body in proptest::sample::select(BODIES),
            crlf in any::<bool>(),
        ) {
            let mut text: String = header.iter().map(|l| format!("{l}\n")).collect();
            text.push_str(body);
            if crlf {
                text = text.replace('\n', "\r\n");
            }
            let file = Utf8Path::new("cells/a/x.yaml");
            let caches = &*CASES_CACHES;
            for _ in 0..2 {
                same(parse_objects_marked(caches, file, &text), parse_objects_text(file, &text))?;
                same(parse_kustomization(caches, file, &text), parse_kustomization_text(file, &text))?;
            }
        }
    }
}
