//! The kustomization kustomize-controller builds for a Flux Kustomization (fluxcd/pkg
//! `kustomize/kustomize_generator.go`, `Generator.GenerateManifest`, v1.35.x as vendored by
//! kustomize-controller v1.9.x):
//!
//! 1. the kustomization file at `spec.path`, or, when there is none, one listing every .yaml/.yml
//!    file below the directory, in walk order, each of which must decode as Kubernetes objects; a
//!    sub-directory with its own kustomization file becomes one resource and is not descended into;
//! 2. read into kustomize's `types.Kustomization` and written back, so top-level fields that type
//!    does not have are dropped (and one that lists no resources asks for origin annotations);
//! 3. the Flux Kustomization's fields written into it: `targetNamespace` replaces `namespace`,
//!    `namePrefix`/`nameSuffix` replace theirs, `patches` and `components` are appended
//!    (`ignoreMissingComponents` drops the components that do not exist), `images` are merged by
//!    name, `buildMetadata` is set.
//!
//! kustomize then builds that kustomization, so these fields take effect in kustomize's own order.

use camino::{Utf8Path, Utf8PathBuf};
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::BuildError;
use super::fsroot::{Entry, Fs, Listed};
use super::load::{self, Parsed};

/// The fields of a `kustomize.toolkit.fluxcd.io/v1` Kustomization that kustomize-controller
/// writes into the kustomization it builds. `None` is a field the object does not set: Flux
/// only overrides what is there (an explicit empty `namePrefix` clears the file's).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FluxFields {
    pub target_namespace: Option<String>,
    pub name_prefix: Option<String>,
    pub name_suffix: Option<String>,
    pub patches: Vec<FluxPatch>,
    pub components: Vec<String>,
    pub ignore_missing_components: bool,
    pub images: Vec<FluxImage>,
    pub build_metadata: Vec<String>,
    /// Flux's read-and-write-back of the kustomization through kustomize's types: unknown
    /// top-level fields dropped, origin annotations asked for when it lists no resources. On
    /// for every Flux Kustomization; `kustomize::build` leaves it off, so the builder can be
    /// compared with `kubectl kustomize` on a kustomization as written.
    #[serde(skip)]
    pub round_trip: bool,
}

/// `spec.patches[]`: an inline strategic-merge or JSON 6902 patch and its target selector.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct FluxPatch {
    pub patch: String,
    pub target: Option<BTreeMap<String, String>>,
}

/// `spec.images[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FluxImage {
    pub name: String,
    pub new_name: String,
    pub new_tag: String,
    pub digest: String,
}

impl FluxFields {
    /// The fields of a Flux Kustomization that sets none of them.
    pub fn flux() -> FluxFields {
        FluxFields {
            round_trip: true,
            ..FluxFields::default()
        }
    }
}

/// Top-level fields of kustomize's `types.Kustomization` (sigs.k8s.io/kustomize/api v0.21.1,
/// the version fluxcd/pkg kustomize v1.35 builds with). Flux reads the file into that type and
/// writes it back, so any other top-level field is dropped before kustomize sees it.
pub const KUSTOMIZATION_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "openapi",
    "namePrefix",
    "nameSuffix",
    "namespace",
    "commonLabels",
    "labels",
    "commonAnnotations",
    "patchesStrategicMerge",
    "patchesJson6902",
    "patches",
    "images",
    "imageTags",
    "replacements",
    "replicas",
    "vars",
    "sortOptions",
    "resources",
    "components",
    "crds",
    "bases",
    "configMapGenerator",
    "secretGenerator",
    "helmGlobals",
    "helmCharts",
    "helmChartInflationGenerator",
    "generatorOptions",
    "configurations",
    "generators",
    "transformers",
    "validators",
    "buildMetadata",
];

/// The kustomization kustomize-controller writes at `dir` before building it.
pub struct Generated {
    /// Absolute path of the kustomization file (the one there, or `kustomization.yaml`).
    pub file: Utf8PathBuf,
    pub value: Value,
    /// Whether it differs from the file on disk (always, when there was none).
    pub changed: bool,
}

