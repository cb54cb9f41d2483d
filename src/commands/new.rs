use camino::Utf8Path;

use anyhow::Result;

use super::{Session, setup};
use crate::cli::NewArgs;
use crate::error::CellgenError;
use crate::model::catalog::Catalog;
use crate::model::cell::CellName;
use crate::model::cell_cidr::CellCidr;
use crate::model::cidr::{self, Cidr};
use crate::model::config::{self, CONFIG_FILE, Config};
use crate::model::repo::{Repo, cell_flux_dir, cell_terraform_dir};
use crate::model::scaffold::{self, CellInputs};
use crate::model::state;
use crate::ops::components;
use crate::ops::regenerate;
use crate::ports::templates::Templates;
use crate::writer::plan::Plan;

pub fn run(session: &mut Session, args: NewArgs) -> Result<()> {
    let (mut plan, config, kept_scaffold, existing_repo) = match Repo::find_root(&session.start) {
        Some(root) => {
            let repo = Repo::open(&root)?;
            for (flag, given) in [
                ("--git-url", args.repo.git_url.is_some()),
                ("--git-branch", args.repo.git_branch.is_some()),
                (
                    "--git-known-hosts-file",
                    args.repo.git_known_hosts_file.is_some(),
                ),
                ("--state-bucket", args.repo.state_bucket.is_some()),
                ("--state-region", args.repo.state_region.is_some()),
                ("--admin-role-arn", args.repo.admin_role_arns.is_some()),
                (
                    "--public-endpoint-cidrs",
                    args.repo.public_endpoint_cidrs.is_some(),
                ),
                ("--dns-zones", args.repo.dns_zones.is_some()),
            ] {
                if given {
                    session.warn(format!(
                        "{flag} is ignored: {} already exists; edit it to change repository settings",
                        root.join(CONFIG_FILE)
                    ));
                }
            }
            if root != session.start && !args.dry_run {
                crate::errln!(
                    "Using the cellgen repository at {} (its cellgen.yaml is the nearest above {}).",
                    root,
                    session.start
                );
            }
            // Every cell's flux.tf reads these (settings.tf); cellgen.yaml before 0.3.0 has neither.
            if repo.config.flux.is_none() || repo.config.git.known_hosts.is_none() {
                return Err(CellgenError::MalformedConfig {
                    path: root.join(CONFIG_FILE),
                    line: None,
                    message: "has no `flux:` section or no `git.known_hosts` (it was written by cellgen 0.2.0 or older), and a cell's flux.tf reads both: run `cellgen upgrade` first, which adds them and moves the existing cells to the Flux Operator".into(),
                }
                .into());
            }
            (
                Plan::new(&root, crate::model::repo::read_by_flux),
                repo.config.clone(),
                None,
                Some(repo),
            )
        }
        None => {
            // The scaffold's environments are the defaults: check the name before asking anything.
            CellName::parse(&args.name, &config::default_environments())?;
            let mut plan = Plan::new(&session.start, crate::model::repo::read_by_flux);
            let kept = setup::plan_scaffold(session, &args.repo, &mut plan)?;
            let text = plan.read(CONFIG_FILE)?.unwrap_or_default();
            let config = Config::parse(&text, Utf8Path::new(CONFIG_FILE))?;
            (plan, config, Some(kept), None)
        }
    };

    if kept_scaffold.is_some() && !args.dry_run {
        crate::errln!(
            "No cellgen.yaml in {} or above: creating the repository scaffold there first (what `cellgen init` does).",
            plan.root()
        );
    }
    let cell = CellName::parse(&args.name, &config.environments)?;
    let existing = [cell_flux_dir(&cell.name), cell_terraform_dir(&cell.name)]
        .into_iter()
        .find(|dir| crate::root::disk::exists(plan.root().join(dir)));
    if let Some(dir) = &existing
        && !args.force
    {
        return Err(CellgenError::CellExists {
            name: cell.name.clone(),
            path: dir.to_path_buf(),
        }
        .into());
    }

    // What the cell already is wins over defaults and questions; flags win over both.
    let known = crate::model::inputs::existing_inputs(&plan, &cell.name)?;
    let inputs = CellInputs {
        kubernetes_version: resolve_kubernetes_version(
            session,
            &args,
            &config,
            known.kubernetes_version.as_deref(),
        )?,
        egress_gateway: resolve_egress(session, &args, known.egress_gateway)?,
        vpc_cidr: resolve_vpc_cidr(session, &args, &config, plan.root(), &cell.name)?,
        forget_flux_bootstrap: known.forget_flux_bootstrap,
    };
    let config = pin_node_image(
        &mut plan,
        config,
        &cell,
        &inputs.kubernetes_version,
        args.dry_run,
    )?;
    let templates = Templates::new();
    let catalog = Catalog::load(&templates, &plan)?;
    let had = regenerate::existing_components(&plan, &config, &catalog, &cell.name)?;
    let mut wanted: Vec<String> = Vec::new();
    for name in resolve_components(session, &args, &catalog)? {
        catalog.get(&name)?;
        if !had.contains(&name) && !wanted.contains(&name) {
            wanted.push(name);
        }
    }

    // The cell as cellgen generates it now, with the components it has, in a copy of the plan;
    // then each file is written only where the user has not changed it.
    let mut desired = plan.clone();
    for (path, contents) in scaffold::cell_files(&templates, &config, &cell, &inputs)? {
        desired.write(path, contents)?;
    }
    // The components' files as cellgen writes them now: the ones on disk are compared with
    // these below (kept when the user changed them), never refused here.
    for name in &had {
        let tf = cell_terraform_dir(&cell.name).join(format!("{name}.tf"));
        if desired.exists(&tf) {
            desired.delete(tf)?;
        }
    }
    for name in &had {
        components::add(
            &mut desired,
            &templates,
            &catalog,
            &cell,
            name,
            args.with_requirements,
        )?;
    }
    let mut components: Vec<String> = had.clone();
    components.sort();
    let recorded = state::Inputs {
        kubernetes_version: inputs.kubernetes_version.clone(),
        egress_gateway: inputs.egress_gateway,
        vpc_cidr: inputs.vpc_cidr.clone(),
        components,
    };
    let outcome = regenerate::plan_cell_files(&mut plan, &cell.name, &desired, recorded)?;
    // Components asked for that the cell does not have yet: added as `add-component` would.
    for name in &wanted {
        super::add_with_consent(
            session,
            &mut plan,
            &templates,
            &catalog,
            &cell,
            name,
            args.with_requirements,
        )?;
    }
    state::track_all_edits(&mut plan, &cell.name)?;
    crate::model::schema::refresh(&mut plan)?;
    crate::model::ignore::plan_gitignore(&mut plan)?;

    let mut kept = match &kept_scaffold {
        Some(scaffold) => setup::scaffold_kept(scaffold, plan.root()),
        None => Vec::new(),
    };
    kept.extend(super::Kept::all(
        &outcome.kept,
        "you changed it; delete it and run again to regenerate",
        "you changed it: the new components were added to it, the rest was not regenerated",
    ));
    kept.extend(outcome.ignored.iter().map(|(path, why)| super::Kept {
        word: "kept",
        path: path.clone(),
        shown: path.to_string(),
        why: why.clone(),
        edited: why.clone(),
    }));
    // Only an existing repository's hand edits (its contract, a shared layer) can make the new
    // cell fail `check`; a fresh scaffold is cellgen's own output, which the tests check whole.
    if let Some(repo) = &existing_repo {
        super::precheck::refuse_new_errors(repo, &plan)?;
    }
    super::finish(session, &plan, &kept, args.dry_run)?;
    if existing.is_some() && !wanted.is_empty() && !args.dry_run {
        crate::say!(
            session.report,
            "\nAdded {} to cell {}.",
            wanted.join(", "),
            cell.name
        )?;
    }
    if !args.dry_run && existing.is_none() {
        let here = relative_to_start(&session.start, plan.root());
        print_next_steps(
            session,
            &cell.name,
            &here,
            &git_add_paths(&plan)
                .into_iter()
                .map(|p| format!("{here}{p}"))
                .collect::<Vec<_>>(),
            config.terraform.state_bucket.is_none(),
            &config.git.branch,
        )?;
    }
    Ok(())
}

