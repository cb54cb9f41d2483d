//! The one place cellgen starts `git`. A repository cellgen reads may be hostile (a planted
//! `.git/config`, an environment pointing elsewhere), so every run is the same hardened one:
//! the caller's `GIT_*` environment is dropped (no `GIT_DIR`, `GIT_WORK_TREE`,
//! `GIT_CONFIG_PARAMETERS`, ... steering it to another repository or configuration, except the
//! few that only narrow what Git reads), no pager, no prompt, no hooks, no file-system monitor
//! program, no replace refs and no optional locks.

use camino::Utf8Path;
use std::process::{Command, Stdio};

/// Why a Git command could not give its answer.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("`{command}` failed: {message}")]
    Command { command: String, message: String },
}

/// `GIT_*` variables kept: each only limits what Git reads (discovery stops, no system or
/// a chosen global configuration), none can make it run a program or use another repository.
const KEPT: [&str; 3] = [
    "GIT_CEILING_DIRECTORIES",
    "GIT_CONFIG_NOSYSTEM",
    "GIT_CONFIG_GLOBAL",
];

/// Dropped even when absent now (the list is also what the test checks).
const ALWAYS_DROPPED: [&str; 9] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_EXTERNAL_DIFF",
];

/// Settings every run gets on its command line, above any configuration file: a hook, a
/// pager or an fsmonitor program would run code the repository chose.
const SAFE: [&str; 8] = [
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.pager=cat",
    "-c",
    "protocol.ext.allow=never",
];

/// A hardened `git -C root` (see the module's comment); the caller adds the arguments.
pub fn command(root: &Utf8Path) -> Command {
    let mut cmd = Command::new("git");
    for name in ALWAYS_DROPPED {
        cmd.env_remove(name);
    }
    for (name, _) in std::env::vars_os() {
        let text = name.to_string_lossy();
        if text.starts_with("GIT_") && !KEPT.contains(&text.as_ref()) {
            cmd.env_remove(&name);
        }
    }
    cmd.arg("--no-pager").args(SAFE).arg("-C").arg(root);
    cmd.env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_PAGER", "cat");
    cmd
}

/// Runs hardened `git args` in `root` (no input) and returns its standard output; a failure
/// names the command and gives Git's message.
pub fn output(root: &Utf8Path, args: &[&str]) -> Result<Vec<u8>, GitError> {
    let shown = format!("git {}", args.join(" "));
    let out = command(root)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| GitError::Command {
            command: shown.clone(),
            message: e.to_string(),
        })?;
    if !out.status.success() {
        return Err(GitError::Command {
            command: shown,
            message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(out.stdout)
}

/// [`output`] as trimmed text, None when Git fails or prints nothing (a question whose "no"
/// is an answer: no branch yet, no remote, no history).
pub fn answer(root: &Utf8Path, args: &[&str]) -> Option<String> {
    let out = output(root, args).ok()?;
    let text = String::from_utf8(out).ok()?.trim().to_string();
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever the caller's environment holds, Git gets none of the variables that point it
    /// at another repository or configuration, and the settings that would run a program.
    #[test]
    fn runs_are_hardened() {
        let cmd = command(Utf8Path::new("/r"));
        let removed: Vec<String> = cmd
            .get_envs()
            .filter(|(_, v)| v.is_none())
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect();
        for name in ["GIT_DIR", "GIT_WORK_TREE", "GIT_CONFIG_PARAMETERS"] {
            assert!(removed.iter().any(|r| r == name), "{name} reaches git");
        }
        let args: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(args[..2], ["--no-pager", "-c"]);
        assert!(args.iter().any(|a| a == "core.hooksPath=/dev/null"));
        assert!(args.iter().any(|a| a == "core.fsmonitor=false"));
        assert_eq!(args[args.len() - 2..], ["-C", "/r"]);
    }

    /// A repository's own hook does not run (a commit through the helper with a hook that
    /// would fail it succeeds).
    #[cfg(unix)]
    #[test]
    fn hooks_never_run() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        output(root, &["init", "-q"]).unwrap();
        let hook = root.join(".git/hooks/pre-commit");
        std::fs::write(&hook, "#!/bin/sh\nexit 1\n").unwrap();
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        let commit = output(
            root,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@example.com",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "x",
            ],
        );
        assert!(commit.is_ok(), "{commit:?}");
    }
}
