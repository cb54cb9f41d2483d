//! What `init` and `new` share: the questions a new repository's settings take (each a flag
//! too) and the scaffold planned from them.

use camino::Utf8Path;

use anyhow::Result;

use super::Session;
use crate::cli::RepoArgs;
use crate::error::CellgenError;
use crate::model::config;
use crate::model::scaffold::{self, RepoSettings};
use crate::ports::templates::Templates;
use crate::writer::plan::Plan;

/// Adds the repository scaffold to `plan`; returns the scaffold paths that already exist, which
/// are left as they are.
pub fn plan_scaffold(session: &mut Session, args: &RepoArgs, plan: &mut Plan) -> Result<Kept> {
    let root = plan.root().to_path_buf();
    let git_url = resolve_git_url(session, args, &root)?;
    // Flux syncs the branch this repository works on: `master` after a plain `git init` on many
    // machines, so the current branch rather than a fixed `main`.
    let git_branch = args
        .git_branch
        .clone()
        .or_else(|| current_branch(&root))
        .unwrap_or_else(|| "main".into());
    check_branch(&git_branch)?;
    if let Some(bucket) = &args.state_bucket {
        validate_bucket(bucket)?;
    }
    let git_known_hosts = resolve_known_hosts(session, args, &git_url)?;
    let state_region = resolve_state_region(session, args)?;
    let admin_role_arns = resolve_admin_roles(session, args)?;
    let public_endpoint_cidrs = resolve_public_endpoint_cidrs(session, args)?;
    let dns_zones = resolve_dns_zones(session, args)?;
    let settings = RepoSettings {
        git_url,
        git_branch,
        environments: config::default_environments(),
        kubernetes_version: config::default_kubernetes_version(),
        state_bucket: args.state_bucket.clone(),
        state_region,
        admin_role_arns,
        public_endpoint_cidrs,
        dns_zones,
        git_known_hosts,
    };
    if settings.admin_role_arns.is_empty() {
        if !args.allow_no_admin {
            return Err(CellgenError::MissingInput {
                what: "a cluster admin role (cellgen.yaml's cluster_access.admin_role_arns: a cell's first `terraform apply` fails without one, since nobody, not even whoever applies, gets access otherwise)".into(),
                flag: "--admin-role-arn arn:aws:iam::<account>:role/<name> (the role you and CI apply with; `aws sts get-caller-identity` names yours), or --allow-no-admin to add it to cellgen.yaml later".into(),
            }
            .into());
        }
        session.warn(
            "cellgen.yaml names no cluster admin role (--allow-no-admin): add cluster_access.admin_role_arns before a cell's first `terraform apply`, which fails without one",
        );
    }
    // A layer directory is the repository's own (taken whole, nothing added) when it has a
    // kustomization file or a file cellgen's scaffold does not have: adding files to it would
    // change what Flux builds. One with only some of the scaffold's files is completed around them.
    let templates = Templates::new();
    let scaffold_files: Vec<String> = templates
        .names_under("repo/")
        .into_iter()
        .map(|n| n.trim_start_matches("repo/").to_string())
        .collect();
    let users_dir = |rel: &Utf8Path| -> bool {
        let Ok(entries) = crate::root::disk::read_dir(root.join(rel)) else {
            return true;
        };
        entries.filter_map(Result::ok).any(|entry| {
            // A name that is not UTF-8 is none of the scaffold's: the directory is the user's.
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                return true;
            };
            ["kustomization.yaml", "kustomization.yml", "Kustomization"].contains(&name.as_str())
                || !scaffold_files.contains(&rel.join(&name).into_string())
        })
    };
    let adopted =
        scaffold::adopt(
            &templates,
            &settings,
            |rel| match crate::root::disk::symlink_metadata(root.join(rel)) {
                Ok(meta) if meta.is_dir() => users_dir(rel),
                Ok(_) => true,
                Err(_) => false,
            },
        )?;
    for (path, contents) in adopted.files {
        plan.write(path, contents)?;
    }
    crate::model::schema::plan_all(plan)?;
    crate::model::ignore::plan_gitignore(plan)?;
    Ok(Kept {
        kept: adopted.kept,
        skipped: adopted.skipped,
    })
}

