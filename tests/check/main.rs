//! `cellgen check` on repositories generated with `cellgen new`, each broken in one way: every
//! finding is asserted with its code, the source file and line a person has to edit (the
//! `${...}` as written, not the rendered object), the cells and layers it breaks (one finding per
//! place), and the did-you-mean where there is one. Exit codes: 0 clean (warnings allowed),
//! 1 findings, 2 usage.
//!
//! contract.rs: the key contract and substitution; flux_objects.rs: Flux objects against the
//! CRDs and what cellgen cannot apply; references.rs: dependsOn, sources, namespaces, Secrets;
//! output.rs: the formats.

#[path = "../support/mod.rs"]
mod support;

mod contract;
mod flux_objects;
mod output;
mod read_once;
mod references;

use std::fs;
use std::path::Path;

use serde_json::Value;
use support::*;

const PROD: &str = "eu-west-2-prod";
const DEV: &str = "us-east-1-dev";

/// Two cells sharing the layers: PROD with three components, DEV with one.
fn repo() -> tempfile::TempDir {
    new_repo(&[
        &format!("{PROD} --components karpenter,kyverno,metrics-server"),
        &format!("{DEV} --components kyverno"),
    ])
}

fn metadata_tf(cell: &str) -> String {
    format!("terraform/cells/{cell}/cell-metadata.tf")
}

/// Replaces the only occurrence of `from` in a repository file.
#[track_caller]
fn edit(root: &Path, rel: &str, from: &str, to: &str) {
    let path = root.join(rel);
    let text = read(&path);
    assert_eq!(
        text.matches(from).count(),
        1,
        "{rel} should contain `{from}` exactly once:\n{text}"
    );
    fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

/// The 1-based line of the only line of a repository file that contains `needle`.
#[track_caller]
fn line_in(root: &Path, rel: &str, needle: &str) -> u64 {
    let text = read(&root.join(rel));
    let lines: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(lines.len(), 1, "`{needle}` should be on one line of {rel}");
    lines[0] as u64
}

/// The 1-based line of the only line of a repository file that is exactly `text`.
#[track_caller]
fn line_is(root: &Path, rel: &str, text: &str) -> u64 {
    let content = read(&root.join(rel));
    let lines: Vec<usize> = content
        .lines()
        .enumerate()
        .filter(|(_, l)| *l == text)
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(lines.len(), 1, "`{text}` should be one line of {rel}");
    lines[0] as u64
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(root: &Path, args: &[&str]) -> Run {
    let out = cellgen()
        .arg("-C")
        .arg(root)
        .arg("check")
        .args(args)
        .output()
        .expect("cannot run cellgen");
    Run {
        code: out.status.code().expect("cellgen was killed"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `cellgen check --format json <args>`: the exit code and the parsed report.
fn check_json(root: &Path, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let r = run(root, &all);
    let report: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| {
        panic!(
            "--format json printed no JSON ({e}):\n{}\nstderr:\n{}",
            r.stdout, r.stderr
        )
    });
    (r.code, report)
}

fn findings(report: &Value) -> &Vec<Value> {
    report["findings"].as_array().expect("findings is a list")
}

/// The findings with this code.
fn with_code<'a>(report: &'a Value, code: &str) -> Vec<&'a Value> {
    findings(report)
        .iter()
        .filter(|f| f["code"] == code)
        .collect()
}

/// Every finding, one line each, for failure messages.
fn summary(report: &Value) -> String {
    findings(report)
        .iter()
        .map(|f| {
            format!(
                "{} {} {}:{} [{} / {}] {}",
                f["severity"].as_str().unwrap_or(""),
                f["code"].as_str().unwrap_or(""),
                f["file"].as_str().unwrap_or(""),
                f["line"],
                strings(&f["cells"]).join(","),
                strings(&f["layers"]).join(","),
                f["message"].as_str().unwrap_or("")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The strings of a JSON list.
fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect()
}

/// Whether a finding breaks `cell`.
fn breaks(f: &Value, cell: &str) -> bool {
    strings(&f["cells"]).iter().any(|c| c == cell)
}

/// Asserts the findings with `code` are exactly one, at `file:line`, listing exactly `cells`
/// (one finding per place, however many cells share it), and returns it.
#[track_caller]
fn assert_at<'a>(
    report: &'a Value,
    code: &str,
    file: &str,
    line: u64,
    cells: &[&str],
) -> Vec<&'a Value> {
    let found = with_code(report, code);
    let got: Vec<(String, Value, Vec<String>)> = found
        .iter()
        .map(|f| {
            (
                f["file"].as_str().unwrap_or("").to_string(),
                f["line"].clone(),
                strings(&f["cells"]),
            )
        })
        .collect();
    let mut want_cells: Vec<String> = cells.iter().map(|c| c.to_string()).collect();
    want_cells.sort();
    assert_eq!(
        got,
        vec![(file.to_string(), Value::from(line), want_cells)],
        "`{code}` findings (file, line, cells) differ; all findings:\n{}",
        summary(report)
    );
    found
}
