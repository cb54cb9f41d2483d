//! `cellgen add-component`, `remove-component` and `list`.
//!
//! Golden trees in the style of cargo's `cargo_add` tests: `tests/fixtures/components/<case>/in`
//! is a hand-edited repository, `out` the whole tree expected after the command. A mismatch shows
//! a unified diff per file; `CELLGEN_BLESS=1 cargo test --test components` rewrites `out` (review
//! the result with `git diff` before committing it).
//!
//! Then every catalog component in a fresh cell against the real tools (kubectl kustomize,
//! HashiCorp's HCL parser, the Flux CRDs, `cellgen check`), bad input, cell resolution and `list`.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use support::*;

const PROD: &str = "eu-west-2-prod";
const DEV: &str = "us-east-1-dev";

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/components")
}

/// Copies the files (and directories) under `from` into `to`, which may exist.
fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from).min_depth(1) {
        let entry = entry.unwrap_or_else(|e| panic!("cannot walk {}: {e}", from.display()));
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            fs::create_dir_all(&target).unwrap();
        } else {
            fs::copy(entry.path(), &target).unwrap_or_else(|e| {
                panic!(
                    "cannot copy {} to {}: {e}",
                    entry.path().display(),
                    target.display()
                )
            });
        }
    }
}

/// A temporary copy of `tests/fixtures/components/<case>/in`.
fn fixture_input(case: &str) -> tempfile::TempDir {
    let input = fixtures().join(case).join("in");
    assert!(input.is_dir(), "no fixture {}", input.display());
    let dir = temp_dir();
    copy_dir(&input, dir.path());
    dir
}

