//! Before a command writes: `cellgen check` on the repository as the plan would leave it, so a
//! command never writes what the next `check` rejects (issue 21). The same analysis, on the
//! working tree with the plan laid over it (`FileStore::planned`). Only errors in a file the
//! change writes, of a kind that file does not have already, refuse it: an unrelated broken
//! cell or component does not block every other command, and a file already failing a rule
//! (a key renamed in a manifest that lacked it) is not the change's doing.

use std::collections::HashSet;
use std::sync::Arc;

use anyhow::Result;
use camino::Utf8Path;

use crate::analysis::check::{self, CheckOptions};
use crate::analysis::findings::{Finding, Report, Severity};
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

/// As [`refuse_new_errors`], but findings whose code is in `left_to_user` are the command's
/// intended result (upgrade's conflict markers), not a reason to refuse.
pub fn refuse_new_errors_except(repo: &Repo, plan: &Plan, left_to_user: &[&str]) -> Result<()> {
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
    let key = |f: &Finding| (f.code, f.file.clone());
    let now: HashSet<_> = Catalog::load(
        &templates,
        &Plan::new(&repo.root, crate::model::repo::read_by_flux),
    )
    .ok()
    .and_then(|catalog| {
        let files = Arc::new(FileStore::new(&repo.root));
        check::run_reading(repo, &catalog, &options, &files, None).ok()
    })
    .map(|r| r.findings.iter().map(key).collect())
    .unwrap_or_default();
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
                && !left_to_user.contains(&f.code)
                && changed.contains(f.file.as_str())
                && !now.contains(&key(f))
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
