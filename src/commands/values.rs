//! `cellgen values CELL`: the cell's sample cell-metadata ConfigMap, for tools that take
//! substitution inputs from a file (flate's `--substitute-from`, `flux build ... --dry-run`).

use anyhow::Result;

use super::Session;
use crate::cli::ValuesArgs;
use crate::kustomize::Mode;
use crate::repo::Repo;
use crate::snapshot::{Snapshot, configmap};

pub fn run(session: &mut Session, args: ValuesArgs) -> Result<()> {
    let repo = Repo::discover(session.start.as_std_path())?;
    let cell = super::resolve_cell(session, &repo, Some(&args.cell))?;
    let snapshot = Snapshot::working(&repo)?;
    // Building the cell's directory tells which components it runs (their keys are in the
    // sample); nothing else is built.
    let mut cache = snapshot.build_cache(Mode::Native);
    let data = snapshot.cell_sample(&cell.name, &mut cache)?;
    print!("{}", crate::substitute::to_flux_yaml(&configmap(&data)));
    Ok(())
}