/// What kustomize-controller writes into `dir` for a Flux Kustomization with `fields`.
/// Files parsed while generating are stored in `parsed` so the build reads them once.
pub fn kustomization(
    fs: &Fs,
    dir: &Utf8Path,
    fields: &FluxFields,
    parsed: &mut Parsed,
) -> Result<Generated, BuildError> {
    let (file, original, existed) = match fs.kustomization_file(dir)? {
        Some(f) => {
            let v = load::parse_kustomization(fs.caches(), &fs.rel(&f), &fs.read_text(&f)?)?;
            (f, v, true)
        }
        None => {
            let resources = resources(fs, dir, parsed)?;
            let mut v = json!({
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
            });
            // Flux's placeholder, so kustomize does not refuse an empty kustomization.
            if resources.is_empty() {
                v["namespace"] = json!("_placeholder");
            } else {
                v["resources"] = json!(resources);
            }
            (dir.join("kustomization.yaml"), v, false)
        }
    };
    let rel = fs.rel(&file);
    let Value::Object(mut k) = original.clone() else {
        return Err(BuildError::Invalid {
            file: rel,
            message: "kustomization is not a mapping".into(),
        });
    };
    if fields.round_trip {
        // encoding/json matches field names whatever their case; rather than guess which of
        // two spellings wins, such a key is not built natively.
        if let Some(key) = k.keys().find(|key| {
            !KUSTOMIZATION_FIELDS.contains(&key.as_str())
                && KUSTOMIZATION_FIELDS
                    .iter()
                    .any(|f| f.eq_ignore_ascii_case(key))
        }) {
            return Err(BuildError::Unsupported {
                file: rel,
                field: format!("{key} (Flux reads it as a field of another case)"),
            });
        }
        k.retain(|key, _| KUSTOMIZATION_FIELDS.contains(&key.as_str()));
        let no_resources = k
            .get("resources")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty);
        if existed && no_resources {
            // Flux's guard against "kustomization.yaml is empty": it asks for origin annotations.
            k.insert("buildMetadata".into(), json!(["originAnnotations"]));
        }
    }
    apply(fs, &mut k, dir, fields, &rel)?;
    let value = Value::Object(k);
    let changed = !existed || value != original;
    Ok(Generated {
        file,
        value,
        changed,
    })
}

/// Writes `fields` into the kustomization `k` (at `dir`, shown as `file`) as the generator does.
fn apply(
    fs: &Fs,
    k: &mut Map<String, Value>,
    dir: &Utf8Path,
    fields: &FluxFields,
    file: &Utf8Path,
) -> Result<(), BuildError> {
    for (key, value) in [
        ("namespace", &fields.target_namespace),
        ("namePrefix", &fields.name_prefix),
        ("nameSuffix", &fields.name_suffix),
    ] {
        match value.as_deref() {
            // Go's omitempty: an empty string is no field at all.
            Some("") => {
                k.remove(key);
            }
            Some(v) => {
                k.insert(key.into(), json!(v));
            }
            None => {}
        }
    }
    for p in &fields.patches {
        let mut entry = Map::new();
        entry.insert("patch".into(), json!(p.patch));
        if let Some(target) = &p.target {
            let selector: Map<String, Value> = target
                .iter()
                .filter(|(_, v)| !v.is_empty())
                .map(|(k, v)| (k.clone(), json!(v)))
                .collect();
            entry.insert("target".into(), Value::Object(selector));
        }
        push(k, "patches", Value::Object(entry), file)?;
    }
    for component in &fields.components {
        if !is_local_relative_path(component) {
            return Err(BuildError::Invalid {
                file: file.to_path_buf(),
                message: format!("component path '{component}' must be local and relative"),
            });
        }
        if fields.ignore_missing_components && !exists(fs, dir, component, file)? {
            continue;
        }
        push(k, "components", json!(component), file)?;
    }
    for image in &fields.images {
        merge_image(k, image, file)?;
    }
    if !fields.build_metadata.is_empty() {
        k.insert("buildMetadata".into(), json!(fields.build_metadata));
    }
    Ok(())
}

fn list<'a>(
    k: &'a mut Map<String, Value>,
    key: &str,
    file: &Utf8Path,
) -> Result<&'a mut Vec<Value>, BuildError> {
    let entry = k.entry(key).or_insert_with(|| Value::Array(Vec::new()));
    if entry.is_null() {
        *entry = Value::Array(Vec::new());
    }
    entry.as_array_mut().ok_or_else(|| BuildError::Invalid {
        file: file.to_path_buf(),
        message: format!("invalid kustomization: `{key}` is not a list"),
    })
}

fn push(
    k: &mut Map<String, Value>,
    key: &str,
    v: Value,
    file: &Utf8Path,
) -> Result<(), BuildError> {
    list(k, key, file)?.push(v);
    Ok(())
}

