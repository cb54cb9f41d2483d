//! Two sides of one repository (a commit and the working tree) share a build only when every
//! read it made answers the same, and a layer's objects only when its build and variables are
//! the same.

use camino::{Utf8Path, Utf8PathBuf};
use std::collections::BTreeMap;
use std::sync::Arc;

use super::{BuildCache, load_cell, render_layers_reusing};
use crate::ports::kustomize::{FluxFields, Mode};
use crate::root::source::{GitTree, Source, git_for_test as git, write_for_test as write};

const LAYER: &str = "apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: NAME
  namespace: flux-system
spec:
  path: ./NAME
  sourceRef:
    kind: GitRepository
    name: flux-system
  postBuild:
    substitute:
      team: TEAM
";

fn config_map(name: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  team: ${{team}}\n"
    )
}

/// A committed repository: cell `c` with layers `apps` and `infra`, each one ConfigMap.
fn repository() -> (tempfile::TempDir, Utf8PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = Utf8Path::from_path(dir.path())
        .unwrap()
        .canonicalize_utf8()
        .unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    write(
        &root,
        "cells/c/kustomization.yaml",
        "resources: [apps.yaml, infra.yaml]\n",
    );
    for name in ["apps", "infra"] {
        let layer = LAYER.replace("NAME", name).replace("TEAM", "core");
        write(&root, &format!("cells/c/{name}.yaml"), &layer);
        write(
            &root,
            &format!("{name}/kustomization.yaml"),
            "resources: [cm.yaml]\n",
        );
        write(&root, &format!("{name}/cm.yaml"), &config_map(name));
    }
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "base"]);
    (dir, root)
}

/// The working tree's cache (recording, every build made) and the base's, sharing it.
fn caches(root: &Utf8Path) -> (Arc<BuildCache>, BuildCache) {
    let head = Arc::new(BuildCache::recording(
        root,
        Source::disk(root),
        Mode::Native,
    ));
    for path in ["apps", "infra"] {
        head.build(path, &FluxFields::default());
    }
    let tree = GitTree::load(root, "HEAD").unwrap();
    let base = BuildCache::sharing(
        root,
        Source::Tree(Arc::new(tree)),
        Mode::Native,
        head.clone(),
    );
    (head, base)
}

fn shared(head: &BuildCache, base: &BuildCache, path: &str) -> bool {
    let flux = FluxFields::default();
    Arc::ptr_eq(&head.build(path, &flux), &base.build(path, &flux))
}

#[test]
fn an_unchanged_build_is_shared_and_a_changed_one_is_built_again() {
    let (_dir, root) = repository();
    write(&root, "infra/cm.yaml", &config_map("infra-renamed"));
    let (head, base) = caches(&root);
    assert!(shared(&head, &base, "apps"));
    assert!(!shared(&head, &base, "infra"));
    // The base's own build reads the commit.
    let built = base.build("infra", &FluxFields::default());
    let resources = built.as_ref().as_ref().unwrap();
    assert_eq!(resources[0].object["metadata"]["name"], "infra");
}

#[test]
fn a_file_added_next_to_a_build_it_reads_is_seen() {
    let (_dir, root) = repository();
    // `apps` has no kustomization in the working tree: Flux generates one from the listing.
    std::fs::remove_file(root.join("apps/kustomization.yaml")).unwrap();
    git(&root, &["rm", "-q", "apps/kustomization.yaml"]);
    git(&root, &["commit", "-q", "-m", "generated"]);
    write(&root, "apps/extra.yaml", &config_map("extra"));
    let (head, base) = caches(&root);
    assert!(!shared(&head, &base, "apps"));
    assert!(shared(&head, &base, "infra"));
}

#[test]
fn nothing_is_shared_when_the_artifact_rules_differ() {
    let (_dir, root) = repository();
    write(&root, ".sourceignore", "*.md\n");
    let (head, base) = caches(&root);
    assert!(!shared(&head, &base, "apps"));
    assert!(!shared(&head, &base, "infra"));
}

#[test]
fn a_layer_is_substituted_again_only_when_its_build_or_variables_differ() {
    let (_dir, root) = repository();
    let changed = LAYER.replace("NAME", "infra").replace("TEAM", "platform");
    write(&root, "cells/c/infra.yaml", &changed);
    let (head, base) = caches(&root);
    let metadata = BTreeMap::new();
    let after = render_layers_reusing(
        load_cell(&root, "c", &head).unwrap(),
        &metadata,
        &head,
        None,
    );
    let before = render_layers_reusing(
        load_cell(&root, "c", &base).unwrap(),
        &metadata,
        &base,
        Some(&after),
    );
    let objects = |cell: &super::RenderedCell, name: &str| {
        let layer = cell.layers.iter().find(|l| l.layer.name == name).unwrap();
        layer.objects.clone()
    };
    assert!(Arc::ptr_eq(
        &objects(&before, "apps"),
        &objects(&after, "apps")
    ));
    assert!(!Arc::ptr_eq(
        &objects(&before, "infra"),
        &objects(&after, "infra")
    ));
    let team = |cell: &super::RenderedCell| {
        objects(cell, "infra")[0].as_ref().unwrap()["data"]["team"].clone()
    };
    assert_eq!(team(&before), "core");
    assert_eq!(team(&after), "platform");
}
