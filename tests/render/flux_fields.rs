//! Every field of a `kustomize.toolkit.fluxcd.io/v1` Kustomization that changes what Flux
//! applies. The oracle does what kustomize-controller's generator does (fluxcd/pkg
//! `kustomize_generator.go`): it writes the fields into the kustomization at `spec.path` of a copy
//! of the repository, `kubectl kustomize` builds that, then the objects are substituted and
//! `commonMetadata` is set, as the controller does after the build.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use super::support::*;
use super::*;

/// Copies `root` (without .git) to a new temporary directory.
fn copy_repo(root: &Path) -> tempfile::TempDir {
    let copy = temp_dir();
    for entry in walkdir::WalkDir::new(root)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".git")
    {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(root).unwrap();
        let to = copy.path().join(rel);
        if entry.file_type().is_dir() {
            fs::create_dir_all(&to).unwrap();
        } else {
            fs::copy(entry.path(), &to).unwrap();
        }
    }
    copy
}

fn yaml(path: &Path) -> Value {
    load_yaml_file(path).remove(0).value
}

/// What kustomize-controller applies for the layer `name` of `cell` (its file is
/// `cells/<cell>/<name>.yaml`), with `vars` for substitution.
fn flux_oracle(root: &Path, cell: &str, name: &str, vars: &BTreeMap<String, String>) -> Vec<Value> {
    let layer = yaml(&root.join(format!("cells/{cell}/{name}.yaml")));
    let spec = &layer["spec"];
    let copy = copy_repo(root);
    let dir = copy
        .path()
        .join(spec["path"].as_str().unwrap().trim_start_matches("./"));
    let kfile = dir.join("kustomization.yaml");
    let mut k = yaml(&kfile);
    // fluxcd/pkg kustomize v1.35.4 (kustomize-controller v1.9.4), GenerateManifest: a
    // kustomization file that lists no resources gets `buildMetadata: [originAnnotations]`,
    // replacing its own ("to avoid 'kustomization.yaml is empty'"); the Kustomization's
    // `spec.buildMetadata`, when set, replaces either.
    if k["resources"].as_array().is_none_or(Vec::is_empty) {
        k["buildMetadata"] = json!(["originAnnotations"]);
    }
    if spec["buildMetadata"]
        .as_array()
        .is_some_and(|b| !b.is_empty())
    {
        k["buildMetadata"] = spec["buildMetadata"].clone();
    }
    for (field, key) in [
        ("targetNamespace", "namespace"),
        ("namePrefix", "namePrefix"),
        ("nameSuffix", "nameSuffix"),
    ] {
        if let Some(v) = spec.get(field) {
            k[key] = v.clone();
        }
    }
    let push = |k: &mut Value, key: &str, v: Value| {
        if !k[key].is_array() {
            k[key] = json!([]);
        }
        k[key].as_array_mut().unwrap().push(v);
    };
    for p in spec["patches"].as_array().into_iter().flatten() {
        push(&mut k, "patches", p.clone());
    }
    let ignore_missing = spec["ignoreMissingComponents"] == true;
    for c in spec["components"].as_array().into_iter().flatten() {
        if dir.join(c.as_str().unwrap()).exists() || !ignore_missing {
            push(&mut k, "components", c.clone());
        }
    }
    for image in spec["images"].as_array().into_iter().flatten() {
        let existing = k["images"]
            .as_array_mut()
            .and_then(|list| list.iter_mut().find(|i| i["name"] == image["name"]));
        match existing {
            Some(entry) => {
                if let Some(n) = image.get("newName") {
                    entry["newName"] = n.clone();
                }
                if image.get("newTag").is_some() || image.get("digest").is_some() {
                    let map = entry.as_object_mut().unwrap();
                    map.remove("newTag");
                    map.remove("digest");
                    for f in ["newTag", "digest"] {
                        if let Some(v) = image.get(f) {
                            map.insert(f.into(), v.clone());
                        }
                    }
                }
            }
            None => push(&mut k, "images", image.clone()),
        }
    }
    fs::write(&kfile, yaml_serde::to_string(&k).unwrap()).unwrap();
    let built = kustomize_build(&dir).unwrap_or_else(|e| panic!("{e}"));
    let mut objects: Vec<Value> = parse_yaml_docs("oracle", &substitute(&built, vars))
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|d| d.value)
        .collect();
    for o in &mut objects {
        for field in ["labels", "annotations"] {
            for (key, v) in spec["commonMetadata"][field]
                .as_object()
                .into_iter()
                .flatten()
            {
                o["metadata"][field][key] = v.clone();
            }
        }
    }
    objects
}

