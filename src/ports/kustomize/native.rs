//! The native builder: kustomize's accumulate-then-transform recursion
//! (api/internal/target/kusttarget.go) for the supported feature set.

use camino::{Utf8Path, Utf8PathBuf};
use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::fieldspec::{self, NameBackRef};
use super::flux_generate::{self, FluxFields};
use super::fsroot::{Entry, Fs};
use super::generators::{self, GenCtx, GenKind};
use super::kustomization::Kustomization;
use super::load::Parsed;
use super::resid::Res;
use super::{BuildError, MAX_NESTING, Resource, load, namerefs, order, patches};
use super::{replacements, transform};

mod plain;

pub(super) use plain::Memo as PlainMemo;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// `spec.path`: may have no kustomization file (Flux generates one).
    Top,
    Resource,
    Component,
}

/// What a sub-kustomization contributed, kept to reuse when it is listed again.
#[derive(Clone)]
struct Built {
    resources: Vec<Res>,
    refs: Vec<NameBackRef>,
    /// Every directory entered while building it, for kustomize's cycle check.
    dirs: HashSet<Utf8PathBuf>,
}

pub struct Builder<'a> {
    pub fs: &'a Fs,
    /// The Flux Kustomization's fields, written into the top kustomization as Flux does.
    flux: &'a FluxFields,
    /// Parsed resource files, so each file is parsed once per build.
    parsed: Parsed,
    /// nameReference entries of `configurations` from every level, merged at the end.
    custom_refs: Vec<NameBackRef>,
    /// Kustomization directories being built, outermost first.
    chain: Vec<Utf8PathBuf>,
    /// Directories entered, per open sub-build (for `Built::dirs`).
    entered: Vec<HashSet<Utf8PathBuf>>,
    built: HashMap<Utf8PathBuf, Built>,
    /// Sub-kustomizations built once already: a second listing keeps its result.
    built_once: HashSet<Utf8PathBuf>,
}

/// The directory of `spec.path`, refused unless Flux's artifact has it.
fn top_dir(fs: &Fs, path: &str) -> Result<Utf8PathBuf, BuildError> {
    let shown = Utf8PathBuf::from(path);
    let dir = fs.resolve(&fs.root, path, &shown)?;
    if fs.entry(&dir, &shown, path)? != Entry::Dir {
        return Err(BuildError::Invalid {
            file: shown,
            message: "kustomization path not found".into(),
        });
    }
    Ok(dir)
}

pub fn build(fs: &Fs, path: &str, flux: &FluxFields) -> Result<Vec<Resource>, BuildError> {
    let dir = top_dir(fs, path)?;
    plain::build(fs, &dir, flux, || build_dir(fs, &dir, flux))
}

/// The build of `dir`, the directory of `spec.path`.
fn build_dir(fs: &Fs, dir: &Utf8Path, flux: &FluxFields) -> Result<Vec<Resource>, BuildError> {
    let mut b = Builder {
        fs,
        flux,
        parsed: HashMap::new(),
        custom_refs: Vec::new(),
        chain: Vec::new(),
        entered: Vec::new(),
        built: HashMap::new(),
        built_once: HashSet::new(),
    };
    let mut acc = Vec::new();
    let top_file = b.accumulate(dir, &mut acc, Role::Top)?;
    // kustomize adds generator hashes once, at the top, over the final content, then
    // fixes every reference to the renamed objects.
    for r in acc.iter_mut().filter(|r| r.needs_hash) {
        let name = format!("{}-{}", r.name(), generators::hash(&r.obj));
        r.store_previous_id();
        r.set_id(None, Some(&name));
        r.needs_hash = false;
    }
    let builtin = &fieldspec::builtin().name_refs;
    let refs: std::borrow::Cow<[NameBackRef]> = if b.custom_refs.is_empty() {
        std::borrow::Cow::Borrowed(builtin)
    } else {
        let mut all = builtin.clone();
        namerefs::merge_refs(&mut all, &b.custom_refs);
        std::borrow::Cow::Owned(all)
    };
    namerefs::fix(&mut acc, &refs, &top_file)?;
    // Objects annotated config.kubernetes.io/local-config (any value but "false") are
    // dropped from the output (IgnoreLocal).
    acc.retain(|r| {
        r.annotations()
            .and_then(|a| a.get("config.kubernetes.io/local-config"))
            .is_none_or(|v| v.as_str() == Some("false"))
    });
    for r in &mut acc {
        stringify_annotations(r, &top_file)?;
    }
    order::sort(&mut acc);
    Ok(acc
        .into_iter()
        .map(|r| Resource {
            object: std::sync::Arc::new(r.obj),
            origin: r.origin,
            patched_by: r.patched_by,
        })
        .collect())
}

