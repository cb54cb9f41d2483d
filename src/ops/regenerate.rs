//! `cellgen new` on a cell, new or existing (`--force`): what the cell's files should be, and
//! which of them to write.
//!
//! The cell as cellgen would generate it now is built in a copy of the plan: the fresh files,
//! with the inputs the cell already has (its Kubernetes version, its egress gateway), plus every
//! component the cell runs, added in the order the cell lists them. Then each file of the cell
//! is compared with it: a file still as cellgen last wrote it (its hash is in the record) or
//! missing is (re)generated; a file the user changed is kept byte for byte and reported. So an
//! untouched cell is left exactly as it is, no component, key, identity or line is ever dropped,
//! and a second run changes nothing.

use camino::{Utf8Component as PathPart, Utf8PathBuf};
use std::collections::{BTreeMap, BTreeSet};

use crate::error::CellgenError;
use crate::model::catalog::{COMPONENTS_DIR, Catalog};
use crate::model::cells::resolve_ref;
use crate::model::config::Config;
use crate::model::names::METADATA_FILE;
use crate::model::provenance;
use crate::model::repo::{cell_flux_dir, cell_terraform_dir};
use crate::model::state::{self, CellRecord, FileRecord, sha256};
use crate::ports::edit::{hcl, yaml};
use crate::writer::plan::Plan;

