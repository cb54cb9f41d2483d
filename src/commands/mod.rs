//! One module per verb: resolve input (flags, prompts, the repository), call the core, print.

use camino::{Utf8Path, Utf8PathBuf};

use anyhow::Result;

use crate::commands::ui::prompt::Prompter;
use crate::writer::lock::{Access, RepoLock};
use crate::writer::plan::Plan;

mod check;
pub mod completions;
mod component;
mod diff;
pub mod dispatch;
mod envsubst;
mod explain;
mod graph;
mod init;
mod key;
mod list;
mod man;
mod new;
mod precheck;
pub(crate) mod remove_cell;
mod render;
mod repair;
pub mod report;
mod schema;
mod set_version;
mod setup;
pub mod ui;
mod upgrade;
mod values;
mod verify;

/// What every command gets: where it runs, how it may ask questions, and the repository lock it
/// holds for as long as it runs.
pub struct Session {
    /// Where the command runs: the current directory, or `-C`; UTF-8 (checked in `run`).
    pub start: camino::Utf8PathBuf,
    pub prompter: Box<dyn Prompter>,
    pub lock: Option<RepoLock>,
    /// What taking the lock repaired (`lock_repository`), for `repair` to report.
    pub repaired: Option<crate::writer::journal::Recovered>,
    /// How a command that writes reports (`--format`, `--verbose`), and what it has reported so
    /// far: printed at the end, after the file list, so a warning never scrolls away above it.
    pub report: report::Report,
}

impl Session {
    /// A warning about the run, printed once the command has reported its changes.
    pub fn warn(&mut self, warning: impl Into<String>) {
        self.report.warnings.push(warning.into());
    }
}

/// The one entry point to a repository's lock: takes it on the repository `start` is in (or on
/// `start` itself, where `init`/`new` would create one) with `access`. A command that writes then,
/// before anything else, repairs an apply a killed cellgen left half done (`crate::writer::journal`),
/// saying so on stderr, once the journal proved it is cellgen's own; a command that only reads
/// never repairs: it stops, saying a repair is pending. The lock is held until the returned value
/// is dropped: `run` keeps it in the `Session` for the whole command. Any later command gets the
/// same guarantees by declaring its access in `access`.
pub fn lock_repository(
    start: &Utf8Path,
    access: Access,
) -> Result<(RepoLock, Option<crate::writer::journal::Recovered>)> {
    let root = crate::model::repo::Repo::find_root(start).unwrap_or_else(|| start.to_path_buf());
    let lock = crate::writer::lock::acquire(&root, access, waiting)?;
    let pending = crate::writer::journal::pending(lock.root());
    if access == Access::Read {
        let Some(pending) = pending else {
            // (A journal's temporary file alone: nothing was touched; a writer removes it.)
            return Ok((lock, None));
        };
        let command = match pending.command {
            Some((command, pid)) => format!("`{command}` (pid {pid})"),
            None => "a cellgen (its journal cannot be read)".into(),
        };
        return Err(crate::error::CellgenError::RepairPending {
            journal: pending.journal,
            command,
        }
        .into());
    }
    if pending.is_none() && !crate::writer::journal::started(lock.root()) {
        return Ok((lock, None));
    }
    let done = crate::writer::journal::recover(lock.root())?;
    if let Some(done) = &done {
        let who = if done.pid == 0 {
            done.command.clone()
        } else {
            format!("`{}` (pid {})", done.command, done.pid)
        };
        if done.rolled_back {
            crate::errln!(
                "cellgen: {who} was interrupted before it had written all its changes; rolled back {}: the repository is as it was before it.",
                crate::analysis::findings::plural(done.changes, "planned change")
            );
        } else {
            crate::errln!(
                "cellgen: {who} was interrupted after it had written all its changes; finished its cleanup."
            );
        }
    }
    Ok((lock, done))
}

fn waiting(holder: &str) {
    crate::errln!(
        "Waiting for the repository lock (up to {} s): {holder}",
        crate::writer::lock::wait_limit()
            .unwrap_or_default()
            .as_secs_f64()
            .round()
    );
}

/// A file a command leaves as it is although it would have written it, and why: reported with
/// the changes, so the output says once what changed and what did not. A kept file the command
/// still edits (a component added to a layer file the user changed) is reported once, as
/// updated, with `edited` saying why it was not regenerated.
pub struct Kept {
    /// `kept`, or `skipped` for a file not created because of what was kept.
    pub word: &'static str,
    pub path: Utf8PathBuf,
    /// The path as shown (a directory with its `/`).
    pub shown: String,
    pub why: String,
    pub edited: String,
}

