//! The kustomization kustomize-controller generates for a directory without one
//! (fluxcd/pkg kustomize generator): every .yaml/.yml file below the directory,
//! in walk order, each of which must decode as Kubernetes objects; a
//! sub-directory with its own kustomization file becomes one resource and is
//! not descended into.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::BuildError;
use super::load;

/// Resource entries (relative to `dir`) of the generated kustomization.
/// Files parsed while validating are stored in `parsed` so the build reads them once.
pub fn resources(
    root: &Path,
    dir: &Path,
    parsed: &mut HashMap<PathBuf, Vec<Value>>,
) -> Result<Vec<String>, BuildError> {
    let mut out = Vec::new();
    walk(root, dir, dir, &mut out, parsed)?;
    Ok(out)
}

fn walk(
    root: &Path,
    base: &Path,
    dir: &Path,
    out: &mut Vec<String>,
    parsed: &mut HashMap<PathBuf, Vec<Value>>,
) -> Result<(), BuildError> {
    let io = |source| BuildError::Io {
        path: load::rel(root, dir),
        source,
    };
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(io)?;
    // Go's filepath.Walk visits entries in lexical byte order.
    entries.sort();
    for path in entries {
        let rel = path
            .strip_prefix(base)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        // Like filepath.Walk, symlinked directories are not descended into.
        let real_dir = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
        if real_dir {
            if path.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if load::find_kustomization(&path).is_some() {
                out.push(rel);
            } else {
                walk(root, base, &path, out, parsed)?;
            }
            continue;
        }
        let is_yaml = path.extension().is_some_and(|e| e == "yaml" || e == "yml");
        if !is_yaml {
            continue;
        }
        // Flux refuses the whole directory when one YAML file is not Kubernetes objects.
        let file = load::rel(root, &path);
        let text = load::read_to_string(root, &path)?;
        let objects = load::parse_objects(&file, &text)?;
        parsed.insert(path, objects);
        out.push(rel);
    }
    Ok(())
}
