//! Flux objects against the Flux CRDs (schemas/flux): what the API server refuses when
//! kustomize-controller applies them, at the line that says it; and the Flux Kustomization fields
//! cellgen cannot apply, which are errors rather than silently ignored.

use std::fs;

use super::support::*;
use super::*;

/// Asserts one `flux-schema` finding at `file:line`, for `cells`, whose message has `words`.
#[track_caller]
fn assert_schema(report: &Value, file: &str, line: u64, cells: &[&str], words: &[&str]) {
    let found: Vec<&Value> = with_code(report, "flux-schema")
        .into_iter()
        .filter(|f| f["file"] == file && f["line"] == line)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "no flux-schema at {file}:{line}:\n{}",
        summary(report)
    );
    let mut want: Vec<String> = cells.iter().map(|c| c.to_string()).collect();
    want.sort();
    assert_eq!(strings(&found[0]["cells"]), want, "{}", summary(report));
    let message = found[0]["message"].as_str().unwrap();
    for w in words {
        assert!(message.contains(w), "`{w}` not in: {message}");
    }
}

#[test]
fn a_layers_kustomization_the_api_server_refuses() {
    let dir = repo();
    let file = format!("cells/{PROD}/configs.yaml");
    let root = dir.path();
    edit(root, &file, "  prune: true\n", "");
    edit(root, &file, "  interval: 10m\n", "  interval: 10minutes\n");
    edit(root, &file, "  wait: true\n", "  wiat: true\n");
    edit(
        root,
        &file,
        "    kind: GitRepository\n",
        "    kind: GitRepo\n",
    );

    let (code, report) = check_json(root, &[]);
    assert_eq!(code, 1, "{}", summary(&report));
    let spec = line_in(root, &file, "spec:");
    assert_schema(
        &report,
        &file,
        spec,
        &[PROD],
        &["spec.prune: Required value"],
    );
    let interval = line_in(root, &file, "10minutes");
    assert_schema(
        &report,
        &file,
        interval,
        &[PROD],
        &["\"10minutes\"", "a Go duration"],
    );
    let wait = line_in(root, &file, "wiat:");
    assert_schema(
        &report,
        &file,
        wait,
        &[PROD],
        &[
            "unknown field `wiat`",
            "field not declared in schema",
            "Did you mean `wait`?",
        ],
    );
    let kind = line_in(root, &file, "kind: GitRepo");
    assert_schema(
        &report,
        &file,
        kind,
        &[PROD],
        &[
            "spec.sourceRef.kind: Unsupported value: \"GitRepo\"",
            "\"GitRepository\"",
        ],
    );
    // Reported with the layer the Kustomization is.
    for f in with_code(&report, "flux-schema") {
        assert_eq!(
            f["layers"],
            serde_json::json!(["configs"]),
            "{}",
            summary(&report)
        );
    }
    assert_eq!(
        with_code(&report, "flux-schema").len(),
        4,
        "{}",
        summary(&report)
    );
}

#[test]
fn a_misspelt_chart_field_in_a_component() {
    let dir = repo();
    let file = "components/metrics-server/controllers/helmrelease.yaml";
    edit(
        dir.path(),
        file,
        "      version: 3.13.1",
        "      verison: 3.13.1",
    );
    let (code, report) = check_json(dir.path(), &[]);
    assert_eq!(code, 1);
    let line = line_in(dir.path(), file, "verison:");
    assert_schema(
        &report,
        file,
        line,
        &[PROD],
        &[
            "HelmRelease kube-system/metrics-server",
            "unknown field `verison` in spec.chart.spec",
            "Did you mean `version`?",
        ],
    );
    assert_eq!(findings(&report).len(), 1, "{}", summary(&report));
}

