use std::process::ExitCode;

use anyhow::Result;

use super::Session;
use crate::cli::UpgradeArgs;
use crate::model::repo::Repo;
use crate::ops::upgrade::{self, Group, Outcome, Report};
use crate::writer::plan::Plan;

pub fn run(session: &mut Session, args: UpgradeArgs) -> Result<ExitCode> {
    let repo = Repo::discover(&session.start)?;
    let mut plan = Plan::new(&repo.root, crate::model::repo::read_by_flux);
    let report = upgrade::plan(&mut plan, &args.cells)?;
    // With nothing to write the report's own first line says so (not "Nothing to change." and
    // then "Upgraded").
    // Conflicted files are left on purpose for the user to resolve (the summary below says so):
    // what fails in them is expected; any other error the upgrade would write refuses it.
    let conflicted: Vec<_> = report
        .conflicts()
        .into_iter()
        .map(|(path, _)| path)
        .collect();
    super::precheck::refuse_new_errors_except(&repo, &plan, &conflicted)?;
    if !plan.is_empty() {
        super::finish(session, &plan, &[], args.dry_run)?;
    }
    print_report(&mut session.report, &report, args.dry_run, !plan.is_empty())?;
    let conflicts = report.conflicts();
    if conflicts.is_empty() && report.unresolved.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let label = upgrade::label();
    if !conflicts.is_empty() {
        let total: usize = conflicts.iter().map(|(_, n)| n).sum();
        crate::errln!(
            "{} {total} conflict{} in {} file{} {}: open each, keep what you want between `<<<<<<< ours` and `>>>>>>> {label}` (`||||||| base` shows what cellgen generated before), and delete the marker lines. `cellgen check` fails while a marker is left; then commit.",
            crate::commands::ui::color::error_label(),
            if total == 1 { "" } else { "s" },
            conflicts.len(),
            if conflicts.len() == 1 { "" } else { "s" },
            if args.dry_run {
                "would be written"
            } else {
                "written"
            },
        );
    }
    if !report.unresolved.is_empty() {
        let list: Vec<String> = report
            .unresolved
            .iter()
            .map(|(path, line)| format!("{}:{line}", path))
            .collect();
        crate::errln!(
            "{} conflict markers are still in {}: resolve them (keep what you want, delete the marker lines); `cellgen check` fails until then.",
            crate::commands::ui::color::error_label(),
            list.join(", ")
        );
    }
    Ok(ExitCode::from(1))
}

fn print_report(
    out: &mut super::report::Report,
    report: &Report,
    dry_run: bool,
    changed: bool,
) -> Result<(), crate::error::CellgenError> {
    let version = crate::model::scaffold::VERSION;
    match (changed, dry_run) {
        (false, _) => crate::say!(
            out,
            "Nothing to change: the repository is up to date with cellgen {version}."
        )?,
        (true, true) => crate::say!(
            out,
            "\nUpgrade to cellgen {version} (dry run: nothing was written)."
        )?,
        (true, false) => crate::say!(out, "\nUpgraded to cellgen {version}.")?,
    }
    if !report.settings.is_empty() {
        crate::say!(out, "\ncellgen.yaml gained:")?;
        for line in &report.settings {
            crate::say!(out, "  {line}")?;
        }
    }
    crate::say!(
        out,
        "\n  {:<28} {:>8} {:>6} {:>7} {:>5} {:>10} {:>8}",
        "",
        "replaced",
        "added",
        "merged",
        "kept",
        "conflicts",
        "deleted"
    )?;
    for group in &report.groups {
        print_counts(out, group)?;
    }
    let list = |out: &mut super::report::Report,
                title: &str,
                pick: &dyn Fn(&Outcome) -> Option<String>| {
        let lines: Vec<String> = report
            .groups
            .iter()
            .flat_map(|g| &g.files)
            .filter_map(|(path, outcome)| pick(outcome).map(|note| format!("  {}{note}", path)))
            .collect();
        if !lines.is_empty() {
            crate::say!(out, "\n{title}")?;
            for line in lines {
                crate::say!(out, "{line}")?;
            }
        }
        Ok::<(), crate::error::CellgenError>(())
    };
    list(out, "Merged (your changes and cellgen's):", &|o| {
        matches!(o, Outcome::Merged).then(String::new)
    })?;
    list(out, "Conflicts:", &|o| match o {
        Outcome::Conflicts(n, why) => Some(format!(
            " ({n}{})",
            why.as_ref().map(|w| format!("; {w}")).unwrap_or_default()
        )),
        _ => None,
    })?;
    let kept_deleted: Vec<String> = report
        .groups
        .iter()
        .flat_map(|g| g.files.iter().map(move |(path, o)| (g, path, o)))
        .filter(|(_, _, o)| matches!(o, Outcome::KeptDeleted))
        .map(|(g, path, _)| {
            let record = match &g.cell {
                Some(cell) => crate::model::state::record_path(cell).to_string(),
                None => crate::model::names::REPOSITORY_RECORD.to_string(),
            };
            format!(
                "  {path}: you deleted it, so it stays deleted (to get cellgen's back, delete its entry from {record} and run `cellgen upgrade` again)"
            )
        })
        .collect();
    if !kept_deleted.is_empty() {
        crate::say!(out, "\nKept:")?;
        for line in kept_deleted {
            crate::say!(out, "{line}")?;
        }
    }
    list(out, "Left alone:", &|o| match o {
        Outcome::Left(why) => Some(format!(": {why}")),
        _ => None,
    })?;
    if !report.ignored.is_empty() {
        if !report
            .groups
            .iter()
            .flat_map(|g| &g.files)
            .any(|(_, o)| matches!(o, Outcome::Left(_)))
        {
            crate::say!(out, "\nLeft alone:")?;
        }
        for (path, why) in &report.ignored {
            crate::say!(out, "  {path}: {why}")?;
        }
    }
    if !report.notices.is_empty() {
        crate::say!(out, "\nTo decide:")?;
        for notice in &report.notices {
            crate::say!(out, "  {}: {}", notice.setting, notice.message)?;
        }
    }
    if !report.steps.is_empty() {
        crate::say!(
            out,
            "\nFlux moves from flux_bootstrap_git to the Flux Operator; by hand:"
        )?;
        for (i, step) in report.steps.iter().enumerate() {
            crate::say!(out, "  {}. {step}", i + 1)?;
        }
    }
    if !dry_run && changed {
        crate::say!(
            out,
            "\nNext: review the changes (`git diff`), run `cellgen check`, commit, and open a pull request. Then, in each cell's terraform/cells/<cell>, `terraform init -upgrade` (add -reconfigure if its backend.tf changed) and `terraform plan` before `terraform apply`."
        )?;
    }
    Ok(())
}

fn print_counts(
    out: &mut super::report::Report,
    group: &Group,
) -> Result<(), crate::error::CellgenError> {
    let name = group.cell.as_deref().unwrap_or("(repository)");
    crate::say!(
        out,
        "  {:<28} {:>8} {:>6} {:>7} {:>5} {:>10} {:>8}",
        name,
        group.count(|o| matches!(o, Outcome::Replaced)),
        group.count(|o| matches!(o, Outcome::Added)),
        group.count(|o| matches!(o, Outcome::Merged)),
        group.count(|o| matches!(o, Outcome::Kept | Outcome::KeptDeleted)),
        group.count(Outcome::is_conflict),
        group.count(|o| matches!(o, Outcome::Deleted)),
    )
}
