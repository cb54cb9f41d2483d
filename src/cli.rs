//! Command-line definitions (clap) and nothing else.

// clap prints the doc comments as the help text, where `<cell>` is literal (not HTML).
#![allow(rustdoc::invalid_html_tags)]

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use clap_complete::engine::ArgValueCandidates;

use crate::commands::ui::complete;

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

/// `add-component`.
#[derive(Debug, Args)]
pub struct ComponentArgs {
    /// Component name, e.g. karpenter (see `cellgen list components`).
    #[arg(add = ArgValueCandidates::new(complete::components))]
    pub name: String,

    /// The cell (default: the cell of the current directory, else the only cell).
    #[arg(long, value_name = "CELL", add = ArgValueCandidates::new(complete::cells))]
    pub cell: Option<String>,

    /// Also add the components this one requires.
    #[arg(long)]
    pub with_requirements: bool,

    /// Print the changes as a unified diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub report: ReportArgs,
}

/// `remove-component` removes only the named component (what it required stays; what requires
/// it is an error), so it has no --with-requirements.
#[derive(Debug, Args)]
pub struct RemoveComponentArgs {
    /// Component name, e.g. karpenter (see `cellgen list components`).
    #[arg(add = ArgValueCandidates::new(complete::components))]
    pub name: String,

    /// The cell (default: the cell of the current directory, else the only cell).
    #[arg(long, value_name = "CELL", add = ArgValueCandidates::new(complete::cells))]
    pub cell: Option<String>,

    /// Print the changes as a unified diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub report: ReportArgs,
}

/// `upgrade`.
#[derive(Debug, Args)]
pub struct UpgradeArgs {
    /// Cells to upgrade (default: all); the repository's own files and settings are upgraded either way.
    #[arg(value_name = "CELL", add = ArgValueCandidates::new(complete::cells))]
    pub cells: Vec<String>,

    /// Print the changes as a unified diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub report: ReportArgs,
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

#[derive(Debug, Args)]
pub struct RepoArgs {
    /// Git URL Flux syncs from (default: this directory's `origin` remote).
    #[arg(long, value_name = "URL")]
    pub git_url: Option<String>,

    /// Branch Flux syncs from.
    #[arg(long, value_name = "BRANCH")]
    pub git_branch: Option<String>,

    /// File of the Git host's SSH keys, known_hosts lines (`ssh-keyscan <host> > FILE`, fingerprints checked against what the host publishes); github.com's published keys are the default for a github.com URL.
    #[arg(long, value_name = "FILE")]
    pub git_known_hosts_file: Option<String>,

    /// S3 bucket for Terraform state (default: give it at `terraform init`).
    #[arg(long, value_name = "BUCKET")]
    pub state_bucket: Option<String>,

    /// Region of the state bucket (needed with --state-bucket; the bucket is shared, so it is not a cell's region).
    #[arg(long, value_name = "REGION")]
    pub state_region: Option<String>,

    /// IAM role that administers every cell's cluster (an EKS access entry); repeatable or comma-separated. Include the role CI applies Terraform with.
    #[arg(long = "admin-role-arn", value_name = "ARN", value_delimiter = ',')]
    pub admin_role_arns: Option<Vec<String>>,

    /// CIDRs allowed to reach the clusters' public API endpoint, comma-separated (your CI runners' and VPN's egress); "" or none keeps the API private, the default.
    #[arg(long, value_name = "CIDRS", value_delimiter = ',')]
    pub public_endpoint_cidrs: Option<Vec<String>>,

    /// Route53 hosted zones (public, by name) external-dns and cert-manager may change, comma-separated, for every environment (dns.zones in cellgen.yaml).
    #[arg(long, value_name = "ZONES", value_delimiter = ',')]
    pub dns_zones: Option<Vec<String>>,

    /// Create the repository without a cluster admin role (a cell's first `terraform apply` then fails until cellgen.yaml lists one).
    #[arg(long)]
    pub allow_no_admin: bool,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    #[command(flatten)]
    pub repo: RepoArgs,

    /// Print the changes as a unified diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub report: ReportArgs,
}

#[derive(Debug, Args)]
pub struct NewArgs {
    /// Cell name: <aws-region>-<environment>, e.g. eu-west-2-prod.
    pub name: String,

    /// EKS Kubernetes version (default: defaults.kubernetes_version in cellgen.yaml).
    #[arg(long, value_name = "VERSION")]
    pub kubernetes_version: Option<String>,

    /// The cell has an egress gateway (egress.tf, Cilium egress gateway nodes).
    #[arg(long, conflicts_with = "no_egress_gateway")]
    pub egress_gateway: bool,

    /// The cell has no egress gateway (the default without a terminal).
    #[arg(long)]
    pub no_egress_gateway: bool,

    /// The cell's VPC block (default: the next free block of network.vpc_cidr_pool in cellgen.yaml).
    #[arg(long, value_name = "CIDR")]
    pub vpc_cidr: Option<String>,

    /// Components to add, comma-separated (see `cellgen list components`).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub components: Option<Vec<String>>,

    /// Also add the components the chosen ones require.
    #[arg(long)]
    pub with_requirements: bool,

