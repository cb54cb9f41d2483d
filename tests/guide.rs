//! The user guide (docs/guide/) cannot rot: every ```console block of a page is run, in order, in
//! one temporary directory per page, and each command's output must match what the page shows.
//!
//! The format (trycmd's, kept small):
//! - `$ command` is run by bash in the page's directory, with `cellgen` on the PATH; a line ending
//!   in `\` continues on the next line. stdout and stderr share one pipe, so the output reads as
//!   on a terminal.
//! - The lines up to the next `$ ` are its expected output. `? N` right after the command expects
//!   exit code N (default 0).
//! - `[..]` in an expected line matches any text within the line; a line `...` matches any number
//!   of lines (none included).
//!
//! Other fenced blocks (```sh, ```yaml) are shown, not run: commands that need AWS or a cluster.

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use support::*;

fn guide_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guide")
}

/// One `$` command of a page, with what the page expects of it.
#[derive(Debug)]
struct Step {
    line: usize,
    command: String,
    code: i32,
    expected: Vec<String>,
}

/// The steps of every ```console block of `text`, in order.
fn steps(text: &str) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut in_console = false;
    let mut continued = false;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            in_console = !in_console && trimmed == "```console";
            continued = false;
            continue;
        }
        if !in_console {
            continue;
        }
        if continued {
            let step = steps.last_mut().unwrap();
            step.command.push('\n');
            step.command.push_str(line);
            continued = line.ends_with('\\');
        } else if let Some(command) = line.strip_prefix("$ ") {
            steps.push(Step {
                line: index + 1,
                command: command.to_string(),
                code: 0,
                expected: Vec::new(),
            });
            continued = command.ends_with('\\');
        } else {
            let step = steps
                .last_mut()
                .unwrap_or_else(|| panic!("line {}: output before any `$ ` command", index + 1));
            match line.strip_prefix("? ") {
                Some(code) if step.expected.is_empty() => {
                    step.code = code
                        .parse()
                        .unwrap_or_else(|_| panic!("line {}: `? {code}`", index + 1))
                }
                _ => step.expected.push(line.to_string()),
            }
        }
    }
    assert!(!in_console, "a ```console block is not closed");
    steps
}

/// Whether `line` matches `pattern`, where `[..]` stands for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let mut parts = pattern.split("[..]");
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = line.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (i, part) in parts.iter().enumerate() {
        if i == parts.len() - 1 {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// Whether the `actual` lines match the `expected` ones (`...` for any number of lines).
fn lines_match(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "..." => {
            (0..=actual.len()).any(|skip| lines_match(rest, &actual[skip..]))
        }
        Some((first, rest)) => actual
            .split_first()
            .is_some_and(|(line, more)| line_matches(first, line) && lines_match(rest, more)),
    }
}

fn run_page(page: &Path) -> Result<usize, String> {
    let text = fs::read_to_string(page).unwrap();
    let steps = steps(&text);
    if steps.is_empty() {
        return Err("no ```console block: every page shows its workflow as run".into());
    }
    let dir = temp_dir();
    let bin = Path::new(env!("CARGO_BIN_EXE_cellgen")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for step in &steps {
        let mut cmd = Command::new("bash");
        cmd.args(["-c", &format!("exec 2>&1\n{}", step.command)])
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("CELLGEN_NO_INPUT", "1")
            .env("HOME", dir.path())
            .env("GIT_AUTHOR_NAME", "Guide")
            .env("GIT_AUTHOR_EMAIL", "guide@example.com")
            .env("GIT_COMMITTER_NAME", "Guide")
            .env("GIT_COMMITTER_EMAIL", "guide@example.com")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("COLUMNS", "100")
            .env_remove("GITHUB_STEP_SUMMARY")
            .env_remove("CELLGEN_LOCK_WAIT")
            .stdin(Stdio::null());
        isolate(&mut cmd);
        // The guide is written for `git init` making `main`, whatever the machine's default.
        cmd.env("GIT_CONFIG_COUNT", "1")
            .env("GIT_CONFIG_KEY_0", "init.defaultBranch")
            .env("GIT_CONFIG_VALUE_0", "main");
        let out = cmd.output().unwrap();
        let output = String::from_utf8_lossy(&out.stdout).into_owned();
        let actual: Vec<&str> = output.lines().collect();
        let code = out.status.code().unwrap_or(-1);
        if code != step.code || !lines_match(&step.expected, &actual) {
            return Err(format!(
                "line {}: `$ {}`\nexpected exit {}, got {code}; expected output:\n{}\n--- actual output:\n{output}",
                step.line,
                step.command,
                step.code,
                step.expected.join("\n"),
            ));
        }
    }
    Ok(steps.len())
}

fn pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = fs::read_dir(guide_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .filter(|p| p.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    pages.sort();
    pages
}

#[test]
fn every_example_of_the_guide_runs_as_shown() {
    let mut failures = Vec::new();
    for page in pages() {
        match run_page(&page) {
            Ok(n) => eprintln!("{}: {n} commands", page.display()),
            Err(e) => failures.push(format!("{}: {e}", page.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// One page per workflow, each listed in the guide's index.
#[test]
fn the_guide_has_a_page_per_workflow_and_an_index_of_them() {
    let index = fs::read_to_string(guide_dir().join("README.md")).unwrap();
    let names: Vec<String> = pages()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for workflow in [
        "first-hour.md",
        "onboard-a-region.md",
        "add-a-component.md",
        "roll-out-a-version.md",
        "rename-a-key.md",
        "decommission-a-cell.md",
        "ci.md",
        "upgrade.md",
    ] {
        assert!(names.iter().any(|n| n == workflow), "no page {workflow}");
    }
    for name in &names {
        assert!(
            index.contains(&format!("({name})")),
            "docs/guide/README.md does not link {name}"
        );
    }
}

#[test]
fn the_matcher_matches_what_it_says() {
    assert!(line_matches("a [..] c", "a b c"));
    assert!(line_matches("[..]", ""));
    assert!(line_matches("x[..]", "xyz"));
    assert!(!line_matches("x[..]z", "xy"));
    assert!(!line_matches("abc", "abcd"));
    let lines = |s: &[&str]| s.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    assert!(lines_match(
        &lines(&["a", "...", "d"]),
        &["a", "b", "c", "d"]
    ));
    assert!(lines_match(&lines(&["a", "...", "d"]), &["a", "d"]));
    assert!(!lines_match(&lines(&["a", "d"]), &["a", "b", "d"]));
    assert!(!lines_match(&lines(&["a"]), &["a", "b"]));
    let parsed = steps("```console\n$ a \\\n  b\n? 1\nout\n$ c\n```\n```sh\n$ not run\n```\n");
    assert_eq!(parsed.len(), 2);
    assert_eq!(parsed[0].command, "a \\\n  b");
    assert_eq!(
        (parsed[0].code, parsed[0].expected.clone()),
        (1, lines(&["out"]))
    );
}
