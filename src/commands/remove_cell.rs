use anyhow::Result;

use super::Session;
use crate::cli::RemoveCellArgs;
use crate::model::catalog::Catalog;
use crate::model::cell::CellName;
use crate::model::repo::Repo;
use crate::ops::teardown::{self, Stack};
use crate::ports::templates::Templates;
use crate::writer::plan::Plan;

pub fn run(session: &mut Session, args: RemoveCellArgs) -> Result<()> {
    let repo = Repo::discover(&session.start)?;
    // A misspelt cell is most likely one of the repository's: suggest it before explaining
    // what a cell name looks like (or suggesting an environment to add). A well-formed name is
    // left to `teardown`, which also knows cells Git shows removed.
    let cell = match CellName::parse(&args.cell, &repo.config.environments) {
        Ok(cell) => cell,
        Err(err) => {
            let cells = repo.cells()?;
            return Err(
                match crate::suggest::misspelt(&args.cell, cells.iter().map(String::as_str)) {
                    Some(near) => crate::error::CellgenError::UnknownCell {
                        name: args.cell.clone(),
                        hint: format!(" Did you mean `{near}`?"),
                        cells,
                    },
                    None => err,
                }
                .into(),
            );
        }
    };
    let templates = Templates::new();
    let mut plan = Plan::new(&repo.root, crate::model::repo::read_by_flux);
    let catalog = Catalog::load(&templates, &plan)?;
    let removal = teardown::remove_cell(
        &mut plan,
        &templates,
        &catalog,
        &cell.name,
        args.terraform_destroyed,
    )?;
    if let Some(why) = &removal.nothing {
        // Only when the repository shows the cell was removed (see `teardown::remove_cell`):
        // a re-run stays harmless.
        crate::say!(session.report, "{why}")?;
        return Ok(());
    }
    // The repository's record forgets the shared files that left with the cell.
    crate::model::state::track_all_edits(&mut plan, &cell.name)?;
    crate::model::schema::refresh(&mut plan)?;
    let mut notes: Vec<String> = Vec::new();
    let mut say = |line: String| notes.push(line);
    if !removal.components.is_empty() {
        say(format!(
            "\nNo other cell runs {}: {} shared files {} with it.",
            removal.components.join(", "),
            if removal.components.len() == 1 {
                "its"
            } else {
                "their"
            },
            // A dry run reports what the change would do, not what it did.
            if args.dry_run { "would leave" } else { "left" }
        ));
    }
    if !removal.keys.is_empty() {
        let number = removal
            .schema
            .map(|(from, to)| format!(" (schema {from} -> {to})"))
            .unwrap_or_default();
        say(format!(
            "The contract {} {}{number}: no remaining cell writes {}.",
            if args.dry_run { "would lose" } else { "lost" },
            removal.keys.join(", "),
            if removal.keys.len() == 1 {
                "it"
            } else {
                "them"
            }
        ));
    }
    match removal.stack {
        Stack::Kept => {
            say(format!(
                "\nKept terraform/cells/{0}: its state may still hold the cell's live AWS resources (VPC, cluster, nodes, roles), and this stack is how they are destroyed. Nothing of the cell in AWS has been touched.\n\nTear-down of {0}, in this order, before merging this change:",
                cell.name
            ));
            super::print_steps(
                &teardown::cell_steps(&repo.config, &cell, &removal.layers),
                &mut say,
            );
        }
        Stack::Removed => {
            let state = match &repo.config.terraform.state_bucket {
                Some(bucket) => format!(
                    " Terraform leaves the (now empty) state object s3://{bucket}/cells/{}/terraform.tfstate; delete it when you no longer need its history.",
                    cell.name
                ),
                None => String::new(),
            };
            say(format!(
                "\n--terraform-destroyed: terraform/cells/{} leaves Git too.{state}",
                cell.name
            ));
            say("Next: commit and merge; nothing of the cell is left in the repository.".into());
        }
        Stack::Absent => {
            say("\nNext: commit and merge; nothing of the cell is left in the repository.".into())
        }
    }
    // An acknowledged overlap is the user's decision, in words of their own: cellgen does not
    // rewrite it, but says that `check` will name the removed cell there until it goes.
    if repo
        .config
        .network
        .acknowledged_overlaps
        .iter()
        .any(|o| o.cells.contains(&cell.name))
    {
        notes.push(format!(
            "cellgen.yaml's network.acknowledged_overlaps names {0}: drop {0} from that entry (and the entry, if one cell is left), or `cellgen check` reports it (unknown-acknowledged-cell).",
            cell.name
        ));
    }
    super::precheck::refuse_new_errors(&repo, &plan)?;
    super::finish_with_notes(session, &plan, &[], args.dry_run, &notes)
}