#[test]
fn a_value_written_by_a_patch_points_at_the_patch() {
    let dir = repo();
    let root = dir.path();
    let layer = "infrastructure/controllers";
    fs::write(
        root.join(layer).join("slow-kyverno.yaml"),
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: kyverno\n  namespace: kyverno\nspec:\n  interval: 1hour\n",
    )
    .unwrap();
    edit(
        root,
        &format!("{layer}/kustomization.yaml"),
        "resources:\n",
        "patches:\n  - path: slow-kyverno.yaml\nresources:\n",
    );
    let (code, report) = check_json(root, &[]);
    assert_eq!(code, 1, "{}", summary(&report));
    let file = format!("{layer}/slow-kyverno.yaml");
    let line = line_in(root, &file, "1hour");
    // kyverno runs in both cells.
    assert_schema(
        &report,
        &file,
        line,
        &[PROD, DEV],
        &["spec.interval", "\"1hour\""],
    );
}

#[test]
fn crd_rules_and_served_versions() {
    let dir = repo();
    let root = dir.path();
    let file = "components/metrics-server/controllers/helmrelease.yaml";
    edit(
        root,
        file,
        "  interval: 30m\n",
        "  interval: 30m\n  chartRef:\n    kind: OCIRepository\n    name: metrics-server\n",
    );
    let kyverno = "components/kyverno/controllers/helmrelease.yaml";
    edit(
        root,
        kyverno,
        "apiVersion: helm.toolkit.fluxcd.io/v2\n",
        "apiVersion: helm.toolkit.fluxcd.io/v2beta1\n",
    );
    let (code, report) = check_json(root, &[]);
    assert_eq!(code, 1, "{}", summary(&report));
    // The CEL rule of the HelmRelease CRD, at its `spec:`.
    let spec = line_is(root, file, "spec:");
    assert_schema(
        &report,
        file,
        spec,
        &[PROD],
        &["either chart or chartRef must be set"],
    );
    // A version the CRD no longer serves, at the apiVersion line.
    let api = line_in(root, kyverno, "v2beta1");
    assert_schema(
        &report,
        kyverno,
        api,
        &[PROD, DEV],
        &[
            "helm.toolkit.fluxcd.io/v2beta1 is not served",
            "served: helm.toolkit.fluxcd.io/v2",
        ],
    );
}

#[test]
fn fields_cellgen_cannot_apply_are_errors() {
    let dir = repo();
    let root = dir.path();
    let file = format!("cells/{PROD}/apps.yaml");
    edit(
        root,
        &file,
        "  prune: true\n",
        "  prune: true\n  decryption:\n    provider: sops\n",
    );
    let configs = format!("cells/{DEV}/configs.yaml");
    edit(
        root,
        &configs,
        "    kind: GitRepository\n    name: flux-system\n",
        "    kind: OCIRepository\n    name: platform-manifests\n",
    );
    let (code, report) = check_json(root, &[]);
    assert_eq!(code, 1, "{}", summary(&report));
    let found = with_code(&report, "unsupported-field");
    assert_eq!(found.len(), 2, "{}", summary(&report));
    let decryption = found
        .iter()
        .find(|f| f["file"] == file.as_str())
        .expect("decryption is reported");
    assert_eq!(decryption["line"], line_in(root, &file, "decryption:"));
    assert_eq!(decryption["cells"], serde_json::json!([PROD]));
    assert!(
        decryption["message"]
            .as_str()
            .unwrap()
            .contains("`spec.decryption`")
    );
    let source = found
        .iter()
        .find(|f| f["file"] == configs.as_str())
        .expect("the foreign source is reported");
    assert_eq!(source["line"], line_in(root, &configs, "sourceRef:"));
    assert!(
        source["message"]
            .as_str()
            .unwrap()
            .contains("OCIRepository platform-manifests"),
        "{}",
        source["message"]
    );
    // The source it names does not exist either.
    assert_eq!(
        with_code(&report, "missing-source").len(),
        1,
        "{}",
        summary(&report)
    );

    // `render` refuses the layer, naming the field and its line.
    let out = cellgen()
        .arg("-C")
        .arg(root)
        .args(["render", PROD, "--layer", "apps"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{file}:{}", line_in(root, &file, "decryption:")))
            && stderr.contains("`spec.decryption`"),
        "{stderr}"
    );
}

#[test]
fn a_failing_flux_patch_is_blamed_on_its_entry() {
    let dir = repo();
    let root = dir.path();
    let file = format!("cells/{PROD}/controllers.yaml");
    edit(
        root,
        &file,
        "  postBuild:\n",
        concat!(
            "  patches:\n",
            "    - patch: |\n",
            "        - op: replace\n",
            "          path: /spec/values/replicas\n",
            "          value: 3\n",
            "      target:\n",
            "        kind: HelmRelease\n",
            "        name: metrics-server\n",
            // json-patch v4 (kustomize's): replacing a missing key adds it, but a missing
            // parent fails the build.
            "    - patch: |\n",
            "        - op: replace\n",
            "          path: /spec/chart/spec/nope/deeper\n",
            "          value: x\n",
            "      target:\n",
            "        kind: HelmRelease\n",
            "        name: metrics-server\n",
            "  postBuild:\n",
        ),
    );
    let (code, report) = check_json(root, &[]);
    assert_eq!(code, 1, "{}", summary(&report));
    let text = read(&root.join(&file));
    let second = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("- patch:"))
        .nth(1)
        .map(|(i, _)| i as u64 + 1)
        .unwrap();
    let found = assert_at(&report, "build-failed", &file, second, &[PROD]);
    let message = found[0]["message"].as_str().unwrap();
    assert!(
        message.contains("/spec/chart/spec/nope") && message.contains("spec.patches.1"),
        "{message}"
    );
}

