//! A diff as text, JSON, a Markdown pull-request comment, and GitHub workflow commands.

use camino::Utf8PathBuf;
use std::collections::BTreeMap;

use super::{CellDiff, ChangeKind, Diff, Group, LayerDiff};
use crate::analysis::findings::plural;
use crate::analysis::format::ANNOTATIONS_PER_STEP;
use crate::analysis::format::{escape_data, escape_property};

/// Characters GitHub accepts in an issue or pull-request comment body (65,536), less room for
/// the note saying what was left out.
pub const COMMENT_LIMIT: usize = 65_536 - 1_024;

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// "2 cells (prod: 2)", for a group.
fn who(group: &Group) -> String {
    let envs: Vec<String> = group
        .environments
        .iter()
        .map(|(env, n)| format!("{n} {env}"))
        .collect();
    format!(
        "{} ({}): {}",
        plural(group.cells.len(), "cell"),
        envs.join(", "),
        group.cells.join(", ")
    )
}

fn counts(diff: &CellDiff) -> [usize; 3] {
    let mut n = [0; 3];
    for layer in &diff.layers {
        for c in &layer.changes {
            n[c.change as usize] += 1;
        }
    }
    n
}

fn counts_text(diff: &CellDiff) -> String {
    let [added, removed, changed] = counts(diff);
    let mut parts = Vec::new();
    for (n, word) in [(added, "added"), (changed, "changed"), (removed, "removed")] {
        if n > 0 {
            parts.push(format!("{n} {word}"));
        }
    }
    let errors = diff
        .layers
        .iter()
        .filter(|l| l.error.is_some() || l.base_error.is_some())
        .count();
    if errors > 0 {
        parts.push(format!(
            "{} whose rendering changed",
            plural(errors, "layer")
        ));
    }
    parts.join(", ")
}

fn sign(kind: ChangeKind) -> &'static str {
    match kind {
        ChangeKind::Added => "+",
        ChangeKind::Removed => "-",
        ChangeKind::Changed => "~",
    }
}

fn word(kind: ChangeKind) -> &'static str {
    match kind {
        ChangeKind::Added => "added",
        ChangeKind::Removed => "removed",
        ChangeKind::Changed => "changed",
    }
}

fn status_note(diff: &CellDiff) -> &'static str {
    match diff.status {
        ChangeKind::Added => " (a new cell)",
        ChangeKind::Removed => " (the cell is removed)",
        ChangeKind::Changed => "",
    }
}

impl Diff {
    pub fn summary(&self) -> String {
        if self.is_empty() {
            return format!(
                "no change: 0 of {} affected",
                plural(self.cells.len(), "cell")
            );
        }
        format!(
            "{} of {} affected, {}",
            self.affected(),
            plural(self.cells.len(), "cell"),
            plural(self.groups.len(), "distinct change")
        )
    }

    fn header(&self) -> String {
        format!(
            "cellgen diff: {} ({}) -> working tree",
            self.base,
            short(&self.base_commit)
        )
    }

    pub fn to_text(&self) -> String {
        let mut out = format!("{}\n{}\n", self.header(), self.summary());
        for (i, group) in self.groups.iter().enumerate() {
            out.push_str(&format!(
                "\nChange {} of {}: {}{}\n",
                i + 1,
                self.groups.len(),
                who(group),
                status_note(&group.example)
            ));
            if group.cells.len() > 1 {
                out.push_str(&format!(
                    "  (the same change in each, with its own cell-metadata values; shown for {})\n",
                    group.example.cell
                ));
            }
            for layer in &group.example.layers {
                out.push_str(&layer_text(layer));
            }
        }
        out
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a diff always serialises") + "\n"
    }

