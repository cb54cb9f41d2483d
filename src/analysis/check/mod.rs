//! `cellgen check`: every layer of every cell rendered offline with a sample cell-metadata
//! ConfigMap in strict mode, plus the contract between Terraform and Flux. Returns findings; the
//! command prints them.

mod cel;
pub mod flux;
pub mod markers;
pub mod network;
pub mod schema;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};

use crate::analysis::findings::{Finding, Report};
use crate::analysis::render::{BuildCache, load_cell, render_layers};
use crate::analysis::{contract, layer_check as layer, locate};
use crate::error::CellgenError;
use crate::model::catalog::Catalog;
use crate::model::cells::cell_components;
use crate::model::config::{CONFIG_FILE, line_of};
use crate::model::repo::Repo;
use crate::ports::kustomize::Mode;
use crate::root::filestore::FileStore;
use crate::root::source::Source;
use crate::suggest;
use crate::writer::plan::Plan;

pub struct CheckOptions {
    /// Cells to check; empty means all.
    pub cells: Vec<String>,
    /// Values that replace the sample's (from `--values`).
    pub overrides: BTreeMap<String, String>,
    pub mode: Mode,
    /// The process ends after this check: the build cache (and the file store it holds) is left
    /// for the system to take back rather than freed piece by piece (at 1,000 cells freeing them was
    /// about 5% of check's instructions, all on one thread after the cells were done).
    pub ends_process: bool,
}

pub fn run(repo: &Repo, catalog: &Catalog, options: &CheckOptions) -> Result<Report, CellgenError> {
    run_observed(repo, catalog, options, None)
}

/// Told `(done, total, cell)` as each cell starts; None when no one is watching.
pub type OnCell<'a> = Option<&'a mut dyn FnMut(usize, usize, &str)>;

/// `run`, telling `on_cell(done, total, cell)` before each cell is checked (for a progress bar;
/// None when nothing is shown, and the workers then tell nothing).
pub fn run_observed(
    repo: &Repo,
    catalog: &Catalog,
    options: &CheckOptions,
    on_cell: OnCell<'_>,
) -> Result<Report, CellgenError> {
    // Every reader of the command asks one store: each file is opened once.
    let files = Arc::new(FileStore::new(&repo.root));
    run_reading(repo, catalog, options, &files, on_cell)
}

/// The cells a planned change leaves: `cells/`'s directories with the plan laid over them, so a
/// cell `new` adds is checked and one `remove-cell` empties is not (the disk still lists it).
fn planned_cells(files: &FileStore) -> Vec<String> {
    let cells = crate::model::repo::CELLS_DIR;
    let listing = files.list(camino::Utf8Path::new(cells));
    let mut names: Vec<String> = listing
        .entries()
        .filter(|(_, kind)| matches!(kind, Ok(crate::paths::Kind::Dir)))
        .filter_map(|(name, _)| name.to_str())
        .filter(|name| !name.starts_with('.'))
        .filter(|name| {
            files
                .list(&camino::Utf8Path::new(cells).join(name))
                .names()
                .next()
                .is_some()
        })
        .map(str::to_owned)
        .collect();
    names.sort();
    names
}

