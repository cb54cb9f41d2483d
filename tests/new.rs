//! `cellgen new`: what it generates (golden files), that the result passes the real tools
//! (kubectl kustomize, HashiCorp's HCL parser, the Flux CRDs), how it treats an existing tree
//! (--dry-run, --force), and how it fails on bad input without touching anything.

mod support;

use std::fs;
use std::path::{Path, PathBuf};

use support::*;

const PROD: &str = "eu-west-2-prod";
const STAGING: &str = "us-east-1-staging";

/// The whole tree as one text: a header per file, then its contents. The cellgen version is
/// redacted so a release does not rewrite every golden file.
fn render_tree(files: &[(&PathBuf, &Vec<u8>)]) -> String {
    let version = env!("CARGO_PKG_VERSION");
    let mut out = String::new();
    for (path, bytes) in files {
        let text = String::from_utf8((*bytes).clone())
            .unwrap_or_else(|_| panic!("{} is not UTF-8", path.display()));
        out.push_str(&format!("=== {} ===\n", path.display()));
        // Editor schemas follow the config types; tests/ecosystem checks their contents.
        if let Some(schema) = cellgen::model::schema::SchemaFile::ALL
            .into_iter()
            .find(|s| s.path() == **path)
        {
            assert_eq!(text, schema.json(), "{} is stale", path.display());
            out.push_str(&format!("[`cellgen schema {}`]\n\n", schema.file_name()));
            continue;
        }
        out.push_str(&text.replace(version, "[VERSION]"));
        if !text.ends_with('\n') {
            out.push_str("\n[no newline at end of file]\n");
        }
        out.push('\n');
    }
    out
}

/// The files of `cells/<cell>`: one Flux Kustomization per layer, the kustomization.yaml
/// listing them, and with an egress gateway the cell's CiliumEgressGatewayPolicy.
fn cell_dir_files(cell: &str, egress: bool) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = LAYERS
        .iter()
        .map(|l| Path::new("cells").join(cell).join(format!("{l}.yaml")))
        .collect();
    files.push(Path::new("cells").join(cell).join("kustomization.yaml"));
    if egress {
        files.push(Path::new("cells").join(cell).join("egress-gateway.yaml"));
    }
    files.sort();
    files
}