    /// Print the changes as a unified diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Regenerate an existing cell's files, except those you have changed.
    #[arg(long)]
    pub force: bool,

    /// Settings for the repository scaffold, used only when there is no cellgen.yaml yet.
    #[command(flatten)]
    pub repo: RepoArgs,

    #[command(flatten)]
    pub report: ReportArgs,
}

/// `remove-cell`.
#[derive(Debug, Args)]
pub struct RemoveCellArgs {
    /// The cell to remove, e.g. eu-west-2-prod.
    #[arg(add = ArgValueCandidates::new(complete::cells))]
    pub cell: String,

    /// `terraform destroy` has run for the cell: also remove terraform/cells/<cell> (without it the stack stays, since its state may still hold live resources).
    #[arg(long)]
    pub terraform_destroyed: bool,

    /// Print the changes as a unified diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub report: ReportArgs,
}

/// `set-version`.
#[derive(Debug, Args)]
pub struct SetVersionArgs {
    /// Component whose chart moves, e.g. cert-manager (see `cellgen list`), or cilium (per environment in cellgen.yaml).
    #[arg(add = ArgValueCandidates::new(complete::components))]
    pub component: String,

    /// The chart version (semver, e.g. v1.21.0) or, for a chart from an OCIRepository, the tag.
    pub version: String,

    /// Only the cells of this environment; repeatable or comma-separated.
    #[arg(long = "env", value_name = "ENV", value_delimiter = ',', add = ArgValueCandidates::new(complete::environments))]
    pub environments: Vec<String>,

    /// Only this cell; repeatable or comma-separated.
    #[arg(long = "cell", value_name = "CELL", value_delimiter = ',', add = ArgValueCandidates::new(complete::cells))]
    pub cells: Vec<String>,

    /// Print the changes as a unified diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub report: ReportArgs,
}

/// `key`.
#[derive(Debug, Args)]
pub struct KeyArgs {
    #[command(subcommand)]
    pub command: KeyCommand,
}

#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Add a key to the contract and to every cell's cell-metadata.tf (or the --cell/--env ones).
    Add(KeyAddArgs),
    /// Rename a key in cellgen.yaml, every cell's cell-metadata.tf and every ${OLD} of the layers and components.
    Rename(KeyRenameArgs),
    /// Remove a key no manifest uses from the contract and every cell's cell-metadata.tf.
    Remove(KeyRemoveArgs),
}

impl KeyCommand {
    pub fn dry_run(&self) -> bool {
        match self {
            KeyCommand::Add(a) => a.dry_run,
            KeyCommand::Rename(a) => a.dry_run,
            KeyCommand::Remove(a) => a.dry_run,
        }
    }
}

#[derive(Debug, Args)]
pub struct KeyAddArgs {
    /// The key, a Flux variable name (manifests read it as ${NAME}).
    pub name: String,

    /// The Terraform expression cell-metadata.tf writes, e.g. aws_sqs_queue.jobs.url.
    #[arg(long, value_name = "EXPR")]
    pub terraform: String,

    /// A sample value, which `cellgen check` renders with.
    #[arg(long, value_name = "VALUE")]
    pub example: String,

    /// What the key identifies (an identifier, never a secret).
    #[arg(long, value_name = "TEXT")]
    pub description: String,

    /// Only this cell writes it; repeatable or comma-separated.
    #[arg(long = "cell", value_name = "CELL", value_delimiter = ',', add = ArgValueCandidates::new(complete::cells))]
    pub cells: Vec<String>,

    /// Only the cells of this environment write it (new ones too); repeatable or comma-separated.
    #[arg(long = "env", value_name = "ENV", value_delimiter = ',', add = ArgValueCandidates::new(complete::environments))]
    pub environments: Vec<String>,

    /// Print the changes as a unified diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub report: ReportArgs,
}

#[derive(Debug, Args)]
pub struct KeyRenameArgs {
    /// The key's name now.
    #[arg(add = ArgValueCandidates::new(complete::keys))]
    pub old: String,

    /// Its new name, a Flux variable name.
    pub new: String,

    /// Print the changes as a unified diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub report: ReportArgs,
}

#[derive(Debug, Args)]
pub struct KeyRemoveArgs {
    /// The key to remove.
    #[arg(add = ArgValueCandidates::new(complete::keys))]
    pub name: String,

    /// Print the changes as a unified diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,

    #[command(flatten)]
    pub report: ReportArgs,
}

/// How every command exits, under `--help` and in the man pages.
pub const EXIT_STATUS: &str =
    "  0    success (check, verify: no errors, warnings allowed; diff --exit-code: nothing changed)
  1    failure: an error, findings of check or verify, conflicts written by upgrade, changes
       found by diff --exit-code
  2    usage error: a bad flag or name, or a value missing with no terminal to ask on
  130  cancelled with Ctrl-C (128 + the signal for another one); nothing half-written is left";

/// Examples per command, as typed in a repository (`cellgen new` makes one in an empty Git
/// directory): (command path, [(example, what it does)]).
/// (an example, what it does).
type Example = (&'static str, &'static str);

