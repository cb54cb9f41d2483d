//! `cellgen render CELL` prints what Flux would apply: for each layer, `kubectl kustomize` of the
//! layer's spec.path with its spec.components (through a temporary overlay), substituted with
//! the sample values. The oracle here is kubectl plus a plain `${key}` replacement; objects are
//! compared as multisets of parsed objects. The native builder and the external one agree on
//! every generated tree, with every catalog component.
//!
//! generated.rs: the trees `cellgen new` writes; flux_fields.rs: every field of a Flux
//! Kustomization that changes what is applied, against kubectl building the kustomization Flux
//! generates.

#[path = "../support/mod.rs"]
mod support;

mod flux_fields;
mod generated;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;
use support::*;

const PROD: &str = "eu-west-2-prod";
const DEV: &str = "us-east-1-dev";
const ALL: &str = "ap-southeast-2-staging";

/// Every component of the catalog, from `cellgen list components --format json`.
fn catalog_components(root: &Path) -> Vec<String> {
    let out = cellgen()
        .arg("-C")
        .arg(root)
        .args(["list", "components", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: Value = serde_json::from_slice(&out.stdout).expect("list components prints JSON");
    let names: Vec<String> = list
        .as_array()
        .expect("a list")
        .iter()
        .map(|c| c["name"].as_str().expect("name").to_string())
        .collect();
    assert!(names.len() >= 3, "a small catalog: {names:?}");
    names
}

/// PROD with three components, DEV with none, ALL with the whole catalog.
fn repo() -> tempfile::TempDir {
    let dir = new_repo(&[
        &format!("{PROD} --components karpenter,kyverno,metrics-server"),
        DEV,
    ]);
    let all = catalog_components(dir.path()).join(",");
    new_cell(
        dir.path(),
        &[ALL, "--components", &all, "--with-requirements"],
    );
    dir
}

/// The sample cell-metadata: every contract key's example (generated cells write expressions
/// only, so nothing is taken literally but the schema number), except keys Terraform sets from a
/// plain `var.x`: those take the cell's value from its terraform.tfvars.
fn sample(root: &Path, cell: &str) -> BTreeMap<String, String> {
    let config = &load_yaml_file(&root.join("cellgen.yaml"))[0].value;
    let mut values: BTreeMap<String, String> = config["keys"]
        .as_object()
        .expect("cellgen.yaml has keys")
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                v["example"].as_str().expect("example").to_string(),
            )
        })
        .collect();
    values.insert("schema".into(), config["schema"].to_string());
    let tfvars =
        fs::read_to_string(root.join(format!("terraform/cells/{cell}/terraform.tfvars"))).unwrap();
    for (key, spec) in config["keys"].as_object().unwrap() {
        let Some(var) = spec["terraform"]
            .as_str()
            .and_then(|t| t.strip_prefix("var."))
        else {
            continue;
        };
        let value = tfvars
            .lines()
            .filter_map(|l| l.split_once('='))
            .find(|(name, _)| name.trim() == var)
            .map(|(_, v)| v.trim().trim_matches('"').to_string());
        if let Some(value) = value {
            values.insert(key.clone(), value);
        }
    }
    values
}

/// Replaces every `${name}` (the only form generated manifests use) and fails on anything else.
fn substitute(text: &str, values: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let end = rest[at..].find('}').expect("closing brace") + at;
        let name = &rest[at + 2..end];
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "the oracle only knows plain ${{key}}, not ${{{name}}}"
        );
        out.push_str(
            values
                .get(name)
                .unwrap_or_else(|| panic!("no sample value for {name}")),
        );
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

/// `a/b/../c` → `a/c`.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                assert!(out.pop(), "{} leaves the repository", path.display());
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The layers a cell lists, in order: (name, spec.path, spec.components).
fn layers(root: &Path, cell: &str) -> Vec<(String, String, Vec<String>)> {
    let mut out = Vec::new();
    let kustomization = &load_yaml_file(&root.join(format!("cells/{cell}/kustomization.yaml")))[0];
    for file in kustomization.value["resources"].as_array().unwrap() {
        let file = file.as_str().unwrap();
        for doc in load_yaml_file(&root.join(format!("cells/{cell}/{file}"))) {
            let spec = &doc.value["spec"];
            out.push((
                doc.value["metadata"]["name"].as_str().unwrap().to_string(),
                spec["path"].as_str().unwrap().to_string(),
                spec["components"]
                    .as_array()
                    .map(|c| c.iter().map(|s| s.as_str().unwrap().to_string()).collect())
                    .unwrap_or_default(),
            ));
        }
    }
    assert!(!out.is_empty(), "cell {cell} lists no layer");
    out
}

/// What Flux would apply for one layer, by kubectl: an overlay next to the layer with its
/// components, built, then substituted.
fn kubectl_layer(root: &Path, cell: &str, path: &str, components: &[String]) -> Vec<Value> {
    let layer = normalise(Path::new(path));
    let overlay = tempfile::Builder::new()
        .prefix(".overlay-")
        .tempdir_in(root)
        .unwrap();
    // The overlay is one level below the root: ../ reaches the root.
    let up = |p: &Path| format!("../{}", p.display());
    let mut text = format!(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - {}\n",
        up(&layer)
    );
    if !components.is_empty() {
        text.push_str("components:\n");
        for c in components {
            text.push_str(&format!("  - {}\n", up(&normalise(&layer.join(c)))));
        }
    }
    fs::write(overlay.path().join("kustomization.yaml"), text).unwrap();
    let built = kustomize_build(overlay.path()).unwrap_or_else(|e| panic!("{e}"));
    let substituted = substitute(&built, &sample(root, cell));
    parse_yaml_docs(&format!("kubectl kustomize {path}"), &substituted)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|d| d.value)
        .collect()
}

fn render(root: &Path, args: &[&str]) -> Result<Vec<Value>, (i32, String)> {
    let out = cellgen()
        .arg("-C")
        .arg(root)
        .arg("render")
        .args(args)
        .output()
        .unwrap();
    if !out.status.success() {
        return Err((
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ));
    }
    let text = String::from_utf8(out.stdout).expect("UTF-8 output");
    assert!(
        !text.contains("${"),
        "rendered output still holds a variable:\n{text}"
    );
    Ok(parse_yaml_docs("cellgen render", &text)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|d| d.value)
        .collect())
}

/// The objects as sorted JSON texts: equal multisets compare equal.
fn multiset(objects: &[Value]) -> Vec<String> {
    let mut v: Vec<String> = objects
        .iter()
        .map(|o| serde_json::to_string_pretty(o).unwrap())
        .collect();
    v.sort();
    v
}

#[track_caller]
fn assert_same_objects(got: &[Value], want: &[Value], what: &str) {
    let (got, want) = (multiset(got), multiset(want));
    if got != want {
        let only = |a: &[String], b: &[String]| -> Vec<String> {
            a.iter().filter(|x| !b.contains(x)).cloned().collect()
        };
        panic!(
            "{what}: the objects differ\n--- only in cellgen render:\n{}\n--- only in the oracle:\n{}",
            only(&got, &want).join("\n"),
            only(&want, &got).join("\n")
        );
    }
}
