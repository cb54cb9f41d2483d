//! The entry to every command: how it uses the repository, the lock taken for that, the
//! session built, and the verb's module called. Nothing else calls a verb.

use camino::{Utf8Path, Utf8PathBuf};

use anyhow::{Context, Result};

use super::ui::prompt;
use super::{
    Session, check, completions, component, diff, envsubst, explain, graph, init, key, list,
    lock_repository, man, new, remove_cell, render, repair, schema, set_version, upgrade, values,
    verify,
};
use crate::cli::{Cli, Command};
use crate::writer::lock::Access;

/// How each command uses the repository. Every command is listed (no wildcard), so a new one has
/// to choose. `Write` is exclusive; `Read` is shared, for commands that only read and for
/// `--dry-run`: a dry run writes nothing, but it must not read a half-applied plan either, so it
/// waits for a writer like any reader does.
pub fn access(command: &Command) -> Option<Access> {
    let writes = |dry_run: bool| Some(if dry_run { Access::Read } else { Access::Write });
    match command {
        Command::Init(args) => writes(args.dry_run),
        Command::New(args) => writes(args.dry_run),
        Command::AddComponent(args) => writes(args.dry_run),
        Command::RemoveComponent(args) => writes(args.dry_run),
        Command::RemoveCell(args) => writes(args.dry_run),
        Command::SetVersion(args) => writes(args.dry_run),
        Command::Key(args) => writes(args.command.dry_run()),
        Command::Upgrade(args) => writes(args.dry_run),
        // Taking the write lock is the repair.
        Command::Repair => Some(Access::Write),
        Command::List(_)
        | Command::Check(_)
        | Command::Render(_)
        | Command::Values(_)
        | Command::Diff(_)
        | Command::Verify(_)
        | Command::Graph(_)
        | Command::Explain(_) => Some(Access::Read),
        Command::Envsubst(_) | Command::Completions(_) | Command::Schema(_) => None,
        // Writes pages into a directory of its own, not into a repository; man.rs locks that one.
        Command::Man(_) => None,
    }
}

pub fn run(cli: Cli) -> Result<std::process::ExitCode> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    // Paths enter cellgen here (and in directory listings): UTF-8 from then on, or an error
    // naming the path, never a lossy path in a message or a record.
    let cwd_utf8 = || {
        Utf8PathBuf::from_path_buf(cwd.clone()).map_err(|cwd| {
            crate::error::CellgenError::NotUtf8Path {
                what: "the current directory",
                path: cwd.to_string_lossy().into_owned(),
                fix: "Run cellgen from a directory whose path is UTF-8, or pass -C with one",
            }
        })
    };
    let start = match cli.directory {
        Some(dir) => {
            let Some(dir) = Utf8Path::from_path(&dir) else {
                return Err(crate::error::CellgenError::InvalidFlag {
                    flag: "-C".into(),
                    reason: format!(
                        "`{}` is not valid UTF-8 (shown with U+FFFD for the bytes that are not): cellgen works with UTF-8 paths only, so that every message and record names a path exactly; pass a directory whose path is UTF-8",
                        dir.to_string_lossy()
                    ),
                }
                .into());
            };
            // An absolute -C does not need the current directory.
            let dir = if dir.is_absolute() {
                dir.to_path_buf()
            } else {
                cwd_utf8()?.join(dir)
            };
            if !crate::root::disk::is_dir(&dir) {
                return Err(crate::error::CellgenError::InvalidFlag {
                    flag: "-C".into(),
                    reason: format!("{dir} is not a directory"),
                }
                .into());
            }
            dir
        }
        None => cwd_utf8()?,
    };
    let (lock, repaired) = match access(&cli.command) {
        Some(access) => {
            let (lock, repaired) = lock_repository(&start, access)?;
            (Some(lock), repaired)
        }
        None => (None, None),
    };
    let report = super::report::Report::new(super::report::options(&cli.command));
    let mut session = Session {
        start,
        prompter: prompt::for_session(cli.no_input),
        lock,
        repaired,
        report,
    };
    let result = dispatch(&mut session, cli.command);
    // Warnings come last, below the list of changed files (and in the JSON report, with it).
    session.report.end(result.is_ok())?;
    result
}

fn dispatch(session: &mut Session, command: Command) -> Result<std::process::ExitCode> {
    match command {
        Command::Init(args) => init::run(session, args).map(|()| std::process::ExitCode::SUCCESS),
        Command::New(args) => new::run(session, args).map(|()| std::process::ExitCode::SUCCESS),
        Command::AddComponent(args) => {
            component::add(session, args).map(|()| std::process::ExitCode::SUCCESS)
        }
        Command::RemoveComponent(args) => {
            component::remove(session, args).map(|()| std::process::ExitCode::SUCCESS)
        }
        Command::RemoveCell(args) => {
            remove_cell::run(session, args).map(|()| std::process::ExitCode::SUCCESS)
        }
        Command::SetVersion(args) => {
            set_version::run(session, args).map(|()| std::process::ExitCode::SUCCESS)
        }
        Command::Key(args) => key::run(session, args).map(|()| std::process::ExitCode::SUCCESS),
        Command::Upgrade(args) => upgrade::run(session, args),
        Command::Repair => repair::run(session).map(|()| std::process::ExitCode::SUCCESS),
        Command::List(args) => list::run(session, args).map(|()| std::process::ExitCode::SUCCESS),
        Command::Check(args) => check::run(session, args),
        Command::Render(args) => {
            render::run(session, args).map(|()| std::process::ExitCode::SUCCESS)
        }
        Command::Diff(args) => diff::run(session, args),
        Command::Verify(args) => verify::run(session, args),
        Command::Graph(args) => graph::run(session, args).map(|()| std::process::ExitCode::SUCCESS),
        Command::Explain(args) => {
            explain::run(session, args).map(|()| std::process::ExitCode::SUCCESS)
        }
        Command::Values(args) => {
            values::run(session, args).map(|()| std::process::ExitCode::SUCCESS)
        }
        Command::Envsubst(args) => envsubst::run(args).map(|()| std::process::ExitCode::SUCCESS),
        Command::Completions(args) => {
            completions::run(args).map(|()| std::process::ExitCode::SUCCESS)
        }
        Command::Man(args) => man::run(session, args).map(|()| std::process::ExitCode::SUCCESS),
        Command::Schema(args) => schema::run(args).map(|()| std::process::ExitCode::SUCCESS),
    }
}
