//! What Flux would apply for a cell, in kustomize-controller's order:
//!
//! 1. `cells/<cell>` is built (what the bootstrap Kustomization applies); its Flux
//!    Kustomizations are the cell's layers;
//! 2. each layer's `spec.path` is built with the fields Flux writes into its kustomization
//!    (components, patches, images, name prefix/suffix, target namespace; see
//!    `kustomize::FluxFields`);
//! 3. every object is substituted from `postBuild` (`substituteFrom` in order, later wins,
//!    inline `substitute` over all; a ConfigMap or Secret source the cell renders itself is read
//!    from that rendering);
//! 4. `commonMetadata` is set on every object.
//!
//! Builds are cached by (path, fields), so cells that share layers build them once.

mod cache;
pub mod layer;
#[cfg(test)]
mod sharing_tests;

use camino::{Utf8Path, Utf8PathBuf};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use base64::Engine;
use serde_json::Value;

use crate::ports::envsubst::{PostBuild, Prepared, SubstError, SubstituteOptions, Vars};
use crate::ports::kustomize::{BuildError, FluxFields, Resource};
use cache::Entry;
pub use cache::{BuildCache, Built, PreparedObjects};
pub use layer::{BOOTSTRAP, FluxLayer, ObjectRef, PostBuildSpec, SubstituteRef, Unsupported};

/// Why a cell cannot be rendered at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerError {
    pub file: Utf8PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

/// Where a `substituteFrom` entry's variables come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The cell-metadata ConfigMap Terraform writes (the sample).
    CellMetadata,
    /// A ConfigMap or Secret the cell renders: in a layer, or (`None`) in the cell's directory.
    Rendered { layer: Option<String> },
    /// Not rendered by the cell and `optional`: Flux skips a missing optional source.
    SkippedOptional,
    /// Not rendered by the cell: it may exist in the cluster, cellgen cannot see it.
    Unseen,
}

/// One layer of a cell, rendered.
pub struct RenderedLayer {
    pub layer: FluxLayer,
    pub build: Built,
    /// The build's objects prepared for substitution (see [`RenderedLayer::prepared`]).
    prepared: PreparedObjects,
    /// One per `substituteFrom` entry, in order.
    pub sources: Vec<Source>,
    pub vars: Vars,
    /// Whether Flux substitutes this layer's objects at all (`postBuild` set, and variables
    /// defined or `substituteStrategy: Always`).
    pub substitutes: bool,
    /// One per built resource: the object as Flux applies it, or why substitution fails
    /// (shared with the rendering it was taken from, see [`render_layers_reusing`]).
    pub objects: AppliedObjects,
}

/// What Flux applies for each resource of a layer's build.
/// Each object is shared with the substitution memo it came from (cells rendering it alike
/// hold one copy).
pub type AppliedObjects = Arc<Vec<Result<Arc<Value>, SubstError>>>;

impl RenderedLayer {
    pub fn resources(&self) -> &[Resource] {
        match self.build.as_ref() {
            Ok(resources) => resources,
            Err(_) => &[],
        }
    }

    /// The `i`th built resource, prepared for substitution: its Flux YAML and the `${...}` in
    /// it, made once for every cell that builds this layer.
    pub fn prepared(&self, i: usize) -> &Prepared {
        prepared(&self.prepared, self.resources(), i)
    }

    /// Built resources next to what Flux applies for each.
    pub fn pairs(&self) -> impl Iterator<Item = (&Resource, Result<&Value, &SubstError>)> {
        self.resources()
            .iter()
            .zip(self.objects.iter().map(Result::as_deref))
    }
}

fn prepared<'a>(prepared: &'a PreparedObjects, resources: &[Resource], i: usize) -> &'a Prepared {
    prepared[i].get_or_init(|| Prepared::new(&resources[i].object))
}

/// A Flux Kustomization of the cell's directory that cellgen could not read.
pub struct InvalidLayer {
    pub name: String,
    pub file: Utf8PathBuf,
    pub object: Value,
    pub message: String,
}

