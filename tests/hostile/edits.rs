//! Hostile input: edits of files the user owns (a cell's layer files, cell-metadata.tf,
//! cellgen.yaml) written in layouts cellgen does not generate. Each edit either produces a file
//! that parses and means what was intended, or is refused naming the file and line.

use std::collections::BTreeSet;
use std::fs;

use super::*;

pub const CELL: &str = "eu-west-2-prod";
pub const CONTROLLERS: &str = "cells/eu-west-2-prod/controllers.yaml";
pub const METADATA: &str = "terraform/cells/eu-west-2-prod/cell-metadata.tf";
pub const KARPENTER_REF: &str = "../../components/karpenter/controllers";

// ---------------------------------------------------------------------------------------------
// Helpers for setups and checks (the names and files modules use them too)
// ---------------------------------------------------------------------------------------------

/// A repository with the cell eu-west-2-prod.
pub fn cell(root: &Path) {
    new_cell(root, &[CELL]);
}

/// Runs cellgen in a setup, which must succeed.
pub fn run_ok(root: &Path, args: &[&str]) {
    let out = cellgen().arg("-C").arg(root).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "setup `cellgen {}` failed:\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Replaces `from` (which must be there) with `to` in a file of the repository.
pub fn replace(root: &Path, file: &str, from: &str, to: &str) {
    let path = root.join(file);
    let text = read(&path);
    assert!(text.contains(from), "{file} has no `{from}`:\n{text}");
    fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

/// A repository component `name` in `layer`, with `spec` as its component.yaml.
pub fn component_in(root: &Path, name: &str, layer: &str, spec: &str) {
    let dir = root.join("components").join(name);
    fs::create_dir_all(dir.join(layer)).unwrap();
    fs::write(dir.join("component.yaml"), spec).unwrap();
    fs::write(
        dir.join(layer).join("kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: []\n",
    )
    .unwrap();
}

/// A cell plus a repository component in the apps layer with the given component.yaml.
pub fn cell_with_component(root: &Path, name: &str, spec: &str) {
    cell(root);
    component_in(root, name, "apps", spec);
}

/// A YAML file of the repository, parsed (the check fails if it does not parse).
pub fn yaml_file(root: &Path, file: &str) -> yaml_serde::Value {
    let text = read(&root.join(file));
    yaml_serde::from_str(&text).unwrap_or_else(|e| panic!("{file} is not YAML ({e}):\n{text}"))
}

/// `spec.components` of a layer file.
pub fn components_of(root: &Path, file: &str) -> Vec<String> {
    let value = yaml_file(root, file);
    value["spec"]["components"]
        .as_sequence()
        .unwrap_or_else(|| panic!("{file}: spec.components is not a list"))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// The cell's stack read by HashiCorp's parser (via hcl2json).
pub fn stack(root: &Path) -> serde_json::Value {
    hcl_parse_dir(&root.join("terraform/cells").join(CELL))
}

/// The keys of the cell-metadata ConfigMap's data, as HashiCorp's parser reads them.
pub fn data_keys(root: &Path) -> BTreeSet<String> {
    let parsed = stack(root);
    let data = &parsed["cell-metadata.tf"]["resource"]["kubernetes_config_map_v1"]["cell_metadata"]
        [0]["data"];
    data.as_object()
        .unwrap_or_else(|| panic!("no data object:\n{}", parsed["cell-metadata.tf"]))
        .keys()
        .cloned()
        .collect()
}

/// Keys of the contract in cellgen.yaml that belong to `component` (`None`: the base keys).
pub fn contract_keys(root: &Path, component: Option<&str>) -> BTreeSet<String> {
    let config = yaml_file(root, "cellgen.yaml");
    config["keys"]
        .as_mapping()
        .unwrap()
        .iter()
        .filter(|(_, spec)| spec["component"].as_str() == component)
        .map(|(k, _)| k.as_str().unwrap().to_string())
        .collect()
}

/// Exactly `schema`, the base keys and `extra` are in data.
pub fn assert_data_keys(root: &Path, extra: &[&str]) {
    let mut want = contract_keys(root, None);
    want.insert("schema".into());
    want.extend(extra.iter().map(|s| s.to_string()));
    assert_eq!(data_keys(root), want, "{}", read(&root.join(METADATA)));
}

/// A controllers layer whose lines are known (`components: []` is line 8), so a case can check
/// the line a message names whatever the templates generate.
pub const FIXED_LAYER: &str = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: controllers\n  namespace: flux-system\nspec:\n  path: ./infrastructure/controllers\n  components: []\n  prune: true\n  interval: 10m\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n  postBuild:\n    substituteFrom:\n      - kind: ConfigMap\n        name: cell-metadata\n";

/// A cell whose controllers layer is [`FIXED_LAYER`].
pub fn fixed_layer(root: &Path) {
    cell(root);
    fs::write(root.join(CONTROLLERS), FIXED_LAYER).unwrap();
}

/// After adding karpenter: its layers list it, and its keys are inside data.
pub fn karpenter_added(root: &Path, _: &Output) {
    assert_eq!(components_of(root, CONTROLLERS), [KARPENTER_REF]);
    assert_eq!(
        components_of(root, "cells/eu-west-2-prod/configs.yaml"),
        ["../../components/karpenter/configs"]
    );
    let keys = contract_keys(root, Some("karpenter"));
    assert!(keys.contains("karpenter_role_arn"), "{keys:?}");
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    assert_data_keys(root, &keys);
}

const DATA_BLOCK: &str = "  data = {\n    schema           = \"1\"\n    cell_name        = var.name\n    aws_region       = var.region\n    cluster_name     = module.eks.cluster_name\n    vpc_id           = module.vpc.vpc_id\n    app_role_arn     = aws_iam_role.app_abac.arn\n    admission_action = var.environment == \"dev\" ? \"Audit\" : \"Deny\"\n  }";

/// A copy of the controllers layer kept beside the tree, to compare with after add and remove.
const SAVED: &str = ".saved-controllers.yaml";

fn restored(root: &Path, _: &Output) {
    assert_eq!(read(&root.join(CONTROLLERS)), read(&root.join(SAVED)));
}

fn save_then_add_karpenter(root: &Path) {
    fs::copy(root.join(CONTROLLERS), root.join(SAVED)).unwrap();
    run_ok(root, &["add-component", "karpenter"]);
    assert!(components_of(root, CONTROLLERS).contains(&KARPENTER_REF.to_string()));
}

/// A repository component `team-a` in the controllers layer, added to the cell.
fn team_a_added(root: &Path) {
    cell(root);
    component_in(
        root,
        "team-a",
        "controllers",
        "description: A\nlayers: [controllers]\n",
    );
    run_ok(root, &["add-component", "team-a"]);
}

pub fn cases() -> Vec<Case> {
    let mut cases = layer_cases();
    cases.extend(metadata_cases());
    cases.extend(config_cases());
    cases
}

fn layer_cases() -> Vec<Case> {
    vec![
        Case {
            name: "flow-style spec",
            setup: |root| {
                cell(root);
                for layer in ["controllers", "configs"] {
                    let file = format!("cells/{CELL}/{layer}.yaml");
                    let text = read(&root.join(&file));
                    let spec = text.find("spec:\n").unwrap();
                    let flow = format!(
                        "{}spec: {{interval: 10m, sourceRef: {{kind: GitRepository, name: flux-system}}, path: ./infrastructure/{layer}, prune: true, components: [], postBuild: {{substituteFrom: [{{kind: ConfigMap, name: cell-metadata}}]}}}}\n",
                        &text[..spec]
                    );
                    fs::write(root.join(&file), flow).unwrap();
                }
            },
            args: &["add-component", "karpenter"],
            expect: Expect::Succeeds(karpenter_added),
        },
        Case {
            name: "components: ~",
            setup: |root| {
                cell(root);
                replace(root, CONTROLLERS, "components: []", "components: ~");
            },
            args: &["add-component", "karpenter"],
            expect: Expect::Succeeds(karpenter_added),
        },
        Case {
            name: "components with no value and a comment",
            setup: |root| {
                cell(root);
                replace(
                    root,
                    CONTROLLERS,
                    "components: []",
                    "components: # none yet",
                );
            },
            args: &["add-component", "karpenter"],
            expect: Expect::Succeeds(karpenter_added),
        },
        Case {
            name: "an anchored list no alias uses",
            setup: |root| {
                cell(root);
                replace(root, CONTROLLERS, "components: []", "components: &c []");
            },
            args: &["add-component", "karpenter"],
            expect: Expect::Succeeds(|root, out| {
                karpenter_added(root, out);
                assert!(read(&root.join(CONTROLLERS)).contains("components: &c ["));
            }),
        },
        Case {
            name: "an anchored list an alias reuses",
            setup: |root| {
                fixed_layer(root);
                replace(root, CONTROLLERS, "components: []", "components: &c []");
                replace(
                    root,
                    CONTROLLERS,
                    "  prune: true",
                    "  prune: true\n  x-copy: *c",
                );
            },
            args: &["add-component", "karpenter"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    CONTROLLERS,
                    "line 8:",
                    "anchored as `&c`",
                    "line 10 reuses it as `*c`",
                ],
            },
        },
        Case {
            name: "components is an alias",
            setup: |root| {
                cell(root);
                replace(
                    root,
                    CONTROLLERS,
                    "kind: Kustomization",
                    "kind: Kustomization\nx-list: &c []",
                );
                replace(root, CONTROLLERS, "components: []", "components: *c");
            },
            args: &["add-component", "karpenter"],
            expect: Expect::Fails {
                code: 1,
                words: &[CONTROLLERS, "the alias `*c`", "Write the list here"],
            },
        },
        Case {
            name: "components: ~ comes back after add and remove",
            setup: |root| {
                cell(root);
                replace(root, CONTROLLERS, "components: []", "components: ~");
                save_then_add_karpenter(root);
            },
            args: &["remove-component", "karpenter"],
            expect: Expect::Succeeds(restored),
        },
        Case {
            name: "a components key without a value comes back after add and remove",
            setup: |root| {
                cell(root);
                replace(
                    root,
                    CONTROLLERS,
                    "components: []",
                    "components: # none yet",
                );
                save_then_add_karpenter(root);
            },
            args: &["remove-component", "karpenter"],
            expect: Expect::Succeeds(restored),
        },
        Case {
            name: "a multi-line empty list comes back after add and remove",
            setup: |root| {
                cell(root);
                replace(root, CONTROLLERS, "components: []", "components: [\n    ]");
                save_then_add_karpenter(root);
            },
            args: &["remove-component", "karpenter"],
            expect: Expect::Succeeds(restored),
        },
        Case {
            name: "a block list with comments in odd places comes back after add and remove",
            setup: |root| {
                team_a_added(root);
                replace(
                    root,
                    CONTROLLERS,
                    "  components:\n    - ../../components/team-a/controllers\n",
                    "  components: # ours\n  # first\n  - '../../components/team-a/controllers' # quoted\n\n  # last\n",
                );
                save_then_add_karpenter(root);
            },
            args: &["remove-component", "karpenter"],
            expect: Expect::Succeeds(restored),
        },
        Case {
            name: "a flow list over lines with a trailing comma",
            setup: |root| {
                team_a_added(root);
                replace(
                    root,
                    CONTROLLERS,
                    "  components:\n    - ../../components/team-a/controllers\n",
                    "  components: [\n      ../../components/team-a/controllers, # a\n    ]\n",
                );
            },
            args: &["add-component", "karpenter"],
            expect: Expect::Succeeds(|root, _| {
                assert_eq!(
                    components_of(root, CONTROLLERS),
                    ["../../components/team-a/controllers", KARPENTER_REF]
                );
            }),
        },
        Case {
            name: "a layer file nested 100,000 brackets deep",
            setup: |root| {
                fixed_layer(root);
                let deep = format!(
                    "components: []\n  x: {}{}",
                    "[".repeat(100_000),
                    "]".repeat(100_000)
                );
                replace(root, CONTROLLERS, "components: []", &deep);
            },
            args: &["add-component", "karpenter"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "cells/eu-west-2-prod/controllers.yaml:9:",
                    "nest more than 64 levels",
                ],
            },
        },
    ]
}

fn metadata_cases() -> Vec<Case> {
    vec![
        Case {
            name: "a one-line data object",
            setup: |root| {
                cell(root);
                replace(
                    root,
                    METADATA,
                    DATA_BLOCK,
                    "  data = { schema = \"1\", cell_name = var.name, aws_region = var.region, cluster_name = module.eks.cluster_name, vpc_id = module.vpc.vpc_id, app_role_arn = aws_iam_role.app_abac.arn, admission_action = var.environment == \"dev\" ? \"Audit\" : \"Deny\" }",
                );
            },
            args: &["add-component", "karpenter"],
            expect: Expect::Succeeds(karpenter_added),
        },
        Case {
            name: "the closing brace on the last entry's line",
            setup: |root| {
                cell(root);
                replace(root, METADATA, "\"Deny\"\n  }", "\"Deny\" }");
            },
            args: &["add-component", "karpenter"],
            expect: Expect::Succeeds(karpenter_added),
        },
        Case {
            name: "trailing commas, comments and a heredoc in data",
            setup: |root| {
                cell(root);
                replace(
                    root,
                    METADATA,
                    "var.name\n",
                    "var.name, # the cell\n    # the region:\n",
                );
                replace(
                    root,
                    METADATA,
                    "\"Deny\"\n",
                    "\"Deny\"\n    notes = <<EOT\n}\nEOT\n",
                );
            },
            args: &["add-component", "karpenter"],
            expect: Expect::Succeeds(|root, _| {
                let karpenter = contract_keys(root, Some("karpenter"));
                let mut extra: Vec<&str> = karpenter.iter().map(String::as_str).collect();
                extra.push("notes");
                assert_data_keys(root, &extra);
            }),
        },
        Case {
            name: "another kubernetes_config_map_v1 before the cell-metadata one",
            setup: |root| {
                cell(root);
                let text = read(&root.join(METADATA));
                fs::write(
                    root.join(METADATA),
                    format!("resource \"kubernetes_config_map_v1\" \"app\" {{\n  metadata {{\n    name = \"app\"\n  }}\n  data = {{\n    a = \"1\"\n  }}\n}}\n\n{text}"),
                )
                .unwrap();
            },
            args: &["add-component", "external-dns"],
            expect: Expect::Succeeds(|root, _| {
                assert_data_keys(root, &["external_dns_role_arn", "external_dns_domains"]);
                let parsed = stack(root);
                let other = &parsed["cell-metadata.tf"]["resource"]["kubernetes_config_map_v1"]["app"]
                    [0]["data"];
                assert_eq!(other.as_object().unwrap().len(), 1, "{other}");
            }),
        },
        Case {
            name: "two resources that could be the cell-metadata ConfigMap",
            setup: |root| {
                cell(root);
                let text = read(&root.join(METADATA));
                let copy = text.replace("\"cell_metadata\"", "\"cell_metadata_copy\"");
                fs::write(root.join(METADATA), format!("{text}\n{copy}")).unwrap();
            },
            args: &["add-component", "external-dns"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    METADATA,
                    "could each be the cell-metadata ConfigMap",
                    "(line 4)",
                    "rename the other",
                ],
            },
        },
        Case {
            name: "data = merge(...)",
            setup: |root| {
                cell(root);
                replace(
                    root,
                    METADATA,
                    DATA_BLOCK,
                    "  data = merge(local.base, { schema = \"1\" })",
                );
            },
            args: &["add-component", "external-dns"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    METADATA,
                    "(line 10)",
                    "not an object literal",
                    "write the keys out",
                ],
            },
        },
        Case {
            name: "the ConfigMap resource on one line cannot take depends_on",
            setup: |root| {
                cell(root);
                fs::write(
                    root.join(METADATA),
                    "resource \"kubernetes_config_map_v1\" \"cell_metadata\" { data = { schema = \"1\", cell_name = var.name, aws_region = var.region, cluster_name = module.eks.cluster_name, vpc_id = module.vpc.vpc_id, app_role_arn = aws_iam_role.app_abac.arn, admission_action = \"Deny\" } }\n",
                )
                .unwrap();
            },
            args: &["add-component", "external-dns"],
            expect: Expect::Fails {
                code: 1,
                words: &[METADATA, "closing `}` on a line of its own"],
            },
        },
        Case {
            name: "a user's file declaring an address a component declares",
            setup: |root| {
                cell(root);
                fs::write(
                    root.join("terraform/cells/eu-west-2-prod/mine.tf"),
                    "module \"karpenter\" {\n  source = \"./x\"\n}\n",
                )
                .unwrap();
            },
            args: &["add-component", "karpenter"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "mine.tf: line 1: declares `module.karpenter`",
                    "karpenter.tf:3",
                    "Terraform refuses two blocks with one address",
                ],
            },
        },
    ]
}

