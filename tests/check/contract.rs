//! The key contract between Terraform and Flux, and substitution in strict mode.

use std::fs;

use super::support::*;
use super::*;

#[test]
fn clean_repository_passes() {
    let dir = repo();
    let r = run(dir.path(), &[]);
    assert_eq!(r.code, 0, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("2 cells checked: 0 errors, 0 warnings"),
        "{}",
        r.stdout
    );
    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 0);
    assert_eq!(report["cells"], serde_json::json!([PROD, DEV]));
    assert_eq!(report["errors"], 0);
    assert!(findings(&report).is_empty(), "{}", summary(&report));
}

#[test]
fn typo_in_a_shared_layer_fails_every_cell_at_the_source_line() {
    let dir = repo();
    let file = "infrastructure/configs/cluster-identity.yaml";
    edit(dir.path(), file, "${cluster_name}", "${clustr_name}");
    let line = line_in(dir.path(), file, "${clustr_name}");

    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 1, "{}", summary(&report));
    let found = assert_at(&report, "missing-key", file, line, &[PROD, DEV]);
    for f in found {
        assert_eq!(f["severity"], "error");
        assert_eq!(f["layers"], serde_json::json!(["configs"]));
        assert_eq!(
            f["places"],
            serde_json::json!([{"cell": PROD, "layer": "configs"}, {"cell": DEV, "layer": "configs"}])
        );
        let message = f["message"].as_str().unwrap();
        assert!(
            message.contains("`clustr_name`") && message.contains("Did you mean `cluster_name`"),
            "{message}"
        );
    }
    assert_eq!(findings(&report).len(), 1, "{}", summary(&report));

    // One finding, listing the cells it breaks.
    let text = run(dir.path(), &[]);
    assert_eq!(text.code, 1);
    assert_eq!(
        text.stdout.matches("error[missing-key]").count(),
        1,
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains(&format!(
            "--> {file}:{line}\n   = cells {PROD}, {DEV} (layer configs)\n"
        )) && text.stdout.contains("2 cells checked: 1 error, 0 warnings"),
        "{}",
        text.stdout
    );
}

#[test]
fn typo_in_a_component_points_at_the_component_file() {
    let dir = repo();
    let file = "components/kyverno/configs/require-resource-requests.yaml";
    edit(
        dir.path(),
        file,
        "${admission_action}",
        "${admision_action}",
    );
    let line = line_in(dir.path(), file, "${admision_action}");
    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 1);
    for f in assert_at(&report, "missing-key", file, line, &[PROD, DEV]) {
        assert!(
            f["message"]
                .as_str()
                .unwrap()
                .contains("Did you mean `admission_action`"),
            "{}",
            f["message"]
        );
    }
}

/// The typo is a prefix of a key used earlier in the same file: the finding must name the line
/// of the typo, not the first line that starts the same way.
#[test]
fn typo_that_prefixes_a_correct_reference_points_at_its_own_line() {
    let dir = repo();
    let file = "components/karpenter/configs/ec2nodeclass.yaml";
    edit(
        dir.path(),
        file,
        "cellgen.io/cell: ${cell_name}",
        "cellgen.io/cell: ${cluster_nam}",
    );
    let line = line_in(dir.path(), file, "${cluster_nam}");
    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 1);
    let found = assert_at(&report, "missing-key", file, line, &[PROD]);
    assert!(
        found[0]["message"]
            .as_str()
            .unwrap()
            .contains("Did you mean `cluster_name`")
    );
}

#[test]
fn key_removed_from_one_cell_fails_the_contract_and_the_manifest() {
    let dir = repo();
    let tf = metadata_tf(PROD);
    let text = read(&dir.path().join(&tf));
    let removed: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("karpenter_role_arn"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(text, removed);
    fs::write(dir.path().join(&tf), removed).unwrap();

    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 1, "{}", summary(&report));
    let missing = with_code(&report, "missing-key");
    assert_eq!(missing.len(), 2, "{}", summary(&report));

    // The contract: the data block of this cell's ConfigMap.
    let data_line = line_in(dir.path(), &tf, "data = {");
    let contract: Vec<_> = missing
        .iter()
        .filter(|f| f["file"] == tf.as_str())
        .collect();
    assert_eq!(contract.len(), 1, "{}", summary(&report));
    assert_eq!(contract[0]["line"], data_line);
    assert_eq!(contract[0]["cells"], serde_json::json!([PROD]));
    assert_eq!(contract[0]["layers"], serde_json::json!([]));
    assert!(
        contract[0]["message"]
            .as_str()
            .unwrap()
            .contains("`karpenter_role_arn`")
    );

    // The manifest that asks for it (a comment earlier in that file names the key too).
    let manifest = "components/karpenter/controllers/helmrelease.yaml";
    let line = line_in(dir.path(), manifest, "role-arn: ${karpenter_role_arn}");
    let used: Vec<_> = missing.iter().filter(|f| f["file"] == manifest).collect();
    assert_eq!(used.len(), 1, "{}", summary(&report));
    assert_eq!(used[0]["line"], line, "{}", summary(&report));
    assert_eq!(used[0]["cells"], serde_json::json!([PROD]));
    assert_eq!(used[0]["layers"], serde_json::json!(["controllers"]));
}

