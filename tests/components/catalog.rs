use super::*;

// ---------------------------------------------------------------------------------------------
// Every catalog component, in a fresh cell, against the real tools
// ---------------------------------------------------------------------------------------------

/// `cellgen list components --format json` of a directory.
pub(crate) fn catalog_json(dir: &Path) -> Vec<Value> {
    let out = run_ok(dir, &["list", "components", "--format", "json"]);
    let value: Value = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("list components --format json is not JSON ({e}):\n{out}"));
    value.as_array().expect("a JSON array").clone()
}

pub(crate) fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Builds every layer of `cell` the way Flux does: `spec.components` of the cell's Flux
/// Kustomization are added to the kustomization.yaml at `spec.path` (in a scratch copy of the
/// repository), then `kubectl kustomize` builds that directory. Returns (layer, spec.path,
/// rendered YAML).
pub(crate) fn build_layers_like_flux(root: &Path, cell: &str) -> Vec<(String, String, String)> {
    let scratch = temp_dir();
    copy_dir(root, scratch.path());
    let mut built = Vec::new();
    for layer in LAYERS {
        let file = root.join(format!("cells/{cell}/{layer}.yaml"));
        let doc = load_yaml_file(&file).remove(0).value;
        let path = doc["spec"]["path"]
            .as_str()
            .unwrap_or_else(|| panic!("{} has no spec.path", file.display()))
            .trim_start_matches("./")
            .to_string();
        let components = strings(&doc["spec"]["components"]);
        if !components.is_empty() {
            let kustomization = scratch.path().join(&path).join("kustomization.yaml");
            let mut k: serde_json::Map<String, Value> = yaml_serde::from_str(&read(&kustomization))
                .unwrap_or_else(|e| panic!("{}: not a YAML mapping: {e}", kustomization.display()));
            let listed = k
                .entry("components")
                .or_insert_with(|| Value::Array(Vec::new()));
            listed
                .as_array_mut()
                .expect("components is a list")
                .extend(components.iter().cloned().map(Value::String));
            fs::write(&kustomization, yaml_serde::to_string(&k).unwrap()).unwrap();
        }
        let rendered = kustomize_build(&scratch.path().join(&path)).unwrap_or_else(|e| {
            panic!("layer {layer} of {cell} with components {components:?}: {e}")
        });
        built.push((layer.to_string(), path, rendered));
    }
    built
}

/// Every YAML document under a directory, recursively.
pub(crate) fn yaml_docs_under(dir: &Path) -> Vec<YamlDoc> {
    let mut docs = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.unwrap();
        if entry.path().extension().is_some_and(|e| e == "yaml") {
            docs.extend(load_yaml_file(entry.path()));
        }
    }
    docs
}

#[test]
fn every_catalog_component_in_a_fresh_cell_passes_the_real_tools() {
    let probe = new_repo(&[PROD]);
    let catalog = catalog_json(probe.path());
    assert!(
        catalog.len() >= 8,
        "the catalog lists {} components",
        catalog.len()
    );
    let mut failures = Vec::new();
    for component in &catalog {
        let name = component["name"].as_str().expect("a name");
        let dir = new_repo(&[PROD]);
        let root = dir.path();
        let mut args = vec!["add-component", name];
        if !strings(&component["requires"]).is_empty() {
            args.push("--with-requirements");
        }
        run_ok(root, &args);

        // Flux side: the cell's layers list the component; every layer builds with it.
        let layers = strings(&component["layers"]);
        let built = build_layers_like_flux(root, PROD);
        for layer in &layers {
            let listed = strings(
                &load_yaml_file(&root.join(format!("cells/{PROD}/{layer}.yaml")))[0].value["spec"]
                    ["components"],
            );
            if !listed.contains(&format!("../../components/{name}/{layer}")) {
                failures.push(format!(
                    "{name}: cells/{PROD}/{layer}.yaml does not list it: {listed:?}"
                ));
            }
            let files = yaml_docs_under(&root.join(format!("components/{name}/{layer}")));
            let (_, path, rendered) = built.iter().find(|(l, _, _)| l == layer).unwrap();
            let objects = parse_yaml_docs(path, rendered).unwrap();
            for doc in files.iter().filter(|d| d.value["kind"] != "Component") {
                let kind = &doc.value["kind"];
                let object_name = &doc.value["metadata"]["name"];
                if !objects.iter().any(|o| {
                    o.value["kind"] == *kind && o.value["metadata"]["name"] == *object_name
                }) {
                    failures.push(format!(
                        "{name}: {kind} {object_name} ({}) is not in the build of layer {layer}",
                        doc.source
                    ));
                }
            }
        }

        // The keys the ConfigMap writes cover every ${key} of the component and of the builds.
        let tf_dir = root.join(format!("terraform/cells/{PROD}"));
        let parsed = hcl_parse_dir(&tf_dir);
        let metadata =
            &parsed["cell-metadata.tf"]["resource"]["kubernetes_config_map_v1"]["cell_metadata"][0];
        let data: BTreeSet<String> = metadata["data"]
            .as_object()
            .expect("cell-metadata.tf has data")
            .keys()
            .cloned()
            .collect();
        let mut used = BTreeSet::new();
        for entry in walkdir::WalkDir::new(root.join(format!("components/{name}"))) {
            let entry = entry.unwrap();
            if entry.file_type().is_file() {
                used.extend(substitution_variables(&read(entry.path())));
            }
        }
        for (_, _, rendered) in &built {
            used.extend(substitution_variables(rendered));
        }
        for var in used.difference(&data) {
            failures.push(format!(
                "{name}: ${{{var}}} is used, but cell-metadata.tf does not write it (data: {data:?})"
            ));
        }
        for key in component["keys"].as_object().unwrap().keys() {
            if !data.contains(key) {
                failures.push(format!("{name}: key {key} is not in cell-metadata.tf data"));
            }
        }

        // Terraform side: parses, every reference resolves, the ConfigMap waits for the identity.
        let problems = check_terraform_references(&parsed);
        failures.extend(problems.into_iter().map(|p| format!("{name}: {p}")));
        let has_identity = !component["identity"].is_null();
        if parsed.get(format!("{name}.tf")).is_some() != has_identity {
            failures.push(format!(
                "{name}: identity is {has_identity}, but {name}.tf exists: {}",
                !has_identity
            ));
        }
        let depends_on = strings(&metadata["depends_on"]);
        for dep in strings(&component["depends_on"]) {
            if !depends_on.contains(&format!("${{{dep}}}")) {
                failures.push(format!(
                    "{name}: cell-metadata's depends_on {depends_on:?} lacks {dep}"
                ));
            }
        }

        // Flux objects: the cell's layer files and the component's sources and releases.
        let mut docs = yaml_docs_under(&root.join(format!("cells/{PROD}")));
        let component_docs = yaml_docs_under(&root.join(format!("components/{name}")));
        if count_flux_objects(&component_docs) == 0 {
            failures.push(format!(
                "{name}: ships no Flux object (HelmRelease, source)"
            ));
        }
        docs.extend(component_docs);
        for (layer, _, rendered) in &built {
            docs.extend(parse_yaml_docs(&format!("{name}: layer {layer}"), rendered).unwrap());
        }
        failures.extend(validate_flux_objects(&docs));

        // And cellgen's own check agrees.
        let out = run(root, &["check"]);
        if !out.status.success() {
            failures.push(format!(
                "{name}: `cellgen check` failed ({}):\n{}{}",
                out.status,
                stdout(&out),
                stderr(&out)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
