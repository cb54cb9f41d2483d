//! What the cells of a repository hold, read through a plan (so a change not yet written is
//! seen): cellgen.yaml as planned, every cell, the components a cell's layer files list, and the
//! inputs its existing files were made with. Shared by the operations and the analyses.

use camino::{Utf8Component as PathPart, Utf8Path, Utf8PathBuf};
use std::collections::BTreeSet;

use crate::error::CellgenError;
use crate::model::config::{CONFIG_FILE, Config};
use crate::model::names::COMPONENTS_DIR;
use crate::model::repo::{CELLS_DIR, cell_flux_dir, list_dirs};
use crate::ports::edit::yaml;
use crate::writer::plan::Plan;

/// Loads cellgen.yaml as the plan currently has it.
pub fn planned_config(plan: &Plan) -> Result<(Config, String), CellgenError> {
    let text = plan
        .read(CONFIG_FILE)?
        .ok_or_else(|| CellgenError::NotARepository {
            start: plan.root().to_path_buf(),
        })?;
    let config = Config::parse(&text, Utf8Path::new(CONFIG_FILE))?;
    Ok((config, text))
}

/// Resolves a `spec.components` entry to a repository-relative path (None if it leaves the repo).
pub fn resolve_ref(layer_path: &str, reference: &str) -> Option<Utf8PathBuf> {
    let mut parts: Vec<String> = Vec::new();
    for part in Utf8Path::new(layer_path.trim_start_matches("./"))
        .join(reference)
        .components()
    {
        match part {
            PathPart::Normal(p) => parts.push(p.to_owned()),
            PathPart::ParentDir => {
                parts.pop()?;
            }
            PathPart::CurDir => {}
            _ => return None,
        }
    }
    Some(parts.iter().collect())
}

/// Components a cell runs, read from its layer files' `spec.components`.
pub fn cell_components(
    plan: &Plan,
    config: &Config,
    cell: &str,
) -> Result<BTreeSet<String>, CellgenError> {
    let mut names = BTreeSet::new();
    for layer in &config.layers {
        let path = cell_flux_dir(cell).join(format!("{}.yaml", layer.name));
        let Some(text) = plan.read(&path)? else {
            continue;
        };
        crate::ports::yaml::guard(&text).map_err(CellgenError::yaml(&path))?;
        for reference in yaml::flux_components(&text).map_err(|e| invalid(&path, e))? {
            if let Some(resolved) = resolve_ref(&layer.path, &reference)
                && let Ok(rest) = resolved.strip_prefix(COMPONENTS_DIR)
                && let Some(PathPart::Normal(name)) = rest.components().next()
            {
                names.insert(name.to_owned());
            }
        }
    }
    Ok(names)
}

/// Every cell of the repository, including one that exists only in the plan.
pub fn all_cells(plan: &Plan, extra: &str) -> Result<Vec<String>, CellgenError> {
    let mut cells = list_dirs(&plan.root().join(CELLS_DIR))?;
    if !extra.is_empty() && !cells.iter().any(|c| c == extra) {
        cells.push(extra.to_string());
        cells.sort();
    }
    Ok(cells)
}

fn invalid(path: &Utf8Path, e: impl std::fmt::Display) -> CellgenError {
    CellgenError::InvalidFile {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}
