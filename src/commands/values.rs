//! `cellgen values CELL`: the cell's sample cell-metadata ConfigMap, for tools that take
//! substitution inputs from a file (flate's `--substitute-from`, `flux build ... --dry-run`).

use anyhow::Result;

use super::Session;
use crate::analysis::snapshot::{Snapshot, configmap};
use crate::cli::ValuesArgs;
use crate::model::repo::Repo;
use crate::ports::kustomize::Mode;

pub fn run(session: &mut Session, args: ValuesArgs) -> Result<()> {
    let repo = Repo::discover(&session.start)?;
    let cell = super::resolve_cell(session, &repo, Some(&args.cell))?;
    let snapshot = Snapshot::working(&repo)?;
    // Building the cell's directory tells which components it runs (their keys are in the
    // sample); nothing else is built.
    let mut cache = snapshot.build_cache(Mode::Native);
    let data = snapshot.cell_sample(&cell.name, &mut cache)?;
    // Say what the values are: a tool fed this file must not take a contract example for the
    // cell's real cluster name or role ARN.
    print!(
        "# Sample cell-metadata of {cell}, as `cellgen check` and `render` substitute: literals and\n\
         # var.* values (terraform.tfvars) are the cell's own; a value Terraform computes at apply time\n\
         # (module outputs, resource attributes) is the contract's example (cellgen.yaml keys.<key>.example).\n\
         # The cell's real values: kubectl get configmap cell-metadata -n flux-system -o yaml\n{}",
        crate::ports::envsubst::to_flux_yaml(&configmap(&data)),
        cell = cell.name,
    );
    Ok(())
}
