//! `cellgen completions` and `cellgen man`: they work anywhere (no repository needed), cover
//! every subcommand, and what they produce is read by the real tools (bash, man).

use std::fs;
use std::process::Command;

use super::*;

const SHELLS: &[&str] = &["bash", "zsh", "fish", "powershell"];

#[test]
fn every_shell_gets_a_script_that_names_every_subcommand() {
    let dir = temp_dir();
    for shell in SHELLS {
        let script = run_ok(dir.path(), &["completions", shell]);
        assert!(
            script.len() > 500,
            "{shell}: a suspiciously short script:\n{script}"
        );
        for sub in subcommands() {
            assert!(
                script.contains(&sub),
                "the {shell} completion script does not mention `{sub}`"
            );
        }
    }
    let out = run(dir.path(), &["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// The bash script completes what a user types: subcommands, flags, `schema`'s file names;
/// remove-component offers no --with-requirements.
#[test]
fn the_bash_script_completes_in_bash() {
    let Some(bash) = which("bash") else {
        support::tools::skip_without("bash", "completing in bash");
        return;
    };
    let dir = temp_dir();
    let script = dir.path().join("cellgen.bash");
    fs::write(&script, run_ok(dir.path(), &["completions", "bash"])).unwrap();
    let syntax = Command::new(&bash).arg("-n").arg(&script).output().unwrap();
    assert!(syntax.status.success(), "bash -n: {}", stderr(&syntax));

    // Bash calls the function with the command, the current word and the previous one.
    let complete = |words: &[&str]| -> Vec<String> {
        let array: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
        let program = format!(
            "source '{}'; COMP_WORDS=({}); COMP_CWORD={}; _cellgen cellgen '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display(),
            array.join(" "),
            words.len() - 1,
            words[words.len() - 1],
            words[words.len() - 2],
        );
        let out = Command::new(&bash).args(["-c", &program]).output().unwrap();
        assert!(out.status.success(), "bash: {}", stderr(&out));
        stdout(&out)
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect()
    };
    assert_eq!(complete(&["cellgen", "add"]), ["add-component"]);
    let schema = complete(&["cellgen", "schema", ""]);
    assert!(
        schema.contains(&"cellgen.yaml".to_string())
            && schema.contains(&"component.yaml".to_string()),
        "{schema:?}"
    );
    assert_eq!(
        complete(&["cellgen", "add-component", "--with"]),
        ["--with-requirements"]
    );
    assert_eq!(
        complete(&["cellgen", "remove-component", "--with"]),
        Vec::<String>::new()
    );
    assert_eq!(complete(&["cellgen", "--col"]), ["--color"]);
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// The page as `man` shows it, or None without `man`; the roff is checked either way.
fn render_page(page: &std::path::Path) -> Option<String> {
    let roff = fs::read_to_string(page).unwrap();
    assert!(
        roff.lines().any(|l| l.starts_with(".TH ")) && roff.contains(".SH NAME"),
        "{} is not a man page:\n{roff}",
        page.display()
    );
    let man = which("man")?;
    let out = Command::new(man)
        .args(["-l", "-P", "cat"])
        .arg(page)
        .env("MANWIDTH", "200")
        .env("LC_ALL", "C")
        .output()
        .unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "man -l {} failed: {}",
        page.display(),
        stderr(&out)
    );
    Some(stdout(&out))
}

#[test]
fn the_man_page_renders_and_lists_every_subcommand() {
    let dir = temp_dir();
    let page = dir.path().join("cellgen.1");
    fs::write(&page, run_ok(dir.path(), &["man"])).unwrap();
    let Some(text) = render_page(&page) else {
        support::tools::skip_without("man", "rendering the man page");
        return;
    };
    for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "SUBCOMMANDS"] {
        assert!(
            text.lines().any(|l| l.trim() == section),
            "no {section} section in:\n{text}"
        );
    }
    for sub in subcommands() {
        assert!(
            text.contains(&format!("cellgen-{sub}(1)")),
            "the man page does not list `cellgen-{sub}(1)`:\n{text}"
        );
    }
}

#[test]
fn out_dir_writes_one_page_per_subcommand_once() {
    let dir = temp_dir();
    let out = run_ok(dir.path(), &["man", "--out-dir", "man/man1"]);
    let pages = dir.path().join("man/man1");
    // One page per subcommand, nested ones (`key add`) included, as `cellgen-key-add.1`.
    use clap::CommandFactory;
    let cli = cellgen::cli::Cli::command();
    let mut expected: Vec<String> = Vec::new();
    for sub in cli.get_subcommands() {
        expected.push(format!("cellgen-{}.1", sub.get_name()));
        for nested in sub.get_subcommands().filter(|n| n.get_name() != "help") {
            expected.push(format!(
                "cellgen-{}-{}.1",
                sub.get_name(),
                nested.get_name()
            ));
        }
    }
    expected.push("cellgen.1".into());
    expected.sort();
    let mut written: Vec<String> = fs::read_dir(&pages)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    assert_eq!(written, expected, "cellgen said:\n{out}");
    for name in &written {
        assert!(
            out.contains(name),
            "the summary does not list {name}:\n{out}"
        );
        let Some(text) = render_page(&pages.join(name)) else {
            continue;
        };
        let title = name.trim_end_matches(".1");
        assert!(
            text.contains(&format!("{title} - ")),
            "{name}: its NAME section does not name {title}:\n{text}"
        );
    }
    // The check page documents check's own flags.
    if let Some(text) = render_page(&pages.join("cellgen-check.1")) {
        assert!(
            text.contains("--format") && text.contains("--kustomize"),
            "{text}"
        );
    }

    let before = tree_hash(dir.path());
    let again = run_ok(dir.path(), &["man", "--out-dir", "man/man1"]);
    assert_mentions(&again, &["Nothing to change."]);
    assert_tree_unchanged(&before, &tree_hash(dir.path()), "a second `man --out-dir`");
}

/// A full disk (or a closed pipe) is an error naming stdout, never a panic.
#[cfg(target_os = "linux")]
#[test]
fn a_failing_stdout_is_an_error_not_a_panic() {
    let dir = temp_dir();
    for args in [
        &["completions", "zsh"][..],
        &["man"][..],
        &["schema", "cellgen.yaml"][..],
    ] {
        let full = fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cellgen"));
        isolate(&mut cmd);
        let out = cmd
            .arg("-C")
            .arg(dir.path())
            .args(args)
            .stdout(full)
            .output()
            .unwrap();
        let message = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {message}");
        assert!(
            message.contains("cannot write to standard output") && !message.contains("panicked"),
            "{args:?}: {message}"
        );
    }
}