/// Rewrites the only occurrence of `from` in a repository file.
#[track_caller]
fn edit(root: &Path, rel: &str, from: &str, to: &str) {
    let path = root.join(rel);
    let text = read(&path);
    assert_eq!(
        text.matches(from).count(),
        1,
        "{rel} should contain `{from}` once:\n{text}"
    );
    fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

fn one<'a>(objects: &'a [Value], kind: &str) -> &'a Value {
    let found: Vec<&Value> = objects.iter().filter(|o| o["kind"] == kind).collect();
    assert_eq!(found.len(), 1, "one {kind} expected: {objects:#?}");
    found[0]
}

/// The apps layer of `cell` gains a Deployment with an image and the kustomization an `images`
/// entry of its own.
fn add_deployment(root: &Path) {
    fs::write(
        root.join("apps/web.yaml"),
        concat!(
            "apiVersion: apps/v1\n",
            "kind: Deployment\n",
            "metadata:\n",
            "  name: web\n",
            "  labels:\n",
            "    tier: ${app_tier}\n",
            "spec:\n",
            "  selector:\n",
            "    matchLabels: {app: web}\n",
            "  template:\n",
            "    metadata:\n",
            "      labels: {app: web}\n",
            "    spec:\n",
            "      serviceAccountName: app\n",
            "      containers:\n",
            "        - name: web\n",
            "          image: busybox:1.0\n",
        ),
    )
    .unwrap();
    edit(
        root,
        "apps/kustomization.yaml",
        "resources:\n",
        "images:\n  - name: busybox\n    newName: registry.example.com/busybox\nresources:\n  - web.yaml\n",
    );
}

