use anyhow::Result;

use super::{Session, init};
use crate::catalog::Catalog;
use crate::cell::CellName;
use crate::cli::NewArgs;
use crate::components::cell_components;
use crate::config::{self, CONFIG_FILE, Config};
use crate::error::CellgenError;
use crate::plan::Plan;
use crate::repo::{Repo, cell_flux_dir, cell_terraform_dir};
use crate::scaffold::{self, CellInputs};
use crate::state;
use crate::templates::Templates;

pub fn run(session: &mut Session, args: NewArgs) -> Result<()> {
    let (mut plan, config, scaffolded) = match Repo::find_root(&session.start) {
        Some(root) => {
            let repo = Repo::open(&root)?;
            for (flag, given) in [
                ("--git-url", args.repo.git_url.is_some()),
                ("--git-branch", args.repo.git_branch.is_some()),
                ("--state-bucket", args.repo.state_bucket.is_some()),
            ] {
                if given {
                    eprintln!(
                        "warning: {flag} is ignored: {} already exists; edit it to change repository settings",
                        root.join(CONFIG_FILE).display()
                    );
                }
            }
            (Plan::new(&root), repo.config, false)
        }
        None => {
            // The scaffold's environments are the defaults: check the name before asking anything.
            CellName::parse(&args.name, &config::default_environments())?;
            let mut plan = Plan::new(&session.start);
            init::plan_scaffold(session, &args.repo, &mut plan)?;
            let text = plan.read(CONFIG_FILE)?.unwrap_or_default();
            let config = Config::parse(&text, &session.start.join(CONFIG_FILE))?;
            (plan, config, true)
        }
    };

    if scaffolded && !args.dry_run {
        eprintln!(
            "No cellgen.yaml in {} or above: creating the repository scaffold there first (what `cellgen init` does).",
            plan.root().display()
        );
    }
    let cell = CellName::parse(&args.name, &config.environments)?;
    let existing = [cell_flux_dir(&cell.name), cell_terraform_dir(&cell.name)]
        .into_iter()
        .find(|dir| plan.root().join(dir).exists());
    if let Some(dir) = &existing
        && !args.force
    {
        return Err(CellgenError::CellExists {
            name: cell.name.clone(),
            path: dir.clone(),
        }
        .into());
    }

    let inputs = CellInputs {
        kubernetes_version: resolve_kubernetes_version(session, &args, &config)?,
        egress_gateway: resolve_egress(session, &args)?,
    };
    let templates = Templates::new();
    let catalog = Catalog::load(&templates, &plan)?;
    // A regenerated cell keeps the components it runs; a new one gets the chosen ones.
    let mut wanted: Vec<String> = cell_components(&plan, &config, &cell.name)?
        .into_iter()
        .collect();
    for name in resolve_components(session, &args, &catalog)? {
        catalog.get(&name)?;
        if !wanted.contains(&name) {
            wanted.push(name);
        }
    }
    let files = scaffold::cell_files(&templates, &config, &cell, &inputs)?;
    let outcome = state::plan_generated(&mut plan, &cell.name, files, args.force)?;
    for name in &wanted {
        super::component::add_with_consent(
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
    crate::schema::refresh(&mut plan)?;

    super::finish(&plan, args.dry_run)?;
    for kept in &outcome.kept {
        println!(
            "  {:>7}  {} (you changed it; delete it and run again to regenerate)",
            "kept",
            kept.display()
        );
    }
    if !args.dry_run && existing.is_none() {
        print_next_steps(
            &cell.name,
            config.terraform.state_bucket.is_none(),
            &config.git.branch,
        );
    }
    Ok(())
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
) -> Result<String> {
    let default = &config.defaults.kubernetes_version;
    let version = match &args.kubernetes_version {
        Some(v) => v.clone(),
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
    Ok(version)
}

fn resolve_egress(session: &mut Session, args: &NewArgs) -> Result<bool> {
    if args.egress_gateway || args.no_egress_gateway {
        return Ok(args.egress_gateway);
    }
    if session.prompter.interactive() {
        return session.prompter.confirm(
            "Does the cell have an egress gateway (stable egress IPs, Cilium)?",
            false,
        );
    }
    Ok(false)
}

fn print_next_steps(cell: &str, needs_bucket: bool, branch: &str) {
    let backend = if needs_bucket {
        " -backend-config=\"bucket=<state-bucket>\""
    } else {
        ""
    };
    println!(
        "\nCell {cell} is ready. Next steps:\n  \
         1. Review and commit: git add cells/{cell} terraform/cells/{cell} .cellgen && git commit -m \"Add cell {cell}\"\n  \
         2. Open a pull request; CI runs `cellgen check` on it. Merge to {branch}: Flux syncs cells/{cell} from there.\n  \
         3. Create the cell:\n       \
            cd terraform/cells/{cell}\n       \
            terraform init{backend}\n       \
            export TF_VAR_flux_git_ssh_private_key=\"$(cat <deploy-key-file>)\"\n       \
            terraform apply"
    );
}
