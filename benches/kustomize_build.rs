//! Cost of native builds for a repository of 200 cells x 3 layers (600 builds, uncached).
//! Prints numbers, asserts nothing: `cargo bench --bench kustomize_build`.

use std::time::Instant;

use cellgen::kustomize::{Mode, build};

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let w = |p: &str, t: &str| {
        let p = dir.path().join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, t).unwrap();
    };
    let deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: app:1\n        envFrom: [{configMapRef: {name: settings}}]\n";
    w(
        "base/kustomization.yaml",
        "resources: [deploy.yaml, svc.yaml]\nconfigMapGenerator:\n- name: settings\n  literals: [A=1]\ncommonLabels: {app: app}\n",
    );
    w("base/deploy.yaml", deploy);
    w(
        "base/svc.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: app}\nspec: {ports: [{port: 80}]}\n",
    );
    w(
        "components/mon/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- target: {kind: Deployment}\n  patch: |\n    - {op: add, path: /metadata/annotations, value: {m: x}}\n",
    );
    for i in 0..200 {
        w(
            &format!("cells/c{i}/infra/kustomization.yaml"),
            &format!("resources: [../../../base]\nnamespace: c{i}\nnamePrefix: infra-\n"),
        );
        w(
            &format!("cells/c{i}/apps/kustomization.yaml"),
            &format!(
                "resources: [../../../base]\nnamespace: c{i}\nimages:\n- name: app\n  newTag: \"{i}\"\n"
            ),
        );
        w(
            &format!("cells/c{i}/cfg/cm.yaml"),
            &format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cell, namespace: c{i}}}\ndata: {{id: \"{i}\"}}\n"
            ),
        );
    }
    let start = Instant::now();
    let mut n = 0;
    for i in 0..200 {
        for layer in ["infra", "apps", "cfg"] {
            let comps = if layer == "apps" {
                vec!["../../../components/mon".to_string()]
            } else {
                vec![]
            };
            n += build(
                dir.path(),
                &format!("cells/c{i}/{layer}"),
                &comps,
                Mode::Native,
            )
            .unwrap()
            .len();
        }
    }
    eprintln!("600 builds, {n} objects, {:?}", start.elapsed());
}
