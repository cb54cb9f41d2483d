//! Hostile input: input that never ends or is far larger than any real file. Every reader has a
//! bound: 32 MiB for a file a flag names or stdin (`root::limited`) and for any YAML text
//! (`ports::yaml`, the one entry point to the parsers), checked before anything is parsed; the
//! error names the input and the limit. `verify` of a ConfigMap of 100,000 keys is one pass.

use std::fs;
use std::time::Instant;

use super::edits::{CELL, cell};
use super::*;

const LIMIT: &str = "more than 33554432 bytes (32 MiB)";

/// Appends copies of `line` to the file at `path` until it holds more than 32 MiB.
fn grow_past_limit(path: &Path, line: &str) {
    let mut text = fs::read_to_string(path).unwrap_or_default();
    while text.len() <= 32 * 1024 * 1024 {
        text.push_str(line);
    }
    fs::write(path, text).unwrap();
}

/// A regular file of more than 32 MiB: YAML that parses, were it read.
fn huge_values(dir: &Path) {
    cell(dir);
    fs::write(dir.join("values.yaml"), "a: b\n").unwrap();
    grow_past_limit(
        &dir.join("values.yaml"),
        &format!("k{}: v\n", "x".repeat(1020)),
    );
}

/// cellgen.yaml grown past the YAML limit (comments, so only the size is wrong).
fn huge_config(dir: &Path) {
    cell(dir);
    grow_past_limit(
        &dir.join("cellgen.yaml"),
        &format!("# {}\n", "x".repeat(1020)),
    );
}

/// A case that must fail at the limit, naming `input`.
fn refused(
    name: &'static str,
    setup: fn(&Path),
    args: &'static [&'static str],
    words: &'static [&'static str],
) -> Case {
    Case {
        name,
        setup,
        args,
        expect: Expect::Fails { code: 1, words },
    }
}

pub fn cases() -> Vec<Case> {
    vec![
        refused(
            "verify --from /dev/zero ends at the limit",
            cell,
            &["verify", "--from", "/dev/zero"],
            &["/dev/zero: ", LIMIT, "give a regular file"],
        ),
        refused(
            "envsubst --from /dev/zero ends at the limit",
            cell,
            &["envsubst", "--from", "/dev/zero"],
            &["/dev/zero: ", LIMIT],
        ),
        refused(
            "render --values /dev/zero ends at the limit",
            cell,
            &["render", CELL, "--values", "/dev/zero"],
            &["/dev/zero: ", LIMIT],
        ),
        refused(
            "verify --from a file over 32 MiB is refused",
            huge_values,
            &["verify", "--from", "values.yaml"],
            &["values.yaml: ", LIMIT],
        ),
        refused(
            "a cellgen.yaml over 32 MiB is refused before parsing",
            huge_config,
            &["list"],
            &["cellgen.yaml: ", "more than the 33554432 bytes (32 MiB)"],
        ),
    ]
}

#[test]
fn unbounded_input_table() {
    for case in cases() {
        let started = Instant::now();
        let problem = run_case(&case);
        eprintln!("{:>6.1} s  {}", started.elapsed().as_secs_f64(), case.name);
        assert!(problem.is_none(), "{}", problem.unwrap());
    }
}

/// Before, each key's line was a search of the whole text: 100,000 keys took minutes. The time is
/// printed, not asserted (machines differ); the runner's timeout catches a return of the
/// quadratic search.
#[test]
fn verify_of_100k_keys_is_one_pass() {
    let dir = temp_dir();
    cell(dir.path());
    let mut text = String::from(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cell-metadata\n  namespace: flux-system\ndata:\n  cell_name: eu-west-2-prod\n",
    );
    for i in 0..100_000 {
        text.push_str(&format!("  extra_{i}: v{i}\n"));
    }
    fs::write(dir.path().join("cm.yaml"), &text).unwrap();
    let started = Instant::now();
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args(["verify", "--from", "cm.yaml", "--format", "json"])
        .timeout(CASE_TIMEOUT)
        .output()
        .unwrap();
    eprintln!(
        "verify of a ConfigMap of 100,000 keys: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = report.to_string();
    // The last key is reported, at its own line (8 lines come before the first extra key).
    assert!(
        text.contains("`extra_99999`"),
        "{}",
        &text[..text.len().min(2000)]
    );
    assert!(
        text.contains("100007"),
        "the line of extra_99999 is not reported"
    );
}
