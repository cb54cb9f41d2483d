//! What `cellgen init` and `cellgen new` generate, as plain data: paths (relative to the
//! repository root) and their contents. No prompting, printing or writing here.

use camino::{Utf8Path, Utf8PathBuf};
use std::collections::BTreeMap;

use serde::Serialize;

use crate::error::CellgenError;
use crate::model::cell::CellName;
use crate::model::config::{CONFIG_FILE, Config, SCHEMA_KEY};
use crate::model::repo::{cell_flux_dir, cell_terraform_dir};
use crate::ports::templates::Templates;

pub type Files = BTreeMap<Utf8PathBuf, String>;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Repository-wide settings `init` asks for.
#[derive(Debug, Clone, Serialize)]
pub struct RepoSettings {
    pub git_url: String,
    pub git_branch: String,
    pub environments: Vec<String>,
    pub kubernetes_version: String,
    pub state_bucket: Option<String>,
    /// Region of `state_bucket`; set whenever the bucket is.
    pub state_region: Option<String>,
    pub admin_role_arns: Vec<String>,
    pub public_endpoint_cidrs: Vec<String>,
    /// dns.zones of every environment; none: the section is a commented example.
    pub dns_zones: Vec<String>,
    /// The Git host's SSH keys, one known_hosts line each (`git.known_hosts`).
    pub git_known_hosts: Vec<String>,
}

/// The EKS AMI release a new repository pins Karpenter to outside dev (awslabs/amazon-eks-ami
/// v20260714: AL2023 images for Kubernetes 1.30 to 1.36).
pub const PINNED_AMI_ALIAS: &str = "al2023@v20260714";

/// Karpenter's AMI alias for an environment of a new repository: Karpenter advises running
/// `@latest` only where a bad image costs nothing, and pinning a tested release elsewhere.
pub fn default_ami_alias(environment: &str) -> &'static str {
    if environment == "dev" {
        "al2023@latest"
    } else {
        PINNED_AMI_ALIAS
    }
}

/// What templates/repo/cellgen.yaml.j2 writes of src/model/platform.rs's settings, by environment.
#[derive(Debug, Clone, Serialize)]
pub struct PlatformContext {
    pub node_ami_releases: Vec<NodePins>,
    pub cilium_versions: Vec<EnvValue>,
    pub karpenter_node_pools: Vec<EnvPool>,
    /// Empty: the section is written as a commented example.
    pub dns_zones: Vec<EnvZones>,
}

#[derive(Debug, Clone, Serialize)]
pub struct NodePins {
    pub environment: String,
    pub pins: Vec<NodePin>,
}

