//! Reads stay inside the repository (issue 7), as Flux's secure file system keeps them: a
//! reference that is absolute, leaves the root or goes through a symbolic link is refused
//! with an error naming the kustomization file and the entry, by the native builder and
//! before the external fallback runs; nothing of an outside file is ever returned. Also:
//! non-UTF-8 files, the nesting bound, and linear builds of shared bases.

use std::path::Path;

use cellgen::ports::kustomize::{self, BuildError, MAX_NESTING, Mode, Resource};
use cellgen::root::source::Source;

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

#[path = "support/mod.rs"]
mod support;

const SECRET: &str = "TOP-SECRET-OUTSIDE-CONTENT";
const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n";

/// A repository at `<tmp>/repo` with a secret file beside it at `<tmp>/outside/secret.txt`.
fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), format!("{SECRET}\n")).unwrap();
    std::fs::write(
        outside.join("secret.yaml"),
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: leaked}}\ndata: {{s: {SECRET}}}\n"
        ),
    )
    .unwrap();
    for (path, text) in files {
        let p = dir.path().join("repo").join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    std::fs::create_dir_all(dir.path().join("repo")).unwrap();
    dir
}

fn root(t: &tempfile::TempDir) -> camino::Utf8PathBuf {
    camino::Utf8PathBuf::from_path_buf(t.path().join("repo")).expect("a UTF-8 temporary directory")
}

#[cfg(unix)]
fn link(t: &tempfile::TempDir, target: &str, at: &str) {
    let at = root(t).join(at);
    std::fs::create_dir_all(at.parent().unwrap()).unwrap();
    let target = if target.starts_with('/') {
        std::path::PathBuf::from(target)
    } else {
        t.path().join(target)
    };
    std::os::unix::fs::symlink(target, at).unwrap();
}

/// Every mode refuses the build; the error names `file` and `entry` and shows nothing of
/// the outside file.
fn refused(t: &tempfile::TempDir, path: &str, file: &str, entry: &str) -> BuildError {
    let mut last = None;
    for mode in [Mode::Native, Mode::Auto, Mode::External] {
        let err = build(&root(t), path, &[], mode).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains(file) && msg.contains(entry),
            "{mode:?}: message should name {file} and {entry}: {msg}"
        );
        assert!(!msg.contains(SECRET), "{mode:?}: {msg}");
        last = Some(err);
    }
    last.unwrap()
}

#[test]
fn generator_files_and_envs_outside_the_root_are_refused() {
    for (generator, entry) in [
        (
            "configMapGenerator:\n- name: g\n  files: [../../outside/secret.txt]\n",
            "../../outside/secret.txt",
        ),
        (
            "configMapGenerator:\n- name: g\n  envs: [../../outside/secret.txt]\n",
            "../../outside/secret.txt",
        ),
        (
            "secretGenerator:\n- name: g\n  files: [k=../../outside/secret.txt]\n",
            "../../outside/secret.txt",
        ),
        (
            "secretGenerator:\n- name: g\n  env: ../../outside/secret.txt\n",
            "../../outside/secret.txt",
        ),
    ] {
        let t = repo(&[("app/kustomization.yaml", generator)]);
        let err = refused(&t, "app", "app/kustomization.yaml", entry);
        assert!(matches!(err, BuildError::OutsideRoot { .. }), "{err:?}");
        assert!(
            err.to_string()
                .contains("not in or below the repository root"),
            "{err}"
        );
    }
}

#[test]
fn absolute_paths_are_refused_even_inside_the_root() {
    let t = repo(&[("app/cm.yaml", CM)]);
    let inside = root(&t).join("app/cm.yaml");
    let k = format!("resources: [{}]\n", inside);
    std::fs::write(root(&t).join("app/kustomization.yaml"), &k).unwrap();
    let err = refused(&t, "app", "app/kustomization.yaml", inside.as_str());
    assert!(err.to_string().contains("absolute"), "{err}");
    let t = repo(&[(
        "app/kustomization.yaml",
        "configMapGenerator:\n- name: g\n  files: [/etc/hostname]\n",
    )]);
    refused(&t, "app", "app/kustomization.yaml", "/etc/hostname");
}

#[test]
fn patches_resources_and_components_outside_the_root_are_refused() {
    let cases = [
        (
            "resources: [../../outside/secret.yaml]\n",
            "../../outside/secret.yaml",
        ),
        (
            "resources: [cm.yaml]\npatches:\n- path: ../../outside/secret.yaml\n",
            "../../outside/secret.yaml",
        ),
        (
            "resources: [cm.yaml]\npatchesStrategicMerge: [../../outside/secret.yaml]\n",
            "../../outside/secret.yaml",
        ),
        (
            "resources: [cm.yaml]\ncomponents: [../../outside]\n",
            "../../outside",
        ),
        (
            "resources: [cm.yaml]\nconfigurations: [../../outside/secret.yaml]\n",
            "../../outside/secret.yaml",
        ),
        (
            "resources: [cm.yaml]\nreplacements:\n- path: ../../outside/secret.yaml\n",
            "../../outside/secret.yaml",
        ),
    ];
    for (k, entry) in cases {
        let t = repo(&[("app/kustomization.yaml", k), ("app/cm.yaml", CM)]);
        refused(&t, "app", "app/kustomization.yaml", entry);
    }
}

