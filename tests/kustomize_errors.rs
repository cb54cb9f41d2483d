//! Unsupported features, the Auto-mode fallback, and error messages that name
//! the file (and line) at fault.

use std::path::{Path, PathBuf};

use cellgen::ports::kustomize::{self, BuildError, Mode, Resource};
use cellgen::root::source::Source;
use serde_json::Value;

/// The builder over the working tree at `root`, read through the file layer as cellgen's
/// commands read it.
fn build(
    root: &camino::Utf8Path,
    path: &str,
    components: &[String],
    mode: Mode,
) -> Result<Vec<Resource>, BuildError> {
    kustomize::build(Source::disk(root).files(), root, path, components, mode)
}

fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// A temporary directory's path as the builder takes it (UTF-8, as temporary directories are).
fn utf8(path: &Path) -> &camino::Utf8Path {
    camino::Utf8Path::from_path(path).expect("a UTF-8 temporary directory")
}

#[path = "support/tools.rs"]
mod tools;

/// kubectl for `what`; without it the test says so and skips, or fails under CI.
fn have_kubectl(what: &str) -> bool {
    tools::tool_or_skip("kubectl", &["version", "--client"], what)
}

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n";

/// `vars` (deprecated, not built natively): kubectl builds it, so Auto falls back.
const VARS: &str = "\
resources: [cm.yaml]
vars:
- name: A
  objref: {apiVersion: v1, kind: ConfigMap, name: cm}
  fieldref: {fieldpath: data.a}
";

fn unsupported(err: BuildError) -> (camino::Utf8PathBuf, String) {
    match err {
        BuildError::Unsupported { file, field } => (file, field),
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

#[test]
fn unsupported_top_level_fields_name_file_and_field() {
    for field in [
        "helmCharts",
        "vars",
        "crds",
        "transformers",
        "generators",
        "openapi",
        "buildMetadata",
    ] {
        let text = format!("resources: [cm.yaml]\n{field}: []\n");
        let r = repo(&[("app/kustomization.yaml", &text), ("app/cm.yaml", CM)]);
        let err = build(utf8(r.path()), "app", &[], Mode::Native).unwrap_err();
        let msg = err.to_string();
        let (file, got) = unsupported(err);
        assert_eq!(file, Path::new("app/kustomization.yaml"));
        assert_eq!(got, field);
        assert!(
            msg.contains("app/kustomization.yaml") && msg.contains(field),
            "{msg}"
        );
    }
}

#[test]
fn unsupported_nested_fields() {
    let cases = [
        (
            "patches:\n- path: p.yaml\n  options: {allowNameChange: true, other: true}\n",
            "patches[].options.other",
        ),
        (
            "labels:\n- pairs: {a: b}\n  fields: []\n",
            "labels[].fields",
        ),
        (
            "configMapGenerator:\n- name: x\n  kvSources: []\n",
            "configMapGenerator[].kvSources",
        ),
        (
            "resources:\n- https://github.com/org/repo//dir?ref=v1\n",
            "resources: https://github.com/org/repo//dir?ref=v1 (remote)",
        ),
    ];
    for (text, field) in cases {
        let r = repo(&[("kustomization.yaml", text)]);
        let (file, got) = unsupported(build(utf8(r.path()), ".", &[], Mode::Native).unwrap_err());
        assert_eq!(file, Path::new("kustomization.yaml"));
        assert_eq!(got, field);
    }
}

#[test]
fn unsupported_in_a_component_names_the_component_file() {
    let r = repo(&[
        ("app/kustomization.yaml", "resources: [cm.yaml]\n"),
        ("app/cm.yaml", CM),
        (
            "comp/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nvars: []\n",
        ),
    ]);
    let (file, field) =
        unsupported(build(utf8(r.path()), "app", &["../comp".into()], Mode::Native).unwrap_err());
    assert_eq!(file, Path::new("comp/kustomization.yaml"));
    assert_eq!(field, "vars");
}

#[test]
fn auto_mode_falls_back_to_external_kustomize() {
    if !have_kubectl("the Auto fallback to kubectl kustomize") {
        return;
    }
    let r = repo(&[("app/kustomization.yaml", VARS), ("app/cm.yaml", CM)]);
    let out = build(utf8(r.path()), "app", &[], Mode::Auto).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].object["data"]["a"], Value::String("b".into()));
    assert_eq!(out[0].origin, Path::new("app/kustomization.yaml"));
    // Supported paths stay native in Auto mode.
    let plain = repo(&[
        ("app/kustomization.yaml", "resources: [cm.yaml]\n"),
        ("app/cm.yaml", CM),
    ]);
    let out = build(utf8(plain.path()), "app", &[], Mode::Auto).unwrap();
    assert_eq!(out[0].origin, Path::new("app/cm.yaml"));
}