/// `run_observed`, the repository's files read through `files` (whose counters then tell what
/// the check opened).
pub fn run_reading(
    repo: &Repo,
    catalog: &Catalog,
    options: &CheckOptions,
    files: &Arc<FileStore>,
    on_cell: OnCell<'_>,
) -> Result<Report, CellgenError> {
    let all = match files.is_planned() {
        true => planned_cells(files),
        false => repo.cells()?,
    };
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
    // Nothing checked is not a pass: a repository without cells (or a `cells/` that moved) would
    // otherwise look green. An error finding, so every format reports it.
    if all.is_empty() {
        report.findings.push(Finding::error(
            "no-cells",
            crate::model::repo::CELLS_DIR,
            None,
            format!(
                "no cell was found under {}/, so nothing was checked; add one with `cellgen new NAME`",
                crate::model::repo::CELLS_DIR
            ),
        ));
        return Ok(report);
    }
    let cache = BuildCache::with_source(&repo.root, Source::Disk(files.clone()), options.mode);
    let mut used: BTreeSet<String> = BTreeSet::new();
    // Whether every layer of every cell was rendered; otherwise a key may look unused only
    // because the layer that uses it was not.
    let mut complete = true;
    // The repository-wide checks run beside the cells' (report.normalise orders findings).
    let (checked, repository) = std::thread::scope(|scope| {
        let repository = scope.spawn(|| {
            let mut findings = Vec::new();
            network::check(files, &repo.config.network, &all, &cells, &mut findings);
            markers::check(files, &repo.config, &mut findings);
            findings
        });
        let checked = check_cells(repo, catalog, options, files, &cache, &cells, on_cell);
        let repository = match repository.join() {
            Ok(findings) => findings,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        (checked, repository)
    });
    for checked in checked {
        report.findings.extend(checked.findings);
        used.extend(checked.used);
        complete &= checked.complete;
    }
    report.findings.extend(repository);
    if options.cells.is_empty() && !cells.is_empty() && complete {
        let config_text = files
            .read_to_string(camino::Utf8Path::new(CONFIG_FILE))
            .unwrap_or_default();
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
    if options.ends_process {
        std::mem::forget(cache);
    }
    Ok(report)
}

/// What checking one cell found.
#[derive(Default)]
struct CellChecked {
    findings: Vec<Finding>,
    /// Keys some manifest of the cell asks for.
    used: BTreeSet<String>,
    /// Whether every layer of the cell was rendered.
    complete: bool,
}

/// Checks `cells` on every core, each cell by one thread from start to end (builds are shared
/// through `cache`); results in the order of `cells`, so the report does not depend on timing.
fn check_cells(
    repo: &Repo,
    catalog: &Catalog,
    options: &CheckOptions,
    files: &Arc<FileStore>,
    cache: &BuildCache,
    cells: &[String],
    on_cell: OnCell<'_>,
) -> Vec<CellChecked> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(cells.len())
        .max(1);
    let next = AtomicUsize::new(0);
    // Cells started, for `on_cell`: a message and a wake-up of the caller's thread per cell,
    // so none without an observer.
    let (started, starts) = mpsc::channel::<usize>();
    let started = on_cell.is_some().then_some(started);
    let mut results: Vec<Option<CellChecked>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let started = started.clone();
                let next = &next;
                scope.spawn(move || {
                    let mut sources = locate::SourceFiles::reading(files.clone());
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(cell) = cells.get(i) else { break };
                        if let Some(started) = &started {
                            // The receiver lives until every worker ends.
                            let _ = started.send(i);
                        }
                        let mut checked =
                            check_cell(repo, catalog, options, files, cache, &mut sources, cell);
                        release_cell(files, cache, cell, &mut checked.findings);
                        done.push((i, checked));
                    }
                    done
                })
            })
            .collect();
        drop(started);
        // Progress is told here, on the caller's thread, as cells start.
        if let Some(on_cell) = on_cell {
            for (n, i) in starts.iter().enumerate() {
                on_cell(n, cells.len(), &cells[i]);
            }
        }
        let mut results: Vec<Option<CellChecked>> = cells.iter().map(|_| None).collect();
        for worker in workers {
            let done = match worker.join() {
                Ok(done) => done,
                Err(panic) => std::panic::resume_unwind(panic),
            };
            for (i, checked) in done {
                results[i] = Some(checked);
            }
        }
        results
    });
    results
        .iter_mut()
        .map(|r| r.take().expect("every cell is checked once"))
        .collect()
}

