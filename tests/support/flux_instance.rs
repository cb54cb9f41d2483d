//! The FluxInstance a cell's flux.tf hands the Flux Operator, checked as the flux-instance chart
//! and the API server would: the stack's values (`local.flux_instance_values`, evaluated for the
//! cell) coalesced into the chart's defaults and validated against its values schema, with no key
//! the chart lacks (the schema does not close its objects); then rendered as the chart's
//! templates/instance.yaml does and validated against the FluxInstance CRD with cellgen's own
//! API-server validator. The chart's facts are vendored in schemas/flux-operator, for the release
//! `flux.operator_version` in cellgen.yaml pins.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cellgen::analysis::check::schema::Schemas;
use serde_json::Value;

use super::read;

pub fn operator_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/flux-operator")
}

pub fn json(path: &Path) -> Value {
    serde_json::from_str(&read(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `${…}` expressions of the values replaced by what they evaluate to in this cell; an
/// expression the table does not know fails the test (a new one needs a look).
fn evaluate(value: &Value, known: &[(&str, String)]) -> Value {
    match value {
        Value::String(s) => {
            let mut out = s.clone();
            for (expr, v) in known {
                out = out.replace(&format!("${{{expr}}}"), v);
            }
            assert!(!out.contains("${"), "no value for an expression in `{s}`");
            Value::String(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| evaluate(v, known)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), evaluate(v, known)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Helm's coalescing of user values into the chart's defaults: maps merge key by key, anything
/// else the user gives replaces the default.
fn coalesce(defaults: &Value, user: &Value) -> Value {
    match (defaults, user) {
        (Value::Object(d), Value::Object(u)) => {
            let mut out = d.clone();
            for (k, v) in u {
                let merged = match d.get(k) {
                    Some(dv) => coalesce(dv, v),
                    None => v.clone(),
                };
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        (_, u) => u.clone(),
    }
}

/// Keys the stack sets that the chart's values do not have (the schema does not close its
/// objects, so a misspelt key would be dropped silently).
fn unknown_keys(defaults: &Value, user: &Value, path: &str, out: &mut Vec<String>) {
    if let (Value::Object(d), Value::Object(u)) = (defaults, user) {
        for (k, v) in u {
            let at = format!("{path}.{k}");
            match d.get(k) {
                None => out.push(at),
                Some(dv) => unknown_keys(dv, v, &at, out),
            }
        }
    }
}

/// The FluxInstance the flux-instance chart 0.49.0 renders from `values` (coalesced), following
/// its templates/instance.yaml: distribution (artifact written even when empty, which YAML reads
/// as null), components, the cluster's non-empty entries, commonMetadata when it has entries,
/// kustomize, sync when it has a URL, storage with a size, sharding with shards.
pub fn render_instance(values: &Value, release_namespace: &str) -> Value {
    let i = &values["instance"];
    let d = &i["distribution"];
    let non_empty = |v: &Value| !(v.is_null() || v == "" || v == &serde_json::json!({}));
    let mut distribution = serde_json::json!({
        "version": d["version"],
        "registry": d["registry"],
        "artifact": if d["artifact"] == "" { Value::Null } else { d["artifact"].clone() },
    });
    for key in ["artifactPullSecret", "imagePullSecret", "variant"] {
        if non_empty(&d[key]) {
            distribution[key] = d[key].clone();
        }
    }
    let cluster: serde_json::Map<String, Value> = i["cluster"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, v)| *v != "")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut spec = serde_json::json!({
        "distribution": distribution,
        "components": i["components"],
        "cluster": cluster,
        "kustomize": i["kustomize"],
    });
    let meta = &i["commonMetadata"];
    if non_empty(&meta["labels"]) || non_empty(&meta["annotations"]) {
        spec["commonMetadata"] = meta.clone();
    }
    let sync = &i["sync"];
    if non_empty(&sync["url"]) {
        let mut out = serde_json::json!({
            "kind": sync["kind"], "interval": sync["interval"], "url": sync["url"],
            "ref": sync["ref"], "path": sync["path"],
        });
        for key in ["name", "provider", "pullSecret"] {
            if non_empty(&sync[key]) {
                out[key] = sync[key].clone();
            }
        }
        spec["sync"] = out;
    }
    if non_empty(&i["storage"]["size"]) {
        spec["storage"] = i["storage"].clone();
    }
    if i["sharding"]["shards"]
        .as_array()
        .is_some_and(|s| !s.is_empty())
    {
        spec["sharding"] = i["sharding"].clone();
    }
    serde_json::json!({
        "apiVersion": "fluxcd.controlplane.io/v1",
        "kind": "FluxInstance",
        "metadata": {"name": values["fullnameOverride"], "namespace": release_namespace},
        "spec": spec,
    })
}

fn crd() -> &'static Schemas {
    static CRD: OnceLock<Schemas> = OnceLock::new();
    CRD.get_or_init(|| {
        let crd = json(&operator_dir().join("fluxcd.controlplane.io_fluxinstances.json"));
        Schemas::from_crds(vec![("fluxinstances", crd)]).expect("the vendored CRD compiles")
    })
}

/// The FluxInstance of a cell's stack (`parsed`: HashiCorp's parse of its directory; `settings`:
/// cellgen.yaml), and the chart's coalesced values; or what the chart or the API server refuse.
pub fn flux_instance(parsed: &Value, settings: &Value) -> Result<(Value, Value), Vec<String>> {
    let operator_version = settings["flux"]["operator_version"].as_str().ok_or(vec![
        "cellgen.yaml has no flux.operator_version".to_string(),
    ])?;
    let schema_file = operator_dir().join(format!(
        "flux-instance@{operator_version}.values.schema.json"
    ));
    if !schema_file.exists() {
        return Err(vec![format!(
            "flux.operator_version {operator_version} has no vendored chart in schemas/flux-operator"
        )]);
    }
    let tfvars = &parsed["terraform.tfvars"];
    let secret = &parsed["flux.tf"]["resource"]["kubernetes_secret_v1"]["flux_git"][0];
    let values = evaluate(
        &parsed["flux.tf"]["locals"][0]["flux_instance_values"],
        &[
            (
                "local.flux_version",
                settings["flux"]["version"]
                    .as_str()
                    .unwrap_or_default()
                    .into(),
            ),
            (
                "var.git_url",
                tfvars["git_url"].as_str().unwrap_or_default().into(),
            ),
            (
                "var.git_branch",
                tfvars["git_branch"].as_str().unwrap_or_default().into(),
            ),
            (
                "var.name",
                tfvars["name"].as_str().unwrap_or_default().into(),
            ),
            (
                "kubernetes_secret_v1.flux_git.metadata[0].name",
                secret["metadata"][0]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .into(),
            ),
        ],
    );
    let defaults =
        json(&operator_dir().join(format!("flux-instance@{operator_version}.values.json")));
    let mut problems = Vec::new();
    unknown_keys(&defaults, &values, "values", &mut problems);
    problems
        .iter_mut()
        .for_each(|p| *p = format!("{p}: the flux-instance chart has no such value"));
    let merged = coalesce(&defaults, &values);
    let validator =
        jsonschema::validator_for(&json(&schema_file)).expect("the values schema compiles");
    problems.extend(
        validator
            .iter_errors(&merged)
            .map(|e| format!("the chart refuses values{}: {e}", e.instance_path())),
    );
    let object = render_instance(&merged, "flux-system");
    match crd().validate(&object) {
        Some(violations) => problems.extend(
            violations
                .iter()
                .map(|v| format!("the API server refuses the FluxInstance: {}", v.message)),
        ),
        None => problems.push("the CRD does not serve the FluxInstance".into()),
    }
    if problems.is_empty() {
        Ok((object, merged))
    } else {
        Err(problems)
    }
}