fn config_cases() -> Vec<Case> {
    vec![
        Case {
            name: "keys as a flow mapping in cellgen.yaml",
            setup: |root| {
                cell(root);
                let text = read(&root.join("cellgen.yaml"));
                let at = text.find("keys:\n").unwrap();
                fs::write(
                    root.join("cellgen.yaml"),
                    format!(
                        "{}keys: {{cell_name: {{description: x, example: y, terraform: var.name}}}}\n",
                        &text[..at]
                    ),
                )
                .unwrap();
            },
            args: &["add-component", "external-dns"],
            expect: Expect::Fails {
                code: 1,
                words: &["cellgen.yaml", "flow mapping", "block mapping"],
            },
        },
        Case {
            name: "values with quotes, colons and comment signs reach cellgen.yaml intact (line breaks are refused: see injection)",
            setup: |root| {
                cell_with_component(
                    root,
                    "billing",
                    "description: Billing\nlayers: [apps]\nkeys:\n  billing_queue:\n    description: \"Queue: evil: true # x: 1\"\n    example: \"a: b # c - 'd' [x] {y: z}\"\n    terraform: 'format(\"%s-billing\", var.name)'\n",
                );
            },
            args: &["add-component", "billing"],
            expect: Expect::Succeeds(|root, _| {
                let config = yaml_file(root, "cellgen.yaml");
                let key = &config["keys"]["billing_queue"];
                assert_eq!(
                    key["description"].as_str(),
                    Some("Queue: evil: true # x: 1")
                );
                assert_eq!(key["example"].as_str(), Some("a: b # c - 'd' [x] {y: z}"));
                assert_eq!(
                    key["terraform"].as_str(),
                    Some("format(\"%s-billing\", var.name)")
                );
                assert!(config.get("evil").is_none());
                assert_data_keys(root, &["billing_queue"]);
            }),
        },
    ]
}

#[test]
fn edits_table() {
    run_table("edits", &cases());
}
