//! What a cell's existing files say about how it was made (its Kubernetes version, its egress
//! gateway, the bootstrap its state may still hold): the inputs `new --force` and `upgrade`
//! regenerate it with, and `list` shows.

use crate::error::CellgenError;
use crate::model::repo::{cell_flux_dir, cell_terraform_dir};
use crate::model::state;
use crate::ports::edit::hcl;
use crate::writer::plan::Plan;

/// What the cell's existing files say about how it was made.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ExistingInputs {
    /// `kubernetes_version` in terraform.tfvars.
    pub kubernetes_version: Option<String>,
    /// Whether the cell has an egress gateway (egress.tf exists, or cellgen generated it).
    pub egress_gateway: Option<bool>,
    /// Whether its state may still hold `flux_bootstrap_git.this`: its flux.tf declares it
    /// (cellgen 0.2.0), or flux-bootstrap-removed.tf, which forgets it, is still there.
    pub forget_flux_bootstrap: bool,
}

pub fn existing_inputs(plan: &Plan, cell: &str) -> Result<ExistingInputs, CellgenError> {
    let tf = cell_terraform_dir(cell);
    if !plan.exists(&tf) && !plan.exists(cell_flux_dir(cell)) {
        return Ok(ExistingInputs::default());
    }
    let record = state::load(plan, cell)?.unwrap_or_default();
    let egress = tf.join("egress.tf");
    let egress_gateway = plan.exists(&egress) || record.files.contains_key(egress.as_str());
    let kubernetes_version = plan
        .read(tf.join(crate::model::repo::TFVARS_FILE))?
        .and_then(|text| hcl::parse_body(&text).ok())
        .and_then(|body| {
            body.get_attribute("kubernetes_version")
                .and_then(|attr| match &attr.value {
                    hcl_edit::expr::Expression::String(s) => Some(s.as_str().to_string()),
                    _ => None,
                })
        });
    let forget_flux_bootstrap = plan.exists(tf.join(crate::model::names::FLUX_BOOTSTRAP_REMOVED))
        || plan
            .read(tf.join("flux.tf"))?
            .and_then(|text| hcl::parse_body(&text).ok())
            .is_some_and(|body| {
                body.get_blocks("resource")
                    .any(|b| b.has_exact_labels(&["flux_bootstrap_git", "this"]))
            });
    Ok(ExistingInputs {
        kubernetes_version,
        egress_gateway: Some(egress_gateway),
        forget_flux_bootstrap,
    })
}
