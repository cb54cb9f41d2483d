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
//!
//! The builder reads the repository only through the [`files::BuildFiles`] its caller opens a
//! [`Repo`] with (the file layer's `root::source::Source`: the working tree or a commit's
//! tree); this port defines that trait and imports nothing of the file layer.

mod closure;
mod external;
mod fieldspec;
pub mod files;
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
mod sourceignore;
mod transform;

/// How deep kustomizations may nest (resources and components): deeper chains are refused
/// with an error rather than risking the stack.
pub const MAX_NESTING: usize = 100;

use camino::{Utf8Path, Utf8PathBuf};
use std::sync::Arc;

use files::{Access, BuildFiles};
pub use flux_generate::{FluxFields, FluxImage, FluxPatch};
use fsroot::Fs;

/// One rendered Kubernetes object.
#[derive(Debug, Clone, PartialEq)]
pub struct Resource {
    /// The object as kustomize would print it.
    pub object: std::sync::Arc<serde_json::Value>,
    /// Repo-relative file it came from (the kustomization file for generated objects).
    pub origin: Utf8PathBuf,
    /// Repo-relative patch files (or kustomization files for inline patches) that changed it.
    pub patched_by: Vec<Utf8PathBuf>,
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
    #[error("{file}: `{field}` is not supported by the native kustomize builder")]
    Unsupported { file: Utf8PathBuf, field: String },
    #[error("cannot read {path}: {source}")]
    Io {
        path: Utf8PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}{loc}: invalid YAML: {message}", loc = line.map(|l| format!(":{l}")).unwrap_or_default())]
    Yaml {
        file: Utf8PathBuf,
        line: Option<usize>,
        message: String,
    },
    #[error("{file}: {message}")]
    Invalid { file: Utf8PathBuf, message: String },
    /// YAML cellgen refuses to parse (`crate::ports::yaml::depth`).
    #[error("{file}:{line}: {message}")]
    Refused {
        file: Utf8PathBuf,
        line: usize,
        message: String,
    },
    #[error("{file}: failed to decode Kubernetes YAML: {message}")]
    NotKubernetes { file: Utf8PathBuf, message: String },
    #[error("{file}: resource `{entry}` does not exist")]
    MissingResource { file: Utf8PathBuf, entry: String },
    #[error("component {path} does not exist")]
    MissingComponent { path: Utf8PathBuf },
    #[error(
        "{path} is a {kind}, not a kustomize Component (kind: Component, apiVersion: kustomize.config.k8s.io/v1alpha1)"
    )]
    NotAComponent { path: Utf8PathBuf, kind: String },
    #[error("{file}: may not add resource with an already registered id: {id}")]
    DuplicateId { file: Utf8PathBuf, id: String },
    #[error("{file}: {message}")]
    Patch { file: Utf8PathBuf, message: String },
    #[error("`{command}` failed: {stderr}")]
    External { command: String, stderr: String },
    #[error(
        "{file}: `{entry}` cannot be read: {why}; Flux refuses any path that is not in or below the repository root"
    )]
    OutsideRoot {
        file: Utf8PathBuf,
        entry: String,
        why: String,
    },
    #[error(
        "{file}: `{entry}` goes through the symbolic link {link}; Flux's source-controller leaves symbolic links out of the artifact it builds from, so Flux would not find it (commit the file itself)"
    )]
    Symlink {
        file: Utf8PathBuf,
        entry: String,
        link: Utf8PathBuf,
    },
    #[error(
        "{file}: `{entry}` ({path}) is left out of Flux's artifact by {rule}, so Flux would not find it: change the rule or stop referring to the file"
    )]
    Ignored {
        file: Utf8PathBuf,
        entry: String,
        path: Utf8PathBuf,
        rule: String,
    },
    #[error(
        "{dir}: the entry `{name}` has a name that is not valid UTF-8 (shown with U+FFFD for the bytes that are not): Flux would read it, but cellgen works with UTF-8 paths only, so that every message names a file exactly; rename it"
    )]
    NotUtf8Name { dir: Utf8PathBuf, name: String },
    #[error("{path} is not valid UTF-8 (first bad byte at offset {offset})")]
    NotUtf8 { path: Utf8PathBuf, offset: usize },
    #[error(
        "{file}: kustomizations nest more than {limit} levels deep (from {start} through {deepest}); flatten the chain"
    )]
    TooDeep {
        /// The kustomization listing the entry one level too deep.
        file: Utf8PathBuf,
        start: Utf8PathBuf,
        deepest: Utf8PathBuf,
        limit: usize,
    },
}

