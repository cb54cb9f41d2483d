//! Moving a repository from cellgen 0.2.0's Flux bootstrap (`flux_bootstrap_git`: a write deploy
//! key, commits to the branch every cell syncs from) to the Flux Operator: the settings the
//! stacks now read (`git.known_hosts`, `flux:`), and what the user does by hand once each cell is
//! applied. The stacks themselves come from the templates: a cell whose flux.tf still declares
//! `flux_bootstrap_git` gets flux-bootstrap-removed.tf, which forgets it without destroying Flux
//! (`scaffold::CellInputs::forget_flux_bootstrap`).

use crate::error::CellgenError;
use crate::model::config::{CONFIG_FILE, Config, line_of};
use crate::model::flux_settings::{self, FLUX_OPERATOR_VERSION, FLUX_VERSION};

/// The comment 0.2.0's template wrote above `git:`; the bootstrap it names is gone.
const OLD_GIT_COMMENT: &str = "# The repository Flux syncs from (flux_bootstrap_git commits to it, the GitRepository reads it).\n";
const GIT_COMMENT: &str = "# The repository Flux syncs from. Every cell reads it with a deploy key WITHOUT write access\n# (terraform/cells/<cell>/flux.tf); nothing writes to it but your pull requests.\n";

/// The name of the Secret flux.tf creates; the bootstrap's was `flux-system`.
pub const READ_ONLY_SECRET: &str = "flux-git-read-only";

/// The known_hosts lines for the template: the repository's, else what cellgen knows for its
/// host (none: cellgen.yaml gets no `known_hosts`, and [`known_hosts`] says why).
pub fn template_known_hosts(config: &Config) -> Vec<String> {
    match &config.git.known_hosts {
        Some(text) => flux_settings::known_hosts_lines(text),
        None => flux_settings::default_known_hosts(&config.git.url).unwrap_or_default(),
    }
}

/// `text` (cellgen.yaml) with `git.known_hosts` added when it has none, and 0.2.0's comment on
/// `git:` brought up to date; what it added goes to `added`. A host cellgen has no keys for
/// stops the upgrade, naming the setting.
pub fn known_hosts(
    text: &str,
    config: &Config,
    added: &mut Vec<String>,
) -> Result<String, CellgenError> {
    let mut out = text.replacen(OLD_GIT_COMMENT, GIT_COMMENT, 1);
    if config.git.known_hosts.is_some() {
        return Ok(out);
    }
    let host = flux_settings::known_hosts_name(&config.git.url).unwrap_or_default();
    let Some(lines) = flux_settings::default_known_hosts(&config.git.url) else {
        return Err(CellgenError::MalformedConfig {
            path: CONFIG_FILE.into(),
            line: line_of(text, "url:"),
            message: format!(
                "git.known_hosts is not set, and cellgen knows the SSH keys of github.com only: the clusters now verify {host} with them (the Flux Operator's Secret, flux.tf). Add under `git:`\n  known_hosts: |\n    <the lines of `ssh-keyscan {host}`, fingerprints checked against what {host} publishes>\nand run `cellgen upgrade` again"
            ),
        });
    };
    let mut block = String::from(
        "  # The Git host's SSH keys (known_hosts lines, as `ssh-keyscan <host>` prints them, fingerprints\n  # checked against what the host publishes): the clusters verify the host with them.\n  known_hosts: |\n",
    );
    for line in &lines {
        block.push_str(&format!("    {line}\n"));
    }
    out = insert_in_git(&out, &block).ok_or_else(|| CellgenError::MalformedConfig {
        path: CONFIG_FILE.into(),
        line: line_of(text, "git:"),
        message: "cannot add `known_hosts` under `git:` (no block mapping `git:` with `url:` found); add it by hand (github.com's keys: https://docs.github.com/en/authentication/keeping-your-account-and-data-secure/githubs-ssh-key-fingerprints) and run `cellgen upgrade` again".into(),
    })?;
    added.push(format!(
        "git.known_hosts: {host}'s published SSH keys (the clusters verify the Git host with them)"
    ));
    Ok(out)
}

/// `text` with `block` appended to the top-level `git:` mapping (after its last entry line).
fn insert_in_git(text: &str, block: &str) -> Option<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let top = lines.iter().position(|l| {
        l.strip_prefix("git")
            .is_some_and(|rest| rest.trim_end() == ":")
    })?;
    let mut last = None;
    for (i, l) in lines.iter().enumerate().skip(top + 1) {
        if l.trim().is_empty() || l.trim_start().starts_with('#') {
            continue;
        }
        if !l.starts_with(' ') {
            break;
        }
        last = Some(i);
    }
    let last = last?;
    if !lines[top + 1..=last]
        .iter()
        .any(|l| l.trim_start().starts_with("url:"))
    {
        return None;
    }
    let mut out: String = lines[..=last].concat();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(block);
    out.push_str(&lines[last + 1..].concat());
    Some(out)
}

