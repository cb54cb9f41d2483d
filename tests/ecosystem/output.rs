//! Colours follow `--color` and `NO_COLOR`; progress is drawn only on a terminal, never for
//! `--format json`. Colour never changes the text: without its escape codes, coloured output
//! is exactly the plain output.

use std::fs;

use super::*;

/// A repository whose `check` reports an error (a misspelt key) and a warning.
fn failing_repo() -> tempfile::TempDir {
    let dir = new_repo(&[PROD]);
    let apps = dir.path().join("apps");
    fs::write(
        apps.join("typo.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: typo\n  namespace: apps\ndata:\n  cluster: ${clustr_name}\n",
    )
    .unwrap();
    let kustomization = read(&apps.join("kustomization.yaml"));
    fs::write(
        apps.join("kustomization.yaml"),
        format!("{kustomization}  - typo.yaml\n"),
    )
    .unwrap();
    dir
}

/// Removes SGR (colour) sequences, `ESC [ <digits and ;> m`; other control sequences (a
/// progress bar's line clearing) stay.
fn strip_colour(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find(ESC) {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let params = after.strip_prefix('[').map(|p| {
            p.len()
                - p.trim_start_matches(|c: char| c.is_ascii_digit() || c == ';')
                    .len()
        });
        match params {
            Some(n) if after[1 + n..].starts_with('m') => rest = &after[2 + n..],
            _ => {
                out.push(ESC);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn has_colour(text: &str) -> bool {
    strip_colour(text) != text
}

/// The commands whose output uses colour: check's report, a dry-run diff, the summary of a
/// change, an error, clap's help. Each is run from a fresh copy of the state it needs.
fn outputs(color: &[&str], env: &[(&str, &str)]) -> Vec<(String, String, String)> {
    let dir = failing_repo();
    let root = dir.path();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("check", vec!["check"]),
        ("dry-run", vec!["add-component", "karpenter", "--dry-run"]),
        ("add", vec!["add-component", "karpenter"]),
        ("error", vec!["add-component", "karpentr"]),
        ("help", vec!["check", "--help"]),
        ("usage error", vec!["chek"]),
    ];
    cases
        .into_iter()
        .map(|(what, args)| {
            let mut cmd = cellgen();
            cmd.arg("-C").arg(root).args(color).args(&args);
            for (k, v) in env {
                cmd.env(k, v);
            }
            let out = cmd.output().unwrap();
            (what.to_string(), stdout(&out), stderr(&out))
        })
        .collect()
}

#[test]
fn no_color_and_color_never_print_no_escape_codes() {
    for (color, env, what) in [
        (&[][..], &[("NO_COLOR", "1")][..], "NO_COLOR=1"),
        (&["--color", "never"][..], &[][..], "--color never"),
        (
            &["--color=never"][..],
            &[("CLICOLOR_FORCE", "1")][..],
            "--color=never, CLICOLOR_FORCE=1",
        ),
        (&[][..], &[][..], "auto through a pipe"),
    ] {
        for (case, out, err) in outputs(color, env) {
            assert!(
                !out.contains(ESC) && !err.contains(ESC),
                "{what}: `{case}` printed escape codes:\n{out:?}\n{err:?}"
            );
        }
    }
}

#[test]
fn color_always_colours_every_output_that_uses_colour_and_only_that() {
    let plain = outputs(&["--color", "never"], &[]);
    for (color, env, what) in [
        (&["--color", "always"][..], &[][..], "--color always"),
        (
            &["--color=always"][..],
            &[("NO_COLOR", "1")][..],
            "--color=always over NO_COLOR",
        ),
    ] {
        let coloured = outputs(color, env);
        for ((case, out, err), (_, plain_out, plain_err)) in coloured.iter().zip(&plain) {
            let text = format!("{out}{err}");
            assert!(has_colour(&text), "{what}: `{case}` has no colour:\n{text}");
            assert_eq!(
                &strip_colour(out),
                plain_out,
                "{what}: `{case}` stdout differs"
            );
            assert_eq!(
                &strip_colour(err),
                plain_err,
                "{what}: `{case}` stderr differs"
            );
        }
        let check = &coloured[0].1;
        assert!(
            check.contains(&format!("{ESC}[31m{ESC}[1merror[missing-key]{ESC}[0m:")),
            "{what}: check's error head is not red:\n{check:?}"
        );
        let error = &coloured[3].2;
        assert!(
            error.starts_with(&format!("{ESC}[31m{ESC}[1merror:")),
            "{what}: {error:?}"
        );
    }
}

/// Runs cellgen on a PTY (stdout and stderr both the terminal) and returns what it printed.
#[cfg(unix)]
fn on_terminal(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    use std::time::Duration;

    use expectrl::{Eof, Session};

    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_cellgen"));
    cmd.current_dir(dir).args(args).env("TERM", "xterm");
    isolate(&mut cmd);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut session = Session::spawn(cmd).expect("cannot start cellgen on a PTY");
    session.set_expect_timeout(Some(Duration::from_secs(60)));
    let found = session.expect(Eof).expect("cellgen did not exit");
    // At the end of the stream the Eof needle matches everything read.
    String::from_utf8_lossy(found.get(0).unwrap_or_default()).into_owned()
}

#[cfg(unix)]
#[test]
fn on_a_terminal_check_draws_progress_and_colours_unless_told_not_to() {
    let dir = failing_repo();
    let root = dir.path();
    new_cell(root, &[DEV]);

    let text = on_terminal(root, &["check"], &[]);
    assert!(
        text.contains("/2 cells"),
        "no progress on a terminal:\n{text:?}"
    );
    assert!(
        has_colour(&text),
        "auto on a terminal has no colour:\n{text:?}"
    );
    assert!(text.contains("2 cells checked"), "{text:?}");

    let text = on_terminal(root, &["check"], &[("NO_COLOR", "1")]);
    assert!(!has_colour(&text), "NO_COLOR on a terminal:\n{text:?}");
    assert!(
        text.contains("/2 cells"),
        "NO_COLOR turns colour off, not progress"
    );

    let text = on_terminal(root, &["check", "--format", "json"], &[]);
    assert!(
        !text.contains("cells ["),
        "progress with --format json:\n{text:?}"
    );
    assert!(text.trim_start().starts_with('{'), "{text:?}");

    let text = on_terminal(root, &["check"], &[("TERM", "dumb")]);
    assert!(
        !text.contains("cells ["),
        "progress on a dumb terminal:\n{text:?}"
    );
}

#[test]
fn piped_check_prints_no_progress() {
    let dir = failing_repo();
    for format in ["text", "json", "github"] {
        let out = run(
            dir.path(),
            &["--color", "always", "check", "--format", format],
        );
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(stderr(&out), "", "--format {format}: stderr is not empty");
    }
}

/// A reader that stops early (`cellgen ... | head -1`) ends cellgen quietly, as it ends other
/// Unix tools: no panic, nothing on stderr. Checked before and after the output is complete.
#[test]
fn a_closed_pipe_ends_cellgen_quietly() {
    use std::process::{Command, Stdio};
    for args in [
        &["completions", "bash"][..],
        &["man"][..],
        &["list", "components", "--format", "json"][..],
    ] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cellgen"));
        isolate(&mut cmd);
        let mut child = cmd
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close our end of stdout before cellgen writes anything.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "cellgen {}: {stderr}",
            args.join(" ")
        );
        assert_ne!(out.status.code(), Some(101), "cellgen {}", args.join(" "));
    }
}

/// Commands print through one path (`src/commands/ui/out.rs`: `out!`, `outln!`, `errln!`), which
/// turns a write error into a clear error instead of the panic of `println!`. No other source
/// file may print to stdout, and no command or `main` may print to stderr around it.
#[test]
fn every_command_prints_through_the_one_output_path() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    let mut found = Vec::new();
    for path in files {
        let rel = path
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel == "commands/ui/out.rs" {
            continue;
        }
        let command_layer = rel.starts_with("commands/") || rel == "main.rs" || rel == "cli.rs";
        for (i, line) in read(&path).lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let stdout = ["println!", "print!("]
                .iter()
                .any(|m| code.contains(m) && !code.contains(&format!("e{m}")));
            let stderr = code.contains("eprintln!") || code.contains("eprint!(");
            let raw = code.contains("io::stdout()") && !rel.starts_with("commands/ui/");
            if stdout || raw || (command_layer && stderr) {
                found.push(format!("src/{rel}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "print through crate::outln!/out!/errln! (src/commands/ui/out.rs) instead:\n{}",
        found.join("\n")
    );
}
