//! What only the cluster would notice today: dependsOn targets and cycles, source references,
//! the namespaces objects go to, where cell-metadata can be read from, plain Secrets, and
//! shell-style `${VAR}`s. Each at the line to edit.

use std::fs;

use super::support::*;
use super::*;

/// The finding with `code` at `file:line` (exactly one), for failure messages and more checks.
#[track_caller]
fn one_at<'a>(report: &'a Value, code: &str, file: &str, line: u64) -> &'a Value {
    let found: Vec<&Value> = with_code(report, code)
        .into_iter()
        .filter(|f| f["file"] == file && f["line"] == line)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "no `{code}` at {file}:{line}:\n{}",
        summary(report)
    );
    found[0]
}

#[track_caller]
fn assert_message(f: &Value, words: &[&str]) {
    let message = f["message"].as_str().unwrap();
    for w in words {
        assert!(message.contains(w), "`{w}` not in: {message}");
    }
}

#[test]
fn depends_on_a_kustomization_that_does_not_exist() {
    let dir = repo();
    let file = format!("cells/{PROD}/apps.yaml");
    edit(
        dir.path(),
        &file,
        "    - name: configs\n",
        "    - name: config\n",
    );
    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 1);
    let line = line_in(dir.path(), &file, "- name: config");
    let found = assert_at(&report, "unknown-dependency", &file, line, &[PROD]);
    assert_message(
        found[0],
        &["`flux-system/config`", "Did you mean `configs`?"],
    );
    assert_eq!(found[0]["layers"], serde_json::json!(["apps"]));
}

#[test]
fn depends_on_cycles_are_reported_once() {
    let dir = repo();
    let file = format!("cells/{DEV}/controllers.yaml");
    edit(
        dir.path(),
        &file,
        "  wait: true\n",
        "  wait: true\n  dependsOn:\n    - name: apps\n",
    );
    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 1);
    let line = line_in(dir.path(), &file, "- name: apps");
    let found = assert_at(&report, "dependency-cycle", &file, line, &[DEV]);
    assert_message(found[0], &["apps → configs → controllers → apps"]);
}

#[test]
fn chart_sources_that_the_cell_does_not_apply() {
    let dir = repo();
    let root = dir.path();
    let kyverno = "components/kyverno/controllers/helmrelease.yaml";
    edit(
        root,
        kyverno,
        "        name: kyverno\n",
        "        name: kyvrno\n",
    );
    let karpenter = "components/karpenter/controllers/helmrelease.yaml";
    edit(
        root,
        karpenter,
        "    kind: OCIRepository\n    name: karpenter\n",
        "    kind: OCIRepository\n    name: karpentr\n",
    );
    let (code, report) = check_json(root, &[]);
    assert_eq!(code, 1, "{}", summary(&report));
    let line = line_in(root, kyverno, "name: kyvrno");
    let f = one_at(&report, "missing-source", kyverno, line);
    assert_eq!(f["cells"], serde_json::json!([PROD, DEV]));
    assert_message(
        f,
        &[
            "HelmRepository `kyverno/kyvrno`",
            "source not found",
            "Did you mean `kyverno`?",
        ],
    );
    let line = line_in(root, karpenter, "name: karpentr");
    let f = one_at(&report, "missing-source", karpenter, line);
    assert_eq!(f["cells"], serde_json::json!([PROD]));
    assert_message(f, &["OCIRepository `kube-system/karpentr`"]);
    assert_eq!(
        with_code(&report, "missing-source").len(),
        2,
        "{}",
        summary(&report)
    );
}

