use super::*;

#[test]
fn init_in_a_repository_with_its_own_controllers_layer_says_what_it_kept_and_check_catches_the_gap()
{
    let dir = temp_dir();
    let root = dir.path();
    let layer = root.join("infrastructure/controllers");
    fs::create_dir_all(&layer).unwrap();
    fs::write(
        layer.join("kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ingress.yaml\n",
    )
    .unwrap();
    fs::write(
        layer.join("ingress.yaml"),
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ingress\n",
    )
    .unwrap();
    let theirs = tree_hash(&layer);

    let out = run_ok(
        root,
        &["init", "--git-url", GIT_URL, "--admin-role-arn", ADMIN_ROLE],
    );
    for word in [
        "kept  infrastructure/controllers/",
        "skipped  infrastructure/controllers/platform-namespace.yaml",
        "Namespace platform-system",
        "infrastructure/configs/cluster-identity.yaml",
    ] {
        assert!(out.contains(word), "init does not say `{word}`:\n{out}");
    }
    assert_tree_unchanged(&theirs, &tree_hash(&layer), "the user's layer");
    assert!(
        root.join("infrastructure/configs/kustomization.yaml")
            .exists()
    );

    new_cell(root, &[PROD]);
    let out = run(root, &["check"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "check passes:\n{}",
        stdout(&out)
    );
    let report = stdout(&out);
    for word in [
        "missing-namespace",
        "`platform-system`",
        "infrastructure/configs/cluster-identity.yaml:",
        PROD,
    ] {
        assert!(report.contains(word), "check lacks `{word}`:\n{report}");
    }

    // Creating the namespace in the user's own layer is what it asks for.
    fs::write(
        layer.join("platform.yaml"),
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: platform-system\n",
    )
    .unwrap();
    edit_file(
        root,
        "infrastructure/controllers/kustomization.yaml",
        "  - ingress.yaml\n",
        "  - ingress.yaml\n  - platform.yaml\n",
    );
    check_green(root);
}

#[test]
fn render_marks_where_each_layer_of_the_cell_starts() {
    let dir = fleet();
    let root = dir.path();
    let out = run_ok(root, &["render", PROD]);
    let markers: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("# cellgen: "))
        .collect();
    assert_eq!(markers.len(), LAYERS.len(), "{out}");
    for (marker, layer) in markers.iter().zip(LAYERS) {
        assert!(
            marker.starts_with(&format!(
                "# cellgen: cell {PROD}, layer {layer} (cells/{PROD}/{layer}.yaml, "
            )),
            "{marker}"
        );
    }
    assert!(
        out.starts_with("# cellgen: cell "),
        "the first layer is marked too"
    );
    // Split at the markers, each part is that layer's objects, as many as the marker says.
    let parts: Vec<&str> = out.split("# cellgen: cell ").skip(1).collect();
    for (part, layer) in parts.iter().zip(LAYERS) {
        let count: usize = part
            .split(", ")
            .nth(2)
            .and_then(|s| s.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no count in the {layer} marker: {part}"));
        let docs = parse_yaml_docs(layer, part.split_once('\n').unwrap().1).unwrap();
        assert_eq!(docs.len(), count, "layer {layer}");
        assert!(
            docs.iter().all(|d| d.value["kind"].is_string()),
            "layer {layer}: {part}"
        );
    }
}

#[test]
fn remove_component_says_in_which_order_karpenters_nodes_go() {
    let dir = fleet();
    let root = dir.path();
    let out = run_ok(root, &["remove-component", "karpenter", "--cell", DEV]);
    let at = |needle: &str| {
        out.find(needle)
            .unwrap_or_else(|| panic!("no `{needle}` in:\n{out}"))
    };
    let suspend =
        at("patch kustomization controllers --type merge --patch '{\"spec\":{\"suspend\":true}}'");
    let nodepools = at("kubectl delete nodepools.karpenter.sh --all --wait");
    let nodeclasses = at("kubectl delete ec2nodeclasses.karpenter.k8s.aws --all --wait");
    let resume = at("\"suspend\":false");
    let apply = at(&format!("terraform -chdir=terraform/cells/{DEV} apply"));
    assert!(
        suspend < nodepools && nodepools < nodeclasses && nodeclasses < resume && resume < apply,
        "{out}"
    );
    // A component whose component.yaml has no `teardown` prints none.
    let out = run_ok(
        root,
        &["remove-component", "external-dns", "--cell", STAGING],
    );
    assert!(!out.contains("kubectl"), "{out}");
    check_green(root);
}
