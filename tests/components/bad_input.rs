use super::*;

// ---------------------------------------------------------------------------------------------
// Bad input: a clear message, the right exit code, and nothing written
// ---------------------------------------------------------------------------------------------

/// A repository-defined component `team-agent` in the controllers layer: `spec` is the text of
/// its component.yaml, `kind` the kind of its layer's kustomization.yaml.
pub(crate) fn write_team_agent(root: &Path, spec: &str, kind: &str) {
    let dir = root.join("components/team-agent");
    fs::create_dir_all(dir.join("controllers")).unwrap();
    fs::write(dir.join("component.yaml"), spec).unwrap();
    fs::write(
        dir.join("controllers/kustomization.yaml"),
        format!(
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: {kind}\nresources:\n  - service-account.yaml\n"
        ),
    )
    .unwrap();
    fs::write(
        dir.join("controllers/service-account.yaml"),
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: team-agent\n  namespace: kube-system\n",
    )
    .unwrap();
}

pub(crate) const TEAM_AGENT_REQUIRES_KARPENTER: &str = "description: Team agent, scheduled on Karpenter nodes.\nrequires: [karpenter]\nlayers: [controllers]\n";

pub(crate) fn one_cell(root: &Path) {
    new_cell(root, &[PROD]);
}

pub(crate) fn two_cells(root: &Path) {
    new_cell(root, &[PROD]);
    new_cell(root, &[DEV]);
}

/// Replaces `from` (which must be there) with `to` in a file of the repository.
pub(crate) fn edit_file(root: &Path, file: &str, from: &str, to: &str) {
    let path = root.join(file);
    let text = read(&path);
    assert!(text.contains(from), "{file} has no `{from}`:\n{text}");
    fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

pub(crate) struct BadInput {
    what: &'static str,
    setup: fn(&Path),
    args: &'static [&'static str],
    code: i32,
    words: &'static [&'static str],
}

