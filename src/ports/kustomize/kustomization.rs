//! Typed model of kustomization.yaml / Component files. Unknown fields are
//! rejected up front as `Unsupported` so nothing is silently ignored.

use camino::Utf8Path;
use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::BuildError;

const TOP_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "resources",
    "bases",
    "components",
    "namespace",
    "namePrefix",
    "nameSuffix",
    "commonLabels",
    "labels",
    "commonAnnotations",
    "patches",
    "patchesStrategicMerge",
    "patchesJson6902",
    "images",
    "configMapGenerator",
    "secretGenerator",
    "generatorOptions",
    "replicas",
    "configurations",
    "replacements",
];

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Kustomization {
    pub api_version: Option<String>,
    pub kind: Option<String>,
    pub resources: Vec<String>,
    pub bases: Vec<String>,
    pub components: Vec<String>,
    pub namespace: Option<String>,
    pub name_prefix: Option<String>,
    pub name_suffix: Option<String>,
    pub common_labels: BTreeMap<String, String>,
    pub labels: Vec<Label>,
    pub common_annotations: BTreeMap<String, String>,
    pub patches: Vec<Patch>,
    pub patches_strategic_merge: Vec<String>,
    pub patches_json6902: Vec<Patch>,
    pub images: Vec<Image>,
    pub config_map_generator: Vec<Generator>,
    pub secret_generator: Vec<Generator>,
    pub generator_options: Option<GeneratorOptions>,
    pub replicas: Vec<Replica>,
    pub configurations: Vec<String>,
    pub replacements: Vec<ReplacementField>,
    /// Whether the file is empty as Go's reflect.DeepEqual sees it (kustomize's CheckEmpty).
    #[serde(skip)]
    pub raw_empty: bool,
}

/// Go's zero value, as the decoded field would hold it: absent/null, "", false, 0; a
/// `[]` or `{}` is a non-nil slice or map, so not zero (except `bases`, which kustomize
/// folds into `resources`).
fn is_zero(key: &str, v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Array(a) => a.is_empty() && key == "bases",
        Value::Object(m) => {
            key == "metadata"
                && m.iter()
                    .all(|(k, v)| !v.is_array() && !v.is_object() && is_zero(k, v))
        }
    }
}

fn strip_nulls(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, x| !x.is_null());
            m.values_mut().for_each(strip_nulls);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}

/// A `replacements` entry: inline, or a file of replacements (`path`).
#[derive(Debug, Default, Clone)]
pub struct ReplacementField {
    pub path: Option<String>,
    pub inline: Replacement,
}

