//! Builds keyed by (layer path, Flux fields), shared by the cells (and threads) that use them;
//! and, for `cellgen diff`, by the two sides of a comparison when a build read the same files.

use camino::Utf8Path;
use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};

use crate::ports::envsubst::Prepared;
use crate::ports::kustomize::{BuildError, FluxFields, Mode, Repo, Resource};
use crate::root::source::{Access, Source};

/// A build, shared between the cells that use it.
pub type Built = Arc<Result<Vec<Resource>, Arc<BuildError>>>;

/// One [`Prepared`] per resource of a build (made when first substituted), shared like the
/// build: cells that build the same layer emit each object once and share substitution results.
pub type PreparedObjects = Arc<[OnceLock<Prepared>]>;

/// A build and its prepared objects.
#[derive(Clone)]
pub(crate) struct Entry {
    pub(crate) built: Built,
    pub(crate) prepared: PreparedObjects,
    /// What the build read, when its cache records (see [`BuildCache::recording`]).
    reads: Option<Arc<[Access]>>,
}

/// Builds by layer path, then Flux fields (a path is mostly built with one set of fields), each
/// a slot filled once. Looked up by `&str` and compared field by field, without copying a key.
type Slots = foldhash::HashMap<String, Vec<(FluxFields, Slot)>>;
type Slot = Arc<OnceLock<Entry>>;

fn find<'a>(slots: &'a Slots, path: &str, flux: &FluxFields) -> Option<&'a Slot> {
    slots
        .get(path)?
        .iter()
        .find(|(f, _)| f == flux)
        .map(|(_, slot)| slot)
}

/// Builds keyed by (path, Flux fields): cells share layers. Shared by the threads that check
/// cells: each build is made once, by the first thread that needs it (the others wait for it).
pub struct BuildCache {
    /// The repository as Flux's artifact has it, opened once (or why it cannot be).
    repo: Result<Repo, Arc<BuildError>>,
    mode: Mode,
    builds: Mutex<Slots>,
    /// Components found buildable, by (layer path, entry, missing_ok): cells list the same ones.
    components_ok: Mutex<HashSet<(String, String, bool)>>,
    source: Source,
    /// Whether builds keep what they read, for another cache to share them.
    record: bool,
    /// A recording cache of the same repository at another source: its builds are taken
    /// when every read they made answers the same here.
    shared: Option<Arc<BuildCache>>,
}

impl BuildCache {
    pub fn new(root: &Utf8Path, mode: Mode) -> BuildCache {
        BuildCache::with_source(root, Source::disk(root), mode)
    }

    /// Builds of the repository at `root` as `source` has it (the working tree or a commit).
    pub fn with_source(root: &Utf8Path, source: Source, mode: Mode) -> BuildCache {
        BuildCache::open(root, source, mode, false, None)
    }

    /// Like [`BuildCache::with_source`], keeping what each build reads, so that a cache made
    /// with [`BuildCache::sharing`] takes the builds that read the same there.
    pub fn recording(root: &Utf8Path, source: Source, mode: Mode) -> BuildCache {
        BuildCache::open(root, source, mode, true, None)
    }

    /// Builds of the repository at `root` as `source` has it, taking `other`'s (a recording
    /// cache, same root and mode) when every file and directory they read is the same here:
    /// `cellgen diff` builds an unchanged layer once for both sides. Nothing is shared when the
    /// artifact rules differ (a `.sourceignore` changed).
    pub fn sharing(
        root: &Utf8Path,
        source: Source,
        mode: Mode,
        other: Arc<BuildCache>,
    ) -> BuildCache {
        BuildCache::open(root, source, mode, false, Some(other))
    }

    fn open(
        root: &Utf8Path,
        source: Source,
        mode: Mode,
        record: bool,
        shared: Option<Arc<BuildCache>>,
    ) -> BuildCache {
        // The other side's parses are the same content's: its caches are shared.
        let caches = shared
            .as_ref()
            .and_then(|other| other.repo.as_ref().ok())
            .map(Repo::caches);
        let repo = match caches {
            Some(caches) => Repo::open_sharing(root, source.files(), caches),
            None => Repo::open(root, source.files()),
        };
        let shared = shared.filter(|other| {
            other.mode == mode
                && match (&other.repo, &repo) {
                    (Ok(theirs), Ok(ours)) => theirs.same_rules(ours),
                    _ => false,
                }
        });
        BuildCache {
            repo: repo.map_err(Arc::new),
            mode,
            builds: Mutex::new(Slots::default()),
            components_ok: Mutex::new(HashSet::new()),
            source,
            record,
            shared,
        }
    }

    /// Whether this cache keeps what its builds read ([`BuildCache::recording`]).
    pub fn records(&self) -> bool {
        self.record
    }

