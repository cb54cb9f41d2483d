use std::process::ExitCode;

use anyhow::{Context, Result};

use super::Session;
use crate::analysis::check::{self, CheckOptions};
use crate::cli::{CheckArgs, CheckFormat};
use crate::model::catalog::Catalog;
use crate::model::repo::Repo;
use crate::ports::templates::Templates;
use crate::writer::plan::Plan;

pub fn run(session: &mut Session, args: CheckArgs) -> Result<ExitCode> {
    let repo = Repo::discover(&session.start)?;
    let overrides = match &args.render.values {
        Some(path) => super::read_values(path)?,
        None => Default::default(),
    };
    let catalog = Catalog::load(
        &Templates::new(),
        &Plan::new(&repo.root, crate::model::repo::read_by_flux),
    )?;
    let options = CheckOptions {
        cells: args.cells,
        overrides,
        mode: super::kustomize_mode(args.render.kustomize),
        ends_process: true,
    };
    let progress =
        crate::commands::ui::progress::Progress::new("cells", args.format != CheckFormat::Json);
    let mut step = |done, total, cell: &str| progress.step(done, total, cell);
    let on_cell = progress
        .is_shown()
        .then_some(&mut step as &mut dyn FnMut(usize, usize, &str));
    let report = check::run_observed(&repo, &catalog, &options, on_cell)?;
    progress.finish();
    let output = match args.format {
        CheckFormat::Text => crate::commands::ui::color::check_report(&report.to_text()),
        CheckFormat::Json => report.to_json(),
        CheckFormat::Github => report.to_github(),
    };
    crate::out!("{output}")?;
    write_step_summary(&report)?;
    Ok(if report.errors() > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// In GitHub Actions (`$GITHUB_STEP_SUMMARY` set, whatever the format), appends a Markdown
/// summary to the step's summary file, within what GitHub accepts per step.
fn write_step_summary(report: &crate::analysis::findings::Report) -> Result<()> {
    // An environment variable is where this path enters: not UTF-8 is an error naming it.
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return Ok(());
    };
    let path = crate::paths::from_user(
        std::path::Path::new(&path),
        "$GITHUB_STEP_SUMMARY",
        "Set GITHUB_STEP_SUMMARY to a file whose path is UTF-8",
    )?;
    let used = crate::root::disk::metadata(&path).map_or(0, |m| m.len() as usize);
    let budget = crate::analysis::format::STEP_SUMMARY_LIMIT.saturating_sub(used);
    let markdown = report.to_markdown(budget);
    if markdown.len() > budget {
        return Ok(()); // The step's summary is full already.
    }
    crate::root::disk::append(&path, markdown.as_bytes()).with_context(|| {
        format!(
            "cannot write the job summary to $GITHUB_STEP_SUMMARY ({})",
            path
        )
    })
}