#[derive(Debug, Clone, Serialize)]
pub struct NodePin {
    pub kubernetes_version: String,
    pub release: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct EnvValue {
    pub environment: String,
    pub version: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct EnvPool {
    pub environment: String,
    pub pool: crate::model::platform::NodePool,
}

#[derive(Debug, Clone, Serialize)]
pub struct EnvZones {
    pub environment: String,
    pub zones: Vec<String>,
}

impl PlatformContext {
    /// A new repository's: every environment's node groups pinned to [`crate::model::platform::AMI_RELEASE`]
    /// for the default Kubernetes version, the newest Cilium, the default NodePools, no DNS zones.
    pub fn defaults(environments: &[String], kubernetes_version: &str) -> PlatformContext {
        let release = crate::model::platform::ami_release_version(kubernetes_version)
            .map(str::to_string)
            .unwrap_or_else(|| "latest".into());
        PlatformContext {
            node_ami_releases: environments
                .iter()
                .map(|env| NodePins {
                    environment: env.clone(),
                    pins: vec![NodePin {
                        kubernetes_version: kubernetes_version.to_string(),
                        release: release.clone(),
                    }],
                })
                .collect(),
            cilium_versions: environments
                .iter()
                .map(|env| EnvValue {
                    environment: env.clone(),
                    version: crate::model::platform::CILIUM_VERSION.into(),
                })
                .collect(),
            karpenter_node_pools: environments
                .iter()
                .map(|env| EnvPool {
                    environment: env.clone(),
                    pool: crate::model::platform::default_node_pool(env),
                })
                .collect(),
            dns_zones: Vec::new(),
        }
    }

    /// The same zones in every environment (none: no `dns` section).
    pub fn with_dns_zones(mut self, environments: &[String], zones: &[String]) -> PlatformContext {
        if !zones.is_empty() {
            self.dns_zones = environments
                .iter()
                .map(|env| EnvZones {
                    environment: env.clone(),
                    zones: zones.to_vec(),
                })
                .collect();
        }
        self
    }
}

/// The repository scaffold: cellgen.yaml, the shared layers and the CI workflow, without the
/// files that already exist (`existing`): cellgen never overwrites a file it did not create.
/// Those are returned as kept, and so is a layer directory that exists with anything in it
/// (`existing` is true for a directory only when it has an entry): the whole directory is then
/// the user's and left alone, since a file added to it would change what Flux builds from it.
pub fn repo_files(
    templates: &Templates,
    settings: &RepoSettings,
    existing: impl Fn(&Utf8Path) -> bool,
) -> Result<(Files, Vec<Utf8PathBuf>), CellgenError> {
    let adopted = adopt(templates, settings, existing)?;
    Ok((adopted.files, adopted.kept))
}

/// cellgen.yaml as `init` writes it in a new repository (with sample settings): the seed
/// contract, whose keys every cell writes and cellgen's templates and components read.
pub fn seed_config(templates: &Templates) -> Result<Config, CellgenError> {
    use crate::model::config::{default_environments, default_kubernetes_version};
    let settings = RepoSettings {
        git_url: "ssh://git@example.com/stack.git".into(),
        git_branch: "main".into(),
        environments: default_environments(),
        kubernetes_version: default_kubernetes_version(),
        state_bucket: Some("stack-state".into()),
        state_region: Some("eu-west-2".into()),
        admin_role_arns: vec!["arn:aws:iam::123456789012:role/admin".into()],
        public_endpoint_cidrs: vec!["203.0.113.0/24".into()],
        dns_zones: Vec::new(),
        git_known_hosts: vec![format!(
            "example.com {}",
            crate::model::flux_settings::GITHUB_KNOWN_HOSTS[0]
                .split_once(' ')
                .map_or("", |(_, key)| key)
        )],
    };
    let (repo, _) = repo_files(templates, &settings, |_| false)?;
    let text = repo
        .get(Utf8Path::new(CONFIG_FILE))
        .cloned()
        .unwrap_or_default();
    Config::parse(&text, Utf8Path::new(CONFIG_FILE))
}

/// Why `name` is not a key `key remove` (`removing`) or `key rename` may take, if it is not:
/// `schema` (the contract's number) for both; for removal also the seed contract's keys, which
/// every cell writes and cellgen's own files read by name. (A rename of a seed key is the
/// repository's to make: the records learn it, so `upgrade` and components added later follow.)
pub fn reserved_key(
    templates: &Templates,
    name: &str,
    removing: bool,
) -> Result<Option<String>, CellgenError> {
    if name == SCHEMA_KEY {
        return Ok(Some(format!(
            "`{name}` is the contract's number, which every cell's ConfigMap carries and `cellgen check` compares; cellgen moves it, no key command does"
        )));
    }
    if !removing {
        return Ok(None);
    }
    let seed = seed_config(templates)?;
    Ok(seed.keys.contains_key(name).then(|| {
        let all: Vec<&str> = seed.keys.keys().map(String::as_str).collect();
        format!(
            "`{name}` is one of the seed keys every cell writes ({}): cellgen's shared layers, components and stack templates read them, so without it every cell fails `cellgen check` or its next `cellgen upgrade` (rename it instead, `cellgen key rename`, if the name is what you want to change)",
            all.join(", ")
        )
    }))
}

/// A scaffold file not written because its directory is the user's, with what it would have
/// created and which written files need that.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub path: Utf8PathBuf,
    /// `Kind name` of each object it holds.
    pub objects: Vec<String>,
    /// Written files whose objects go to a namespace it creates.
    pub needed_by: Vec<Utf8PathBuf>,
}

/// [`repo_files`], and the scaffold files left out with a kept directory.
pub struct Adopted {
    pub files: Files,
    pub kept: Vec<Utf8PathBuf>,
    pub skipped: Vec<Skipped>,
}

pub fn adopt(
    templates: &Templates,
    settings: &RepoSettings,
    existing: impl Fn(&Utf8Path) -> bool,
) -> Result<Adopted, CellgenError> {
    #[derive(Serialize)]
    struct AmiAlias<'a> {
        environment: &'a str,
        alias: &'static str,
    }
    #[derive(Serialize)]
    struct Context<'a> {
        #[serde(flatten)]
        settings: &'a RepoSettings,
        #[serde(flatten)]
        platform: PlatformContext,
        cellgen_version: &'static str,
        vpc_cidr_pool: String,
        vpc_prefix_length: u8,
        karpenter_ami_aliases: Vec<AmiAlias<'a>>,
        flux_version: &'static str,
        flux_operator_version: &'static str,
    }
    let context = Context {
        settings,
        platform: PlatformContext::defaults(&settings.environments, &settings.kubernetes_version)
            .with_dns_zones(&settings.environments, &settings.dns_zones),
        cellgen_version: VERSION,
        flux_version: crate::model::flux_settings::FLUX_VERSION,
        flux_operator_version: crate::model::flux_settings::FLUX_OPERATOR_VERSION,
        vpc_cidr_pool: crate::model::config::default_vpc_cidr_pool(),
        vpc_prefix_length: crate::model::config::default_vpc_prefix_length(),
        karpenter_ami_aliases: settings
            .environments
            .iter()
            .map(|env| AmiAlias {
                environment: env,
                alias: default_ami_alias(env),
            })
            .collect(),
    };
    let mut files = Files::new();
    let mut kept: Vec<Utf8PathBuf> = Vec::new();
    let mut left_out: Vec<(Utf8PathBuf, String)> = Vec::new();
    for name in templates.names_under("repo/") {
        let rel = Utf8PathBuf::from(name.trim_start_matches("repo/"));
        let layer_dir = rel
            .parent()
            .filter(|p| !p.as_os_str().is_empty() && !p.starts_with(".github"));
        if let Some(dir) = layer_dir
            && existing(dir)
        {
            if !kept.iter().any(|k| k == dir) {
                kept.push(dir.to_path_buf());
            }
            left_out.push((rel, templates.produce(&name, &context)?));
            continue;
        }
        if existing(&rel) {
            kept.push(rel);
        } else {
            files.insert(rel, templates.produce(&name, &context)?);
        }
    }
    kept.sort();
    let skipped = left_out
        .into_iter()
        .filter(|(path, _)| path.file_name().is_none_or(|n| n != "kustomization.yaml"))
        .map(|(path, text)| skipped_file(path, &text, &files))
        .collect();
    Ok(Adopted {
        files,
        kept,
        skipped,
    })
}

