//! The native builder: kustomize's accumulate-then-transform recursion
//! (api/internal/target/kusttarget.go) for the supported feature set.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::flux_generate::{self, FluxFields};
use super::generators::{self, GenCtx, GenKind};
use super::kustomization::Kustomization;
use super::resid::Res;
use super::{BuildError, Resource, load, namerefs, order, patches, transform};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// `spec.path`: may have no kustomization file (Flux generates one).
    Top,
    Resource,
    Component,
}

pub struct Builder<'a> {
    pub root: &'a Path,
    /// The Flux Kustomization's fields, written into the top kustomization as Flux does.
    flux: &'a FluxFields,
    /// Parsed resource files, so each file is parsed once per build.
    parsed: HashMap<PathBuf, Vec<Value>>,
    /// nameReference configurations from every level (kustomize merges them).
    custom_refs: Vec<namerefs::CustomRef>,
    /// Directories being accumulated, to reject reference cycles.
    stack: Vec<PathBuf>,
}

pub fn build(repo_root: &Path, path: &str, flux: &FluxFields) -> Result<Vec<Resource>, BuildError> {
    let root = load::normalize(repo_root);
    let dir = load::normalize(&root.join(path));
    let mut b = Builder {
        root: &root,
        flux,
        parsed: HashMap::new(),
        custom_refs: Vec::new(),
        stack: Vec::new(),
    };
    b.inside_root(&dir, &root.join(path))?;
    if !dir.is_dir() {
        return Err(BuildError::Invalid {
            file: PathBuf::from(path),
            message: "kustomization path not found".into(),
        });
    }
    let mut acc = Vec::new();
    b.accumulate(&dir, &mut acc, Role::Top)?;
    // kustomize adds generator hashes once, at the top, over the final content,
    // then fixes every reference to the renamed objects.
    for r in acc.iter_mut().filter(|r| r.needs_hash) {
        let name = format!("{}-{}", r.name(), generators::hash(&r.obj));
        r.set_id(None, Some(&name));
        r.needs_hash = false;
    }
    namerefs::fix(&mut acc, &b.custom_refs)?;
    order::sort(&mut acc);
    Ok(acc
        .into_iter()
        .map(|r| Resource {
            object: r.obj,
            origin: r.origin,
            patched_by: r.patched_by,
        })
        .collect())
}

fn is_remote(entry: &str) -> bool {
    entry.contains("://")
        || entry.starts_with("github.com/")
        || entry.starts_with("gitlab.com/")
        || entry.starts_with("bitbucket.org/")
        || entry.starts_with("git@")
        || entry.starts_with("git::")
}

