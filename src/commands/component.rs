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
        crate::say!(
            session.report,
            "{} is already in cell {}; nothing changed.",
            args.name,
            cell.name
        )?;
        return Ok(());
    }
    crate::model::schema::refresh(&mut plan)?;
    super::precheck::refuse_new_errors(&repo, &plan)?;
    super::finish(session, &plan, &[], args.dry_run)?;
    report(session, &outcome, "Added", "to", &cell.name, args.dry_run)?;
    if !args.dry_run {
        let next = next_after_add(&catalog, &outcome.changed, &cell.name);
        crate::say!(session.report, "\n{next}")?;
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
        crate::say!(
            session.report,
            "{} is not in cell {}; nothing changed.",
            args.name,
            cell.name
        )?;
        return Ok(());
    }
    crate::model::schema::refresh(&mut plan)?;
    // No precheck here: removal gives back the user's own text (a `components: ~` that Flux
    // reads as empty but `check` rejects), and what it can break lies in files it does not
    // write, which the precheck does not look at (issue 21).
    super::finish(session, &plan, &[], args.dry_run)?;
    report(
        session,
        &outcome,
        "Removed",
        "from",
        &cell.name,
        args.dry_run,
    )?;
    if !args.dry_run {
        let component = catalog.get(&args.name)?;
        let layers: Vec<String> = repo.config.layers.iter().map(|l| l.name.clone()).collect();
        match crate::ops::teardown::component_steps(component, &cell.name, &layers) {
            Some(steps) => {
                crate::say!(
                    session.report,
                    "\n{} owns cloud resources only it removes. In a running cell, in this order:",
                    component.name
                )?;
                let mut lines = Vec::new();
                super::print_steps(&steps, &mut |line| lines.push(line));
                for line in lines {
                    crate::say!(session.report, "{line}")?;
                }
            }
            None => crate::say!(
                session.report,
                "\nNext: commit and open a pull request. Once merged, Flux prunes what {} applied; then `terraform -chdir=terraform/cells/{} apply` removes its identity and keys (in that order: a key removed first stops the layers that still read it).",
                component.name,
                cell.name
            )?,
        }
    }
    Ok(())
}

/// What to do after adding `added` to `cell`, true for what they are: only a component with an
/// AWS identity or ConfigMap keys needs a `terraform apply` before Flux can install it.
fn next_after_add(catalog: &Catalog, added: &[String], cell: &str) -> String {
    let names = added.join(", ");
    let spec = |name: &String| catalog.get(name).ok().map(|c| &c.spec);
    let identity = added
        .iter()
        .any(|n| spec(n).is_some_and(|s| s.identity.is_some()));
    let keys = added
        .iter()
        .any(|n| spec(n).is_some_and(|s| !s.keys.is_empty()));
    let terraform = match (identity, keys) {
        (true, true) => Some("creates the identity and then the keys"),
        (true, false) => Some("creates the identity"),
        (false, true) => Some("writes the keys"),
        (false, false) => None,
    };
    match terraform {
        Some(what) => format!(
            "Next: commit and open a pull request (its workflow runs `cellgen check`); once merged, `terraform apply` in terraform/cells/{cell} {what}, and Flux installs {names} once they exist."
        ),
        None => format!(
            "Next: commit and open a pull request (its workflow runs `cellgen check`); once merged, Flux installs {names} in {cell}: it needs no AWS identity and no new keys, so no `terraform apply`."
        ),
    }
}

fn report(
    session: &mut Session,
    outcome: &Outcome,
    verb: &str,
    preposition: &str,
    cell: &str,
    dry_run: bool,
) -> Result<(), CellgenError> {
    if dry_run {
        return Ok(());
    }
    crate::say!(
        session.report,
        "\n{verb} {} {preposition} cell {cell}.",
        outcome.changed.join(", ")
    )?;
    if let Some((from, to)) = outcome.schema {
        crate::say!(
            session.report,
            "The key set changed: schema {from} -> {to} in cellgen.yaml; cell {cell}'s cell-metadata.tf carries the number of its newest key, other cells keep theirs."
        )?;
    }
    Ok(())
}