/// Everything a cell applies.
pub struct RenderedCell {
    /// The objects of `cells/<cell>`, layers included (the bootstrap Kustomization applies them
    /// without substitution).
    pub cell_objects: Built,
    pub layers: Vec<RenderedLayer>,
    pub invalid: Vec<InvalidLayer>,
}

impl RenderedCell {
    pub fn cell_resources(&self) -> &[Resource] {
        match self.cell_objects.as_ref() {
            Ok(resources) => resources,
            Err(_) => &[],
        }
    }
}

/// The cell's directory, built, and the Flux Kustomizations in it: what `render_layers` renders.
pub struct CellLayers {
    pub cell_objects: Built,
    pub layers: Vec<FluxLayer>,
    pub invalid: Vec<InvalidLayer>,
}

impl CellLayers {
    /// The components the cell runs: `spec.components` entries of its layers that resolve below
    /// `components/`.
    pub fn components(&self) -> BTreeSet<String> {
        let mut names = BTreeSet::new();
        for layer in &self.layers {
            for reference in &layer.flux.components {
                if let Some(resolved) =
                    crate::model::cells::resolve_ref(&layer.build_path(), reference)
                    && let Ok(rest) = resolved.strip_prefix(crate::model::catalog::COMPONENTS_DIR)
                    && let Some(camino::Utf8Component::Normal(name)) = rest.components().next()
                {
                    names.insert(name.to_owned());
                }
            }
        }
        names
    }
}

/// Builds `cells/<cell>` (what the bootstrap Kustomization applies) and reads its layers.
pub fn load_cell(
    root: &Utf8Path,
    cell: &str,
    cache: &BuildCache,
) -> Result<CellLayers, LayerError> {
    let dir = format!("{}/{cell}", crate::model::repo::CELLS_DIR);
    let cell_objects = cache.build(&dir, &FluxFields::flux());
    let resources = match cell_objects.as_ref() {
        Ok(resources) => resources,
        Err(e) => return Err(cell_error(root, &dir, e)),
    };
    let mut layers = Vec::new();
    let mut invalid = Vec::new();
    for resource in resources {
        if !layer::is_flux_kustomization(&resource.object) {
            continue;
        }
        match FluxLayer::parse(&resource.object, resource.origin.clone()) {
            // The bootstrap Kustomization syncs the cell's directory itself.
            Ok(l) if l.build_path() == dir => {}
            Ok(l) => layers.push(l),
            Err(message) => invalid.push(InvalidLayer {
                name: str_at(&resource.object, "/metadata/name").to_string(),
                file: resource.origin.clone(),
                object: Value::clone(&resource.object),
                message,
            }),
        }
    }
    Ok(CellLayers {
        cell_objects,
        layers: dependency_order(layers),
        invalid,
    })
}

/// Renders every layer of `cell`; `metadata` is the cell-metadata ConfigMap's data.
pub fn render_cell(
    root: &Utf8Path,
    cell: &str,
    metadata: &BTreeMap<String, String>,
    cache: &BuildCache,
) -> Result<RenderedCell, LayerError> {
    Ok(render_layers(
        load_cell(root, cell, cache)?,
        metadata,
        cache,
    ))
}

/// Builds and substitutes the layers of a loaded cell.
pub fn render_layers(
    cell: CellLayers,
    metadata: &BTreeMap<String, String>,
    cache: &BuildCache,
) -> RenderedCell {
    render_layers_reusing(cell, metadata, cache, None)
}

