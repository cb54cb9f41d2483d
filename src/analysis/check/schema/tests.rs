//! The validator on the vendored CRDs.

use super::meta::is_label_value;
use super::*;
use serde_json::json;

fn messages(object: Value) -> Vec<String> {
    Schemas::embedded()
        .validate(&object)
        .expect("a Flux object")
        .into_iter()
        .map(|v| format!("{} | {}", v.path, v.message))
        .collect()
}

fn kustomization(spec: Value) -> Value {
    json!({
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": "apps", "namespace": "flux-system"},
        "spec": spec,
    })
}

#[test]
fn every_vendored_crd_loads_and_every_rule_parses() {
    let schemas = Schemas::load().unwrap();
    assert_eq!(schemas.crds.len(), 5);
    fn rules(s: &Schema, n: &mut usize) {
        for (rule, source, _) in &s.rules {
            assert!(rule.is_ok(), "{source}: {rule:?}");
            *n += 1;
        }
        for sub in s.properties.values() {
            rules(sub, n);
        }
        for sub in s.items.iter().chain(&s.additional) {
            rules(sub, n);
        }
    }
    let mut n = 0;
    for crd in schemas.crds.values() {
        for v in crd.versions.values() {
            rules(v, &mut n);
        }
    }
    assert!(n >= 5, "{n} rules");
}

#[test]
fn a_valid_kustomization_passes() {
    let ok = kustomization(json!({
        "interval": "10m", "prune": true, "path": "./apps",
        "sourceRef": {"kind": "GitRepository", "name": "flux-system"},
        "postBuild": {"substituteFrom": [{"kind": "ConfigMap", "name": "cell-metadata"}]},
    }));
    assert_eq!(messages(ok), Vec::<String>::new());
}

#[test]
fn what_the_api_server_refuses() {
    let bad = kustomization(json!({
        "interval": "10minutes", "path": "./apps", "wait": "yes",
        "sourceRef": {"kind": "GitRepo", "name": "flux-system"},
        "patchs": [],
        "postBuild": {"substituteFrom": [{"kind": "ConfigMap", "name": ""}], "substitute": null},
    }));
    let got = messages(bad);
    let has = |needle: &str| got.iter().any(|m| m.contains(needle));
    assert!(
        has("spec.interval | spec.interval: Invalid value: \"10minutes\""),
        "{got:#?}"
    );
    assert!(has("spec | spec.prune: Required value"), "{got:#?}");
    assert!(has("must be of type boolean"), "{got:#?}");
    assert!(has("Unsupported value: \"GitRepo\""), "{got:#?}");
    assert!(
        has("unknown field `patchs`") && has("Did you mean `patches`?"),
        "{got:#?}"
    );
    assert!(
        has("spec.postBuild.substituteFrom[0].name: Invalid value: \"\""),
        "{got:#?}"
    );
    assert_eq!(got.len(), 6, "{got:#?}");
}

#[test]
fn cel_rules_and_metadata() {
    let hr = json!({
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "Bad_Name", "namespace": "kube-system", "lables": {}},
        "spec": {"interval": "1h", "values": {"anything": {"goes": 1}}},
    });
    let got = messages(hr);
    assert!(
        got.iter()
            .any(|m| m.contains("either chart or chartRef must be set")),
        "{got:#?}"
    );
    assert!(
        got.iter()
            .any(|m| m.contains("metadata.name: Invalid value")),
        "{got:#?}"
    );
    assert!(
        got.iter()
            .any(|m| m.contains("unknown field `lables`") && m.contains("`labels`")),
        "{got:#?}"
    );
    assert_eq!(got.len(), 3, "{got:#?}");
}

#[test]
fn unserved_versions_and_other_groups() {
    let old = json!({"apiVersion": "helm.toolkit.fluxcd.io/v2beta1", "kind": "HelmRelease", "metadata": {"name": "x"}});
    let got = messages(old);
    assert!(
        got[0].contains("served: helm.toolkit.fluxcd.io/v2"),
        "{got:?}"
    );
    let other = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}});
    assert!(Schemas::embedded().validate(&other).is_none());
    assert!(Schemas::embedded().knows_group("source.toolkit.fluxcd.io"));
}

#[test]
fn names_and_labels() {
    assert!(is_dns1123("a.b-c", true) && !is_dns1123("a.b-c", false));
    assert!(!is_dns1123("-a", true) && !is_dns1123("", true) && !is_dns1123("A", true));
    assert!(is_label_value("") && is_label_value("a.b_c-1") && !is_label_value("-a"));
    assert!(!is_label_value(&"a".repeat(64)));
}

/// A command's remembered results are the validation's, by value and by address.
#[test]
fn remembered_results_are_the_validation() {
    let schemas = Schemas::embedded();
    let validations = Validations::default();
    let objects = [
        kustomization(json!({"interval": "10m", "path": "./apps", "prune": true,
            "sourceRef": {"kind": "GitRepository", "name": "flux-system"}})),
        kustomization(json!({"interval": "10minutes", "path": "./apps", "patchs": []})),
        json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v9", "kind": "Kustomization",
            "metadata": {"name": "a"}}),
        json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "a"}}),
    ];
    for object in objects.iter().chain(&objects) {
        assert_eq!(
            validations.validate(schemas, object),
            schemas.validate(object),
            "{object}"
        );
    }
    assert!(!schemas.validate(&objects[1]).unwrap().is_empty());
    // By address: the same Arc twice, and equal objects in other Arcs.
    let shared: Vec<std::sync::Arc<serde_json::Value>> = objects
        .iter()
        .chain(&objects)
        .map(|o| std::sync::Arc::new(o.clone()))
        .collect();
    for object in shared.iter().chain(&shared) {
        assert_eq!(
            validations.validate_shared(schemas, object),
            schemas.validate(object),
            "{object}"
        );
    }
}

/// build.rs's JSON holds what the vendored YAML says, value for value (and nothing else).
#[test]
fn the_built_json_is_the_vendored_yaml() {
    let yaml: &[(&str, &str)] = &[
        (
            "helm.toolkit.fluxcd.io_helmreleases.yaml",
            include_str!("../../../../schemas/flux/helm.toolkit.fluxcd.io_helmreleases.yaml"),
        ),
        (
            "kustomize.toolkit.fluxcd.io_kustomizations.yaml",
            include_str!(
                "../../../../schemas/flux/kustomize.toolkit.fluxcd.io_kustomizations.yaml"
            ),
        ),
        (
            "source.toolkit.fluxcd.io_gitrepositories.yaml",
            include_str!("../../../../schemas/flux/source.toolkit.fluxcd.io_gitrepositories.yaml"),
        ),
        (
            "source.toolkit.fluxcd.io_helmrepositories.yaml",
            include_str!("../../../../schemas/flux/source.toolkit.fluxcd.io_helmrepositories.yaml"),
        ),
        (
            "source.toolkit.fluxcd.io_ocirepositories.yaml",
            include_str!("../../../../schemas/flux/source.toolkit.fluxcd.io_ocirepositories.yaml"),
        ),
    ];
    let built: serde_json::Map<String, Value> = serde_json::from_str(CRDS_JSON).unwrap();
    assert_eq!(built.len(), yaml.len());
    assert_eq!(CRDS.len(), yaml.len());
    for (file, text) in yaml {
        let parsed: Value = crate::ports::yaml::from_str(text).unwrap();
        assert_eq!(built.get(*file), Some(&parsed), "{file}");
    }
}
