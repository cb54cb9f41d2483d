//! One module per verb: resolve input (flags, prompts, the repository), call the core, print.

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::cli::{Cli, Command};
use crate::plan::{ChangeKind, Plan};
use crate::prompt::{self, Prompter};

mod component;
mod init;
mod list;
mod new;

/// What every command gets: where it runs and how it may ask questions.
pub struct Session {
    pub start: PathBuf,
    pub prompter: Box<dyn Prompter>,
}

pub fn run(cli: Cli) -> Result<()> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let start = match cli.directory {
        Some(dir) => {
            let dir = cwd.join(dir);
            if !dir.is_dir() {
                return Err(crate::error::CellgenError::InvalidFlag {
                    flag: "-C".into(),
                    reason: format!("{} is not a directory", dir.display()),
                }
                .into());
            }
            dir
        }
        None => cwd,
    };
    let mut session = Session {
        start,
        prompter: prompt::for_session(cli.no_input),
    };
    match cli.command {
        Command::Init(args) => init::run(&mut session, args),
        Command::New(args) => new::run(&mut session, args),
        Command::AddComponent(args) => component::add(&mut session, args),
        Command::RemoveComponent(args) => component::remove(&mut session, args),
        Command::List(args) => list::run(&mut session, args),
    }
}

/// Prints the dry-run diff, or applies the plan and lists what changed.
pub fn finish(plan: &Plan, dry_run: bool) -> Result<()> {
    if dry_run {
        print!("{}", plan.diff());
        if plan.is_empty() {
            eprintln!("Nothing to change.");
        } else {
            eprintln!("Dry run: nothing was written.");
        }
        return Ok(());
    }
    plan.apply()?;
    for (kind, path) in plan.summary() {
        let verb = match kind {
            ChangeKind::Create => "created",
            ChangeKind::Update => "updated",
            ChangeKind::Delete => "deleted",
        };
        println!("  {verb:>7}  {}", path.display());
    }
    Ok(())
}

/// The cell a command is about: `--cell`, else the one whose directory we are in, else the only
/// one, else a question on a terminal, else an error listing them.
pub fn resolve_cell(
    session: &mut Session,
    repo: &crate::repo::Repo,
    flag: Option<&str>,
) -> Result<crate::cell::CellName> {
    use crate::error::CellgenError;
    let cells = repo.cells()?;
    let parse = |name: &str| crate::cell::CellName::parse(name, &repo.config.environments);
    if let Some(name) = flag {
        if !cells.iter().any(|c| c == name) {
            return Err(CellgenError::UnknownCell {
                name: name.to_string(),
                hint: crate::suggest::hint(name, cells.iter().map(String::as_str)),
                cells,
            }
            .into());
        }
        return Ok(parse(name)?);
    }
    if let Ok(rel) = session.start.strip_prefix(&repo.root) {
        let parts: Vec<_> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let inside = match parts.as_slice() {
            [c, cell, ..] if c == crate::repo::CELLS_DIR => Some(cell.clone()),
            [t, c, cell, ..] if t == "terraform" && c == "cells" => Some(cell.clone()),
            _ => None,
        };
        if let Some(cell) = inside.filter(|c| cells.contains(c)) {
            return Ok(parse(&cell)?);
        }
    }
    match cells.as_slice() {
        [] => Err(CellgenError::UnknownCell {
            name: String::new(),
            hint: String::new(),
            cells,
        }
        .into()),
        [only] => Ok(parse(only)?),
        _ if session.prompter.interactive() => {
            let index = session.prompter.select("Which cell?", &cells)?;
            Ok(parse(&cells[index])?)
        }
        _ => Err(CellgenError::MissingInput {
            what: format!("which cell (this repository has {})", cells.join(", ")),
            flag: "--cell <cell>".into(),
        }
        .into()),
    }
}