    /// A pull-request comment: a summary table, then one collapsible section per distinct
    /// change, at most `limit` characters (what does not fit is named in a note).
    pub fn to_markdown(&self, limit: usize) -> String {
        let mut out = format!(
            "## cellgen diff\n\n**{}** (base `{}` at `{}`).\n",
            self.summary(),
            self.base,
            short(&self.base_commit)
        );
        if self.is_empty() {
            return out;
        }
        out.push_str("\n| change | cells | layers | objects |\n| --- | --- | --- | --- |\n");
        for (i, g) in self.groups.iter().enumerate() {
            let layers: Vec<&str> = g.example.layers.iter().map(|l| l.layer.as_str()).collect();
            out.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                i + 1,
                cell_md(&who(g)),
                cell_md(&layers.join(", ")),
                cell_md(&counts_text(&g.example))
            ));
        }
        let mut left = 0;
        for (i, g) in self.groups.iter().enumerate() {
            let section = group_markdown(i + 1, g);
            if left > 0 || out.len() + section.len() > limit {
                left += 1;
                continue;
            }
            out.push_str(&section);
        }
        if left > 0 {
            out.push_str(&format!(
                "\n> {} not shown: a comment holds at most 65,536 characters. Run `cellgen diff --base {}` to see every change.\n",
                plural(left, "change"),
                short(&self.base_commit)
            ));
        }
        out
    }

    /// GitHub workflow commands: a notice on the first changed line of each repository file that
    /// changed objects come from (within GitHub's notices per step), then the text report.
    pub fn to_github(&self) -> String {
        let mut out = String::new();
        // file -> (line, cells, objects)
        let mut by_file: BTreeMap<&Utf8PathBuf, (Vec<&str>, Vec<String>)> = BTreeMap::new();
        for g in &self.groups {
            for layer in &g.example.layers {
                for c in &layer.changes {
                    for file in &c.sources {
                        if !self.changed_lines.contains_key(file) {
                            continue;
                        }
                        let entry = by_file.entry(file).or_default();
                        for cell in &g.cells {
                            if !entry.0.contains(&cell.as_str()) {
                                entry.0.push(cell);
                            }
                        }
                        let object = format!("{} {}", word(c.change), c.id);
                        if !entry.1.contains(&object) {
                            entry.1.push(object);
                        }
                    }
                }
            }
        }
        // One notice is kept for the summary.
        let room = ANNOTATIONS_PER_STEP - 1;
        let mut shown = 0;
        let mut left = 0;
        for (file, (cells, objects)) in &by_file {
            for line in &self.changed_lines[*file] {
                if shown == room {
                    left += 1;
                    continue;
                }
                shown += 1;
                let mut listed: Vec<&str> = objects.iter().map(String::as_str).take(5).collect();
                if objects.len() > 5 {
                    listed.push("...");
                }
                out.push_str(&format!(
                    "::notice file={},line={line},title={}::{}\n",
                    escape_property(file.as_str()),
                    escape_property("cellgen diff"),
                    escape_data(&format!(
                        "This file's change reaches {} in {}: {}",
                        plural(objects.len(), "object"),
                        plural(cells.len(), "cell"),
                        listed.join("; ")
                    ))
                ));
            }
        }
        let mut summary = self.summary();
        if left > 0 {
            summary.push_str(&format!(
                "; {} changed source lines not annotated (GitHub shows {ANNOTATIONS_PER_STEP} notices per step)",
                left
            ));
        }
        out.push_str(&format!(
            "::notice title=cellgen diff::{}\n",
            escape_data(&summary)
        ));
        out.push_str(&self.to_text());
        out
    }
}

fn layer_text(layer: &LayerDiff) -> String {
    let mut out = format!("  layer {}:\n", layer.layer);
    if layer.base_error.is_some() || layer.error.is_some() {
        out.push_str(&format!(
            "    rendering at the base: {}\n    rendering now: {}\n",
            layer.base_error.as_deref().unwrap_or("fine"),
            layer.error.as_deref().unwrap_or("fine")
        ));
    }
    for c in &layer.changes {
        out.push_str(&format!(
            "    {} {} {} ({})\n",
            sign(c.change),
            word(c.change),
            c.id,
            sources(&c.sources)
        ));
        if c.change == ChangeKind::Changed {
            for line in c.diff.lines() {
                out.push_str(&format!("      {line}\n"));
            }
        }
    }
    out
}