/// A cell of a Kubernetes version its environment pins no node image for: cellgen.yaml gains the
/// pin of the amazon-eks-ami release cellgen knows (a line the pull request shows), so a new
/// version, or a cell's upgrade, is one command. Without a `node_groups` section, or with a
/// layout cellgen does not edit, the cell is refused later (scaffold), naming what to add.
fn pin_node_image(
    plan: &mut Plan,
    config: Config,
    cell: &CellName,
    version: &str,
    dry_run: bool,
) -> Result<Config> {
    let Some(node_groups) = &config.node_groups else {
        return Ok(config);
    };
    if node_groups.pinned(&cell.environment, version).is_some() {
        return Ok(config);
    }
    let Some(release) = crate::model::platform::ami_release_version(version) else {
        return Ok(config);
    };
    let text = plan.read(CONFIG_FILE)?.unwrap_or_default();
    let Some(edited) = crate::model::platform::NodeGroupSettings::add_pin(
        &text,
        &cell.environment,
        version,
        release,
    ) else {
        return Ok(config);
    };
    let parsed = Config::parse(&edited, Utf8Path::new(CONFIG_FILE))?;
    if parsed
        .node_groups
        .as_ref()
        .and_then(|n| n.pinned(&cell.environment, version))
        != Some(release)
    {
        return Ok(config);
    }
    plan.write(CONFIG_FILE, edited)?;
    if !dry_run {
        crate::errln!(
            "cellgen.yaml: node_groups.ami_release_version.{}.\"{version}\" is {release} (amazon-eks-ami {}), the node image of the {} cells on Kubernetes {version}",
            cell.environment,
            crate::model::platform::AMI_RELEASE,
            cell.environment
        );
    }
    Ok(parsed)
}

