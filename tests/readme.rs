//! The README and the reference (docs/reference.md) tell the truth: the README's set-up commands
//! run, every command and flag either shows exists (checked against `cellgen --help`), the
//! reference's layout section is the tree `new` generates, and its table of what `check` catches
//! lists exactly the finding codes the code reports.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use regex::Regex;
use support::*;

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

/// The command reference, the findings table and the layout, moved out of the README.
fn reference() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reference.md"))
        .unwrap()
}

fn help(args: &[&str]) -> String {
    let out = cellgen().args(args).arg("--help").output().unwrap();
    assert!(out.status.success(), "cellgen {args:?} --help");
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommands `cellgen --help` lists, each with the flags its own `--help` lists (the
/// global ones included).
fn commands() -> BTreeMap<String, BTreeSet<String>> {
    let top = help(&[]);
    let section = top
        .split("Commands:\n")
        .nth(1)
        .and_then(|s| s.split("\n\n").next())
        .expect("a Commands: section in cellgen --help");
    let flag = Regex::new(r"(?m)^\s+(?:-\w, )?(--[a-z][a-z-]*)").unwrap();
    let mut commands = BTreeMap::new();
    // A command's line is indented by two; its wrapped description by more.
    for line in section.lines().filter(|l| !l.starts_with("   ")) {
        let Some(name) = line.split_whitespace().next() else {
            continue;
        };
        if name == "help" {
            continue;
        }
        let text = help(&[name]);
        let flags = flag
            .captures_iter(&text)
            .map(|c| c[1].to_string())
            .collect();
        commands.insert(name.to_string(), flags);
        // Nested commands (`key add`), each with its own flags.
        let nested = text
            .split("Commands:\n")
            .nth(1)
            .and_then(|s| s.split("\n\n").next())
            .unwrap_or("");
        for line in nested.lines().filter(|l| !l.starts_with("   ")) {
            let Some(sub) = line.split_whitespace().next().filter(|s| *s != "help") else {
                continue;
            };
            let flags = flag
                .captures_iter(&help(&[name, sub]))
                .map(|c| c[1].to_string())
                .collect();
            commands.insert(format!("{name} {sub}"), flags);
        }
    }
    commands
}

/// The command `words` (after `cellgen`) name: a nested one (`key add`) when it exists.
fn command_of<'a>(
    commands: &'a BTreeMap<String, BTreeSet<String>>,
    first: &str,
    second: Option<&str>,
) -> Option<(String, &'a BTreeSet<String>)> {
    second
        .map(|s| format!("{first} {s}"))
        .and_then(|both| commands.get(&both).map(|f| (both, f)))
        .or_else(|| commands.get(first).map(|f| (first.to_string(), f)))
}

/// Code as the README shows it: inline code spans, and the lines of fenced blocks.
fn code_snippets(text: &str) -> Vec<String> {
    let mut snippets = Vec::new();
    let mut fenced = false;
    let span = Regex::new(r"`([^`\n]+)`").unwrap();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            snippets.push(line.to_string());
        } else {
            snippets.extend(span.captures_iter(line).map(|c| c[1].to_string()));
        }
    }
    snippets
}

/// `cellgen SUB ...` invocations in `snippet` (not prose that names cellgen), each with the flags written after it (up to the
/// end of that shell command).
fn invocations(snippet: &str) -> Vec<(String, Option<String>, Vec<String>)> {
    // Where a shell command starts: the line's start, after `&&`, `;`, `|` or in `$(...)`.
    let call =
        Regex::new(r"(?:^\s*|&&\s*|;\s*|\|\s*|\$\()cellgen ([a-z][a-z-]*)([^|;&#)]*)").unwrap();
    let flag = Regex::new(r"(?:^|\s)(--[a-z][a-z-]*)").unwrap();
    call.captures_iter(snippet)
        .map(|c| {
            let flags = flag
                .captures_iter(&c[2])
                .map(|f| f[1].to_string())
                .collect();
            let second = c[2]
                .strip_prefix(' ')
                .and_then(|rest| rest.split_whitespace().next())
                .filter(|w| w.chars().all(|ch| ch.is_ascii_lowercase() || ch == '-'))
                .map(str::to_string);
            (c[1].to_string(), second, flags)
        })
        .collect()
}