/// The contract's missing-key message says why the cell must write the key: every cell does, or
/// the key selects this cell by environment.
#[test]
fn a_missing_key_says_why_this_cell_must_write_it() {
    let dir = repo();
    let added = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args([
            "key",
            "add",
            "log_bucket",
            "--terraform",
            "var.name",
            "--example",
            "logs",
            "--description",
            "Bucket for logs",
            "--env",
            "dev",
            "--no-input",
        ])
        .output()
        .unwrap();
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    let tf = metadata_tf(DEV);
    let text = read(&dir.path().join(&tf));
    let removed: String = text
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            !l.starts_with("vpc_id ") && !l.starts_with("log_bucket ")
        })
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(text.lines().count(), removed.lines().count() + 2);
    fs::write(dir.path().join(&tf), removed).unwrap();

    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 1, "{}", summary(&report));
    let message = |key: &str| -> String {
        with_code(&report, "missing-key")
            .iter()
            .filter(|f| f["file"] == tf.as_str())
            .map(|f| f["message"].as_str().unwrap().to_string())
            .find(|m| m.contains(&format!("has `{key}`")))
            .unwrap_or_else(|| panic!("no contract finding for {key}: {}", summary(&report)))
    };
    assert!(message("vpc_id").contains("(every cell must write it)"));
    assert!(message("log_bucket").contains("(this cell's name or environment selects it)"));
}

#[test]
fn key_written_by_terraform_but_not_in_the_contract() {
    let dir = repo();
    let tf = metadata_tf(DEV);
    edit(
        dir.path(),
        &tf,
        "    vpc_id ",
        "    team_name = \"platform\"\n    vpc_id ",
    );
    let line = line_in(dir.path(), &tf, "team_name");
    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 1);
    assert_at(&report, "uncontracted-key", &tf, line, &[DEV]);
    assert_eq!(findings(&report).len(), 1, "{}", summary(&report));
}

#[test]
fn component_key_missing_from_the_contract() {
    let dir = repo();
    let config = read(&dir.path().join("cellgen.yaml"));
    let start = config
        .find("  karpenter_node_role:\n")
        .expect("key in cellgen.yaml");
    let end = config[start + 2..]
        .find("\n  karpenter")
        .map(|i| start + 2 + i + 1)
        .unwrap_or(config.len());
    let mut cut = config.clone();
    cut.replace_range(start..end, "");
    assert_never_mentions(&cut, &["karpenter_node_role:"]);
    fs::write(dir.path().join("cellgen.yaml"), cut).unwrap();

    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 1, "{}", summary(&report));
    let keys_line = line_in(dir.path(), "cellgen.yaml", "keys:");
    let found = assert_at(
        &report,
        "uncontracted-key",
        "cellgen.yaml",
        keys_line,
        &[PROD],
    );
    assert!(
        found[0]["message"]
            .as_str()
            .unwrap()
            .contains("component karpenter needs key `karpenter_node_role`")
    );
}