/// The cell's VPC block: `--vpc-cidr`, else the block it already records (`--force` keeps it),
/// else the lowest free block of the pool. It may not overlap another cell's: cells are routed
/// to each other.
fn resolve_vpc_cidr(
    session: &mut Session,
    args: &NewArgs,
    config: &Config,
    root: &Utf8Path,
    cell: &str,
) -> Result<String> {
    // A path that is no directory holds no cell (writing there fails later, naming it).
    let mut names = crate::model::repo::list_dirs(&root.join(crate::model::repo::CELLS_DIR))
        .unwrap_or_default();
    names.extend(
        crate::model::repo::list_dirs(&root.join(crate::model::repo::TERRAFORM_CELLS_DIR))
            .unwrap_or_default(),
    );
    names.sort();
    names.dedup();
    names.retain(|n| n != cell);
    let others = crate::model::cell_cidr::recorded(root, &names);
    for unreadable in others.iter().filter(|o| o.cidr.is_err()) {
        session.warn(format!(
            "cannot tell the VPC block of cell `{}` ({}): {}",
            unreadable.cell,
            location(unreadable),
            unreadable.cidr.as_ref().err().map_or("", String::as_str)
        ));
    }
    let taken: Vec<(&CellCidr, Cidr)> = others
        .iter()
        .filter_map(|o| o.cidr.as_ref().ok().map(|c| (o, *c)))
        .collect();
    let pool = Cidr::parse(&config.network.vpc_cidr_pool).map_err(|reason| {
        CellgenError::MalformedConfig {
            path: CONFIG_FILE.into(),
            line: None,
            message: format!("network.vpc_cidr_pool: {reason}"),
        }
    })?;
    let chosen = match &args.vpc_cidr {
        Some(text) => {
            let invalid = |reason: String| CellgenError::InvalidFlag {
                flag: "--vpc-cidr".into(),
                reason,
            };
            let block = Cidr::parse(text).map_err(invalid)?;
            if !config::VPC_PREFIX_LENGTHS.contains(&block.prefix()) {
                return Err(invalid(format!(
                    "{block} is a /{}; a cell's VPC is a /{} to /{} (network.tf splits it into subnets, and a /20 would give public subnets of /28, smaller than the /27 an ALB needs)",
                    block.prefix(),
                    config::VPC_PREFIX_LENGTHS.start(),
                    config::VPC_PREFIX_LENGTHS.end()
                ))
                .into());
            }
            if let Some((other, theirs)) = taken.iter().find(|(_, c)| c.overlaps(&block)) {
                let free = cidr::next_free(
                    pool,
                    config.network.vpc_prefix_length,
                    &taken.iter().map(|(_, c)| *c).collect::<Vec<_>>(),
                );
                return Err(invalid(format!(
                    "{block} overlaps {theirs}, the VPC of cell `{}` ({}); cells are routed to each other, so give this one a free block{}",
                    other.cell,
                    location(other),
                    free.map(|f| format!(", e.g. {f}")).unwrap_or_default()
                ))
                .into());
            }
            block
        }
        // A regenerated cell keeps its block even if it overlaps: a new block would replace the
        // cell's VPC at the next apply. `check` reports the overlap.
        None => match crate::model::cell_cidr::recorded_for(root, cell).and_then(|own| own.cidr.ok()) {
            Some(own) => {
                if let Some((other, theirs)) = taken.iter().find(|(_, c)| c.overlaps(&own)) {
                    session.warn(format!(
                        "cell `{cell}` keeps its VPC block {own}, which overlaps {theirs} of cell `{}` ({}); `cellgen check` reports it until one of them moves",
                        other.cell,
                        location(other)
                    ));
                }
                own
            }
            None => cidr::next_free(
                pool,
                config.network.vpc_prefix_length,
                &taken.iter().map(|(_, c)| *c).collect::<Vec<_>>(),
            )
            .ok_or_else(|| CellgenError::MalformedConfig {
                path: CONFIG_FILE.into(),
                line: None,
                message: format!(
                    "network.vpc_cidr_pool {pool} has no free /{} left for cell `{cell}` ({} cells take blocks of it): widen the pool, or pass --vpc-cidr",
                    config.network.vpc_prefix_length,
                    taken.len()
                ),
            })?,
        },
    };
    Ok(chosen.to_string())
}

