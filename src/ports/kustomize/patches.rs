//! `patches`, `patchesStrategicMerge` and `patchesJson6902`, as kustomize's
//! PatchTransformer, PatchStrategicMergeTransformer and PatchJson6902Transformer load,
//! target and apply them.

use camino::{Utf8Path, Utf8PathBuf};

use serde_json::Value;

use super::fsroot::Fs;
use super::kustomization::{Patch, Selector};
use super::resid::{Res, effective_namespace, split_api_version, str_at};
use super::select::Compiled;
use super::{BuildError, load, patch_json6902, patch_smp};

fn patch_err(file: &Utf8Path, message: String) -> BuildError {
    BuildError::Patch {
        file: file.to_path_buf(),
        message,
    }
}

/// Patch text and the file to blame for it (the kustomization for inline patches).
fn content(
    b: &Fs,
    dir: &Utf8Path,
    file: &Utf8Path,
    p: &Patch,
) -> Result<(String, Utf8PathBuf), BuildError> {
    let inline = p.patch.as_deref().map(str::trim).filter(|s| !s.is_empty());
    let path = p.path.as_deref().filter(|s| !s.is_empty());
    match (path, inline) {
        (Some(path), None) => {
            let abs = b.resolve(dir, path, file)?;
            Ok((b.read_listed(&abs, file, path)?, b.rel(&abs)))
        }
        (None, Some(inline)) => Ok((inline.to_string(), file.to_path_buf())),
        (None, None) => Err(patch_err(file, "must specify one of patch and path".into())),
        (Some(_), Some(_)) => Err(patch_err(
            file,
            "patch and path can't be set at the same time".into(),
        )),
    }
}

/// The resources a selector picks (resWrangler.Select).
fn select(b: &Fs, acc: &[Res], sel: &Selector, file: &Utf8Path) -> Result<Vec<usize>, BuildError> {
    let c = Compiled::new(sel, b.caches()).map_err(|what| BuildError::Unsupported {
        file: file.to_path_buf(),
        field: format!("patch target {what}"),
    })?;
    let mut out = Vec::new();
    for (i, r) in acc.iter().enumerate() {
        if let Some(what) = c.unsure_about(r) {
            return Err(BuildError::Unsupported {
                file: file.to_path_buf(),
                field: format!("patch target selecting on a {what}"),
            });
        }
        if c.matches(r) {
            out.push(i);
        }
    }
    Ok(out)
}

/// resWrangler.GetById: the one resource with `doc`'s id as its current or a previous id.
fn by_id(acc: &[Res], doc: &Value, source: &Utf8Path) -> Result<usize, BuildError> {
    let s = |path: &[&str]| str_at(doc, path).to_string();
    let (av, kind, name, ns) = (
        s(&["apiVersion"]),
        s(&["kind"]),
        s(&["metadata", "name"]),
        s(&["metadata", "namespace"]),
    );
    let (group, version) = split_api_version(&av);
    let eff = effective_namespace(&av, &kind, &ns).to_string();
    let hits: Vec<usize> = acc
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            let (g, v) = split_api_version(r.api_version());
            g == group && v == version && {
                let cur = r.cur_id();
                std::iter::once(&cur).chain(&r.history).any(|id| {
                    id.kind == kind
                        && id.name == name
                        && effective_namespace(r.api_version(), &id.kind, &id.namespace) == eff
                })
            }
        })
        .map(|(i, _)| i)
        .collect();
    let id = format!("{kind}.{version}.{group}/{name}.{ns}");
    match hits.as_slice() {
        [i] => Ok(*i),
        [] => Err(patch_err(
            source,
            format!("no resource matches strategic merge patch for {kind} {name} ({id})"),
        )),
        _ => Err(patch_err(
            source,
            format!("multiple matches for Id {id}; failed to find unique target for patch"),
        )),
    }
}

#[derive(Clone, Copy, Default)]
struct Allow {
    name: bool,
    kind: bool,
}

