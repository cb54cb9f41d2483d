//! kustomize "field specs": which fields of which kinds a transformer touches, walked the way
//! kustomize's fieldspec.Filter walks them (api/filters/fieldspec). The specs themselves are
//! kustomize's own built-in configuration (builtin_config.yaml), read once.

use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::resid::{Res, split_api_version};

/// A field of the kinds selected by group/version/kind ("" = any).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldSpec {
    pub group: String,
    pub version: String,
    pub kind: String,
    /// Path segments (kyaml's PathSplitter: `/` separates, `\/` escapes); a `[]` suffix
    /// marks a sequence.
    pub path: Vec<String>,
    /// Create the field (and missing parents) when absent.
    pub create: bool,
}

/// What a transformer creates at the end of a path it may create.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateKind {
    /// Never create (kustomize's CreateKind 0).
    Nothing,
    Map,
    Scalar,
}

/// kyaml's PathSplitter on `/`.
pub fn split_path(path: &str) -> Vec<String> {
    split_path_on(path, '/')
}

/// kyaml's PathSplitter: split at `delimiter`, where a preceding `\` escapes it.
pub fn split_path_on(path: &str, delimiter: char) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, part) in path.split(delimiter).enumerate() {
        match out.last_mut() {
            Some(last) if i > 0 && last.ends_with('\\') => {
                last.pop();
                last.push(delimiter);
                last.push_str(part);
            }
            _ => out.push(part.to_string()),
        }
    }
    out
}

impl FieldSpec {
    pub fn from_value(v: &Value) -> FieldSpec {
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        FieldSpec {
            group: s("group"),
            version: s("version"),
            kind: s("kind"),
            path: split_path(&s("path")),
            create: v.get("create").and_then(Value::as_bool).unwrap_or(false),
        }
    }

    /// kustomize's isMatchGVK on the object's current apiVersion and kind.
    pub fn applies_to(&self, r: &Res) -> bool {
        self.matches(r.api_version(), r.kind())
    }

    pub fn matches(&self, api_version: &str, kind: &str) -> bool {
        let (group, version) = split_api_version(api_version);
        (self.kind.is_empty() || self.kind == kind)
            && (self.group.is_empty() || self.group == group)
            && (self.version.is_empty() || self.version == version)
    }

    /// Applies `set` to every place the field lives in `obj` (which must match the spec's
    /// GVK), creating it as kustomize does. Errors are kustomize's, to be attributed by the
    /// caller.
    pub fn apply(
        &self,
        obj: &mut Value,
        create: CreateKind,
        set: &mut dyn FnMut(&mut Value) -> Result<(), String>,
    ) -> Result<(), String> {
        filter(self, obj, &self.path, create, set)
            .map_err(|e| format!("considering field '{}': {e}", self.path.join("/")))
    }
}

fn filter(
    fs: &FieldSpec,
    v: &mut Value,
    path: &[String],
    create: CreateKind,
    set: &mut dyn FnMut(&mut Value) -> Result<(), String>,
) -> Result<(), String> {
    let Some((first, rest)) = path.split_first() else {
        return set(v);
    };
    match v {
        Value::Null => Ok(()),
        Value::Array(items) => {
            for item in items {
                filter(fs, item, path, create, set)?;
            }
            Ok(())
        }
        Value::Object(m) => {
            let (name, is_seq) = match first.strip_suffix("[]") {
                Some(n) => (n, true),
                None => (first.as_str(), false),
            };
            if name.is_empty() {
                return Err("cannot set or create an empty field name".into());
            }
            // What kustomize would create here (and turn a null field into).
            let make: Option<Value> = if !fs.create || create == CreateKind::Nothing || is_seq {
                is_seq.then(|| Value::Array(Vec::new()))
            } else if rest.is_empty() {
                Some(match create {
                    CreateKind::Map => Value::Object(Map::new()),
                    _ => Value::Null,
                })
            } else {
                Some(Value::Object(Map::new()))
            };
            let creating = fs.create && create != CreateKind::Nothing && !is_seq;
            match m.get_mut(name) {
                None if creating => {
                    m.insert(name.to_string(), make.clone().unwrap_or(Value::Null));
                }
                None => return Ok(()),
                Some(existing) => {
                    if existing.is_null()
                        && let Some(made) = &make
                        && !made.is_null()
                    {
                        *existing = made.clone();
                    }
                }
            }
            let field = m.get_mut(name).expect("present or just inserted");
            if field.is_null() && !rest.is_empty() {
                return Ok(());
            }
            filter(fs, field, rest, create, set)
        }
        _ => Err("expected sequence or mapping node".into()),
    }
}