impl BuildError {
    /// The repository file (and line) an error is about, when it names one.
    pub fn location(&self) -> Option<(&Utf8Path, Option<usize>)> {
        match self {
            BuildError::Yaml { file, line, .. } => Some((file, *line)),
            BuildError::Refused { file, line, .. } => Some((file, Some(*line))),
            BuildError::Unsupported { file, .. }
            | BuildError::Invalid { file, .. }
            | BuildError::NotKubernetes { file, .. }
            | BuildError::MissingResource { file, .. }
            | BuildError::DuplicateId { file, .. }
            | BuildError::Patch { file, .. }
            | BuildError::OutsideRoot { file, .. }
            | BuildError::Symlink { file, .. }
            | BuildError::Ignored { file, .. } => Some((file, None)),
            BuildError::Io { path, .. }
            | BuildError::MissingComponent { path }
            | BuildError::NotAComponent { path, .. }
            | BuildError::NotUtf8 { path, .. } => Some((path, None)),
            BuildError::TooDeep { file, .. } => Some((file, None)),
            BuildError::NotUtf8Name { dir, .. } => Some((dir, None)),
            BuildError::External { .. } => None,
        }
    }
}

/// A repository as Flux's artifact has it (reads confined to the root, no symbolic links,
/// what `.sourceignore` leaves out absent), opened once for any number of builds.
pub struct Repo {
    fs: Fs,
}

impl Repo {
    /// The repository at `root` as `files` has it (the working tree or a commit's tree).
    pub fn open(root: &Utf8Path, files: Arc<dyn BuildFiles>) -> Result<Repo, BuildError> {
        Ok(Repo {
            fs: Fs::new(root, files)?,
        })
    }

    /// [`Repo::open`], remembering into `caches` (another repository's, see
    /// [`Repo::caches`]): parses and builds are keyed by content, so the two sides of a
    /// comparison share them.
    pub fn open_sharing(
        root: &Utf8Path,
        files: Arc<dyn BuildFiles>,
        caches: Arc<Caches>,
    ) -> Result<Repo, BuildError> {
        Ok(Repo {
            fs: Fs::with_caches(root, files, caches)?,
        })
    }

    /// What this repository's builds remember, for another to share.
    pub fn caches(&self) -> Arc<Caches> {
        self.fs.shared_caches()
    }

    /// Whether `other` is the same repository root read with the same artifact rules
    /// (`.sourceignore`), whatever its source.
    pub fn same_rules(&self, other: &Repo) -> bool {
        self.fs.same_rules(&other.fs)
    }

    /// Renders what kustomize-controller would build for a Kustomization with
    /// `spec.path = path` and the fields it writes into the kustomization there (`flux`:
    /// components, patches, images, name prefix/suffix, target namespace), in `kubectl
    /// kustomize` output order.
    pub fn build(
        &self,
        path: &str,
        flux: &FluxFields,
        mode: Mode,
    ) -> Result<Vec<Resource>, BuildError> {
        match mode {
            Mode::Native => native::build(&self.fs, path, flux),
            Mode::External => external::build(&self.fs, path, flux),
            Mode::Auto => match native::build(&self.fs, path, flux) {
                Err(BuildError::Unsupported { .. }) => external::build(&self.fs, path, flux),
                other => other,
            },
        }
    }

    /// [`Repo::build`], and every read it made (for a build of another source to take when
    /// each answers the same there, see `root::source::Source::replays`).
    pub fn build_recorded(
        &self,
        path: &str,
        flux: &FluxFields,
        mode: Mode,
    ) -> (Result<Vec<Resource>, BuildError>, Vec<Access>) {
        let (fs, recorder) = self.fs.recorded();
        let built = Repo { fs }.build(path, flux, mode);
        (built, recorder.reads())
    }

    /// The raw `kustomize build` / `kubectl kustomize` output for what Flux would build at
    /// `path` with `flux`, run on a copy of just the files it reads.
    pub fn external_output(&self, path: &str, flux: &FluxFields) -> Result<String, BuildError> {
        external::build_text(&self.fs, path, flux).map(|(text, _)| text)
    }

