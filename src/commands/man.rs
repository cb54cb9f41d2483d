//! `cellgen man`: the man page on stdout, or one page per subcommand in a directory.

use anyhow::{Context, Result};
use clap::CommandFactory;

use super::Session;
use crate::cli::{Cli, ManArgs};
use crate::writer::plan::Plan;

pub fn run(session: &mut Session, args: ManArgs) -> Result<()> {
    // Without the `help` subcommand, as clap_mangen's own generate_to does: it has no page.
    let mut command = Cli::command().disable_help_subcommand(true);
    command.build();
    let Some(dir) = args.out_dir else {
        let mut out = Vec::new();
        clap_mangen::Man::new(command).render(&mut out)?;
        crate::commands::ui::out::stdout_bytes(&out)?;
        return Ok(());
    };
    let mut pages = Vec::new();
    collect_pages(command, &mut pages)?;
    // The pages are written like any other change: all or none, and again only if they differ,
    // under the lock of the directory they go to.
    let dir = crate::root::paths::from_user(
        &session.start.as_std_path().join(dir),
        "the directory",
        "Pass --out-dir a directory whose path is UTF-8",
    )?;
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {dir}"))?;
    let _lock = crate::writer::lock::acquire(&dir, crate::writer::lock::Access::Write, |_| {})?;
    let mut plan = Plan::new(dir);
    for (name, page) in pages {
        plan.write(name, page)?;
    }
    super::finish(session, &plan, &[], false)
}

/// `(file name, roff)` of the command and of every subcommand under it.
fn collect_pages(command: clap::Command, pages: &mut Vec<(String, String)>) -> Result<()> {
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect_pages(sub.clone(), pages)?;
    }
    let man = clap_mangen::Man::new(command);
    let mut out = Vec::new();
    man.render(&mut out)?;
    pages.push((man.get_filename(), String::from_utf8(out)?));
    Ok(())
}
