//! Offline rendering of Flux Kustomizations: what kustomize-controller builds for
//! `spec.path` + `spec.components`, without a cluster.
//!
//! [`build`] runs a native re-implementation of the kustomize (v5) features real
//! repositories use; anything else is reported as [`BuildError::Unsupported`]
//! (never silently mis-built) or, in [`Mode::Auto`], handed to an external
//! `kustomize build` / `kubectl kustomize`.
//!
//! Native support: `resources` (files, `kind: List`, directories / nested
//! kustomizations, `bases`), `components` (kustomization's own, then Flux's),
//! `namespace`, `namePrefix`/`nameSuffix`, `commonLabels`, `labels`
//! (includeSelectors/includeTemplates), `commonAnnotations`, `patches`
//! (strategic merge or JSON 6902, inline or `path`, with target selectors),
//! `patchesStrategicMerge`, `patchesJson6902`, `images`, `replicas`,
//! `configMapGenerator`/`secretGenerator` (literals, files, envs, behavior,
//! options, content-hash suffix) and `generatorOptions`. Renames (prefix, suffix,
//! hash, namespace) are followed by kustomize's name-reference fix-up, and output
//! uses kustomize's legacy kind order. The top kustomization is the one
//! kustomize-controller writes: generated for a directory without one, with the
//! Flux Kustomization's fields written into it (see `flux_generate`).
//!
//! Every fixture under tests/fixtures/kustomize is checked against `kubectl
//! kustomize` (kustomize v5.5.0).

mod external;
mod fieldspec;
mod flux_generate;
mod generators;
mod kustomization;
mod load;
mod namerefs;
mod native;
mod order;
mod patch_json6902;
mod patch_smp;
mod patches;
mod resid;
mod select;
mod transform;

use std::path::{Path, PathBuf};

pub use flux_generate::{FluxFields, FluxImage, FluxPatch};

/// One rendered Kubernetes object.
#[derive(Debug, Clone, PartialEq)]
pub struct Resource {
    /// The object as kustomize would print it.
    pub object: serde_json::Value,
    /// Repo-relative file it came from (the kustomization file for generated objects).
    pub origin: PathBuf,
    /// Repo-relative patch files (or kustomization files for inline patches) that changed it.
    pub patched_by: Vec<PathBuf>,
}

/// How [`build`] renders a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Native builder only; unsupported features are errors.
    Native,
    /// Native builder, falling back to an external kustomize for unsupported features.
    Auto,
    /// Always shell out to `kustomize build` (or `kubectl kustomize`).
    External,
}

/// Why a build failed. Every message names the file involved.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("{file}: `{field}` is not supported by the native kustomize builder", file = .file.display())]
    Unsupported { file: PathBuf, field: String },
    #[error("cannot read {path}: {source}", path = .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}{loc}: invalid YAML: {message}", file = .file.display(), loc = line.map(|l| format!(":{l}")).unwrap_or_default())]
    Yaml {
        file: PathBuf,
        line: Option<usize>,
        message: String,
    },
    #[error("{file}: {message}", file = .file.display())]
    Invalid { file: PathBuf, message: String },
    #[error("{file}: failed to decode Kubernetes YAML: {message}", file = .file.display())]
    NotKubernetes { file: PathBuf, message: String },
    #[error("{file}: resource `{entry}` does not exist", file = .file.display())]
    MissingResource { file: PathBuf, entry: String },
    #[error("component {path} does not exist", path = .path.display())]
    MissingComponent { path: PathBuf },
    #[error("{path} is a {kind}, not a kustomize Component (kind: Component, apiVersion: kustomize.config.k8s.io/v1alpha1)", path = .path.display())]
    NotAComponent { path: PathBuf, kind: String },
    #[error("{file}: may not add resource with an already registered id: {id}", file = .file.display())]
    DuplicateId { file: PathBuf, id: String },
    #[error("{file}: {message}", file = .file.display())]
    Patch { file: PathBuf, message: String },
    #[error("`{command}` failed: {stderr}")]
    External { command: String, stderr: String },
}

/// Renders what kustomize-controller would build for a Kustomization with
/// `spec.path = path` (relative to `repo_root`) and `spec.components = components`
/// (relative to `path`), in `kubectl kustomize` output order.
pub fn build(
    repo_root: &Path,
    path: &str,
    components: &[String],
    mode: Mode,
) -> Result<Vec<Resource>, BuildError> {
    let flux = FluxFields {
        components: components.to_vec(),
        ..FluxFields::default()
    };
    build_flux(repo_root, path, &flux, mode)
}

/// Renders what kustomize-controller would build for a Kustomization with
/// `spec.path = path` (relative to `repo_root`) and the other fields it writes into the
/// kustomization there (`flux`: components, patches, images, name prefix/suffix, target
/// namespace), in `kubectl kustomize` output order.
pub fn build_flux(
    repo_root: &Path,
    path: &str,
    flux: &FluxFields,
    mode: Mode,
) -> Result<Vec<Resource>, BuildError> {
    match mode {
        Mode::Native => native::build(repo_root, path, flux),
        Mode::External => external::build(repo_root, path, flux),
        Mode::Auto => match native::build(repo_root, path, flux) {
            Err(BuildError::Unsupported { .. }) => external::build(repo_root, path, flux),
            other => other,
        },
    }
}