/// What the scaffold found already there and left alone.
pub struct Kept {
    /// Files, and directories taken whole (a shared layer the repository had).
    pub kept: Vec<camino::Utf8PathBuf>,
    /// Scaffold files not created because their directory was kept.
    pub skipped: Vec<scaffold::Skipped>,
}

/// Why a scaffold file that was there already is kept: cellgen did not create it, so it does
/// not replace it.
pub const ALREADY_THERE: &str =
    "it was already there; cellgen does not replace a file it did not create";

/// Scaffold paths that were there already, for the command's report: cellgen did not create
/// them, so it does not replace them (nor add files to a directory that was there); and what it
/// did not create for that.
pub fn scaffold_kept(kept: &Kept, root: &Utf8Path) -> Vec<super::Kept> {
    let mut out = Vec::new();
    for path in &kept.kept {
        let dir = crate::root::disk::is_dir(root.join(path));
        let why = if dir {
            "it was already there: cellgen adds no file to it, since that would change what Flux builds from it"
        } else {
            ALREADY_THERE
        };
        out.push(super::Kept {
            word: "kept",
            path: path.clone(),
            shown: format!("{}{}", path, if dir { "/" } else { "" }),
            why: why.to_string(),
            edited: why.to_string(),
        });
    }
    for skipped in &kept.skipped {
        let needed = if skipped.needed_by.is_empty() {
            String::new()
        } else {
            format!(
                ", which {} need{}",
                skipped
                    .needed_by
                    .iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                if skipped.needed_by.len() == 1 {
                    "s"
                } else {
                    ""
                }
            )
        };
        let why = format!(
            "not created: {}{needed}; create that in your layer (`cellgen init --dry-run` in an empty directory prints cellgen's version), or `cellgen check` reports what is missing",
            skipped.objects.join(", ")
        );
        out.push(super::Kept {
            word: "skipped",
            path: skipped.path.clone(),
            shown: skipped.path.to_string(),
            why: why.clone(),
            edited: why,
        });
    }
    out
}

pub fn check_branch(branch: &str) -> Result<(), CellgenError> {
    if branch.is_empty() || branch.contains(char::is_whitespace) {
        return Err(CellgenError::InvalidFlag {
            flag: "--git-branch".into(),
            reason: format!("`{branch}` is not a branch name"),
        });
    }
    Ok(())
}

/// The Git URL Flux syncs from, and a warning when it is not the URL given: an https URL becomes
/// the ssh:// URL of the same repository (Flux reads it with an SSH deploy key), which the user
/// must know, since the deploy key then has to be added to that repository.
fn resolve_git_url(session: &mut Session, args: &RepoArgs, root: &Utf8Path) -> Result<String> {
    let url = ask_git_url(session, args, root)?;
    let given = args.git_url.as_deref().map(str::trim);
    if let Some(given) = given.filter(|g| g.starts_with("https://") || g.starts_with("http://")) {
        session.warn(format!(
            "the Git URL {given} is written as {url} in cellgen.yaml: Flux reads the repository over SSH with a read-only deploy key (an https URL would need a token in every cluster); edit git.url there if your host serves SSH elsewhere"
        ));
    }
    Ok(url)
}

fn ask_git_url(session: &mut Session, args: &RepoArgs, root: &Utf8Path) -> Result<String> {
    if let Some(url) = &args.git_url {
        return normalise_git_url(url).map_err(|reason| {
            CellgenError::InvalidFlag {
                flag: "--git-url".into(),
                reason,
            }
            .into()
        });
    }
    let origin = origin_remote(root).and_then(|u| normalise_git_url(&u).ok());
    if session.prompter.interactive() {
        loop {
            let answer = crate::commands::ui::prompt::required(
                session.prompter.as_mut(),
                "Git URL Flux syncs from (ssh://…)",
                origin.as_deref(),
                "every cell's Flux syncs from this repository, e.g. ssh://git@github.com/acme/infra.git",
            )?;
            match normalise_git_url(&answer) {
                Ok(url) => return Ok(url),
                Err(reason) => crate::errln!("{reason}"),
            }
        }
    }
    origin.ok_or_else(|| {
        CellgenError::MissingInput {
            what:
                "the Git URL Flux syncs from (this directory has no `origin` remote to default to)"
                    .into(),
            flag: "--git-url ssh://git@github.com/<org>/<repo>.git".into(),
        }
        .into()
    })
}

