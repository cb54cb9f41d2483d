use anyhow::Result;

use super::Session;
use crate::cli::{ComponentArgs, RemoveComponentArgs};
use crate::error::CellgenError;
use crate::model::catalog::Catalog;
use crate::model::repo::Repo;
use crate::model::state;
use crate::ops::components::{self, Outcome};
use crate::ports::templates::Templates;
use crate::writer::plan::Plan;

pub fn add(session: &mut Session, args: ComponentArgs) -> Result<()> {
    let repo = Repo::discover(&session.start)?;
    let templates = Templates::new();
    let mut plan = Plan::new(&repo.root, crate::model::repo::read_by_flux);
    let catalog = Catalog::load(&templates, &plan)?;
    // A misspelt component fails (with did-you-mean) before anyone is asked which cell.
    catalog.get(&args.name)?;
    let cell = super::resolve_cell(session, &repo, args.cell.as_deref())?;
    let outcome = super::add_with_consent(
        session,
        &mut plan,
        &templates,
        &catalog,
        &cell,
        &args.name,
        args.with_requirements,
    )?;
    state::track_all_edits(&mut plan, &cell.name)?;
    if outcome.changed.is_empty() {
        crate::outln!(
            "{} is already in cell {}; nothing changed.",
            args.name,
            cell.name
        )?;
        return Ok(());
    }
    crate::model::schema::refresh(&mut plan)?;
    super::finish(&plan, &[], args.dry_run)?;
    report(&outcome, "Added", "to", &cell.name, args.dry_run)?;
    if !args.dry_run {
        crate::outln!(
            "\nNext: commit and open a pull request (CI runs `cellgen check`); `terraform apply` in terraform/cells/{} creates the identity and then the keys, and Flux installs {} once they exist.",
            cell.name,
            outcome.changed.join(", ")
        )?;
    }
    Ok(())
}

pub fn remove(session: &mut Session, args: RemoveComponentArgs) -> Result<()> {
    let repo = Repo::discover(&session.start)?;
    let templates = Templates::new();
    let mut plan = Plan::new(&repo.root, crate::model::repo::read_by_flux);
    let catalog = Catalog::load(&templates, &plan)?;
    catalog.get(&args.name)?;
    let cell = super::resolve_cell(session, &repo, args.cell.as_deref())?;
    let outcome = components::remove(&mut plan, &templates, &catalog, &cell, &args.name)?;
    state::track_all_edits(&mut plan, &cell.name)?;
    if outcome.changed.is_empty() {
        crate::outln!(
            "{} is not in cell {}; nothing changed.",
            args.name,
            cell.name
        )?;
        return Ok(());
    }
    crate::model::schema::refresh(&mut plan)?;
    super::finish(&plan, &[], args.dry_run)?;
    report(&outcome, "Removed", "from", &cell.name, args.dry_run)?;
    if !args.dry_run {
        let component = catalog.get(&args.name)?;
        let layers: Vec<String> = repo.config.layers.iter().map(|l| l.name.clone()).collect();
        match crate::ops::teardown::component_steps(component, &cell.name, &layers) {
            Some(steps) => {
                crate::outln!(
                    "\n{} owns cloud resources only it removes. In a running cell, in this order:",
                    component.name
                )?;
                let mut lines = Vec::new();
                super::print_steps(&steps, &mut |line| lines.push(line));
                for line in lines {
                    crate::outln!("{line}")?;
                }
            }
            None => crate::outln!(
                "\nNext: commit and open a pull request. Once merged, Flux prunes what {} applied; then `terraform -chdir=terraform/cells/{} apply` removes its identity and keys (in that order: a key removed first stops the layers that still read it).",
                component.name,
                cell.name
            )?,
        }
    }
    Ok(())
}

fn report(
    outcome: &Outcome,
    verb: &str,
    preposition: &str,
    cell: &str,
    dry_run: bool,
) -> Result<(), CellgenError> {
    if dry_run {
        return Ok(());
    }
    crate::outln!(
        "\n{verb} {} {preposition} cell {cell}.",
        outcome.changed.join(", ")
    )?;
    if let Some((from, to)) = outcome.schema {
        crate::outln!(
            "The key set changed: schema {from} -> {to} in cellgen.yaml; cell {cell}'s cell-metadata.tf carries the number of its newest key, other cells keep theirs."
        )?;
    }
    Ok(())
}