/// Resource.ApplySmPatch on each target; deleted targets leave the list.
fn apply_smp(
    acc: &mut Vec<Res>,
    targets: &[usize],
    doc: &Value,
    source: &Utf8Path,
    allow: Allow,
) -> Result<(), BuildError> {
    let mut deleted = Vec::new();
    for &i in targets {
        let r = &mut acc[i];
        if allow.name || allow.kind {
            r.store_previous_id();
        }
        let (av, kind) = (r.api_version().to_string(), r.kind().to_string());
        patch_smp::drop_empty_nulls(&mut r.obj, &std::mem::take(&mut r.empty_nulls), &av, &kind);
        let keep = patch_smp::apply(&mut r.obj, doc, &av, &kind).map_err(|e| match e {
            patch_smp::SmpError::Invalid(m) => patch_err(source, m),
            patch_smp::SmpError::Unsupported(field) => BuildError::Unsupported {
                file: source.to_path_buf(),
                field,
            },
        })?;
        if keep {
            if allow.name
                && let Some(n) = doc.pointer("/metadata/name").and_then(Value::as_str)
            {
                r.set_id(None, Some(n));
            }
            if allow.kind
                && let Some(k) = doc.get("kind").and_then(Value::as_str)
                && let Some(m) = r.obj.as_object_mut()
            {
                m.insert("kind".into(), Value::String(k.to_string()));
            }
        }
        r.patched_by.push(source.to_path_buf());
        if !keep {
            deleted.push(i);
        }
    }
    deleted.sort_unstable();
    for i in deleted.into_iter().rev() {
        acc.remove(i);
    }
    Ok(())
}

/// Integers beyond 2^53 do not survive kustomize's JSON patch round trip (json.Unmarshal
/// into float64); refuse rather than guess the rounding.
fn has_big_int(v: &Value) -> bool {
    match v {
        Value::Number(n) => n
            .as_i64()
            .map_or(n.is_u64(), |i| i.unsigned_abs() > (1 << 53)),
        Value::Array(a) => a.iter().any(has_big_int),
        Value::Object(m) => m.values().any(has_big_int),
        _ => false,
    }
}

fn apply_json(
    acc: &mut [Res],
    targets: &[usize],
    ops: &Value,
    source: &Utf8Path,
    store_prev: bool,
) -> Result<(), BuildError> {
    for &i in targets {
        let r = &mut acc[i];
        if has_big_int(&r.obj) || has_big_int(ops) {
            return Err(BuildError::Unsupported {
                file: source.to_path_buf(),
                field: "a JSON patch on an object holding an integer beyond 2^53".into(),
            });
        }
        if store_prev {
            r.store_previous_id();
        }
        // The JSON round trip writes every null as `null`, which merges then keep.
        r.empty_nulls.clear();
        let (kind, name) = (r.kind().to_string(), r.name().to_string());
        patch_json6902::apply(&mut r.obj, ops)
            .map_err(|m| patch_err(source, format!("JSON patch on {kind} {name}: {m}")))?;
        r.patched_by.push(source.to_path_buf());
    }
    Ok(())
}

/// `patchesStrategicMerge`: each entry is inline patch YAML when it reads as objects,
/// else a file path (PatchStrategicMergeTransformer's loadFromPaths).
pub fn strategic_merge_list(
    b: &Fs,
    dir: &Utf8Path,
    file: &Utf8Path,
    entries: &[String],
    acc: &mut Vec<Res>,
) -> Result<(), BuildError> {
    if entries.is_empty() {
        return Ok(());
    }
    let mut loaded: Vec<(Value, Utf8PathBuf)> = Vec::new();
    for e in entries {
        match load::parse_objects(b.caches(), file, e) {
            Ok(docs) => loaded.extend(docs.into_iter().map(|d| (d, file.to_path_buf()))),
            Err(_) => {
                let abs = b.resolve(dir, e, file)?;
                let source = b.rel(&abs);
                let text = b.read_listed(&abs, file, e)?;
                let docs = load::parse_objects(b.caches(), &source, &text)?;
                loaded.extend(docs.into_iter().map(|d| (d, source.clone())));
            }
        }
    }
    if loaded.is_empty() {
        return Err(patch_err(file, "patch appears to be empty".into()));
    }
    for (doc, source) in &loaded {
        let i = by_id(acc, doc, source)?;
        apply_smp(acc, &[i], doc, source, Allow::default())?;
    }
    Ok(())
}