/// [`render_layers`], taking from `previous` (the same cell rendered from another source with
/// a [`BuildCache::sharing`] cache) each layer whose result is bound to be the same: the same
/// build (one `Arc`), the same Flux Kustomization object and the same variables. Substitution
/// is a function of those alone, so the objects are shared instead of substituted again.
pub fn render_layers_reusing(
    cell: CellLayers,
    metadata: &BTreeMap<String, String>,
    cache: &BuildCache,
    previous: Option<&RenderedCell>,
) -> RenderedCell {
    let CellLayers {
        cell_objects,
        layers,
        invalid,
    } = cell;
    let resources: &[Resource] = match cell_objects.as_ref() {
        Ok(resources) => resources,
        Err(_) => &[],
    };
    let entries: Vec<Entry> = layers
        .iter()
        .map(|l| cache.entry(&l.build_path(), &l.flux))
        .collect();
    let mut renderer = Renderer {
        cell_resources: resources,
        layers: &layers,
        builds: &entries,
        metadata,
        previous,
        done: vec![None; layers.len()],
        in_progress: vec![false; layers.len()],
    };
    for i in 0..layers.len() {
        renderer.render(i);
    }
    let done = renderer.done;
    let rendered = layers
        .into_iter()
        .zip(entries)
        .zip(done)
        .map(|((layer, entry), done)| {
            let (sources, vars, substitutes, objects) = done.expect("every layer is rendered once");
            RenderedLayer {
                layer,
                build: entry.built,
                prepared: entry.prepared,
                sources,
                vars,
                substitutes,
                objects,
            }
        })
        .collect();
    RenderedCell {
        cell_objects: cell_objects.clone(),
        layers: rendered,
        invalid,
    }
}

/// Layers in the order Flux reconciles them: a layer after the ones it depends on, otherwise
/// as the cell's directory lists them.
fn dependency_order(mut layers: Vec<FluxLayer>) -> Vec<FluxLayer> {
    let mut ordered: Vec<FluxLayer> = Vec::with_capacity(layers.len());
    while !layers.is_empty() {
        let ready = layers
            .iter()
            .position(|l| {
                l.depends_on.iter().all(|d| {
                    !layers
                        .iter()
                        .any(|o| o.name == d.name && o.namespace == d.namespace)
                })
            })
            // A cycle (reported by check): keep the listed order.
            .unwrap_or(0);
        ordered.push(layers.remove(ready));
    }
    ordered
}

type Done = (Vec<Source>, Vars, bool, AppliedObjects);

/// Renders layers in the order their `substituteFrom` sources need: a layer reading a ConfigMap
/// another layer renders is substituted after it (a cycle leaves the source unseen).
struct Renderer<'a> {
    cell_resources: &'a [Resource],
    layers: &'a [FluxLayer],
    builds: &'a [Entry],
    metadata: &'a BTreeMap<String, String>,
    previous: Option<&'a RenderedCell>,
    done: Vec<Option<Done>>,
    in_progress: Vec<bool>,
}

