//! The trees `cellgen new` writes, rendered natively and externally, against kubectl.

use std::fs;

use super::support::*;
use super::*;

#[test]
fn render_equals_kubectl_kustomize_of_each_layer_substituted() {
    let dir = repo();
    let root = dir.path();
    for cell in [PROD, DEV, ALL] {
        let mut want = Vec::new();
        for (name, path, components) in layers(root, cell) {
            let layer = kubectl_layer(root, cell, &path, &components);
            assert!(!layer.is_empty(), "{cell}/{name} renders no object");
            let got = render(root, &[cell, "--layer", &name])
                .unwrap_or_else(|(code, e)| panic!("render {cell} --layer {name}: {code} {e}"));
            assert_same_objects(&got, &layer, &format!("{cell} layer {name}"));
            want.extend(layer);
        }
        let got =
            render(root, &[cell]).unwrap_or_else(|(code, e)| panic!("render {cell}: {code} {e}"));
        assert_same_objects(&got, &want, cell);
    }
    // A cell's own component objects are in its render and nowhere else.
    let kind_count = |cell: &str, kind: &str| {
        render(root, &[cell])
            .unwrap()
            .iter()
            .filter(|o| o["kind"] == kind)
            .count()
    };
    assert_eq!(kind_count(PROD, "NodePool"), 1);
    assert_eq!(kind_count(DEV, "NodePool"), 0);
}

#[test]
fn rendered_values_are_the_sample_and_values_override_them() {
    let dir = new_repo(&[DEV]);
    let root = dir.path();
    let identity = |objects: Vec<Value>| {
        objects
            .into_iter()
            .find(|o| o["metadata"]["name"] == "cluster-identity")
            .expect("cluster-identity ConfigMap")["data"]
            .clone()
    };
    let data = identity(render(root, &[DEV, "--layer", "configs"]).unwrap());
    let examples = sample(root, DEV);
    assert_eq!(
        data["cell"], DEV,
        "cell_name comes from the cell's terraform.tfvars"
    );
    assert_eq!(data["vpc"], examples["vpc_id"].as_str());
    assert_eq!(data["cluster"], examples["cluster_name"].as_str());

    let values = root.join("values.yaml");
    fs::write(&values, "vpc_id: vpc-override\n").unwrap();
    let data = identity(
        render(
            root,
            &[
                DEV,
                "--layer",
                "configs",
                "--values",
                values.to_str().unwrap(),
            ],
        )
        .unwrap(),
    );
    assert_eq!(data["vpc"], "vpc-override");
    assert_eq!(data["cluster"], examples["cluster_name"].as_str());
}

#[test]
fn layer_filter_and_unknown_layer() {
    let dir = new_repo(&[&format!("{PROD} --components karpenter")]);
    let root = dir.path();
    let all = render(root, &[PROD]).unwrap();
    let mut parts = Vec::new();
    for layer in LAYERS {
        let objects = render(root, &[PROD, "--layer", layer]).unwrap();
        assert!(!objects.is_empty(), "layer {layer} is empty");
        parts.extend(objects);
    }
    assert_same_objects(&all, &parts, "the layers together");
    let configs = render(root, &[PROD, "--layer", "configs"]).unwrap();
    assert!(configs.iter().any(|o| o["kind"] == "NodePool"));
    assert!(configs.iter().all(|o| o["kind"] != "HelmRelease"));

    let (code, stderr) = render(root, &[PROD, "--layer", "config"]).unwrap_err();
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("has no layer `config`")
            && stderr.contains("Did you mean `configs`?")
            && stderr.contains("controllers, configs, apps"),
        "{stderr}"
    );
    let (code, stderr) = render(root, &["eu-west-2-prd"]).unwrap_err();
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("Did you mean `eu-west-2-prod`?"),
        "{stderr}"
    );
}

#[test]
fn native_and_external_builders_agree_on_generated_trees() {
    let dir = repo();
    let root = dir.path();
    for cell in [PROD, DEV, ALL] {
        for (name, _, _) in layers(root, cell) {
            let native = render(root, &[cell, "--layer", &name, "--kustomize", "native"])
                .unwrap_or_else(|(c, e)| panic!("native {cell}/{name}: {c} {e}"));
            let external = render(root, &[cell, "--layer", &name, "--kustomize", "external"])
                .unwrap_or_else(|(c, e)| panic!("external {cell}/{name}: {c} {e}"));
            assert!(!native.is_empty());
            assert_same_objects(
                &native,
                &external,
                &format!("{cell}/{name} native vs external"),
            );
        }
    }
    // The whole-catalog cell also checks clean with the native builder alone.
    let out = cellgen()
        .arg("-C")
        .arg(root)
        .args(["check", "--kustomize", "native"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What Flux applies for a folded scalar with more-indented lines (here a kyverno policy
/// message) is kustomize's reading of it, go-yaml's folding included: native and external agree.
#[test]
fn native_builder_keeps_kustomizes_folded_scalars() {
    let dir = new_repo(&[&format!("{PROD} --components kyverno")]);
    let root = dir.path();
    let policy = root.join("components/kyverno/configs/disallow-privileged-containers.yaml");
    let text = std::fs::read_to_string(&policy).unwrap();
    let folded = "    - message: >\n        Privileged containers\n          are not allowed\n        here.\n";
    let text = text.replace(
        "    - message: Privileged containers are not allowed.\n",
        folded,
    );
    assert!(text.contains(folded));
    std::fs::write(&policy, text).unwrap();
    let native = render(root, &[PROD, "--layer", "configs", "--kustomize", "native"]).unwrap();
    let external = render(
        root,
        &[PROD, "--layer", "configs", "--kustomize", "external"],
    )
    .unwrap();
    let exact = |objects: &[Value]| {
        let mut v: Vec<String> = objects.iter().map(Value::to_string).collect();
        v.sort();
        v
    };
    assert_eq!(exact(&native), exact(&external));
    // go-yaml v3 keeps an extra line break before the more-indented line.
    let message = native
        .iter()
        .find(|o| o["metadata"]["name"] == "disallow-privileged-containers")
        .and_then(|o| o.pointer("/spec/validations/0/message"))
        .unwrap();
    assert_eq!(
        message,
        "Privileged containers\n\n  are not allowed\nhere.\n"
    );
}