#[test]
fn auto_fallback_appends_components_like_flux() {
    if !have_kubectl("the Auto fallback to kubectl kustomize") {
        return;
    }
    let r = repo(&[
        ("app/kustomization.yaml", VARS),
        ("app/cm.yaml", CM),
        (
            "comp/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nnamePrefix: c-\n",
        ),
    ]);
    let before: Vec<_> = walkdir::WalkDir::new(r.path())
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .collect();
    let out = build(utf8(r.path()), "app", &["../comp".into()], Mode::Auto).unwrap();
    assert_eq!(out[0].object["metadata"]["name"], "c-cm");
    let after: Vec<_> = walkdir::WalkDir::new(r.path())
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .collect();
    assert_eq!(before, after, "the repository must not be written to");
    assert_eq!(
        std::fs::read_to_string(r.path().join("app/kustomization.yaml")).unwrap(),
        VARS
    );
}

#[test]
fn external_errors_carry_the_tool_output() {
    if !have_kubectl("the external builder's errors") {
        return;
    }
    let r = repo(&[("app/kustomization.yaml", "resources: [missing.yaml]\n")]);
    match build(utf8(r.path()), "app", &[], Mode::External).unwrap_err() {
        BuildError::External { command, stderr } => {
            assert!(command.contains("kustomize"), "{command}");
            assert!(stderr.contains("missing.yaml"), "{stderr}");
        }
        other => panic!("expected External, got {other:?}"),
    }
}

