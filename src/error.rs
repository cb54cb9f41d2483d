//! Errors that code and tests branch on. The command layer adds context with anyhow.

use camino::Utf8PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum CellgenError {
    #[error(
        "no cellgen repository here: no cellgen.yaml in {} or any parent directory. Run `cellgen init` (or `cellgen new <cell>`) to create one, or pass -C <dir>",
        start
    )]
    NotARepository { start: Utf8PathBuf },

    #[error("{}{}: {message}", path, line.map(|l| format!(":{l}")).unwrap_or_default())]
    MalformedConfig {
        path: Utf8PathBuf,
        line: Option<usize>,
        message: String,
    },

    #[error("invalid cell name `{name}`: {reason}")]
    InvalidCellName { name: String, reason: String },

    #[error(
        "cell `{name}` already exists ({}). Pick another name, or pass --force to regenerate the files you have not changed",
        path
    )]
    CellExists { name: String, path: Utf8PathBuf },

    #[error("{what} is needed and there is no terminal to ask on: pass {flag}")]
    MissingInput { what: String, flag: String },

    #[error("invalid value for {flag}: {reason}")]
    InvalidFlag { flag: String, reason: String },

    #[error("{}{hint} Cells in this repository: {}", if name.is_empty() { "no cell to work on.".to_string() } else { format!("unknown cell `{name}`.") }, if cells.is_empty() { "none yet (create one with `cellgen new <cell>`)".to_string() } else { cells.join(", ") })]
    UnknownCell {
        name: String,
        cells: Vec<String>,
        hint: String,
    },

    #[error(
        "there is no cell `{name}` to remove ({looked}, and no Git commit has them).{hint} Run `cellgen list` for the repository's cells."
    )]
    NoSuchCell {
        name: String,
        looked: String,
        hint: String,
    },

    #[error("{}: {message}", path)]
    InvalidFile { path: Utf8PathBuf, message: String },

    /// An environment variable cellgen reads holds a value it does not accept.
    #[error(
        "invalid value `{value}` for the environment variable {name}: {accepted}. Unset it or give such a value"
    )]
    InvalidEnvironment {
        name: &'static str,
        value: String,
        accepted: String,
    },

    /// Standard output could not be written (a full disk, a closed pipe, a device error).
    #[error(
        "cannot write to standard output: {io}. A command that changes files wrote them before reporting, so check `git status`; free the space or send the output somewhere else"
    )]
    Stdout { io: std::io::Error },

    /// `remove-cell --terraform-destroyed` found Terraform state in the stack it would delete.
    #[error(
        "{} still holds Terraform state or its working directory, so --terraform-destroyed removes nothing (nothing was written): {}. State is the only record of what the cell owns in AWS, and cellgen deletes none of it. If resources remain, destroy them: `terraform -chdir={} destroy` (in every workspace: `terraform workspace select <name>` first). If this state belongs in the backend, move it there (`terraform -chdir={} init -migrate-state`). Once you are sure nothing is left, remove these yourself and run this again",
        dir,
        found.join("; "),
        dir,
        dir
    )]
    StateInStack {
        dir: Utf8PathBuf,
        found: Vec<String>,
    },

    #[error(
        "{} is a symbolic link (to {}): Flux's source-controller leaves symbolic links out of the artifact it builds from, so Flux would not see {}. Replace the link with the file or directory itself; nothing was written",
        link,
        target,
        path
    )]
    FluxSymlink {
        /// The path cellgen reads or writes.
        path: Utf8PathBuf,
        /// The first link on its way (repository-relative), and where it points.
        link: Utf8PathBuf,
        target: Utf8PathBuf,
    },

    /// YAML that cellgen refuses (too large, nested too deep) or that does not parse
    /// (`crate::ports::yaml`, the one entry point to every YAML parser).
    #[error("{}{}: {problem}", path, line.map(|l| format!(":{l}")).unwrap_or_default())]
    Yaml {
        path: Utf8PathBuf,
        /// 1-based line of the problem, where the parser knows it.
        line: Option<usize>,
        problem: String,
    },

    #[error("cannot write {}", path)]
    Write {
        path: Utf8PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// An input larger than cellgen reads (`crate::root::limited`).
    #[error(
        "{}: more than {limit} bytes (32 MiB), the most cellgen reads from one input: is it the file you meant? A FIFO or device (/dev/zero) never ends; give a regular file",
        path
    )]
    TooLarge { path: Utf8PathBuf, limit: usize },

    #[error("cannot read {}", path)]
    Read {
        path: Utf8PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("unknown component `{name}`.{hint} Known components: {}. A repository can define its own in components/<name>/component.yaml", known.join(", "))]
    UnknownComponent {
        name: String,
        hint: String,
        known: Vec<String>,
    },

    #[error("component `{name}` needs {} in cell `{cell}` first: add {} with `cellgen add-component`, or pass --with-requirements to add them too", missing.join(", "), if missing.len() == 1 { "it" } else { "them" })]
    MissingRequirement {
        name: String,
        cell: String,
        missing: Vec<String>,
    },

    #[error("cell `{cell}` still runs {}, which require{} `{name}`: remove {} first", dependents.join(", "), if dependents.len() == 1 { "s" } else { "" }, if dependents.len() == 1 { "it" } else { "them" })]
    RequiredBy {
        name: String,
        cell: String,
        dependents: Vec<String>,
    },

    #[error("unknown key `{name}`.{hint} Keys of the contract (cellgen.yaml): {}", if known.is_empty() { "none".to_string() } else { known.join(", ") })]
    UnknownKey {
        name: String,
        hint: String,
        known: Vec<String>,
    },

    #[error("key `{key}` is still used, so cellgen will not remove it: {}. Remove these uses first (or `cellgen key rename` it)", uses.join(", "))]
    KeyInUse { key: String, uses: Vec<String> },

    #[error("template {name}: {message}")]
    Template { name: String, message: String },

    #[error(
        "{} is {}, outside the repository {}: cellgen never reads or writes outside the repository root. {}",
        path,
        target.as_ref().map_or("a path".to_string(), |t| format!("a symbolic link to {}", t)),
        root,
        if target.is_some() { "Replace the link with the directory or file itself (or point it inside the repository); nothing was written" } else { "nothing was written" }
    )]
    OutsideRoot {
        path: Utf8PathBuf,
        target: Option<Utf8PathBuf>,
        root: Utf8PathBuf,
    },

    #[error(
        "{}: not valid UTF-8 at line {line}, column {column} (byte {byte}): cellgen reads and edits text files as UTF-8; convert the file to UTF-8",
        path
    )]
    NotUtf8 {
        path: Utf8PathBuf,
        line: usize,
        column: usize,
        byte: usize,
    },

    /// A path from outside (the current directory, a directory listing) that is not UTF-8:
    /// `path` is its lossy form, the only place cellgen shows one.
    #[error(
        "{what} `{path}` is not valid UTF-8 (shown with U+FFFD for the bytes that are not): cellgen works with UTF-8 paths only, so that every message and record names a path exactly. {fix}"
    )]
    NotUtf8Path {
        what: &'static str,
        path: String,
        fix: &'static str,
    },

    /// An entry of a directory cellgen lists whose name is not UTF-8: the directory is named
    /// exactly, the name in its lossy form.
    #[error(
        "{dir}: the entry `{name}` has a name that is not valid UTF-8 (shown with U+FFFD for the bytes that are not): cellgen works with UTF-8 paths only, so that every message and record names a path exactly. {fix}"
    )]
    NotUtf8Name {
        dir: Utf8PathBuf,
        name: String,
        fix: &'static str,
    },

    #[error(
        "the repository {} is in use by another cellgen: {holder}. cellgen waited {waited_secs} s for it; run the command again once that one has finished (set CELLGEN_LOCK_WAIT=<seconds> to wait longer)",
        root
    )]
    Locked {
        root: Utf8PathBuf,
        holder: String,
        waited_secs: u64,
    },

    #[error("cannot lock the repository {}", root)]
    Lock {
        root: Utf8PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error(
        "interrupted by {}: {}",
        signal_name(*signal),
        if *applied { "every change had already been written (the whole plan is applied)" } else { "every change was rolled back; the repository is as it was" }
    )]
    Interrupted { signal: i32, applied: bool },

    #[error(
        "{}: an interrupted cellgen left this record of a half-applied change, and it cannot be repaired: {message}. Nothing else was done; fix the cause and run cellgen again (if cellgen did not write this file, move it away: cellgen keeps its journal there)",
        path
    )]
    Recovery { path: Utf8PathBuf, message: String },

    /// A journal whose evidence does not hold (planted, committed, or left by a cellgen that did
    /// not record hashes): not obeyed.
    #[error(
        "{}: this journal of an interrupted cellgen apply does not prove it is cellgen's own, so cellgen did not obey it: {problem}. Nothing was changed. Inspect it and the files it names (`git status` shows what differs from your last commit); once you know no half-applied change of yours is left, delete {} and run the command again",
        path,
        path
    )]
    JournalUnproven { path: Utf8PathBuf, problem: String },

    /// A record says a newer cellgen wrote the repository: an older one does not regenerate it.
    #[error(
        "{}: cellgen {wrote} wrote this repository's files, and this is cellgen {this}: an older cellgen would turn them back to what it generates. Nothing was written. Run this with cellgen {wrote} or newer",
        record
    )]
    NewerWriter {
        record: Utf8PathBuf,
        wrote: String,
        this: String,
    },

    /// The change would leave errors `cellgen check` reports (the findings, as check prints them).
    #[error(
        "nothing was written: after this change `cellgen check` would report what follows, which the repository does not have now. Change what the command was given (or the files the findings name) and run it again.\n\n{findings}"
    )]
    PlannedFindings { findings: String },

    /// Ctrl-C (or end of input) at a question: nothing was planned or written yet.
    #[error("cancelled at the question `{prompt}`: nothing was written")]
    Cancelled { prompt: String },

    /// A command that only reads met a journal: it never repairs.
    #[error(
        "{}: a repair is pending: {} was interrupted while writing and left a half-applied change, which this command does not read. A command that only reads (a dry run too) never repairs: run `cellgen repair` (or any command that writes), which finishes or rolls back that change once the journal proves it is cellgen's own, then run this again",
        journal,
        command
    )]
    RepairPending {
        journal: Utf8PathBuf,
        command: String,
    },
}