#[test]
fn every_command_and_flag_the_readme_shows_exists() {
    let commands = commands();
    let all_flags: BTreeSet<&String> = commands.values().flatten().collect();
    let text = readme() + &reference();
    let mut wrong = Vec::new();
    for snippet in code_snippets(&text) {
        for (first, second, flags) in invocations(&snippet) {
            let Some((sub, known)) = command_of(&commands, &first, second.as_deref()) else {
                wrong.push(format!("`cellgen {first}` is not a command: {snippet}"));
                continue;
            };
            for flag in flags.iter().filter(|f| !known.contains(*f)) {
                wrong.push(format!("`cellgen {sub}` has no {flag}: {snippet}"));
            }
        }
        // A flag on its own (`--dry-run`, `--values FILE`) is one of cellgen's.
        if let Some(flag) = snippet.strip_prefix("--") {
            let flag = format!("--{}", flag.split([' ', '=']).next().unwrap());
            if !all_flags.contains(&flag) {
                wrong.push(format!("no cellgen command has {flag}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The Commands table has a row per command, and each flag a row names is that command's.
#[test]
fn the_commands_table_lists_every_command_with_its_flags() {
    let commands = commands();
    let text = reference();
    let table = text
        .split("## Commands\n")
        .nth(1)
        .and_then(|s| s.split("\n\n").next())
        .expect("a ## Commands section starting with its table");
    let row = Regex::new(r"(?m)^\| `cellgen ([a-z-]+)( [a-z-]+)?[^`]*` \| (.*) \|$").unwrap();
    let flag = Regex::new(r"`(--[a-z][a-z-]*)").unwrap();
    let mut rows = BTreeSet::new();
    let mut wrong = Vec::new();
    for c in row.captures_iter(table) {
        let second = c.get(2).map(|m| m.as_str().trim());
        let Some((sub, known)) = command_of(&commands, &c[1], second) else {
            wrong.push(format!("row for `cellgen {}`, which does not exist", &c[1]));
            continue;
        };
        // `new`'s row names `init`'s repository settings, which are `new`'s flags too.
        for f in flag.captures_iter(&c[3]) {
            let name = f[1].to_string();
            if !known.contains(&name) {
                wrong.push(format!("`cellgen {sub}` has no {name}"));
            }
        }
        rows.insert(sub);
    }
    // A group (`key`) has rows for its commands (`key add`), not one of its own.
    let grouped = |s: &String| commands.keys().any(|k| k.starts_with(&format!("{s} ")));
    for sub in commands
        .keys()
        .filter(|s| !rows.contains(*s) && !grouped(s))
    {
        wrong.push(format!("no row for `cellgen {sub}`"));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The README starts with the two set-up commands: the main job in a new directory (which runs,
/// here with the test build) and every test through ./.ci/run, which runs `cargo test --locked`.
#[test]
fn the_readme_starts_with_the_two_set_up_commands_and_they_work() {
    let text = readme();
    let block = text
        .strip_prefix("# cellgen\n\n```sh\n")
        .and_then(|s| s.split("\n```").next())
        .expect("the README starts with a ```sh block");
    let mut commands = Vec::new();
    let mut current = String::new();
    for line in block.lines() {
        let line = line.split(" # ").next().unwrap().trim_end();
        match line.strip_suffix('\\') {
            Some(start) => current.push_str(start),
            None => {
                current.push_str(line);
                commands.push(std::mem::take(&mut current));
            }
        }
    }
    assert_eq!(commands.len(), 2, "{commands:?}");
    assert_eq!(commands[1].trim(), "./.ci/run");
    let ci =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/run")).unwrap();
    assert!(ci.lines().any(|l| l == "cargo test --locked"), "{ci}");

    let main_job = commands[0]
        .strip_prefix("cargo run --release -- ")
        .expect("the first command runs cellgen with cargo run --release");
    let dir = temp_dir();
    let script = format!("\"$CELLGEN\" {main_job}");
    let mut cmd = Command::new("bash");
    cmd.args(["-c", &script])
        .current_dir(dir.path())
        .env("CELLGEN", env!("CARGO_BIN_EXE_cellgen"))
        // `mktemp -d` makes the new directory under the test's own.
        .env("TMPDIR", dir.path());
    isolate(&mut cmd);
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{main_job}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let made: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(made.len(), 1, "{made:?}");
    assert!(made[0].join("cellgen.yaml").is_file());
    assert!(
        made[0]
            .join("terraform/cells/eu-west-2-prod/cluster.tf")
            .is_file()
    );
}

/// The code of `## What cellgen check catches`'s table: each row's codes, and whether the row
/// says they are warnings.
fn readme_codes(text: &str) -> BTreeMap<String, bool> {
    let table = text
        .split("## What `cellgen check` catches\n")
        .nth(1)
        .and_then(|s| s.split("| code | what |").nth(1))
        .and_then(|s| s.split("\n\n").next())
        .expect("the table of what check catches");
    let code = Regex::new(r"`([a-z0-9]+(?:-[a-z0-9]+)+)`").unwrap();
    let mut codes = BTreeMap::new();
    for line in table.lines().skip(2) {
        let first = line.split(" | ").next().unwrap_or("");
        let warning = first.contains("(warning)");
        for c in code.captures_iter(first) {
            codes.insert(c[1].to_string(), warning);
        }
    }
    codes
}

#[test]
fn the_findings_table_lists_exactly_the_codes_check_reports() {
    use cellgen::analysis::findings::{CODES, Severity};
    let readme = readme_codes(&reference());
    let code: BTreeMap<String, bool> = CODES
        .iter()
        .map(|(c, s)| (c.to_string(), *s == Severity::Warning))
        .collect();
    assert_eq!(
        readme, code,
        "README (left) and check::findings::CODES (right): code -> is a warning"
    );
    // Every code the sources report is in CODES: a literal passed to Finding::error/warning.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let call = Regex::new(r#"Finding::(error|warning)\(\s*"([a-z0-9-]+)""#).unwrap();
    for entry in walkdir::WalkDir::new(&src) {
        let entry = entry.unwrap();
        if entry.path().extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap();
        for c in call.captures_iter(&text) {
            let warning = &c[1] == "warning";
            assert_eq!(
                code.get(&c[2]),
                Some(&warning),
                "{}: Finding::{}(\"{}\") is not in CODES with that severity",
                entry.path().display(),
                &c[1],
                &c[2]
            );
        }
    }
}

/// `## What it generates` is the tree `new` generates (a cell with every optional file: an
/// egress gateway and a component): each line names files that exist, and each file is named.
#[test]
fn the_layout_section_matches_a_generated_tree() {
    let text = reference();
    let block = text
        .split("## What it generates\n")
        .nth(1)
        .and_then(|s| s.split("```\n").nth(1))
        .expect("a ``` block in ## What it generates");
    // Each entry's path: the first column; an indented line is relative to the last directory
    // line above it, which then names no file itself. One line may name two (`a.tf  b.tf`).
    let mut patterns: Vec<(String, usize)> = Vec::new();
    let mut parent: Option<String> = None;
    for line in block.lines() {
        let indent = line.len() - line.trim_start().len();
        let names: Vec<&str> = line
            .trim_start()
            .split("  ")
            .take_while(|w| !w.trim().contains(' '))
            .map(str::trim)
            .filter(|w| !w.is_empty())
            .collect();
        if indent == 0 {
            parent = None;
        }
        for name in names {
            if indent == 0 {
                parent = Some(name.to_string());
                patterns.push((name.to_string(), patterns.len()));
            } else if let Some(dir) = &parent {
                patterns.push((format!("{dir}{name}"), patterns.len()));
            }
        }
    }
    // A directory line with entries under it stands for them only.
    let parents: BTreeSet<String> = patterns
        .iter()
        .filter(|(p, _)| p.ends_with('/'))
        .filter(|(p, _)| {
            patterns
                .iter()
                .any(|(q, _)| q.len() > p.len() && q.starts_with(p.as_str()))
        })
        .map(|(p, _)| p.clone())
        .collect();
    let regexes: Vec<(String, Regex)> = patterns
        .iter()
        .filter(|(p, _)| !parents.contains(p))
        .map(|(p, _)| {
            let mut re = regex::escape(p)
                .replace(r"<cell>", "[^/]+")
                .replace(r"<name>", "[^/]+")
                .replace(r"<layer>", "[^/]+")
                .replace(r"<component>", "[^/]+")
                .replace(r"\*", "[^/]*");
            if p.ends_with('/') {
                re.push_str(".+");
            }
            (p.clone(), Regex::new(&format!("^{re}$")).unwrap())
        })
        .collect();
    assert!(regexes.len() > 20, "{patterns:?}");

    let dir = temp_dir();
    new_cell(
        dir.path(),
        &[
            "eu-west-2-prod",
            "--egress-gateway",
            "--components",
            "karpenter",
        ],
    );
    let files: Vec<String> = walkdir::WalkDir::new(dir.path())
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            e.path()
                .strip_prefix(dir.path())
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let mut wrong = Vec::new();
    for file in &files {
        if !regexes.iter().any(|(_, re)| re.is_match(file)) {
            wrong.push(format!(
                "{file} is generated but the README does not show it"
            ));
        }
    }
    for (pattern, re) in &regexes {
        if !files.iter().any(|f| re.is_match(f)) {
            wrong.push(format!(
                "the README shows {pattern}, which is not generated"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `## Developing` names every module of src/ (a file or a directory), so the map stays whole.
#[test]
fn the_developing_section_names_every_module() {
    let text = reference();
    let block = text
        .split("## Developing\n")
        .nth(1)
        .and_then(|s| s.split("```\n").nth(1))
        .expect("a ``` block in ## Developing");
    let words: BTreeSet<&str> = block
        .split(|c: char| c.is_whitespace() || ",:;()".contains(c))
        .collect();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("src")).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        let named = if entry.file_type().unwrap().is_dir() {
            [format!("src/{name}/"), format!("{name}/")]
        } else {
            [format!("src/{name}"), name.clone()]
        };
        let under = |w: &&str| w.starts_with(&format!("src/{name}/"));
        if !named.iter().any(|n| words.contains(n.as_str())) && !words.iter().any(under) {
            missing.push(name);
        }
    }
    missing.sort();
    assert!(
        missing.is_empty(),
        "not in README's ## Developing: {missing:?}"
    );
}

/// The README is for users (issues 20, 21): short, and its first screen says what cellgen is,
/// how to install it and what a first apply needs, before the quick start; the reference,
/// findings table and benchmark figures live elsewhere.
#[test]
fn the_readme_is_short_and_its_first_screen_is_for_users() {
    let text = readme();
    assert!(text.len() < 15 * 1024, "README.md is {} bytes", text.len());
    let at = |heading: &str| {
        text.find(heading)
            .unwrap_or_else(|| panic!("README.md has no `{heading}`"))
    };
    assert!(at("## Install") < at("## Before the first `terraform apply`"));
    assert!(at("## Before the first `terraform apply`") < at("## Quick start"));
    for needed in [
        "cargo install --locked --path .",
        "SHA256SUMS",
        "Terraform 1.11",
        "--state-bucket",
        "ssh-keygen",
        "--dns-zones",
        "docs/reference.md",
        "docs/guide/first-hour.md",
        "CONTRIBUTING.md",
    ] {
        assert!(text.contains(needed), "README.md does not mention {needed}");
    }
    for moved in [
        "## What `cellgen check` catches",
        "## Commands",
        "bench/check-1000.sh` generates",
    ] {
        assert!(!text.contains(moved), "README.md still has {moved}");
    }
}

/// Every section a message, template or comment names (`docs/reference.md, "Heading"`, or the
/// old `README: Heading` form) is a heading of that file: a section that moved leaves no
/// pointer to nowhere (issue 21).
#[test]
fn every_section_a_message_names_is_a_heading_of_its_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let named = regex::Regex::new(
        r#"(README(?:\.md)?|docs/[\w/-]+\.md)(?:, \\?"([^"\\]+)\\?"|: ([A-Z][^).\n]*))"#,
    )
    .unwrap();
    let mut files = Vec::new();
    let mut dirs = vec![root.join("src"), root.join("templates")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    let mut seen = 0;
    let mut missing = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for caps in named.captures_iter(&text) {
            let doc = match &caps[1] {
                "README" => "README.md",
                other => other,
            };
            let heading = caps.get(2).or(caps.get(3)).unwrap().as_str().trim();
            seen += 1;
            let doc_text = std::fs::read_to_string(root.join(doc)).unwrap_or_default();
            let found = doc_text.lines().any(|line| {
                line.starts_with('#') && line.trim_start_matches('#').trim() == heading
            });
            if !found {
                missing.push(format!("{}: {doc}, \"{heading}\"", file.display()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "sections named but not headings:\n{}",
        missing.join("\n")
    );
    assert!(seen >= 4, "the pattern found only {seen} named sections");
}
