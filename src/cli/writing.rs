//! The flags of the commands that write the repository: add- and remove-component, upgrade,
//! init, new, remove-cell, set-version, key.

// clap prints the doc comments as the help text, where `<cell>` is literal (not HTML).
#![allow(rustdoc::invalid_html_tags)]

use super::*;

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