/// `patches`: strategic merge or JSON 6902, told apart as kustomize does (a text must read
/// as exactly one of the two).
pub fn patches(
    b: &Fs,
    dir: &Utf8Path,
    file: &Utf8Path,
    entries: &[Patch],
    acc: &mut Vec<Res>,
) -> Result<(), BuildError> {
    for p in entries {
        let (text, source) = content(b, dir, file, p)?;
        let allow = Allow {
            name: p.options.get("allowNameChange") == Some(&true),
            kind: p.options.get("allowKindChange") == Some(&true),
        };
        let sm = load::parse_objects(b.caches(), &source, &text);
        let json = if text.is_empty() {
            None
        } else {
            load::parse_json_patch(&source, &text).ok().filter(|v| {
                v.is_null() || v.as_array().is_some_and(|a| a.iter().all(Value::is_object))
            })
        };
        match (sm, json) {
            (Ok(_), Some(_)) => {
                return Err(patch_err(
                    &source,
                    "illegally qualifies as both an SM and JSON patch".into(),
                ));
            }
            (Err(e), None) => {
                return Err(match e {
                    BuildError::Yaml { .. }
                    | BuildError::Refused { .. }
                    | BuildError::Unsupported { .. }
                    | BuildError::NotUtf8 { .. } => e,
                    _ => patch_err(&source, format!("unable to parse SM or JSON patch: {e}")),
                });
            }
            (Ok(docs), None) => match &p.target {
                Some(sel) => {
                    if docs.len() > 1 {
                        return Err(patch_err(
                            &source,
                            "Multiple Strategic-Merge Patches in one `patches` entry is not allowed to set `patches.target` field".into(),
                        ));
                    }
                    let targets = select(b, acc, sel, file)?;
                    if let Some(doc) = docs.first() {
                        apply_smp(acc, &targets, doc, &source, allow)?;
                    }
                }
                None => {
                    for doc in &docs {
                        let i = by_id(acc, doc, &source)?;
                        apply_smp(acc, &[i], doc, &source, allow)?;
                    }
                }
            },
            (Err(_), Some(ops)) => {
                let sel = p.target.as_ref().ok_or_else(|| {
                    patch_err(file, "must specify a target for JSON patch".into())
                })?;
                let targets = select(b, acc, sel, file)?;
                let ops = if ops.is_null() {
                    Value::Array(Vec::new())
                } else {
                    ops
                };
                apply_json(acc, &targets, &ops, &source, true)?;
            }
        }
    }
    Ok(())
}

/// `patchesJson6902`: a target with a name is required; the patch is YAML or JSON.
pub fn json6902_list(
    b: &Fs,
    dir: &Utf8Path,
    file: &Utf8Path,
    entries: &[Patch],
    acc: &mut [Res],
) -> Result<(), BuildError> {
    for p in entries {
        let sel = p.target.as_ref();
        if sel
            .and_then(|s| s.name.as_deref())
            .is_none_or(str::is_empty)
        {
            return Err(patch_err(
                file,
                "patchesJson6902: must specify the target name".into(),
            ));
        }
        let (text, source) = match (&p.path, &p.patch) {
            (Some(path), None) => {
                let abs = b.resolve(dir, path, file)?;
                let text = b.read_listed(&abs, file, path)?;
                if text.is_empty() {
                    return Err(patch_err(
                        file,
                        format!("patch file '{path}' empty seems to be empty"),
                    ));
                }
                (text, b.rel(&abs))
            }
            (None, Some(inline)) if !inline.is_empty() => (inline.clone(), file.to_path_buf()),
            (Some(_), Some(_)) => {
                return Err(patch_err(
                    file,
                    "must specify a file path or jsonOp, not both".into(),
                ));
            }
            _ => return Err(patch_err(file, "empty file path and empty jsonOp".into())),
        };
        let ops = load::parse_json_patch(&source, &text)?;
        if ops.as_array().is_none_or(Vec::is_empty) {
            return Err(patch_err(
                &source,
                "patch appears to be empty (or is not a list of operations)".into(),
            ));
        }
        let targets = select(b, acc, sel.expect("checked above"), file)?;
        apply_json(acc, &targets, &ops, &source, false)?;
    }
    Ok(())
}
