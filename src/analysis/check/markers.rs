//! Conflict markers (`cellgen upgrade`, like `git merge`, writes them where both sides changed
//! the same lines) left in the files `check` reads or cellgen generated: such a file never
//! means what either side meant, even where it still parses (a YAML comment, an HCL heredoc).

use camino::{Utf8Path, Utf8PathBuf};

use crate::analysis::findings::Finding;
use crate::model::config::{CONFIG_FILE, Config};
use crate::ports::merge::{BASE_MARKER, OURS_MARKER, THEIRS_MARKER, marker_lines};
use crate::root::filestore::FileStore;

use crate::model::repo::{cell_flux_dir, cell_terraform_dir};

/// Findings for cellgen.yaml, the repository's generated files and shared directories (read
/// through `files`, the command's store); each cell's files are [`check_cell`]'s.
pub fn check(files: &FileStore, config: &Config, findings: &mut Vec<Finding>) {
    let root = files.root();
    let mut shared: Vec<Utf8PathBuf> = vec![Utf8PathBuf::from(CONFIG_FILE)];
    let mut dirs: Vec<Utf8PathBuf> = vec![Utf8PathBuf::from(crate::model::catalog::COMPONENTS_DIR)];
    dirs.extend(
        config
            .layers
            .iter()
            .map(|l| Utf8PathBuf::from(l.path.trim_start_matches("./"))),
    );
    for dir in &dirs {
        walk(files, dir, &mut shared, findings);
    }
    if let Ok(Some(record)) = crate::model::state::load_repository(&crate::writer::plan::Plan::new(
        root,
        crate::model::repo::read_by_flux,
    )) {
        shared.extend(record.files.keys().map(Utf8PathBuf::from));
    }
    shared.sort();
    shared.dedup();
    for file in &shared {
        scan(files, file, None, findings);
    }
}

/// Findings for the files of `cell` (its Flux directory and its Terraform stack), scanned by
/// the cell's own thread once its other checks have read them; the files scanned.
pub fn check_cell(files: &FileStore, cell: &str, findings: &mut Vec<Finding>) -> Vec<Utf8PathBuf> {
    let mut found = Vec::new();
    walk(files, &cell_flux_dir(cell), &mut found, findings);
    walk(files, &cell_terraform_dir(cell), &mut found, findings);
    for file in &found {
        scan(files, file, Some(cell), findings);
    }
    found
}

/// Every file under `dir` (listed through the store), skipping hidden directories (`.terraform/`)
/// but not hidden files: a stack's `.gitignore` is cellgen's and merged by `upgrade` like the rest.
/// A name that is not UTF-8 is a finding: no part of `check` could read that file by name.
fn walk(
    files: &FileStore,
    dir: &Utf8Path,
    out: &mut Vec<Utf8PathBuf>,
    findings: &mut Vec<Finding>,
) {
    match crate::model::repo::files_under_in(files, dir, true, &|name, is_dir| {
        is_dir && name.starts_with('.')
    }) {
        Ok(files) => out.extend(files),
        Err(e) => {
            // Unreadable otherwise: the checks that read these files report it.
            if let crate::error::CellgenError::NotUtf8Name { dir, .. } = &e {
                findings.push(Finding::error(
                    "not-utf8-name",
                    dir.clone(),
                    None,
                    e.to_string(),
                ));
            }
        }
    }
}

/// Whether a line of `bytes` starts with a marker's run of seven `<`, `|` or `>`: one vectorised
/// pass for the three characters (rare in manifests and Terraform), so that almost every file
/// is settled without checking it is UTF-8 or walking its lines.
fn may_hold_marker(bytes: &[u8]) -> bool {
    memchr::memchr3_iter(b'<', b'|', b'>', bytes).any(|at| {
        (at == 0 || bytes[at - 1] == b'\n')
            && [OURS_MARKER, BASE_MARKER, THEIRS_MARKER]
                .iter()
                .any(|m| bytes[at..].starts_with(m.as_bytes()))
    })
}

fn scan(files: &FileStore, file: &Utf8Path, cell: Option<&str>, findings: &mut Vec<Finding>) {
    // Borrowed from the store, as `read_to_string` would read it (not UTF-8: skipped).
    let Ok(bytes) = files.read(file) else {
        return;
    };
    if !may_hold_marker(&bytes) {
        return;
    }
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return;
    };
    let lines = marker_lines(text);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefilter_passes_every_text_with_marker_lines() {
        for text in [
            "a\n<<<<<<< ours\nb\n=======\nc\n>>>>>>> theirs\n",
            "|||||||\n",
            "x: 1\r\n>>>>>>> new\r\n",
            "<<<<<<<",
        ] {
            assert!(!marker_lines(text).is_empty(), "{text:?}");
            assert!(may_hold_marker(text.as_bytes()), "{text:?}");
        }
        for text in [
            "a: |\n  x <<<<<<< y\n",
            "v >= 1.0\n",
            " <<<<<<< indented\n",
            "",
        ] {
            assert!(marker_lines(text).is_empty(), "{text:?}");
            assert!(!may_hold_marker(text.as_bytes()), "{text:?}");
        }
    }
}
