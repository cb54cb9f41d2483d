//! The one report of a command that writes: the files it changed and kept, its warnings and
//! notes. As text, the files are listed as the command goes (`finish`) and the warnings come
//! last, below them; with `--format json` nothing else is printed and the whole report is one
//! JSON object on stdout at the end, for scripts.

use camino::Utf8Path;
use serde::Serialize;

use crate::cli::{Command, KeyCommand, ReportFormat};
use crate::writer::plan::ChangeKind;

/// Where cellgen keeps its records and editor schemas: a dry run summarises their changes in
/// one line, since they say what cellgen generated, not what the repository does.
pub const RECORDS_DIR: &str = crate::model::names::CELLGEN_DIR;

/// Whether `path` is one of cellgen's records (`.cellgen/...`).
pub fn is_record(path: &Utf8Path) -> bool {
    path.starts_with(RECORDS_DIR)
}

/// The dry run's line for the records it does not show.
pub fn records_line(count: usize) -> String {
    format!(
        "(and {} of cellgen's records under {RECORDS_DIR}/, not shown: --verbose shows their diff)",
        crate::analysis::findings::plural(count, "change")
    )
}

/// `--format` and `--verbose` of a command that writes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    pub format: ReportFormat,
    pub verbose: bool,
}

/// The options of `command`, when it is one that writes (the others report their own way).
pub fn options(command: &Command) -> Option<Options> {
    let args = match command {
        Command::Init(a) => &a.report,
        Command::New(a) => &a.report,
        Command::AddComponent(a) => &a.report,
        Command::RemoveComponent(a) => &a.report,
        Command::RemoveCell(a) => &a.report,
        Command::SetVersion(a) => &a.report,
        Command::Upgrade(a) => &a.report,
        Command::Key(k) => match &k.command {
            KeyCommand::Add(a) => &a.report,
            KeyCommand::Rename(a) => &a.report,
            KeyCommand::Remove(a) => &a.report,
        },
        _ => return None,
    };
    Some(Options {
        format: args.format,
        verbose: args.verbose,
    })
}

#[derive(Debug, Serialize)]
struct Change {
    /// created, updated or deleted.
    action: &'static str,
    path: String,
    /// Why a file you changed was edited rather than regenerated.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

#[derive(Debug, Serialize)]
struct KeptFile {
    /// kept, or skipped.
    action: &'static str,
    path: String,
    why: String,
}

/// What a command reported; see the module doc.
#[derive(Debug, Serialize)]
pub struct Report {
    #[serde(skip)]
    writes: bool,
    #[serde(skip)]
    pub verbose: bool,
    #[serde(skip)]
    format: ReportFormat,
    pub dry_run: bool,
    changes: Vec<Change>,
    kept: Vec<KeptFile>,
    pub warnings: Vec<String>,
    /// What the change means and what to do next, as the text report says it.
    pub notes: Vec<String>,
}

impl Report {
    pub fn new(options: Option<Options>) -> Report {
        let o = options.unwrap_or_default();
        Report {
            writes: options.is_some(),
            verbose: o.verbose,
            format: o.format,
            dry_run: false,
            changes: Vec::new(),
            kept: Vec::new(),
            warnings: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Whether the report is printed as JSON at the end (and nothing else on stdout).
    pub fn json(&self) -> bool {
        self.writes && self.format == ReportFormat::Json
    }

    pub fn change(&mut self, kind: ChangeKind, path: &Utf8Path, note: Option<&str>) {
        let action = match kind {
            ChangeKind::Create => "created",
            ChangeKind::Update => "updated",
            ChangeKind::Delete => "deleted",
        };
        self.changes.push(Change {
            action,
            path: path.to_string(),
            note: note.map(str::to_string),
        });
    }

    pub fn keep(&mut self, action: &'static str, path: &str, why: &str) {
        self.kept.push(KeptFile {
            action,
            path: path.to_string(),
            why: why.to_string(),
        });
    }

    /// A line of the command's closing text: printed as text, or kept for the JSON report.
    pub fn say(&mut self, line: impl Into<String>) -> Result<(), crate::error::CellgenError> {
        let line = line.into();
        if self.json() {
            self.notes
                .extend(line.trim_matches('\n').lines().map(str::to_string));
            Ok(())
        } else {
            crate::outln!("{line}")
        }
    }

    /// The end of the command: its warnings (on stderr, last) or the JSON report (on stdout,
    /// for a command that succeeded).
    pub fn end(&mut self, succeeded: bool) -> Result<(), crate::error::CellgenError> {
        if self.json() {
            if succeeded {
                let text =
                    serde_json::to_string_pretty(&*self).expect("a report of strings serialises");
                crate::outln!("{text}")?;
            }
            return Ok(());
        }
        // A command that failed wrote nothing: its warnings were about a change that is not
        // there, and would only bury the error.
        if succeeded {
            for warning in &self.warnings {
                crate::errln!("warning: {warning}");
            }
        }
        Ok(())
    }
}

/// `outln!` for the closing text of a command that writes: printed as text, or kept in the JSON
/// report (`Report::say`).
#[macro_export]
macro_rules! say {
    ($report:expr) => {
        $report.say(String::new())
    };
    ($report:expr, $($arg:tt)*) => {
        $report.say(format!($($arg)*))
    };
}
