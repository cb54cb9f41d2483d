//! Before a command writes: `cellgen check` on the repository as the plan would leave it, so a
//! command never writes what the next `check` rejects (issue 21). The same analysis, on the
//! working tree with the plan laid over it (`FileStore::planned`). Only errors in a file the
//! change writes, of a kind that file (or the cell and layer it is about) does not have already,
//! refuse it: an unrelated broken cell or component does not block every other command, and a
//! file already failing a rule (a key renamed in a manifest that lacked it) is not the change's
//! doing.

use std::collections::HashSet;
use std::sync::Arc;

use anyhow::Result;
use camino::Utf8Path;

use crate::analysis::check::{self, CheckOptions};
use crate::analysis::findings::{Finding, Place, Report, Severity};
use crate::error::CellgenError;
use crate::model::catalog::Catalog;
use crate::model::config::{CONFIG_FILE, Config};
use crate::model::repo::Repo;
use crate::ports::templates::Templates;
use crate::root::filestore::FileStore;
use crate::writer::plan::Plan;

/// Refuses `plan` when the repository it leaves has `check` errors the repository has not now.
/// Runs before the plan is printed, so `--dry-run` shows the same refusal as the real run.
pub fn refuse_new_errors(repo: &Repo, plan: &Plan) -> Result<()> {
    refuse_new_errors_except(repo, plan, &[])
}

/// As [`refuse_new_errors`], but what fails in the files `left_to_user` is the command's intended
/// result (the files upgrade leaves with conflict markers: the markers, and the YAML or HCL they
/// break, are the user's to resolve), not a reason to refuse.
pub fn refuse_new_errors_except(
    repo: &Repo,
    plan: &Plan,
    left_to_user: &[&Utf8Path],
) -> Result<()> {
    if plan.is_empty() {
        return Ok(());
    }
    let templates = Templates::new();
    let options = CheckOptions {
        cells: Vec::new(),
        overrides: Default::default(),
        mode: crate::ports::kustomize::Mode::Auto,
        ends_process: false,
    };
    let before: Option<Report> = Catalog::load(
        &templates,
        &Plan::new(&repo.root, crate::model::repo::read_by_flux),
    )
    .ok()
    .and_then(|catalog| {
        let files = Arc::new(FileStore::new(&repo.root));
        check::run_reading(repo, &catalog, &options, &files, None).ok()
    });
    let now = Failing::of(before.as_ref());
    let text = plan.read(CONFIG_FILE)?.unwrap_or_default();
    let planned = Repo {
        root: repo.root.clone(),
        config: Config::parse(&text, Utf8Path::new(CONFIG_FILE))?,
        config_text: text,
    };
    let catalog = Catalog::load(&templates, plan)?;
    let changed: HashSet<&str> = plan.changed().map(|(p, _)| p.as_str()).collect();
    let files = Arc::new(FileStore::planned(&repo.root, plan.changed()));
    // An analysis that cannot run at all here is `check`'s to report, not a reason to refuse.
    let Ok(after) = check::run_reading(&planned, &catalog, &options, &files, None) else {
        return Ok(());
    };
    let new: Vec<Finding> = after
        .findings
        .into_iter()
        .filter(|f| {
            f.severity == Severity::Error
                && !left_to_user.contains(&f.file.as_path())
                && changed.contains(f.file.as_str())
                && !now.had(f)
        })
        .collect();
    if new.is_empty() {
        return Ok(());
    }
    let report = Report {
        cells: after.cells,
        findings: new,
    };
    Err(CellgenError::PlannedFindings {
        findings: report.to_text(),
    }
    .into())
}

/// What already fails a rule before the change: by file, and by the cell and layer it is about
/// (an upgrade moves a cell's value from `variables.tf` into `terraform.tfvars`, and the
/// overlap it had is still the one it had, not the change's doing).
struct Failing<'a> {
    files: HashSet<(&'static str, &'a Utf8Path)>,
    places: HashSet<(&'static str, &'a Place)>,
}

impl<'a> Failing<'a> {
    fn of(report: Option<&'a Report>) -> Self {
        let findings = report.map(|r| r.findings.as_slice()).unwrap_or_default();
        Failing {
            files: findings
                .iter()
                .map(|f| (f.code, f.file.as_path()))
                .collect(),
            places: findings
                .iter()
                .flat_map(|f| f.places.iter().map(|p| (f.code, p)))
                .collect(),
        }
    }

    /// Whether `f`'s file had its rule broken already, or every place it is about did.
    fn had(&self, f: &Finding) -> bool {
        self.files.contains(&(f.code, f.file.as_path()))
            || (!f.places.is_empty() && f.places.iter().all(|p| self.places.contains(&(f.code, p))))
    }
}
