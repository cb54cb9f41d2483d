use anyhow::Result;

use super::Session;
use crate::cli::{KeyArgs, KeyCommand};
use crate::model::catalog::Catalog;
use crate::model::repo::Repo;
use crate::model::state;
use crate::ops::keys::{self, KeyOutcome, NewKey};
use crate::ports::templates::Templates;
use crate::writer::plan::Plan;

pub fn run(session: &mut Session, args: KeyArgs) -> Result<()> {
    let repo = Repo::discover(&session.start)?;
    let templates = Templates::new();
    let mut plan = Plan::new(&repo.root);
    let catalog = Catalog::load(&templates, &plan)?;
    let dry_run = args.command.dry_run();
    let (outcome, done) = match &args.command {
        KeyCommand::Add(a) => {
            let key = NewKey {
                name: a.name.clone(),
                terraform: a.terraform.trim_matches(' ').to_string(),
                example: a.example.clone(),
                description: a.description.clone(),
                cells: a.cells.clone(),
                environments: a.environments.clone(),
            };
            let outcome = keys::add(&mut plan, &catalog, &key)?;
            let cells = list(&outcome.cells);
            let done = format!(
                "Added key `{}`{} to {cells}.\n\nNext: commit and open a pull request; `terraform apply` in each of those cells writes the key into its ConfigMap. Manifests may read ${{{}}} once every cell that applies them has it.",
                a.name,
                number(&outcome),
                a.name
            );
            (outcome, done)
        }
        KeyCommand::Rename(a) => {
            let outcome = keys::rename(&mut plan, &templates, &catalog, &a.old, &a.new)?;
            let done = format!(
                "Renamed key `{}` to `{}`{}: cellgen.yaml, the ConfigMap of {} and {} manifest file{}.\n\nNext: commit and open a pull request, and run `terraform apply` in each of those cells right after merging: until a cell's ConfigMap has `{}`, Flux holds its layers that read it at what they last applied (strict substitution).",
                a.old,
                a.new,
                number(&outcome),
                list(&outcome.cells),
                outcome.manifests.len(),
                if outcome.manifests.len() == 1 {
                    ""
                } else {
                    "s"
                },
                a.new
            );
            (outcome, done)
        }
        KeyCommand::Remove(a) => {
            let outcome = keys::remove(&mut plan, &templates, &a.name)?;
            let done = format!(
                "Removed key `{}`{} from the contract and from {}.\n\nNext: commit and open a pull request; `terraform apply` in each of those cells drops it from the ConfigMap.",
                a.name,
                number(&outcome),
                list(&outcome.cells)
            );
            (outcome, done)
        }
    };
    for warning in &outcome.warnings {
        crate::errln!("warning: {warning}");
    }
    if let Some(why) = &outcome.nothing {
        crate::outln!("{why} Nothing to change.")?;
        return Ok(());
    }
    state::track_all_edits(&mut plan, "")?;
    crate::model::schema::refresh(&mut plan)?;
    super::finish(&plan, &[], dry_run)?;
    if !dry_run && !plan.is_empty() {
        crate::outln!("\n{done}")?;
    }
    Ok(())
}

fn number(outcome: &KeyOutcome) -> String {
    match outcome.schema {
        Some((from, to)) => format!(" (schema {from} -> {to})"),
        None => String::new(),
    }
}

fn list(cells: &[String]) -> String {
    match cells {
        [] => "no cell".into(),
        [one] => format!("cell {one}"),
        many => format!("cells {}", many.join(", ")),
    }
}
