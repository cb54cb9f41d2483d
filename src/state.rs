//! What cellgen generated for each cell, so `new --force` can tell the files a user changed
//! (kept) from the ones still as generated (regenerated). Stored as `.cellgen/cells/<cell>.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::CellgenError;
use crate::plan::Plan;
use crate::scaffold::Files;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CellRecord {
    /// cellgen version that last generated the cell.
    pub cellgen: String,
    /// sha256 of each generated file as cellgen wrote it, by repository-relative path.
    pub files: BTreeMap<String, String>,
}

pub fn record_path(cell: &str) -> PathBuf {
    Path::new(".cellgen/cells").join(format!("{cell}.json"))
}

pub fn sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub fn load(plan: &Plan, cell: &str) -> Result<Option<CellRecord>, CellgenError> {
    let path = record_path(cell);
    match plan.read(&path)? {
        None => Ok(None),
        Some(text) => {
            serde_json::from_str(&text)
                .map(Some)
                .map_err(|err| CellgenError::InvalidFile {
                    path,
                    message: format!(
                        "not a cellgen record ({err}); delete it to let cellgen regenerate it"
                    ),
                })
        }
    }
}

pub fn render(record: &CellRecord) -> String {
    let mut text = serde_json::to_string_pretty(record).expect("a record always serialises");
    text.push('\n');
    text
}

/// How `--force` treated the existing files.
#[derive(Debug, Default)]
pub struct Regenerated {
    pub kept: Vec<PathBuf>,
}

/// Puts `generated` into the plan. Without `force` every file is written. With it, a file on disk
/// is replaced only if it still has the hash cellgen recorded; files cellgen generated before but
/// no longer does are deleted under the same rule.
pub fn plan_generated(
    plan: &mut Plan,
    cell: &str,
    generated: Files,
    force: bool,
) -> Result<Regenerated, CellgenError> {
    let previous = load(plan, cell)?.unwrap_or_default();
    let mut record = CellRecord {
        cellgen: crate::scaffold::VERSION.into(),
        files: BTreeMap::new(),
    };
    let mut outcome = Regenerated::default();
    let untouched = |plan: &Plan, path: &Path| -> Result<bool, CellgenError> {
        let key = path.to_string_lossy();
        Ok(match (plan.read(path)?, previous.files.get(key.as_ref())) {
            (None, _) => true,
            (Some(current), Some(hash)) => &sha256(&current) == hash,
            (Some(_), None) => false,
        })
    };
    for (path, contents) in generated {
        let key = path.to_string_lossy().into_owned();
        let current = plan.read(&path)?;
        if force && current.as_deref() != Some(contents.as_str()) && !untouched(plan, &path)? {
            outcome.kept.push(path);
            if let Some(hash) = previous.files.get(&key) {
                record.files.insert(key, hash.clone());
            }
            continue;
        }
        record.files.insert(key, sha256(&contents));
        plan.write(path, contents)?;
    }
    if force {
        for stale in previous
            .files
            .keys()
            .filter(|k| !record.files.contains_key(*k))
        {
            let path = PathBuf::from(stale);
            if plan.exists(&path) {
                if untouched(plan, &path)? {
                    plan.delete(path)?;
                } else {
                    outcome.kept.push(path);
                }
            }
        }
    }
    plan.write(record_path(cell), render(&record))?;
    Ok(outcome)
}

/// `track_edits` for every cell: a schema change edits all cells' ConfigMaps.
pub fn track_all_edits(plan: &mut Plan, current: &str) -> Result<(), CellgenError> {
    for cell in crate::components::all_cells(plan, current)? {
        track_edits(plan, &cell)?;
    }
    Ok(())
}

/// After a command edits a cell's generated files, files that were still as generated stay
/// tracked as generated (their new hash is recorded), so `new --force` keeps treating them as
/// cellgen's. Files the user had changed stay untracked.
pub fn track_edits(plan: &mut Plan, cell: &str) -> Result<(), CellgenError> {
    let Some(mut record) = load(plan, cell)? else {
        return Ok(());
    };
    // The record as this command found it: `new --force` may already have replaced it in the plan.
    let before: CellRecord = crate::plan::read_optional(&plan.root().join(record_path(cell)))?
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    let mut changed = false;
    for (path, hash) in record.files.iter_mut() {
        let on_disk = crate::plan::read_optional(&plan.root().join(path))?;
        let pristine = on_disk.as_deref().is_none_or(|text| {
            let current = sha256(text);
            &current == hash || before.files.get(path) == Some(&current)
        });
        if let Some(planned) = plan.read(path)?
            && pristine
            && &sha256(&planned) != hash
        {
            *hash = sha256(&planned);
            changed = true;
        }
    }
    if changed {
        plan.write(record_path(cell), render(&record))?;
    }
    Ok(())
}
