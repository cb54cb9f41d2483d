//! `cellgen check`: every layer of every cell rendered offline with a sample cell-metadata
//! ConfigMap in strict mode, plus the contract between Terraform and Flux. Returns findings; the
//! command prints them.

mod cel;
pub mod contract;
pub mod findings;
pub mod flux;
mod format;
pub mod layer;
pub mod locate;
pub mod markers;
pub mod network;
pub mod schema;
pub mod secrets;

use std::collections::{BTreeMap, BTreeSet};

use crate::catalog::Catalog;
use crate::components::cell_components;
use crate::config::{CONFIG_FILE, line_of};
use crate::error::CellgenError;
use crate::kustomize::Mode;
use crate::plan::Plan;
use crate::render::{BuildCache, load_cell, render_layers};
use crate::repo::Repo;
use crate::suggest;
pub use findings::{Finding, Place, Report, Severity};
pub use format::{ANNOTATIONS_PER_STEP, STEP_SUMMARY_LIMIT};

/// Name of the ConfigMap Terraform writes and every layer substitutes from.
pub const METADATA_CONFIGMAP: &str = "cell-metadata";

pub struct CheckOptions {
    /// Cells to check; empty means all.
    pub cells: Vec<String>,
    /// Values that replace the sample's (from `--values`).
    pub overrides: BTreeMap<String, String>,
    pub mode: Mode,
}

pub fn run(repo: &Repo, catalog: &Catalog, options: &CheckOptions) -> Result<Report, CellgenError> {
    run_observed(repo, catalog, options, &mut |_, _, _| {})
}

/// `run`, telling `on_cell(done, total, cell)` before each cell is checked (for a progress bar).
pub fn run_observed(
    repo: &Repo,
    catalog: &Catalog,
    options: &CheckOptions,
    on_cell: &mut dyn FnMut(usize, usize, &str),
) -> Result<Report, CellgenError> {
    let all = repo.cells()?;
    for name in &options.cells {
        if !all.contains(name) {
            return Err(CellgenError::UnknownCell {
                name: name.clone(),
                hint: suggest::hint(name, all.iter().map(String::as_str)),
                cells: all,
            });
        }
    }
    let cells = if options.cells.is_empty() {
        all.clone()
    } else {
        options.cells.clone()
    };
    let mut report = Report {
        cells: cells.clone(),
        findings: Vec::new(),
    };
    let mut cache = BuildCache::new(&repo.root, options.mode);
    let mut sources = locate::SourceFiles::new(&repo.root);
    let mut used: BTreeSet<String> = BTreeSet::new();
    let plan = Plan::new(&repo.root);
    // Whether every layer of every cell was rendered; otherwise a key may look unused only
    // because the layer that uses it was not.
    let mut complete = true;
    for (done, cell) in cells.iter().enumerate() {
        on_cell(done, cells.len(), cell);
        let loaded = match load_cell(&repo.root, cell, &mut cache) {
            Ok(loaded) => loaded,
            Err(e) => {
                // The contract is still checked, with the components its layer files name.
                let components = cell_components(&plan, &repo.config, cell).unwrap_or_default();
                contract::check_cell(
                    &repo.root,
                    &repo.config,
                    catalog,
                    cell,
                    &components,
                    &options.overrides,
                    &mut report.findings,
                );
                report
                    .findings
                    .push(Finding::error("invalid-cell", e.file, e.line, e.message).in_cell(cell));
                complete = false;
                continue;
            }
        };
        let components = loaded.components();
        let sample = contract::check_cell(
            &repo.root,
            &repo.config,
            catalog,
            cell,
            &components,
            &options.overrides,
            &mut report.findings,
        );
        // Key names Flux rejects are reported on their line in cell-metadata.tf by the contract
        // check; rendering with them would repeat that once per layer, at no line, and hide the
        // layers' own findings. (An invalid name from --values is still reported per layer.)
        let mut data = sample.data;
        data.retain(|k, _| crate::keys::is_valid_key_name(k) || options.overrides.contains_key(k));
        let rendered = render_layers(loaded, &data, &mut cache);
        for invalid in &rendered.invalid {
            let (file, line) = sources.locate_field(
                std::slice::from_ref(&invalid.file),
                "Kustomization",
                &invalid.name,
                &layer::steps(&["spec"]),
                None,
            );
            report.findings.push(
                Finding::error(
                    "invalid-cell",
                    file,
                    line,
                    format!(
                        "Flux Kustomization `{}` cannot be read: {}",
                        invalid.name, invalid.message
                    ),
                )
                .in_cell(cell),
            );
            complete = false;
        }
        let mut cx = layer::Context {
            root: &repo.root,
            cache: &mut cache,
            sources: &mut sources,
            used: &mut used,
        };
        for rendered_layer in &rendered.layers {
            let mut findings = Vec::new();
            complete &= layer::check_layer(&mut cx, rendered_layer, &mut findings);
            report.findings.extend(
                findings
                    .into_iter()
                    .map(|f| f.in_cell(cell).in_layer(&rendered_layer.layer.name)),
            );
        }
        flux::check_cell(&rendered, cell, &mut sources, &mut report.findings);
    }
    network::check(&repo.root, &all, &cells, &mut report.findings);
    markers::check(&repo.root, &repo.config, &cells, &mut report.findings);
    if options.cells.is_empty() && !cells.is_empty() && complete {
        let config_text = std::fs::read_to_string(repo.root.join(CONFIG_FILE)).unwrap_or_default();
        for key in repo.config.keys.keys().filter(|k| !used.contains(*k)) {
            report.findings.push(Finding::warning(
                "unused-key",
                CONFIG_FILE,
                line_of(&config_text, &format!("{key}:")),
                format!("no manifest of any cell uses `${{{key}}}`: drop it from the contract (and the cells' ConfigMaps) if nothing needs it"),
            ));
        }
    }
    report.normalise();
    Ok(report)
}