/// kustomize's built-in field specs, by section (namePrefix, commonLabels, ...), and its
/// built-in name references (target kind → referring fields).
pub struct Builtin {
    pub sections: std::collections::HashMap<String, Vec<FieldSpec>>,
    pub name_refs: Vec<NameBackRef>,
}

/// One `nameReference` entry: objects of this GVK are referred to by these fields.
#[derive(Debug, Clone)]
pub struct NameBackRef {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub referrers: Vec<FieldSpec>,
}

impl NameBackRef {
    pub fn from_value(v: &Value) -> NameBackRef {
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        NameBackRef {
            group: s("group"),
            version: s("version"),
            kind: s("kind"),
            referrers: v
                .get("fieldSpecs")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(FieldSpec::from_value)
                .collect(),
        }
    }
}

pub fn builtin() -> &'static Builtin {
    static B: OnceLock<Builtin> = OnceLock::new();
    B.get_or_init(|| {
        let text = include_str!("builtin_config.yaml");
        let v = crate::ports::yaml::yaml_to_json(text)
            .ok()
            .flatten()
            .unwrap_or(Value::Null);
        let raw = v.as_object().cloned().unwrap_or_default();
        let name_refs = raw
            .get("nameReference")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(NameBackRef::from_value)
            .collect();
        let sections = raw
            .iter()
            .filter(|(k, _)| *k != "nameReference")
            .map(|(k, v)| {
                let specs = v
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(FieldSpec::from_value)
                    .collect();
                (k.clone(), specs)
            })
            .collect();
        Builtin {
            sections,
            name_refs,
        }
    })
}

/// The built-in field specs of a section.
pub fn section(name: &str) -> &'static [FieldSpec] {
    builtin().sections.get(name).map_or(&[], Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builtin_config_loads() {
        assert_eq!(section("namePrefix").len(), 1);
        assert!(section("commonLabels").len() > 20);
        assert!(
            builtin()
                .name_refs
                .iter()
                .any(|r| r.kind == "ServiceAccount")
        );
    }

    #[test]
    fn escaped_slashes_stay_in_one_segment() {
        assert_eq!(
            split_path(r"metadata/annotations/nginx.ingress.kubernetes.io\/auth-secret"),
            vec![
                "metadata",
                "annotations",
                "nginx.ingress.kubernetes.io/auth-secret"
            ]
        );
    }

    #[test]
    fn walks_and_creates_like_kustomize() {
        let fs = FieldSpec {
            group: String::new(),
            version: String::new(),
            kind: String::new(),
            path: split_path("spec/template/metadata/labels"),
            create: true,
        };
        let mut obj = json!({"spec": {}});
        fs.apply(&mut obj, CreateKind::Map, &mut |v| {
            v.as_object_mut().unwrap().insert("a".into(), json!("b"));
            Ok(())
        })
        .unwrap();
        assert_eq!(
            obj,
            json!({"spec": {"template": {"metadata": {"labels": {"a": "b"}}}}})
        );
        let mut scalar = json!({"spec": "x"});
        assert!(
            fs.apply(&mut scalar, CreateKind::Map, &mut |_| Ok(()))
                .is_err()
        );
    }
}