/// The Git host's SSH keys the clusters verify it with (`git.known_hosts`): the file given, else
/// github.com's published keys for a github.com URL, else a file asked for on a terminal.
fn resolve_known_hosts(session: &mut Session, args: &RepoArgs, url: &str) -> Result<Vec<String>> {
    use crate::model::flux_settings::{default_known_hosts, known_hosts_name, known_hosts_problem};
    let host = known_hosts_name(url).unwrap_or_default();
    let how = format!(
        "write the host's keys with `ssh-keyscan {host} > known_hosts`, check their fingerprints (`ssh-keygen -lf known_hosts`) against what {host} publishes, and pass --git-known-hosts-file known_hosts"
    );
    let read = |file: &str| -> Result<Vec<String>, String> {
        let text = crate::root::disk::read_to_string(file)
            .map_err(|e| format!("cannot read {file}: {e}"))?;
        if let Some((_, problem)) = known_hosts_problem(&text, url) {
            return Err(format!("{file}: {problem}"));
        }
        Ok(crate::model::flux_settings::known_hosts_lines(&text))
    };
    if let Some(file) = &args.git_known_hosts_file {
        return read(file).map_err(|reason| {
            CellgenError::InvalidFlag {
                flag: "--git-known-hosts-file".into(),
                reason: format!("{reason}; {how}"),
            }
            .into()
        });
    }
    if let Some(lines) = default_known_hosts(url) {
        return Ok(lines);
    }
    if session.prompter.interactive() {
        crate::errln!("Flux verifies {host} by its SSH keys: {how}.");
        loop {
            let file = crate::commands::ui::prompt::required(
                session.prompter.as_mut(),
                "File of the Git host's SSH keys (known_hosts lines)",
                None,
                "the clusters verify the Git host by these keys",
            )?;
            match read(file.trim()) {
                Ok(lines) => return Ok(lines),
                Err(reason) => crate::errln!("{reason}"),
            }
        }
    }
    Err(CellgenError::MissingInput {
        what: format!(
            "the SSH keys of {host}, which Flux verifies the host with (cellgen knows github.com's only; write them with `ssh-keyscan {host} > known_hosts` and check their fingerprints, `ssh-keygen -lf known_hosts`, against what {host} publishes)"
        ),
        flag: "--git-known-hosts-file <file>".into(),
    }
    .into())
}

fn resolve_state_region(session: &mut Session, args: &RepoArgs) -> Result<Option<String>> {
    let Some(bucket) = &args.state_bucket else {
        if args.state_region.is_some() {
            return Err(CellgenError::InvalidFlag {
                flag: "--state-region".into(),
                reason: "it is the region of the state bucket: give --state-bucket too".into(),
            }
            .into());
        }
        return Ok(None);
    };
    let region = match &args.state_region {
        Some(region) => region.clone(),
        None if session.prompter.interactive() => crate::commands::ui::prompt::required(
            session.prompter.as_mut(),
            &format!("Region of the state bucket {bucket}"),
            None,
            "Terraform's S3 backend needs the bucket's region (every cell shares the bucket, so it is not a cell's region)",
        )?,
        None => {
            return Err(CellgenError::MissingInput {
                what: format!(
                    "the region of the state bucket `{bucket}` (every cell shares it, so it is not a cell's region)"
                ),
                flag: "--state-region <region>".into(),
            }
            .into());
        }
    };
    let region = region.trim().to_string();
    if !crate::model::cell::AWS_REGIONS.contains(&region.as_str()) {
        return Err(CellgenError::InvalidFlag {
            flag: "--state-region".into(),
            reason: format!(
                "`{region}` is not an AWS region.{}",
                crate::suggest::hint(&region, crate::model::cell::AWS_REGIONS.iter().copied())
            ),
        }
        .into());
    }
    Ok(Some(region))
}

