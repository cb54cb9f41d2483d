//! `init --git-url/--git-branch` in an existing repository: the Git source Flux syncs from
//! (cellgen.yaml's `git:`) changes to what the flags say, edited in place (comments and layout
//! kept), and read back to mean exactly that change.

use camino::Utf8Path;

use crate::error::CellgenError;
use crate::model::config::{CONFIG_FILE, Config};
use crate::ports::edit::yaml::{patches, scalar};
use crate::writer::plan::Plan;

/// One setting that moved: its name in cellgen.yaml, before, after.
pub type Moved = (&'static str, String, String);

/// Sets `git.url` and `git.branch` (those given) in the plan's cellgen.yaml; returns what moved.
pub fn set_git_source(
    plan: &mut Plan,
    url: Option<&str>,
    branch: Option<&str>,
) -> Result<Vec<Moved>, CellgenError> {
    let text = plan.read(CONFIG_FILE)?.unwrap_or_default();
    let path = Utf8Path::new(CONFIG_FILE);
    let before = Config::parse(&text, path)?;
    let fail = |message: String| CellgenError::MalformedConfig {
        path: path.to_path_buf(),
        line: crate::model::config::line_of(&text, "git:"),
        message,
    };
    let mut edited = text.clone();
    let mut moved = Vec::new();
    if let Some(url) = url.filter(|u| *u != before.git.url) {
        edited = patches::set_scalar(&edited, &["git", "url"], url)
            .map_err(|e| fail(format!("cannot set git.url: {e}")))?;
        moved.push(("git.url", before.git.url.clone(), url.to_string()));
    }
    if let Some(branch) = branch.filter(|b| *b != before.git.branch) {
        let has_branch = crate::ports::yaml::from_str::<yaml_serde::Value>(&edited)
            .ok()
            .is_some_and(|v| v["git"].get("branch").is_some());
        edited = if has_branch {
            patches::set_scalar(&edited, &["git", "branch"], branch)
                .map_err(|e| fail(format!("cannot set git.branch: {e}")))?
        } else {
            // Left out, it was the default: a line after `url:`, indented like it.
            after_url(&edited, &format!("branch: {}", scalar(branch))).ok_or_else(|| {
                fail("cannot add `branch:` under `git:` (no `url:` line found there); add it by hand".into())
            })?
        };
        moved.push(("git.branch", before.git.branch.clone(), branch.to_string()));
    }
    if moved.is_empty() {
        return Ok(moved);
    }
    // Exactly that change, nothing else.
    let after = Config::parse(&edited, path)?;
    let mut expected = before.clone();
    expected.git.url = url.map_or(expected.git.url, str::to_string);
    expected.git.branch = branch.map_or(expected.git.branch, str::to_string);
    if after != expected {
        return Err(fail(
            "cellgen cannot edit `git:` in this layout without changing what the file means; set url and branch by hand".into(),
        ));
    }
    plan.write(CONFIG_FILE, edited)?;
    Ok(moved)
}

/// `text` with `line` inserted after the `url:` line of the top-level `git:` mapping.
fn after_url(text: &str, line: &str) -> Option<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let top = lines.iter().position(|l| {
        l.strip_prefix("git:")
            .is_some_and(|r| r.trim().is_empty() || r.trim_start().starts_with('#'))
    })?;
    let at = top
        + 1
        + lines[top + 1..]
            .iter()
            .take_while(|l| l.starts_with([' ', '\t']) || l.trim().is_empty())
            .position(|l| l.trim_start().starts_with("url:"))?;
    Some(crate::ports::edit::text::insert_line_after(
        &lines, at, line,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_branch_line_goes_after_the_url() {
        let text = "schema: 1\ngit: # where Flux syncs from\n  url: ssh://git@x/y.git # ours\nlayers: []\n";
        assert_eq!(
            after_url(text, "branch: '0777'").unwrap(),
            "schema: 1\ngit: # where Flux syncs from\n  url: ssh://git@x/y.git # ours\n  branch: '0777'\nlayers: []\n"
        );
        assert_eq!(after_url("git: {url: x}\n", "branch: y"), None);
    }
}
