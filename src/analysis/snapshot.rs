//! A repository's cells as one source has them (the working tree, or a commit's tree read from
//! Git), rendered the way `check` renders them: the sample ConfigMap from the contract, every
//! layer built and substituted in strict mode. `cellgen values` prints the sample; `cellgen diff`
//! compares two snapshots.

use camino::{Utf8Path, Utf8PathBuf};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::Value;

use crate::analysis::contract;
use crate::analysis::render::{
    AppliedObjects, BuildCache, Built, RenderedCell, RenderedLayer, load_cell,
    render_layers_reusing, str_at,
};
use crate::error::CellgenError;
use crate::model::catalog::{COMPONENTS_DIR, Catalog};
use crate::model::config::{CONFIG_FILE, Config};
use crate::model::repo::{CELLS_DIR, Repo};
use crate::ports::kustomize::Mode;
use crate::ports::kustomize::Resource;
use crate::ports::kustomize::files::BuildFiles;
use crate::ports::templates::Templates;
use crate::root::memos::Memos;
use crate::root::source::{Access, GitTree, Source, read_text};

/// The name the cell directory's own objects are listed under (what the bootstrap Kustomization
/// applies, layers' Flux Kustomizations included).
pub const CELL_DIRECTORY: &str = "(cell directory)";

pub struct Snapshot {
    pub root: Utf8PathBuf,
    pub config: Config,
    pub cells: Vec<String>,
    pub catalog: Catalog,
    pub source: Source,
    /// What this side's readers remember (parses by text).
    memos: Memos,
}

/// One object as Flux applies it, and the repository file it came from: the `index`th resource
/// of a build, substituted (`applied`) or not (the cell directory's objects). It points into the
/// rendering instead of copying it: both sides of `cellgen diff` share what did not change.
#[derive(Debug, Clone)]
pub struct Object {
    build: Built,
    applied: Option<AppliedObjects>,
    index: usize,
}

impl Object {
    fn resource(&self) -> &Resource {
        match self.build.as_ref() {
            Ok(resources) => &resources[self.index],
            Err(_) => unreachable!("objects come from builds that succeeded"),
        }
    }

    /// The object as Flux applies it.
    pub fn value(&self) -> &Value {
        match &self.applied {
            Some(applied) => match &applied[self.index] {
                Ok(value) => value,
                Err(_) => unreachable!("objects come from substitutions that succeeded"),
            },
            None => &self.resource().object,
        }
    }

    /// The object as built, before substitution (the same for every cell that shares the
    /// layer).
    pub fn built(&self) -> &Value {
        &self.resource().object
    }

    pub fn origin(&self) -> &Utf8Path {
        &self.resource().origin
    }

    pub fn patched_by(&self) -> &[Utf8PathBuf] {
        &self.resource().patched_by
    }

    /// Whether `self` and `other` are the same object of the same rendering (so equal).
    pub fn same(&self, other: &Object) -> bool {
        self.index == other.index
            && Arc::ptr_eq(&self.build, &other.build)
            && match (&self.applied, &other.applied) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                (None, None) => true,
                _ => false,
            }
    }
}

/// A layer's objects by identity, or why the layer does not render.
pub type LayerObjects = Result<BTreeMap<Identity, Object>, String>;

/// What Flux applies for one cell: per layer (and the cell directory), in reconcile order; or
/// why the cell's directory does not build. A layer rendered the same on both sides of a diff
/// is one shared value.
pub type CellObjects = Result<Vec<(String, Arc<LayerObjects>)>, String>;

