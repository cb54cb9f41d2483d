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
//! uses kustomize's legacy kind order. A directory without a kustomization file
//! gets the one Flux generates (see `flux_generate`).
//!
//! Every fixture under tests/fixtures/kustomize is checked against `kubectl
//! kustomize` (kustomize v5.5.0).

mod closure;
mod external;
mod fieldspec;
mod flux_generate;
mod fsroot;
mod generators;
mod kustomization;
mod load;
mod namerefs;
mod native;
mod order;
mod patch_json6902;
mod patch_smp;
mod patches;
mod replacements;
mod resid;
mod select;
mod smp_schema;
mod transform;
pub mod yaml;

/// How deep kustomizations may nest (resources and components): deeper chains are refused
/// with an error rather than risking the stack.
pub const MAX_NESTING: usize = 100;

use std::path::{Path, PathBuf};

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
    #[error("{file}: `{entry}` cannot be read: {why}; Flux refuses any path that is not in or below the repository root", file = .file.display())]
    OutsideRoot {
        file: PathBuf,
        entry: String,
        why: String,
    },
    #[error("{file}: `{entry}` goes through the symbolic link {link}; Flux's source-controller leaves symbolic links out of the artifact it builds from, so Flux would not find it (commit the file itself)", file = .file.display(), link = .link.display())]
    Symlink {
        file: PathBuf,
        entry: String,
        link: PathBuf,
    },
    #[error("{path} is not valid UTF-8 (first bad byte at offset {offset})", path = .path.display())]
    NotUtf8 { path: PathBuf, offset: usize },
    #[error("{start}: kustomizations nest more than {limit} levels deep (through {deepest}); flatten the chain", start = .start.display(), deepest = .deepest.display())]
    TooDeep {
        start: PathBuf,
        deepest: PathBuf,
        limit: usize,
    },
}

impl BuildError {
    /// The repository file (and line) an error is about, when it names one.
    pub fn location(&self) -> Option<(&Path, Option<usize>)> {
        match self {
            BuildError::Yaml { file, line, .. } => Some((file, *line)),
            BuildError::Unsupported { file, .. }
            | BuildError::Invalid { file, .. }
            | BuildError::NotKubernetes { file, .. }
            | BuildError::MissingResource { file, .. }
            | BuildError::DuplicateId { file, .. }
            | BuildError::Patch { file, .. }
            | BuildError::OutsideRoot { file, .. }
            | BuildError::Symlink { file, .. } => Some((file, None)),
            BuildError::Io { path, .. }
            | BuildError::MissingComponent { path }
            | BuildError::NotAComponent { path, .. }
            | BuildError::NotUtf8 { path, .. } => Some((path, None)),
            BuildError::TooDeep { start, .. } => Some((start, None)),
            BuildError::External { .. } => None,
        }
    }
}

/// The raw `kustomize build` / `kubectl kustomize` output for what Flux would build at
/// `path` with `components`, run on a copy of just the files it reads (tests and benches
/// compare the native builder with it byte for byte).
pub fn external_output(
    repo_root: &Path,
    path: &str,
    components: &[String],
) -> Result<String, BuildError> {
    external::build_text(repo_root, path, components).map(|(text, _)| text)
}

/// Renders what kustomize-controller would apply for a Kustomization with
/// `spec.path = path` (relative to `repo_root`) and `spec.components = components`
/// (relative to `path`), in `kubectl kustomize` output order.
pub fn build(
    repo_root: &Path,
    path: &str,
    components: &[String],
    mode: Mode,
) -> Result<Vec<Resource>, BuildError> {
    match mode {
        Mode::Native => native::build(repo_root, path, components),
        Mode::External => external::build(repo_root, path, components),
        Mode::Auto => match native::build(repo_root, path, components) {
            Err(BuildError::Unsupported { .. }) => external::build(repo_root, path, components),
            other => other,
        },
    }
}