impl Kept {
    pub fn all(paths: &[Utf8PathBuf], why: &str, edited: &str) -> Vec<Kept> {
        paths
            .iter()
            .map(|path| Kept {
                word: "kept",
                path: path.clone(),
                shown: path.to_string(),
                why: why.to_string(),
                edited: edited.to_string(),
            })
            .collect()
    }
}

/// Prints the dry-run diff, or applies the plan; then one report: each file changed, each file
/// kept (and why), and a last line only when that list says nothing was written. A dry run's
/// diff alone is on stdout (so it can be saved as a patch); its notes go to stderr. cellgen's
/// records (`.cellgen/`) are one line of a dry run's report unless `--verbose` shows their diff.
pub fn finish(session: &mut Session, plan: &Plan, kept: &[Kept], dry_run: bool) -> Result<()> {
    finish_with_notes(session, plan, kept, dry_run, &[])
}

/// [`finish`], with `notes` (what the change means and what to do next) after the report and
/// before the closing line, so a dry run still ends with "Dry run: nothing was written.". A dry
/// run prints them on stderr: its stdout is the diff alone.
pub fn finish_with_notes(
    session: &mut Session,
    plan: &Plan,
    kept: &[Kept],
    dry_run: bool,
    notes: &[String],
) -> Result<()> {
    if !dry_run && !plan.is_empty() {
        plan.apply()?;
    }
    let summary = plan.summary();
    let report = &mut session.report;
    report.dry_run = dry_run;
    for (kind, path) in &summary {
        report.change(
            *kind,
            path,
            kept.iter()
                .find(|k| k.path == *path)
                .map(|k| k.edited.as_str()),
        );
    }
    for k in kept
        .iter()
        .filter(|k| !summary.iter().any(|(_, p)| *p == k.path))
    {
        report.keep(k.word, &k.shown, &k.why);
    }
    if report.json() {
        report.notes.extend(notes.iter().cloned());
        return Ok(());
    }
    if dry_run {
        let verbose = report.verbose;
        let shown = |path: &camino::Utf8Path| verbose || !report::is_record(path);
        crate::out!("{}", crate::commands::ui::color::diff(&plan.diff_of(shown)))?;
        let records = summary.iter().filter(|(_, p)| report::is_record(p)).count();
        if records > 0 && !verbose {
            crate::errln!("  {}", report::records_line(records));
        }
        let changed: Vec<_> = summary.iter().map(|(_, p)| *p).collect();
        for k in kept {
            if changed.contains(&k.path.as_path()) {
                crate::errln!("  {:>7}  {} ({})", "edited", k.shown, k.edited);
            } else {
                crate::errln!("{}", kept_line(k));
            }
        }
        for note in notes {
            crate::errln!("{note}");
        }
        crate::errln!("{}", closing(plan.is_empty(), kept.is_empty(), true));
        return Ok(());
    }
    for (kind, path) in &summary {
        match kept.iter().find(|k| k.path == *path) {
            Some(k) => crate::outln!(
                "  {}  {} ({})",
                crate::commands::ui::color::change(*kind),
                path,
                k.edited
            )?,
            None => crate::outln!("  {}  {}", crate::commands::ui::color::change(*kind), path)?,
        }
    }
    for k in kept
        .iter()
        .filter(|k| !summary.iter().any(|(_, p)| *p == k.path))
    {
        crate::outln!("{}", kept_line(k))?;
    }
    for note in notes {
        crate::outln!("{note}")?;
    }
    if plan.is_empty() {
        crate::outln!("{}", closing(true, kept.is_empty(), false))?;
    }
    Ok(())
}

fn kept_line(kept: &Kept) -> String {
    format!("  {:>7}  {} ({})", kept.word, kept.shown, kept.why)
}

/// The line that ends a report: never "nothing to change" above a list of kept files.
fn closing(empty: bool, none_kept: bool, dry_run: bool) -> &'static str {
    match (empty, none_kept, dry_run) {
        (true, true, _) => "Nothing to change.",
        (true, false, _) => "Nothing else to change.",
        (false, _, true) => "Dry run: nothing was written.",
        (false, _, false) => "",
    }
}