/// A feature the native builder hands to kubectl must not open a way out: the fallback
/// checks every reference first.
#[test]
fn the_external_fallback_never_reads_outside_the_root() {
    let cases = [
        "resources: [cm.yaml]\nvars: []\nconfigMapGenerator:\n- name: g\n  files: [../../outside/secret.txt]\n",
        "resources: [cm.yaml]\nvars: []\nopenapi: {path: ../../outside/secret.txt}\n",
        "resources: [cm.yaml]\ntransformers:\n- |\n  apiVersion: builtin\n  kind: PatchTransformer\n  metadata: {name: p}\n  path: ../../outside/secret.yaml\n",
    ];
    for k in cases {
        let t = repo(&[("app/kustomization.yaml", k), ("app/cm.yaml", CM)]);
        for mode in [Mode::Auto, Mode::External] {
            let err = build(&root(&t), "app", &[], mode).unwrap_err();
            assert!(
                matches!(err, BuildError::OutsideRoot { .. }),
                "{mode:?} {k}: {err:?}"
            );
            assert!(!err.to_string().contains(SECRET));
        }
    }
}

#[test]
fn plugins_and_helm_are_what_flux_refuses() {
    let t = repo(&[
        (
            "app/kustomization.yaml",
            "resources: [cm.yaml]\ntransformers: [t.yaml]\n",
        ),
        ("app/cm.yaml", CM),
        (
            "app/t.yaml",
            "apiVersion: example.com/v1\nkind: MyPlugin\nmetadata: {name: x}\n",
        ),
    ]);
    let err = build(&root(&t), "app", &[], Mode::External).unwrap_err();
    assert!(err.to_string().contains("plugins disabled"), "{err}");
    let t = repo(&[(
        "app/kustomization.yaml",
        "helmCharts:\n- name: x\n  repo: https://example.com\n",
    )]);
    let err = build(&root(&t), "app", &[], Mode::Auto).unwrap_err();
    assert!(err.to_string().contains("Helm"), "{err}");
}

#[cfg(unix)]
#[test]
fn symbolic_links_are_refused_like_flux_which_drops_them() {
    // To an outside file, to an inside file, and a linked directory on the way.
    let t = repo(&[("app/kustomization.yaml", "resources: [leak.yaml]\n")]);
    link(&t, "outside/secret.yaml", "app/leak.yaml");
    let err = refused(&t, "app", "app/kustomization.yaml", "leak.yaml");
    match &err {
        BuildError::Symlink { link, .. } => assert_eq!(link, Path::new("app/leak.yaml")),
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("symbolic link"), "{err}");

    let t = repo(&[
        ("app/kustomization.yaml", "resources: [alias.yaml]\n"),
        ("app/cm.yaml", CM),
    ]);
    link(&t, "repo/app/cm.yaml", "app/alias.yaml");
    refused(&t, "app", "app/kustomization.yaml", "alias.yaml");

    let t = repo(&[("app/kustomization.yaml", "resources: [dir/secret.yaml]\n")]);
    link(&t, "outside", "app/dir");
    refused(&t, "app", "app/kustomization.yaml", "dir/secret.yaml");

    let t = repo(&[
        (
            "app/kustomization.yaml",
            "resources: [cm.yaml]\nconfigMapGenerator:\n- name: g\n  files: [s.txt]\n",
        ),
        ("app/cm.yaml", CM),
    ]);
    link(&t, "outside/secret.txt", "app/s.txt");
    refused(&t, "app", "app/kustomization.yaml", "s.txt");
}