impl<'de> Deserialize<'de> for ReplacementField {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Raw {
            #[serde(default)]
            path: Option<String>,
            #[serde(default)]
            source: Option<Source>,
            #[serde(default)]
            targets: Option<Vec<Target>>,
        }
        let raw = Raw::deserialize(d)?;
        Ok(ReplacementField {
            path: raw.path,
            inline: Replacement {
                source: raw.source,
                targets: raw.targets,
            },
        })
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Label {
    pub pairs: BTreeMap<String, String>,
    pub include_selectors: bool,
    pub include_templates: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Patch {
    pub path: Option<String>,
    pub patch: Option<String>,
    pub target: Option<Selector>,
    /// `allowNameChange` / `allowKindChange` (patches only).
    pub options: BTreeMap<String, bool>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Selector {
    pub group: Option<String>,
    pub version: Option<String>,
    pub kind: Option<String>,
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub label_selector: Option<String>,
    pub annotation_selector: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Image {
    pub name: String,
    pub new_name: Option<String>,
    pub new_tag: Option<String>,
    pub digest: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Generator {
    pub name: String,
    pub namespace: Option<String>,
    pub behavior: Option<String>,
    pub literals: Vec<String>,
    pub files: Vec<String>,
    pub envs: Vec<String>,
    pub env: Option<String>,
    #[serde(rename = "type")]
    pub type_: Option<String>,
    pub options: Option<GeneratorOptions>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GeneratorOptions {
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub disable_name_suffix_hash: Option<bool>,
    pub immutable: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Replica {
    pub name: String,
    pub count: i64,
}

/// Fails with `Unsupported` naming the first key of `v` not in `allowed`.
fn check_keys(
    file: &Utf8Path,
    prefix: &str,
    v: &Value,
    allowed: &[&str],
) -> Result<(), BuildError> {
    if let Some(map) = v.as_object()
        && let Some(k) = map.keys().find(|k| !allowed.contains(&k.as_str()))
    {
        return Err(BuildError::Unsupported {
            file: file.to_path_buf(),
            field: format!("{prefix}{k}"),
        });
    }
    Ok(())
}

fn check_each(file: &Utf8Path, v: &Value, field: &str, allowed: &[&str]) -> Result<(), BuildError> {
    if let Some(Value::Array(items)) = v.get(field) {
        for item in items {
            check_keys(file, &format!("{field}[]."), item, allowed)?;
        }
    }
    Ok(())
}

const SELECTOR: &[&str] = &[
    "group",
    "version",
    "kind",
    "name",
    "namespace",
    "labelSelector",
    "annotationSelector",
];
const GEN_OPTIONS: &[&str] = &[
    "labels",
    "annotations",
    "disableNameSuffixHash",
    "immutable",
];

fn typed<T: DeserializeOwned>(file: &Utf8Path, v: Value) -> Result<T, BuildError> {
    serde_json::from_value(v).map_err(|e| BuildError::Invalid {
        file: file.to_path_buf(),
        message: format!("invalid kustomization: {e}"),
    })
}

impl Kustomization {
    /// Validates field names and decodes `v`, the parsed kustomization file.
    pub fn from_value(file: &Utf8Path, v: Value) -> Result<Self, BuildError> {
        if !v.is_object() {
            return Err(BuildError::Invalid {
                file: file.to_path_buf(),
                message: "kustomization is not a mapping".into(),
            });
        }
        let api_version = v.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        if api_version.starts_with("kustomize.toolkit.fluxcd.io/") {
            return Err(BuildError::Invalid {
                file: file.to_path_buf(),
                message: "this is a Flux Kustomization object, not a kustomize kustomization file"
                    .into(),
            });
        }
        check_keys(file, "", &v, TOP_FIELDS)?;
        for field in ["patches", "patchesJson6902"] {
            let allowed: &[&str] = if field == "patches" {
                &["path", "patch", "target", "options"]
            } else {
                &["path", "patch", "target"]
            };
            check_each(file, &v, field, allowed)?;
            if let Some(Value::Array(items)) = v.get(field) {
                for item in items {
                    if let Some(o) = item.get("options") {
                        check_keys(
                            file,
                            "patches[].options.",
                            o,
                            &["allowNameChange", "allowKindChange"],
                        )?;
                    }
                }
            }
            if let Some(Value::Array(items)) = v.get(field) {
                for item in items {
                    if let Some(t) = item.get("target") {
                        check_keys(file, &format!("{field}[].target."), t, SELECTOR)?;
                    }
                }
            }
        }
        check_each(file, &v, "images", &["name", "newName", "newTag", "digest"])?;
        check_each(
            file,
            &v,
            "labels",
            &["pairs", "includeSelectors", "includeTemplates"],
        )?;
        check_each(file, &v, "replicas", &["name", "count"])?;
        for field in ["configMapGenerator", "secretGenerator"] {
            let mut allowed = vec![
                "name",
                "namespace",
                "behavior",
                "literals",
                "files",
                "envs",
                "env",
                "options",
            ];
            if field == "secretGenerator" {
                allowed.push("type");
            }
            check_each(file, &v, field, &allowed)?;
            if let Some(Value::Array(items)) = v.get(field) {
                for item in items {
                    if let Some(o) = item.get("options") {
                        check_keys(file, &format!("{field}[].options."), o, GEN_OPTIONS)?;
                    }
                }
            }
        }
        if let Some(o) = v.get("generatorOptions") {
            check_keys(file, "generatorOptions.", o, GEN_OPTIONS)?;
        }
        // Non-string label/annotation values would be stringified differently by
        // kustomize; reject them instead of guessing.
        for field in ["commonLabels", "commonAnnotations"] {
            if let Some(Value::Object(m)) = v.get(field)
                && let Some((k, _)) = m.iter().find(|(_, val)| !val.is_string())
            {
                return Err(BuildError::Invalid {
                    file: file.to_path_buf(),
                    message: format!("{field}.{k} must be a string"),
                });
            }
        }
        // encoding/json leaves a field at its zero value for a null.
        let mut v = v;
        strip_nulls(&mut v);
        let raw_empty = v.as_object().is_some_and(|m| {
            m.iter()
                .all(|(k, val)| k == "apiVersion" || k == "kind" || is_zero(k, val))
        });
        let mut k: Kustomization = typed(file, v)?;
        k.raw_empty = raw_empty;
        Ok(k)
    }

    pub fn is_component(&self) -> bool {
        self.kind.as_deref() == Some("Component")
    }

    /// kustomize's EnforceFields (after FixKustomization's defaults) and CheckEmpty.
    pub fn enforce_fields(&self, file: &Utf8Path) -> Result<(), BuildError> {
        let invalid = |message: String| BuildError::Invalid {
            file: file.to_path_buf(),
            message,
        };
        let kind = self.kind.as_deref().unwrap_or("");
        if !kind.is_empty() && kind != "Kustomization" && kind != "Component" {
            return Err(invalid("kind should be Kustomization or Component".into()));
        }
        let required = if kind == "Component" {
            "kustomize.config.k8s.io/v1alpha1"
        } else {
            "kustomize.config.k8s.io/v1beta1"
        };
        let av = self.api_version.as_deref().unwrap_or("");
        if !av.is_empty() && av != required {
            let kind = if kind.is_empty() {
                "Kustomization"
            } else {
                kind
            };
            return Err(invalid(format!(
                "apiVersion for {kind} should be {required}"
            )));
        }
        let empty = self.raw_empty;
        if empty {
            return Err(invalid("kustomization.yaml is empty".into()));
        }
        Ok(())
    }
}

/// A `replacements` entry (kustomize's types.Replacement): the value of `source` copied into
/// the fields of `targets`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Replacement {
    pub source: Option<Source>,
    pub targets: Option<Vec<Target>>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Source {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub name: String,
    pub namespace: String,
    pub field_path: String,
    pub options: Option<Options>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Options {
    pub delimiter: String,
    pub index: i64,
    pub encoding: String,
    pub create: bool,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Target {
    pub select: Option<Selector>,
    pub reject: Vec<Selector>,
    pub field_paths: Vec<String>,
    pub options: Option<Options>,
}
