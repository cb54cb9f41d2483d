use anyhow::Result;

use super::Session;
use crate::cli::SetVersionArgs;
use crate::error::CellgenError;
use crate::model::catalog::Catalog;
use crate::model::cell::CellName;
use crate::model::cells::cell_components;
use crate::model::config::Config;
use crate::model::repo::Repo;
use crate::model::versions;
use crate::ops::cilium_version;
use crate::ports::templates::Templates;
use crate::suggest;
use crate::writer::plan::Plan;

pub fn run(session: &mut Session, args: SetVersionArgs) -> Result<()> {
    let repo = Repo::discover(&session.start)?;
    let templates = Templates::new();
    let mut plan = Plan::new(&repo.root, crate::model::repo::read_by_flux);
    let catalog = Catalog::load(&templates, &plan)?;
    if args.component == cilium_version::NAME
        && !catalog.components.contains_key(cilium_version::NAME)
    {
        return set_cilium(session, &mut plan, &repo.config, &args);
    }
    let component = catalog.get(&args.component)?;
    let config = &repo.config;
    config.check_env_flags(&args.environments)?;
    let cells = repo.cells()?;
    for cell in &args.cells {
        if !cells.contains(cell) {
            return Err(CellgenError::UnknownCell {
                name: cell.clone(),
                hint: suggest::hint(cell, cells.iter().map(String::as_str)),
                cells: cells.clone(),
            }
            .into());
        }
    }
    let mut running = Vec::new();
    for cell in &cells {
        if cell_components(&plan, config, cell)?.contains(&component.name) {
            running.push(cell.clone());
        }
    }
    if running.is_empty() {
        anyhow::bail!(
            "no cell runs {}: add it to a cell first (`cellgen add-component {} --cell <cell>`)",
            component.name,
            component.name
        );
    }
    let running_list = running.join(", ");
    for cell in &args.cells {
        if !running.contains(cell) {
            return Err(CellgenError::InvalidFlag {
                flag: "--cell".into(),
                reason: format!(
                    "cell {cell} does not run {} (the cells running it: {running_list})",
                    component.name
                ),
            }
            .into());
        }
    }
    let environment = |cell: &str| {
        CellName::parse(cell, &config.environments)
            .map(|c| c.environment)
            .unwrap_or_default()
    };
    let selected: Vec<String> = if args.cells.is_empty() && args.environments.is_empty() {
        running.clone()
    } else {
        running
            .iter()
            .filter(|c| args.cells.contains(c) || args.environments.contains(&environment(c)))
            .cloned()
            .collect()
    };
    if selected.is_empty() {
        return Err(CellgenError::InvalidFlag {
            flag: "--env".into(),
            reason: format!(
                "no cell of {} runs {} (the cells running it: {running_list})",
                args.environments.join(", "),
                component.name
            ),
        }
        .into());
    }
    let chart = versions::locate(&plan, component)?;
    if let Some(problem) = versions::version_problem(&chart, &args.version) {
        return Err(CellgenError::InvalidFlag {
            flag: "VERSION".into(),
            reason: problem,
        }
        .into());
    }
    let outcome = versions::set_version(&mut plan, &chart, &running, &selected, &args.version)?;
    // Going back is allowed (a roll-back is a fix too) but never silent: a chart's older
    // version may not undo what the newer one changed (CRDs, stored objects).
    for (cell, from, to) in &outcome.moved {
        if versions::is_older(to, from) == Some(true) {
            session.warn(format!(
                "{cell} goes back from {} {from} to {to}: Helm downgrades the release, but the older chart may not handle what the newer one left (CRDs, stored versions); check its upgrade notes before merging",
                component.name
            ));
        }
    }
    // The records keep the text cellgen generated: a cell's own version is a choice made on top
    // of it, like a hand edit, so `new --force` keeps it and `upgrade` merges it (as ours)
    // instead of replacing it with the shared version.
    crate::model::schema::refresh(&mut plan)?;
    if plan.is_empty() {
        crate::say!(
            session.report,
            "{} already run{} {} {}; nothing changed.",
            selected.join(", "),
            if selected.len() == 1 { "s" } else { "" },
            component.name,
            args.version,
        )?;
        return Ok(());
    }
    super::precheck::refuse_new_errors(&repo, &plan)?;
    super::finish(session, &plan, &[], args.dry_run)?;
    if args.dry_run {
        return Ok(());
    }
    let what = if chart.is_oci_tag() { "tag" } else { "chart" };
    crate::say!(session.report)?;
    for (cell, from, to) in &outcome.moved {
        crate::say!(
            session.report,
            "  {cell}: {} {what} {from} -> {to}",
            component.name
        )?;
    }
    match (&outcome.shared, outcome.own.as_slice()) {
        (_, []) => crate::say!(
            session.report,
            "\nEvery cell running {} is on {}: the shared definition ({}) says it, and no cell overrides it.",
            component.name,
            args.version,
            chart.file
        )?,
        (_, own) => crate::say!(
            session.report,
            "\nThe shared definition ({}) stays at {}; {} run{} a version of {} own (spec.patches of cells/<cell>/{}.yaml).",
            chart.location(),
            chart.version,
            own.join(", "),
            if own.len() == 1 { "s" } else { "" },
            if own.len() == 1 { "its" } else { "their" },
            chart.layer
        )?,
    }
    let next_stage = if outcome.own.is_empty() {
        String::new()
    } else {
        format!(
            " Then the next stage, e.g. `cellgen set-version {} {} --env <environment>`.",
            component.name, args.version
        )
    };
    crate::say!(
        session.report,
        "\nNext: commit and open a pull request (CI runs `cellgen check`); once merged, Flux upgrades the release in those cells.{next_stage}"
    )?;
    Ok(())
}

