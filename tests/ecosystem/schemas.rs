//! JSON Schemas for cellgen.yaml and component.yaml: printed by `cellgen schema`, kept in
//! `.cellgen/schemas/` and named by a `# yaml-language-server: $schema=` first line; every file
//! cellgen generates or embeds validates, and the schema rejects what cellgen rejects.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::*;
use cellgen::model::schema::{MODELINE_PREFIX, SchemaFile};

fn validator(file: SchemaFile) -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(&file.json()).expect("the schema is JSON");
    jsonschema::validator_for(&schema).expect("the schema compiles")
}

/// YAML text as the JSON value a schema validates.
fn yaml_value(text: &str) -> Value {
    yaml_serde::from_str(text).unwrap_or_else(|e| panic!("not YAML ({e}):\n{text}"))
}

/// Every validation error of `text`, one per line (empty when it is valid).
fn errors(validator: &jsonschema::Validator, text: &str) -> String {
    validator
        .iter_errors(&yaml_value(text))
        .map(|e| format!("at `{}`: {e}", e.instance_path()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[track_caller]
fn assert_valid(file: SchemaFile, what: &str, text: &str) {
    let problems = errors(&validator(file), text);
    assert!(
        problems.is_empty(),
        "{what} does not validate:\n{problems}\n\n{text}"
    );
}

#[test]
fn the_schema_command_prints_what_a_repository_keeps_and_its_files_point_at() {
    let dir = new_repo(&[PROD]);
    let root = dir.path();
    for (name, file) in [
        ("cellgen.yaml", SchemaFile::Config),
        ("component.yaml", SchemaFile::Component),
    ] {
        let printed = run_ok(root, &["schema", name]);
        assert_eq!(printed, file.json(), "`cellgen schema {name}`");
        assert_eq!(
            read(&root.join(file.path())),
            printed,
            "{} differs from `cellgen schema {name}`",
            file.path()
        );
        // Outside a repository too: the schema is compiled in.
        assert_eq!(run_ok(temp_dir().path(), &["schema", name]), printed);
    }

    // cellgen.yaml's first line names its schema, relative to the file as yaml-language-server
    // resolves it; a component.yaml's line would name the component schema the same way.
    let config = read(&root.join("cellgen.yaml"));
    let first = config.lines().next().unwrap();
    let target = first
        .strip_prefix(MODELINE_PREFIX)
        .unwrap_or_else(|| panic!("cellgen.yaml does not start with the modeline: {first}"));
    assert_eq!(
        fs::read_to_string(root.join(target)).unwrap(),
        SchemaFile::Config.json()
    );
    let component_file = camino::Utf8Path::new("components/billing/component.yaml");
    fs::create_dir_all(root.join("components/billing")).unwrap();
    let line = SchemaFile::Component.modeline(component_file);
    let relative = line.strip_prefix(MODELINE_PREFIX).unwrap();
    assert_eq!(
        fs::read_to_string(root.join(component_file.parent().unwrap()).join(relative)).ok(),
        Some(SchemaFile::Component.json()),
        "{line} does not lead from components/billing to the component schema"
    );

    let out = run(root, &["schema", "component.yml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("component.yaml"), "{}", stderr(&out));
}

#[test]
fn every_generated_cellgen_yaml_validates() {
    let mut checked = 0;
    let mut check = |what: &str, root: &Path| {
        assert_valid(SchemaFile::Config, what, &read(&root.join("cellgen.yaml")));
        checked += 1;
    };

    let init = temp_dir();
    run_ok(
        init.path(),
        &[
            "init",
            "--git-url",
            GIT_URL,
            "--state-bucket",
            "acme-tf-state",
            "--state-region",
            "us-east-1",
            "--admin-role-arn",
            "arn:aws:iam::123456789012:role/platform-admin",
        ],
    );
    check("init --state-bucket", init.path());

    let dir = new_repo(&[
        "eu-west-2-prod --components karpenter,kyverno",
        "us-east-1-staging --egress-gateway",
    ]);
    let root = dir.path();
    check("new with components", root);
    // Components bring keys (component, since) into the contract; removing them takes them out.
    for name in ["external-dns", "cert-manager", "external-secrets"] {
        run_ok(
            root,
            &["add-component", name, "--cell", "us-east-1-staging"],
        );
        check(&format!("after add-component {name}"), root);
    }
    run_ok(root, &["remove-component", "karpenter", "--cell", PROD]);
    check("after remove-component", root);
    assert_eq!(checked, 6);
}

/// component.yaml files under `dir`, recursively.
fn component_files(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_name() == "component.yaml")
        .map(|e| e.into_path())
        .collect()
}

#[test]
fn every_embedded_and_repository_component_yaml_validates() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let embedded = component_files(&manifest.join("templates/components"));
    let catalog =
        cellgen::model::catalog::Catalog::embedded(&cellgen::ports::templates::Templates::new())
            .expect("the embedded catalog loads");
    assert_eq!(
        embedded.len(),
        catalog.components.len(),
        "every embedded component has a component.yaml"
    );
    let fixtures = component_files(&manifest.join("tests/fixtures"));
    assert!(
        !fixtures.is_empty(),
        "the fixtures define repository components"
    );
    for path in embedded.iter().chain(&fixtures) {
        assert_valid(
            SchemaFile::Component,
            &path.display().to_string(),
            &read(path),
        );
    }
}

/// What cellgen says of a repository whose cellgen.yaml is `text`: None when it reads it.
fn cellgen_verdict(text: &str) -> Option<String> {
    let dir = temp_dir();
    fs::write(dir.path().join("cellgen.yaml"), text).unwrap();
    let out = run(dir.path(), &["list"]);
    (!out.status.success()).then(|| stderr(&out))
}

/// The generated cellgen.yaml, changed: each case must be judged alike by the schema and by
/// cellgen (both accept, or both reject).
#[test]
fn the_config_schema_rejects_what_cellgen_rejects() {
    let dir = new_repo(&[PROD]);
    let original = read(&dir.path().join("cellgen.yaml"));
    let validator = validator(SchemaFile::Config);
    let cases: &[(&str, &str, &str, bool)] = &[
        (
            "an unknown top-level field",
            "schema: 1\n",
            "schema: 1\nschemas: 2\n",
            false,
        ),
        (
            "an unknown field in git",
            "  branch: main\n",
            "  branch: main\n  brnach: dev\n",
            false,
        ),
        (
            "an unknown field in a layer",
            "    wait: true\n",
            "    wiat: true\n",
            false,
        ),
        (
            "an unknown field in a key",
            "    example: eu-west-2\n",
            "    exmple: eu-west-2\n",
            false,
        ),
        (
            "a key Flux cannot substitute",
            "  vpc_id:\n",
            "  vpc-id:\n",
            false,
        ),
        (
            "the reserved key `schema`",
            "  vpc_id:\n",
            "  schema:\n",
            false,
        ),
        (
            "an upper-case environment",
            "[dev, staging, prod]",
            "[dev, Staging, prod]",
            false,
        ),
        ("no environments", "[dev, staging, prod]", "[]", false),
        (
            "a layer name that is not a DNS label",
            "name: apps",
            "name: Apps",
            false,
        ),
        (
            "a string schema number",
            "schema: 1\n",
            "schema: one\n",
            false,
        ),
        ("no git source", "git:\n  url:", "gitx:\n  url:", false),
        ("the default branch left out", "  branch: main\n", "", true),
        (
            "a state region",
            "defaults:\n",
            "terraform:\n  state_region: eu-west-1\ndefaults:\n",
            true,
        ),
        (
            "a layer interval",
            "    path: apps\n",
            "    path: apps\n    interval: 5m\n",
            true,
        ),
        (
            "an acknowledged overlap",
            "  vpc_prefix_length: 16\n",
            "  vpc_prefix_length: 16\n  acknowledged_overlaps:\n    - cells: [eu-west-2-prod, us-east-1-prod]\n      reason: never routed to each other\n",
            true,
        ),
        (
            "an acknowledged overlap of one cell",
            "  vpc_prefix_length: 16\n",
            "  vpc_prefix_length: 16\n  acknowledged_overlaps:\n    - cells: [eu-west-2-prod]\n      reason: x\n",
            false,
        ),
        (
            "an acknowledged overlap without a reason",
            "  vpc_prefix_length: 16\n",
            "  vpc_prefix_length: 16\n  acknowledged_overlaps:\n    - cells: [eu-west-2-prod, us-east-1-prod]\n",
            false,
        ),
        (
            "an acknowledged overlap as a bare pair",
            "  vpc_prefix_length: 16\n",
            "  vpc_prefix_length: 16\n  acknowledged_overlaps:\n    - [eu-west-2-prod, us-east-1-prod]\n",
            false,
        ),
    ];
    for (what, from, to, valid) in cases {
        assert!(
            original.contains(from),
            "{what}: the generated cellgen.yaml has no `{from}`"
        );
        let text = original.replacen(from, to, 1);
        let schema_errors = errors(&validator, &text);
        let cellgen_error = cellgen_verdict(&text);
        if *valid {
            assert!(
                schema_errors.is_empty(),
                "{what}: the schema rejects it:\n{schema_errors}"
            );
            assert_eq!(cellgen_error, None, "{what}: cellgen rejects it");
        } else {
            assert!(!schema_errors.is_empty(), "{what}: the schema accepts it");
            let message = cellgen_error.unwrap_or_else(|| panic!("{what}: cellgen accepts it"));
            assert!(message.contains("cellgen.yaml"), "{what}: {message}");
        }
    }
}

#[test]
fn the_component_schema_rejects_what_cellgen_rejects() {
    let validator = validator(SchemaFile::Component);
    let good = "description: Billing service\nlayers: [apps]\nkeys:\n  billing_role_arn:\n    description: IAM role of the billing service\n    example: arn:aws:iam::123456789012:role/x\n    terraform: aws_iam_role.billing.arn\nidentity:\n  namespace: billing\n  service_account: billing\n  policy_arns: []\n";
    let cases: &[(&str, &str, &str, bool)] = &[
        ("the README's example", "", "", true),
        ("an unknown field", "layers:", "layerz: [x]\nlayers:", false),
        (
            "an unknown field in identity",
            "  policy_arns: []\n",
            "  policy_arn: []\n",
            false,
        ),
        (
            "an unknown field in a key",
            "    terraform:",
            "    terrafrom:",
            false,
        ),
        ("no layers", "layers: [apps]", "layers: []", false),
        (
            "a key Flux cannot substitute",
            "  billing_role_arn:",
            "  billing-role-arn:",
            false,
        ),
        (
            "no description",
            "description: Billing service\n",
            "",
            false,
        ),
        // catalog/rules.rs's rules, where JSON Schema can say them.
        (
            "a namespace that is not a DNS-1123 label",
            "  namespace: billing",
            "  namespace: Billing_NS",
            false,
        ),
        (
            "a service account that is not a DNS-1123 subdomain",
            "  service_account: billing",
            "  service_account: billing_sa",
            false,
        ),
        (
            "a managed policy ARN",
            "  policy_arns: []",
            "  policy_arns: [arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess]",
            true,
        ),
        (
            "a policy ARN that is a role",
            "  policy_arns: []",
            "  policy_arns: [arn:aws:iam::123456789012:role/x]",
            false,
        ),
        (
            "depends_on naming a module",
            "identity:",
            "depends_on: [module.billing]\nidentity:",
            true,
        ),
        (
            "depends_on naming a variable",
            "identity:",
            "depends_on: [var.billing]\nidentity:",
            false,
        ),
        (
            "a key named like the schema entry",
            "  billing_role_arn:",
            "  schema:",
            false,
        ),
        (
            "a key that is an HCL keyword",
            "  billing_role_arn:",
            "  for:",
            false,
        ),
        (
            "a layer that is not a DNS-1123 label",
            "layers: [apps]",
            "layers: [Apps_1]",
            false,
        ),
    ];
    let repo = new_repo(&[PROD]);
    for (what, from, to, valid) in cases {
        assert!(good.contains(from), "{what}: no `{from}`");
        let text = good.replacen(from, to, 1);
        let schema_errors = errors(&validator, &text);
        let dir = repo.path().join("components/billing");
        fs::create_dir_all(dir.join("apps")).unwrap();
        fs::write(dir.join("component.yaml"), &text).unwrap();
        let out = run(repo.path(), &["list", "components"]);
        if *valid {
            assert!(
                schema_errors.is_empty(),
                "{what}: the schema rejects it:\n{schema_errors}"
            );
            assert!(
                out.status.success(),
                "{what}: cellgen rejects it: {}",
                stderr(&out)
            );
        } else {
            assert!(!schema_errors.is_empty(), "{what}: the schema accepts it");
            assert!(
                !out.status.success() && stderr(&out).contains("component.yaml"),
                "{what}: cellgen accepts it"
            );
        }
    }
}

#[test]
fn writing_commands_refresh_the_schemas_a_repository_has() {
    let dir = new_repo(&[PROD]);
    let root = dir.path();
    let config_schema = root.join(SchemaFile::Config.path());
    let component_schema = root.join(SchemaFile::Component.path());
    // As an older cellgen left them: one stale, one never written.
    fs::write(&config_schema, "{}\n").unwrap();
    fs::remove_file(&component_schema).unwrap();

    let out = run_ok(root, &["add-component", "karpenter", "--dry-run"]);
    assert_mentions(&out, &["b/.cellgen/schemas/cellgen.schema.json"]);
    assert_eq!(read(&config_schema), "{}\n", "--dry-run wrote the schema");

    let out = run_ok(root, &["add-component", "karpenter"]);
    assert_mentions(&out, &["updated  .cellgen/schemas/cellgen.schema.json"]);
    assert_eq!(read(&config_schema), SchemaFile::Config.json());
    assert!(
        !component_schema.exists(),
        "a schema the repository lacked was added"
    );

    // Fresh now: the inverse changes no schema.
    let out = run_ok(root, &["remove-component", "karpenter"]);
    assert_never_mentions(&out, &["schema.json"]);
}

#[test]
fn init_in_an_existing_repository_adds_the_schemas_once() {
    let dir = new_repo(&[PROD]);
    let root = dir.path();
    // A repository from before the schemas: no .cellgen/schemas, no modeline.
    fs::remove_dir_all(root.join(".cellgen/schemas")).unwrap();
    let config = read(&root.join("cellgen.yaml"));
    let (modeline, rest) = config.split_once('\n').unwrap();
    fs::write(root.join("cellgen.yaml"), rest).unwrap();

    let before = tree_hash(root);
    let out = run_ok(root, &["init", "--dry-run"]);
    assert_mentions(&out, &["+# yaml-language-server"]);
    assert_tree_unchanged(&before, &tree_hash(root), "init --dry-run");

    let out = run_ok(root, &["init"]);
    for path in [
        ".cellgen/schemas/cellgen.schema.json",
        ".cellgen/schemas/component.schema.json",
    ] {
        assert_mentions(&out, &[&format!("created  {path}")]);
    }
    assert_mentions(&out, &["updated  cellgen.yaml"]);
    assert_eq!(
        read(&root.join("cellgen.yaml")),
        format!("{modeline}\n{rest}")
    );

    let before = tree_hash(root);
    let out = run_ok(root, &["init"]);
    assert_mentions(&out, &["nothing to do"]);
    assert_tree_unchanged(&before, &tree_hash(root), "a second init");

    // A modeline the user chose (another schema location) is kept.
    let own = format!("# yaml-language-server: $schema=https://example.com/cellgen.json\n{rest}");
    fs::write(root.join("cellgen.yaml"), &own).unwrap();
    let out = run_ok(root, &["init"]);
    assert_mentions(&out, &["nothing to do"]);
    assert_eq!(read(&root.join("cellgen.yaml")), own);
}
