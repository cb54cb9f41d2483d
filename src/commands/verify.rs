//! `cellgen verify [CELL] --from FILE`: reads the real ConfigMap, picks the cell, prints the
//! report as `check` does.

use std::process::ExitCode;

use anyhow::Result;

use super::Session;
use crate::analysis::render::BuildCache;
use crate::cli::{CheckFormat, VerifyArgs};
use crate::error::CellgenError;
use crate::model::catalog::Catalog;
use crate::model::repo::Repo;
use crate::ports::templates::Templates;
use crate::writer::plan::Plan;

pub fn run(session: &mut Session, args: VerifyArgs) -> Result<ExitCode> {
    let repo = Repo::discover(&session.start)?;
    // A file given on the command line enters here: UTF-8, or an error naming it.
    let from = crate::paths::from_user(&args.from, "the file", "Pass a file whose path is UTF-8")?;
    let path = session.start.join(&from);
    let text = crate::root::limited::read_file(&path, &from)?;
    let real = crate::analysis::verify::read(&text, &from)?;
    let cell = match &args.cell {
        Some(name) => super::resolve_cell(session, &repo, Some(name))?.name,
        None => {
            let cells = repo.cells()?;
            match real.cell_name() {
                Some(name) if cells.iter().any(|c| c == name) => name.to_string(),
                _ if cells.len() == 1 => cells[0].clone(),
                named => {
                    return Err(CellgenError::InvalidFlag {
                        flag: "CELL".into(),
                        reason: format!(
                            "{}: give the cell to verify as. Cells: {}",
                            match named {
                                Some(n) => format!(
                                    "the ConfigMap's cell_name `{n}` is not a cell of this repository"
                                ),
                                None => "the ConfigMap has no cell_name".to_string(),
                            },
                            cells.join(", ")
                        ),
                    }
                    .into());
                }
            }
        }
    };
    let catalog = Catalog::load(
        &Templates::new(),
        &Plan::new(&repo.root, crate::model::repo::read_by_flux),
    )?;
    let mut cache = BuildCache::new(&repo.root, super::kustomize_mode(args.kustomize));
    let report = crate::analysis::verify::verify(
        &repo.root,
        &repo.config,
        &catalog,
        &cell,
        &real,
        &mut cache,
    );
    let output = match args.format {
        CheckFormat::Text => crate::commands::ui::color::check_report(&report.to_text()),
        CheckFormat::Json => report.to_json(),
        CheckFormat::Github => report.to_github(),
    };
    crate::out!("{output}")?;
    Ok(if report.errors() > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
