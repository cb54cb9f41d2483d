//! Hostile input: files.

use super::*;

/// A cell whose controllers layer is about to be made hostile.
fn cell(dir: &Path) {
    new_cell(dir, &["eu-west-2-prod", "--no-input"]);
}

fn non_utf8_layer_resource(dir: &Path) {
    cell(dir);
    std::fs::write(
        dir.join("infrastructure/controllers/platform-namespace.yaml"),
        b"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: pl\xffatform\n",
    )
    .unwrap();
}

fn generator_reads_outside_by_dot_dot(dir: &Path) {
    cell(dir);
    let k = dir.join("infrastructure/controllers/kustomization.yaml");
    let mut text = std::fs::read_to_string(&k).unwrap();
    text.push_str(
        "configMapGenerator:\n- name: leak\n  files: [../../../../../../../../etc/passwd]\n",
    );
    std::fs::write(k, text).unwrap();
}

fn generator_env_reads_an_absolute_path(dir: &Path) {
    cell(dir);
    let k = dir.join("infrastructure/controllers/kustomization.yaml");
    let mut text = std::fs::read_to_string(&k).unwrap();
    text.push_str("secretGenerator:\n- name: leak\n  envs: [/etc/passwd]\n");
    std::fs::write(k, text).unwrap();
}

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "a layer resource that is not UTF-8",
            setup: non_utf8_layer_resource,
            args: &["render", "eu-west-2-prod", "--layer", "controllers"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "infrastructure/controllers/platform-namespace.yaml",
                    "not valid UTF-8",
                    "offset 51",
                ],
            },
        },
        Case {
            name: "a configMapGenerator file outside the repository (../)",
            setup: generator_reads_outside_by_dot_dot,
            args: &["render", "eu-west-2-prod", "--layer", "controllers"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "infrastructure/controllers/kustomization.yaml",
                    "etc/passwd",
                    "not in or below the repository root",
                ],
            },
        },
        Case {
            name: "a secretGenerator env file at an absolute path",
            setup: generator_env_reads_an_absolute_path,
            args: &[
                "render",
                "eu-west-2-prod",
                "--layer",
                "controllers",
                "--kustomize",
                "external",
            ],
            expect: Expect::Fails {
                code: 1,
                words: &["/etc/passwd", "absolute path"],
            },
        },
    ]
}

#[test]
fn files_table() {
    run_table("files", &cases());
}