/// What cellgen.yaml's new `flux:` section says, for the report.
pub fn flux_added() -> String {
    format!(
        "flux: version {FLUX_VERSION}, operator_version {FLUX_OPERATOR_VERSION} (the Flux Operator installs Flux in every cell now)"
    )
}

/// What to do by hand once the cells that bootstrapped Flux with `flux_bootstrap_git` are
/// upgraded: cellgen neither holds the keys nor deletes files it did not create.
pub fn steps(cells: &[String]) -> Vec<String> {
    if cells.is_empty() {
        return Vec::new();
    }
    let list = cells.join(", ");
    vec![
        format!(
            "Make a deploy key WITHOUT write access, once for the repository: `ssh-keygen -t ed25519 -N '' -C flux-read-only -f flux-read-only`, then add flux-read-only.pub to the repository's deploy keys with write access left off (GitHub: Settings > Deploy keys > Add deploy key, \"Allow write access\" unchecked). Export it for every plan and apply: `export TF_VAR_flux_git_ssh_private_key=\"$(cat flux-read-only)\"`."
        ),
        format!(
            "In terraform/cells/<cell> of {list}: `terraform init -upgrade`, then `terraform apply`. The plan forgets flux_bootstrap_git.this (nothing is destroyed) and creates the Flux Operator, the Secret {READ_ONLY_SECRET} and the FluxInstance `flux`, which takes over the running Flux controllers, GitRepository and Kustomization; the cluster itself is not replaced."
        ),
        format!(
            "Check each cell: `kubectl -n flux-system get fluxinstance flux` is Ready and `kubectl -n flux-system get gitrepository flux-system -o jsonpath='{{.spec.secretRef.name}}'` prints {READ_ONLY_SECRET}. Then delete the write key from the cluster, `kubectl -n flux-system delete secret flux-system`, and once every cell is through, revoke the old write deploy key on the Git host."
        ),
        format!(
            "In a pull request: delete cells/<cell>/flux-system/ of {list} if your branch has it (flux_bootstrap_git committed it; cellgen did not create it, so it leaves it to you; Flux no longer applies it), and each cell's terraform/cells/<cell>/flux-bootstrap-removed.tf once that cell is applied."
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "schema: 4\n\n# The repository Flux syncs from (flux_bootstrap_git commits to it, the GitRepository reads it).\ngit:\n  url: ssh://git@github.com/acme/infra.git\n  branch: main # ours\n\n# A cell\nenvironments: [dev]\n";

    fn config(text: &str) -> Config {
        let full = format!("{text}layers:\n  - name: apps\n    path: apps\nkeys: {{}}\n");
        Config::parse(&full, camino::Utf8Path::new(CONFIG_FILE)).unwrap()
    }

    #[test]
    fn known_hosts_join_git_with_the_new_comment() {
        let mut added = Vec::new();
        let out = known_hosts(OLD, &config(OLD), &mut added).unwrap();
        assert!(out.contains(GIT_COMMENT), "{out}");
        assert!(
            out.contains("  branch: main # ours\n  # The Git host's SSH keys"),
            "{out}"
        );
        assert!(
            out.contains("  known_hosts: |\n    github.com ssh-ed25519 "),
            "{out}"
        );
        assert!(
            out.ends_with("\n\n# A cell\nenvironments: [dev]\n"),
            "{out}"
        );
        assert_eq!(added.len(), 1);
        // Twice changes nothing.
        let again = known_hosts(&out, &config(&out), &mut Vec::new()).unwrap();
        assert_eq!(again, out);
    }

    #[test]
    fn another_host_is_named_not_guessed() {
        let gitlab = OLD.replace("github.com", "gitlab.example.com");
        let err = known_hosts(&gitlab, &config(&gitlab), &mut Vec::new()).unwrap_err();
        let message = err.to_string();
        assert!(
            message.contains("git.known_hosts is not set")
                && message.contains("ssh-keyscan gitlab.example.com"),
            "{message}"
        );
    }

    #[test]
    fn the_steps_name_the_cells_and_the_read_only_key() {
        assert!(steps(&[]).is_empty());
        let text = steps(&["eu-west-1-prod".into()]).join("\n");
        for needed in [
            "ssh-keygen -t ed25519",
            "WITHOUT write access",
            "eu-west-1-prod",
            "kubectl -n flux-system delete secret flux-system",
            "revoke the old write deploy key",
            "cells/<cell>/flux-system/",
            READ_ONLY_SECRET,
        ] {
            assert!(text.contains(needed), "no `{needed}` in:\n{text}");
        }
    }
}
