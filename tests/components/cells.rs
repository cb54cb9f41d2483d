use super::bad_input::{two_cells, write_team_agent};
use super::catalog::{catalog_json, strings};
use super::*;

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
pub(crate) fn listed_repo() -> tempfile::TempDir {
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

/// The chart version the shared definition of an embedded component names (its HelmRelease's
/// `version:` or its OCIRepository's `tag:`), read from the catalog's files.
fn catalog_version(component: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("templates/components")
        .join(component)
        .join("controllers");
    for file in ["ocirepository.yaml", "helmrelease.yaml"] {
        let Ok(text) = fs::read_to_string(dir.join(file)) else {
            continue;
        };
        let field = if file == "ocirepository.yaml" {
            "tag:"
        } else {
            "version:"
        };
        if let Some(v) = text.lines().find_map(|l| {
            l.trim()
                .strip_prefix(field)
                .map(|v| v.trim().trim_matches('"'))
        }) {
            return v.to_string();
        }
    }
    panic!("no chart version in {}", dir.display())
}

#[test]
fn list_cells_as_a_table_and_as_json() {
    let dir = listed_repo();
    // One cell on a version of its own: marked `*` in the table, `own` in JSON. (With a single
    // cell running it, the shared definition would move instead.)
    run_ok(
        dir.path(),
        &["add-component", "external-dns", "--cell", DEV],
    );
    let external_dns = catalog_version("external-dns");
    run_ok(
        dir.path(),
        &["set-version", "external-dns", "1.20.0", "--cell", PROD],
    );
    let karpenter = catalog_version("karpenter");
    let table = run_ok(dir.path(), &["list"]);
    assert_eq!(
        table,
        format!(
            "CELL            REGION     ENVIRONMENT  KUBERNETES  EGRESS  VPC          SCHEMA  COMPONENTS\n\
             eu-west-2-prod  eu-west-2  prod         1.34        no      10.0.0.0/16  3       external-dns 1.20.0*, karpenter {karpenter}\n\
             us-east-1-dev   us-east-1  dev          1.34        no      10.1.0.0/16  3       external-dns {external_dns}\n\
             \n\
             * the cell's own version (`cellgen set-version`, spec.patches of its layer file); the others are the shared definition's.\n"
        ),
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
             "kubernetes_version": "1.34", "egress_gateway": false, "vpc_cidr": "10.0.0.0/16",
             "schema": 3, "components": ["external-dns", "karpenter"],
             "versions": {"external-dns": {"version": "1.20.0", "own": true},
                          "karpenter": {"version": karpenter, "own": false}}},
            {"cell": DEV, "region": "us-east-1", "environment": "dev",
             "kubernetes_version": "1.34", "egress_gateway": false, "vpc_cidr": "10.1.0.0/16",
             "schema": 3, "components": ["external-dns"],
             "versions": {"external-dns": {"version": external_dns, "own": false}}},
        ])
    );

    // A repository without cells.
    let empty = temp_dir();
    run_ok(
        empty.path(),
        &["init", "--git-url", GIT_URL, "--admin-role-arn", ADMIN_ROLE],
    );
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
        // Narrow (issue 21): layers, keys and identity are in the JSON.
        ["COMPONENT", "VERSION", "REQUIRES", "DESCRIPTION"]
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
        let requires = strings(&spec["requires"]);
        let requires = if requires.is_empty() {
            "-".to_string()
        } else {
            requires.join(", ")
        };
        assert!(
            row.contains(&format!("  {requires}  ")),
            "{name}: the row lacks `{requires}`:\n{row}"
        );
        // The chart version each cell starts from, for every embedded component with a chart.
        let version = row.split_whitespace().nth(1).unwrap();
        if origin == "embedded" && name != "team-agent" {
            assert!(
                version == "-" || version.trim_start_matches('v').split('.').count() >= 2,
                "{name}: version `{version}`:\n{row}"
            );
        }
        assert!(
            row.ends_with(spec["description"].as_str().unwrap()),
            "{name}: the row does not end with the description:\n{row}"
        );
    }
}