#[test]
fn schema_number_differs_between_terraform_and_cellgen_yaml() {
    // PROD runs karpenter, whose keys joined at 2; DEV's keys are the base ones, from 1. A
    // cell's number is the newest `since` among its keys.
    let dir = repo();
    let tf = metadata_tf(DEV);
    let text = read(&dir.path().join(&tf));
    let schema_line = text
        .lines()
        .find(|l| l.trim_start().starts_with("schema "))
        .expect("schema in data")
        .to_string();
    assert_mentions(&schema_line, &["\"1\""]);
    edit(
        dir.path(),
        &tf,
        &schema_line,
        &schema_line.replace("\"1\"", "\"2\""),
    );
    let line = line_in(dir.path(), &tf, "\"2\"");
    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 1);
    let found = assert_at(&report, "schema-mismatch", &tf, line, &[DEV]);
    let message = found[0]["message"].as_str().unwrap();
    assert!(
        message.contains("schema is 2 here, but this cell's keys give 1")
            && message.contains("set `schema = \"1\"`"),
        "{message}"
    );
    assert_eq!(findings(&report).len(), 1, "{}", summary(&report));

    // Past the contract's own number.
    fs::write(dir.path().join(&tf), &text).unwrap();
    let prod_tf = metadata_tf(PROD);
    edit(dir.path(), &prod_tf, "= \"2\"", "= \"5\"");
    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 1);
    let found = with_code(&report, "schema-mismatch");
    assert_eq!(found.len(), 1, "{}", summary(&report));
    assert!(
        found[0]["message"]
            .as_str()
            .unwrap()
            .contains("schema is 5 here, past cellgen.yaml's 2"),
        "{}",
        summary(&report)
    );
    edit(dir.path(), &prod_tf, "= \"5\"", "= \"2\"");

    // A contract change that concerns PROD's keys only (they now date from 3): PROD is behind,
    // DEV is not concerned.
    let config = read(&dir.path().join("cellgen.yaml"));
    fs::write(
        dir.path().join("cellgen.yaml"),
        config
            .replace("schema: 2\n", "schema: 3\n")
            .replace("since: 2\n", "since: 3\n"),
    )
    .unwrap();
    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 1);
    let found = with_code(&report, "schema-mismatch");
    assert_eq!(found.len(), 1, "{}", summary(&report));
    assert_eq!(strings(&found[0]["cells"]), [PROD]);
    assert_eq!(found[0]["file"], prod_tf.as_str());
    assert_eq!(
        found[0]["line"],
        line_in(dir.path(), &prod_tf, "    schema ")
    );
}

#[test]
fn secret_looking_values_are_errors_at_their_line() {
    let dir = repo();
    let tf = metadata_tf(DEV);
    let secrets = [
        ("rds_master", "random_password.db.result"),
        (
            "api_blob",
            "aws_secretsmanager_secret_version.api.secret_string",
        ),
        ("hidden_value", "sensitive(var.hidden)"),
        ("signing_cert", "\"-----BEGIN RSA PRIVATE KEY-----\""),
        ("deploy_pat", "\"ghp_abcdefghijklmnopqrstuvwxyz0123456789\""),
        ("db_password", "var.db"),
    ];
    let added: String = secrets
        .iter()
        .map(|(k, v)| format!("    {k} = {v}\n"))
        .collect();
    edit(
        dir.path(),
        &tf,
        "    vpc_id ",
        &format!("{added}    vpc_id "),
    );

    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 1);
    let found = with_code(&report, "secret-value");
    assert_eq!(found.len(), secrets.len(), "{}", summary(&report));
    for (key, _) in secrets {
        let line = line_in(dir.path(), &tf, &format!("    {key} ="));
        assert!(
            found.iter().any(|f| f["file"] == tf.as_str()
                && f["line"] == line
                && breaks(f, DEV)
                && f["severity"] == "error"
                && f["message"].as_str().unwrap().contains(&format!("`{key}`"))),
            "no secret-value for {key} at {tf}:{line}:\n{}",
            summary(&report)
        );
    }
    // The identifiers a cell writes are not secrets.
    assert!(found.iter().all(|f| f["cells"] == serde_json::json!([DEV])));
}

#[test]
fn invalid_key_name_in_terraform_is_reported_on_its_line_only() {
    let dir = repo();
    let tf = metadata_tf(DEV);
    edit(
        dir.path(),
        &tf,
        "    vpc_id ",
        "    cluster-name = \"x\"\n    vpc_id ",
    );
    let line = line_in(dir.path(), &tf, "cluster-name");
    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 1);
    let found = assert_at(&report, "invalid-key-name", &tf, line, &[DEV]);
    assert!(
        found[0]["message"]
            .as_str()
            .unwrap()
            .contains("`cluster_name`")
    );
    let uncontracted = assert_at(&report, "uncontracted-key", &tf, line, &[DEV]);
    assert!(
        uncontracted[0]["message"]
            .as_str()
            .unwrap()
            .ends_with("remove it here. Did you mean `cluster_name`?"),
        "{}",
        uncontracted[0]["message"]
    );
    // Every finding is on the line to fix.
    for f in findings(&report) {
        assert_eq!(f["file"], tf.as_str(), "{}", summary(&report));
        assert_eq!(f["line"], line, "{}", summary(&report));
    }
}