fn location(recorded: &CellCidr) -> String {
    match recorded.line {
        Some(line) => format!("{}:{line}", recorded.file),
        None => recorded.file.to_string(),
    }
}

/// What this run created or changed, as `git add` arguments: directories that cellgen owns as a
/// whole (a cell's, a component's, a shared layer's) once, other files by name.
fn git_add_paths(plan: &Plan) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    for (_, path) in plan.summary() {
        let parts: Vec<String> = path.components().map(|c| c.as_str().to_owned()).collect();
        let entry = match parts.as_slice() {
            [top, _, ..]
                if matches!(
                    top.as_str(),
                    "infrastructure" | "apps" | ".github" | crate::model::names::CELLGEN_DIR
                ) =>
            {
                top.clone()
            }
            [dir, name, _, ..] if dir == "components" || dir == crate::model::repo::CELLS_DIR => {
                format!("{dir}/{name}")
            }
            [t, c, cell, _, ..] if t == "terraform" && c == "cells" => {
                format!("terraform/cells/{cell}")
            }
            _ => path.to_string(),
        };
        if !paths.contains(&entry) {
            paths.push(entry);
        }
    }
    paths
}

fn resolve_components(
    session: &mut Session,
    args: &NewArgs,
    catalog: &Catalog,
) -> Result<Vec<String>> {
    if let Some(names) = &args.components {
        return Ok(names
            .iter()
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty())
            .collect());
    }
    if !session.prompter.interactive() || catalog.components.is_empty() {
        return Ok(Vec::new());
    }
    let names = catalog.names();
    let items: Vec<String> = catalog
        .components
        .values()
        .map(|c| format!("{:<30} {}", c.name, c.spec.description))
        .collect();
    let chosen = session
        .prompter
        .multi_select("Optional components", &items)?;
    Ok(chosen.into_iter().map(|i| names[i].clone()).collect())
}

fn resolve_kubernetes_version(
    session: &mut Session,
    args: &NewArgs,
    config: &Config,
    known: Option<&str>,
) -> Result<String> {
    let default = &config.defaults.kubernetes_version;
    let version = match &args.kubernetes_version {
        Some(v) => v.clone(),
        None if known.is_some() => known.unwrap_or_default().to_string(),
        None if session.prompter.interactive() => session
            .prompter
            .input("Kubernetes version", Some(default))?,
        None => default.clone(),
    };
    let valid = version.split_once('.').is_some_and(|(major, minor)| {
        major == "1" && !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit())
    });
    if !valid {
        return Err(CellgenError::InvalidFlag {
            flag: "--kubernetes-version".into(),
            reason: format!("`{version}` is not an EKS version; use major.minor, e.g. {default}"),
        }
        .into());
    }
    // A version the cell already runs stays (a cluster is never downgraded, and EKS moves one
    // past its support itself); a new choice must be one EKS creates clusters of.
    if known != Some(version.as_str())
        && let Some(problem) = crate::model::platform::kubernetes_version_problem(&version)
    {
        let from_default = args.kubernetes_version.is_none() && version == *default;
        return Err(CellgenError::InvalidFlag {
            flag: "--kubernetes-version".into(),
            reason: if from_default {
                format!(
                    "{problem}. It is defaults.kubernetes_version in cellgen.yaml: change that, or pass --kubernetes-version"
                )
            } else {
                format!("{problem}. Pass one of them")
            },
        }
        .into());
    }
    if let Some(warning) = known.and_then(|was| version_step_warning(was, &version)) {
        session.warn(warning);
    }
    Ok(version)
}

