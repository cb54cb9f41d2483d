//! Conflict markers (`cellgen upgrade`, like `git merge`, writes them where both sides changed
//! the same lines) left in the files `check` reads or cellgen generated: such a file never
//! means what either side meant, even where it still parses (a YAML comment, an HCL heredoc).

use std::path::{Path, PathBuf};

use super::Finding;
use crate::config::{CONFIG_FILE, Config};
use crate::merge::{OURS_MARKER, marker_lines};
use crate::repo::{cell_flux_dir, cell_terraform_dir};

/// Findings for cellgen.yaml, the repository's generated files and shared directories, and the
/// `checked` cells' directories.
pub fn check(root: &Path, config: &Config, checked: &[String], findings: &mut Vec<Finding>) {
    let mut shared: Vec<PathBuf> = vec![PathBuf::from(CONFIG_FILE)];
    let mut dirs: Vec<PathBuf> = vec![PathBuf::from(crate::catalog::COMPONENTS_DIR)];
    dirs.extend(
        config
            .layers
            .iter()
            .map(|l| PathBuf::from(l.path.trim_start_matches("./"))),
    );
    for dir in &dirs {
        walk(root, dir, &mut shared);
    }
    if let Ok(Some(record)) =
        crate::state::load_repository(&crate::plan::Plan::new(crate::paths::utf8(root)))
    {
        shared.extend(record.files.keys().map(PathBuf::from));
    }
    shared.sort();
    shared.dedup();
    for file in &shared {
        scan(root, file, None, findings);
    }
    for cell in checked {
        let mut files = Vec::new();
        walk(root, cell_flux_dir(cell).as_std_path(), &mut files);
        walk(root, cell_terraform_dir(cell).as_std_path(), &mut files);
        for file in &files {
            scan(root, file, Some(cell), findings);
        }
    }
}

/// Every file under `dir` (relative to `root`), skipping hidden entries (`.terraform/`).
fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let rel = dir.join(&name);
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => walk(root, &rel, out),
            Ok(kind) if kind.is_file() => out.push(rel),
            _ => {}
        }
    }
}

fn scan(root: &Path, file: &Path, cell: Option<&str>, findings: &mut Vec<Finding>) {
    let Ok(text) = std::fs::read_to_string(root.join(file)) else {
        return;
    };
    let lines = marker_lines(&text);
    let Some(first) = lines.first() else {
        return;
    };
    let all: Vec<&str> = text.lines().collect();
    let starts: Vec<usize> = lines
        .iter()
        .copied()
        .filter(|n| all[n - 1].starts_with(OURS_MARKER))
        .collect();
    let message = "unresolved merge conflict (from `cellgen upgrade` or Git): keep what you want between the `<<<<<<< ours` and `>>>>>>>` lines (`||||||| base` shows what cellgen generated before), then delete the marker lines";
    let at = if starts.is_empty() {
        vec![*first]
    } else {
        starts
    };
    for line in at {
        let finding = Finding::error("conflict-marker", file, Some(line), message);
        findings.push(match cell {
            Some(cell) => finding.in_cell(cell),
            None => finding,
        });
    }
}
