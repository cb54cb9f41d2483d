//! Cost of native builds for a repository of 200 cells x 3 layers (600 builds, uncached),
//! next to the cost of merely reading the same input files, and of `kubectl kustomize` on a
//! sample of the builds when it is installed. Prints numbers, asserts nothing:
//! `cargo bench --bench kustomize_build`.

use std::path::Path;
use std::time::{Duration, Instant};

use cellgen::ports::kustomize::{FluxFields, Mode, Repo, build};
use cellgen::root::source::Source;

/// CPU time of this process (user + system), where the platform tells it.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // Linux reports clock ticks of 1/100 s on every common configuration.
    Some(Duration::from_millis(ticks * 10))
}

fn measure<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let (wall, cpu) = (Instant::now(), cpu_time());
    let out = f();
    let cpu = cpu.zip(cpu_time()).map(|(a, b)| b - a);
    match cpu {
        Some(cpu) => eprintln!("{what}: {:?} wall, {cpu:?} CPU", wall.elapsed()),
        None => eprintln!("{what}: {:?} wall", wall.elapsed()),
    }
    out
}

fn layers() -> impl Iterator<Item = (usize, &'static str)> {
    (0..200).flat_map(|i| ["infra", "apps", "cfg"].into_iter().map(move |l| (i, l)))
}

fn components(layer: &str) -> Vec<String> {
    if layer == "apps" {
        vec!["../../../components/mon".to_string()]
    } else {
        vec![]
    }
}

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
    let root = camino::Utf8Path::from_path(dir.path()).expect("a UTF-8 temporary directory");
    // The floor: reading every file each build reads, once per build.
    let inputs = |i: usize, layer: &str| -> Vec<String> {
        let mut f = vec![format!("cells/c{i}/{layer}")];
        if layer != "cfg" {
            f.extend(
                [
                    "base/kustomization.yaml",
                    "base/deploy.yaml",
                    "base/svc.yaml",
                ]
                .map(String::from),
            );
            f[0].push_str("/kustomization.yaml");
        } else {
            f[0].push_str("/cm.yaml");
        }
        if layer == "apps" {
            f.push("components/mon/kustomization.yaml".into());
        }
        f
    };
    let bytes = measure("read the inputs of 600 builds", || {
        layers()
            .flat_map(|(i, l)| inputs(i, l))
            .map(|p| std::fs::read(root.join(p)).unwrap().len())
            .sum::<usize>()
    });
    let n = measure("600 native builds, each opening the repository", || {
        layers()
            .map(|(i, layer)| {
                build(
                    Source::disk(root).files(),
                    root,
                    &format!("cells/c{i}/{layer}"),
                    &components(layer),
                    Mode::Native,
                )
                .unwrap()
                .len()
            })
            .sum::<usize>()
    });
    eprintln!("({n} objects from {bytes} bytes of input)");
    // What check does: the repository opened once (its .sourceignore rules read once), each
    // layer built with the fields of a Flux Kustomization.
    let repo = Repo::open(root, Source::disk(root).files()).unwrap();
    measure(
        "600 native builds, one Repo, as Flux Kustomizations",
        || {
            layers()
                .map(|(i, layer)| {
                    let flux = FluxFields {
                        components: components(layer),
                        ..FluxFields::flux()
                    };
                    repo.build(&format!("cells/c{i}/{layer}"), &flux, Mode::Native)
                        .unwrap()
                        .len()
                })
                .sum::<usize>()
        },
    );
    if Path::new("/usr/bin/env").exists()
        && std::process::Command::new("kubectl")
            .arg("version")
            .arg("--client")
            .output()
            .is_ok_and(|o| o.status.success())
    {
        measure(
            "30 builds with kubectl kustomize (the first 10 cells)",
            || {
                for (i, layer) in layers().take(30) {
                    cellgen::ports::kustomize::external_output(
                        Source::disk(root).files(),
                        root,
                        &format!("cells/c{i}/{layer}"),
                        &components(layer),
                    )
                    .unwrap();
                }
            },
        );
    }
}