#[test]
fn invalid_key_name_does_not_hide_a_typo() {
    let dir = repo();
    let tf = metadata_tf(DEV);
    edit(
        dir.path(),
        &tf,
        "    vpc_id ",
        "    cluster-name = \"x\"\n    vpc_id ",
    );
    let file = "apps/namespace.yaml";
    edit(dir.path(), file, "${cell_name}", "${cel_name}");
    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 1);
    let line = line_in(dir.path(), file, "${cel_name}");
    assert_at(&report, "missing-key", file, line, &[PROD, DEV]);
}

#[test]
fn bad_components_are_reported_at_the_layer_file() {
    let dir = repo();
    let layer = format!("cells/{PROD}/configs.yaml");
    edit(
        dir.path(),
        &layer,
        "    - ../../components/kyverno/configs\n",
        "    - ../../components/kyverno/configs\n    - ../../components/nope/configs\n    - ../../apps\n",
    );
    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 1, "{}", summary(&report));
    let found = with_code(&report, "bad-component");
    assert_eq!(found.len(), 2, "{}", summary(&report));
    for (needle, why) in [
        ("components/nope/configs", "does not exist"),
        ("../../apps", "is not a Kustomize Component"),
    ] {
        let line = line_in(dir.path(), &layer, needle);
        assert!(
            found.iter().any(|f| f["file"] == layer.as_str()
                && f["line"] == line
                && f["cells"] == serde_json::json!([PROD])
                && f["layers"] == serde_json::json!(["configs"])
                && f["message"].as_str().unwrap().contains(why)),
            "no bad-component for {needle} at {layer}:{line}:\n{}",
            summary(&report)
        );
    }
    assert!(
        with_code(&report, "unused-key").is_empty(),
        "a layer that was not rendered makes no key unused:\n{}",
        summary(&report)
    );
}

#[test]
fn what_flux_does_not_substitute_is_not_a_finding() {
    let dir = repo();
    let file = "infrastructure/configs/cluster-identity.yaml";
    let mut text = read(&dir.path().join(file));
    text.push_str(concat!(
        "  defaulted: ${missing:=default}\n",
        "  other_default: ${also_missing:-x}\n",
        "  escaped: $${literal}\n",
        "  plain: $not_braced\n",
        "---\n",
        "apiVersion: v1\n",
        "kind: ConfigMap\n",
        "metadata:\n",
        "  name: raw\n",
        "  namespace: platform-system\n",
        "  annotations:\n",
        "    kustomize.toolkit.fluxcd.io/substitute: disabled\n",
        "data:\n",
        "  x: ${unknown_key}\n",
        "---\n",
        "apiVersion: v1\n",
        "kind: ConfigMap\n",
        "metadata:\n",
        "  name: raw-by-label\n",
        "  namespace: platform-system\n",
        "  labels:\n",
        "    kustomize.toolkit.fluxcd.io/substitute: disabled\n",
        "data:\n",
        "  x: ${other_unknown}\n",
    ));
    fs::write(dir.path().join(file), text).unwrap();
    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 0, "{}", summary(&report));
    assert!(findings(&report).is_empty(), "{}", summary(&report));

    // The same unknown key without the annotation is a finding: the test above can fail.
    edit(
        dir.path(),
        file,
        "    kustomize.toolkit.fluxcd.io/substitute: disabled\ndata:\n  x: ${unknown_key}",
        "    other: x\ndata:\n  x: ${unknown_key}",
    );
    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 1);
    let line = line_in(dir.path(), file, "${unknown_key}");
    assert_at(&report, "missing-key", file, line, &[PROD, DEV]);
}

#[test]
fn dash_default_is_a_missing_closing_brace() {
    let dir = repo();
    let file = "apps/namespace.yaml";
    edit(dir.path(), file, "${cell_name}", "\"${cell_name-none}\"");
    let line = line_in(dir.path(), file, "${cell_name-none}");
    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 1);
    for f in assert_at(&report, "bad-substitution", file, line, &[PROD, DEV]) {
        assert!(
            f["message"]
                .as_str()
                .unwrap()
                .contains("missing closing brace"),
            "{}",
            f["message"]
        );
    }
}