const EXAMPLES: &[(&[&str], &[Example])] = &[
    (
        &["init"],
        &[(
            "cellgen init --git-url ssh://git@github.com/acme/infra.git --admin-role-arn arn:aws:iam::123456789012:role/platform-admin",
            "the repository scaffold alone",
        )],
    ),
    (
        &["new"],
        &[
            (
                "cellgen new eu-west-2-prod --git-url ssh://git@github.com/acme/infra.git --admin-role-arn arn:aws:iam::123456789012:role/platform-admin",
                "the first cell, and the repository with it",
            ),
            (
                "cellgen new us-east-1-staging --components karpenter,kyverno",
                "another cell, with components",
            ),
            (
                "cellgen new us-east-1-staging --dry-run",
                "the diff, nothing written",
            ),
        ],
    ),
    (
        &["add-component"],
        &[(
            "cellgen add-component karpenter --cell eu-west-2-prod",
            "Karpenter in one cell",
        )],
    ),
    (
        &["remove-component"],
        &[(
            "cellgen remove-component karpenter --cell eu-west-2-prod",
            "the exact inverse",
        )],
    ),
    (
        &["remove-cell"],
        &[
            (
                "cellgen remove-cell us-east-1-staging",
                "the Flux side, and the tear-down to run",
            ),
            (
                "cellgen remove-cell us-east-1-staging --terraform-destroyed",
                "the stack too, once destroyed",
            ),
        ],
    ),
    (
        &["set-version"],
        &[
            (
                "cellgen set-version cert-manager v1.21.1 --env dev",
                "the dev cells first",
            ),
            (
                "cellgen set-version cilium 1.19.1 --env dev",
                "Cilium, per environment",
            ),
        ],
    ),
    (
        &["key", "add"],
        &[(
            "cellgen key add jobs_queue_url --terraform aws_sqs_queue.jobs.url --example https://sqs.eu-west-2.amazonaws.com/123456789012/jobs --description \"The jobs queue\"",
            "a key on both sides",
        )],
    ),
    (
        &["key", "rename"],
        &[(
            "cellgen key rename jobs_queue_url job_queue_url",
            "everywhere at once",
        )],
    ),
    (
        &["key", "remove"],
        &[("cellgen key remove job_queue_url", "a key no manifest uses")],
    ),
    (
        &["upgrade"],
        &[(
            "cellgen upgrade --dry-run",
            "what a newer cellgen would change",
        )],
    ),
    (
        &["list"],
        &[
            ("cellgen list", "the cells"),
            ("cellgen list components", "the catalog"),
        ],
    ),
    (
        &["check"],
        &[
            ("cellgen check", "every cell"),
            ("cellgen check --format github", "as CI runs it"),
        ],
    ),
    (
        &["render"],
        &[(
            "cellgen render eu-west-2-prod --layer configs",
            "what Flux would apply",
        )],
    ),
    (
        &["diff"],
        &[(
            "cellgen diff --base origin/main",
            "what each cell would apply differently",
        )],
    ),
    (
        &["verify"],
        &[(
            "kubectl get configmap cell-metadata -n flux-system -o yaml | cellgen verify eu-west-2-prod --from /dev/stdin",
            "a live cell against the contract",
        )],
    ),
    (
        &["explain"],
        &[(
            "cellgen explain cluster_name",
            "where a key comes from and who reads it",
        )],
    ),
    (
        &["completions"],
        &[
            (
                "cellgen completions bash > ~/.local/share/bash-completion/completions/cellgen",
                "a static script",
            ),
            (
                "source <(COMPLETE=bash cellgen)",
                "completing cell, component, layer and key names too",
            ),
        ],
    ),
];

fn after_help(examples: &[Example]) -> String {
    let mut text = String::from("Examples:\n");
    for (example, what) in examples {
        text.push_str(&format!("  # {what}\n  {example}\n"));
    }
    format!("{text}\nExit status:\n{EXIT_STATUS}")
}

/// The command line with its examples and exit status (what `--help`, the man pages and the
/// completions are made from).
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    let mut command = Cli::command().after_long_help(after_help(&[
        (
            "cellgen new eu-west-2-prod --git-url ssh://git@github.com/acme/infra.git --admin-role-arn arn:aws:iam::123456789012:role/platform-admin",
            "a repository and its first cell",
        ),
        ("cellgen check", "what CI runs"),
    ]));
    for (path, examples) in EXAMPLES {
        let text = after_help(examples);
        command = match path {
            [one] => command.mut_subcommand(*one, |c| c.after_long_help(text)),
            [one, two] => command.mut_subcommand(*one, |c| {
                c.mut_subcommand(*two, |c| c.after_long_help(text))
            }),
            _ => command,
        };
    }
    // Every other command still says how it exits.
    let names: Vec<String> = command
        .get_subcommands()
        .filter(|c| c.get_after_long_help().is_none())
        .map(|c| c.get_name().to_string())
        .collect();
    for name in names {
        command = command.mut_subcommand(name, |c| {
            c.after_long_help(format!("Exit status:\n{EXIT_STATUS}"))
        });
    }
    command
}
