//! What Flux would apply for a cell: each layer's Flux Kustomization is built (`spec.path` plus
//! `spec.components`) and every object substituted from `postBuild`. Builds are cached by
//! (path, components), so cells that share layers build them once and only substitute.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use crate::kustomize::{self, BuildError, Mode, Resource};
use crate::substitute::{PostBuild, SubstError, SubstituteOptions, Vars, substitute_object};

/// A Flux Kustomization as cellgen needs it: where it builds from and how it substitutes.
#[derive(Debug, Clone)]
pub struct FluxLayer {
    pub name: String,
    /// Repository-relative path of the file that declares it.
    pub file: PathBuf,
    /// The file's text, to point at lines.
    pub text: String,
    pub path: String,
    pub components: Vec<String>,
    pub substitute: BTreeMap<String, String>,
    pub substitute_from: Vec<SubstituteRef>,
    pub strategy_always: bool,
}

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct SubstituteRef {
    pub kind: String,
    pub name: String,
    #[serde(default)]
    pub optional: bool,
}

#[derive(Deserialize)]
struct RawObject {
    #[serde(default, rename = "apiVersion")]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    metadata: RawMetadata,
    #[serde(default)]
    spec: RawSpec,
}

#[derive(Deserialize, Default)]
struct RawMetadata {
    #[serde(default)]
    name: String,
}

#[derive(Deserialize, Default)]
struct RawSpec {
    #[serde(default)]
    path: String,
    #[serde(default)]
    components: Vec<String>,
    #[serde(default, rename = "postBuild")]
    post_build: RawPostBuild,
}

#[derive(Deserialize, Default)]
struct RawPostBuild {
    #[serde(default)]
    substitute: BTreeMap<String, String>,
    #[serde(default, rename = "substituteFrom")]
    substitute_from: Vec<SubstituteRef>,
    #[serde(default, rename = "substituteStrategy")]
    substitute_strategy: Option<String>,
}

/// Why a cell's layers cannot be listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

/// The Flux Kustomizations a cell lists: every `resources` entry of `cells/<cell>/kustomization.yaml`.
pub fn cell_layers(root: &Path, cell: &str) -> Result<Vec<FluxLayer>, LayerError> {
    let dir = Path::new(crate::repo::CELLS_DIR).join(cell);
    let kustomization = dir.join("kustomization.yaml");
    let text = read(root, &kustomization)?;
    bounded(&kustomization, &text)?;
    #[derive(Deserialize)]
    struct CellKustomization {
        #[serde(default)]
        resources: Vec<String>,
    }
    let parsed: CellKustomization =
        yaml_serde::from_str(&text).map_err(|e| yaml_error(&kustomization, &e))?;
    let mut layers = Vec::new();
    for resource in parsed.resources {
        let file = dir.join(&resource);
        if root.join(&file).is_dir() {
            continue; // e.g. flux-system/, written by bootstrap
        }
        let text = read(root, &file).map_err(|mut e| {
            e.file = kustomization.clone();
            e.line = crate::config::line_of(&text, &resource);
            e.message = format!("lists `{resource}`, which does not exist");
            e
        })?;
        bounded(&file, &text)?;
        for doc in yaml_serde::Deserializer::from_str(&text) {
            let raw = RawObject::deserialize(doc).map_err(|e| yaml_error(&file, &e))?;
            if raw.kind != "Kustomization"
                || !raw.api_version.starts_with("kustomize.toolkit.fluxcd.io/")
            {
                continue;
            }
            layers.push(FluxLayer {
                name: raw.metadata.name,
                file: file.clone(),
                text: text.clone(),
                path: raw.spec.path,
                components: raw.spec.components,
                substitute: raw.spec.post_build.substitute,
                substitute_from: raw.spec.post_build.substitute_from,
                strategy_always: raw.spec.post_build.substitute_strategy.as_deref()
                    == Some("Always"),
            });
        }
    }
    Ok(layers)
}

fn read(root: &Path, rel: &Path) -> Result<String, LayerError> {
    std::fs::read_to_string(root.join(rel)).map_err(|e| LayerError {
        file: rel.to_path_buf(),
        line: None,
        message: format!("cannot read: {e}"),
    })
}

/// libyaml's time is quadratic in bracket nesting: a deep file is refused before parsing.
fn bounded(file: &Path, text: &str) -> Result<(), LayerError> {
    crate::edit::depth::check_yaml(text).map_err(|e| LayerError {
        file: file.to_path_buf(),
        line: Some(e.line),
        message: e.to_string(),
    })
}

fn yaml_error(file: &Path, e: &yaml_serde::Error) -> LayerError {
    LayerError {
        file: file.to_path_buf(),
        line: e.location().map(|l| l.line()),
        message: format!("not a valid Flux Kustomization: {e}"),
    }
}

impl SubstituteRef {
    /// Whether this is the `cell-metadata` ConfigMap Terraform writes.
    pub fn is_cell_metadata(&self) -> bool {
        self.kind == "ConfigMap" && self.name == crate::check::METADATA_CONFIGMAP
    }
}

impl FluxLayer {
    /// `spec.path` without `./`, as a repository-relative path.
    pub fn build_path(&self) -> String {
        self.path
            .trim_start_matches("./")
            .trim_end_matches('/')
            .to_string()
    }

    /// The variables Flux would substitute, with `data` standing for the cell-metadata
    /// ConfigMap and `others` for any other ConfigMap/Secret the layer names (absent = unknown).
    pub fn post_build(
        &self,
        sources: &dyn Fn(&SubstituteRef) -> Option<BTreeMap<String, String>>,
    ) -> PostBuild {
        PostBuild {
            substitute: self.substitute.clone(),
            substitute_from: self.substitute_from.iter().filter_map(sources).collect(),
            strategy_always: self.strategy_always,
            strict: true,
        }
    }
}

type Built = Arc<Result<Vec<Resource>, Arc<BuildError>>>;

/// Builds keyed by (path, components): cells share layers.
pub struct BuildCache {
    root: PathBuf,
    mode: Mode,
    builds: HashMap<(String, Vec<String>), Built>,
}

impl BuildCache {
    pub fn new(root: &Path, mode: Mode) -> BuildCache {
        BuildCache {
            root: root.to_path_buf(),
            mode,
            builds: HashMap::new(),
        }
    }

    pub fn build(&mut self, layer: &FluxLayer) -> Built {
        let key = (layer.build_path(), layer.components.clone());
        self.builds
            .entry(key)
            .or_insert_with_key(|(path, components)| {
                Arc::new(
                    kustomize::build(&self.root, path, components, self.mode).map_err(Arc::new),
                )
            })
            .clone()
    }

    pub fn distinct_builds(&self) -> usize {
        self.builds.len()
    }
}

/// One object after substitution, or why it failed.
pub struct RenderedObject<'a> {
    pub resource: &'a Resource,
    pub result: Result<Value, SubstError>,
}

pub fn substitute_all<'a>(
    resources: &'a [Resource],
    vars: &Vars,
    options: &SubstituteOptions,
) -> Vec<RenderedObject<'a>> {
    resources
        .iter()
        .map(|resource| RenderedObject {
            resource,
            result: substitute_object(&resource.object, vars, options),
        })
        .collect()
}

/// Objects as multi-document YAML, the way `kubectl` users read them.
pub fn to_multi_doc(objects: &[Value]) -> String {
    objects
        .iter()
        .map(|o| format!("---\n{}", crate::substitute::to_flux_yaml(o)))
        .collect()
}