/// The cell a command is about: `--cell`, else the one whose directory we are in, else the only
/// one, else a question on a terminal, else an error listing them.
pub fn resolve_cell(
    session: &mut Session,
    repo: &crate::model::repo::Repo,
    flag: Option<&str>,
) -> Result<crate::model::cell::CellName> {
    use crate::error::CellgenError;
    let cells = repo.cells()?;
    let parse = |name: &str| crate::model::cell::CellName::parse(name, &repo.config.environments);
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
        let parts: Vec<_> = rel.components().map(|c| c.as_str().to_owned()).collect();
        let inside = match parts.as_slice() {
            [c, cell, ..] if c == crate::model::repo::CELLS_DIR => Some(cell.clone()),
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

/// Variables from a YAML file: a ConfigMap's `data`, or a plain `key: value` map.
pub fn read_values(path: &std::path::Path) -> Result<std::collections::BTreeMap<String, String>> {
    use crate::error::CellgenError;
    // A path given on the command line enters here (`--values`, `--from`).
    let path = crate::paths::from_user(path, "the file", "Pass a file whose path is UTF-8")?;
    let path = path.as_path();
    let text = crate::root::limited::read_file(path, path)?;
    crate::ports::yaml::guard(&text).map_err(CellgenError::yaml(path))?;
    let value: yaml_serde::Value =
        crate::ports::yaml::from_str(&text).map_err(|e| CellgenError::InvalidFile {
            path: path.to_path_buf(),
            // The parser's message already says where ("at line 2 column 1").
            message: format!("not valid YAML: {e}"),
        })?;
    let map = match value.get("kind").and_then(|k| k.as_str()) {
        Some("ConfigMap") => value
            .get("data")
            .cloned()
            .unwrap_or(yaml_serde::Value::Mapping(Default::default())),
        _ => value,
    };
    let yaml_serde::Value::Mapping(map) = map else {
        return Err(CellgenError::InvalidFile {
            path: path.to_path_buf(),
            message: "expected a ConfigMap or a `key: value` map".into(),
        }
        .into());
    };
    let mut vars = std::collections::BTreeMap::new();
    for (k, v) in map {
        let key = k
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| CellgenError::InvalidFile {
                path: path.to_path_buf(),
                message: format!("key {k:?} is not a string"),
            })?;
        let value = match v {
            yaml_serde::Value::String(s) => s,
            yaml_serde::Value::Number(n) => n.to_string(),
            yaml_serde::Value::Bool(b) => b.to_string(),
            other => {
                return Err(CellgenError::InvalidFile {
                    path: path.to_path_buf(),
                    message: format!(
                        "value of `{key}` is not a string, number or boolean: {other:?}"
                    ),
                }
                .into());
            }
        };
        vars.insert(key, value);
    }
    Ok(vars)
}

pub fn kustomize_mode(mode: crate::cli::KustomizeMode) -> crate::ports::kustomize::Mode {
    match mode {
        crate::cli::KustomizeMode::Auto => crate::ports::kustomize::Mode::Auto,
        crate::cli::KustomizeMode::Native => crate::ports::kustomize::Mode::Native,
        crate::cli::KustomizeMode::External => crate::ports::kustomize::Mode::External,
    }
}

/// Adds a component; on a terminal, a missing requirement is a question instead of an error.
pub fn add_with_consent(
    session: &mut Session,
    plan: &mut Plan,
    templates: &crate::ports::templates::Templates,
    catalog: &crate::model::catalog::Catalog,
    cell: &crate::model::cell::CellName,
    name: &str,
    with_requirements: bool,
) -> Result<crate::ops::components::Outcome> {
    match crate::ops::components::add(plan, templates, catalog, cell, name, with_requirements) {
        Err(crate::error::CellgenError::MissingRequirement { missing, .. })
            if session.prompter.interactive() =>
        {
            let question = format!(
                "{name} needs {} in {}. Add {} too?",
                missing.join(", "),
                cell.name,
                if missing.len() == 1 { "it" } else { "them" }
            );
            if session.prompter.confirm(&question, true)? {
                Ok(crate::ops::components::add(
                    plan, templates, catalog, cell, name, true,
                )?)
            } else {
                Err(crate::error::CellgenError::MissingRequirement {
                    name: name.into(),
                    cell: cell.name.clone(),
                    missing,
                }
                .into())
            }
        }
        other => Ok(other?),
    }
}

/// Teardown steps as numbered lines with their commands (`remove-cell`, `remove-component`).
pub fn print_steps(steps: &[crate::ops::teardown::Step], say: &mut dyn FnMut(String)) {
    for (i, step) in steps.iter().enumerate() {
        say(format!("  {}. {}:", i + 1, step.title));
        for command in &step.commands {
            say(format!("       {command}"));
        }
    }
}
