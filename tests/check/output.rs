//! The report: one finding per place in every format, GitHub's annotation limits, the job
//! summary, and counts in words.

use std::fs;

use super::support::*;
use super::*;

/// `n` distinct typos, one per line of a new ConfigMap in the shared `configs` layer.
fn typos(root: &Path, n: usize) -> String {
    let file = "infrastructure/configs/typos.yaml";
    let mut text = String::from(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: typos\n  namespace: platform-system\ndata:\n",
    );
    for i in 0..n {
        text.push_str(&format!("  k{i}: ${{typo_{i}}}\n"));
    }
    fs::write(root.join(file), text).unwrap();
    edit(
        root,
        "infrastructure/configs/kustomization.yaml",
        "resources:\n",
        "resources:\n  - typos.yaml\n",
    );
    file.to_string()
}

#[test]
fn github_annotations_stay_within_the_limits_and_the_rest_is_summarised() {
    let dir = repo();
    let root = dir.path();
    let file = typos(root, 12);
    let summary_dir = temp_dir();
    let summary_path = summary_dir.path().join("summary.md");
    fs::write(&summary_path, "earlier step output\n").unwrap();
    let out = cellgen()
        .arg("-C")
        .arg(root)
        .args(["check", "--format", "github"])
        .env("GITHUB_STEP_SUMMARY", &summary_path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let count = |prefix: &str| stdout.lines().filter(|l| l.starts_with(prefix)).count();
    // GitHub shows 10 error annotations per step: 12 findings (each in both cells) give 10
    // annotations, 2 plain log lines and a notice that says so.
    assert_eq!(count("::error "), 10, "{stdout}");
    assert_eq!(count("error[missing-key] "), 2, "{stdout}");
    assert_eq!(count("::notice "), 1, "{stdout}");
    assert!(stdout.contains("2 errors not annotated"), "{stdout}");
    assert!(
        stdout.ends_with("cellgen check: 2 cells checked: 12 errors, 0 warnings\n"),
        "{stdout}"
    );
    for l in stdout.lines().filter(|l| l.starts_with("::error ")) {
        assert!(l.starts_with(&format!("::error file={file},line=")), "{l}");
        assert!(
            l.ends_with(&format!("[cells {PROD}, {DEV} (layer configs)]")),
            "{l}"
        );
    }
    // The job summary keeps what was there and lists every finding.
    let markdown = read(&summary_path);
    assert!(
        markdown.starts_with("earlier step output\n## cellgen check\n"),
        "{markdown}"
    );
    assert_eq!(
        markdown.matches("| ❌ | `missing-key` |").count(),
        12,
        "{markdown}"
    );
}

#[test]
fn text_output_names_every_cell_once_and_counts_in_words() {
    let dir = repo();
    let root = dir.path();
    let file = typos(root, 1);
    let line = line_in(root, &file, "${typo_0}");
    let r = run(root, &[]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stdout.matches("error[missing-key]").count(),
        1,
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(&format!(
            "  --> {file}:{line}\n   = cells {PROD}, {DEV} (layer configs)\n"
        )),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.ends_with("2 cells checked: 1 error, 0 warnings\n"),
        "{}",
        r.stdout
    );

    // One cell: singular words.
    let r = run(root, &[DEV]);
    assert!(
        r.stdout.ends_with("1 cell checked: 1 error, 0 warnings\n"),
        "{}",
        r.stdout
    );
    let r = run(root, &[DEV, "--format", "github"]);
    assert!(
        r.stdout
            .ends_with("cellgen check: 1 cell checked: 1 error, 0 warnings\n"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_finding_in_different_layers_of_different_cells_lists_each() {
    let dir = repo();
    let root = dir.path();
    // The same file in two layers: PROD's apps and DEV's configs (as a component-less path).
    let layer = format!("cells/{DEV}/configs.yaml");
    edit(
        root,
        &layer,
        "  path: ./infrastructure/configs\n",
        "  path: ./apps\n",
    );
    edit(
        root,
        &layer,
        "  components:\n    - ../../components/kyverno/configs\n",
        "  components: []\n",
    );
    edit(root, "apps/namespace.yaml", "${cell_name}", "${cel_name}");
    let (code, report) = check_json(root, &[]);
    assert_eq!(code, 1, "{}", summary(&report));
    let found = with_code(&report, "missing-key");
    assert_eq!(found.len(), 1, "{}", summary(&report));
    assert_eq!(
        found[0]["places"],
        serde_json::json!([
            {"cell": PROD, "layer": "apps"},
            {"cell": DEV, "layer": "apps"},
            {"cell": DEV, "layer": "configs"},
        ])
    );
    let r = run(root, &[]);
    assert!(
        r.stdout.contains(&format!(
            "= cell {PROD} (layer apps), cell {DEV} (layers apps, configs)\n"
        )),
        "{}",
        r.stdout
    );
}

#[test]
fn json_and_github_formats_carry_file_and_line() {
    let dir = repo();
    let file = "apps/namespace.yaml";
    edit(dir.path(), file, "${cell_name}", "${cell}");
    let line = line_in(dir.path(), file, "${cell}");

    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 1);
    assert_eq!(report["errors"], 1);
    assert_eq!(report["warnings"], 0);
    assert_eq!(findings(&report).len(), 1, "{}", summary(&report));
    let f = &findings(&report)[0];
    for field in ["severity", "code", "file", "message"] {
        assert!(f[field].is_string(), "{field} missing in {f}");
    }
    assert_eq!(f["file"], file);
    assert_eq!(f["line"], line);
    assert_eq!(f["cells"], serde_json::json!([PROD, DEV]));
    assert_eq!(f["layers"], serde_json::json!(["apps"]));

    let summary_file = temp_dir();
    let summary_path = summary_file.path().join("summary.md");
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args(["check", "--format", "github"])
        .env("GITHUB_STEP_SUMMARY", &summary_path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(
        lines[0].starts_with(&format!(
            "::error file={file},line={line},title=cellgen missing-key::"
        )) && lines[0].ends_with(&format!("[cells {PROD}, {DEV} (layer apps)]")),
        "{}",
        lines[0]
    );
    assert_eq!(
        lines[1],
        "cellgen check: 2 cells checked: 1 error, 0 warnings"
    );
    // The job summary: the same finding, as a Markdown table row.
    let markdown = read(&summary_path);
    assert!(
        markdown.starts_with("## cellgen check\n\n2 cells checked: 1 error, 0 warnings\n")
            && markdown.contains(&format!(
                "| ❌ | `missing-key` | `{file}:{line}` | cells {PROD}, {DEV} (layer apps) |"
            )),
        "{markdown}"
    );
}

#[test]
fn named_cells_only_and_usage_errors() {
    let dir = repo();
    let file = "components/kyverno/controllers/namespace.yaml";
    edit(dir.path(), file, "${cell_name}", "${cellname}");
    // kyverno runs in both cells; the report covers the one asked for.
    let (code, report) = check_json(dir.path(), &[DEV]);
    assert_eq!(code, 1);
    assert_eq!(report["cells"], serde_json::json!([DEV]));
    let line = line_in(dir.path(), file, "${cellname}");
    assert_at(&report, "missing-key", file, line, &[DEV]);
    assert!(
        with_code(&report, "unused-key").is_empty(),
        "unused keys are judged over all cells only"
    );

    let r = run(dir.path(), &["eu-west-2-prd"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        r.stderr.contains("unknown cell `eu-west-2-prd`")
            && r.stderr.contains("Did you mean `eu-west-2-prod`?"),
        "{}",
        r.stderr
    );
    let r = run(dir.path(), &["--format", "xml"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--format"), "{}", r.stderr);
}

#[test]
fn generated_workflow_runs_cellgen_check() {
    let dir = repo();
    let docs = load_yaml_file(&dir.path().join(".github/workflows/cellgen.yaml"));
    let workflow = &docs[0].value;
    assert!(
        workflow["on"].get("pull_request").is_some(),
        "the workflow does not run on pull requests: {workflow}"
    );
    let runs: Vec<String> = workflow["jobs"]
        .as_object()
        .expect("jobs")
        .values()
        .flat_map(|job| job["steps"].as_array().cloned().unwrap_or_default())
        .filter_map(|step| step["run"].as_str().map(str::to_string))
        .collect();
    let check = runs
        .iter()
        .find(|r| r.trim_start().starts_with("cellgen check"))
        .unwrap_or_else(|| panic!("no step runs `cellgen check`: {runs:?}"));
    // Its arguments are ones cellgen accepts, and it passes on the clean repository.
    let args: Vec<&str> = check.split_whitespace().skip(2).collect();
    let r = run(dir.path(), &args);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

/// A repository without cells (a fresh `init`, or the last cell removed) checked nothing, which
/// is not a pass: an error finding in every format, exit 1, nothing written.
#[test]
fn a_repository_without_cells_is_an_error_in_every_format() {
    let dir = temp_dir();
    let root = dir.path();
    let out = cellgen()
        .arg("-C")
        .arg(root)
        .args(["init", "--git-url", GIT_URL, "--admin-role-arn", ADMIN_ROLE])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let before = tree_hash(root);
    let text = run(root, &[]);
    assert_eq!(text.code, 1, "{}{}", text.stdout, text.stderr);
    for word in [
        "error[no-cells]: no cell was found under cells/",
        "add one with `cellgen new NAME`",
        "0 cells checked: 1 error, 0 warnings",
    ] {
        assert!(text.stdout.contains(word), "{word}: {}", text.stdout);
    }
    let (code, report) = check_json(root, &[]);
    assert_eq!(code, 1);
    assert_eq!(report["errors"], 1, "{report}");
    assert_eq!(with_code(&report, "no-cells").len(), 1, "{report}");
    let github = run(root, &["--format", "github"]);
    assert_eq!(github.code, 1);
    assert!(
        github
            .stdout
            .contains("::error file=cells,title=cellgen no-cells::no cell was found under cells/"),
        "{}",
        github.stdout
    );
    assert_tree_unchanged(&before, &tree_hash(root), "check without cells");
}