/// See `Repo::check_component`; `listed_in` is the file whose `spec.components` lists `entry`.
pub fn check_component(
    fs: &Fs,
    path: &str,
    entry: &str,
    missing_ok: bool,
    listed_in: &Utf8Path,
) -> Result<(), BuildError> {
    if !flux_generate::is_local_relative_path(entry) {
        return Err(BuildError::Invalid {
            file: listed_in.to_path_buf(),
            message: format!("component path '{entry}' must be local and relative"),
        });
    }
    let base = fs.resolve(&fs.root, path, listed_in)?;
    let abs = fs.resolve(&base, entry, listed_in)?;
    if missing_ok && !flux_generate::exists(fs, &base, entry, listed_in)? {
        return Ok(());
    }
    match fs.entry(&abs, listed_in, entry)? {
        Entry::Missing => Err(BuildError::MissingComponent { path: fs.rel(&abs) }),
        Entry::File => Err(BuildError::NotAComponent {
            path: fs.rel(&abs),
            kind: "file".into(),
        }),
        Entry::Dir => {
            let Some(f) = fs.kustomization_file(&abs)? else {
                return Err(BuildError::Invalid {
                    file: fs.rel(&abs),
                    message:
                        "directory has no kustomization.yaml, kustomization.yml or Kustomization"
                            .into(),
                });
            };
            let rel = fs.rel(&f);
            let v = load::parse_kustomization(fs.caches(), &rel, &fs.read_text(&f)?)?;
            match v.get("kind").and_then(Value::as_str) {
                Some("Component") => Ok(()),
                kind => Err(BuildError::NotAComponent {
                    path: fs.rel(&abs),
                    kind: kind.unwrap_or("Kustomization").to_string(),
                }),
            }
        }
    }
}

/// kustomize rewrites every object's annotations from their text at the end of a build
/// (RemoveBuildAnnotations). Values read from files already hold their text; values set
/// since (JSON patches, replacements) print as Go would.
fn stringify_annotations(r: &mut Res, file: &Utf8Path) -> Result<(), BuildError> {
    // Removing the origin annotations (ClearAnnotation) drops an annotations field left
    // empty or null.
    if let Some(Value::Object(meta)) = r.obj.get_mut("metadata")
        && meta
            .get("annotations")
            .is_some_and(|a| a.is_null() || a.as_object().is_some_and(|m| m.is_empty()))
    {
        meta.remove("annotations");
    }
    let Some(Value::Object(ann)) = r.obj.pointer_mut("/metadata/annotations") else {
        return Ok(());
    };
    for (k, v) in ann.iter_mut() {
        let text = match &*v {
            Value::String(_) => continue,
            Value::Bool(b) => b.to_string(),
            Value::Number(n) if !n.is_f64() => n.to_string(),
            Value::Object(_) | Value::Array(_) => String::new(),
            _ => {
                return Err(BuildError::Unsupported {
                    file: file.to_path_buf(),
                    field: format!("annotation `{k}` set to a float or null after loading"),
                });
            }
        };
        *v = Value::String(text);
    }
    Ok(())
}

fn is_remote(entry: &str) -> bool {
    entry.contains("://")
        || entry.starts_with("github.com/")
        || entry.starts_with("gitlab.com/")
        || entry.starts_with("bitbucket.org/")
        || entry.starts_with("git@")
        || entry.starts_with("git::")
}