/// One cell rendered from one snapshot: its objects and sample, and the rendering they point
/// into (which the other side of a diff takes what is the same from).
pub struct RenderedSide {
    pub objects: CellObjects,
    pub sample: BTreeMap<String, String>,
    /// What the sample was made from, when the cache records: the components, and every file
    /// read for it.
    sample_inputs: Option<(BTreeSet<String>, Vec<Access>)>,
    rendered: Option<RenderedCell>,
    /// The objects of the cell directory and of each of `rendered.layers`.
    directory: Option<Arc<LayerObjects>>,
    layers: Vec<Arc<LayerObjects>>,
}

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
        let plan = crate::writer::plan::Plan::new(&repo.root, crate::model::repo::read_by_flux);
        Ok(Snapshot {
            root: repo.root.clone(),
            config: repo.config.clone(),
            cells: repo.cells()?,
            catalog: Catalog::load(&Templates::new(), &plan)?,
            source: Source::disk(&repo.root),
            memos: Memos::default(),
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
            .read_text(root, Utf8Path::new(CONFIG_FILE))
            .ok_or_else(|| CellgenError::InvalidFlag {
                flag: "--base".into(),
                reason: format!("commit `{rev}` has no {CONFIG_FILE} at this path: pick a commit made after `cellgen init`"),
            })?;
        let config = Config::parse(&config_text, &Utf8Path::new(rev).join(CONFIG_FILE))?;
        let read = |path: &Utf8Path| Ok(source.read_text(root, path));
        let catalog = Catalog::load_from(
            &Templates::new(),
            source.list_dirs(root, Utf8Path::new(COMPONENTS_DIR)),
            &read,
        )?;
        Ok(Snapshot {
            root: root.to_path_buf(),
            config,
            cells: source.list_dirs(root, Utf8Path::new(CELLS_DIR)),
            catalog,
            source,
            memos: Memos::default(),
        })
    }

    pub fn build_cache(&self, mode: Mode) -> BuildCache {
        BuildCache::with_source(&self.root, self.source.clone(), mode)
    }

    /// The cell's sample cell-metadata data (as `check` renders with), given the components it
    /// runs.
    pub fn sample(&self, cell: &str, components: &BTreeSet<String>) -> BTreeMap<String, String> {
        self.sample_from(&self.source, cell, components)
    }

    /// [`Snapshot::sample`], its files read through `source` (this snapshot's, or a recording
    /// of it).
    fn sample_from(
        &self,
        source: &dyn BuildFiles,
        cell: &str,
        components: &BTreeSet<String>,
    ) -> BTreeMap<String, String> {
        let read = |rel: &Utf8Path| read_text(source, &self.root, rel);
        // Secret findings are `check`'s; the sample does not depend on them.
        let trace = crate::analysis::secrets::Traced::default;
        let mut ignored = Vec::new();
        contract::check_cell_from(
            &self.memos,
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
    /// when the cell's directory does not build). `other` is the same cell rendered from another
    /// snapshot, with a cache this one's shares builds with ([`BuildCache::sharing`]): what is
    /// bound to be the same is taken from it, not rendered again. `same_contract` says both
    /// snapshots have the same configuration and catalog: the sample is then taken too when
    /// the cell runs the same components and every file read for it is the same here.
    pub fn render_side(
        &self,
        cell: &str,
        cache: &BuildCache,
        other: Option<&RenderedSide>,
        same_contract: bool,
    ) -> RenderedSide {
        let loaded = match load_cell(&self.root, cell, cache) {
            Ok(loaded) => loaded,
            Err(e) => {
                let message = match e.line {
                    Some(line) => format!("{}:{line}: {}", e.file, e.message),
                    None => format!("{}: {}", e.file, e.message),
                };
                return RenderedSide {
                    objects: Err(message),
                    sample: BTreeMap::new(),
                    sample_inputs: None,
                    rendered: None,
                    directory: None,
                    layers: Vec::new(),
                };
            }
        };
        let components = loaded.components();
        let taken = other
            .filter(|_| same_contract)
            .and_then(|o| o.sample_inputs.as_ref().map(|i| (o, i)))
            .filter(|(_, (theirs, reads))| *theirs == components && self.source.replays(reads))
            .map(|(o, _)| o.sample.clone());
        let (sample, sample_inputs) = match taken {
            Some(sample) => (sample, None),
            None if cache.records() => {
                let (source, recorder) = self.source.recorded();
                let sample = self.sample_from(&*source, cell, &components);
                (sample, Some((components, recorder.reads())))
            }
            None => (self.sample(cell, &components), None),
        };
        let mut data = sample.clone();
        data.retain(|k, _| crate::model::keys::is_valid_key_name(k));
        let previous = other.and_then(|o| o.rendered.as_ref());
        let rendered = render_layers_reusing(loaded, &data, cache, previous);
        let mut out = Vec::new();
        let directory =
            match other.and_then(|o| Some((o.rendered.as_ref()?, o.directory.as_ref()?))) {
                Some((o, objects)) if Arc::ptr_eq(&o.cell_objects, &rendered.cell_objects) => {
                    objects.clone()
                }
                _ => {
                    let mut objects = BTreeMap::new();
                    for (index, r) in rendered.cell_resources().iter().enumerate() {
                        objects.insert(
                            Identity::of(&r.object),
                            Object {
                                build: rendered.cell_objects.clone(),
                                applied: None,
                                index,
                            },
                        );
                    }
                    Arc::new(Ok(objects))
                }
            };
        out.push((CELL_DIRECTORY.to_string(), directory.clone()));
        for invalid in &rendered.invalid {
            out.push((
                invalid.name.clone(),
                Arc::new(Err(format!(
                    "{}: Flux Kustomization `{}` cannot be read: {}",
                    invalid.file, invalid.name, invalid.message
                ))),
            ));
        }
        let mut layers = Vec::new();
        for layer in &rendered.layers {
            // The other side's objects of the same layer, when this one took them.
            let shared = previous.and_then(|p| {
                p.layers
                    .iter()
                    .zip(&other?.layers)
                    .find(|(l, _)| {
                        Arc::ptr_eq(&l.objects, &layer.objects)
                            && Arc::ptr_eq(&l.build, &layer.build)
                            && l.layer.path == layer.layer.path
                    })
                    .map(|(_, objects)| objects.clone())
            });
            let objects = shared.unwrap_or_else(|| Arc::new(layer_objects(layer)));
            out.push((layer.layer.name.clone(), objects.clone()));
            layers.push(objects);
        }
        RenderedSide {
            objects: Ok(out),
            sample,
            sample_inputs,
            rendered: Some(rendered),
            directory: Some(directory),
            layers,
        }
    }
}

/// A rendered layer's objects by identity, or why it does not render.
fn layer_objects(layer: &RenderedLayer) -> LayerObjects {
    match layer.build.as_ref() {
        Err(e) => Err(format!("{} does not build: {e}", layer.layer.path)),
        Ok(_) => layer
            .pairs()
            .enumerate()
            .map(|(index, (resource, result))| match result {
                Ok(value) => Ok((
                    Identity::of(value),
                    Object {
                        build: layer.build.clone(),
                        applied: Some(layer.objects.clone()),
                        index,
                    },
                )),
                Err(e) => Err(format!(
                    "{} (an object from {})",
                    e.flux_message(),
                    resource.origin
                )),
            })
            .collect(),
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
            "name": crate::model::names::METADATA_CONFIGMAP,
            "namespace": crate::analysis::render::BOOTSTRAP,
        },
        "data": data,
    })
}
