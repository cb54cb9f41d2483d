//! One module per verb: resolve input (flags, prompts, the repository), call the core, print.

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::cli::{Cli, Command};
use crate::plan::{ChangeKind, Plan};
use crate::prompt::{self, Prompter};

mod init;
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
