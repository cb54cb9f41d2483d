//! `cellgen init`: a new repository's scaffold (the questions and the plan are shared with
//! `new`, in `setup`), or, in an existing one, what a newer scaffold adds.

use camino::Utf8Path;

use anyhow::Result;

use super::Session;
use super::setup::{check_branch, normalise_git_url, plan_scaffold, scaffold_kept};
use crate::cli::{InitArgs, RepoArgs};
use crate::error::CellgenError;
use crate::model::config::{self, CONFIG_FILE};
use crate::model::repo::Repo;
use crate::writer::plan::Plan;

pub fn run(session: &mut Session, args: InitArgs) -> Result<()> {
    if let Some(root) = Repo::find_root(&session.start) {
        return existing_repository(session, &root, &args);
    }
    let mut plan = Plan::new(&session.start, crate::model::repo::read_by_flux);
    let kept = plan_scaffold(session, &args.repo, &mut plan)?;
    // The record `new` starts with the repository, so that the next `upgrade` finds it (and does
    // not report an upgrade that only writes it).
    crate::model::state::track_repository(&mut plan)?;
    super::finish(
        session,
        &plan,
        &scaffold_kept(&kept, plan.root()),
        args.dry_run,
    )?;
    if !args.dry_run {
        crate::say!(
            session.report,
            "\nNext: `cellgen new <region>-<environment>` creates a cell, e.g. `cellgen new eu-west-2-prod`."
        )?;
    }
    Ok(())
}

/// `init` in an existing repository gives it what a newer cellgen's scaffold has and it lacks:
/// the editor schemas in .cellgen/schemas and cellgen.yaml's line pointing at its schema. The
/// Git source flags say where Flux syncs from: cellgen.yaml takes them. A setting flag whose
/// value differs from cellgen.yaml's is refused, naming it: each has consequences cellgen does
/// not decide for every cell at once.
fn existing_repository(session: &mut Session, root: &Utf8Path, args: &InitArgs) -> Result<()> {
    use crate::model::schema::{self, SchemaFile};
    let repo = Repo::open(root)?;
    let config = &repo.config;
    let url = args
        .repo
        .git_url
        .as_deref()
        .map(|u| {
            normalise_git_url(u).map_err(|reason| CellgenError::InvalidFlag {
                flag: "--git-url".into(),
                reason,
            })
        })
        .transpose()?;
    if let Some(branch) = &args.repo.git_branch {
        check_branch(branch)?;
    }
    refuse_other_settings(config, &args.repo)?;
    // The clusters verify the Git host with cellgen.yaml's keys: a URL on another host needs
    // that host's keys there first.
    if let (Some(url), Some(hosts)) = (&url, &config.git.known_hosts)
        && let Some((_, problem)) = crate::model::flux_settings::known_hosts_problem(hosts, url)
    {
        return Err(CellgenError::InvalidFlag {
            flag: "--git-url".into(),
            reason: format!(
                "{problem}; put that host's keys in {CONFIG_FILE}'s git.known_hosts first (`ssh-keyscan <host>`, fingerprints checked against what the host publishes), then run this again. Nothing was written"
            ),
        }
        .into());
    }
    let mut plan = Plan::new(root, crate::model::repo::read_by_flux);
    let moved = crate::ops::git_source::set_git_source(
        &mut plan,
        url.as_deref(),
        args.repo.git_branch.as_deref(),
    )?;
    schema::plan_all(&mut plan)?;
    crate::model::ignore::plan_gitignore(&mut plan)?;
    let text = plan.read(CONFIG_FILE)?.unwrap_or_default();
    if let Some(text) = schema::with_modeline(&text, SchemaFile::Config, Utf8Path::new(CONFIG_FILE))
    {
        plan.write(CONFIG_FILE, text)?;
    }
    if plan.is_empty() {
        crate::say!(
            session.report,
            "{} is already a cellgen repository ({}); nothing to do.",
            root,
            CONFIG_FILE
        )?;
        return Ok(());
    }
    let mut notes = Vec::new();
    if moved.is_empty() {
        crate::say!(
            session.report,
            "{} is already a cellgen repository; adding what it lacks of cellgen's own files (the JSON Schemas editors validate its files with, .cellgen/.gitignore):",
            root
        )?;
    } else {
        crate::say!(
            session.report,
            "{root} is already a cellgen repository; its Git source changes:"
        )?;
        for (field, from, to) in &moved {
            crate::say!(session.report, "  {field}: {from} -> {to}")?;
        }
        let cells = repo.cells()?;
        let mut where_ = Vec::new();
        if !cells.is_empty() {
            where_.push(format!(
                "the terraform.tfvars of {} existing cell(s), whose next `terraform apply` then points Flux at it",
                cells.len()
            ));
        }
        if moved.iter().any(|(field, _, _)| *field == "git.branch") {
            where_.push("the CI workflow's branch (.github/workflows/cellgen.yaml)".into());
        }
        if !where_.is_empty() {
            notes.push(format!(
                "\nNew cells take it; `cellgen upgrade` carries it to {}.",
                where_.join(", and to ")
            ));
        }
    }
    super::precheck::refuse_new_errors(&repo, &plan)?;
    super::finish_with_notes(session, &plan, &[], args.dry_run, &notes)
}

/// The settings flags other than the Git source, in an existing repository: the same value as
/// cellgen.yaml's is nothing to do; another is refused, naming the flag and where to change it.
fn refuse_other_settings(config: &config::Config, args: &RepoArgs) -> Result<(), CellgenError> {
    let differs = |given: Option<Vec<String>>, current: Vec<String>| {
        given.is_some_and(|g| {
            let g: Vec<String> = g
                .into_iter()
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .collect();
            g != current
        })
    };
    let known_hosts_given = args.git_known_hosts_file.is_some();
    let checks = [
        (
            "--git-known-hosts-file",
            known_hosts_given,
            "git.known_hosts",
            "the clusters verify the Git host with these keys: paste the host's known_hosts lines there, fingerprints checked",
        ),
        (
            "--state-bucket",
            differs(
                args.state_bucket.clone().map(|b| vec![b]),
                config.terraform.state_bucket.clone().into_iter().collect(),
            ),
            "terraform.state_bucket",
            "every cell's backend.tf names the bucket its state is in, so moving it is a state migration (`terraform init -migrate-state` in each cell) first",
        ),
        (
            "--state-region",
            differs(
                args.state_region.clone().map(|r| vec![r]),
                config.terraform.state_region.clone().into_iter().collect(),
            ),
            "terraform.state_region",
            "it is the bucket's own region, which every cell's backend.tf names",
        ),
        (
            "--admin-role-arn",
            differs(
                args.admin_role_arns.clone(),
                config.cluster_access.admin_role_arns.clone(),
            ),
            "cluster_access.admin_role_arns",
            "every cell's settings.tf reads the list at plan time; add or remove a role there on purpose rather than replace the list with the flag's",
        ),
        (
            "--public-endpoint-cidrs",
            differs(
                args.public_endpoint_cidrs.clone(),
                config.cluster_access.public_endpoint_cidrs.clone(),
            ),
            "cluster_access.public_endpoint_cidrs",
            "every cell's settings.tf reads the list at plan time",
        ),
    ];
    match checks.iter().find(|(_, differs, _, _)| *differs) {
        Some((flag, _, field, why)) => Err(CellgenError::InvalidFlag {
            flag: (*flag).into(),
            reason: format!(
                "{CONFIG_FILE} already exists, and init changes only its Git source (--git-url, --git-branch) there: change `{field}` in it yourself ({why}). Nothing was written"
            ),
        }),
        None => Ok(()),
    }
}