#[test]
fn golden_tree_for_two_cells_sharing_the_layers() {
    let dir = temp_dir();
    let out = new_cell(dir.path(), &[PROD, "--no-input"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("created  cells/eu-west-2-prod/apps.yaml")
            && stdout.contains(&format!("Cell {PROD} is ready")),
        "the summary does not list what was created:\n{stdout}"
    );
    let first = files_of(&tree_hash(dir.path()));
    insta::assert_snapshot!(
        "tree_eu_west_2_prod",
        render_tree(&first.iter().collect::<Vec<_>>())
    );

    // The second cell only adds its own files: the shared layers, cellgen.yaml and the first
    // cell stay byte for byte as they were.
    new_cell(dir.path(), &[STAGING, "--egress-gateway"]);
    let second = files_of(&tree_hash(dir.path()));
    for (path, bytes) in &first {
        assert_eq!(
            second.get(path),
            Some(bytes),
            "{} changed when {STAGING} was added",
            path.display()
        );
    }
    let added: Vec<(&PathBuf, &Vec<u8>)> = second
        .iter()
        .filter(|(p, _)| !first.contains_key(*p))
        .collect();
    let outside: Vec<&PathBuf> = added
        .iter()
        .map(|(p, _)| *p)
        .filter(|p| {
            !p.starts_with(Path::new("cells").join(STAGING))
                && !p.starts_with(Path::new("terraform/cells").join(STAGING))
                && *p != &Path::new(".cellgen/cells").join(format!("{STAGING}.json"))
        })
        .collect();
    assert!(
        outside.is_empty(),
        "adding {STAGING} wrote files outside its own directories: {outside:?}"
    );
    insta::assert_snapshot!("tree_us_east_1_staging_added", render_tree(&added));

    // Nothing of the layers is copied under cells/: a cell directory holds one Flux
    // Kustomization per layer and the kustomization.yaml listing them (and the egress policy of
    // a cell with an egress gateway).
    for (cell, egress) in [(PROD, false), (STAGING, true)] {
        let in_cell: Vec<PathBuf> = second
            .keys()
            .filter(|p| p.starts_with(Path::new("cells").join(cell)))
            .cloned()
            .collect();
        assert_eq!(
            in_cell,
            cell_dir_files(cell, egress),
            "unexpected files in cells/{cell}"
        );
        for layer in LAYERS {
            let doc = &load_yaml_file(&dir.path().join(format!("cells/{cell}/{layer}.yaml")))[0];
            let path = doc.value["spec"]["path"].as_str().unwrap_or_default();
            let shared = path.trim_start_matches("./");
            assert!(
                !shared.starts_with("cells/")
                    && dir.path().join(shared).join("kustomization.yaml").is_file(),
                "cells/{cell}/{layer}.yaml syncs `{path}`, not a shared layer directory"
            );
        }
    }
    // Egress only where it was asked for.
    assert!(
        !dir.path()
            .join(format!("terraform/cells/{PROD}/egress.tf"))
            .exists()
    );
    assert!(
        dir.path()
            .join(format!("terraform/cells/{STAGING}/egress.tf"))
            .is_file()
    );
}

/// Two cells, one with an egress gateway, shared by the checks below.
fn two_cells() -> tempfile::TempDir {
    new_repo(&[PROD, &format!("{STAGING} --egress-gateway")])
}

#[test]
fn every_layer_of_every_cell_builds_with_kustomize_and_uses_only_contract_keys() {
    let dir = two_cells();
    let root = dir.path();
    let cells = cell_names(root);
    assert_eq!(cells, [PROD, STAGING]);
    for cell in &cells {
        // The cell directory itself: exactly one Flux Kustomization per layer, and the egress
        // gateway policy where the cell has one.
        let cell_dir = root.join("cells").join(cell);
        let built = kustomize_build(&cell_dir).unwrap_or_else(|e| panic!("cells/{cell}: {e}"));
        let docs = parse_yaml_docs(&format!("kubectl kustomize cells/{cell}"), &built).unwrap();
        let mut names: Vec<String> = docs
            .iter()
            .map(|d| {
                format!(
                    "{}/{}",
                    d.value["kind"].as_str().unwrap_or_default(),
                    d.value["metadata"]["name"].as_str().unwrap_or_default()
                )
            })
            .collect();
        names.sort();
        let mut expected: Vec<String> = LAYERS
            .iter()
            .map(|l| format!("Kustomization/{l}"))
            .collect();
        if cell == STAGING {
            expected.push("CiliumEgressGatewayPolicy/egress-gateway".into());
        }
        expected.sort();
        assert_eq!(
            names, expected,
            "cells/{cell} does not build to one object per layer (and its egress policy)"
        );
        let problems = validate_flux_objects(&docs);
        assert!(problems.is_empty(), "{}", problems.join("\n"));

        // The keys cell-metadata.tf writes for this cell.
        let metadata = hcl_parse_dir(&root.join("terraform/cells").join(cell));
        let data = &metadata["cell-metadata.tf"]["resource"]["kubernetes_config_map_v1"]["cell_metadata"]
            [0]["data"];
        let keys: Vec<&String> = data
            .as_object()
            .expect("cell-metadata has no data")
            .keys()
            .collect();

        for layer in LAYERS {
            let file = cell_dir.join(format!("{layer}.yaml"));
            let doc = &load_yaml_file(&file)[0];
            let path = doc.value["spec"]["path"]
                .as_str()
                .unwrap_or_else(|| panic!("{} has no spec.path", file.display()));
            let layer_dir = root.join(path.trim_start_matches("./"));
            let rendered = kustomize_build(&layer_dir)
                .unwrap_or_else(|e| panic!("layer {layer} of {cell} ({path}): {e}"));
            let objects = parse_yaml_docs(path, &rendered).unwrap();
            assert!(
                !objects.is_empty(),
                "layer {layer} ({path}) renders no object"
            );
            for var in substitution_variables(&rendered) {
                assert!(
                    keys.iter().any(|k| **k == var),
                    "layer {layer} ({path}) uses ${{{var}}}, which cell-metadata of {cell} does not write (keys: {keys:?})"
                );
            }
        }
    }
}

#[test]
fn every_terraform_file_parses_and_every_reference_resolves() {
    let dir = two_cells();
    for (cell, egress) in [(PROD, false), (STAGING, true)] {
        let tf_dir = dir.path().join("terraform/cells").join(cell);
        let parsed = hcl_parse_dir(&tf_dir);
        let on_disk: Vec<String> = fs::read_dir(&tf_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tf") || n.ends_with(".tfvars"))
            .collect();
        let parsed_files = parsed.as_object().unwrap();
        assert_eq!(
            parsed_files.len(),
            on_disk.len(),
            "{cell}: parsed {:?}, on disk {on_disk:?}",
            parsed_files.keys().collect::<Vec<_>>()
        );
        assert_eq!(
            parsed_files.contains_key("egress.tf"),
            egress,
            "{cell}: egress.tf"
        );
        let problems = check_terraform_references(&parsed);
        assert!(
            problems.is_empty(),
            "terraform/cells/{cell}:\n{}",
            problems.join("\n")
        );
        let tfvars = &parsed["terraform.tfvars"];
        assert_eq!(tfvars["name"], cell);
        assert_eq!(tfvars["git_url"], GIT_URL);
        let cilium = parsed["cni.tf"]["resource"]["helm_release"]["cilium"][0]["values"][0]
            .as_str()
            .unwrap_or_default();
        assert_eq!(
            cilium.contains("egressGateway"),
            egress,
            "{cell}: Cilium's egress gateway setting does not follow --egress-gateway:\n{cilium}"
        );
    }
}

#[test]
fn every_generated_flux_object_validates_against_the_crds() {
    let dir = two_cells();
    let mut docs = Vec::new();
    for cell in cell_names(dir.path()) {
        for entry in fs::read_dir(dir.path().join("cells").join(&cell)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "yaml") {
                docs.extend(load_yaml_file(&path));
            }
        }
    }
    assert_eq!(
        count_flux_objects(&docs),
        2 * LAYERS.len(),
        "expected one Flux Kustomization per layer and cell"
    );
    let problems = validate_flux_objects(&docs);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// An existing tree: --dry-run, a second run, --force
// ---------------------------------------------------------------------------------------------

#[test]
fn dry_run_prints_a_diff_and_writes_nothing() {
    // In an empty directory: the scaffold and the cell.
    let dir = temp_dir();
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args(["new", PROD, "--dry-run", "--git-url", GIT_URL])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for expected in [
        "--- /dev/null\n+++ b/cellgen.yaml\n",
        "+++ b/cells/eu-west-2-prod/apps.yaml\n",
        "+++ b/terraform/cells/eu-west-2-prod/cluster.tf\n",
        "+  url: ssh://git@github.com/acme/infra.git\n",
        "@@ -0,0 +1,",
    ] {
        assert!(
            stdout.contains(expected),
            "no `{expected}` in the diff:\n{stdout}"
        );
    }
    assert!(stderr.contains("nothing was written"), "{stderr}");
    assert!(
        tree_hash(dir.path()).is_empty(),
        "--dry-run wrote {:?}",
        tree_hash(dir.path()).keys().collect::<Vec<_>>()
    );

    // In an existing repository: only the new cell's files, nothing written.
    let dir = new_repo(&[PROD]);
    let before = tree_hash(dir.path());
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args(["new", STAGING, "--egress-gateway", "--dry-run"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("+++ b/terraform/cells/us-east-1-staging/egress.tf\n"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("b/cellgen.yaml"),
        "the diff touches cellgen.yaml:\n{stdout}"
    );
    assert_tree_unchanged(&before, &tree_hash(dir.path()), "new --dry-run");
}

#[test]
fn a_second_run_fails_naming_the_cell_and_force_without_changes_writes_nothing() {
    let dir = new_repo(&[PROD]);
    let before = tree_hash(dir.path());
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args(["new", PROD])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    for expected in [
        "cell `eu-west-2-prod` already exists",
        "cells/eu-west-2-prod",
        "--force",
    ] {
        assert!(stderr.contains(expected), "no `{expected}` in: {stderr}");
    }
    assert_tree_unchanged(&before, &tree_hash(dir.path()), "a second `new`");

    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args(["new", PROD, "--force"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains("created") && !stdout.contains("updated"),
        "--force on an unchanged cell reports changes:\n{stdout}"
    );
    assert_tree_unchanged(
        &before,
        &tree_hash(dir.path()),
        "new --force with no changes",
    );
}

#[test]
fn force_keeps_edited_files_and_regenerates_deleted_ones() {
    let dir = new_repo(&[PROD]);
    let root = dir.path();
    let edited = PathBuf::from(format!("cells/{PROD}/apps.yaml"));
    let deleted = PathBuf::from(format!("terraform/cells/{PROD}/outputs.tf"));
    let original_deleted = fs::read(root.join(&deleted)).unwrap();
    let mut text = read(&root.join(&edited));
    text.push_str("# tuned by hand\n");
    fs::write(root.join(&edited), &text).unwrap();
    fs::remove_file(root.join(&deleted)).unwrap();
    let before = tree_hash(root);

    let out = cellgen()
        .arg("-C")
        .arg(root)
        .args(["new", PROD, "--force"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        read(&root.join(&edited)),
        text,
        "--force overwrote the edited {}",
        edited.display()
    );
    assert!(
        stdout.contains(&format!("kept  {}", edited.display())),
        "--force does not say it kept {}:\n{stdout}",
        edited.display()
    );
    assert_eq!(
        fs::read(root.join(&deleted)).ok(),
        Some(original_deleted),
        "--force did not regenerate the deleted {}",
        deleted.display()
    );
    let after = tree_hash(root);
    let diff = tree_diff(&before, &after);
    assert_eq!(
        diff,
        [format!("added    {}", deleted.display())],
        "--force changed more than the deleted file"
    );
}

// ---------------------------------------------------------------------------------------------
// Bad input: a clear message, the right exit code, and nothing written
// ---------------------------------------------------------------------------------------------

struct BadInput {
    what: &'static str,
    setup: fn(&Path),
    args: Vec<String>,
    code: i32,
    words: &'static [&'static str],
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn nothing(_: &Path) {}

fn init_repo(dir: &Path) {
    let out = cellgen()
        .arg("-C")
        .arg(dir)
        .args(["init", "--git-url", GIT_URL])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn with_prod(dir: &Path) {
    new_cell(dir, &[PROD]);
}

/// A repository whose cellgen.yaml has `from` replaced by `to`.
fn edit_config(dir: &Path, from: &str, to: &str) {
    init_repo(dir);
    let path = dir.join("cellgen.yaml");
    let text = read(&path);
    assert!(
        text.contains(from),
        "cellgen.yaml has no `{from}` to replace:\n{text}"
    );
    fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

fn bad_input_cases() -> Vec<BadInput> {
    let with_url = |name: &str| args(&["new", name, "--git-url", GIT_URL]);
    vec![
        BadInput {
            what: "empty name",
            setup: nothing,
            args: with_url(""),
            code: 2,
            words: &["invalid cell name ``", "empty", "eu-west-2-prod"],
        },
        BadInput {
            what: "uppercase name",
            setup: nothing,
            args: with_url("EU-west-2-prod"),
            code: 2,
            words: &[
                "invalid cell name `EU-west-2-prod`",
                "`E` is not allowed",
                "lowercase",
            ],
        },
        BadInput {
            what: "`..` in the name",
            setup: init_repo,
            args: with_url("../eu-west-2-prod"),
            code: 2,
            words: &["invalid cell name", "path separator or `..`"],
        },
        BadInput {
            what: "slash in the name",
            setup: nothing,
            args: with_url("eu-west-2/prod"),
            code: 2,
            words: &["invalid cell name `eu-west-2/prod`", "path separator"],
        },
        BadInput {
            what: "over-long name",
            setup: nothing,
            args: with_url("ap-southeast-2-productionenvironment"),
            code: 2,
            words: &["invalid cell name", "36 characters long", "limit is 32"],
        },
        BadInput {
            what: "unknown region",
            setup: nothing,
            args: with_url("eu-wset-2-prod"),
            code: 2,
            words: &[
                "`eu-wset-2` is not an AWS region",
                "Did you mean `eu-west-2-prod`?",
            ],
        },
        BadInput {
            what: "unknown environment",
            setup: with_prod,
            args: with_url("eu-west-2-qa"),
            code: 2,
            words: &[
                "`qa` is not an environment",
                "dev, staging, prod",
                "environments",
            ],
        },
        BadInput {
            what: "existing cell",
            setup: with_prod,
            args: args(&["new", PROD]),
            code: 1,
            words: &["cell `eu-west-2-prod` already exists", "--force"],
        },
        BadInput {
            what: "cellgen.yaml is not YAML",
            setup: |dir| edit_config(dir, "schema: 1", "schema: [1"),
            args: args(&["new", PROD]),
            code: 1,
            words: &["cellgen.yaml:"],
        },
        BadInput {
            what: "unknown field in cellgen.yaml",
            setup: |dir| edit_config(dir, "schema: 1", "schema: 1\nlayerz: []"),
            args: args(&["new", PROD]),
            code: 1,
            words: &["cellgen.yaml", "unknown field `layerz`"],
        },
        BadInput {
            what: "layer depends on an unknown layer",
            setup: |dir| edit_config(dir, "dependsOn: [configs]", "dependsOn: [confgs]"),
            args: args(&["new", PROD]),
            code: 1,
            words: &[
                "cellgen.yaml:",
                "layer `apps` depends on `confgs`",
                "not a layer listed before it",
            ],
        },
        BadInput {
            what: "-C is a file",
            setup: |dir| fs::write(dir.join("file"), "x").unwrap(),
            args: args(&["-C", "file", "new", PROD, "--git-url", GIT_URL]),
            code: 2,
            words: &["invalid value for -C", "is not a directory"],
        },
        BadInput {
            what: "-C does not exist",
            setup: nothing,
            args: args(&["-C", "missing", "new", PROD, "--git-url", GIT_URL]),
            code: 2,
            words: &["invalid value for -C", "missing is not a directory"],
        },
        BadInput {
            what: "no --git-url and no terminal",
            setup: nothing,
            args: args(&["new", PROD]),
            code: 2,
            words: &["Git URL", "no terminal", "pass --git-url"],
        },
        BadInput {
            what: "invalid --git-url",
            setup: nothing,
            args: args(&["new", PROD, "--git-url", "not a url"]),
            code: 2,
            words: &[
                "invalid value for --git-url",
                "`not a url` is not a Git URL",
            ],
        },
        BadInput {
            what: "invalid --kubernetes-version",
            setup: with_prod,
            args: args(&["new", STAGING, "--kubernetes-version", "1.x"]),
            code: 2,
            words: &[
                "invalid value for --kubernetes-version",
                "`1.x`",
                "major.minor",
            ],
        },
        BadInput {
            what: "invalid --state-bucket",
            setup: nothing,
            args: args(&[
                "new",
                PROD,
                "--git-url",
                GIT_URL,
                "--state-bucket",
                "Bad_Bucket",
            ]),
            code: 2,
            words: &["invalid value for --state-bucket", "Bad_Bucket"],
        },
        BadInput {
            what: "misspelt flag",
            setup: nothing,
            args: args(&["new", PROD, "--egres-gateway"]),
            code: 2,
            words: &["unexpected argument '--egres-gateway'", "--egress-gateway"],
        },
        BadInput {
            what: "missing cell name",
            setup: nothing,
            args: args(&["new"]),
            code: 2,
            words: &["required", "<NAME>"],
        },
    ]
}

/// Writes that fail after the plan is made: nothing of the plan may be left behind.
fn write_failure_cases() -> Vec<BadInput> {
    let with_url = |name: &str| args(&["new", name, "--git-url", GIT_URL]);
    vec![
        BadInput {
            what: "`terraform` is a file, so terraform/cells/<cell> cannot be created",
            setup: |dir| {
                init_repo(dir);
                fs::write(dir.join("terraform"), "not a directory").unwrap();
            },
            args: args(&["new", PROD]),
            code: 1,
            words: &["cannot write", "terraform/cells", "Not a directory"],
        },
        BadInput {
            what: "`terraform` is a file, in an empty directory (scaffold and cell)",
            setup: |dir| fs::write(dir.join("terraform"), "not a directory").unwrap(),
            args: with_url(PROD),
            code: 1,
            words: &["cannot write", "terraform/cells", "Not a directory"],
        },
    ]
}

fn run_bad_input(case: &BadInput, dir: &Path) -> Vec<String> {
    let mut failures = Vec::new();
    let before = tree_hash(dir);
    let out = cellgen()
        .current_dir(dir)
        .args(&case.args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let what = format!("{} (`cellgen {}`)", case.what, case.args.join(" "));
    if out.status.code() != Some(case.code) {
        failures.push(format!(
            "{what}: exit code {:?}, expected {}\nstderr: {stderr}",
            out.status.code(),
            case.code
        ));
    }
    for word in case.words {
        if !stderr.contains(word) {
            failures.push(format!("{what}: stderr lacks `{word}`:\n{stderr}"));
        }
    }
    if !stdout.trim().is_empty() {
        failures.push(format!(
            "{what}: printed on stdout although it failed:\n{stdout}"
        ));
    }
    // anyhow prints the cause chain; a message that embeds its own cause shows it twice.
    if let Some(i) = stderr.find("(os error")
        && stderr[i + 1..].contains("(os error")
    {
        failures.push(format!("{what}: the OS error is printed twice:\n{stderr}"));
    }
    let diff = tree_diff(&before, &tree_hash(dir));
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
    let cases = bad_input_cases();
    assert!(cases.len() >= 12);
    let mut failures = Vec::new();
    for case in &cases {
        let dir = temp_dir();
        (case.setup)(dir.path());
        failures.extend(run_bad_input(case, dir.path()));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_write_failure_mid_plan_writes_nothing() {
    let mut failures = Vec::new();
    for case in &write_failure_cases() {
        let dir = temp_dir();
        (case.setup)(dir.path());
        failures.extend(run_bad_input(case, dir.path()));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn no_input_accepts_the_usual_true_values_from_the_environment() {
    for value in ["1", "true", "yes"] {
        let dir = temp_dir();
        let out = cellgen()
            .env("CELLGEN_NO_INPUT", value)
            .arg("-C")
            .arg(dir.path())
            .args(["new", PROD])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("no terminal to ask on"),
            "CELLGEN_NO_INPUT={value} is not taken as \"no input\":\n{stderr}"
        );
    }
}

#[cfg(unix)]
#[test]
fn an_unwritable_directory_fails_and_writes_nothing() {
    use std::os::unix::fs::PermissionsExt;

    let dir = temp_dir();
    init_repo(dir.path());
    let set_mode =
        |mode| fs::set_permissions(dir.path(), fs::Permissions::from_mode(mode)).unwrap();
    set_mode(0o555);
    // Root ignores permissions: find out by trying.
    let probe = dir.path().join(".probe");
    if fs::write(&probe, "x").is_ok() {
        fs::remove_file(&probe).unwrap();
        set_mode(0o755);
        support::tools::skip_environment(
            "the read-only repository root",
            "this user can write to a read-only directory (root?)",
        );
        return;
    }
    let case = BadInput {
        what: "read-only repository root",
        setup: nothing,
        args: args(&["new", PROD]),
        code: 1,
        words: &["cannot write", "Permission denied"],
    };
    let failures = run_bad_input(&case, dir.path());
    set_mode(0o755);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

// ---------------------------------------------------------------------------------------------
// The interactive path, on a terminal
// ---------------------------------------------------------------------------------------------

#[cfg(unix)]
#[test]
fn prompts_on_a_terminal_and_uses_the_answers() {
    use std::time::Duration;

    use expectrl::{Eof, Session, WaitStatus};

    let dir = temp_dir();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_cellgen"));
    cmd.current_dir(dir.path())
        .args(["new", "eu-west-2-dev"])
        .env_remove("CELLGEN_NO_INPUT")
        .env("TERM", "dumb");
    isolate(&mut cmd);
    let mut session = Session::spawn(cmd).expect("cannot start cellgen on a PTY");
    session.set_expect_timeout(Some(Duration::from_secs(30)));

    let expect = |session: &mut Session, text: &str| {
        session
            .expect(text)
            .unwrap_or_else(|e| panic!("cellgen never asked `{text}`: {e}"));
    };
    expect(&mut session, "Git URL Flux syncs from");
    session.send_line("not a url").unwrap();
    expect(&mut session, "is not a Git URL");
    expect(&mut session, "Git URL Flux syncs from");
    // The scp-like form is rewritten to ssh://.
    session.send_line("git@github.com:acme/infra.git").unwrap();
    expect(&mut session, "IAM roles that administer the clusters");
    session
        .send_line("arn:aws:sts::123456789012:assumed-role/admin/me")
        .unwrap();
    expect(&mut session, "session (assumed-role) ARN");
    expect(&mut session, "IAM roles that administer the clusters");
    session
        .send_line(
            "arn:aws:iam::123456789012:role/platform-admin, arn:aws:iam::123456789012:role/ci",
        )
        .unwrap();
    expect(&mut session, "public API endpoint");
    session.send_line("10.20.0.0/16,192.0.2.0/24").unwrap();
    expect(&mut session, "Route53 hosted zones");
    session.send_line("Example.com").unwrap();
    expect(&mut session, "is not a hosted zone name");
    expect(&mut session, "Route53 hosted zones");
    session.send_line("example.com, dev.example.org").unwrap();
    expect(&mut session, "Kubernetes version");
    session.send_line("1.33").unwrap();
    expect(&mut session, "egress gateway");
    session.send("y").unwrap();
    // The component multi-select: toggle the first entry (aws-ebs-csi-driver) and confirm.
    expect(&mut session, "Optional components");
    session.send(" ").unwrap();
    session.send("\r").unwrap();
    expect(&mut session, "Cell eu-west-2-dev is ready");
    session.expect(Eof).expect("cellgen did not exit");
    let status = session.get_process().wait().unwrap();
    assert!(
        matches!(status, WaitStatus::Exited(_, 0)),
        "cellgen exited with {status:?}"
    );

    let root = dir.path();
    let config = read(&root.join("cellgen.yaml"));
    assert!(
        config.contains("url: ssh://git@github.com/acme/infra.git"),
        "the Git URL answer is not in cellgen.yaml:\n{config}"
    );
    for answer in [
        "    - arn:aws:iam::123456789012:role/platform-admin\n    - arn:aws:iam::123456789012:role/ci\n",
        "    - 10.20.0.0/16\n    - 192.0.2.0/24\n",
        "dns:\n  zones:\n    dev: [\"example.com\", \"dev.example.org\"]\n",
    ] {
        assert!(
            config.contains(answer),
            "the answer `{answer}` is not in cellgen.yaml:\n{config}"
        );
    }
    let tfvars = read(&root.join("terraform/cells/eu-west-2-dev/terraform.tfvars"));
    assert!(
        tfvars.contains("kubernetes_version = \"1.33\"")
            && tfvars.contains("git_url            = \"ssh://git@github.com/acme/infra.git\""),
        "the answers are not in terraform.tfvars:\n{tfvars}"
    );
    assert!(
        root.join("terraform/cells/eu-west-2-dev/egress.tf")
            .is_file(),
        "answered yes to the egress gateway, but there is no egress.tf"
    );
    assert!(
        root.join("terraform/cells/eu-west-2-dev/aws-ebs-csi-driver.tf")
            .is_file()
            && read(&root.join("cells/eu-west-2-dev/controllers.yaml"))
                .contains("- ../../components/aws-ebs-csi-driver/controllers"),
        "chose aws-ebs-csi-driver in the multi-select, but the cell does not run it"
    );
}
