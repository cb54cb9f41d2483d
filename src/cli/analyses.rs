//! The flags of the commands that read the repository and write nothing to it: check, render,
//! diff, verify, graph, explain, values, envsubst, list.

// clap prints the doc comments as the help text, where `<cell>` is literal (not HTML).
#![allow(rustdoc::invalid_html_tags)]

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckFormat {
    Text,
    Json,
    /// GitHub Actions annotations.
    Github,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum KustomizeMode {
    /// Native builder; an installed kustomize or kubectl builds what it does not support.
    Auto,
    /// Native builder only; unsupported kustomize features are errors.
    Native,
    /// Always run `kustomize build` (or `kubectl kustomize`).
    External,
}

#[derive(Debug, Args)]
pub struct RenderOptions {
    /// YAML file of values that replace the sample ConfigMap's (a ConfigMap, or a plain key: value map).
    #[arg(long, value_name = "FILE")]
    pub values: Option<PathBuf>,

    /// How layers are built.
    #[arg(long, value_enum, default_value = "auto")]
    pub kustomize: KustomizeMode,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Cells to check (default: all).
    #[arg(add = ArgValueCandidates::new(complete::cells))]
    pub cells: Vec<String>,

    #[arg(long, value_enum, default_value = "text")]
    pub format: CheckFormat,

    #[command(flatten)]
    pub render: RenderOptions,
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// The cell to render.
    #[arg(add = ArgValueCandidates::new(complete::cells))]
    pub cell: String,

    /// Only this layer (a Flux Kustomization name, e.g. controllers).
    #[arg(long, value_name = "NAME", add = ArgValueCandidates::new(complete::layers))]
    pub layer: Option<String>,

    #[command(flatten)]
    pub render: RenderOptions,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffFormat {
    Text,
    Json,
    /// A pull-request comment: a summary table and collapsible diffs, size-limited.
    Markdown,
    /// GitHub Actions notices on the changed source lines, then the text report.
    Github,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The commit to compare with (default: the merge-base of HEAD with origin/<git.branch>, else <git.branch>, of cellgen.yaml).
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,

    #[arg(long, value_enum, default_value = "text")]
    pub format: DiffFormat,

    /// Exit 1 when anything changed (like `git diff --exit-code`).
    #[arg(long)]
    pub exit_code: bool,

    /// How layers are built.
    #[arg(long, value_enum, default_value = "auto")]
    pub kustomize: KustomizeMode,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The cell (default: the one the ConfigMap's cell_name names, else the only cell).
    #[arg(add = ArgValueCandidates::new(complete::cells))]
    pub cell: Option<String>,

    /// The real ConfigMap: `kubectl get configmap cell-metadata -n flux-system -o yaml` output, or `terraform show -json` output of the cell's stack.
    #[arg(long, value_name = "FILE")]
    pub from: PathBuf,

    #[arg(long, value_enum, default_value = "text")]
    pub format: CheckFormat,

    /// How layers are built.
    #[arg(long, value_enum, default_value = "auto")]
    pub kustomize: KustomizeMode,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GraphFormat {
    /// A Mermaid flowchart (renders in GitHub Markdown inside a ```mermaid block).
    Mermaid,
    /// Graphviz DOT.
    Dot,
    Text,
}

#[derive(Debug, Args)]
pub struct GraphArgs {
    /// Only this cell (default: every cell).
    #[arg(add = ArgValueCandidates::new(complete::cells))]
    pub cell: Option<String>,

    #[arg(long, value_enum, default_value = "text")]
    pub format: GraphFormat,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The key, e.g. karpenter_node_role (or `${karpenter_node_role}`).
    #[arg(add = ArgValueCandidates::new(complete::keys))]
    pub key: String,
}

#[derive(Debug, Args)]
pub struct ValuesArgs {
    /// The cell.
    #[arg(add = ArgValueCandidates::new(complete::cells))]
    pub cell: String,
}

#[derive(Debug, Args)]
pub struct EnvsubstArgs {
    /// Fail on a variable that is not set and has no default (Flux's StrictPostBuildSubstitutions).
    #[arg(long)]
    pub strict: bool,

    /// YAML file of variables: a ConfigMap (its data) or a plain key: value map. Repeatable; later files win over earlier ones and over the environment.
    #[arg(long, value_name = "FILE")]
    pub from: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ListTarget {
    Cells,
    Components,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ListFormat {
    Table,
    Json,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// What to list.
    #[arg(value_enum, default_value = "cells")]
    pub what: ListTarget,

    #[arg(long, value_enum, default_value = "table")]
    pub format: ListFormat,
}
