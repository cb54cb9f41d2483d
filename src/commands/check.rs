use std::process::ExitCode;

use anyhow::Result;

use super::Session;
use crate::catalog::Catalog;
use crate::check::{self, CheckOptions};
use crate::cli::{CheckArgs, CheckFormat};
use crate::plan::Plan;
use crate::repo::Repo;
use crate::templates::Templates;

pub fn run(session: &mut Session, args: CheckArgs) -> Result<ExitCode> {
    let repo = Repo::discover(&session.start)?;
    let overrides = match &args.render.values {
        Some(path) => super::read_values(path)?,
        None => Default::default(),
    };
    let catalog = Catalog::load(&Templates::new(), &Plan::new(&repo.root))?;
    let options = CheckOptions {
        cells: args.cells,
        overrides,
        mode: super::kustomize_mode(args.render.kustomize),
    };
    let progress = crate::progress::Progress::new("cells", args.format != CheckFormat::Json);
    let report = check::run_observed(&repo, &catalog, &options, &mut |done, total, cell| {
        progress.step(done, total, cell)
    })?;
    progress.finish();
    let output = match args.format {
        CheckFormat::Text => crate::color::check_report(&report.to_text()),
        CheckFormat::Json => report.to_json(),
        CheckFormat::Github => report.to_github(),
    };
    print!("{output}");
    Ok(if report.errors() > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