fn resolve_admin_roles(session: &mut Session, args: &RepoArgs) -> Result<Vec<String>> {
    let check = |arns: Vec<String>| -> Result<Vec<String>, String> {
        let arns: Vec<String> = arns
            .into_iter()
            .map(|a| a.trim().to_string())
            .filter(|a| !a.is_empty())
            .fold(Vec::new(), |mut seen, a| {
                // The same role given twice is one access entry.
                if !seen.contains(&a) {
                    seen.push(a);
                }
                seen
            });
        match arns.iter().find_map(|a| config::admin_role_arn_problem(a)) {
            Some(problem) => Err(problem),
            None => Ok(arns),
        }
    };
    if let Some(arns) = &args.admin_role_arns {
        return check(arns.clone()).map_err(|reason| {
            CellgenError::InvalidFlag {
                flag: "--admin-role-arn".into(),
                reason,
            }
            .into()
        });
    }
    if !session.prompter.interactive() {
        return Ok(Vec::new());
    }
    loop {
        let prompt =
            "IAM roles that administer the clusters, CI's included (ARNs, comma-separated)";
        let answer = if args.allow_no_admin {
            session.prompter.input(prompt, None)?
        } else {
            crate::commands::ui::prompt::required(
                session.prompter.as_mut(),
                prompt,
                None,
                "a cell's first `terraform apply` fails without an admin role, since nobody gets access to the cluster otherwise (`aws sts get-caller-identity` names the role you apply with; --allow-no-admin skips this)",
            )?
        };
        match check(answer.split(',').map(str::to_string).collect()) {
            Ok(arns) => return Ok(arns),
            Err(reason) => crate::errln!("{reason}"),
        }
    }
}

fn resolve_public_endpoint_cidrs(session: &mut Session, args: &RepoArgs) -> Result<Vec<String>> {
    let check = |cidrs: Vec<String>| -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        for cidr in cidrs.iter().map(|c| c.trim()).filter(|c| !c.is_empty()) {
            out.push(crate::model::cidr::Cidr::parse(cidr)?.to_string());
        }
        Ok(out)
    };
    if let Some(cidrs) = &args.public_endpoint_cidrs {
        return check(cidrs.clone()).map_err(|reason| {
            CellgenError::InvalidFlag {
                flag: "--public-endpoint-cidrs".into(),
                reason,
            }
            .into()
        });
    }
    // Private unless asked: opening the API is an answer only the user can give (their CI
    // runners' and VPN's addresses). Without it Terraform must reach the private endpoint.
    if !session.prompter.interactive() {
        session.warn(
            "the clusters' API stays private (no --public-endpoint-cidrs): `terraform apply` installs Cilium and Flux through it, so run it from a network routed to the cells' VPC blocks, or open the public endpoint to your CI runners' and VPN's CIDRs (cluster_access.public_endpoint_cidrs)"
        );
        return Ok(Vec::new());
    }
    loop {
        let answer = session.prompter.input(
            "CIDRs that may reach the clusters' public API endpoint: your CI runners' and VPN's egress (comma-separated; empty keeps the API private)",
            None,
        )?;
        let answer = if answer.trim() == "none" { "" } else { &answer };
        match check(answer.split(',').map(str::to_string).collect()) {
            Ok(cidrs) => return Ok(cidrs),
            Err(reason) => crate::errln!("{reason}"),
        }
    }
}