#[test]
fn a_layer_outside_flux_system_cannot_read_cell_metadata() {
    let dir = repo();
    let root = dir.path();
    let file = format!("cells/{DEV}/apps.yaml");
    edit(
        root,
        &file,
        "  namespace: flux-system\n",
        "  namespace: apps\n",
    );
    edit(
        root,
        &file,
        "        name: cell-metadata\n",
        "        name: cell-metadata\n        optional: true\n",
    );
    let (code, report) = check_json(root, &[]);
    assert_eq!(code, 1, "{}", summary(&report));
    let entry = line_in(root, &file, "- kind: ConfigMap");
    assert_message(
        one_at(&report, "substitute-namespace", &file, entry),
        &["namespace `apps`", "own namespace", "`flux-system`"],
    );
    let optional = line_in(root, &file, "optional: true");
    assert_message(
        one_at(&report, "optional-cell-metadata", &file, optional),
        &["`optional: true`", "literally"],
    );
    // Its sourceRef and dependsOn now resolve in `apps` too, where nothing matches.
    let source = line_in(root, &file, "name: flux-system");
    assert_message(
        one_at(&report, "missing-source", &file, source),
        &[
            "GitRepository `apps/flux-system`",
            "there is one in `flux-system`",
        ],
    );
    let dep = line_in(root, &file, "- name: configs");
    one_at(&report, "unknown-dependency", &file, dep);
}

