//! `patches`, `patchesStrategicMerge` and `patchesJson6902`: loading patch
//! content, choosing targets, applying.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::kustomization::{Patch, Selector};
use super::native::Builder;
use super::resid::{Res, split_api_version};
use super::select::Compiled;
use super::{BuildError, load, patch_json6902, patch_smp};

fn patch_err(file: &Path, message: String) -> BuildError {
    BuildError::Patch {
        file: file.to_path_buf(),
        message,
    }
}

/// Patch text and the file to blame for it (the kustomization for inline patches).
fn content(
    b: &Builder,
    dir: &Path,
    file: &Path,
    p: &Patch,
) -> Result<(String, PathBuf), BuildError> {
    match (&p.path, &p.patch) {
        (Some(path), None) => {
            let abs = b.resolve(dir, path, file)?;
            Ok((b.read(&abs)?, b.rel(&abs)))
        }
        (None, Some(inline)) => Ok((inline.clone(), file.to_path_buf())),
        _ => Err(patch_err(
            file,
            "a patch needs exactly one of `path` or `patch`".into(),
        )),
    }
}

fn norm_ns(ns: &str) -> &str {
    if ns.is_empty() { "default" } else { ns }
}

/// Resources a target-less strategic merge patch addresses by its own id.
fn by_id(acc: &[Res], doc: &Value) -> Vec<usize> {
    let s = |path: &[&str]| super::resid::str_at(doc, path).to_string();
    let (av, kind, name, ns) = (
        s(&["apiVersion"]),
        s(&["kind"]),
        s(&["metadata", "name"]),
        s(&["metadata", "namespace"]),
    );
    acc.iter()
        .enumerate()
        .filter(|(_, r)| {
            r.api_version() == av
                && r.kind() == kind
                && r.has_name(&name)
                && (norm_ns(r.namespace()) == norm_ns(&ns)
                    || r.history.iter().any(|(h, _)| norm_ns(h) == norm_ns(&ns)))
        })
        .map(|(i, _)| i)
        .collect()
}

fn by_selector(acc: &[Res], sel: &Selector, file: &Path) -> Result<Vec<usize>, BuildError> {
    let c = Compiled::new(sel).map_err(|what| BuildError::Unsupported {
        file: file.to_path_buf(),
        field: format!("patch target {what}"),
    })?;
    Ok(acc
        .iter()
        .enumerate()
        .filter(|(_, r)| c.matches(r))
        .map(|(i, _)| i)
        .collect())
}

fn apply_smp(
    acc: &mut Vec<Res>,
    targets: &[usize],
    doc: &Value,
    source: &Path,
) -> Result<(), BuildError> {
    let mut deleted = Vec::new();
    for &i in targets {
        let r = &mut acc[i];
        let (group, kind) = (r.group().to_string(), r.kind().to_string());
        let keep = patch_smp::apply(&mut r.obj, doc, &group, &kind).map_err(|e| match e {
            patch_smp::SmpError::Invalid(m) => patch_err(source, m),
            patch_smp::SmpError::Unsupported(field) => BuildError::Unsupported {
                file: source.to_path_buf(),
                field,
            },
        })?;
        r.patched_by.push(source.to_path_buf());
        if !keep {
            deleted.push(i);
        }
    }
    for i in deleted.into_iter().rev() {
        acc.remove(i);
    }
    Ok(())
}

fn apply_json(
    acc: &mut [Res],
    targets: &[usize],
    ops: &Value,
    source: &Path,
) -> Result<(), BuildError> {
    for &i in targets {
        let r = &mut acc[i];
        patch_json6902::apply(&mut r.obj, ops).map_err(|m| {
            patch_err(
                source,
                format!("JSON patch on {} {}: {m}", r.kind(), r.name()),
            )
        })?;
        r.patched_by.push(source.to_path_buf());
    }
    Ok(())
}

fn smp_by_id(acc: &mut Vec<Res>, doc: &Value, source: &Path) -> Result<(), BuildError> {
    let targets = by_id(acc, doc);
    if targets.is_empty() {
        let s = |path: &[&str]| super::resid::str_at(doc, path).to_string();
        return Err(patch_err(
            source,
            format!(
                "no resource matches strategic merge patch for {} {} ({})",
                s(&["kind"]),
                s(&["metadata", "name"]),
                split_api_version(&s(&["apiVersion"])).1
            ),
        ));
    }
    apply_smp(acc, &targets, doc, source)
}

pub fn strategic_merge_list(
    b: &Builder,
    dir: &Path,
    file: &Path,
    entries: &[String],
    acc: &mut Vec<Res>,
) -> Result<(), BuildError> {
    for e in entries {
        // kustomize accepts either a file path or inline YAML here.
        let inline = e.contains('\n') || e.trim_start().starts_with('{');
        let (text, source) = if inline {
            (e.clone(), file.to_path_buf())
        } else {
            let abs = b.resolve(dir, e, file)?;
            if !abs.is_file() {
                return Err(BuildError::MissingResource {
                    file: file.to_path_buf(),
                    entry: e.clone(),
                });
            }
            (b.read(&abs)?, b.rel(&abs))
        };
        for doc in load::parse_docs(&source, &text)? {
            smp_by_id(acc, &doc, &source)?;
        }
    }
    Ok(())
}

pub fn patches(
    b: &Builder,
    dir: &Path,
    file: &Path,
    entries: &[Patch],
    acc: &mut Vec<Res>,
) -> Result<(), BuildError> {
    for p in entries {
        let (text, source) = content(b, dir, file, p)?;
        let docs = load::parse_docs(&source, &text)?;
        if let [ops @ Value::Array(_)] = docs.as_slice() {
            let sel = p
                .target
                .as_ref()
                .ok_or_else(|| patch_err(file, "a JSON 6902 patch needs a `target`".into()))?;
            let targets = by_selector(acc, sel, file)?;
            apply_json(acc, &targets, ops, &source)?;
            continue;
        }
        for doc in &docs {
            match &p.target {
                Some(sel) => {
                    let targets = by_selector(acc, sel, file)?;
                    apply_smp(acc, &targets, doc, &source)?;
                }
                None => smp_by_id(acc, doc, &source)?,
            }
        }
    }
    Ok(())
}

pub fn json6902_list(
    b: &Builder,
    dir: &Path,
    file: &Path,
    entries: &[Patch],
    acc: &mut [Res],
) -> Result<(), BuildError> {
    for p in entries {
        let (text, source) = content(b, dir, file, p)?;
        let sel = p
            .target
            .as_ref()
            .ok_or_else(|| patch_err(file, "patchesJson6902 entry needs a `target`".into()))?;
        let ops = load::parse_one(&source, &text)?;
        let targets = by_selector(acc, sel, file)?;
        apply_json(acc, &targets, &ops, &source)?;
    }
    Ok(())
}
