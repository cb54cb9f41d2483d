//! Kyverno in a prod cell: the catalog's own workloads are admitted, team workloads stay covered.

use std::collections::BTreeMap;

use super::*;

/// Whether a Kubernetes label selector (matchLabels and matchExpressions) selects `labels`.
fn selector_matches(selector: &Value, labels: &BTreeMap<String, String>) -> bool {
    let labels_match = selector["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .all(|(k, v)| labels.get(k).map(String::as_str) == v.as_str());
    let expressions_match = selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
        .all(|e| {
            let key = e["key"].as_str().unwrap();
            let values: Vec<&str> = e["values"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let value = labels.get(key).map(String::as_str);
            match e["operator"].as_str().unwrap() {
                "In" => value.is_some_and(|v| values.contains(&v)),
                "NotIn" => value.is_none_or(|v| !values.contains(&v)),
                "Exists" => value.is_some(),
                "DoesNotExist" => value.is_none(),
                other => panic!("unknown selector operator {other}"),
            }
        });
    labels_match && expressions_match
}

/// A prod cell running every catalog component, rendered as Flux would apply it: no Kyverno
/// policy (they deny in prod) applies to a namespace a catalog workload runs in, so the charts'
/// own pods are admitted, while the application namespace stays covered.
#[test]
fn kyverno_admits_every_catalog_component_in_a_prod_cell() {
    let names = catalog_names();
    let dir = new_repo(&[&format!(
        "{PROD} --with-requirements --components {}",
        names.join(",")
    )]);
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args(["render", PROD])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let docs: Vec<Value> = parse_yaml_docs("render", &String::from_utf8_lossy(&out.stdout))
        .unwrap()
        .into_iter()
        .map(|d| d.value)
        .collect();

    // Where the catalog's workloads run: each release's namespace and each identity's.
    let mut workloads: BTreeSet<String> = docs
        .iter()
        .filter(|d| d["kind"] == "HelmRelease")
        .map(|d| {
            d["spec"]["targetNamespace"]
                .as_str()
                .or(d["metadata"]["namespace"].as_str())
                .unwrap()
                .to_string()
        })
        .collect();
    let catalog = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/components");
    for name in &names {
        let spec: Value =
            yaml_serde::from_str(&read(&catalog.join(name).join("component.yaml"))).unwrap();
        if let Some(namespace) = spec["identity"]["namespace"].as_str() {
            workloads.insert(namespace.to_string());
        }
    }
    assert!(workloads.len() >= 5, "{workloads:?}");
    let labels_of = |namespace: &str| -> BTreeMap<String, String> {
        let mut labels: BTreeMap<String, String> = docs
            .iter()
            .find(|d| d["kind"] == "Namespace" && d["metadata"]["name"] == namespace)
            .and_then(|d| d["metadata"]["labels"].as_object())
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect();
        // The API server sets it on every namespace.
        labels.insert("kubernetes.io/metadata.name".into(), namespace.to_string());
        labels
    };

    let mut checked = 0;
    for doc in &docs {
        let api = doc["apiVersion"].as_str().unwrap_or_default();
        if !api.contains("kyverno.io/") {
            continue;
        }
        let name = doc["metadata"]["name"].as_str().unwrap_or_default();
        // Another policy type would need its own reading here, not a silent pass.
        assert_eq!(
            (api, doc["kind"].as_str()),
            ("policies.kyverno.io/v1", Some("ValidatingPolicy")),
            "{name}: a Kyverno policy kind this test does not evaluate"
        );
        assert_eq!(
            doc["spec"]["validationActions"],
            serde_json::json!(["Deny"]),
            "{name}: a prod cell does not deny"
        );
        let constraints = &doc["spec"]["matchConstraints"];
        assert!(constraints["objectSelector"].is_null(), "{name}");
        assert!(
            constraints["resourceRules"]
                .to_string()
                .contains("\"pods\""),
            "{name} does not apply to pods"
        );
        let selector = &constraints["namespaceSelector"];
        for namespace in &workloads {
            assert!(
                !selector_matches(selector, &labels_of(namespace)),
                "{name} applies to namespace {namespace}, where catalog workloads run"
            );
        }
        assert!(
            selector_matches(selector, &labels_of("apps")),
            "{name} no longer applies to the application namespace"
        );
        checked += 1;
    }
    assert_eq!(
        checked, 2,
        "the kyverno component's two policies were not rendered"
    );
}