    pub fn build(&self, path: &str, flux: &FluxFields) -> Built {
        self.entry(path, flux).built
    }

    pub(crate) fn entry(&self, path: &str, flux: &FluxFields) -> Entry {
        let slot = {
            let mut builds = lock(&self.builds);
            match find(&builds, path, flux) {
                Some(slot) => slot.clone(),
                None => {
                    let slot = Slot::default();
                    builds
                        .entry(path.to_string())
                        .or_default()
                        .push((flux.clone(), slot.clone()));
                    slot
                }
            }
        };
        // Built outside the map's lock, so other builds go on meanwhile.
        slot.get_or_init(|| {
            if let Some(entry) = self.shared_entry(path, flux) {
                return entry;
            }
            let (built, reads): (Built, _) = match &self.repo {
                Ok(repo) if self.record => {
                    let (built, reads) = repo.build_recorded(path, flux, self.mode);
                    (Arc::new(built.map_err(Arc::new)), Some(reads.into()))
                }
                Ok(repo) => (
                    Arc::new(repo.build(path, flux, self.mode).map_err(Arc::new)),
                    None,
                ),
                // Nothing was read: a recording cache keeps the (empty) record.
                Err(e) => (
                    Arc::new(Err(e.clone())),
                    self.record.then(|| Vec::new().into()),
                ),
            };
            let count = built.as_ref().as_ref().map_or(0, Vec::len);
            Entry {
                built,
                prepared: (0..count).map(|_| OnceLock::new()).collect(),
                reads,
            }
        })
        .clone()
    }

    /// The shared cache's build of (`path`, `flux`), when it has made it and every read it made
    /// answers the same here. Only a finished build is taken (never waited for): the shared
    /// cache does not depend on this one, and a build not yet made is simply made here.
    fn shared_entry(&self, path: &str, flux: &FluxFields) -> Option<Entry> {
        let other = self.shared.as_ref()?;
        let slot = find(&lock(&other.builds), path, flux)?.clone();
        let entry = slot.get()?;
        let reads = entry.reads.as_ref()?;
        self.source.replays(reads).then(|| entry.clone())
    }

    /// Whether `component` (a `spec.components` entry of a layer at `path`, written in
    /// `listed_in`) is a Kustomize Component Flux can build (see `kustomize::Repo`).
    pub fn check_component(
        &self,
        path: &str,
        component: &str,
        missing_ok: bool,
        listed_in: &Utf8Path,
    ) -> Result<(), Arc<BuildError>> {
        // Only success is remembered: an error names `listed_in`, which differs per cell.
        let key = (path.to_string(), component.to_string(), missing_ok);
        if lock(&self.components_ok).contains(&key) {
            return Ok(());
        }
        match &self.repo {
            Ok(repo) => repo
                .check_component(path, component, missing_ok, listed_in)
                .map_err(Arc::new)?,
            Err(e) => return Err(e.clone()),
        }
        lock(&self.components_ok).insert(key);
        Ok(())
    }

    /// Forgets the builds of `path`, which no one will ask for again (a cell's own directory,
    /// once the cell is checked): a later ask builds it again. A recording cache keeps them
    /// for the cache that shares its builds.
    pub fn release(&self, path: &str) {
        if !self.record {
            lock(&self.builds).remove(path);
        }
    }

    pub fn distinct_builds(&self) -> usize {
        lock(&self.builds).values().map(Vec::len).sum()
    }
}

/// A lock's data, also after a panic in another thread (whole values are inserted, never
/// half-written ones).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A released build is made again when asked for; a recording cache keeps its builds for
    /// the cache that shares them.
    #[test]
    fn a_released_build_is_made_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("cells/a")).unwrap();
        std::fs::write(
            root.join("cells/a/kustomization.yaml"),
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [cm.yaml]\n",
        )
        .unwrap();
        std::fs::write(
            root.join("cells/a/cm.yaml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
        )
        .unwrap();
        let flux = FluxFields::flux();
        let objects = |cache: &BuildCache| {
            cache
                .build("cells/a", &flux)
                .as_ref()
                .as_ref()
                .map(Vec::len)
                .unwrap()
        };
        let cache = BuildCache::new(root, Mode::Native);
        assert_eq!(objects(&cache), 1);
        assert_eq!(cache.distinct_builds(), 1);
        cache.release("cells/a");
        assert_eq!(cache.distinct_builds(), 0);
        assert_eq!(objects(&cache), 1);
        assert_eq!(cache.distinct_builds(), 1);

        let recording = BuildCache::recording(root, Source::disk(root), Mode::Native);
        recording.build("cells/a", &flux);
        recording.release("cells/a");
        assert_eq!(recording.distinct_builds(), 1);
    }
}
