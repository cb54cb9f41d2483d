use super::*;

const LAYER: &str = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: controllers\nspec:\n  path: ./infrastructure/controllers\n  components: [] # optional add-ons\n  prune: true\n";

fn layer_with(components: &str) -> String {
    LAYER.replace("components: [] # optional add-ons", components)
}

/// Adds `a` then `b`, checks the list, removes `b` then `a`: the original bytes come back.
#[track_caller]
fn round_trip(text: &str) -> (String, String) {
    let one = add_flux_component(text, "../a").unwrap();
    let two = add_flux_component(&one, "../b").unwrap();
    let before = flux_components(text).unwrap();
    let mut expected = before.clone();
    expected.extend(["../a".to_string(), "../b".to_string()]);
    assert_eq!(flux_components(&two).unwrap(), expected, "{two}");
    assert_eq!(add_flux_component(&two, "../b").unwrap(), two);
    let back = remove_flux_component(&two, "../b").unwrap();
    assert_eq!(back, one);
    assert_eq!(remove_flux_component(&back, "../a").unwrap(), text);
    (one, two)
}

#[test]
fn add_and_remove_components_round_trip() {
    let (one, _) = round_trip(LAYER);
    assert!(
        one.contains("  components: # optional add-ons\n    - ../a\n  prune"),
        "{one}"
    );
}

#[test]
fn flow_lists_stay_flow() {
    let (one, two) = round_trip(&layer_with("components: [../x]"));
    assert!(one.contains("components: [../x, ../a]"), "{one}");
    assert!(two.contains("components: [../x, ../a, ../b]"), "{two}");
    let spaced = layer_with("components: [ ../x ]");
    assert_eq!(
        remove_flux_component(&spaced, "../x").unwrap(),
        layer_with("components: [ ]")
    );
}

#[test]
fn every_layout_round_trips() {
    for components in [
        "components: [ ]",
        "components: [\n  ]",
        "components: [\n    ../x,\n  ]",
        "components: [\n    ../x # why\n  ]",
        "components: [../x, ../y ]",
        "components: &c []",
        "components: !!seq []",
        "components:\n  - ../x\n  # between\n  - '../y' # quoted\n",
        "components:\n  - ../x",
        "components:\n    - ../x\n",
        "components:\n  -\n    ../x\n",
    ] {
        round_trip(&layer_with(components));
    }
    round_trip("spec: {path: ./x, components: [], prune: true}\n");
    round_trip("spec: {path: ./x, components: [../x], prune: true}\n");
    round_trip("{spec: {components: [\n  ]}}\n");
    round_trip("spec:\n  components: [] # c\n");
    round_trip("spec:\n  components: []");
    round_trip("spec:\n  components:\n  - ../x\n  prune: true\n");
}

#[test]
fn null_lists_become_lists() {
    for components in [
        "components: ~",
        "components:",
        "components: null # nothing yet",
    ] {
        let text = layer_with(components);
        let added = add_flux_component(&text, "../a").unwrap();
        assert_eq!(flux_components(&added).unwrap(), ["../a"], "{added}");
        let removed = remove_flux_component(&added, "../a").unwrap();
        assert!(flux_components(&removed).unwrap().is_empty(), "{removed}");
    }
    let flow = add_flux_component("spec: {components: ~, a: 1}\n", "../a").unwrap();
    assert_eq!(flow, "spec: {components: [../a], a: 1}\n");
}

#[test]
fn aliases_and_reused_anchors_are_refused() {
    let aliased = "x: &c [../a]\nspec:\n  components: *c\n";
    let err = add_flux_component(aliased, "../b").unwrap_err();
    assert_eq!(err.line, Some(3));
    assert!(err.message.contains("alias `*c`"), "{err}");
    let reused = "spec:\n  components: &c []\n  other: *c\n";
    let err = add_flux_component(reused, "../b").unwrap_err();
    assert!(err.message.contains("line 3 reuses it"), "{err}");
    // An anchor nobody reuses is kept.
    let kept = add_flux_component("spec:\n  components: &c [../a]\n", "../b").unwrap();
    assert_eq!(kept, "spec:\n  components: &c [../a, ../b]\n");
}

#[test]
fn not_a_list_names_the_line() {
    for bad in [
        "spec:\n  components: x\n",
        "spec:\n  components: {a: 1}\n",
        "spec:\n  components: [{a: 1}]\n",
    ] {
        let err = add_flux_component(bad, "../b").unwrap_err();
        assert_eq!(err.line, Some(2), "{bad}: {err}");
    }
}

#[test]
fn deep_nesting_is_refused_before_parsing() {
    let deep = format!(
        "spec:\n  components: {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let err = flux_components(&deep).unwrap_err();
    assert_eq!(err.line, Some(2));
    assert!(err.message.contains("nest more than"), "{err}");
}

#[test]
fn schema_and_keys() {
    let text =
        "# c\nschema: 1 # bump me\nkeys:\n  a:\n    description: A\n    example: x\n# trailing\n";
    let text2 = set_schema(text, 2).unwrap();
    assert!(text2.contains("schema: 2 # bump me"));
    let fields = vec![
        ("description", Field::Str("B: colon\nnew line".into())),
        ("example", Field::Str("y".into())),
        ("since", Field::Int(2)),
    ];
    let added = append_keys(&text2, &[("b".to_string(), fields)]).unwrap();
    assert!(
        added.contains(
            "    example: x\n  b:\n    description: \"B: colon\\nnew line\"\n    example: y\n    since: 2\n# trailing"
        ),
        "{added}"
    );
    assert_eq!(remove_keys(&added, &["b".into()]).unwrap(), text2);
}

#[test]
fn flow_keys_are_refused_with_the_line() {
    let text = "schema: 1\nkeys: {a: {description: A, example: x}}\n";
    let err = append_keys(
        text,
        &[("b".into(), vec![("example", Field::Str("y".into()))])],
    )
    .unwrap_err();
    assert_eq!(err.line, Some(2));
    assert!(err.message.contains("block mapping"), "{err}");
}