/// EKS moves a control plane up one minor version per update and never down, so a running cell
/// cannot take a `--force --kubernetes-version` that skips or goes back (one not applied yet can).
fn version_step_warning(was: &str, now: &str) -> Option<String> {
    let minor = |v: &str| v.split_once('.').and_then(|(_, m)| m.parse::<u32>().ok());
    let (old, new) = (minor(was)?, minor(now)?);
    if new < old {
        Some(format!(
            "Kubernetes {was} -> {now} goes back: EKS never downgrades a cluster, so `terraform apply` fails on a cell that runs {was} (a cell not applied yet can take it)"
        ))
    } else if new > old + 1 {
        Some(format!(
            "Kubernetes {was} -> {now} skips {}: EKS updates a cluster one minor version at a time, so a cell that runs {was} takes 1.{} first (apply it, then run this again)",
            if new == old + 2 {
                "a minor version"
            } else {
                "minor versions"
            },
            old + 1
        ))
    } else {
        None
    }
}

fn resolve_egress(session: &mut Session, args: &NewArgs, known: Option<bool>) -> Result<bool> {
    if args.egress_gateway || args.no_egress_gateway {
        return Ok(args.egress_gateway);
    }
    if let Some(known) = known {
        return Ok(known);
    }
    if session.prompter.interactive() {
        return session.prompter.confirm(
            "Does the cell have an egress gateway (stable egress IPs, Cilium)?",
            false,
        );
    }
    Ok(false)
}

/// The repository root as a prefix of paths typed in `start` (where cellgen was run, or `-C`):
/// empty at the root, `../../` two levels below it. The next steps are pasted into a shell
/// there, so repository paths are printed relative to it.
fn relative_to_start(start: &Utf8Path, root: &Utf8Path) -> String {
    match start.strip_prefix(root) {
        Ok(below) => "../".repeat(below.components().count()),
        // -C elsewhere, or a path cellgen cannot relate: absolute paths work from anywhere.
        Err(_) => format!("{root}/"),
    }
}

fn print_next_steps(
    session: &mut Session,
    cell: &str,
    here: &str,
    add: &[String],
    needs_bucket: bool,
    branch: &str,
) -> Result<(), crate::error::CellgenError> {
    let backend = if needs_bucket {
        " -backend-config=\"bucket=<state-bucket>\" -backend-config=\"region=<bucket-region>\""
    } else {
        ""
    };
    // Paths to paste into a shell: one quoting function for every printed word.
    let add = crate::ports::shell::command(add);
    let stack = crate::ports::shell::command(&[format!("{here}terraform/cells/{cell}")]);
    crate::say!(
        session.report,
        "\nCell {cell} is ready. Next steps:\n  \
         1. Review and commit: git add {add} && git commit -m \"Add cell {cell}\"\n  \
         2. Open a pull request; its workflow (.github/workflows/cellgen.yaml) runs `cellgen check` with the released cellgen, once the repository variable CELLGEN_RELEASES names the GitHub repository that publishes it (it fails until then). Merge to {branch}: Flux syncs cells/{cell} from there.\n  \
         3. Flux reads the repository with a deploy key WITHOUT write access (once per repository):\n       \
            ssh-keygen -t ed25519 -N '' -C flux-read-only -f flux-read-only\n       \
            then add flux-read-only.pub to the repository's deploy keys, \"Allow write access\" left off.\n  \
         4. Create the cell, as a role listed in cluster_access.admin_role_arns of cellgen.yaml:\n       \
            cd {stack}\n       \
            terraform init{backend}\n       \
            export TF_VAR_flux_git_ssh_private_key=\"$(cat <path-to>/flux-read-only)\"\n       \
            terraform apply"
    )
}