/// The file's documents, for naming its objects: none where it is not YAML (it is only described).
fn documents(text: &str) -> Vec<yaml_serde::Value> {
    crate::ports::yaml::documents(text).unwrap_or_default()
}

fn skipped_file(path: Utf8PathBuf, text: &str, written: &Files) -> Skipped {
    let field = |v: &yaml_serde::Value, a: &str, b: &str| {
        v.get(a)
            .and_then(|x| x.get(b))
            .and_then(|x| x.as_str())
            .unwrap_or_default()
            .to_string()
    };
    let docs = documents(text);
    let objects = docs
        .iter()
        .map(|d| {
            format!(
                "{} {}",
                d.get("kind").and_then(|k| k.as_str()).unwrap_or("object"),
                field(d, "metadata", "name")
            )
        })
        .collect();
    let namespaces: Vec<String> = docs
        .iter()
        .filter(|d| d.get("kind").and_then(|k| k.as_str()) == Some("Namespace"))
        .map(|d| field(d, "metadata", "name"))
        .collect();
    let needed_by = written
        .iter()
        .filter(|(_, text)| {
            documents(text)
                .iter()
                .any(|d| namespaces.contains(&field(d, "metadata", "namespace")))
        })
        .map(|(p, _)| p.clone())
        .collect();
    Skipped {
        path,
        objects,
        needed_by,
    }
}