/// Appends `new` to `acc`, rejecting ids already present (resWrangler.Append).
pub fn append(acc: &mut Vec<Res>, new: Vec<Res>, file: &Utf8Path) -> Result<(), BuildError> {
    let mut seen: HashSet<_> = acc.iter().map(Res::id_key).collect();
    for r in new {
        if !seen.insert(r.id_key()) {
            return Err(BuildError::DuplicateId {
                file: file.to_path_buf(),
                id: r.id_string(),
            });
        }
        acc.push(r);
    }
    Ok(())
}

impl Builder<'_> {
    pub fn rel(&self, abs: &Utf8Path) -> Utf8PathBuf {
        self.fs.rel(abs)
    }

    /// Resolves `entry` (relative to `dir`, listed in `file`) inside the repository.
    pub fn resolve(
        &self,
        dir: &Utf8Path,
        entry: &str,
        file: &Utf8Path,
    ) -> Result<Utf8PathBuf, BuildError> {
        self.fs.resolve(dir, entry, file)
    }

    /// [`Fs::read_listed`].
    pub fn read_listed(
        &self,
        abs: &Utf8Path,
        file: &Utf8Path,
        entry: &str,
    ) -> Result<String, BuildError> {
        self.fs.read_listed(abs, file, entry)
    }

    /// The objects of a resource file, as resources originating there.
    fn objects(&mut self, abs: &Utf8Path) -> Result<Vec<Res>, BuildError> {
        let origin = self.rel(abs);
        if !self.parsed.contains_key(abs) {
            let text = self.fs.read_text(abs)?;
            let objs = load::parse_objects_marked(self.fs.caches(), &origin, &text)?;
            self.parsed.insert(abs.to_path_buf(), objs);
        }
        Ok(self.parsed[abs]
            .iter()
            .map(|(o, marks)| {
                let mut r = Res::new(o.clone(), origin.clone());
                r.empty_nulls = marks.clone();
                r
            })
            .collect())
    }

    fn load_kustomization(
        &mut self,
        dir: &Utf8Path,
        role: Role,
    ) -> Result<(Utf8PathBuf, Kustomization), BuildError> {
        if role == Role::Top {
            // `spec.path`: the kustomization kustomize-controller writes there, which kustomize
            // then reads like any other.
            let generated =
                flux_generate::kustomization(self.fs, dir, self.flux, &mut self.parsed)?;
            let rel = self.rel(&generated.file);
            let k = Kustomization::from_value(&rel, generated.value)?;
            k.enforce_fields(&rel)?;
            return Ok((rel, k));
        }
        match self.fs.kustomization_file(dir)? {
            Some(f) => {
                let rel = self.rel(&f);
                let v = load::parse_kustomization(self.fs.caches(), &rel, &self.fs.read_text(&f)?)?;
                let k = Kustomization::from_value(&rel, v)?;
                k.enforce_fields(&rel)?;
                Ok((rel, k))
            }
            None => Err(BuildError::Invalid {
                file: self.rel(dir),
                message: "directory has no kustomization.yaml, kustomization.yml or Kustomization"
                    .into(),
            }),
        }
    }

    /// kustomize's loader.New checks: no chain deeper than the bound, and no directory
    /// that is, or contains, one being built ("cycle detected").
    fn enter_check(&self, dir: &Utf8Path, file: &Utf8Path) -> Result<(), BuildError> {
        if let Some(visited) = self.chain.iter().find(|v| v.starts_with(dir)) {
            return Err(BuildError::Invalid {
                file: file.to_path_buf(),
                message: format!(
                    "cycle detected: candidate root '{}' contains visited root '{}'",
                    self.rel(dir),
                    self.rel(visited)
                ),
            });
        }
        if self.chain.len() >= MAX_NESTING {
            return Err(BuildError::TooDeep {
                file: file.to_path_buf(),
                start: self.rel(&self.chain[0]),
                deepest: self.rel(dir),
                limit: MAX_NESTING,
            });
        }
        Ok(())
    }

    /// Builds `dir` into `acc`; returns its kustomization file.
    fn accumulate(
        &mut self,
        dir: &Utf8Path,
        acc: &mut Vec<Res>,
        role: Role,
    ) -> Result<Utf8PathBuf, BuildError> {
        self.chain.push(dir.to_path_buf());
        for e in &mut self.entered {
            e.insert(dir.to_path_buf());
        }
        let res = self.accumulate_inner(dir, acc, role);
        self.chain.pop();
        res
    }

    /// A sub-kustomization listed under `resources`: built once, reused when listed again.
    fn sub_build(&mut self, abs: &Utf8Path, file: &Utf8Path) -> Result<Vec<Res>, BuildError> {
        self.enter_check(abs, file)?;
        if let Some(b) = self.built.get(abs) {
            for d in &b.dirs {
                self.enter_check(d, file)?;
            }
            let b = b.clone();
            for e in &mut self.entered {
                e.extend(b.dirs.iter().cloned());
            }
            self.custom_refs.extend(b.refs);
            return Ok(b.resources);
        }
        let refs_before = self.custom_refs.len();
        self.entered.push(HashSet::new());
        let mut sub = Vec::new();
        let res = self.accumulate(abs, &mut sub, Role::Resource);
        let dirs = self.entered.pop().unwrap_or_default();
        res?;
        // Keep a copy only once a directory is listed a second time (a shared base): each
        // is then built at most twice, and a tree without sharing copies nothing.
        if !self.built_once.insert(abs.to_path_buf()) {
            let refs = self.custom_refs[refs_before..].to_vec();
            self.built.insert(
                abs.to_path_buf(),
                Built {
                    resources: sub.clone(),
                    refs,
                    dirs,
                },
            );
        }
        Ok(sub)
    }

    fn accumulate_inner(
        &mut self,
        dir: &Utf8Path,
        acc: &mut Vec<Res>,
        role: Role,
    ) -> Result<Utf8PathBuf, BuildError> {
        let (file, k) = self.load_kustomization(dir, role)?;
        match (role, k.is_component()) {
            (Role::Component, false) => {
                return Err(BuildError::NotAComponent {
                    path: self.rel(dir),
                    kind: k.kind.clone().unwrap_or_else(|| "Kustomization".into()),
                });
            }
            (Role::Resource, true) => {
                return Err(BuildError::Invalid {
                    file,
                    message: "a Component can only be listed under `components`".into(),
                });
            }
            _ => {}
        }
        // Resources (then the deprecated bases), each a file or a kustomization directory.
        for entry in k.resources.iter().chain(&k.bases) {
            if is_remote(entry) {
                return Err(BuildError::Unsupported {
                    file,
                    field: format!("resources: {entry} (remote)"),
                });
            }
            let abs = self.resolve(dir, entry, &file)?;
            match self.fs.entry(&abs, &file, entry)? {
                Entry::File => {
                    let new = self.objects(&abs)?;
                    append(acc, new, &file)?;
                }
                Entry::Dir => {
                    let sub = self.sub_build(&abs, &file)?;
                    append(acc, sub, &file)?;
                }
                Entry::Missing => {
                    return Err(BuildError::MissingResource {
                        file,
                        entry: entry.clone(),
                    });
                }
            }
        }
        for entry in &k.configurations {
            self.load_configuration(dir, &file, entry)?;
        }
        // Generators run before components (kusttarget.accumulateTarget).
        self.generate(dir, &file, &k, acc)?;
        for entry in &k.components {
            if is_remote(entry) {
                return Err(BuildError::Unsupported {
                    file,
                    field: format!("components: {entry} (remote)"),
                });
            }
            let abs = self.resolve(dir, entry, &file)?;
            match self.fs.entry(&abs, &file, entry)? {
                Entry::Dir => {}
                Entry::File => {
                    return Err(BuildError::NotAComponent {
                        path: self.rel(&abs),
                        kind: "file".into(),
                    });
                }
                Entry::Missing => {
                    return Err(BuildError::MissingComponent {
                        path: self.rel(&abs),
                    });
                }
            }
            self.enter_check(&abs, &file)?;
            // A component transforms everything accumulated so far.
            self.accumulate(&abs, acc, Role::Component)?;
        }
        self.transform(dir, &file, &k, acc)?;
        Ok(file)
    }

    /// Reads a `configurations` file; only `nameReference` entries are supported.
    fn load_configuration(
        &mut self,
        dir: &Utf8Path,
        file: &Utf8Path,
        entry: &str,
    ) -> Result<(), BuildError> {
        let abs = self.resolve(dir, entry, file)?;
        let rel = self.rel(&abs);
        let v = load::parse_kustomization(
            self.fs.caches(),
            &rel,
            &self.read_listed(&abs, file, entry)?,
        )?;
        if let Some(k) = v
            .as_object()
            .and_then(|m| m.keys().find(|k| *k != "nameReference"))
        {
            return Err(BuildError::Unsupported {
                file: rel,
                field: k.clone(),
            });
        }
        let extra: Vec<NameBackRef> = v
            .get("nameReference")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(NameBackRef::from_value)
            .collect();
        self.custom_refs.extend(extra);
        Ok(())
    }

    fn generate(
        &mut self,
        dir: &Utf8Path,
        file: &Utf8Path,
        k: &Kustomization,
        acc: &mut Vec<Res>,
    ) -> Result<(), BuildError> {
        let ctx = GenCtx {
            fs: self.fs,
            dir,
            file,
        };
        let all = k
            .config_map_generator
            .iter()
            .map(|g| (GenKind::ConfigMap, g))
            .chain(k.secret_generator.iter().map(|g| (GenKind::Secret, g)));
        for (kind, g) in all {
            let new = generators::generate(&ctx, kind, g, &k.generator_options)?;
            absorb(acc, new, file)?;
        }
        Ok(())
    }

    fn transform(
        &mut self,
        dir: &Utf8Path,
        file: &Utf8Path,
        k: &Kustomization,
        acc: &mut Vec<Res>,
    ) -> Result<(), BuildError> {
        // Same order as kustomize's configureBuiltinTransformers.
        patches::strategic_merge_list(self.fs, dir, file, &k.patches_strategic_merge, acc)?;
        patches::patches(self.fs, dir, file, &k.patches, acc)?;
        if let Some(ns) = k.namespace.as_deref().filter(|n| !n.is_empty()) {
            transform::namespace(acc, ns, file)?;
        }
        if let Some(p) = k.name_prefix.as_deref().filter(|p| !p.is_empty()) {
            transform::prefix_suffix(acc, p, true, file)?;
        }
        if let Some(s) = k.name_suffix.as_deref().filter(|s| !s.is_empty()) {
            transform::prefix_suffix(acc, s, false, file)?;
        }
        transform::labels(acc, k, file)?;
        transform::annotations(acc, k, file)?;
        patches::json6902_list(self.fs, dir, file, &k.patches_json6902, acc)?;
        transform::replicas(acc, &k.replicas, file)?;
        transform::images(self.fs.caches(), acc, &k.images, file)?;
        replacements::run(self.fs, dir, file, &k.replacements, acc)
    }
}