impl Renderer<'_> {
    fn render(&mut self, i: usize) {
        if self.done[i].is_some() || self.in_progress[i] {
            return;
        }
        self.in_progress[i] = true;
        let layer = &self.layers[i];
        let mut sources = Vec::new();
        let mut data = Vec::new();
        for reference in layer.substitute_from() {
            let (source, values) = self.source(i, reference);
            sources.push(source);
            data.extend(values);
        }
        let strategy_always = layer.post_build.as_ref().is_some_and(|p| p.strategy_always);
        let vars = PostBuild {
            substitute: layer
                .post_build
                .as_ref()
                .map(|p| p.substitute.clone())
                .unwrap_or_default(),
            substitute_from: data,
            strategy_always,
            strict: true,
        }
        .into_vars();
        // Without `postBuild` kustomize-controller does not call the substitution at all.
        let substitutes = layer.post_build.is_some() && (!vars.is_empty() || strategy_always);
        let options = SubstituteOptions {
            strict: true,
            strategy_always,
        };
        let entry = &self.builds[i];
        let same = |p: &&RenderedLayer| {
            Arc::ptr_eq(&p.build, &entry.built)
                && p.substitutes == substitutes
                && p.vars == vars
                && p.layer.object == layer.object
                && p.layer.file == layer.file
        };
        let reused = self
            .previous
            .and_then(|p| p.layers.iter().find(same))
            .map(|p| p.objects.clone());
        let objects =
            reused.unwrap_or_else(|| self.substitute(layer, entry, &vars, substitutes, &options));
        self.in_progress[i] = false;
        self.done[i] = Some((sources, vars, substitutes, objects));
    }

    /// The objects of `entry`'s build as Flux applies them for `layer`.
    fn substitute(
        &self,
        layer: &FluxLayer,
        entry: &Entry,
        vars: &Vars,
        substitutes: bool,
        options: &SubstituteOptions,
    ) -> AppliedObjects {
        let objects = match entry.built.as_ref() {
            Ok(resources) => resources
                .iter()
                .enumerate()
                .map(|(at, r)| {
                    let mut object = if substitutes {
                        // substitute_object, with the work shared between cells.
                        prepared(&entry.prepared, resources, at)
                            .substitute_shared(&r.object, vars, options)?
                    } else {
                        r.object.clone()
                    };
                    if layer.sets_common_metadata() {
                        layer.set_common_metadata(Arc::make_mut(&mut object));
                    }
                    Ok(object)
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        Arc::new(objects)
    }

    /// Where layer `i`'s `reference` comes from, and its data when known.
    fn source(
        &mut self,
        i: usize,
        reference: &SubstituteRef,
    ) -> (Source, Option<BTreeMap<String, String>>) {
        if reference.is_cell_metadata() {
            return (Source::CellMetadata, Some(self.metadata.clone()));
        }
        // substituteFrom is read from the Kustomization's own namespace.
        let namespace = self.layers[i].namespace.clone();
        let matches = |o: &Value| {
            str_at(o, "/kind") == reference.kind
                && str_at(o, "/metadata/name") == reference.name
                && str_at(o, "/metadata/namespace") == namespace
                && str_at(o, "/apiVersion") == "v1"
        };
        if let Some(r) = self.cell_resources.iter().find(|r| matches(&r.object)) {
            return (
                Source::Rendered { layer: None },
                Some(source_data(&r.object)),
            );
        }
        for j in (0..self.layers.len()).filter(|j| *j != i) {
            let Ok(resources) = self.builds[j].built.as_ref() else {
                continue;
            };
            let Some(at) = resources.iter().position(|r| matches(&r.object)) else {
                continue;
            };
            self.render(j);
            let data = self.done[j]
                .as_ref()
                .and_then(|d| d.3.get(at))
                .and_then(|o| o.as_ref().ok())
                .map(|o| source_data(o));
            if data.is_some() {
                return (
                    Source::Rendered {
                        layer: Some(self.layers[j].name.clone()),
                    },
                    data,
                );
            }
        }
        if reference.optional {
            (Source::SkippedOptional, None)
        } else {
            (Source::Unseen, None)
        }
    }
}

/// The variables a ConfigMap (`data`) or Secret (`data` decoded, with `stringData`, which the
/// API server merges into `data`) gives.
fn source_data(object: &Value) -> BTreeMap<String, String> {
    let strings = |field: &str| -> Vec<(String, String)> {
        object
            .get(field)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(k, v)| {
                let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                (k.clone(), v)
            })
            .collect()
    };
    let mut data = BTreeMap::new();
    if str_at(object, "/kind") == "Secret" {
        for (k, v) in strings("data") {
            if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(v.trim()) {
                data.insert(k, String::from_utf8_lossy(&bytes).into_owned());
            }
        }
        data.extend(strings("stringData"));
    } else {
        data.extend(strings("data"));
    }
    data
}

fn cell_error(root: &Utf8Path, dir: &str, error: &BuildError) -> LayerError {
    let (file, line) = build_error_location(root, error)
        .unwrap_or_else(|| (Utf8Path::new(dir).join("kustomization.yaml"), None));
    LayerError {
        file,
        line,
        message: format!("the cell's directory {dir} does not build: {error}"),
    }
}

/// The repository file and line a build error is about: the error's own location, with the
/// line of the entry it names when the error gives none (a missing resource, a link, a path
/// outside the root, a file left out of the artifact).
pub fn build_error_location(
    root: &Utf8Path,
    error: &BuildError,
) -> Option<(Utf8PathBuf, Option<usize>)> {
    build_error_location_in(&crate::root::filestore::FileStore::new(root), error)
}

/// [`build_error_location`], the file read through `files` (the command's store).
pub fn build_error_location_in(
    files: &crate::root::filestore::FileStore,
    error: &BuildError,
) -> Option<(Utf8PathBuf, Option<usize>)> {
    let (file, line) = error.location()?;
    let entry = match error {
        BuildError::MissingResource { entry, .. }
        | BuildError::OutsideRoot { entry, .. }
        | BuildError::Symlink { entry, .. }
        | BuildError::Ignored { entry, .. } => Some(entry.as_str()),
        // The entry naming the directory one level too deep.
        BuildError::TooDeep { deepest, .. } => deepest.file_name(),
        _ => None,
    };
    let line = line.or_else(|| match error {
        // The line of the first bad byte.
        BuildError::NotUtf8 { offset, .. } => {
            let bytes = files.read(file).ok()?;
            let before = bytes.get(..*offset)?;
            Some(before.iter().filter(|b| **b == b'\n').count() + 1)
        }
        _ => {
            let bytes = files.read(file).ok()?;
            crate::model::config::line_of(std::str::from_utf8(&bytes).ok()?, entry?)
        }
    });
    Some((file.to_path_buf(), line))
}

/// The string at a JSON pointer, or "".
pub fn str_at<'a>(object: &'a Value, pointer: &str) -> &'a str {
    value_at(object, pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `object.pointer(pointer)`, without the string serde_json allocates for every token when no
/// token is escaped (`~0`, `~1`): `check` asks a few fields of every object of every cell.
pub fn value_at<'a>(object: &'a Value, pointer: &str) -> Option<&'a Value> {
    if pointer.contains('~') {
        return object.pointer(pointer);
    }
    if pointer.is_empty() {
        return Some(object);
    }
    pointer
        .strip_prefix('/')?
        .split('/')
        .try_fold(object, |value, token| match value {
            Value::Object(map) => map.get(token),
            // serde_json's index: no sign, no leading zero.
            Value::Array(items)
                if !token.starts_with('+') && (token == "0" || !token.starts_with('0')) =>
            {
                token.parse::<usize>().ok().and_then(|i| items.get(i))
            }
            _ => None,
        })
}