#[test]
fn objects_go_to_namespaces_that_exist() {
    let dir = repo();
    let root = dir.path();
    // A namespace nothing creates.
    let sa = "apps/service-account.yaml";
    edit(root, sa, "namespace: apps", "namespace: appz");
    // One the `apps` layer creates, used by `configs`, which applies before it.
    fs::write(
        root.join("infrastructure/configs/app-settings.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-settings\n  namespace: apps\ndata:\n  tier: web\n",
    )
    .unwrap();
    // A namespaced object without a namespace.
    fs::write(
        root.join("infrastructure/configs/no-namespace.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: floating\ndata:\n  a: b\n",
    )
    .unwrap();
    edit(
        root,
        "infrastructure/configs/kustomization.yaml",
        "resources:\n",
        "resources:\n  - app-settings.yaml\n  - no-namespace.yaml\n",
    );
    let (code, report) = check_json(root, &[]);
    assert_eq!(code, 1, "{}", summary(&report));
    let f = one_at(&report, "missing-namespace", sa, line_in(root, sa, "appz"));
    assert_eq!(f["cells"], serde_json::json!([PROD, DEV]));
    assert_message(f, &["namespace `appz`", "no layer creates it"]);
    let settings = "infrastructure/configs/app-settings.yaml";
    let f = one_at(
        &report,
        "missing-namespace",
        settings,
        line_in(root, settings, "namespace: apps"),
    );
    assert_message(
        f,
        &[
            "created by layer `apps`",
            "which `configs` does not depend on",
        ],
    );
    let floating = "infrastructure/configs/no-namespace.yaml";
    let f = one_at(
        &report,
        "missing-namespace",
        floating,
        line_in(root, floating, "metadata:"),
    );
    assert_message(f, &["ConfigMap floating", "namespace not specified"]);
    assert_eq!(
        with_code(&report, "missing-namespace").len(),
        3,
        "{}",
        summary(&report)
    );

    // The layer's targetNamespace puts every object there: the line to edit is that one.
    fs::remove_file(root.join(floating)).unwrap();
    edit(
        root,
        "infrastructure/configs/kustomization.yaml",
        "  - no-namespace.yaml\n",
        "",
    );
    fs::remove_file(root.join(settings)).unwrap();
    edit(
        root,
        "infrastructure/configs/kustomization.yaml",
        "  - app-settings.yaml\n",
        "",
    );
    edit(root, sa, "namespace: appz", "namespace: apps");
    let layer = format!("cells/{DEV}/configs.yaml");
    edit(
        root,
        &layer,
        "  prune: true\n",
        "  prune: true\n  targetNamespace: tenants\n",
    );
    let (code, report) = check_json(root, &[]);
    assert_eq!(code, 1, "{}", summary(&report));
    let line = line_in(root, &layer, "targetNamespace: tenants");
    let f = one_at(&report, "missing-namespace", &layer, line);
    assert_eq!(f["cells"], serde_json::json!([DEV]));
}

#[test]
fn plain_secrets_are_secret_values_and_sops_ones_are_not() {
    let dir = repo();
    let root = dir.path();
    fs::write(
        root.join("apps/db.yaml"),
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: apps\nstringData:\n  password: hunter2\n",
    )
    .unwrap();
    fs::write(
        root.join("apps/api.yaml"),
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: api\n  namespace: apps\ndata:\n  token: ENC[AES256_GCM,data:x,type:str]\nsops:\n  version: 3.9.0\n",
    )
    .unwrap();
    edit(
        root,
        "apps/kustomization.yaml",
        "resources:\n",
        "resources:\n  - db.yaml\n  - api.yaml\n",
    );
    let (code, report) = check_json(root, &[]);
    assert_eq!(code, 1, "{}", summary(&report));
    let line = line_in(root, "apps/db.yaml", "stringData:");
    let found = assert_at(&report, "secret-value", "apps/db.yaml", line, &[PROD, DEV]);
    assert_message(found[0], &["Secret apps/db", "(password)", "SOPS"]);
}

#[test]
fn a_shell_variable_gets_the_escape_hint() {
    let dir = repo();
    let file = "infrastructure/configs/cluster-identity.yaml";
    let mut text = read(&dir.path().join(file));
    text.push_str("  script: echo ${HOME}\n");
    fs::write(dir.path().join(file), text).unwrap();
    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 1);
    let line = line_in(dir.path(), file, "${HOME}");
    let found = assert_at(&report, "missing-key", file, line, &[PROD, DEV]);
    assert_message(found[0], &["write `$${HOME}`"]);
    // A lower-case typo gets no such hint.
    edit(dir.path(), file, "${HOME}", "$${HOME}");
    edit(dir.path(), file, "${vpc_id}", "${vpcid}");
    let (_, report) = check_json(dir.path(), &[]);
    let found = with_code(&report, "missing-key");
    assert_eq!(found.len(), 1, "{}", summary(&report));
    assert!(!found[0]["message"].as_str().unwrap().contains("$${"));
}

#[test]
fn a_nested_flux_kustomization_is_checked_but_not_rendered() {
    let dir = repo();
    let root = dir.path();
    fs::write(
        root.join("apps/tenants.yaml"),
        concat!(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\n",
            "kind: Kustomization\n",
            "metadata:\n",
            "  name: tenants\n",
            "  namespace: flux-system\n",
            "spec:\n",
            "  interval: 10m\n",
            "  prune: true\n",
            "  path: ./tenants\n",
            "  sourceRef:\n",
            "    kind: GitRepository\n",
            "    name: flux-system\n",
            "  dependsOn:\n",
            "    - name: apps\n",
            "  postBuild:\n",
            "    substituteFrom:\n",
            "      - kind: ConfigMap\n",
            "        name: cell-metadata\n",
        ),
    )
    .unwrap();
    edit(
        root,
        "apps/kustomization.yaml",
        "resources:\n",
        "resources:\n  - tenants.yaml\n",
    );
    let (code, report) = check_json(root, &[]);
    assert_eq!(code, 0, "{}", summary(&report));
    let line = line_in(root, "apps/tenants.yaml", "name: tenants");
    let found = assert_at(
        &report,
        "not-rendered",
        "apps/tenants.yaml",
        line,
        &[PROD, DEV],
    );
    assert_eq!(found[0]["severity"], "warning");

    // It is a Flux object like any other: the schema and its references are checked.
    edit(root, "apps/tenants.yaml", "  prune: true\n", "");
    edit(
        root,
        "apps/tenants.yaml",
        "    - name: apps\n",
        "    - name: platform\n",
    );
    let (code, report) = check_json(root, &[]);
    assert_eq!(code, 1, "{}", summary(&report));
    one_at(
        &report,
        "flux-schema",
        "apps/tenants.yaml",
        line_in(root, "apps/tenants.yaml", "spec:"),
    );
    one_at(
        &report,
        "unknown-dependency",
        "apps/tenants.yaml",
        line_in(root, "apps/tenants.yaml", "name: platform"),
    );
}
