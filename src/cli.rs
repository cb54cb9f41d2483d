//! Command-line definitions (clap) and nothing else.

// clap prints the doc comments as the help text, where `<cell>` is literal (not HTML).
#![allow(rustdoc::invalid_html_tags)]

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use clap_complete::engine::ArgValueCandidates;

use crate::commands::ui::complete;

mod analyses;
mod help;
mod writing;

pub use analyses::*;
pub use help::{EXIT_STATUS, command};
pub use writing::*;

#[derive(Debug, Parser)]
#[command(
    name = "cellgen",
    version,
    about = "Onboard EKS cells into one Terraform + Flux repository, and check the bridge between them",
    long_about = "cellgen scaffolds cells that share one GitOps tree: Terraform writes one ConfigMap \
(cell-metadata, in flux-system) of identifiers; every Flux Kustomization substitutes ${key} from it, \
in strict mode. `cellgen check` renders every layer of every cell offline, so a typo fails the pull \
request, not the cluster."
)]
pub struct Cli {
    /// Run as if cellgen was started in DIR.
    #[arg(
        short = 'C',
        long = "directory",
        global = true,
        value_name = "DIR",
        help_heading = "Global options"
    )]
    pub directory: Option<PathBuf>,

    /// Never prompt: use defaults, and fail naming the flag where there is none.
    #[arg(long, global = true, env = "CELLGEN_NO_INPUT", value_parser = clap::builder::BoolishValueParser::new(), help_heading = "Global options")]
    pub no_input: bool,

    /// When to colour: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(
        long,
        global = true,
        value_enum,
        default_value = "auto",
        value_name = "WHEN",
        hide_possible_values = true,
        help_heading = "Global options"
    )]
    pub color: ColorChoice,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create the repository scaffold: cellgen.yaml, the shared layers and the CI workflow.
    Init(InitArgs),
    /// Create a cell: its Flux directory (cells/<cell>) and its Terraform stack (terraform/cells/<cell>).
    New(NewArgs),
    /// Add an optional component to a cell: its Flux Components, IAM identity and ConfigMap keys.
    AddComponent(ComponentArgs),
    /// Remove a component from a cell: the exact inverse of add-component.
    RemoveComponent(RemoveComponentArgs),
    /// Remove a cell: its Flux directory and record now, its Terraform stack once destroyed; prints the tear-down, in order.
    RemoveCell(RemoveCellArgs),
    /// Move cells to another version of a component's chart (per cell, so a roll-out is one pull request per stage).
    SetVersion(SetVersionArgs),
    /// Change the key contract: add, rename or remove a key on both sides at once.
    Key(KeyArgs),
    /// Bring the repository to this cellgen's templates and catalog, keeping your changes (three-way merge).
    Upgrade(UpgradeArgs),
    /// Finish or roll back a change a killed cellgen left half applied (.cellgen/journal), once the journal proves it is cellgen's own; nothing else.
    Repair,
    /// List cells (Kubernetes version, egress gateway, VPC block, schema, components and their versions), or (`list components`) the component catalog.
    List(ListArgs),
    /// Render every layer of every cell offline, in strict mode, and check the key contract.
    Check(CheckArgs),
    /// Print what Flux would apply for a cell, as multi-document YAML.
    Render(RenderArgs),
    /// Render every cell at a base commit and in the working tree, and show what each cell would apply differently.
    Diff(DiffArgs),
    /// Check a cell's real cell-metadata (from kubectl or `terraform show -json`) against the contract, and render the cell with it.
    Verify(VerifyArgs),
    /// Show, for every cell-metadata key, the Terraform expression that writes it, what it waits for, and the manifests that use it.
    Graph(GraphArgs),
    /// Where a cell-metadata key comes from and who uses it, in a few lines.
    Explain(ExplainArgs),
    /// Print a cell's sample cell-metadata ConfigMap (what check and render substitute with), as YAML.
    Values(ValuesArgs),
    /// Flux's variable substitution on stdin, to stdout (variables from the environment and --from).
    Envsubst(EnvsubstArgs),
    /// Print a shell completion script (install it as docs/reference.md, "Shell completions and man pages", says).
    Completions(CompletionsArgs),
    /// Print the man page, or write one page per subcommand with --out-dir.
    Man(ManArgs),
    /// Print the JSON Schema of cellgen.yaml or of a component.yaml (what editors validate against).
    Schema(SchemaArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when writing to a terminal and NO_COLOR is not set.
    Auto,
    /// Always colour, even through a pipe and with NO_COLOR set.
    Always,
    /// Never colour.
    Never,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write cellgen.1 and one cellgen-<command>.1 per subcommand into DIR instead of printing cellgen.1.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

/// The files cellgen publishes a JSON Schema for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SchemaTarget {
    /// The repository's settings and key contract.
    #[value(name = "cellgen.yaml")]
    CellgenYaml,
    /// A repository-defined component: components/<name>/component.yaml.
    #[value(name = "component.yaml")]
    ComponentYaml,
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Which file's schema to print.
    #[arg(value_enum, value_name = "FILE")]
    pub file: SchemaTarget,
}

/// How a command that writes reports what it did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// Each file created, updated, deleted or kept, then what to do next; warnings last.
    #[default]
    Text,
    /// One JSON object on stdout: changes, kept files, warnings and notes.
    Json,
}

/// The report options every command that writes has.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// How to report what was done.
    #[arg(long, value_enum, default_value = "text")]
    pub format: ReportFormat,

    /// With --dry-run, also show the diff of cellgen's records (.cellgen/), which is otherwise one summary line.
    #[arg(long, short = 'v')]
    pub verbose: bool,
}