pub(crate) fn bad_input_cases() -> Vec<BadInput> {
    vec![
        BadInput {
            what: "unknown component",
            setup: one_cell,
            args: &["add-component", "karpentr"],
            code: 2,
            words: &[
                "unknown component `karpentr`",
                "Did you mean `karpenter`?",
                "Known components: aws-ebs-csi-driver",
            ],
        },
        BadInput {
            what: "unknown component to remove",
            setup: one_cell,
            args: &["remove-component", "karpentr"],
            code: 2,
            words: &["unknown component `karpentr`", "Did you mean `karpenter`?"],
        },
        BadInput {
            what: "unknown --cell",
            setup: two_cells,
            args: &["add-component", "karpenter", "--cell", "eu-west-2-prd"],
            code: 2,
            words: &[
                "unknown cell `eu-west-2-prd`",
                "Did you mean `eu-west-2-prod`?",
                "eu-west-2-prod, us-east-1-dev",
            ],
        },
        BadInput {
            what: "unknown --cell to remove from",
            setup: two_cells,
            args: &["remove-component", "karpenter", "--cell", "us-east-1-dve"],
            code: 2,
            words: &[
                "unknown cell `us-east-1-dve`",
                "Did you mean `us-east-1-dev`?",
            ],
        },
        BadInput {
            what: "several cells, no --cell and no terminal",
            setup: two_cells,
            args: &["add-component", "karpenter"],
            code: 2,
            words: &[
                "which cell",
                "eu-west-2-prod, us-east-1-dev",
                "no terminal",
                "--cell",
            ],
        },
        BadInput {
            what: "several cells, no --cell and no terminal (remove)",
            setup: |root| {
                two_cells(root);
                run_ok(root, &["add-component", "karpenter", "--cell", PROD]);
            },
            args: &["remove-component", "karpenter"],
            code: 2,
            words: &["which cell", "eu-west-2-prod, us-east-1-dev", "--cell"],
        },
        BadInput {
            what: "malformed layer YAML",
            setup: |root| {
                one_cell(root);
                edit_file(
                    root,
                    "cells/eu-west-2-prod/controllers.yaml",
                    "components: []",
                    "components: [../x",
                );
            },
            args: &["add-component", "karpenter"],
            code: 1,
            words: &[
                "cells/eu-west-2-prod/controllers.yaml",
                "not valid YAML",
                "line 1",
            ],
        },
        BadInput {
            what: "malformed cell-metadata.tf",
            setup: |root| {
                one_cell(root);
                edit_file(
                    root,
                    "terraform/cells/eu-west-2-prod/cell-metadata.tf",
                    "vpc_id           = module",
                    "vpc_id           = = module",
                );
            },
            args: &["add-component", "karpenter"],
            code: 1,
            words: &[
                "terraform/cells/eu-west-2-prod/cell-metadata.tf",
                "not valid HCL",
                "(line 15)",
            ],
        },
        BadInput {
            what: "cell-metadata.tf without the ConfigMap",
            setup: |root| {
                one_cell(root);
                let file = "terraform/cells/eu-west-2-prod/cell-metadata.tf";
                edit_file(
                    root,
                    file,
                    "resource \"kubernetes_config_map_v1\" \"cell_metadata\"",
                    "resource \"kubernetes_config_map_v1\" \"metadata\"",
                );
                // Neither its label nor its name says it is the cell-metadata ConfigMap.
                edit_file(root, file, "\"cell-metadata\"", "\"other\"");
            },
            args: &["add-component", "external-dns"],
            code: 1,
            words: &[
                "terraform/cells/eu-west-2-prod/cell-metadata.tf",
                "no `resource \"kubernetes_config_map_v1\" \"cell_metadata\"` block",
            ],
        },
        BadInput {
            what: "a requirement is missing and no --with-requirements",
            setup: |root| {
                one_cell(root);
                write_team_agent(root, TEAM_AGENT_REQUIRES_KARPENTER, "Component");
            },
            args: &["add-component", "team-agent"],
            code: 1,
            words: &[
                "component `team-agent` needs karpenter in cell `eu-west-2-prod`",
                "--with-requirements",
            ],
        },
        BadInput {
            what: "removing a component another one requires",
            setup: |root| {
                one_cell(root);
                write_team_agent(root, TEAM_AGENT_REQUIRES_KARPENTER, "Component");
                run_ok(
                    root,
                    &["add-component", "team-agent", "--with-requirements"],
                );
            },
            args: &["remove-component", "karpenter"],
            code: 1,
            words: &[
                "cell `eu-west-2-prod` still runs team-agent",
                "requires `karpenter`",
                "remove it first",
            ],
        },
        BadInput {
            what: "a repository-defined layer that is not a Kustomize Component",
            setup: |root| {
                one_cell(root);
                write_team_agent(
                    root,
                    "description: Team agent.\nlayers: [controllers]\n",
                    "Kustomization",
                );
            },
            args: &["add-component", "team-agent"],
            code: 1,
            words: &[
                "components/team-agent/controllers/kustomization.yaml",
                "is not a Kustomize Component",
                "kind: Component",
            ],
        },
        BadInput {
            what: "component.yaml with an unknown field",
            setup: |root| {
                one_cell(root);
                write_team_agent(
                    root,
                    "description: Team agent.\nlayers: [controllers]\nowner: platform\n",
                    "Component",
                );
            },
            args: &["add-component", "team-agent"],
            code: 1,
            words: &[
                "components/team-agent/component.yaml",
                "unknown field `owner`",
                "line 3",
            ],
        },
        BadInput {
            what: "karpenter without the node image setting of the cell's environment",
            setup: |root| {
                one_cell(root);
                // A repository from before the setting: no `karpenter:` section at all.
                let config = read(&root.join("cellgen.yaml"));
                let start = config.find("\nkarpenter:\n").expect("a karpenter section") + 1;
                let end = start + config[start..].find("\n\n").expect("a blank line after it");
                edit_file(root, "cellgen.yaml", &config[start..=end], "");
            },
            args: &["add-component", "karpenter"],
            code: 1,
            words: &[
                "cellgen.yaml",
                "component `karpenter` needs the setting `karpenter.ami_alias.prod`",
                "cell eu-west-2-prod",
                "`prod: al2023@",
            ],
        },
        BadInput {
            what: "a component's .tf the user wrote, not listed in the record",
            setup: |root| {
                one_cell(root);
                fs::write(
                    root.join("terraform/cells/eu-west-2-prod/karpenter.tf"),
                    "# mine: nodes of my own\n",
                )
                .unwrap();
            },
            args: &["add-component", "karpenter"],
            code: 1,
            words: &[
                "terraform/cells/eu-west-2-prod/karpenter.tf",
                "cellgen will not replace it",
                ".cellgen/cells/eu-west-2-prod.json",
            ],
        },
        BadInput {
            what: "removing a component whose .tf the user edited",
            setup: |root| {
                one_cell(root);
                run_ok(root, &["add-component", "external-dns"]);
                let tf = root.join("terraform/cells/eu-west-2-prod/external-dns.tf");
                let text = read(&tf);
                fs::write(&tf, format!("{text}\n# extra zone, added by hand\n")).unwrap();
            },
            args: &["remove-component", "external-dns"],
            code: 1,
            words: &[
                "terraform/cells/eu-west-2-prod/external-dns.tf",
                "you changed it",
                "will not delete it",
            ],
        },
        BadInput {
            what: "component.yaml naming a layer the repository does not have",
            setup: |root| {
                one_cell(root);
                write_team_agent(
                    root,
                    "description: Team agent.\nlayers: [controllers, monitoring]\n",
                    "Component",
                );
            },
            args: &["add-component", "team-agent"],
            code: 1,
            words: &[
                "components/team-agent/component.yaml",
                "layer `monitoring` is not a layer of this repository",
                "controllers, configs, apps",
            ],
        },
    ]
}