fn resolve_dns_zones(session: &mut Session, args: &RepoArgs) -> Result<Vec<String>> {
    let check = |zones: Vec<String>| -> Result<Vec<String>, String> {
        let zones: Vec<String> = zones
            .into_iter()
            .map(|z| z.trim().to_string())
            .filter(|z| !z.is_empty())
            .collect();
        let settings = crate::model::platform::DnsSettings {
            zones: [("any".to_string(), zones.clone())].into_iter().collect(),
        };
        match settings.validate(&["any".to_string()]) {
            Ok(()) => Ok(zones),
            Err(_) if zones.is_empty() => Ok(zones),
            Err(problem) => Err(problem.message.replace("dns.zones.any: ", "")),
        }
    };
    if let Some(zones) = &args.dns_zones {
        return check(zones.clone()).map_err(|reason| {
            CellgenError::InvalidFlag {
                flag: "--dns-zones".into(),
                reason,
            }
            .into()
        });
    }
    if !session.prompter.interactive() {
        return Ok(Vec::new());
    }
    loop {
        let answer = session.prompter.input(
            "Route53 hosted zones external-dns and cert-manager may change (comma-separated; empty: none yet)",
            None,
        )?;
        match check(answer.split(',').map(str::to_string).collect()) {
            Ok(zones) => return Ok(zones),
            Err(reason) => crate::errln!("{reason}"),
        }
    }
}

/// The branch checked out in `dir`, also on a repository without commits yet.
fn current_branch(dir: &Utf8Path) -> Option<String> {
    crate::root::git::answer(dir, &["symbolic-ref", "--quiet", "--short", "HEAD"])
}

fn origin_remote(dir: &Utf8Path) -> Option<String> {
    crate::root::git::answer(dir, &["remote", "get-url", "origin"])
}

/// Flux reads the repository over SSH with a deploy key, so the URL must be `ssh://`; the scp-like and
/// https forms of the same repository are rewritten to it.
pub fn normalise_git_url(url: &str) -> Result<String, String> {
    let url = url.trim();
    if url.contains(char::is_whitespace) || url.is_empty() {
        return Err(format!(
            "`{url}` is not a Git URL; use ssh://git@<host>/<org>/<repo>.git"
        ));
    }
    if let Some(rest) = url.strip_prefix("ssh://") {
        if rest.contains('/') && !rest.starts_with('/') {
            return Ok(url.to_string());
        }
    } else if let Some(rest) = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
    {
        if let Some((host, path)) = rest.split_once('/')
            && !host.is_empty()
            && !path.is_empty()
        {
            let host = host.rsplit('@').next().unwrap_or(host);
            return Ok(format!("ssh://git@{host}/{}", with_git_suffix(path)));
        }
    } else if let Some((user_host, path)) = url.split_once(':')
        && user_host.contains('@')
        && !path.is_empty()
        && !path.starts_with('/')
    {
        return Ok(format!("ssh://{user_host}/{}", with_git_suffix(path)));
    }
    Err(format!(
        "`{url}` is not a Git URL Flux can use; use ssh://git@<host>/<org>/<repo>.git"
    ))
}

fn with_git_suffix(path: &str) -> String {
    if path.ends_with(".git") {
        path.to_string()
    } else {
        format!("{path}.git")
    }
}

fn validate_bucket(bucket: &str) -> Result<()> {
    let ok = (3..=63).contains(&bucket.len())
        && bucket
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && bucket.as_bytes()[0].is_ascii_alphanumeric()
        && bucket.as_bytes()[bucket.len() - 1].is_ascii_alphanumeric();
    if ok {
        Ok(())
    } else {
        Err(CellgenError::InvalidFlag {
            flag: "--state-bucket".into(),
            reason: format!("`{bucket}` is not an S3 bucket name (3-63 lowercase letters, digits, dots and dashes)"),
        }
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::normalise_git_url;

    #[test]
    fn git_urls_become_ssh() {
        assert_eq!(
            normalise_git_url("git@github.com:acme/infra.git").unwrap(),
            "ssh://git@github.com/acme/infra.git"
        );
        assert_eq!(
            normalise_git_url("https://github.com/acme/infra").unwrap(),
            "ssh://git@github.com/acme/infra.git"
        );
        assert_eq!(
            normalise_git_url("ssh://git@example.com/x.git").unwrap(),
            "ssh://git@example.com/x.git"
        );
        assert!(normalise_git_url("not a url").is_err());
        assert!(normalise_git_url("/local/path").is_err());
    }
}
