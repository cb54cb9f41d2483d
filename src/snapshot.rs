//! A repository's cells as one source has them (the working tree, or a commit's tree read from
//! Git), rendered the way `check` renders them: the sample ConfigMap from the contract, every
//! layer built and substituted in strict mode. `cellgen values` prints the sample; `cellgen diff`
//! compares two snapshots.

use camino::{Utf8Path, Utf8PathBuf};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::Value;

use crate::catalog::{COMPONENTS_DIR, Catalog};
use crate::check::contract;
use crate::config::{CONFIG_FILE, Config};
use crate::error::CellgenError;
use crate::kustomize::Mode;
use crate::kustomize::source::{GitTree, Source};
use crate::render::{BuildCache, load_cell, render_layers, str_at};
use crate::repo::{CELLS_DIR, Repo};
use crate::templates::Templates;

/// The name the cell directory's own objects are listed under (what the bootstrap Kustomization
/// applies, layers' Flux Kustomizations included).
pub const CELL_DIRECTORY: &str = "(cell directory)";

pub struct Snapshot {
    pub root: Utf8PathBuf,
    pub config: Config,
    pub cells: Vec<String>,
    pub catalog: Catalog,
    pub source: Source,
}

/// One object as Flux applies it, and the repository file it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    pub value: Value,
    /// The object as built, before substitution (the same for every cell that shares the layer).
    pub built: Value,
    pub origin: Utf8PathBuf,
    pub patched_by: Vec<Utf8PathBuf>,
}

/// A layer's objects by identity, or why the layer does not render.
pub type LayerObjects = Result<BTreeMap<Identity, Object>, String>;

/// What Flux applies for one cell: per layer (and the cell directory), in reconcile order; or
/// why the cell's directory does not build.
pub type CellObjects = Result<Vec<(String, LayerObjects)>, String>;

/// An object's identity as the API server sees it: group (not version), kind, namespace, name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Identity {
    pub group: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

impl Identity {
    pub fn of(object: &Value) -> Identity {
        let api = str_at(object, "/apiVersion");
        let group = api.rsplit_once('/').map_or("", |(g, _)| g).to_string();
        Identity {
            group,
            kind: str_at(object, "/kind").to_string(),
            namespace: str_at(object, "/metadata/namespace").to_string(),
            name: str_at(object, "/metadata/name").to_string(),
        }
    }
}

impl std::fmt::Display for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.kind)?;
        if !self.group.is_empty() {
            write!(f, ".{}", self.group)?;
        }
        write!(f, " ")?;
        if !self.namespace.is_empty() {
            write!(f, "{}/", self.namespace)?;
        }
        write!(f, "{}", self.name)
    }
}

impl Snapshot {
    /// The working tree of `repo`.
    pub fn working(repo: &Repo) -> Result<Snapshot, CellgenError> {
        let plan = crate::plan::Plan::new(&repo.root);
        Ok(Snapshot {
            root: repo.root.clone(),
            config: repo.config.clone(),
            cells: repo.cells()?,
            catalog: Catalog::load(&Templates::new(), &plan)?,
            source: Source::Disk,
        })
    }

    /// The repository at `root` as commit `rev` has it, read from Git without a checkout.
    pub fn at_commit(root: &Utf8Path, rev: &str) -> Result<Snapshot, CellgenError> {
        let tree = GitTree::load(root, rev).map_err(|e| CellgenError::InvalidFlag {
            flag: "--base".into(),
            reason: e.to_string(),
        })?;
        let source = Source::Tree(Arc::new(tree));
        let config_text = source
            .read_text(root, CONFIG_FILE.into())
            .ok_or_else(|| CellgenError::InvalidFlag {
                flag: "--base".into(),
                reason: format!("commit `{rev}` has no {CONFIG_FILE} at this path: pick a commit made after `cellgen init`"),
            })?;
        let config = Config::parse(&config_text, &Utf8Path::new(rev).join(CONFIG_FILE))?;
        let read = |path: &Utf8Path| Ok(source.read_text(root, path));
        let catalog = Catalog::load_from(
            &Templates::new(),
            source.list_dirs(root, COMPONENTS_DIR.into()),
            &read,
        )?;
        Ok(Snapshot {
            root: root.to_path_buf(),
            config,
            cells: source.list_dirs(root, CELLS_DIR.into()),
            catalog,
            source,
        })
    }