/// Components the cell runs, by any sign of them: a `spec.components` entry in a layer file, a
/// component's key in cell-metadata.tf, a component's `.tf` in the stack. In the order the
/// files list them (so regenerating reproduces the files), requirements first.
pub fn existing_components(
    plan: &Plan,
    config: &Config,
    catalog: &Catalog,
    cell: &str,
) -> Result<Vec<String>, CellgenError> {
    let mut sequences: Vec<Vec<String>> = Vec::new();
    for layer in &config.layers {
        let path = cell_flux_dir(cell).join(format!("{}.yaml", layer.name));
        let Some(text) = plan.read(&path)? else {
            continue;
        };
        crate::ports::yaml::guard(&text).map_err(CellgenError::yaml(&path))?;
        let refs = yaml::flux_components(&text).map_err(|e| CellgenError::InvalidFile {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let names = refs
            .iter()
            .filter_map(|r| resolve_ref(&layer.path, r))
            .filter_map(|resolved| {
                let rest = resolved.strip_prefix(COMPONENTS_DIR).ok()?;
                match rest.components().next()? {
                    PathPart::Normal(name) => Some(name.to_string()),
                    _ => None,
                }
            })
            .collect();
        sequences.push(names);
    }
    let metadata = cell_terraform_dir(cell).join(METADATA_FILE);
    if let Some(text) = plan.read(&metadata)?
        && let Ok(meta) = hcl::read(&text)
    {
        let owner = |key: &str| {
            catalog
                .components
                .values()
                .find(|c| c.spec.keys.contains_key(key))
                .map(|c| c.name.clone())
                .or_else(|| config.keys.get(key).and_then(|k| k.component.clone()))
        };
        sequences.push(meta.entries.iter().filter_map(|e| owner(&e.key)).collect());
    }
    let identities = catalog
        .components
        .values()
        .filter(|c| c.spec.identity.is_some())
        .filter(|c| plan.exists(cell_terraform_dir(cell).join(format!("{}.tf", c.name))))
        .map(|c| c.name.clone())
        .collect();
    sequences.push(identities);
    let order = merge_orders(&sequences);
    for name in &order {
        catalog.get(name)?;
    }
    Ok(requirements_first(&order, catalog))
}

/// One order consistent with every sequence where they agree: repeatedly the earliest-seen name
/// nothing still pending must precede (on a conflict, simply the earliest-seen).
fn merge_orders(sequences: &[Vec<String>]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for name in sequences.iter().flatten() {
        if !seen.contains(name) {
            seen.push(name.clone());
        }
    }
    let mut before: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for seq in sequences {
        for pair in seq.windows(2) {
            if pair[0] != pair[1] {
                before.entry(&pair[1]).or_default().insert(&pair[0]);
            }
        }
    }
    let mut out: Vec<String> = Vec::new();
    let mut left: Vec<&str> = seen.iter().map(String::as_str).collect();
    while !left.is_empty() {
        let ready = left
            .iter()
            .position(|n| {
                before
                    .get(n)
                    .is_none_or(|preds| preds.iter().all(|p| !left.contains(p)))
            })
            .unwrap_or(0);
        out.push(left.remove(ready).to_string());
    }
    out
}

/// `order`, with each component's requirements moved before it (otherwise unchanged).
fn requirements_first(order: &[String], catalog: &Catalog) -> Vec<String> {
    fn visit(
        name: &str,
        catalog: &Catalog,
        set: &[String],
        stack: &mut Vec<String>,
        out: &mut Vec<String>,
    ) {
        if out.iter().any(|n| n == name) || stack.iter().any(|n| n == name) {
            return;
        }
        stack.push(name.to_string());
        if let Some(c) = catalog.components.get(name) {
            for r in c.spec.requires.iter().filter(|r| set.contains(r)) {
                visit(r, catalog, set, stack, out);
            }
        }
        stack.pop();
        out.push(name.to_string());
    }
    let mut out = Vec::new();
    for name in order {
        visit(name, catalog, order, &mut Vec::new(), &mut out);
    }
    out
}

/// What `plan_cell_files` did with the cell's existing files.
#[derive(Debug, Default)]
pub struct Regenerated {
    /// Files the user changed, left as they are.
    pub kept: Vec<Utf8PathBuf>,
    /// Paths the cell's record names that are not cellgen's to change, and why: left alone.
    pub ignored: Vec<(Utf8PathBuf, String)>,
}

/// Puts the cell's files into `plan`: `desired` is `plan` with the cell as cellgen generates it
/// now. A cell file is written when it is missing or still as cellgen last wrote it, and kept
/// otherwise; a file cellgen generated before and no longer does is deleted under the same rule.
/// Changes `desired` made outside the cell (a component's shared files, the contract) are taken
/// as they are. The record follows.
pub fn plan_cell_files(
    plan: &mut Plan,
    cell: &str,
    desired: &Plan,
    inputs: state::Inputs,
) -> Result<Regenerated, CellgenError> {
    let previous: CellRecord = state::load(plan, cell)?.unwrap_or_default();
    // An older cellgen never turns back what a newer one generated.
    if let Some(wrote) = provenance::newer_writer(&previous) {
        return Err(CellgenError::NewerWriter {
            record: state::record_path(cell),
            wrote,
            this: crate::model::scaffold::VERSION.into(),
        });
    }
    let mut wanted: BTreeMap<Utf8PathBuf, Option<String>> = desired
        .planned()
        .filter(|(path, _)| state::in_cell(path, cell))
        .map(|(path, after)| (path.to_path_buf(), after.map(str::to_string)))
        .collect();
    // Only the cell's own paths: a record naming anything else (hand-edited) is not obeyed.
    for stale in previous.files.keys().map(Utf8PathBuf::from) {
        if state::in_cell(&stale, cell) {
            wanted.entry(stale).or_insert(None);
        }
    }
    let mut files: BTreeMap<String, FileRecord> = BTreeMap::new();
    let mut outcome = Regenerated {
        ignored: previous
            .ignored
            .iter()
            .map(|(path, why)| (Utf8PathBuf::from(path), why.clone()))
            .collect(),
        ..Regenerated::default()
    };
    for (path, after) in wanted {
        let key = path.to_string();
        let entry = previous.files.get(&key);
        let current = plan.read(&path)?;
        let record = |text: &str| match entry {
            Some(e) if e.sha256 == sha256(text) => e.clone(),
            _ => FileRecord::new(text),
        };
        let untouched = match (&current, entry) {
            (None, _) => true,
            (Some(text), Some(e)) => sha256(text) == e.sha256,
            (Some(_), None) => false,
        };
        if current == after {
            // Already as generated: the record keeps saying which version generated it.
            if let Some(text) = &after {
                files.insert(key, record(text));
            }
        } else if untouched {
            if let Some(text) = &after {
                files.insert(key, FileRecord::new(text));
                plan.write(path, text.clone())?;
            } else {
                plan.delete(path)?;
            }
        } else {
            if let Some(e) = entry {
                files.insert(key, e.clone());
            }
            outcome.kept.push(path);
        }
    }
    for (path, after) in desired.changed() {
        if !state::in_cell(path, cell) && plan.read(path)?.as_deref() != after {
            match after {
                Some(text) => plan.write(path.to_path_buf(), text)?,
                None => plan.delete(path.to_path_buf())?,
            }
        }
    }
    // An older record without inputs gets them once the cell's files change (an untouched
    // cell's record stays as it is).
    let inputs = if previous.inputs.is_some() || files != previous.files {
        Some(inputs)
    } else {
        None
    };
    state::save(
        plan,
        cell,
        CellRecord {
            cellgen: crate::model::scaffold::VERSION.into(),
            inputs,
            files,
            extra: previous.extra,
            legacy: previous.legacy,
            renames: previous.renames,
            ignored: Vec::new(),
        },
    )?;
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn orders_merge_where_they_agree() {
        let merged = merge_orders(&[
            seq(&["kyverno", "karpenter"]),
            seq(&["metrics", "karpenter"]),
        ]);
        assert_eq!(merged, ["kyverno", "metrics", "karpenter"]);
        let merged = merge_orders(&[seq(&["b", "a"]), seq(&["a", "c"]), seq(&["c"])]);
        assert_eq!(merged, ["b", "a", "c"]);
        // A conflict (hand-edited files) still yields every name once.
        let merged = merge_orders(&[seq(&["a", "b"]), seq(&["b", "a"])]);
        assert_eq!(merged, ["a", "b"]);
    }
}