/// What the name does not say about a cell.
#[derive(Debug, Clone, Serialize)]
pub struct CellInputs {
    pub kubernetes_version: String,
    pub egress_gateway: bool,
    /// The cell's own VPC block (see `cidr`), recorded in its terraform.tfvars.
    pub vpc_cidr: String,
    /// Its state may still hold cellgen 0.2.0's `flux_bootstrap_git.this`: the stack forgets it
    /// (flux-bootstrap-removed.tf) rather than destroy it, which would uninstall Flux.
    pub forget_flux_bootstrap: bool,
}

/// The stack file that forgets a cell's `flux_bootstrap_git` ([`CellInputs::forget_flux_bootstrap`]).
pub use crate::model::names::FLUX_BOOTSTRAP_REMOVED;

#[derive(Serialize)]
struct LayerContext<'a> {
    name: &'a str,
    path: &'a str,
    interval: &'a str,
    wait: bool,
    depends_on: &'a [String],
}

#[derive(Serialize)]
struct DataEntry {
    name: String,
    value: String,
}

#[derive(Serialize)]
struct CellContext<'a> {
    cell: &'a str,
    region: &'a str,
    environment: &'a str,
    environments: &'a [String],
    kubernetes_version: &'a str,
    egress_gateway: bool,
    forget_flux_bootstrap: bool,
    vpc_cidr: &'a str,
    vpc_cidr_pool: &'a str,
    git_url: &'a str,
    git_branch: &'a str,
    state_bucket: Option<&'a str>,
    state_region: Option<&'a str>,
    layers: Vec<LayerContext<'a>>,
    /// Layer names in the order a tear-down deletes them: the reverse of cellgen.yaml's.
    teardown_order: Vec<&'a str>,
    data: Vec<DataEntry>,
    data_width: usize,
    depends_on: Vec<&'static str>,
    cellgen_version: &'static str,
}

/// Identities the base keys name: the ConfigMap is written only after them and after Flux.
const BASE_DEPENDS_ON: &[&str] = &[
    "helm_release.flux_instance",
    "aws_eks_pod_identity_association.app",
];