    pub fn build_cache(&self, mode: Mode) -> BuildCache {
        BuildCache::with_source(&self.root, self.source.clone(), mode)
    }

    /// The cell's sample cell-metadata data (as `check` renders with), given the components it
    /// runs.
    pub fn sample(&self, cell: &str, components: &BTreeSet<String>) -> BTreeMap<String, String> {
        let read = |rel: &Utf8Path| self.source.read_text(&self.root, rel);
        // Secret findings are `check`'s; the sample does not depend on them.
        let trace = BTreeMap::new;
        let mut ignored = Vec::new();
        contract::check_cell_from(
            &read,
            &trace,
            &self.config,
            &self.catalog,
            cell,
            components,
            &BTreeMap::new(),
            &mut ignored,
        )
        .data
    }

    /// The sample of `cell`, with the components its layers name (or, when its directory does not
    /// build, the components its layer files list).
    pub fn cell_sample(
        &self,
        cell: &str,
        cache: &mut BuildCache,
    ) -> Result<BTreeMap<String, String>, CellgenError> {
        let components = match load_cell(&self.root, cell, cache) {
            Ok(loaded) => loaded.components(),
            Err(e) => {
                return Err(CellgenError::InvalidFile {
                    path: e.file,
                    message: e.message,
                });
            }
        };
        Ok(self.sample(cell, &components))
    }

    /// What Flux applies for `cell` (rendered with the sample, key names Flux rejects left out as
    /// `check` leaves them out: they are reported on their line there), and the sample (empty
    /// when the cell's directory does not build).
    pub fn render_with_sample(
        &self,
        cell: &str,
        cache: &BuildCache,
    ) -> (CellObjects, BTreeMap<String, String>) {
        let loaded = match load_cell(&self.root, cell, cache) {
            Ok(loaded) => loaded,
            Err(e) => {
                let message = match e.line {
                    Some(line) => format!("{}:{line}: {}", e.file, e.message),
                    None => format!("{}: {}", e.file, e.message),
                };
                return (Err(message), BTreeMap::new());
            }
        };
        let sample = self.sample(cell, &loaded.components());
        let mut data = sample.clone();
        data.retain(|k, _| crate::keys::is_valid_key_name(k));
        let rendered = render_layers(loaded, &data, cache);
        let mut out = Vec::new();
        let mut cell_objects = BTreeMap::new();
        for r in rendered.cell_resources() {
            cell_objects.insert(
                Identity::of(&r.object),
                Object {
                    value: r.object.clone(),
                    built: r.object.clone(),
                    origin: r.origin.clone(),
                    patched_by: r.patched_by.to_vec(),
                },
            );
        }
        out.push((CELL_DIRECTORY.to_string(), Ok(cell_objects)));
        for invalid in &rendered.invalid {
            out.push((
                invalid.name.clone(),
                Err(format!(
                    "{}: Flux Kustomization `{}` cannot be read: {}",
                    invalid.file, invalid.name, invalid.message
                )),
            ));
        }
        for layer in &rendered.layers {
            let objects: LayerObjects = match layer.build.as_ref() {
                Err(e) => Err(format!("{} does not build: {e}", layer.layer.path)),
                Ok(_) => layer
                    .pairs()
                    .map(|(resource, result)| match result {
                        Ok(value) => Ok((
                            Identity::of(value),
                            Object {
                                value: value.clone(),
                                built: resource.object.clone(),
                                origin: resource.origin.clone(),
                                patched_by: resource.patched_by.to_vec(),
                            },
                        )),
                        Err(e) => Err(format!(
                            "{} (an object from {})",
                            e.flux_message(),
                            resource.origin.clone()
                        )),
                    })
                    .collect(),
            };
            out.push((layer.layer.name.clone(), objects));
        }
        (Ok(out), sample)
    }
}

/// The cell-metadata ConfigMap for `data`, as Terraform writes it.
pub fn configmap(data: &BTreeMap<String, String>) -> Value {
    let data: serde_json::Map<String, Value> = data
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": crate::check::METADATA_CONFIGMAP,
            "namespace": crate::render::BOOTSTRAP,
        },
        "data": data,
    })
}