    /// Whether `entry`, a `spec.components` path of a layer whose `spec.path` is `path`,
    /// names a Kustomize Component Flux can build: inside the repository, reached through no
    /// symbolic link, in the artifact, with a kustomization of `kind: Component`. A missing
    /// one is fine with `missing_ok` (`ignoreMissingComponents`).
    /// Errors name `listed_in`, the file whose `spec.components` lists it.
    pub fn check_component(
        &self,
        path: &str,
        entry: &str,
        missing_ok: bool,
        listed_in: &Utf8Path,
    ) -> Result<(), BuildError> {
        native::check_component(&self.fs, path, entry, missing_ok, listed_in)
    }
}

/// The raw `kustomize build` / `kubectl kustomize` output for what kustomize builds at
/// `path` with `components` appended, run on a copy of just the files it reads (tests and
/// benches compare the native builder with it byte for byte).
pub fn external_output(
    files: Arc<dyn BuildFiles>,
    repo_root: &Utf8Path,
    path: &str,
    components: &[String],
) -> Result<String, BuildError> {
    Repo::open(repo_root, files)?.external_output(path, &plain(components))
}

/// The fields of [`build`]: components appended to the kustomization as written (no Flux
/// read-and-write-back).
fn plain(components: &[String]) -> FluxFields {
    FluxFields {
        components: components.to_vec(),
        ..FluxFields::default()
    }
}

/// What kustomize builds at `path` (relative to `repo_root`, read through `files`) with
/// `components` (relative to `path`) appended to its kustomization, in `kubectl kustomize`
/// output order; a directory without a kustomization gets the one Flux generates.
pub fn build(
    files: Arc<dyn BuildFiles>,
    repo_root: &Utf8Path,
    path: &str,
    components: &[String],
    mode: Mode,
) -> Result<Vec<Resource>, BuildError> {
    Repo::open(repo_root, files)?.build(path, &plain(components), mode)
}

// What the builds of one command remember: here, above the modules that use it, so that none
// of them imports another for it.

/// Patterns remembered; past this, new ones are compiled every time.
const MAX_REGEXES: usize = 4096;

/// What the builds of one command remember, owned by the repository it opened (`Repo`, through
/// its `Fs`): dropped with it, so nothing outlives the command or leaks between two of them
/// (a test, a library caller building two repositories). Cells are written from one template,
/// so most files a command builds hold one of a few texts: each is parsed once per command,
/// each Go pattern compiled once, and a directory listing only files built once per content.
/// Every entry is a function of content, never of a path, so two repositories (the two sides
/// of `cellgen diff`) may share one `Caches`.
#[derive(Default)]
pub struct Caches {
    /// Kustomization files by content (`load::parse_kustomization`).
    kustomizations: load::memo::Memo<serde_json::Value>,
    /// Resource files by content (`load::parse_objects_marked`).
    objects: load::memo::Memo<load::MarkedObjects>,
    /// Go patterns (image names, patch targets) compiled (`select::go_regex`).
    regexes: std::sync::Mutex<foldhash::HashMap<String, regex::Regex>>,
    /// Builds of directories listing only files (`native::plain`).
    plain: std::sync::Mutex<native::PlainMemo>,
    /// Builds `plain` answered from its memo (tests see that it is used).
    plain_hits: std::sync::atomic::AtomicUsize,
}

impl Caches {
    /// `pattern` compiled by `compile`, or what it gave before (successes only are kept).
    fn regex(
        &self,
        pattern: &str,
        compile: impl FnOnce(&str) -> Result<regex::Regex, String>,
    ) -> Result<regex::Regex, String> {
        if let Some(re) = lock_cache(&self.regexes).get(pattern) {
            return Ok(re.clone());
        }
        let re = compile(pattern)?;
        let mut map = lock_cache(&self.regexes);
        if map.len() < MAX_REGEXES {
            map.insert(pattern.to_string(), re.clone());
        }
        Ok(re)
    }

    fn plain_hit(&self) {
        self.plain_hits
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// How many builds `native::plain` answered from its memo.
    pub fn plain_hits(&self) -> usize {
        self.plain_hits.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// Whole entries are inserted, never half-written ones: a poisoned lock's map is whole.
fn lock_cache<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