/// Objects as multi-document YAML, the way `kubectl` users read them.
pub fn to_multi_doc(objects: &[Value]) -> String {
    objects
        .iter()
        .map(|o| format!("---\n{}", crate::ports::envsubst::to_flux_yaml(o)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{source_data, value_at};
    use serde_json::json;

    #[test]
    fn value_at_is_serde_pointer() {
        let v = json!({"a": {"b": [1, {"c": "x"}], "d/e": 2, "f~g": 3, "": 4, "01": 5}});
        for p in [
            "",
            "/",
            "/a",
            "/a/b",
            "/a/b/0",
            "/a/b/1/c",
            "/a/b/01",
            "/a/b/+1",
            "/a/b/2",
            "/a/b/-1",
            "/a/d~1e",
            "/a/f~0g",
            "/a/",
            "/a/01",
            "a",
            "/x/y",
            "/a/b/1/c/z",
            "/a/b/1/",
        ] {
            assert_eq!(value_at(&v, p), v.pointer(p), "{p}");
        }
    }

    #[test]
    fn secrets_give_decoded_data_and_string_data() {
        let secret =
            json!({"kind": "Secret", "data": {"a": "eA==", "b": "eQ=="}, "stringData": {"b": "z"}});
        let data = source_data(&secret);
        assert_eq!(data["a"], "x");
        assert_eq!(data["b"], "z");
        let cm = json!({"kind": "ConfigMap", "data": {"a": "eA=="}, "binaryData": {"c": "eA=="}});
        assert_eq!(source_data(&cm).len(), 1);
        assert_eq!(source_data(&cm)["a"], "eA==");
    }
}