fn sources(files: &[Utf8PathBuf]) -> String {
    files
        .iter()
        .map(|f| f.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A fence longer than any run of backticks in `text`.
fn fence(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

fn group_markdown(n: usize, g: &Group) -> String {
    let mut out = format!(
        "\n<details><summary>Change {n}: {}{} ({})</summary>\n\n",
        html(&who(g)),
        status_note(&g.example),
        html(&counts_text(&g.example))
    );
    if g.cells.len() > 1 {
        out.push_str(&format!(
            "The same change in each cell, with its own cell-metadata values; shown for `{}`.\n\n",
            g.example.cell
        ));
    }
    for layer in &g.example.layers {
        out.push_str(&format!("**{}**\n\n", html(&layer.layer)));
        if layer.base_error.is_some() || layer.error.is_some() {
            let body = format!(
                "at the base: {}\nnow: {}\n",
                layer.base_error.as_deref().unwrap_or("renders"),
                layer.error.as_deref().unwrap_or("renders")
            );
            let f = fence(&body);
            out.push_str(&format!("{f}text\n{body}{f}\n\n"));
        }
        for c in &layer.changes {
            out.push_str(&format!(
                "- {} `{}` ({})\n",
                word(c.change),
                c.id,
                html(&sources(&c.sources))
            ));
        }
        let body: String = layer
            .changes
            .iter()
            .map(|c| format!("# {} {}\n{}", word(c.change), c.id, c.diff))
            .collect();
        if !body.is_empty() {
            let f = fence(&body);
            out.push_str(&format!("\n{f}diff\n{body}{f}\n\n"));
        }
    }
    out.push_str("</details>\n");
    out
}

/// Text inside HTML (a summary) or a table cell.
fn html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn cell_md(s: &str) -> String {
    html(s).replace('|', "\\|").replace(['\r', '\n'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::diff::Change;
    use crate::analysis::snapshot::Identity;

    fn group(i: usize, lines: usize) -> Group {
        let diff: String = (0..lines).map(|l| format!("+  line{l}: {i}\n")).collect();
        Group {
            cells: vec![format!("eu-west-{i}-prod")],
            environments: [("prod".to_string(), 1)].into(),
            example: CellDiff {
                cell: format!("eu-west-{i}-prod"),
                status: ChangeKind::Changed,
                layers: vec![LayerDiff {
                    layer: "apps".into(),
                    base_error: None,
                    error: None,
                    changes: vec![Change {
                        change: ChangeKind::Changed,
                        id: Identity {
                            group: "apps".into(),
                            kind: "Deployment".into(),
                            namespace: "default".into(),
                            name: format!("app{i}"),
                        },
                        sources: vec![Utf8PathBuf::from("apps/app.yaml")],
                        diff,
                        template: String::new(),
                    }],
                }],
            },
        }
    }

    fn diff(groups: Vec<Group>) -> Diff {
        Diff {
            base: "main".into(),
            base_commit: "0123456789abcdef".into(),
            cells: groups.iter().flat_map(|g| g.cells.clone()).collect(),
            groups,
            changed_lines: BTreeMap::new(),
        }
    }

    #[test]
    fn markdown_stays_within_a_comment_and_says_what_it_left_out() {
        let d = diff((0..40).map(|i| group(i, 200)).collect());
        let md = d.to_markdown(COMMENT_LIMIT);
        assert!(md.len() <= 65_536, "{}", md.len());
        assert!(md.contains("changes not shown"), "{md}");
        // Every change is in the table even when its diff is left out.
        assert!(
            md.contains("| 40 | 1 cell (1 prod): eu-west-39-prod |"),
            "{md}"
        );
        let small = diff(vec![group(1, 3)]).to_markdown(COMMENT_LIMIT);
        assert!(!small.contains("not shown"), "{small}");
        assert!(small.contains("<details>"), "{small}");
    }

    #[test]
    fn fences_outgrow_backticks_in_the_content() {
        assert_eq!(fence("a ``` b"), "````");
        assert_eq!(fence("plain"), "```");
    }

    #[test]
    fn github_notices_stay_within_the_step_limit() {
        let mut d = diff(vec![group(1, 1)]);
        d.changed_lines
            .insert(Utf8PathBuf::from("apps/app.yaml"), (1..=30).collect());
        let gh = d.to_github();
        assert_eq!(gh.matches("::notice ").count(), ANNOTATIONS_PER_STEP);
        assert!(gh.contains("21 changed source lines not annotated"), "{gh}");
    }
}