/// A parser's refusal that knows its line: the YAML entry point's error implements it, so this
/// base layer names no parser (layers run down, CONTRIBUTING.md).
pub trait LinedProblem: std::fmt::Display {
    /// 1-based line of the problem, where known.
    fn line(&self) -> Option<usize>;
}

impl CellgenError {
    /// For `map_err`: a YAML refusal or parse error of the file at `path` (`path:line: ...`).
    pub fn yaml<E: LinedProblem>(path: &camino::Utf8Path) -> impl FnOnce(E) -> Self {
        let path = path.to_path_buf();
        move |problem| CellgenError::Yaml {
            path,
            line: problem.line(),
            problem: problem.to_string(),
        }
    }
}

impl CellgenError {
    /// Usage errors (bad flags or arguments) exit with 2, like clap's own; everything else with 1.
    pub fn exit_code(&self) -> u8 {
        match self {
            CellgenError::InvalidCellName { .. }
            | CellgenError::MissingInput { .. }
            | CellgenError::InvalidFlag { .. }
            | CellgenError::InvalidEnvironment { .. }
            | CellgenError::UnknownCell { .. }
            | CellgenError::NoSuchCell { .. }
            | CellgenError::UnknownComponent { .. }
            | CellgenError::UnknownKey { .. } => 2,
            // Like a shell: 128 + the signal number (130 for SIGINT, 143 for SIGTERM).
            CellgenError::Interrupted { signal, .. } => 128u8.saturating_add(*signal as u8),
            // As a shell reports Ctrl-C: 128 + SIGINT.
            CellgenError::Cancelled { .. } => 130,
            _ => 1,
        }
    }
}

/// SIGINT, SIGTERM, ... for messages.
fn signal_name(signal: i32) -> String {
    #[cfg(unix)]
    {
        match signal {
            libc::SIGINT => return "SIGINT".into(),
            libc::SIGTERM => return "SIGTERM".into(),
            libc::SIGHUP => return "SIGHUP".into(),
            _ => {}
        }
    }
    format!("signal {signal}")
}