/// A generated object joins the accumulated ones (resWrangler.appendReplaceOrMerge).
fn absorb(acc: &mut Vec<Res>, new: Res, file: &Utf8Path) -> Result<(), BuildError> {
    let behavior = new.behavior.clone().unwrap_or_default();
    let (av, kind, ns, name) = new.id_key();
    let matches: Vec<usize> = acc
        .iter()
        .enumerate()
        .filter(|(_, r)| r.api_version() == av && r.matches_any_id(&kind, &name, &ns))
        .map(|(i, _)| i)
        .collect();
    let invalid = |message: String| BuildError::Invalid {
        file: file.to_path_buf(),
        message,
    };
    match (matches.as_slice(), behavior.as_str()) {
        ([], "merge" | "replace") => Err(invalid(format!(
            "generator `{name}` has behavior {behavior} but there is no {kind} of that name to {behavior}"
        ))),
        ([], _) => append(acc, vec![new], file),
        ([i], "merge" | "replace") => {
            generators::merge_into(&mut acc[*i], new, behavior == "replace").map_err(invalid)
        }
        ([_], _) => Err(invalid(format!(
            "{kind} {name} exists already; a generator of the same name needs `behavior: merge` or `replace`"
        ))),
        _ => Err(invalid(format!(
            "found multiple objects that could accept merge of {kind} {name}"
        ))),
    }
}