/// A layer that does not build is reported where the problem is written (the builder's error
/// location, with the line of the entry it names), not at the cell's layer file.
#[test]
fn build_failures_point_at_the_file_and_line_to_fix() {
    let dir = repo();
    let root = dir.path();
    let layer = "infrastructure/controllers";
    let kustomization = format!("{layer}/kustomization.yaml");
    let add_resource = |entry: &str| {
        edit(
            root,
            &kustomization,
            "  - platform-namespace.yaml\n",
            &format!("  - platform-namespace.yaml\n  - {entry}\n"),
        );
    };
    let one = |report: &Value| {
        let found = with_code(report, "build-failed");
        assert_eq!(found.len(), 1, "{}", summary(report));
        (
            found[0]["file"].as_str().unwrap().to_string(),
            found[0]["line"].as_u64(),
            found[0]["message"].as_str().unwrap().to_string(),
        )
    };

    // A file that is not UTF-8: its own line.
    let bad = format!("{layer}/bad.yaml");
    fs::write(
        root.join(&bad),
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\xffad\n",
    )
    .unwrap();
    add_resource("bad.yaml");
    let (code, report) = check_json(root, &[]);
    assert_eq!(code, 1);
    assert_at(&report, "build-failed", &bad, 4, &[PROD, DEV]);

    // A resource reached through a symbolic link: the line listing it.
    fs::remove_file(root.join(&bad)).unwrap();
    std::os::unix::fs::symlink("platform-namespace.yaml", root.join(&bad)).unwrap();
    let (_, report) = check_json(root, &[]);
    let line = line_in(root, &kustomization, "- bad.yaml");
    let (file, at, message) = one(&report);
    assert_eq!((file.as_str(), at), (kustomization.as_str(), Some(line)));
    assert!(message.contains("symbolic link"), "{message}");

    // Kustomizations nested past the bound: the kustomization listing the one too deep.
    fs::remove_file(root.join(&bad)).unwrap();
    edit(
        root,
        &kustomization,
        "  - bad.yaml\n",
        "  - ../../deep/d0\n",
    );
    for i in 0..120 {
        let d = root.join(format!("deep/d{i}"));
        fs::create_dir_all(&d).unwrap();
        fs::write(
            d.join("kustomization.yaml"),
            format!("resources: [../d{}]\n", i + 1),
        )
        .unwrap();
    }
    let (_, report) = check_json(root, &[]);
    let (file, at, message) = one(&report);
    assert!(
        file.starts_with("deep/d") && file.ends_with("/kustomization.yaml"),
        "{file}"
    );
    assert_eq!(at, Some(1), "{message}");
    assert!(message.contains("nest more than 100 levels"), "{message}");
}