#[test]
fn non_utf8_files_name_the_file_and_the_byte() {
    let t = repo(&[
        ("app/kustomization.yaml", "resources: [cm.yaml]\n"),
        ("app/cm.yaml", ""),
    ]);
    let mut bytes = CM.as_bytes().to_vec();
    bytes.splice(40..40, [0xff, 0xfe]);
    std::fs::write(root(&t).join("app/cm.yaml"), &bytes).unwrap();
    let err = build(&root(&t), "app", &[], Mode::Native).unwrap_err();
    match &err {
        BuildError::NotUtf8 { path, offset } => {
            assert_eq!(path, Path::new("app/cm.yaml"));
            assert_eq!(*offset, 40);
        }
        other => panic!("{other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("app/cm.yaml") && msg.contains("UTF-8") && msg.contains("40"),
        "{msg}"
    );
    support::assert_never_mentions(&msg, &["does not exist"]);

    std::fs::write(
        root(&t).join("app/kustomization.yaml"),
        b"resources: [cm.yaml]\n\xc3\x28\n",
    )
    .unwrap();
    let err = build(&root(&t), "app", &[], Mode::Native).unwrap_err();
    assert!(
        matches!(&err, BuildError::NotUtf8 { path, offset: 21 } if path == Path::new("app/kustomization.yaml")),
        "{err:?}"
    );
}

/// A chain of kustomizations `d0 → d1 → … → dN`.
fn chain(n: usize) -> tempfile::TempDir {
    let t = repo(&[]);
    for i in 0..n {
        let next = if i + 1 < n {
            format!("resources: [../d{}]\n", i + 1)
        } else {
            "resources: [cm.yaml]\n".into()
        };
        let dir = root(&t).join(format!("d{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("kustomization.yaml"), next).unwrap();
    }
    std::fs::write(root(&t).join(format!("d{}/cm.yaml", n - 1)), CM).unwrap();
    t
}

#[test]
fn a_ten_thousand_deep_chain_is_refused_naming_its_start_and_the_bound() {
    let t = chain(10_000);
    // On a small stack: the bound, not the stack, ends the recursion.
    let r = root(&t);
    let err = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || build(&r, "d0", &[], Mode::Native).unwrap_err())
        .unwrap()
        .join()
        .expect("no stack overflow");
    match &err {
        BuildError::TooDeep { start, limit, .. } => {
            assert_eq!(start, Path::new("d0"));
            assert_eq!(*limit, MAX_NESTING);
        }
        other => panic!("{other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("d0") && msg.contains(&MAX_NESTING.to_string()),
        "{msg}"
    );
    // The external fallback is bounded the same way.
    let err = build(&root(&t), "d0", &[], Mode::External).unwrap_err();
    assert!(matches!(err, BuildError::TooDeep { .. }), "{err:?}");
}

#[test]
fn chains_within_the_bound_build() {
    let t = chain(MAX_NESTING - 1);
    let r = root(&t);
    let out = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || build(&r, "d0", &[], Mode::Native).unwrap())
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(out.len(), 1);
}

/// Each level lists two kustomizations that both list the next level: 2^40 paths to the
/// bottom. kustomize builds a shared base once per listing; here each is built once.
#[test]
fn shared_bases_are_built_once() {
    let t = repo(&[]);
    let levels = 40;
    for i in 0..levels {
        let w = |p: &str, text: &str| {
            let f = root(&t).join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, text).unwrap();
        };
        w(
            &format!("l{i}/kustomization.yaml"),
            &format!("resources: [../a{i}, ../b{i}]\n"),
        );
        let next = if i + 1 < levels {
            format!("resources: [../l{}]\n", i + 1)
        } else {
            "namePrefix: x-\n".into()
        };
        w(&format!("a{i}/kustomization.yaml"), &next);
        w(&format!("b{i}/kustomization.yaml"), &next);
    }
    let out = build(&root(&t), "l0", &[], Mode::Native).unwrap();
    assert!(out.is_empty());
}

#[test]
fn cycles_through_parents_are_refused_as_kustomize_does() {
    // kustomize refuses a directory that contains one being built, not only itself.
    let t = repo(&[
        ("a/b/kustomization.yaml", "resources: [..]\n"),
        ("a/kustomization.yaml", "resources: [cm.yaml]\n"),
        ("a/cm.yaml", CM),
    ]);
    let err = build(&root(&t), "a/b", &[], Mode::Native).unwrap_err();
    assert!(err.to_string().contains("cycle detected"), "{err}");
}

/// Through the command line: `render` and `check` refuse a layer that reads a file outside
/// the repository, print nothing of it, and write nothing.
#[test]
fn render_and_check_print_nothing_from_outside_the_repository() {
    let t = tempfile::tempdir().unwrap();
    let repo = t.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(t.path().join("secret.txt"), format!("{SECRET}\n")).unwrap();
    support::new_cell(&repo, &["eu-west-2-prod", "--no-input"]);
    let k = repo.join("infrastructure/controllers/kustomization.yaml");
    let mut text = std::fs::read_to_string(&k).unwrap();
    text.push_str("configMapGenerator:\n- name: leak\n  files: [../../../secret.txt]\n");
    std::fs::write(&k, text).unwrap();
    let before = support::tree_hash(&repo);
    for args in [
        &["render", "eu-west-2-prod", "--layer", "controllers"][..],
        &[
            "render",
            "eu-west-2-prod",
            "--layer",
            "controllers",
            "--kustomize",
            "external",
        ],
        &["check"],
        &["check", "--format", "json"],
    ] {
        let out = support::cellgen()
            .arg("-C")
            .arg(&repo)
            .args(args)
            .output()
            .unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(1), "{args:?}: {all}");
        assert!(
            !all.contains(SECRET),
            "{args:?} printed the outside file: {all}"
        );
        assert!(all.contains("../../../secret.txt"), "{args:?}: {all}");
    }
    support::assert_tree_unchanged(&before, &support::tree_hash(&repo), "refused builds");
}