#[test]
fn missing_and_wrong_components() {
    let r = repo(&[
        ("app/kustomization.yaml", "resources: [cm.yaml]\n"),
        ("app/cm.yaml", CM),
        ("notcomp/kustomization.yaml", "resources: []\n"),
    ]);
    match build(utf8(r.path()), "app", &["../nope".into()], Mode::Native).unwrap_err() {
        BuildError::MissingComponent { path } => assert_eq!(path, Path::new("nope")),
        other => panic!("{other:?}"),
    }
    let err = build(utf8(r.path()), "app", &["../notcomp".into()], Mode::Native).unwrap_err();
    assert!(err.to_string().contains("notcomp"), "{err}");
    match err {
        BuildError::NotAComponent { path, kind } => {
            assert_eq!(path, Path::new("notcomp"));
            assert_eq!(kind, "Kustomization");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn yaml_errors_name_file_and_line() {
    let r = repo(&[
        ("kustomization.yaml", "resources: [bad.yaml]\n"),
        (
            "bad.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [unclosed\n",
        ),
    ]);
    let err = build(utf8(r.path()), ".", &[], Mode::Native).unwrap_err();
    let msg = err.to_string();
    match err {
        BuildError::Yaml { file, line, .. } => {
            assert_eq!(file, Path::new("bad.yaml"));
            assert!(line.is_some_and(|l| l >= 4), "{line:?}");
        }
        other => panic!("{other:?}"),
    }
    assert!(msg.starts_with("bad.yaml:"), "{msg}");
}

#[test]
fn duplicate_ids_are_rejected() {
    let r = repo(&[
        ("kustomization.yaml", "resources: [a.yaml, b.yaml]\n"),
        ("a.yaml", CM),
        ("b.yaml", CM),
    ]);
    let err = build(utf8(r.path()), ".", &[], Mode::Native).unwrap_err();
    assert!(matches!(err, BuildError::DuplicateId { .. }), "{err:?}");
    assert!(err.to_string().contains("already registered id"), "{err}");
}

#[test]
fn flux_generation_rejects_non_kubernetes_yaml() {
    let r = repo(&[
        ("apps/cm.yaml", CM),
        ("apps/rules.yaml", "creation_rules: []\n"),
    ]);
    match build(utf8(r.path()), "apps", &[], Mode::Native).unwrap_err() {
        BuildError::NotKubernetes { file, .. } => assert_eq!(file, Path::new("apps/rules.yaml")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn flux_generation_skips_what_the_artifact_leaves_out() {
    // source-controller's default exclusions: `.sops.yaml` (not Kubernetes objects) and
    // `cloudbuild.yaml` are not in the artifact, so the kustomization Flux generates lacks them.
    let r = repo(&[
        ("apps/cm.yaml", CM),
        ("apps/.sops.yaml", "creation_rules: []\n"),
        (
            "apps/sub/cloudbuild.yaml",
            &CM.replace("name: cm", "name: other"),
        ),
    ]);
    let out = build(utf8(r.path()), "apps", &[], Mode::Native).unwrap();
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].origin, Path::new("apps/cm.yaml"));
    if have_kubectl("the external builder on the same kustomization") {
        // The external fallback builds the same kustomization, on a copy without them.
        let ext = build(utf8(r.path()), "apps", &[], Mode::External).unwrap();
        assert_eq!(ext.len(), 1, "{ext:?}");
        assert_eq!(ext[0].object, out[0].object);
    }
    // A `.sourceignore` pattern replaces the defaults: now `cloudbuild.yaml` is read, and a
    // file the pattern leaves out is an error naming the rule when a kustomization lists it.
    std::fs::write(r.path().join(".sourceignore"), "# CI\n/apps/sub/\n").unwrap();
    match build(utf8(r.path()), "apps", &[], Mode::Native).unwrap_err() {
        BuildError::NotKubernetes { file, .. } => assert_eq!(file, Path::new("apps/.sops.yaml")),
        other => panic!("{other:?}"),
    }
    std::fs::remove_file(r.path().join("apps/.sops.yaml")).unwrap();
    let out = build(utf8(r.path()), "apps", &[], Mode::Native).unwrap();
    assert_eq!(out.len(), 1, "{out:?}");
    std::fs::write(
        r.path().join("apps/kustomization.yaml"),
        "resources: [cm.yaml, sub/cloudbuild.yaml]\n",
    )
    .unwrap();
    let err = build(utf8(r.path()), "apps", &[], Mode::Native).unwrap_err();
    assert!(matches!(err, BuildError::Ignored { .. }), "{err:?}");
    let external = build(utf8(r.path()), "apps", &[], Mode::External).unwrap_err();
    assert!(
        matches!(external, BuildError::Ignored { .. }),
        "{external:?}"
    );
    for word in [
        "apps/kustomization.yaml",
        "sub/cloudbuild.yaml",
        ".sourceignore:2",
        "`/apps/sub/`",
    ] {
        assert!(err.to_string().contains(word), "{word}: {err}");
    }
}

#[test]
fn role_resource_names_follow_renamed_config_maps() {
    let role = "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: r}\nrules:\n- apiGroups: ['']\n  resources: [configmaps]\n  resourceNames: [cm]\n  verbs: [get]\n";
    let r = repo(&[
        (
            "kustomization.yaml",
            "namePrefix: p-\nresources: [cm.yaml, role.yaml]\n",
        ),
        ("cm.yaml", CM),
        ("role.yaml", role),
    ]);
    let out = build(utf8(r.path()), ".", &[], Mode::Native).unwrap();
    let role = out.iter().find(|r| r.object["kind"] == "Role").unwrap();
    assert_eq!(role.object["rules"][0]["resourceNames"][0], "p-cm");
}

#[test]
fn env_file_lines_without_a_value_are_empty_values() {
    let r = repo(&[
        (
            "kustomization.yaml",
            "configMapGenerator:\n- name: x\n  envs: [a.env]\n  options: {disableNameSuffixHash: true}\n",
        ),
        ("a.env", "A=1\nFROM_ENV\n"),
    ]);
    let out = build(utf8(r.path()), ".", &[], Mode::Native).unwrap();
    assert_eq!(
        out[0].object["data"],
        serde_json::json!({"A": "1", "FROM_ENV": ""})
    );
}

#[test]
fn paths_may_not_leave_the_repository() {
    let r = repo(&[("kustomization.yaml", "resources: [../../etc/passwd]\n")]);
    let err = build(utf8(r.path()), ".", &[], Mode::Native).unwrap_err();
    assert!(matches!(err, BuildError::OutsideRoot { .. }), "{err:?}");
    assert!(
        err.to_string().contains("leaves the repository root"),
        "{err}"
    );
}

#[test]
fn missing_resources_and_patch_targets_name_the_file() {
    let r = repo(&[("k/kustomization.yaml", "resources: [nope.yaml]\n")]);
    let err = build(utf8(r.path()), "k", &[], Mode::Native).unwrap_err();
    assert!(
        err.to_string().contains("k/kustomization.yaml") && err.to_string().contains("nope.yaml"),
        "{err}"
    );
    let r = repo(&[
        (
            "kustomization.yaml",
            "resources: [cm.yaml]\npatches:\n- path: p.yaml\n",
        ),
        ("cm.yaml", CM),
        (
            "p.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\ndata: {x: y}\n",
        ),
    ]);
    let err = build(utf8(r.path()), ".", &[], Mode::Native).unwrap_err();
    match &err {
        BuildError::Patch { file, .. } => assert_eq!(file, Path::new("p.yaml")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn origins_and_patch_provenance() {
    let r = repo(&[
        (
            "base/kustomization.yaml",
            "resources: [cm.yaml]\nconfigMapGenerator:\n- name: gen\n  literals: [a=b]\n",
        ),
        ("base/cm.yaml", CM),
        (
            "overlay/kustomization.yaml",
            "resources: [../base]\npatches:\n- path: p.yaml\n- target: {kind: ConfigMap, name: gen}\n  patch: |\n    - {op: add, path: /data/c, value: d}\n",
        ),
        (
            "overlay/p.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {x: y}\n",
        ),
    ]);
    let out = build(utf8(r.path()), "overlay", &[], Mode::Native).unwrap();
    let by_name = |n: &str| {
        out.iter()
            .find(|r| {
                r.object["metadata"]["name"]
                    .as_str()
                    .unwrap()
                    .starts_with(n)
            })
            .unwrap()
    };
    assert_eq!(by_name("cm").origin, Path::new("base/cm.yaml"));
    assert_eq!(
        by_name("cm").patched_by,
        vec![PathBuf::from("overlay/p.yaml")]
    );
    assert_eq!(by_name("gen").origin, Path::new("base/kustomization.yaml"));
    assert_eq!(
        by_name("gen").patched_by,
        vec![PathBuf::from("overlay/kustomization.yaml")]
    );
}

#[test]
fn a_flux_kustomization_named_kustomization_yaml_is_explained() {
    let flux = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: x}\nspec: {path: ./x}\n";
    let r = repo(&[("k/kustomization.yaml", flux)]);
    let err = build(utf8(r.path()), "k", &[], Mode::Native).unwrap_err();
    assert!(matches!(err, BuildError::Invalid { .. }), "{err:?}");
    assert!(
        err.to_string().contains("k/kustomization.yaml")
            && err.to_string().contains("Flux Kustomization"),
        "{err}"
    );
}

#[test]
fn missing_path_is_reported() {
    let r = repo(&[("other/cm.yaml", CM)]);
    let err = build(utf8(r.path()), "nope", &[], Mode::Native).unwrap_err();
    assert!(
        err.to_string().contains("nope") && err.to_string().contains("not found"),
        "{err}"
    );
}

#[test]
fn configurations_other_than_name_references_are_unsupported() {
    let r = repo(&[
        (
            "kustomization.yaml",
            "resources: [cm.yaml]\nconfigurations: [conf.yaml]\n",
        ),
        ("cm.yaml", CM),
        ("conf.yaml", "namePrefix:\n- path: metadata/name\n"),
    ]);
    let (file, field) = unsupported(build(utf8(r.path()), ".", &[], Mode::Native).unwrap_err());
    assert_eq!(file, Path::new("conf.yaml"));
    assert_eq!(field, "namePrefix");
}

#[test]
fn reference_cycles_are_errors() {
    let r = repo(&[
        ("a/kustomization.yaml", "resources: [../b]\n"),
        ("b/kustomization.yaml", "resources: [../a]\n"),
    ]);
    let err = build(utf8(r.path()), "a", &[], Mode::Native).unwrap_err();
    assert!(err.to_string().contains("cycle"), "{err}");
}