/// Appends `new` to `acc`, rejecting ids that are already present.
pub fn append(acc: &mut Vec<Res>, new: Vec<Res>, file: &Path) -> Result<(), BuildError> {
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
    pub fn rel(&self, abs: &Path) -> PathBuf {
        load::rel(self.root, abs)
    }

    fn inside_root(&self, abs: &Path, shown: &Path) -> Result<(), BuildError> {
        if abs.starts_with(self.root) {
            Ok(())
        } else {
            Err(BuildError::Invalid {
                file: shown.to_path_buf(),
                message: "path leaves the repository root".into(),
            })
        }
    }

    /// Resolves `entry` (relative to `dir`, listed in `file`) inside the repo.
    pub fn resolve(&self, dir: &Path, entry: &str, file: &Path) -> Result<PathBuf, BuildError> {
        let abs = load::normalize(&dir.join(entry));
        if !abs.starts_with(self.root) {
            return Err(BuildError::Invalid {
                file: file.to_path_buf(),
                message: format!("`{entry}` leaves the repository root"),
            });
        }
        Ok(abs)
    }

    pub fn read(&self, abs: &Path) -> Result<String, BuildError> {
        load::read_to_string(self.root, abs)
    }

    fn objects(&mut self, abs: &Path) -> Result<Vec<Value>, BuildError> {
        if let Some(v) = self.parsed.get(abs) {
            return Ok(v.clone());
        }
        let text = self.read(abs)?;
        let objs = load::parse_objects(&self.rel(abs), &text)?;
        self.parsed.insert(abs.to_path_buf(), objs.clone());
        Ok(objs)
    }

    fn load_kustomization(
        &mut self,
        dir: &Path,
        role: Role,
    ) -> Result<(PathBuf, Kustomization), BuildError> {
        if role == Role::Top {
            // `spec.path`: the kustomization kustomize-controller writes there.
            let generated =
                flux_generate::kustomization(self.root, dir, self.flux, &mut self.parsed)?;
            let rel = self.rel(&generated.file);
            let k = Kustomization::from_value(&rel, generated.value)?;
            return Ok((rel, k));
        }
        match load::find_kustomization(dir) {
            Some(f) => {
                let rel = self.rel(&f);
                let v = load::parse_one(&rel, &self.read(&f)?)?;
                Ok((rel.clone(), Kustomization::from_value(&rel, v)?))
            }
            None => Err(BuildError::Invalid {
                file: self.rel(dir),
                message: "directory has no kustomization.yaml, kustomization.yml or Kustomization"
                    .into(),
            }),
        }
    }

    fn accumulate(&mut self, dir: &Path, acc: &mut Vec<Res>, role: Role) -> Result<(), BuildError> {
        if self.stack.iter().any(|d| d == dir) {
            return Err(BuildError::Invalid {
                file: self.rel(dir),
                message:
                    "cycle detected: this directory includes itself through resources or components"
                        .into(),
            });
        }
        self.stack.push(dir.to_path_buf());
        let res = self.accumulate_inner(dir, acc, role);
        self.stack.pop();
        res
    }

    fn accumulate_inner(
        &mut self,
        dir: &Path,
        acc: &mut Vec<Res>,
        role: Role,
    ) -> Result<(), BuildError> {
        let (file, k) = self.load_kustomization(dir, role)?;
        match (role, k.is_component()) {
            (Role::Component, false) => {
                return Err(BuildError::NotAComponent {
                    path: self.rel(dir),
                    kind: k.kind.clone().unwrap_or_else(|| "Kustomization".into()),
                });
            }
            (Role::Component, true)
                if k.api_version.as_deref() != Some("kustomize.config.k8s.io/v1alpha1") =>
            {
                return Err(BuildError::NotAComponent {
                    path: self.rel(dir),
                    kind: format!(
                        "Component of apiVersion {}",
                        k.api_version.as_deref().unwrap_or("(none)")
                    ),
                });
            }
            (Role::Top | Role::Resource, true) => {
                return Err(BuildError::Invalid {
                    file,
                    message: "a Component can only be listed under `components`".into(),
                });
            }
            _ => {}
        }
        for entry in k.resources.iter().chain(&k.bases) {
            if is_remote(entry) {
                return Err(BuildError::Unsupported {
                    file,
                    field: format!("resources: {entry} (remote)"),
                });
            }
            let abs = self.resolve(dir, entry, &file)?;
            if abs.is_dir() {
                let mut sub = Vec::new();
                self.accumulate(&abs, &mut sub, Role::Resource)?;
                append(acc, sub, &file)?;
            } else if abs.is_file() {
                let origin = self.rel(&abs);
                let objs = self.objects(&abs)?;
                append(
                    acc,
                    objs.into_iter()
                        .map(|o| Res::new(o, origin.clone()))
                        .collect(),
                    &file,
                )?;
            } else {
                return Err(BuildError::MissingResource {
                    file,
                    entry: entry.clone(),
                });
            }
        }
        for entry in &k.components {
            if is_remote(entry) {
                return Err(BuildError::Unsupported {
                    file,
                    field: format!("components: {entry} (remote)"),
                });
            }
            let abs = self.resolve(dir, entry, &file)?;
            if abs.is_file() {
                return Err(BuildError::NotAComponent {
                    path: self.rel(&abs),
                    kind: "file".into(),
                });
            }
            if !abs.is_dir() {
                return Err(BuildError::MissingComponent {
                    path: self.rel(&abs),
                });
            }
            // A component transforms everything accumulated so far.
            self.accumulate(&abs, acc, Role::Component)?;
        }
        for entry in &k.configurations {
            self.load_configuration(dir, &file, entry)?;
        }
        self.generate(dir, &file, &k, acc)?;
        self.transform(dir, &file, &k, acc)
    }

    /// Reads a `configurations` file; only `nameReference` entries are supported.
    fn load_configuration(
        &mut self,
        dir: &Path,
        file: &Path,
        entry: &str,
    ) -> Result<(), BuildError> {
        let abs = self.resolve(dir, entry, file)?;
        let rel = self.rel(&abs);
        let v = load::parse_one(&rel, &self.read(&abs)?)?;
        let unsupported = |field: String| BuildError::Unsupported {
            file: rel.clone(),
            field,
        };
        if let Some(k) = v
            .as_object()
            .and_then(|m| m.keys().find(|k| *k != "nameReference"))
        {
            return Err(unsupported(k.clone()));
        }
        let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        for nr in v
            .get("nameReference")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let target = s(nr, "kind");
            if target.is_empty() {
                return Err(unsupported("nameReference without kind".into()));
            }
            for fs in nr
                .get("fieldSpecs")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                self.custom_refs.push(namerefs::CustomRef {
                    target: target.clone(),
                    group: s(fs, "group"),
                    version: s(fs, "version"),
                    kind: s(fs, "kind"),
                    path: s(fs, "path"),
                });
            }
        }
        Ok(())
    }

    fn generate(
        &mut self,
        dir: &Path,
        file: &Path,
        k: &Kustomization,
        acc: &mut Vec<Res>,
    ) -> Result<(), BuildError> {
        let ctx = GenCtx {
            root: self.root,
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
            let behavior = g.behavior.as_deref().unwrap_or("create");
            if behavior == "create" {
                append(acc, vec![new], file)?;
                continue;
            }
            if behavior != "merge" && behavior != "replace" {
                return Err(BuildError::Invalid {
                    file: file.to_path_buf(),
                    message: format!("generator `{}` has unknown behavior `{behavior}`", g.name),
                });
            }
            let want_ns = g.namespace.as_deref().unwrap_or("");
            let norm = |ns: &str| {
                if ns.is_empty() {
                    "default".to_string()
                } else {
                    ns.to_string()
                }
            };
            let existing = acc.iter_mut().find(|r| {
                r.kind() == new.kind()
                    && r.has_name(&g.name)
                    && (norm(r.namespace()) == norm(want_ns)
                        || r.history.iter().any(|(ns, _)| norm(ns) == norm(want_ns)))
            });
            let Some(existing) = existing else {
                return Err(BuildError::Invalid {
                    file: file.to_path_buf(),
                    message: format!(
                        "generator `{}` has behavior {behavior} but there is no {} of that name to {behavior}",
                        g.name,
                        new.kind()
                    ),
                });
            };
            generators::merge_into(existing, new, behavior == "replace");
        }
        Ok(())
    }

    fn transform(
        &mut self,
        dir: &Path,
        file: &Path,
        k: &Kustomization,
        acc: &mut Vec<Res>,
    ) -> Result<(), BuildError> {
        // Same order as kustomize's configureBuiltinTransformers.
        patches::strategic_merge_list(self, dir, file, &k.patches_strategic_merge, acc)?;
        patches::patches(self, dir, file, &k.patches, acc)?;
        if let Some(ns) = k.namespace.as_deref().filter(|n| !n.is_empty()) {
            transform::namespace(acc, ns);
        }
        let (prefix, suffix) = (
            k.name_prefix.as_deref().unwrap_or(""),
            k.name_suffix.as_deref().unwrap_or(""),
        );
        if !prefix.is_empty() || !suffix.is_empty() {
            transform::prefix_suffix(acc, prefix, suffix);
        }
        transform::labels(acc, k);
        transform::annotations(acc, k);
        patches::json6902_list(self, dir, file, &k.patches_json6902, acc)?;
        transform::replicas(acc, &k.replicas);
        transform::images(acc, &k.images);
        Ok(())
    }
}
