//! `cellgen diff`: resolves the base commit, renders both sides, prints the comparison.

use std::process::ExitCode;

use anyhow::Result;

use super::Session;
use crate::analysis::diff::{self, format::COMMENT_LIMIT};
use crate::analysis::snapshot::Snapshot;
use crate::cli::{DiffArgs, DiffFormat};
use crate::error::CellgenError;
use crate::model::repo::Repo;
use crate::root::source::git_output;

pub fn run(session: &mut Session, args: DiffArgs) -> Result<ExitCode> {
    let repo = Repo::discover(&session.start)?;
    let (base_name, commit) = match &args.base {
        Some(rev) => (rev.clone(), resolve(&repo, rev)?),
        None => default_base(&repo)?,
    };
    let mode = super::kustomize_mode(args.kustomize);
    let root = repo.root.clone();
    let load_base = || Snapshot::at_commit(&root, &commit);
    let (diff, renderings) = match Snapshot::working(&repo) {
        Ok(head) => diff::compare(&head, load_base, &base_name, &commit, mode)?,
        // The base's error first, as when the base was read before the working tree.
        Err(e) => {
            load_base()?;
            return Err(e.into());
        }
    };
    let output = match args.format {
        DiffFormat::Text => diff.to_text(),
        DiffFormat::Json => diff.to_json(),
        DiffFormat::Markdown => diff.to_markdown(COMMENT_LIMIT),
        DiffFormat::Github => diff.to_github(),
    };
    print!("{output}");
    // Both sides' renderings and build caches are large trees of small allocations and the
    // command ends here: freeing them one by one would only cost time (about 2% of the
    // command); the operating system takes the memory back at exit.
    std::mem::forget(renderings);
    Ok(if args.exit_code && !diff.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn bad_base(reason: String) -> CellgenError {
    CellgenError::InvalidFlag {
        flag: "--base".into(),
        reason,
    }
}

/// The commit `rev` names.
fn resolve(repo: &Repo, rev: &str) -> Result<String, CellgenError> {
    let spec = format!("{rev}^{{commit}}");
    git_output(
        &repo.root,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &spec,
        ],
    )
    .map(|out| String::from_utf8_lossy(&out).trim().to_string())
    .map_err(|_| {
        bad_base(format!(
            "`{rev}` is not a commit of the Git repository at {} (give a branch, tag or commit)",
            repo.root
        ))
    })
}

/// The merge-base of HEAD with the branch Flux syncs from: origin/<branch>, else <branch>.
fn default_base(repo: &Repo) -> Result<(String, String), CellgenError> {
    let branch = &repo.config.git.branch;
    for candidate in [format!("origin/{branch}"), branch.clone()] {
        if resolve(repo, &candidate).is_err() {
            continue;
        }
        let out = git_output(&repo.root, &["merge-base", "HEAD", &candidate]).map_err(|e| {
            bad_base(format!(
                "cannot find where HEAD and {candidate} meet ({e}); give --base REF"
            ))
        })?;
        let commit = String::from_utf8_lossy(&out).trim().to_string();
        return Ok((format!("merge-base of HEAD and {candidate}"), commit));
    }
    Err(bad_base(format!(
        "neither origin/{branch} nor {branch} (git.branch in cellgen.yaml) is a branch of the Git repository at {}: give --base REF",
        repo.root
    )))
}