/// `spec.images` merge by name: a new entry, or the set fields of an existing one (a new tag
/// or digest replaces both, as kustomize's image transformer would).
fn merge_image(
    k: &mut Map<String, Value>,
    image: &FluxImage,
    file: &Utf8Path,
) -> Result<(), BuildError> {
    let images = list(k, "images", file)?;
    let existing = images
        .iter_mut()
        .find(|i| i.get("name").and_then(Value::as_str) == Some(image.name.as_str()));
    let set = |m: &mut Map<String, Value>, key: &str, v: &str| {
        if v.is_empty() {
            m.remove(key);
        } else {
            m.insert(key.into(), json!(v));
        }
    };
    match existing.and_then(Value::as_object_mut) {
        Some(m) => {
            if !image.new_name.is_empty() {
                m.insert("newName".into(), json!(image.new_name));
            }
            if !image.new_tag.is_empty() || !image.digest.is_empty() {
                set(m, "newTag", &image.new_tag);
                set(m, "digest", &image.digest);
            }
        }
        None => {
            let mut m = Map::new();
            m.insert("name".into(), json!(image.name));
            set(&mut m, "newName", &image.new_name);
            set(&mut m, "newTag", &image.new_tag);
            set(&mut m, "digest", &image.digest);
            images.push(Value::Object(m));
        }
    }
    Ok(())
}

/// fluxcd/pkg `IsLocalRelativePath`: no remote prefix, not absolute.
pub fn is_local_relative_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let remote = [
        "git::",
        "gh:",
        "ssh://",
        "https://",
        "http://",
        "git@",
        "github.com:",
        "github.com/",
    ]
    .iter()
    .any(|p| p.len() < path.len() && lower.starts_with(p));
    let absolute = Utf8Path::new(path).is_absolute()
        || Utf8Path::new(lower.strip_prefix("file://").unwrap_or(&lower)).is_absolute();
    !remote && !absolute
}

/// Whether Flux's artifact has `component` (relative to `dir`): outside the root or through
/// a link, cellgen refuses rather than let Flux skip it.
pub fn exists(
    fs: &Fs,
    dir: &Utf8Path,
    component: &str,
    file: &Utf8Path,
) -> Result<bool, BuildError> {
    let abs = fs.resolve(dir, component, file)?;
    Ok(match fs.entry(&abs, file, component) {
        Ok(Entry::Missing) | Err(BuildError::Ignored { .. }) => false,
        // A directory is in the artifact unless it is excluded and holds nothing included; its
        // kustomization file stands for what it holds.
        Ok(Entry::Dir) => {
            fs.ignored(&abs, true).is_none() || fs.kustomization_file(&abs)?.is_some()
        }
        Ok(Entry::File) => true,
        Err(e) => return Err(e),
    })
}

/// Resource entries (`./` and the path relative to `dir`) of the kustomization Flux generates
/// for a directory without one (fluxcd/pkg `scanManifests`): every .yaml/.yml file below it in
/// walk order, each of which must decode as Kubernetes objects, and every sub-directory with a
/// kustomization file of its own (not descended into). Files parsed while validating are
/// stored in `parsed` so the build reads them once.
pub fn resources(fs: &Fs, dir: &Utf8Path, parsed: &mut Parsed) -> Result<Vec<String>, BuildError> {
    let mut out = Vec::new();
    let file = fs.rel(&dir.join("kustomization.yaml"));
    walk(fs, dir, dir, &file, &mut out, parsed)?;
    Ok(out)
}

fn walk(
    fs: &Fs,
    base: &Utf8Path,
    dir: &Utf8Path,
    file: &Utf8Path,
    out: &mut Vec<String>,
    parsed: &mut Parsed,
) -> Result<(), BuildError> {
    let entry = |path: &Utf8Path| {
        let rel = path.strip_prefix(base).unwrap_or(path);
        format!("./{rel}")
    };
    for listed in fs.list_dir(dir, file)? {
        match listed {
            Listed::Dir(path) => {
                if fs.kustomization_file(&path)?.is_some() {
                    out.push(entry(&path));
                } else {
                    walk(fs, base, &path, file, out, parsed)?;
                }
            }
            Listed::File(path) => {
                let name = path.file_name().unwrap_or_default();
                if !(name.ends_with(".yaml") || name.ends_with(".yml")) {
                    continue;
                }
                // Flux refuses the whole directory when one YAML file is not Kubernetes objects.
                let objects =
                    load::parse_objects_marked(fs.caches(), &fs.rel(&path), &fs.read_text(&path)?)?;
                out.push(entry(&path));
                parsed.insert(path, objects);
            }
        }
    }
    Ok(())
}