/// Runs `cellgen -C <dir> <args…>`.
fn run(dir: &Path, args: &[&str]) -> Output {
    cellgen()
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("cannot run cellgen")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs cellgen and fails the test with its output unless it succeeds; returns stdout.
#[track_caller]
fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
    assert!(
        out.status.success(),
        "`cellgen {}` failed with {}\nstdout:\n{}\nstderr:\n{}",
        args.join(" "),
        out.status,
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

/// Files of a tree as text, by relative path.
fn text_files(dir: &Path) -> BTreeMap<PathBuf, String> {
    files_of(&tree_hash(dir))
        .into_iter()
        .map(|(path, bytes)| {
            let text = String::from_utf8(bytes)
                .unwrap_or_else(|_| panic!("{} is not UTF-8", path.display()));
            (path, text)
        })
        .collect()
}

/// Directories without any entry: git cannot hold them, so a command must not leave them behind.
fn empty_dirs(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_dir())
        .filter(|e| fs::read_dir(e.path()).is_ok_and(|mut d| d.next().is_none()))
        .map(|e| e.path().strip_prefix(dir).unwrap().to_path_buf())
        .collect()
}

fn unified_diff(path: &Path, expected: &str, actual: &str) -> String {
    similar::TextDiff::from_lines(expected, actual)
        .unified_diff()
        .context_radius(3)
        .header(
            &format!("expected/{}", path.display()),
            &format!("actual/{}", path.display()),
        )
        .to_string()
}

fn blessing() -> bool {
    std::env::var("CELLGEN_BLESS").is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Compares the tree at `actual` with `expected` (a fixture's `out`), file by file, failing with
/// a unified diff of every difference. With `CELLGEN_BLESS=1`, replaces `expected` instead.
#[track_caller]
fn assert_tree_matches(actual: &Path, expected: &Path, context: &str) {
    let empty = empty_dirs(actual);
    assert!(
        empty.is_empty(),
        "{context}: empty directories left behind: {empty:?}"
    );
    if blessing() {
        if expected.exists() {
            fs::remove_dir_all(expected).unwrap();
        }
        fs::create_dir_all(expected).unwrap();
        copy_dir(actual, expected);
        eprintln!("blessed {}", expected.display());
        return;
    }
    assert!(
        expected.is_dir(),
        "{context}: no expected tree at {} (run with CELLGEN_BLESS=1 to create it, then review it)",
        expected.display()
    );
    let want = text_files(expected);
    let got = text_files(actual);
    let paths: BTreeSet<&PathBuf> = want.keys().chain(got.keys()).collect();
    let mut report = String::new();
    for path in paths {
        match (want.get(path), got.get(path)) {
            (Some(w), Some(g)) if w == g => {}
            (Some(w), Some(g)) => report.push_str(&unified_diff(path, w, g)),
            (Some(w), None) => {
                report.push_str(&format!("missing: {}\n", path.display()));
                report.push_str(&unified_diff(path, w, ""));
            }
            (None, Some(g)) => {
                report.push_str(&format!("unexpected: {}\n", path.display()));
                report.push_str(&unified_diff(path, "", g));
            }
            (None, None) => unreachable!(),
        }
    }
    assert!(
        report.is_empty(),
        "{context}: the tree differs from {} (if the change is intended, rerun with \
         CELLGEN_BLESS=1 and review the diff):\n{report}",
        expected.display()
    );
}

/// Runs `commands` in a copy of the case's `in` tree and compares the result with its `out`.
/// Returns the copy (for further checks) and each command's stdout.
fn fixture_case(case: &str, commands: &[&[&str]]) -> (tempfile::TempDir, Vec<String>) {
    let dir = fixture_input(case);
    let outputs = commands
        .iter()
        .map(|args| run_ok(dir.path(), args))
        .collect();
    let context = commands
        .iter()
        .map(|c| format!("`cellgen {}`", c.join(" ")))
        .collect::<Vec<_>>()
        .join(", then ");
    assert_tree_matches(
        dir.path(),
        &fixtures().join(case).join("out"),
        &format!("{case}: {context}"),
    );
    (dir, outputs)
}

#[track_caller]
fn assert_contains(haystack: &str, needles: &[&str], what: &str) {
    for needle in needles {
        assert!(
            haystack.contains(needle),
            "{what}: no `{needle}` in:\n{haystack}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Golden trees
// ---------------------------------------------------------------------------------------------

#[test]
fn add_karpenter_to_a_hand_edited_cell() {
    let (_dir, out) = fixture_case("add-karpenter", &[&["add-component", "karpenter"]]);
    assert_contains(
        &out[0],
        &[
            "created  terraform/cells/eu-west-2-prod/karpenter.tf",
            "updated  cellgen.yaml",
            "Added karpenter to cell eu-west-2-prod.",
            "schema 3 -> 4",
        ],
        "add-component karpenter",
    );
}

#[test]
fn add_a_second_component() {
    let (_dir, out) = fixture_case("add-second", &[&["add-component", "external-dns"]]);
    assert_contains(
        &out[0],
        &[
            "Added external-dns to cell eu-west-2-prod.",
            "schema 2 -> 3",
        ],
        "add-component external-dns",
    );
}

#[test]
fn remove_a_component_that_was_not_the_last_bump() {
    // karpenter's keys came with schema 2, external-dns's with 3: dropping karpenter's makes a
    // key set no earlier number stood for, so the schema moves on to 4.
    let (_dir, out) = fixture_case("remove", &[&["remove-component", "karpenter"]]);
    assert_contains(
        &out[0],
        &[
            "deleted  components/karpenter/controllers/helmrelease.yaml",
            "deleted  terraform/cells/eu-west-2-prod/karpenter.tf",
            "Removed karpenter from cell eu-west-2-prod.",
            "schema 3 -> 4",
        ],
        "remove-component karpenter",
    );
}

#[test]
fn removing_from_one_of_two_cells_keeps_the_shared_component_and_its_keys() {
    let (dir, out) = fixture_case(
        "shared-remove",
        &[&["remove-component", "karpenter", "--cell", DEV]],
    );
    let root = dir.path();
    assert!(
        !out[0].contains("schema"),
        "the key set did not change, yet the schema moved:\n{}",
        out[0]
    );
    // Independent of the golden tree: what must hold whatever `out` says.
    for file in [
        "components/karpenter/controllers/helmrelease.yaml",
        "components/karpenter/configs/nodepool.yaml",
        "terraform/cells/eu-west-2-prod/karpenter.tf",
    ] {
        assert!(root.join(file).is_file(), "{file} was removed");
    }
    assert!(
        !root
            .join("terraform/cells/us-east-1-dev/karpenter.tf")
            .exists()
    );
    let config = read(&root.join("cellgen.yaml"));
    assert_contains(
        &config,
        &["  karpenter_node_role:", "schema: 2"],
        "cellgen.yaml",
    );
    let dev_meta = read(&root.join("terraform/cells/us-east-1-dev/cell-metadata.tf"));
    assert!(
        !dev_meta.contains("karpenter"),
        "the dev cell still has karpenter in its ConfigMap:\n{dev_meta}"
    );
    let prod_meta = read(&root.join("terraform/cells/eu-west-2-prod/cell-metadata.tf"));
    assert_contains(
        &prod_meta,
        &["karpenter_node_role", "module.karpenter,"],
        "prod cell-metadata.tf",
    );

    // Removing it from the last cell takes the shared directory and the keys too.
    let out = run_ok(root, &["remove-component", "karpenter", "--cell", PROD]);
    assert_contains(&out, &["schema 2 -> 1"], "remove from the last cell");
    assert!(!root.join("components/karpenter").exists());
    assert!(!read(&root.join("cellgen.yaml")).contains("karpenter"));
    for cell in [PROD, DEV] {
        let meta = read(&root.join(format!("terraform/cells/{cell}/cell-metadata.tf")));
        assert!(
            meta.contains("\"1\""),
            "{cell} keeps the old schema:\n{meta}"
        );
    }
}

#[test]
fn repository_defined_component_add_and_remove() {
    let (dir, out) = fixture_case("repo-defined", &[&["add-component", "team-agent"]]);
    assert_contains(
        &out[0],
        &[
            "created  terraform/cells/eu-west-2-prod/team-agent.tf",
            "Added team-agent to cell eu-west-2-prod.",
        ],
        "add-component team-agent",
    );
    let out = run_ok(dir.path(), &["remove-component", "team-agent"]);
    assert_contains(
        &out,
        &[
            "Removed team-agent from cell eu-west-2-prod.",
            "schema 4 -> 3",
        ],
        "remove-component team-agent",
    );
    // The repository's own definition is the user's: it stays.
    assert_tree_unchanged(
        &tree_hash(&fixtures().join("repo-defined/in")),
        &tree_hash(dir.path()),
        "add then remove of a repository-defined component",
    );
}

#[test]
fn add_then_remove_restores_every_file_byte_for_byte() {
    for (case, component, cell) in [
        ("add-karpenter", "karpenter", PROD),
        ("add-karpenter", "external-dns", PROD),
        ("add-karpenter", "metrics-server", PROD),
        ("add-second", "external-dns", PROD),
        ("add-second", "aws-ebs-csi-driver", PROD),
        ("remove", "cert-manager", PROD),
        ("shared-remove", "external-secrets", DEV),
        ("repo-defined", "team-agent", PROD),
    ] {
        let dir = fixture_input(case);
        let before = tree_hash(dir.path());
        run_ok(dir.path(), &["add-component", component, "--cell", cell]);
        assert!(
            tree_diff(&before, &tree_hash(dir.path())).len() > 1,
            "{case}: adding {component} changed (almost) nothing"
        );
        run_ok(dir.path(), &["remove-component", component, "--cell", cell]);
        assert_tree_unchanged(
            &before,
            &tree_hash(dir.path()),
            &format!("{case}: add-component {component}, then remove-component {component}"),
        );
    }
}

#[test]
fn adding_a_present_component_changes_nothing() {
    let dir = fixture_input("add-karpenter");
    run_ok(dir.path(), &["add-component", "karpenter"]);
    let before = tree_hash(dir.path());
    for args in [
        &["add-component", "karpenter"][..],
        &["add-component", "karpenter", "--dry-run"],
        &["add-component", "karpenter", "--with-requirements"],
    ] {
        let out = run_ok(dir.path(), args);
        assert_contains(
            &out,
            &["karpenter is already in cell eu-west-2-prod; nothing changed."],
            &args.join(" "),
        );
        assert!(
            !out.contains("updated") && !out.contains("created") && !out.contains("+++"),
            "{}: reports changes:\n{out}",
            args.join(" ")
        );
        assert_tree_unchanged(&before, &tree_hash(dir.path()), &args.join(" "));
    }
    // The inverse: removing an absent component.
    let out = run_ok(dir.path(), &["remove-component", "external-dns"]);
    assert_contains(
        &out,
        &["external-dns is not in cell eu-west-2-prod; nothing changed."],
        "remove-component of an absent component",
    );
    assert_tree_unchanged(&before, &tree_hash(dir.path()), "remove of an absent one");
}

/// Applies a unified diff (as `cellgen --dry-run` prints it, paths `a/…`/`b/…` or /dev/null) to
/// the tree at `root`. Fails on any line that does not match.
fn apply_unified_diff(root: &Path, diff: &str) {
    let lines: Vec<&str> = diff.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let Some(old) = lines[i].strip_prefix("--- ") else {
            i += 1;
            continue;
        };
        let new = lines
            .get(i + 1)
            .and_then(|l| l.strip_prefix("+++ "))
            .unwrap_or_else(|| panic!("`--- {old}` is not followed by `+++`"));
        i += 2;
        let path = if new == "/dev/null" {
            old.strip_prefix("a/").expect("old path without a/")
        } else {
            new.strip_prefix("b/").expect("new path without b/")
        };
        let file = root.join(path);
        let original = if old == "/dev/null" {
            assert!(!file.exists(), "the diff creates {path}, which exists");
            String::new()
        } else {
            read(&file)
        };
        let src: Vec<&str> = original.split_inclusive('\n').collect();
        let mut out = String::new();
        let mut at = 0; // next line of `src` to copy
        let mut last_added = false;
        while i < lines.len() && lines[i].starts_with("@@ ") {
            let header = lines[i];
            let start: usize = header[4..]
                .split([',', ' '])
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("bad hunk header `{header}`"));
            let start = start.saturating_sub(1).max(at);
            out.extend(src[at..start].iter().copied());
            at = start;
            i += 1;
            while i < lines.len() && !lines[i].starts_with("@@ ") && !lines[i].starts_with("diff ")
            {
                let line = lines[i];
                if line.starts_with("\\ No newline") {
                    if last_added && out.ends_with('\n') {
                        out.pop();
                    }
                } else if let Some(text) = line.strip_prefix('+') {
                    out.push_str(text);
                    out.push('\n');
                    last_added = true;
                } else if let Some(text) = line.strip_prefix('-').or(line.strip_prefix(' ')) {
                    let have = src.get(at).map(|l| l.trim_end_matches('\n'));
                    assert_eq!(
                        have,
                        Some(text),
                        "{path}: the diff does not apply at line {}",
                        at + 1
                    );
                    if line.starts_with(' ') {
                        out.push_str(src[at]);
                        last_added = false;
                    }
                    at += 1;
                } else {
                    break;
                }
                i += 1;
            }
        }
        out.extend(src[at..].iter().copied());
        if new == "/dev/null" {
            assert!(out.is_empty(), "{path}: deleted, but the diff keeps lines");
            fs::remove_file(&file).unwrap();
        } else {
            fs::create_dir_all(file.parent().unwrap()).unwrap();
            fs::write(&file, out).unwrap();
        }
    }
}

#[test]
fn dry_run_prints_a_unified_diff_and_writes_nothing() {
    for (case, args) in [
        (
            "add-karpenter",
            &["add-component", "karpenter", "--dry-run"][..],
        ),
        ("remove", &["remove-component", "karpenter", "--dry-run"]),
        (
            "shared-remove",
            &["remove-component", "karpenter", "--cell", DEV, "--dry-run"],
        ),
    ] {
        let dir = fixture_input(case);
        let before = tree_hash(dir.path());
        let out = run(dir.path(), args);
        assert!(out.status.success(), "{case}: {}", stderr(&out));
        let diff = stdout(&out);
        assert_contains(&stderr(&out), &["nothing was written"], case);
        assert_tree_unchanged(
            &before,
            &tree_hash(dir.path()),
            &format!("{case}: --dry-run"),
        );
        assert!(
            diff.contains("\n--- a/cells/")
                && diff.contains("\n+++ b/cells/")
                && diff.contains("\n@@ -"),
            "{case}: --dry-run does not print a unified diff:\n{diff}"
        );
        assert!(
            !diff.contains("Added") && !diff.contains("Removed"),
            "{case}: --dry-run claims it changed something:\n{diff}"
        );
        // Applied to the input, the diff gives exactly what the command writes.
        apply_unified_diff(dir.path(), &diff);
        for empty in empty_dirs(dir.path()) {
            fs::remove_dir(dir.path().join(empty)).unwrap();
        }
        let expected = fixture_input(case);
        let real: Vec<&str> = args.iter().copied().filter(|a| *a != "--dry-run").collect();
        run_ok(expected.path(), &real);
        assert_eq!(
            text_files(dir.path()),
            text_files(expected.path()),
            "{case}: the --dry-run diff, applied, differs from what `cellgen {}` writes",
            real.join(" ")
        );
    }
}

#[test]
fn new_with_components_equals_new_then_add_component() {
    let url = ["--git-url", GIT_URL];
    // A first cell.
    let together = temp_dir();
    run_ok(
        together.path(),
        &[
            &["new", PROD, "--components", "karpenter,external-dns"][..],
            &url,
        ]
        .concat(),
    );
    let apart = temp_dir();
    run_ok(apart.path(), &[&["new", PROD][..], &url].concat());
    run_ok(apart.path(), &["add-component", "karpenter"]);
    run_ok(apart.path(), &["add-component", "external-dns"]);
    let diff = tree_diff(&tree_hash(apart.path()), &tree_hash(together.path()));
    assert!(
        diff.is_empty(),
        "`new --components karpenter,external-dns` differs from `new` + two `add-component`:\n  {}",
        diff.join("\n  ")
    );

    // A second cell, in a repository where one key set is already in the contract.
    run_ok(
        together.path(),
        &["new", DEV, "--components", "external-dns,cert-manager"],
    );
    run_ok(apart.path(), &["new", DEV]);
    run_ok(
        apart.path(),
        &["add-component", "external-dns", "--cell", DEV],
    );
    run_ok(
        apart.path(),
        &["add-component", "cert-manager", "--cell", DEV],
    );
    let diff = tree_diff(&tree_hash(apart.path()), &tree_hash(together.path()));
    assert!(
        diff.is_empty(),
        "second cell: `new --components` differs from `new` + `add-component`:\n  {}",
        diff.join("\n  ")
    );
}

// ---------------------------------------------------------------------------------------------
// Every catalog component, in a fresh cell, against the real tools
// ---------------------------------------------------------------------------------------------

/// `cellgen list components --format json` of a directory.
fn catalog_json(dir: &Path) -> Vec<Value> {
    let out = run_ok(dir, &["list", "components", "--format", "json"]);
    let value: Value = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("list components --format json is not JSON ({e}):\n{out}"));
    value.as_array().expect("a JSON array").clone()
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Builds every layer of `cell` the way Flux does: `spec.components` of the cell's Flux
/// Kustomization are added to the kustomization.yaml at `spec.path` (in a scratch copy of the
/// repository), then `kubectl kustomize` builds that directory. Returns (layer, spec.path,
/// rendered YAML).
fn build_layers_like_flux(root: &Path, cell: &str) -> Vec<(String, String, String)> {
    let scratch = temp_dir();
    copy_dir(root, scratch.path());
    let mut built = Vec::new();
    for layer in LAYERS {
        let file = root.join(format!("cells/{cell}/{layer}.yaml"));
        let doc = load_yaml_file(&file).remove(0).value;
        let path = doc["spec"]["path"]
            .as_str()
            .unwrap_or_else(|| panic!("{} has no spec.path", file.display()))
            .trim_start_matches("./")
            .to_string();
        let components = strings(&doc["spec"]["components"]);
        if !components.is_empty() {
            let kustomization = scratch.path().join(&path).join("kustomization.yaml");
            let mut k: serde_json::Map<String, Value> = yaml_serde::from_str(&read(&kustomization))
                .unwrap_or_else(|e| panic!("{}: not a YAML mapping: {e}", kustomization.display()));
            let listed = k
                .entry("components")
                .or_insert_with(|| Value::Array(Vec::new()));
            listed
                .as_array_mut()
                .expect("components is a list")
                .extend(components.iter().cloned().map(Value::String));
            fs::write(&kustomization, yaml_serde::to_string(&k).unwrap()).unwrap();
        }
        let rendered = kustomize_build(&scratch.path().join(&path)).unwrap_or_else(|e| {
            panic!("layer {layer} of {cell} with components {components:?}: {e}")
        });
        built.push((layer.to_string(), path, rendered));
    }
    built
}

/// Every YAML document under a directory, recursively.
fn yaml_docs_under(dir: &Path) -> Vec<YamlDoc> {
    let mut docs = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.unwrap();
        if entry.path().extension().is_some_and(|e| e == "yaml") {
            docs.extend(load_yaml_file(entry.path()));
        }
    }
    docs
}

#[test]
fn every_catalog_component_in_a_fresh_cell_passes_the_real_tools() {
    let probe = new_repo(&[PROD]);
    let catalog = catalog_json(probe.path());
    assert!(
        catalog.len() >= 8,
        "the catalog lists {} components",
        catalog.len()
    );
    let mut failures = Vec::new();
    for component in &catalog {
        let name = component["name"].as_str().expect("a name");
        let dir = new_repo(&[PROD]);
        let root = dir.path();
        let mut args = vec!["add-component", name];
        if !strings(&component["requires"]).is_empty() {
            args.push("--with-requirements");
        }
        run_ok(root, &args);

        // Flux side: the cell's layers list the component; every layer builds with it.
        let layers = strings(&component["layers"]);
        let built = build_layers_like_flux(root, PROD);
        for layer in &layers {
            let listed = strings(
                &load_yaml_file(&root.join(format!("cells/{PROD}/{layer}.yaml")))[0].value["spec"]
                    ["components"],
            );
            if !listed.contains(&format!("../../components/{name}/{layer}")) {
                failures.push(format!(
                    "{name}: cells/{PROD}/{layer}.yaml does not list it: {listed:?}"
                ));
            }
            let files = yaml_docs_under(&root.join(format!("components/{name}/{layer}")));
            let (_, path, rendered) = built.iter().find(|(l, _, _)| l == layer).unwrap();
            let objects = parse_yaml_docs(path, rendered).unwrap();
            for doc in files.iter().filter(|d| d.value["kind"] != "Component") {
                let kind = &doc.value["kind"];
                let object_name = &doc.value["metadata"]["name"];
                if !objects.iter().any(|o| {
                    o.value["kind"] == *kind && o.value["metadata"]["name"] == *object_name
                }) {
                    failures.push(format!(
                        "{name}: {kind} {object_name} ({}) is not in the build of layer {layer}",
                        doc.source
                    ));
                }
            }
        }

        // The keys the ConfigMap writes cover every ${key} of the component and of the builds.
        let tf_dir = root.join(format!("terraform/cells/{PROD}"));
        let parsed = hcl_parse_dir(&tf_dir);
        let metadata =
            &parsed["cell-metadata.tf"]["resource"]["kubernetes_config_map_v1"]["cell_metadata"][0];
        let data: BTreeSet<String> = metadata["data"]
            .as_object()
            .expect("cell-metadata.tf has data")
            .keys()
            .cloned()
            .collect();
        let mut used = BTreeSet::new();
        for entry in walkdir::WalkDir::new(root.join(format!("components/{name}"))) {
            let entry = entry.unwrap();
            if entry.file_type().is_file() {
                used.extend(substitution_variables(&read(entry.path())));
            }
        }
        for (_, _, rendered) in &built {
            used.extend(substitution_variables(rendered));
        }
        for var in used.difference(&data) {
            failures.push(format!(
                "{name}: ${{{var}}} is used, but cell-metadata.tf does not write it (data: {data:?})"
            ));
        }
        for key in component["keys"].as_object().unwrap().keys() {
            if !data.contains(key) {
                failures.push(format!("{name}: key {key} is not in cell-metadata.tf data"));
            }
        }

        // Terraform side: parses, every reference resolves, the ConfigMap waits for the identity.
        let problems = check_terraform_references(&parsed);
        failures.extend(problems.into_iter().map(|p| format!("{name}: {p}")));
        let has_identity = !component["identity"].is_null();
        if parsed.get(format!("{name}.tf")).is_some() != has_identity {
            failures.push(format!(
                "{name}: identity is {has_identity}, but {name}.tf exists: {}",
                !has_identity
            ));
        }
        let depends_on = strings(&metadata["depends_on"]);
        for dep in strings(&component["depends_on"]) {
            if !depends_on.contains(&format!("${{{dep}}}")) {
                failures.push(format!(
                    "{name}: cell-metadata's depends_on {depends_on:?} lacks {dep}"
                ));
            }
        }

        // Flux objects: the cell's layer files and the component's sources and releases.
        let mut docs = yaml_docs_under(&root.join(format!("cells/{PROD}")));
        let component_docs = yaml_docs_under(&root.join(format!("components/{name}")));
        if count_flux_objects(&component_docs) == 0 {
            failures.push(format!(
                "{name}: ships no Flux object (HelmRelease, source)"
            ));
        }
        docs.extend(component_docs);
        for (layer, _, rendered) in &built {
            docs.extend(parse_yaml_docs(&format!("{name}: layer {layer}"), rendered).unwrap());
        }
        failures.extend(validate_flux_objects(&docs));

        // And cellgen's own check agrees.
        let out = run(root, &["check"]);
        if !out.status.success() {
            failures.push(format!(
                "{name}: `cellgen check` failed ({}):\n{}{}",
                out.status,
                stdout(&out),
                stderr(&out)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// Bad input: a clear message, the right exit code, and nothing written
// ---------------------------------------------------------------------------------------------

/// A repository-defined component `team-agent` in the controllers layer: `spec` is the text of
/// its component.yaml, `kind` the kind of its layer's kustomization.yaml.
fn write_team_agent(root: &Path, spec: &str, kind: &str) {
    let dir = root.join("components/team-agent");
    fs::create_dir_all(dir.join("controllers")).unwrap();
    fs::write(dir.join("component.yaml"), spec).unwrap();
    fs::write(
        dir.join("controllers/kustomization.yaml"),
        format!(
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: {kind}\nresources:\n  - service-account.yaml\n"
        ),
    )
    .unwrap();
    fs::write(
        dir.join("controllers/service-account.yaml"),
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: team-agent\n  namespace: kube-system\n",
    )
    .unwrap();
}

const TEAM_AGENT_REQUIRES_KARPENTER: &str = "description: Team agent, scheduled on Karpenter nodes.\nrequires: [karpenter]\nlayers: [controllers]\n";

fn one_cell(root: &Path) {
    new_cell(root, &[PROD]);
}

fn two_cells(root: &Path) {
    new_cell(root, &[PROD]);
    new_cell(root, &[DEV]);
}

/// Replaces `from` (which must be there) with `to` in a file of the repository.
fn edit_file(root: &Path, file: &str, from: &str, to: &str) {
    let path = root.join(file);
    let text = read(&path);
    assert!(text.contains(from), "{file} has no `{from}`:\n{text}");
    fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

struct BadInput {
    what: &'static str,
    setup: fn(&Path),
    args: &'static [&'static str],
    code: i32,
    words: &'static [&'static str],
}

fn bad_input_cases() -> Vec<BadInput> {
    vec![
        BadInput {
            what: "unknown component",
            setup: one_cell,
            args: &["add-component", "karpentr"],
            code: 2,
            words: &[
                "unknown component `karpentr`",
                "Did you mean `karpenter`?",
                "Known components: aws-ebs-csi-driver",
            ],
        },
        BadInput {
            what: "unknown component to remove",
            setup: one_cell,
            args: &["remove-component", "karpentr"],
            code: 2,
            words: &["unknown component `karpentr`", "Did you mean `karpenter`?"],
        },
        BadInput {
            what: "unknown --cell",
            setup: two_cells,
            args: &["add-component", "karpenter", "--cell", "eu-west-2-prd"],
            code: 2,
            words: &[
                "unknown cell `eu-west-2-prd`",
                "Did you mean `eu-west-2-prod`?",
                "eu-west-2-prod, us-east-1-dev",
            ],
        },
        BadInput {
            what: "unknown --cell to remove from",
            setup: two_cells,
            args: &["remove-component", "karpenter", "--cell", "us-east-1-dve"],
            code: 2,
            words: &[
                "unknown cell `us-east-1-dve`",
                "Did you mean `us-east-1-dev`?",
            ],
        },
        BadInput {
            what: "several cells, no --cell and no terminal",
            setup: two_cells,
            args: &["add-component", "karpenter"],
            code: 2,
            words: &[
                "which cell",
                "eu-west-2-prod, us-east-1-dev",
                "no terminal",
                "--cell",
            ],
        },
        BadInput {
            what: "several cells, no --cell and no terminal (remove)",
            setup: |root| {
                two_cells(root);
                run_ok(root, &["add-component", "karpenter", "--cell", PROD]);
            },
            args: &["remove-component", "karpenter"],
            code: 2,
            words: &["which cell", "eu-west-2-prod, us-east-1-dev", "--cell"],
        },
        BadInput {
            what: "malformed layer YAML",
            setup: |root| {
                one_cell(root);
                edit_file(
                    root,
                    "cells/eu-west-2-prod/controllers.yaml",
                    "components: []",
                    "components: [../x",
                );
            },
            args: &["add-component", "karpenter"],
            code: 1,
            words: &[
                "cells/eu-west-2-prod/controllers.yaml",
                "not valid YAML",
                "line 1",
            ],
        },
        BadInput {
            what: "malformed cell-metadata.tf",
            setup: |root| {
                one_cell(root);
                edit_file(
                    root,
                    "terraform/cells/eu-west-2-prod/cell-metadata.tf",
                    "vpc_id           = module",
                    "vpc_id           = = module",
                );
            },
            args: &["add-component", "karpenter"],
            code: 1,
            words: &[
                "terraform/cells/eu-west-2-prod/cell-metadata.tf",
                "not valid HCL",
                "(line 15)",
            ],
        },
        BadInput {
            what: "cell-metadata.tf without the ConfigMap",
            setup: |root| {
                one_cell(root);
                edit_file(
                    root,
                    "terraform/cells/eu-west-2-prod/cell-metadata.tf",
                    "resource \"kubernetes_config_map_v1\" \"cell_metadata\"",
                    "resource \"kubernetes_config_map_v1\" \"metadata\"",
                );
            },
            args: &["add-component", "external-dns"],
            code: 1,
            words: &[
                "terraform/cells/eu-west-2-prod/cell-metadata.tf",
                "no `resource \"kubernetes_config_map_v1\" \"cell_metadata\"` block",
            ],
        },
        BadInput {
            what: "a requirement is missing and no --with-requirements",
            setup: |root| {
                one_cell(root);
                write_team_agent(root, TEAM_AGENT_REQUIRES_KARPENTER, "Component");
            },
            args: &["add-component", "team-agent"],
            code: 1,
            words: &[
                "component `team-agent` needs karpenter in cell `eu-west-2-prod`",
                "--with-requirements",
            ],
        },
        BadInput {
            what: "removing a component another one requires",
            setup: |root| {
                one_cell(root);
                write_team_agent(root, TEAM_AGENT_REQUIRES_KARPENTER, "Component");
                run_ok(
                    root,
                    &["add-component", "team-agent", "--with-requirements"],
                );
            },
            args: &["remove-component", "karpenter"],
            code: 1,
            words: &[
                "cell `eu-west-2-prod` still runs team-agent",
                "requires `karpenter`",
                "remove it first",
            ],
        },
        BadInput {
            what: "a repository-defined layer that is not a Kustomize Component",
            setup: |root| {
                one_cell(root);
                write_team_agent(
                    root,
                    "description: Team agent.\nlayers: [controllers]\n",
                    "Kustomization",
                );
            },
            args: &["add-component", "team-agent"],
            code: 1,
            words: &[
                "components/team-agent/controllers/kustomization.yaml",
                "is not a Kustomize Component",
                "kind: Component",
            ],
        },
        BadInput {
            what: "component.yaml with an unknown field",
            setup: |root| {
                one_cell(root);
                write_team_agent(
                    root,
                    "description: Team agent.\nlayers: [controllers]\nowner: platform\n",
                    "Component",
                );
            },
            args: &["add-component", "team-agent"],
            code: 1,
            words: &[
                "components/team-agent/component.yaml",
                "unknown field `owner`",
                "line 3",
            ],
        },
        BadInput {
            what: "component.yaml naming a layer the repository does not have",
            setup: |root| {
                one_cell(root);
                write_team_agent(
                    root,
                    "description: Team agent.\nlayers: [controllers, monitoring]\n",
                    "Component",
                );
            },
            args: &["add-component", "team-agent"],
            code: 1,
            words: &[
                "components/team-agent/component.yaml",
                "layer `monitoring` is not a layer of this repository",
                "controllers, configs, apps",
            ],
        },
    ]
}

fn run_bad_input(case: &BadInput, root: &Path) -> Vec<String> {
    let mut failures = Vec::new();
    let before = tree_hash(root);
    let out = cellgen()
        .current_dir(root)
        .args(case.args)
        .output()
        .unwrap();
    let err = stderr(&out);
    let what = format!("{} (`cellgen {}`)", case.what, case.args.join(" "));
    if out.status.code() != Some(case.code) {
        failures.push(format!(
            "{what}: exit code {:?}, expected {}\nstderr: {err}",
            out.status.code(),
            case.code
        ));
    }
    for word in case.words {
        if !err.contains(word) {
            failures.push(format!("{what}: stderr lacks `{word}`:\n{err}"));
        }
    }
    if !stdout(&out).trim().is_empty() {
        failures.push(format!(
            "{what}: printed on stdout although it failed:\n{}",
            stdout(&out)
        ));
    }
    let diff = tree_diff(&before, &tree_hash(root));
    if !diff.is_empty() {
        failures.push(format!(
            "{what}: the directory changed:\n  {}",
            diff.join("\n  ")
        ));
    }
    failures
}

#[test]
fn bad_input_fails_clearly_with_the_right_code_and_writes_nothing() {
    let mut failures = Vec::new();
    for case in &bad_input_cases() {
        let dir = temp_dir();
        (case.setup)(dir.path());
        failures.extend(run_bad_input(case, dir.path()));
        // --dry-run fails the same way.
        let mut dry = case.args.to_vec();
        dry.push("--dry-run");
        let out = cellgen()
            .current_dir(dir.path())
            .args(&dry)
            .output()
            .unwrap();
        if out.status.code() != Some(case.code) {
            failures.push(format!(
                "{} with --dry-run: exit code {:?}, expected {}",
                case.what,
                out.status.code(),
                case.code
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn with_requirements_equals_adding_the_requirement_first_and_removes_in_reverse() {
    // team-agent has a key of its own, so both components move the schema.
    let spec = format!(
        "{TEAM_AGENT_REQUIRES_KARPENTER}keys:\n  team_agent_queue:\n    description: Queue of the team agent\n    example: agent-queue\n    terraform: module.karpenter.queue_name\n"
    );
    let together = temp_dir();
    one_cell(together.path());
    write_team_agent(together.path(), &spec, "Component");
    let before = tree_hash(together.path());
    let out = run_ok(
        together.path(),
        &["add-component", "team-agent", "--with-requirements"],
    );
    assert_contains(
        &out,
        &[
            "Added karpenter, team-agent to cell eu-west-2-prod.",
            "schema 1 -> 3",
        ],
        "add-component --with-requirements",
    );

    let apart = temp_dir();
    one_cell(apart.path());
    write_team_agent(apart.path(), &spec, "Component");
    run_ok(apart.path(), &["add-component", "karpenter"]);
    run_ok(apart.path(), &["add-component", "team-agent"]);
    let diff = tree_diff(&tree_hash(apart.path()), &tree_hash(together.path()));
    assert!(
        diff.is_empty(),
        "`add-component team-agent --with-requirements` differs from adding karpenter, then team-agent:\n  {}",
        diff.join("\n  ")
    );

    // Removed in reverse, the repository is as it was, schema included.
    run_ok(together.path(), &["remove-component", "team-agent"]);
    run_ok(together.path(), &["remove-component", "karpenter"]);
    assert_tree_unchanged(
        &before,
        &tree_hash(together.path()),
        "add --with-requirements, then remove both",
    );
}

// ---------------------------------------------------------------------------------------------
// Which cell: from inside a cell's directories
// ---------------------------------------------------------------------------------------------

#[test]
fn the_cell_of_the_current_directory_is_picked_without_cell() {
    let dir = temp_dir();
    let root = dir.path();
    two_cells(root);
    fs::create_dir_all(root.join("terraform/cells/eu-west-2-prod/modules")).unwrap();
    let in_dir = |rel: &str, args: &[&str]| {
        let out = cellgen()
            .current_dir(root.join(rel))
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "`cellgen {}` in {rel} failed:\n{}",
            args.join(" "),
            stderr(&out)
        );
        stdout(&out)
    };
    let components = |cell: &str| {
        let out = run_ok(root, &["list", "--format", "json"]);
        let rows: Value = serde_json::from_str(&out).unwrap();
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["cell"] == cell)
            .map(|r| strings(&r["components"]))
            .unwrap_or_else(|| panic!("no {cell} in {out}"))
    };

    let out = in_dir("cells/us-east-1-dev", &["add-component", "karpenter"]);
    assert_contains(
        &out,
        &["Added karpenter to cell us-east-1-dev."],
        "from cells/us-east-1-dev",
    );
    assert_eq!(components(DEV), ["karpenter"]);
    assert!(components(PROD).is_empty());

    let out = in_dir(
        "terraform/cells/eu-west-2-prod",
        &["add-component", "external-dns"],
    );
    assert_contains(
        &out,
        &["Added external-dns to cell eu-west-2-prod."],
        "from terraform/cells/eu-west-2-prod",
    );
    assert_eq!(components(PROD), ["external-dns"]);

    // Deeper inside, and for remove too.
    let out = in_dir(
        "terraform/cells/eu-west-2-prod/modules",
        &["remove-component", "external-dns"],
    );
    assert_contains(
        &out,
        &["Removed external-dns from cell eu-west-2-prod."],
        "from modules/",
    );
    assert!(components(PROD).is_empty());
    assert_eq!(components(DEV), ["karpenter"]);

    // --cell wins over the directory.
    let out = in_dir(
        "cells/us-east-1-dev",
        &["add-component", "metrics-server", "--cell", PROD],
    );
    assert_contains(
        &out,
        &["Added metrics-server to cell eu-west-2-prod."],
        "--cell",
    );
    assert_eq!(components(DEV), ["karpenter"]);

    // Outside any cell directory, two cells still need --cell.
    let out = cellgen()
        .current_dir(root.join("cells"))
        .args(["add-component", "kyverno"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_contains(&stderr(&out), &["--cell"], "from cells/");
}

// ---------------------------------------------------------------------------------------------
// list
// ---------------------------------------------------------------------------------------------

/// Two cells (prod with karpenter and external-dns, dev with nothing) and a repository-defined
/// component.
fn listed_repo() -> tempfile::TempDir {
    let dir = temp_dir();
    let root = dir.path();
    two_cells(root);
    write_team_agent(
        root,
        "description: Team agent.\nlayers: [controllers]\nkeys:\n  team_agent_role_arn:\n    description: Role\n    example: arn:aws:iam::123456789012:role/x\n    terraform: aws_iam_role.team_agent.arn\nidentity:\n  namespace: team\n  service_account: agent\n",
        "Component",
    );
    run_ok(root, &["add-component", "karpenter", "--cell", PROD]);
    run_ok(root, &["add-component", "external-dns", "--cell", PROD]);
    dir
}

#[test]
fn list_cells_as_a_table_and_as_json() {
    let dir = listed_repo();
    let table = run_ok(dir.path(), &["list"]);
    assert_eq!(
        table,
        "CELL            REGION     ENVIRONMENT  COMPONENTS\n\
         eu-west-2-prod  eu-west-2  prod         external-dns, karpenter\n\
         us-east-1-dev   us-east-1  dev          -\n",
        "`cellgen list`"
    );
    assert_eq!(
        run_ok(dir.path(), &["list", "cells"]),
        table,
        "`list cells`"
    );

    let json: Value = serde_json::from_str(&run_ok(dir.path(), &["list", "--format", "json"]))
        .expect("list --format json prints JSON");
    assert_eq!(
        json,
        serde_json::json!([
            {"cell": PROD, "region": "eu-west-2", "environment": "prod",
             "components": ["external-dns", "karpenter"]},
            {"cell": DEV, "region": "us-east-1", "environment": "dev", "components": []},
        ])
    );

    // A repository without cells.
    let empty = temp_dir();
    run_ok(empty.path(), &["init", "--git-url", GIT_URL]);
    assert_contains(
        &run_ok(empty.path(), &["list"]),
        &["No cells yet", "cellgen new"],
        "list without cells",
    );
    assert_eq!(
        run_ok(empty.path(), &["list", "--format", "json"]).trim(),
        "[]"
    );
}

#[test]
fn list_components_as_a_table_and_as_json() {
    let dir = listed_repo();
    let json = catalog_json(dir.path());
    let names: Vec<&str> = json.iter().map(|c| c["name"].as_str().unwrap()).collect();
    let mut embedded: Vec<String> =
        fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/components"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("component.yaml").is_file())
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
    embedded.push("team-agent".into());
    embedded.sort();
    assert_eq!(names, embedded, "list components: names, sorted");

    let table = run_ok(dir.path(), &["list", "components"]);
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        [
            "COMPONENT",
            "ORIGIN",
            "LAYERS",
            "KEYS",
            "IDENTITY",
            "REQUIRES",
            "DESCRIPTION"
        ]
    );
    let rows: Vec<&str> = lines.collect();
    assert_eq!(
        rows.len(),
        json.len(),
        "one table row per component:\n{table}"
    );

    for component in &json {
        let name = component["name"].as_str().unwrap();
        // JSON: what component.yaml declares.
        let spec_path = if name == "team-agent" {
            dir.path().join("components/team-agent/component.yaml")
        } else {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("templates/components/{name}/component.yaml"))
        };
        let spec: Value = yaml_serde::from_str(&read(&spec_path)).unwrap();
        let origin = if name == "team-agent" {
            "repository"
        } else {
            "embedded"
        };
        assert_eq!(component["origin"], origin, "{name}: origin");
        assert_eq!(component["layers"], spec["layers"], "{name}: layers");
        let keys = |v: &Value| -> Vec<String> {
            v.as_object()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default()
        };
        assert_eq!(
            keys(&component["keys"]),
            keys(&spec["keys"]),
            "{name}: keys"
        );
        for (key, fields) in spec["keys"].as_object().into_iter().flatten() {
            assert_eq!(&component["keys"][key], fields, "{name}: key {key}");
        }
        assert_eq!(
            component["identity"]["namespace"], spec["identity"]["namespace"],
            "{name}: identity"
        );
        assert_eq!(
            component["identity"]["service_account"], spec["identity"]["service_account"],
            "{name}: identity"
        );
        assert_eq!(
            strings(&component["requires"]),
            strings(&spec["requires"]),
            "{name}: requires"
        );

        // Table: the same facts on the component's row.
        let row = rows
            .iter()
            .find(|r| r.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no row for {name}:\n{table}"));
        let layers = strings(&spec["layers"]).join(", ");
        // In declaration order (serde_json's map sorts them).
        let ordered: yaml_serde::Value = yaml_serde::from_str(&read(&spec_path)).unwrap();
        let key_list: Vec<String> = ordered
            .get("keys")
            .and_then(|k| k.as_mapping())
            .map(|m| {
                m.keys()
                    .filter_map(|k| k.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let identity = match spec["identity"].as_object() {
            Some(i) => format!(
                "{}/{}",
                i["namespace"].as_str().unwrap(),
                i["service_account"].as_str().unwrap()
            ),
            None => "-".into(),
        };
        let key_cell = if key_list.is_empty() {
            "-".to_string()
        } else {
            key_list.join(", ")
        };
        for expected in [origin, &layers, &key_cell, &identity] {
            assert!(
                row.contains(&format!("  {expected}  ")),
                "{name}: the row lacks `{expected}`:\n{row}"
            );
        }
        assert!(
            row.ends_with(spec["description"].as_str().unwrap()),
            "{name}: the row does not end with the description:\n{row}"
        );
    }
}
