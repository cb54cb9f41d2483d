//! Every repository file a kustomize build of a path would read, found from the
//! kustomization files alone, so the external fallback can be run on a copy holding only
//! those files: it then cannot read anything outside the repository, and sees the
//! repository as Flux's artifact has it (no symbolic links). Every reference is checked as
//! the native builder checks it: absolute paths, paths leaving the root and links are
//! errors naming the file and the entry.

use camino::{Utf8Path, Utf8PathBuf};
use std::collections::BTreeSet;

use serde_json::Value;

use super::fsroot::{Entry, Fs};
use super::{BuildError, MAX_NESTING, flux_generate, load};

/// Builtin plugin kinds Flux runs (plugins are otherwise disabled), and the fields of
/// theirs that name files.
const BUILTIN_PLUGINS: &[&str] = &[
    "AnnotationsTransformer",
    "ConfigMapGenerator",
    "HashTransformer",
    "ImageTagTransformer",
    "LabelTransformer",
    "NamespaceTransformer",
    "PatchJson6902Transformer",
    "PatchStrategicMergeTransformer",
    "PatchTransformer",
    "PrefixSuffixTransformer",
    "PrefixTransformer",
    "ReplacementTransformer",
    "ReplicaCountTransformer",
    "SecretGenerator",
    "SortOrderTransformer",
    "SuffixTransformer",
    "ValueAddTransformer",
];

pub struct Closure<'a> {
    fs: &'a Fs,
    /// Absolute paths of the files to copy.
    pub files: BTreeSet<Utf8PathBuf>,
    seen_dirs: BTreeSet<Utf8PathBuf>,
    depth: usize,
}

fn is_remote(entry: &str) -> bool {
    entry.contains("://")
        || entry.starts_with("github.com/")
        || entry.starts_with("gitlab.com/")
        || entry.starts_with("bitbucket.org/")
        || entry.starts_with("git@")
        || entry.starts_with("git::")
}

fn strings<'v>(v: &'v Value, key: &str) -> impl Iterator<Item = &'v str> {
    v.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

fn objects<'v>(v: &'v Value, key: &str) -> impl Iterator<Item = &'v Value> {
    v.get(key).and_then(Value::as_array).into_iter().flatten()
}

impl<'a> Closure<'a> {
    pub fn new(fs: &'a Fs) -> Self {
        Closure {
            fs,
            files: BTreeSet::new(),
            seen_dirs: BTreeSet::new(),
            depth: 0,
        }
    }

    /// A file entry: added when it exists (kustomize reports it missing otherwise).
    fn file(
        &mut self,
        dir: &Utf8Path,
        entry: &str,
        listed_in: &Utf8Path,
    ) -> Result<Entry, BuildError> {
        let abs = self.fs.resolve(dir, entry, listed_in)?;
        let kind = self.fs.entry(&abs, listed_in, entry)?;
        match kind {
            Entry::File => {
                self.files.insert(abs);
            }
            Entry::Dir => self.dir(&abs, false, listed_in)?,
            Entry::Missing => {}
        }
        Ok(kind)
    }

    /// A kustomization directory (`top`: Flux's spec.path, which may have none), listed in
    /// `listed_in`.
    pub fn dir(
        &mut self,
        dir: &Utf8Path,
        top: bool,
        listed_in: &Utf8Path,
    ) -> Result<(), BuildError> {
        if !self.seen_dirs.insert(dir.to_path_buf()) {
            return Ok(());
        }
        if self.depth >= MAX_NESTING {
            return Err(BuildError::TooDeep {
                file: listed_in.to_path_buf(),
                start: self.fs.rel(dir),
                deepest: self.fs.rel(dir),
                limit: MAX_NESTING,
            });
        }
        self.depth += 1;
        let res = self.dir_inner(dir, top);
        self.depth -= 1;
        res
    }