pub(crate) fn run_bad_input(case: &BadInput, root: &Path) -> Vec<String> {
    let mut failures = Vec::new();
    let before = tree_hash(root);
    let out = cellgen()
        .current_dir(root)
        .args(case.args)
        .output()
        .unwrap();
    let err = stderr(&out);
    let what = format!("{} (`cellgen {}`)", case.what, case.args.join(" "));
    if out.status.code() != Some(case.code) {
        failures.push(format!(
            "{what}: exit code {:?}, expected {}\nstderr: {err}",
            out.status.code(),
            case.code
        ));
    }
    for word in case.words {
        if !err.contains(word) {
            failures.push(format!("{what}: stderr lacks `{word}`:\n{err}"));
        }
    }
    if !stdout(&out).trim().is_empty() {
        failures.push(format!(
            "{what}: printed on stdout although it failed:\n{}",
            stdout(&out)
        ));
    }
    let diff = tree_diff(&before, &tree_hash(root));
    if !diff.is_empty() {
        failures.push(format!(
            "{what}: the directory changed:\n  {}",
            diff.join("\n  ")
        ));
    }
    failures
}

#[test]
fn bad_input_fails_clearly_with_the_right_code_and_writes_nothing() {
    let mut failures = Vec::new();
    for case in &bad_input_cases() {
        let dir = temp_dir();
        (case.setup)(dir.path());
        failures.extend(run_bad_input(case, dir.path()));
        // --dry-run fails the same way.
        let mut dry = case.args.to_vec();
        dry.push("--dry-run");
        let out = cellgen()
            .current_dir(dir.path())
            .args(&dry)
            .output()
            .unwrap();
        if out.status.code() != Some(case.code) {
            failures.push(format!(
                "{} with --dry-run: exit code {:?}, expected {}",
                case.what,
                out.status.code(),
                case.code
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn with_requirements_equals_adding_the_requirement_first_and_removes_in_reverse() {
    // team-agent has a key of its own: both components bring keys, in one command, so the
    // contract's number moves once.
    let spec = format!(
        "{TEAM_AGENT_REQUIRES_KARPENTER}keys:\n  team_agent_queue:\n    description: Queue of the team agent\n    example: agent-queue\n    terraform: module.karpenter.queue_name\n"
    );
    let together = temp_dir();
    one_cell(together.path());
    write_team_agent(together.path(), &spec, "Component");
    let before = tree_hash(together.path());
    let out = run_ok(
        together.path(),
        &["add-component", "team-agent", "--with-requirements"],
    );
    assert_contains(
        &out,
        &[
            "Added karpenter, team-agent to cell eu-west-2-prod.",
            "schema 1 -> 2",
        ],
        "add-component --with-requirements",
    );

    let apart = temp_dir();
    one_cell(apart.path());
    write_team_agent(apart.path(), &spec, "Component");
    run_ok(apart.path(), &["add-component", "karpenter"]);
    run_ok(apart.path(), &["add-component", "team-agent"]);
    // The same change, but two commands move the number twice.
    assert_eq!(
        files_but_numbers(apart.path()),
        files_but_numbers(together.path()),
        "`add-component team-agent --with-requirements` differs from adding karpenter, then team-agent"
    );
    let (schema, since) = numbers(together.path());
    assert_eq!(schema, 2);
    assert_eq!(since["karpenter_role_arn"], 2);
    assert_eq!(since["team_agent_queue"], 2);
    assert_eq!(cell_number(together.path(), "eu-west-2-prod"), "2");
    let (schema, since) = numbers(apart.path());
    assert_eq!((schema, since["team_agent_queue"]), (3, 3));
    assert_eq!(cell_number(apart.path(), "eu-west-2-prod"), "3");

    // Removed in reverse, the repository is as it was but for the contract's number: team-agent's
    // keys alone are not what the last change added, so each removal is a new key set.
    run_ok(together.path(), &["remove-component", "team-agent"]);
    run_ok(together.path(), &["remove-component", "karpenter"]);
    let changed = tree_diff(&before, &tree_hash(together.path()));
    assert_eq!(
        changed,
        ["changed  cellgen.yaml"],
        "add --with-requirements, then remove both"
    );
    assert_eq!(numbers(together.path()).0, 4);
    assert_eq!(cell_number(together.path(), "eu-west-2-prod"), "1");
}