/// Cilium's version, per environment in cellgen.yaml (Terraform installs it, in cni.tf).
fn set_cilium(
    session: &mut Session,
    plan: &mut Plan,
    config: &Config,
    args: &SetVersionArgs,
) -> Result<()> {
    if !args.cells.is_empty() {
        return Err(CellgenError::InvalidFlag {
            flag: "--cell".into(),
            reason: "Cilium's version is per environment (cilium.version in cellgen.yaml, which every cell's cni.tf reads): use --env".into(),
        }
        .into());
    }
    config.check_env_flags(&args.environments)?;
    let moved = cilium_version::set(plan, config, &args.environments, &args.version)?;
    for (env, from, to) in &moved {
        if versions::is_older(to, from) == Some(true) {
            session.warn(format!(
                "the {env} cells go back from Cilium {from} to {to}: Cilium supports a downgrade only to the previous minor version, after its own pre-flight steps; read its downgrade notes before applying"
            ));
        }
    }
    if plan.is_empty() {
        crate::say!(
            session.report,
            "{} already run{} Cilium {}; nothing changed.",
            if args.environments.is_empty() {
                "Every environment".to_string()
            } else {
                args.environments.join(", ")
            },
            if args.environments.len() == 1 {
                "s"
            } else {
                ""
            },
            args.version
        )?;
        return Ok(());
    }
    super::finish(session, plan, &[], args.dry_run)?;
    if args.dry_run {
        return Ok(());
    }
    crate::say!(session.report)?;
    for (env, from, to) in &moved {
        crate::say!(
            session.report,
            "  {env}: cilium {from} -> {to} (cilium.version.{env} in cellgen.yaml)"
        )?;
    }
    let envs: Vec<&str> = moved.iter().map(|(e, _, _)| e.as_str()).collect();
    crate::say!(
        session.report,
        "\nNext: commit and open a pull request (CI runs `cellgen check`); once merged, `terraform apply` in each {} cell upgrades Cilium (helm_release.cilium). Then the next stage, e.g. `cellgen set-version cilium {} --env <environment>`.",
        envs.join(", "),
        args.version
    )?;
    Ok(())
}