    fn dir_inner(&mut self, dir: &Utf8Path, top: bool) -> Result<(), BuildError> {
        // A directory that is not there is the build's error to report.
        if self.fs.entry(dir, &self.fs.rel(dir), "")? != Entry::Dir {
            return Ok(());
        }
        let Some(kfile) = self.fs.kustomization_file(dir)? else {
            if top {
                let mut parsed = Default::default();
                for entry in flux_generate::resources(self.fs, dir, &mut parsed)? {
                    self.file(dir, &entry, &self.fs.rel(&dir.join("kustomization.yaml")))?;
                }
            }
            return Ok(());
        };
        self.files.insert(kfile.clone());
        let file = self.fs.rel(&kfile);
        let k = load::parse_kustomization(self.fs.caches(), &file, &self.fs.read_text(&kfile)?)?;
        for key in ["resources", "bases", "components", "configurations", "crds"] {
            for entry in strings(&k, key) {
                if !is_remote(entry) {
                    self.file(dir, entry, &file)?;
                }
            }
        }
        for entry in strings(&k, "patchesStrategicMerge") {
            if load::parse_objects(self.fs.caches(), &file, entry).is_err() {
                self.file(dir, entry, &file)?;
            }
        }
        for key in ["patches", "patchesJson6902", "replacements"] {
            for p in objects(&k, key) {
                if let Some(path) = p.get("path").and_then(Value::as_str) {
                    self.file(dir, path, &file)?;
                }
            }
        }
        if let Some(path) = k.pointer("/openapi/path").and_then(Value::as_str) {
            self.file(dir, path, &file)?;
        }
        for key in ["configMapGenerator", "secretGenerator"] {
            for g in objects(&k, key) {
                self.generator_files(dir, g, &file)?;
            }
        }
        if k.get("helmCharts").is_some()
            || k.get("helmGlobals").is_some()
            || k.get("helmChartInflationGenerator").is_some()
        {
            return Err(BuildError::Invalid {
                file,
                message: "helmCharts need Helm, which Flux's kustomize-controller does not enable; Flux fails this build".into(),
            });
        }
        for key in ["generators", "transformers", "validators"] {
            for entry in strings(&k, key) {
                self.plugin_entry(dir, entry, &file, key)?;
            }
        }
        Ok(())
    }

    fn generator_files(
        &mut self,
        dir: &Utf8Path,
        g: &Value,
        file: &Utf8Path,
    ) -> Result<(), BuildError> {
        for src in strings(g, "files") {
            let path = src.split_once('=').map_or(src, |(_, p)| p);
            self.file(dir, path, file)?;
        }
        for env in strings(g, "envs").chain(g.get("env").and_then(Value::as_str)) {
            self.file(dir, env, file)?;
        }
        Ok(())
    }

    /// A `generators`/`transformers`/`validators` entry: inline plugin configuration, or a
    /// file of them; only kustomize's builtin plugins run under Flux.
    fn plugin_entry(
        &mut self,
        dir: &Utf8Path,
        entry: &str,
        file: &Utf8Path,
        key: &str,
    ) -> Result<(), BuildError> {
        let configs = match load::parse_objects(self.fs.caches(), file, entry) {
            Ok(docs) if !docs.is_empty() => docs,
            _ => {
                let abs = self.fs.resolve(dir, entry, file)?;
                match self.fs.entry(&abs, file, entry)? {
                    Entry::File => {
                        self.files.insert(abs.clone());
                        load::parse_objects(
                            self.fs.caches(),
                            &self.fs.rel(&abs),
                            &self.fs.read_text(&abs)?,
                        )?
                    }
                    Entry::Dir => {
                        return Err(BuildError::Unsupported {
                            file: file.to_path_buf(),
                            field: format!(
                                "{key}: {entry} (a kustomization of plugin configurations)"
                            ),
                        });
                    }
                    Entry::Missing => return Ok(()),
                }
            }
        };
        for c in &configs {
            let kind = c.get("kind").and_then(Value::as_str).unwrap_or("");
            if !BUILTIN_PLUGINS.contains(&kind) {
                return Err(BuildError::Invalid {
                    file: file.to_path_buf(),
                    message: format!(
                        "{key}: `{kind}` is not a builtin kustomize plugin; Flux builds with plugins disabled"
                    ),
                });
            }
            match kind {
                "PatchTransformer" | "PatchJson6902Transformer" => {
                    if let Some(p) = c.get("path").and_then(Value::as_str) {
                        self.file(dir, p, file)?;
                    }
                }
                "PatchStrategicMergeTransformer" => {
                    for p in strings(c, "paths") {
                        if load::parse_objects(self.fs.caches(), file, p).is_err() {
                            self.file(dir, p, file)?;
                        }
                    }
                }
                "ConfigMapGenerator" | "SecretGenerator" => self.generator_files(dir, c, file)?,
                "ReplacementTransformer" => {
                    for r in objects(c, "replacements") {
                        if let Some(p) = r.get("path").and_then(Value::as_str) {
                            self.file(dir, p, file)?;
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}
