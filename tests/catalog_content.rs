//! Content checks for the embedded component catalog, `templates/components/<name>/`.
//!
//! Every component must parse, ship one Kustomize `Component` per layer, build with the real
//! `kubectl kustomize`, carry Flux sources and releases that the Flux CRDs accept (unknown fields
//! rejected), use only `${key}`s the cell-metadata ConfigMap will hold, and, when it needs AWS
//! permissions, ship Terraform whose every key expression resolves within the cell's stack.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Component as PathPart, Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Deserialize;
use serde_json::Value;

/// Keys every cell's ConfigMap has (templates/repo/cellgen.yaml.j2 and cell-metadata.tf.j2).
const BASE_KEYS: &[&str] = &[
    "schema",
    "cell_name",
    "aws_region",
    "cluster_name",
    "vpc_id",
    "app_role_arn",
    "admission_action",
];

/// Layers of a new repository's cellgen.yaml.
const LAYERS: &[&str] = &["controllers", "configs", "apps"];

/// What the cell's Terraform stack declares before any component joins it (docs/components.md), plus the
/// other objects the generated stack has.
const BASE_DECLARED: &[&str] = &[
    "var.name",
    "var.region",
    "var.environment",
    "var.kubernetes_version",
    "var.vpc_cidr",
    "var.git_url",
    "var.git_branch",
    "local.tags",
    "local.azs",
    "local.settings",
    "local.admin_role_arns",
    "local.public_endpoint_cidrs",
    "module.eks",
    "module.vpc",
    "module.system_node_group",
    "helm_release.cilium",
    "helm_release.flux_operator",
    "helm_release.flux_instance",
    "kubernetes_secret_v1.flux_git",
    "aws_iam_role.app_abac",
    "aws_iam_role_policy.app_abac",
    "aws_eks_pod_identity_association.app",
    "aws_eks_addon.coredns",
    // cluster.tf (issue 19): the partition and account components build ARNs with
    "data.aws_partition.current",
    "data.aws_caller_identity.current",
];