#[test]
fn unused_contract_key_is_a_warning() {
    let dir = repo();
    let mut config = read(&dir.path().join("cellgen.yaml"));
    config.push_str(
        "  team_name:\n    description: Team that owns the cell\n    example: platform\n    terraform: var.team\n",
    );
    fs::write(dir.path().join("cellgen.yaml"), config).unwrap();
    for cell in [PROD, DEV] {
        // The stack declares what the key refers to (else `undeclared-reference`).
        fs::write(
            dir.path().join(format!("terraform/cells/{cell}/team.tf")),
            "variable \"team\" {\n  type    = string\n  default = \"platform\"\n}\n",
        )
        .unwrap();
        edit(
            dir.path(),
            &metadata_tf(cell),
            "    vpc_id ",
            "    team_name = var.team\n    vpc_id ",
        );
    }
    let line = line_in(dir.path(), "cellgen.yaml", "team_name:");
    let r = run(dir.path(), &[]);
    assert_eq!(r.code, 0, "warnings only: {}", r.stdout);
    assert!(
        r.stdout.contains("warning[unused-key]")
            && r.stdout.contains("2 cells checked: 0 errors, 1 warning\n"),
        "{}",
        r.stdout
    );
    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 0);
    let found = with_code(&report, "unused-key");
    assert_eq!(found.len(), 1, "{}", summary(&report));
    assert_eq!(found[0]["severity"], "warning");
    assert_eq!(found[0]["file"], "cellgen.yaml");
    assert_eq!(found[0]["line"], line);
    assert!(
        found[0]["message"]
            .as_str()
            .unwrap()
            .contains("${team_name}")
    );
    assert_eq!(report["warnings"], 1);
    assert_eq!(report["errors"], 0);
}

#[test]
fn values_file_supplies_keys_as_a_configmap_or_a_plain_map() {
    let dir = repo();
    let file = "infrastructure/configs/cluster-identity.yaml";
    edit(dir.path(), file, "${cluster_name}", "${extra_key}");
    assert_eq!(check_json(dir.path(), &[]).0, 1);

    let values = temp_dir();
    let configmap = values.path().join("configmap.yaml");
    fs::write(
        &configmap,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cell-metadata\n  namespace: flux-system\ndata:\n  extra_key: from-configmap\n",
    )
    .unwrap();
    let plain = values.path().join("plain.yaml");
    fs::write(&plain, "extra_key: from-plain-map\n").unwrap();
    let wrong = values.path().join("wrong.yaml");
    fs::write(&wrong, "other_key: x\n").unwrap();

    for path in [&configmap, &plain] {
        let (code, report) = check_json(dir.path(), &["--values", path.to_str().unwrap()]);
        assert_eq!(code, 0, "{}: {}", path.display(), summary(&report));
    }
    let (code, report) = check_json(dir.path(), &["--values", wrong.to_str().unwrap()]);
    assert_eq!(code, 1);
    let line = line_in(dir.path(), file, "${extra_key}");
    assert_at(&report, "missing-key", file, line, &[PROD, DEV]);

    // The value is the one rendered.
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args(["render", DEV, "--layer", "configs", "--values"])
        .arg(&plain)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("cluster: from-plain-map"));

    // A values file is YAML cellgen parses: the one nesting bound applies, named at file:line.
    let deep = values.path().join("deep.yaml");
    fs::write(
        &deep,
        format!("a: 1\nb: {}{}\n", "[".repeat(100_000), "]".repeat(100_000)),
    )
    .unwrap();
    let run = run(dir.path(), &["--values", deep.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "{}:2: `[`/`{{` brackets nest more than 64 levels",
            deep.display()
        )),
        "{}",
        run.stderr
    );
}

/// A hand-written value that refers to nothing the stack declares (issue 19): `terraform plan`
/// would refuse it, so `check` fails on the key's line and says what is near.
#[test]
fn a_reference_the_stack_declares_nowhere_fails_on_its_line() {
    let dir = repo();
    let file = metadata_tf(PROD);
    edit(
        dir.path(),
        &file,
        "= module.eks.cluster_name",
        "= module.ekss.cluster_name",
    );
    let line = line_in(dir.path(), &file, "module.ekss");
    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 1, "{}", summary(&report));
    let found = assert_at(&report, "undeclared-reference", &file, line, &[PROD]);
    let message = found[0]["message"].as_str().unwrap();
    for words in [
        "`module.ekss`",
        "terraform/cells/eu-west-2-prod declares nowhere",
        "Reference to undeclared module",
        "Did you mean `module.eks`?",
    ] {
        assert!(message.contains(words), "`{words}` not in: {message}");
    }
    // The other cell's stack declares its module: nothing there.
    assert!(
        !with_code(&report, "undeclared-reference")
            .iter()
            .any(|f| breaks(f, DEV)),
        "{}",
        summary(&report)
    );

    // Declared (here, in a file of the team's own), the reference passes.
    fs::write(
        dir.path().join(format!("terraform/cells/{PROD}/ekss.tf")),
        "module \"ekss\" {\n  source = \"./ekss\"\n}\n",
    )
    .unwrap();
    let (_, report) = check_json(dir.path(), &[]);
    assert!(
        with_code(&report, "undeclared-reference").is_empty(),
        "{}",
        summary(&report)
    );
}