/// `cells/<cell>/flux-system/`: the manifests cellgen 0.2.0's `flux_bootstrap_git` committed.
/// The Flux Operator installs Flux now and the cell's kustomization does not list them, so
/// nothing applies them; they only mislead (and cellgen did not write them, so it leaves them).
fn leftover_bootstrap(files: &FileStore, cell: &str, findings: &mut Vec<Finding>) {
    let dir = crate::model::repo::cell_flux_dir(cell);
    if files
        .list(&dir)
        .names()
        .any(|n| n == crate::model::names::FLUX_SYSTEM)
    {
        findings.push(
            Finding::warning(
                "leftover-bootstrap",
                dir.join(crate::model::names::FLUX_SYSTEM),
                None,
                format!(
                    "{dir}/flux-system/ holds the Flux manifests flux_bootstrap_git committed (cellgen 0.2.0); the Flux Operator installs Flux now (terraform/cells/{cell}/flux.tf) and nothing applies this directory: delete it once the cell's stack is applied"
                ),
            )
            .in_cell(cell),
        );
    }
}

/// Renders and checks one cell: its contract, every layer, its Flux objects.
fn check_cell(
    repo: &Repo,
    catalog: &Catalog,
    options: &CheckOptions,
    files: &FileStore,
    cache: &BuildCache,
    sources: &mut locate::SourceFiles,
    cell: &str,
) -> CellChecked {
    let mut out = CellChecked {
        complete: true,
        ..CellChecked::default()
    };
    let findings = &mut out.findings;
    leftover_bootstrap(files, cell, findings);
    let loaded = match load_cell(&repo.root, cell, cache) {
        Ok(loaded) => loaded,
        Err(e) => {
            // The contract is still checked, with the components its layer files name.
            let plan = Plan::new(&repo.root, crate::model::repo::read_by_flux);
            let components = cell_components(&plan, &repo.config, cell).unwrap_or_default();
            contract::check_cell(
                files,
                &repo.config,
                catalog,
                cell,
                &components,
                &options.overrides,
                findings,
            );
            findings.push(Finding::error("invalid-cell", e.file, e.line, e.message).in_cell(cell));
            out.complete = false;
            return out;
        }
    };
    let components = loaded.components();
    let sample = contract::check_cell(
        files,
        &repo.config,
        catalog,
        cell,
        &components,
        &options.overrides,
        findings,
    );
    // Key names Flux rejects are reported on their line in cell-metadata.tf by the contract
    // check; rendering with them would repeat that once per layer, at no line, and hide the
    // layers' own findings. (An invalid name from --values is still reported per layer.)
    let mut data = sample.data;
    data.retain(|k, _| {
        crate::model::keys::is_valid_key_name(k) || options.overrides.contains_key(k)
    });
    let rendered = render_layers(loaded, &data, cache);
    for invalid in &rendered.invalid {
        let (file, line) = sources.locate_field(
            std::slice::from_ref(&invalid.file),
            "Kustomization",
            &invalid.name,
            &layer::steps(&["spec"]),
            None,
        );
        findings.push(
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
        out.complete = false;
    }
    let mut cx = layer::Context {
        root: &repo.root,
        cache,
        sources,
        used: &mut out.used,
    };
    for rendered_layer in &rendered.layers {
        let mut layer_findings = Vec::new();
        out.complete &= layer::check_layer(&mut cx, rendered_layer, &mut layer_findings);
        findings.extend(
            layer_findings
                .into_iter()
                .map(|f| f.in_cell(cell).in_layer(&rendered_layer.layer.name)),
        );
    }
    let validations = files.memos().get::<schema::Validations>();
    flux::check_cell(&rendered, cell, sources, &validations, findings);
    out
}

/// Scans the cell's files for conflict markers (the checks above read them already), then gives
/// back what no other check asks for: the files' contents (save `terraform.tfvars`, which the
/// VPC check reads on its own thread) and the build of the cell's directory. `check` so holds
/// one cell per core at a time, not the whole repository: at 1,000 cells its peak memory fell
/// from 100 MiB to 40 MiB, and with it the kernel's zeroing of fresh pages (bench/README.md).
fn release_cell(files: &FileStore, cache: &BuildCache, cell: &str, findings: &mut Vec<Finding>) {
    for file in markers::check_cell(files, cell, findings) {
        if file.file_name() != Some(crate::model::repo::TFVARS_FILE) {
            files.release(&file);
        }
    }
    cache.release(crate::model::repo::cell_flux_dir(cell).as_str());
}