/// The Flux kinds whose CRDs are vendored in schemas/flux.
const FLUX_KINDS: &[&str] = &["HelmRelease", "HelmRepository", "OCIRepository"];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ComponentSpec {
    description: String,
    #[serde(default)]
    requires: Vec<String>,
    layers: Vec<String>,
    #[serde(default)]
    keys: BTreeMap<String, KeySpec>,
    #[serde(default)]
    identity: Option<Identity>,
    #[serde(default)]
    depends_on: Vec<String>,
    #[serde(default)]
    teardown: Option<Teardown>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Teardown {
    description: String,
    commands: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeySpec {
    description: String,
    example: String,
    terraform: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Identity {
    namespace: String,
    service_account: String,
    #[serde(default)]
    policy_arns: Vec<String>,
}

struct Entry {
    name: String,
    dir: PathBuf,
    spec: ComponentSpec,
}

fn catalog_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/components")
}

fn catalog() -> Vec<Entry> {
    let mut entries = Vec::new();
    for dirent in fs::read_dir(catalog_dir()).expect("templates/components is readable") {
        let dir = dirent.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let text = fs::read_to_string(dir.join("component.yaml"))
            .unwrap_or_else(|err| panic!("{name}: component.yaml: {err}"));
        let spec: ComponentSpec = yaml_serde::from_str(&text)
            .unwrap_or_else(|err| panic!("{name}: component.yaml does not parse: {err}"));
        entries.push(Entry { name, dir, spec });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    assert!(!entries.is_empty(), "the catalog has no components");
    entries
}

fn ident(name: &str) -> String {
    name.replace('-', "_")
}

fn yaml_docs(text: &str, what: &str) -> Vec<Value> {
    yaml_serde::Deserializer::from_str(text)
        .map(|doc| Value::deserialize(doc).unwrap_or_else(|err| panic!("{what}: bad YAML: {err}")))
        .filter(|doc| !doc.is_null())
        .collect()
}

#[test]
fn component_yaml_is_well_formed() {
    let names: BTreeSet<String> = catalog().into_iter().map(|e| e.name).collect();
    for Entry { name, spec, .. } in catalog() {
        assert!(
            !spec.description.trim().is_empty(),
            "{name}: empty description"
        );
        assert!(!spec.layers.is_empty(), "{name}: no layers");
        for layer in &spec.layers {
            assert!(
                LAYERS.contains(&layer.as_str()),
                "{name}: unknown layer {layer}"
            );
        }
        for required in &spec.requires {
            assert!(
                names.contains(required),
                "{name}: requires unknown component {required}"
            );
            assert_ne!(required, &name, "{name}: requires itself");
        }
        for (key, key_spec) in &spec.keys {
            assert!(
                cellgen::model::keys::is_valid_key_name(key),
                "{name}: bad key name {key}"
            );
            assert!(
                !BASE_KEYS.contains(&key.as_str()),
                "{name}: redefines base key {key}"
            );
            assert!(
                !key_spec.description.trim().is_empty(),
                "{name}: {key}: no description"
            );
            assert!(
                !key_spec.example.trim().is_empty(),
                "{name}: {key}: no example"
            );
            assert!(
                !key_spec.terraform.trim().is_empty(),
                "{name}: {key}: no terraform"
            );
        }
        if let Some(teardown) = &spec.teardown {
            assert!(
                !teardown.description.trim().is_empty(),
                "{name}: a tear-down without its reason"
            );
            assert!(
                !teardown.commands.is_empty()
                    && teardown.commands.iter().all(|c| c.starts_with("kubectl ")),
                "{name}: tear-down commands run against the cell's cluster (kubectl): {:?}",
                teardown.commands
            );
        }
        match &spec.identity {
            Some(identity) => {
                assert!(!identity.namespace.is_empty() && !identity.service_account.is_empty());
                assert!(
                    identity
                        .policy_arns
                        .iter()
                        .all(|arn| arn.starts_with("arn:")),
                    "{name}: policy_arns must be ARNs"
                );
                let role_key = format!("{}_role_arn", ident(&name));
                assert!(
                    spec.keys.contains_key(&role_key),
                    "{name}: identity without {role_key}"
                );
                assert!(
                    !spec.depends_on.is_empty(),
                    "{name}: identity without depends_on"
                );
            }
            None => {
                assert!(
                    spec.teardown.is_none(),
                    "{name}: a tear-down for cloud resources, without an AWS identity to own them"
                );
                assert!(spec.keys.is_empty(), "{name}: keys without an identity");
                assert!(
                    spec.depends_on.is_empty(),
                    "{name}: depends_on without an identity"
                );
            }
        }
    }
}

#[test]
fn each_layer_is_a_kustomize_component_listing_its_files() {
    for Entry { name, dir, spec } in catalog() {
        let mut expected_dirs: BTreeSet<String> = spec.layers.iter().cloned().collect();
        for dirent in fs::read_dir(&dir).unwrap() {
            let path = dirent.unwrap().path();
            if path.is_dir() {
                let layer = path.file_name().unwrap().to_string_lossy().into_owned();
                assert!(
                    expected_dirs.remove(&layer),
                    "{name}: directory {layer} is not a listed layer"
                );
            }
        }
        assert!(
            expected_dirs.is_empty(),
            "{name}: layer dirs missing: {expected_dirs:?}"
        );

        for layer in &spec.layers {
            let layer_dir = dir.join(layer);
            let text = fs::read_to_string(layer_dir.join("kustomization.yaml"))
                .unwrap_or_else(|err| panic!("{name}/{layer}: kustomization.yaml: {err}"));
            let doc = &yaml_docs(&text, &format!("{name}/{layer}"))[0];
            assert_eq!(
                doc["apiVersion"], "kustomize.config.k8s.io/v1alpha1",
                "{name}/{layer}: apiVersion"
            );
            assert_eq!(doc["kind"], "Component", "{name}/{layer}: kind");
            let listed: BTreeSet<String> = doc["resources"]
                .as_array()
                .unwrap_or_else(|| panic!("{name}/{layer}: no resources"))
                .iter()
                .map(|r| r.as_str().unwrap().to_string())
                .collect();
            let present: BTreeSet<String> = fs::read_dir(&layer_dir)
                .unwrap()
                .map(|d| d.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|f| f != "kustomization.yaml")
                .collect();
            assert_eq!(
                listed, present,
                "{name}/{layer}: resources must list exactly the files"
            );
        }
    }
}

#[test]
fn manifests_build_validate_and_use_only_known_keys() {
    for Entry { name, dir, spec } in catalog() {
        let mut used: BTreeSet<String> = BTreeSet::new();
        let mut objects = Vec::new();
        for layer in &spec.layers {
            let built = kustomize_component(&dir.join(layer));
            used.extend(substituted_keys(&built, &format!("{name}/{layer}")));
            objects.extend(yaml_docs(&built, &format!("{name}/{layer} (built)")));
        }

        // Every ${key} is a base key or the component's own; every own key is used.
        for key in &used {
            assert!(
                BASE_KEYS.contains(&key.as_str()) || spec.keys.contains_key(key),
                "{name}: uses ${{{key}}}, neither a base key nor one of its keys"
            );
        }
        for key in spec.keys.keys() {
            assert!(used.contains(key), "{name}: key {key} is never used");
        }

        // Flux objects pass the CRD schemas, with unknown fields rejected.
        let mut releases = 0;
        for object in &objects {
            let kind = object["kind"].as_str().unwrap_or_default();
            if FLUX_KINDS.contains(&kind) {
                let doc = support::YamlDoc {
                    source: name.clone(),
                    value: object.clone(),
                };
                let problems = support::validate_flux_objects(&[doc]);
                assert!(problems.is_empty(), "{name}: {}", problems.join("\n"));
            }
            if kind == "HelmRelease" {
                releases += 1;
                check_release(object, &objects, &name);
            }
        }
        assert!(releases > 0, "{name}: no HelmRelease");

        // Own namespaces come with the component; only kube-system is assumed.
        let namespaces: BTreeSet<&str> = objects
            .iter()
            .filter(|o| o["kind"] == "Namespace")
            .filter_map(|o| o["metadata"]["name"].as_str())
            .collect();
        for object in &objects {
            if let Some(ns) = object["metadata"]["namespace"].as_str() {
                assert!(
                    ns == "kube-system" || namespaces.contains(ns),
                    "{name}: {} {} is in namespace {ns}, which the component does not create",
                    object["kind"],
                    object["metadata"]["name"]
                );
            }
        }
        if let Some(identity) = &spec.identity {
            assert!(
                identity.namespace == "kube-system"
                    || namespaces.contains(identity.namespace.as_str()),
                "{name}: identity namespace {} is not created",
                identity.namespace
            );
        }
    }
}

/// A release pins its chart, reaches a source shipped in the same component, and lets Flux manage
/// CRDs on install and upgrade.
fn check_release(release: &Value, objects: &[Value], component: &str) {
    let name = release["metadata"]["name"].as_str().unwrap_or_default();
    let namespace = release["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default();
    let what = format!("{component}: HelmRelease {name}");
    assert!(!namespace.is_empty(), "{what}: no namespace");
    for phase in ["install", "upgrade"] {
        assert_eq!(
            release["spec"][phase]["crds"], "CreateReplace",
            "{what}: {phase}.crds"
        );
    }
    let spec = &release["spec"];
    let (source_kind, source_name, source_ns, version) = if spec["chartRef"].is_object() {
        let r = &spec["chartRef"];
        let source = find(
            objects,
            r["kind"].as_str().unwrap(),
            r["name"].as_str().unwrap(),
        );
        let tag = source.map(|s| s["spec"]["ref"]["tag"].clone());
        (
            &r["kind"],
            &r["name"],
            &r["namespace"],
            tag.unwrap_or(Value::Null),
        )
    } else {
        let c = &spec["chart"]["spec"];
        let r = &c["sourceRef"];
        (
            &r["kind"],
            &r["name"],
            &r["namespace"],
            c["version"].clone(),
        )
    };
    let source_ns = source_ns.as_str().unwrap_or(namespace);
    let source = find(
        objects,
        source_kind.as_str().unwrap(),
        source_name.as_str().unwrap(),
    )
    .unwrap_or_else(|| panic!("{what}: source {source_kind} {source_name} is not shipped"));
    assert_eq!(
        source["metadata"]["namespace"], source_ns,
        "{what}: source namespace"
    );
    let version = version
        .as_str()
        .unwrap_or_else(|| panic!("{what}: chart version not pinned"));
    assert!(
        version.trim_start_matches('v').split('.').count() == 3
            && version
                .trim_start_matches('v')
                .chars()
                .all(|c| c.is_ascii_digit() || c == '.'),
        "{what}: chart version {version} is not an exact x.y.z"
    );
    if let Some(url) = source["spec"]["url"].as_str() {
        assert!(
            url.starts_with("https://") || url.starts_with("oci://"),
            "{what}: source URL {url}"
        );
    }
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> Option<&'a Value> {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
}

/// `kubectl kustomize` of an overlay that only pulls in `component` (kustomize wants the path
/// relative to the overlay).
fn kustomize_component(component: &Path) -> String {
    let overlay = tempfile::tempdir().unwrap();
    let from = overlay.path().canonicalize().unwrap();
    let relative = relative_path(&from, &component.canonicalize().unwrap());
    fs::write(
        overlay.path().join("kustomization.yaml"),
        format!(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\ncomponents:\n  - {}\n",
            relative.display()
        ),
    )
    .unwrap();
    let output = Command::new("kubectl")
        .arg("kustomize")
        .arg(overlay.path())
        .output()
        .expect("kubectl must be installed to check the catalog");
    assert!(
        output.status.success(),
        "kubectl kustomize {}: {}",
        component.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn relative_path(from: &Path, to: &Path) -> PathBuf {
    let from: Vec<PathPart> = from.components().collect();
    let to: Vec<PathPart> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut path = PathBuf::new();
    for _ in common..from.len() {
        path.push("..");
    }
    for part in &to[common..] {
        path.push(part.as_os_str());
    }
    path
}

/// Names of the `${key}` forms Flux substitutes, each a valid Flux variable name.
fn substituted_keys(text: &str, what: &str) -> BTreeSet<String> {
    let keys = support::substitution_variables(text);
    for key in &keys {
        assert!(
            cellgen::model::keys::is_valid_key_name(key),
            "{what}: `${{{key}}}` is not a valid variable"
        );
    }
    keys
}

#[test]
fn terraform_declares_what_the_keys_name() {
    let mut env = minijinja::Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    env.set_keep_trailing_newline(true);
    for Entry { name, dir, spec } in catalog() {
        let template = dir.join("terraform.tf.j2");
        if spec.identity.is_none() {
            assert!(
                !template.exists(),
                "{name}: terraform.tf.j2 without an identity"
            );
            continue;
        }
        let source = fs::read_to_string(&template)
            .unwrap_or_else(|err| panic!("{name}: identity needs terraform.tf.j2: {err}"));
        let context = minijinja::context! {
            cell => "eu-west-2-prod",
            region => "eu-west-2",
            environment => "prod",
            component => &name,
            ident => ident(&name),
        };
        let rendered = env
            .render_str(&source, context)
            .unwrap_or_else(|err| panic!("{name}: terraform.tf.j2 does not render: {err:#}"));

        let mut declared: BTreeSet<String> = BASE_DECLARED.iter().map(|s| s.to_string()).collect();
        let own = declarations(&rendered);
        assert!(!own.is_empty(), "{name}: terraform.tf.j2 declares nothing");
        declared.extend(own.iter().cloned());

        for (key, key_spec) in &spec.keys {
            let root = reference_root(&key_spec.terraform)
                .unwrap_or_else(|| panic!("{name}: {key}: no reference in {}", key_spec.terraform));
            assert!(
                declared.contains(&root),
                "{name}: {key}: {root} is not declared"
            );
        }
        for dependency in &spec.depends_on {
            assert!(
                own.contains(dependency),
                "{name}: depends_on {dependency} is not declared"
            );
        }
        for root in references(&rendered) {
            assert!(
                declared.contains(&root),
                "{name}: terraform.tf.j2 uses undeclared {root}"
            );
        }
        check_terraform_fmt(&rendered, &name);
    }
}

/// `module.X`, `TYPE.NAME` and `data.TYPE.NAME` of the blocks in an HCL file, and `local.X` of
/// its `locals` blocks.
fn declarations(hcl: &str) -> BTreeSet<String> {
    let mut declared = BTreeSet::new();
    let mut in_locals = false;
    for line in hcl.lines() {
        if line.starts_with("locals {") {
            in_locals = true;
        } else if line.starts_with('}') {
            in_locals = false;
        } else if in_locals
            && let Some((name, _)) = line.strip_prefix("  ").and_then(|l| l.split_once('='))
            && !name.starts_with(' ')
        {
            declared.insert(format!("local.{}", name.trim()));
        }
    }
    for line in hcl
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.starts_with('#'))
    {
        let labels: Vec<&str> = line
            .split('"')
            .enumerate()
            .filter(|(i, _)| i % 2 == 1)
            .map(|(_, s)| s)
            .collect();
        let block = line.split_whitespace().next().unwrap_or_default();
        match (block, labels.as_slice()) {
            ("module", [name]) => declared.insert(format!("module.{name}")),
            ("variable", [name]) => declared.insert(format!("var.{name}")),
            ("resource", [kind, name]) => declared.insert(format!("{kind}.{name}")),
            ("data", [kind, name]) => declared.insert(format!("data.{kind}.{name}")),
            _ => false,
        };
    }
    declared
}

/// The root object of the first reference in a Terraform expression.
fn reference_root(expression: &str) -> Option<String> {
    references(expression).into_iter().next()
}

/// Roots of `var.x`, `local.x`, `module.x`, `data.t.n` and `t.n` (resource) references.
fn references(hcl: &str) -> Vec<String> {
    let mut roots = Vec::new();
    // Strip comments and quoted strings outside ${...} interpolation; then scan identifiers.
    for line in hcl.lines() {
        let code = strip_strings(line.split('#').next().unwrap_or_default());
        let words: Vec<&str> = code
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-'))
            .filter(|w| w.contains('.'))
            .collect();
        for word in words {
            let parts: Vec<&str> = word.split('.').collect();
            let root = match parts.as_slice() {
                ["var" | "local" | "module", name, ..] => format!("{}.{name}", parts[0]),
                ["data", kind, name, ..] => format!("data.{kind}.{name}"),
                [kind, name, ..] if kind.contains('_') && !name.is_empty() => {
                    format!("{kind}.{name}")
                }
                _ => continue,
            };
            if !root.chars().next().unwrap().is_ascii_digit() {
                roots.push(root);
            }
        }
    }
    roots
}

/// Keeps code and the inside of `${...}` interpolations; drops the literal parts of strings.
fn strip_strings(line: &str) -> String {
    let mut out = String::new();
    let mut in_string = false;
    let mut depth = 0;
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if in_string && depth == 0 {
            if c == '"' {
                in_string = false;
            } else if c == '$' && chars.get(i + 1) == Some(&'{') {
                depth = 1;
                i += 1;
                out.push(' ');
            }
        } else if in_string {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            out.push(if depth == 0 { ' ' } else { c });
        } else if c == '"' {
            in_string = true;
            out.push(' ');
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

/// The rendered file is what `terraform fmt` would write (checked when terraform is installed).
fn check_terraform_fmt(rendered: &str, component: &str) {
    let Ok(mut child) = Command::new("terraform")
        .args(["fmt", "-no-color", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        support::tools::skip_without("terraform", &format!("the fmt check of {component}"));
        return;
    };
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(rendered.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{component}: terraform fmt: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let formatted = String::from_utf8(output.stdout).unwrap();
    if formatted != rendered {
        let diff = similar::TextDiff::from_lines(rendered, &formatted);
        panic!(
            "{component}: terraform.tf.j2 is not terraform fmt-formatted:\n{}",
            diff.unified_diff()
        );
    }
}

/// A version as numbers (a leading `v` aside), for ordering.
fn release(version: &str) -> Vec<u64> {
    version
        .trim_start_matches('v')
        .split('.')
        .map(|p| {
            p.parse()
                .unwrap_or_else(|_| panic!("not a release: {version}"))
        })
        .collect()
}

/// Every chart pin (issue 19) is at least the newest release schemas/charts/newest-known.yaml
/// records for it, read from the chart's own releases: the components' HelmRelease or
/// OCIRepository, and Cilium's version in a new repository's cellgen.yaml. Every pinned chart has
/// an entry, and every entry a pin.
#[test]
fn no_chart_pin_is_older_than_the_newest_known_release() {
    let known: Value = yaml_serde::from_str(
        &fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/charts/newest-known.yaml"),
        )
        .unwrap(),
    )
    .unwrap();
    let known = known["charts"].as_object().unwrap();
    let mut pins: Vec<(String, String)> = Vec::new();
    for entry in catalog() {
        let controllers = entry.dir.join("controllers");
        let helm = controllers.join("helmrelease.yaml");
        let oci = controllers.join("ocirepository.yaml");
        let version = if oci.exists() {
            let doc: Value = yaml_serde::from_str(&fs::read_to_string(&oci).unwrap()).unwrap();
            doc["spec"]["ref"]["tag"].as_str().map(str::to_string)
        } else {
            let doc: Value = yaml_serde::from_str(&fs::read_to_string(&helm).unwrap()).unwrap();
            doc["spec"]["chart"]["spec"]["version"]
                .as_str()
                .map(str::to_string)
        };
        let version = version.unwrap_or_else(|| panic!("{}: no chart version", entry.name));
        pins.push((entry.name.clone(), version));
    }
    pins.push((
        "cilium".into(),
        cellgen::model::platform::CILIUM_VERSION.into(),
    ));
    let mut problems = Vec::new();
    for (name, pin) in &pins {
        let Some(entry) = known.get(name) else {
            problems.push(format!(
                "{name}: no entry in schemas/charts/newest-known.yaml"
            ));
            continue;
        };
        assert!(
            entry["source"]
                .as_str()
                .is_some_and(|s| !s.trim().is_empty()),
            "{name}: an entry says where it was read"
        );
        let newest = entry["newest"].as_str().unwrap();
        if release(pin) < release(newest) {
            problems.push(format!(
                "{name}: pinned {pin}, but {newest} is out ({})",
                entry["source"].as_str().unwrap()
            ));
        }
    }
    for name in known.keys() {
        if !pins.iter().any(|(n, _)| n == name) {
            problems.push(format!(
                "{name}: an entry of newest-known.yaml that nothing pins"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