/// Every file of a new cell: its Flux directory and its Terraform stack.
pub fn cell_files(
    templates: &Templates,
    config: &Config,
    cell: &CellName,
    inputs: &CellInputs,
) -> Result<Files, CellgenError> {
    // The keys this cell writes of the contract's (its components' come with them), and the
    // number of the newest (crate::model::contract).
    let mut data = Vec::new();
    for (key, spec) in config
        .keys
        .iter()
        .filter(|(_, spec)| spec.selects(&cell.name, &cell.environment))
    {
        let value = spec.terraform.clone().ok_or_else(|| CellgenError::MalformedConfig {
            path: CONFIG_FILE.into(),
            line: None,
            message: format!(
                "key `{key}` has no `terraform` expression, so a new cell cannot write it; add e.g. `terraform: module.x.y` under keys.{key}"
            ),
        })?;
        // The same rule as for a flag or a component.yaml: one expression on one line.
        crate::ports::edit::hcl::syntax::check_expression(&value).map_err(|why| {
            CellgenError::MalformedConfig {
                path: CONFIG_FILE.into(),
                line: None,
                message: format!(
                    "keys.{key}.terraform `{}` {why}: write one Terraform expression on one line (no heredoc)",
                    value.escape_debug()
                ),
            }
        })?;
        data.push(DataEntry {
            name: key.clone(),
            value,
        });
    }
    let number = crate::model::contract::cell_number(config, data.iter().map(|d| d.name.as_str()));
    data.insert(
        0,
        DataEntry {
            name: SCHEMA_KEY.into(),
            value: format!("\"{number}\""),
        },
    );
    // The bucket is shared by every cell: its region is a repository fact, never the cell's.
    if config.terraform.state_bucket.is_some() && config.terraform.state_region.is_none() {
        return Err(CellgenError::MalformedConfig {
            path: CONFIG_FILE.into(),
            line: None,
            message: "terraform.state_bucket is set but terraform.state_region is not: the backend needs the bucket's own region (every cell shares the bucket), so add `state_region: <bucket-region>` under `terraform:`".into(),
        });
    }
    check_platform_settings(config, cell, &inputs.kubernetes_version)?;
    let context = CellContext {
        cell: &cell.name,
        region: &cell.region,
        environment: &cell.environment,
        environments: &config.environments,
        kubernetes_version: &inputs.kubernetes_version,
        egress_gateway: inputs.egress_gateway,
        forget_flux_bootstrap: inputs.forget_flux_bootstrap,
        vpc_cidr: &inputs.vpc_cidr,
        vpc_cidr_pool: &config.network.vpc_cidr_pool,
        git_url: &config.git.url,
        git_branch: &config.git.branch,
        state_bucket: config.terraform.state_bucket.as_deref(),
        state_region: config.terraform.state_region.as_deref(),
        teardown_order: config
            .layers
            .iter()
            .rev()
            .map(|l| l.name.as_str())
            .collect(),
        layers: config
            .layers
            .iter()
            .map(|l| LayerContext {
                name: &l.name,
                path: l.path.trim_start_matches("./"),
                interval: &l.interval,
                wait: l.wait,
                depends_on: &l.depends_on,
            })
            .collect(),
        data_width: data.iter().map(|d| d.name.len()).max().unwrap_or(0),
        data,
        depends_on: BASE_DEPENDS_ON.to_vec(),
        cellgen_version: VERSION,
    };

    let mut files = Files::new();
    let flux_dir = cell_flux_dir(&cell.name);
    files.insert(
        flux_dir.join("kustomization.yaml"),
        templates.render("cell/flux/kustomization.yaml", &context)?,
    );
    for layer in &context.layers {
        #[derive(Serialize)]
        struct LayerOnly<'a> {
            layer: &'a LayerContext<'a>,
        }
        files.insert(
            flux_dir.join(format!("{}.yaml", layer.name)),
            templates.render("cell/flux/layer.yaml", LayerOnly { layer })?,
        );
    }
    if inputs.egress_gateway {
        files.insert(
            flux_dir.join("egress-gateway.yaml"),
            templates.render("cell/flux/egress-gateway.yaml", &context)?,
        );
    }
    let tf_dir = cell_terraform_dir(&cell.name);
    for name in templates.names_under("cell/terraform/") {
        let file = name.trim_start_matches("cell/terraform/");
        if (file == "egress.tf" && !inputs.egress_gateway)
            || (file == FLUX_BOOTSTRAP_REMOVED && !inputs.forget_flux_bootstrap)
        {
            continue;
        }
        files.insert(tf_dir.join(file), templates.render(&name, &context)?);
    }
    Ok(files)
}

/// The settings every cell's stack reads from cellgen.yaml at plan time for its environment
/// (src/model/platform.rs): without them `terraform plan` fails, much later, so the cell is refused now.
fn check_platform_settings(
    config: &Config,
    cell: &CellName,
    kubernetes_version: &str,
) -> Result<(), CellgenError> {
    let env = &cell.environment;
    let missing = |setting: String, example: String| CellgenError::InvalidFile {
        path: CONFIG_FILE.into(),
        message: format!(
            "cell {} reads `{setting}` (its Terraform does, when it plans), which cellgen.yaml lacks: add it{example}. `cellgen upgrade` adds the settings a repository made by an older cellgen lacks",
            cell.name
        ),
    };
    let pinned = config
        .node_groups
        .as_ref()
        .and_then(|n| n.pinned(env, kubernetes_version));
    if pinned.is_none() {
        let release = crate::model::platform::ami_release_version(kubernetes_version)
            .unwrap_or("<version>-<date>");
        return Err(missing(
            format!("node_groups.ami_release_version.{env}.\"{kubernetes_version}\""),
            format!(
                " (the node groups' image for Kubernetes {kubernetes_version}: under `node_groups:` `ami_release_version:` `{env}:`, `\"{kubernetes_version}\": {release}`, a release listed at https://github.com/awslabs/amazon-eks-ami/releases)"
            ),
        ));
    }
    if !config
        .cilium
        .as_ref()
        .is_some_and(|c| c.version.contains_key(env.as_str()))
    {
        return Err(missing(
            format!("cilium.version.{env}"),
            format!(
                " (Cilium's chart version: under `cilium:` `version:`, `{env}: {}`)",
                crate::model::platform::CILIUM_VERSION
            ),
        ));
    }
    Ok(())
}