#[test]
fn every_generator_field_renders_as_kubectl_builds_what_flux_generates() {
    let dir = new_repo(&[DEV]);
    let root = dir.path();
    add_deployment(root);
    let file = format!("cells/{DEV}/apps.yaml");
    edit(
        root,
        &file,
        "  postBuild:\n    substituteFrom:\n",
        concat!(
            "  targetNamespace: apps\n",
            "  namePrefix: cell-\n",
            "  nameSuffix: -v1\n",
            "  patches:\n",
            "    - patch: |\n",
            "        apiVersion: apps/v1\n",
            "        kind: Deployment\n",
            "        metadata:\n",
            "          name: web\n",
            "        spec:\n",
            "          replicas: 3\n",
            "    - patch: |\n",
            "        - op: add\n",
            "          path: /metadata/annotations/patched-by\n",
            "          value: flux\n",
            "      target:\n",
            "        kind: ServiceAccount\n",
            "  images:\n",
            "    - name: busybox\n",
            "      newTag: \"1.36\"\n",
            "  commonMetadata:\n",
            "    labels:\n",
            "      team: platform\n",
            "    annotations:\n",
            "      owner: platform-team\n",
            "  postBuild:\n",
            "    substitute:\n",
            "      app_tier: web\n",
            "      cell_name: inline-wins\n",
            "    substituteFrom:\n",
        ),
    );
    let mut vars = sample(root, DEV);
    vars.insert("app_tier".into(), "web".into());
    vars.insert("cell_name".into(), "inline-wins".into());
    let want = flux_oracle(root, DEV, "apps", &vars);
    for mode in ["auto", "native", "external"] {
        let got = render(root, &[DEV, "--layer", "apps", "--kustomize", mode])
            .unwrap_or_else(|(c, e)| panic!("{mode}: {c} {e}"));
        assert_same_objects(&got, &want, &format!("apps layer, --kustomize {mode}"));
    }
    // What each field did, spelled out.
    let got = render(root, &[DEV, "--layer", "apps"]).unwrap();
    let web = one(&got, "Deployment");
    assert_eq!(web["metadata"]["name"], "cell-web-v1");
    assert_eq!(web["metadata"]["namespace"], "apps");
    assert_eq!(web["spec"]["replicas"], 3);
    assert_eq!(
        web["spec"]["template"]["spec"]["containers"][0]["image"],
        "registry.example.com/busybox:1.36"
    );
    assert_eq!(
        web["spec"]["template"]["spec"]["serviceAccountName"],
        "cell-app-v1"
    );
    assert_eq!(
        web["metadata"]["labels"],
        json!({"team": "platform", "tier": "web"})
    );
    assert_eq!(web["metadata"]["annotations"]["owner"], "platform-team");
    let sa = one(&got, "ServiceAccount");
    assert_eq!(sa["metadata"]["annotations"]["patched-by"], "flux");
    let ns = one(&got, "Namespace");
    assert_eq!(ns["metadata"]["labels"]["cellgen.io/cell"], "inline-wins");
    // And `check` agrees the layer is fine.
    let out = cellgen().arg("-C").arg(root).arg("check").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn target_namespace_replaces_the_kustomizations_namespace() {
    let dir = new_repo(&[DEV]);
    let root = dir.path();
    edit(
        root,
        "apps/kustomization.yaml",
        "resources:\n",
        "namespace: elsewhere\nresources:\n",
    );
    let before = render(root, &[DEV, "--layer", "apps"]).unwrap();
    assert_eq!(
        one(&before, "ServiceAccount")["metadata"]["namespace"],
        "elsewhere"
    );
    let file = format!("cells/{DEV}/apps.yaml");
    edit(
        root,
        &file,
        "  prune: true\n",
        "  prune: true\n  targetNamespace: apps\n",
    );
    let after = render(root, &[DEV, "--layer", "apps"]).unwrap();
    assert_eq!(
        one(&after, "ServiceAccount")["metadata"]["namespace"],
        "apps"
    );
    let want = flux_oracle(root, DEV, "apps", &sample(root, DEV));
    assert_same_objects(&after, &want, "targetNamespace over namespace");
}

#[test]
fn missing_components_are_left_out_only_with_ignore_missing_components() {
    let dir = new_repo(&[&format!("{DEV} --components kyverno")]);
    let root = dir.path();
    let before = render(root, &[DEV, "--layer", "configs"]).unwrap();
    let file = format!("cells/{DEV}/configs.yaml");
    edit(
        root,
        &file,
        "    - ../../components/kyverno/configs\n",
        "    - ../../components/kyverno/configs\n    - ../../components/not-yet/configs\n",
    );
    let (code, stderr) = render(root, &[DEV, "--layer", "configs"]).unwrap_err();
    assert_eq!(code, 1);
    assert_mentions(&stderr, &["components/not-yet/configs"]);
    edit(
        root,
        &file,
        "  prune: true\n",
        "  prune: true\n  ignoreMissingComponents: true\n",
    );
    let after = render(root, &[DEV, "--layer", "configs"]).unwrap();
    assert_same_objects(&after, &before, "a missing component ignored");
    let out = cellgen().arg("-C").arg(root).arg("check").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn substitute_from_in_order_with_sources_the_cell_renders() {
    let dir = new_repo(&[DEV]);
    let root = dir.path();
    // The configs layer renders a ConfigMap and a Secret in flux-system for the apps layer.
    fs::write(
        root.join("infrastructure/configs/app-settings.yaml"),
        concat!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-settings\n  namespace: flux-system\n",
            "data:\n  cell_name: from-configmap\n  greeting: hello\n",
            "---\n",
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-endpoints\n  namespace: flux-system\n",
            // base64 of "api.internal"; stringData wins over data for the same key.
            "data:\n  api_host: YXBpLmludGVybmFs\n  greeting: aWdub3JlZA==\nstringData:\n  greeting: from-secret\n",
        ),
    )
    .unwrap();
    edit(
        root,
        "infrastructure/configs/kustomization.yaml",
        "resources:\n",
        "resources:\n  - app-settings.yaml\n",
    );
    fs::write(
        root.join("apps/settings.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: apps\ndata:\n  cell: ${cell_name}\n  greeting: ${greeting}\n  api: ${api_host}\n  region: ${aws_region}\n",
    )
    .unwrap();
    edit(
        root,
        "apps/kustomization.yaml",
        "resources:\n",
        "resources:\n  - settings.yaml\n",
    );
    let file = format!("cells/{DEV}/apps.yaml");
    edit(
        root,
        &file,
        "        name: cell-metadata\n",
        concat!(
            "        name: cell-metadata\n",
            "      - kind: ConfigMap\n",
            "        name: app-settings\n",
            "      - kind: Secret\n",
            "        name: app-endpoints\n",
            "      - kind: ConfigMap\n",
            "        name: not-there-yet\n",
            "        optional: true\n",
        ),
    );
    let got = render(root, &[DEV, "--layer", "apps"]).unwrap();
    let settings = got
        .iter()
        .find(|o| o["metadata"]["name"] == "settings")
        .expect("the settings ConfigMap");
    // Later sources win over earlier ones; the Secret's data is decoded, its stringData wins.
    assert_eq!(
        settings["data"],
        json!({
            "cell": "from-configmap",
            "greeting": "from-secret",
            "api": "api.internal",
            "region": sample(root, DEV)["aws_region"],
        })
    );
    // Inline substitute wins over every source.
    edit(
        root,
        &file,
        "    substituteFrom:\n",
        "    substitute:\n      greeting: inline\n    substituteFrom:\n",
    );
    let got = render(root, &[DEV, "--layer", "apps"]).unwrap();
    let settings = got
        .iter()
        .find(|o| o["metadata"]["name"] == "settings")
        .unwrap();
    assert_eq!(settings["data"]["greeting"], "inline");
    // check sees the sources too: no key is missing, nothing is unseen.
    let out = cellgen()
        .arg("-C")
        .arg(root)
        .args(["check", "--format", "json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    // The Secret committed in plain text is the only finding.
    assert_eq!(codes, ["secret-value"], "{report:#}");

    // A source nothing renders is a warning, and its keys count as missing.
    edit(
        root,
        &file,
        "        name: not-there-yet\n        optional: true\n",
        "        name: not-there-yet\n",
    );
    let out = cellgen()
        .arg("-C")
        .arg(root)
        .args(["check"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("warning[unseen-source]") && stdout.contains("ConfigMap not-there-yet"),
        "{stdout}"
    );
}

#[test]
fn without_post_build_nothing_is_substituted_and_common_metadata_comes_after() {
    let dir = new_repo(&[DEV]);
    let root = dir.path();
    let file = format!("cells/{DEV}/apps.yaml");
    edit(
        root,
        &file,
        "  postBuild:\n",
        "  commonMetadata:\n    annotations:\n      note: applied to ${cell_name}\n  postBuild:\n",
    );
    let out = cellgen()
        .arg("-C")
        .arg(root)
        .args(["render", DEV, "--layer", "apps"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    // commonMetadata is set after substitution: its `${...}` is applied as written.
    assert_mentions(&text, &["note: applied to ${cell_name}"]);
    assert_never_mentions(&text, &["cellgen.io/cell: ${cell_name}"]);

    let text = read(&root.join(&file));
    let without: String = text.split("  postBuild:\n").next().unwrap().to_string();
    fs::write(root.join(&file), without).unwrap();
    let out = cellgen()
        .arg("-C")
        .arg(root)
        .args(["render", DEV, "--layer", "apps"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_mentions(&text, &["cellgen.io/cell: ${cell_name}"]);
}

/// kustomize-controller reads each substituted object back with sigs.k8s.io/yaml (go-yaml v2,
/// YAML 1.1): a variable written into a plain scalar is retyped that way, so `yes` is true.
#[test]
fn substituted_values_are_read_back_as_flux_reads_them() {
    let dir = new_repo(&[DEV]);
    let root = dir.path();
    fs::write(
        root.join("apps/flags.yaml"),
        "apiVersion: example.com/v1\nkind: Flags\nmetadata:\n  name: flags\n  namespace: default\nspec:\n  enabled: ${enabled}\n  mode: ${mode}\n  scale: ${scale}\n  unset: ${unset}\n  name: ${enabled}-${mode}\n",
    )
    .unwrap();
    edit(
        root,
        "apps/kustomization.yaml",
        "resources:\n",
        "resources:\n  - flags.yaml\n",
    );
    edit(
        root,
        &format!("cells/{DEV}/apps.yaml"),
        "  postBuild:\n",
        "  postBuild:\n    substitute:\n      enabled: \"yes\"\n      mode: \"0775\"\n      scale: \"1e3\"\n      unset: \"~\"\n",
    );
    let got = render(root, &[DEV, "--layer", "apps"]).unwrap();
    let flags = one(&got, "Flags");
    assert_eq!(
        flags["spec"],
        json!({"enabled": true, "mode": 509, "scale": 1000, "unset": null, "name": "yes-0775"})
    );
}

#[test]
fn a_layer_listing_no_resources_gets_the_origin_annotations_flux_asks_for() {
    let dir = new_repo(&[DEV]);
    let root = dir.path();
    fs::write(
        root.join("apps/kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nconfigMapGenerator:\n  - name: flags\n    namespace: apps\n    literals: [beta=true]\n",
    )
    .unwrap();
    let got = render(root, &[DEV, "--layer", "apps"]).unwrap();
    let flags = one(&got, "ConfigMap");
    let origin = flags["metadata"]["annotations"]["config.kubernetes.io/origin"]
        .as_str()
        .unwrap_or_else(|| panic!("no origin annotation: {flags:#}"));
    assert_mentions(origin, &["ConfigMapGenerator"]);
    // The native builder does not write buildMetadata: it says so instead of leaving it out.
    let (code, stderr) =
        render(root, &[DEV, "--layer", "apps", "--kustomize", "native"]).unwrap_err();
    assert_eq!(code, 1);
    assert_mentions(&stderr, &["buildMetadata"]);
}

/// Build metadata (origin and transformer annotations) is what kustomize-controller applies.
/// Set in the kustomization file of a layer Flux builds as written, kubectl on that layer is the
/// reference; where kustomize-controller writes buildMetadata itself (a kustomization listing no
/// resources gets `originAnnotations`, replacing the file's own; `spec.buildMetadata` replaces
/// both), its build differs from kubectl on the file as written, and the reference is kubectl on
/// the kustomization as the controller writes it (`flux_oracle`).
#[test]
fn build_metadata_renders_as_kustomize_controller_builds_it() {
    let dir = new_repo(&[DEV]);
    let root = dir.path();
    let vars = sample(root, DEV);
    let kfile = "apps/kustomization.yaml";
    let original = read(&root.join(kfile));
    let layer_file = format!("cells/{DEV}/apps.yaml");
    let layer = read(&root.join(&layer_file));
    let plain_kubectl = |root: &Path| -> Vec<Value> {
        let built = kustomize_build(&root.join("apps")).unwrap_or_else(|e| panic!("{e}"));
        parse_yaml_docs("kubectl kustomize apps", &substitute(&built, &vars))
            .unwrap()
            .into_iter()
            .map(|d| d.value)
            .collect()
    };

    // In the file, with resources: exactly kubectl's build of the layer.
    fs::write(
        root.join(kfile),
        format!("{original}buildMetadata: [originAnnotations, transformerAnnotations]\n"),
    )
    .unwrap();
    let got = render(root, &[DEV, "--layer", "apps"]).unwrap();
    assert!(
        got.iter()
            .all(|o| o["metadata"]["annotations"]["config.kubernetes.io/origin"].is_string()),
        "{got:#?}"
    );
    assert_same_objects(
        &got,
        &plain_kubectl(root),
        "buildMetadata in the kustomization file",
    );
    assert_same_objects(
        &got,
        &flux_oracle(root, DEV, "apps", &vars),
        "the same, as Flux builds it",
    );

    // spec.buildMetadata with a transformer at work: the controller's kustomization.
    fs::write(root.join(kfile), &original).unwrap();
    fs::write(
        root.join(&layer_file),
        layer.replace(
            "  prune: true\n",
            "  prune: true\n  namePrefix: cell-\n  buildMetadata: [originAnnotations, transformerAnnotations]\n",
        ),
    )
    .unwrap();
    let got = render(root, &[DEV, "--layer", "apps"]).unwrap();
    assert!(
        got.iter().any(|o| {
            o["metadata"]["annotations"]["alpha.config.kubernetes.io/transformations"].is_string()
        }),
        "{got:#?}"
    );
    assert_same_objects(
        &got,
        &flux_oracle(root, DEV, "apps", &vars),
        "spec.buildMetadata",
    );

    // No resources, and a buildMetadata of its own: Flux's `originAnnotations` replaces it.
    fs::write(root.join(&layer_file), &layer).unwrap();
    fs::write(
        root.join(kfile),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nbuildMetadata: [managedByLabel]\nconfigMapGenerator:\n  - name: flags\n    namespace: apps\n    literals: [beta=true]\n",
    )
    .unwrap();
    let got = render(root, &[DEV, "--layer", "apps"]).unwrap();
    let flux = flux_oracle(root, DEV, "apps", &vars);
    assert_same_objects(&got, &flux, "a kustomization listing no resources");
    let kubectl = plain_kubectl(root);
    let flags = one(&kubectl, "ConfigMap");
    assert!(
        flags["metadata"]["annotations"]["config.kubernetes.io/origin"].is_null()
            && flags["metadata"]["labels"]["app.kubernetes.io/managed-by"].is_string(),
        "kubectl on the file as written: {flags:#}"
    );
    let flags = one(&got, "ConfigMap");
    assert!(
        flags["metadata"]["annotations"]["config.kubernetes.io/origin"].is_string()
            && flags["metadata"]["labels"]["app.kubernetes.io/managed-by"].is_null(),
        "what the controller applies: {flags:#}"
    );
}

#[test]
fn render_refuses_a_flux_kustomization_the_api_server_refuses() {
    let dir = new_repo(&[DEV]);
    let root = dir.path();
    let file = format!("cells/{DEV}/apps.yaml");
    edit(
        root,
        &file,
        "  prune: true\n",
        "  prune: true\n  patchs: []\n",
    );
    let (code, stderr) = render(root, &[DEV, "--layer", "apps"]).unwrap_err();
    assert_eq!(code, 1);
    let text = read(&root.join(&file));
    let line = text.lines().position(|l| l.contains("patchs")).unwrap() + 1;
    assert!(
        stderr.contains(&format!("{file}:{line}")) && stderr.contains("unknown field `patchs`"),
        "{stderr}"
    );
}
