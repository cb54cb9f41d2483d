//! Hostile input: symlinks.

use super::*;

#[cfg(unix)]
fn resource_links_outside(dir: &Path) {
    new_cell(dir, &["eu-west-2-prod", "--no-input"]);
    let layer = dir.join("infrastructure/controllers");
    std::os::unix::fs::symlink("/etc/passwd", layer.join("leak.yaml")).unwrap();
    let k = layer.join("kustomization.yaml");
    let text = std::fs::read_to_string(&k).unwrap();
    std::fs::write(
        k,
        text.replace(
            "  - platform-namespace.yaml",
            "  - platform-namespace.yaml\n  - leak.yaml",
        ),
    )
    .unwrap();
}

#[cfg(unix)]
fn component_is_a_linked_directory(dir: &Path) {
    new_cell(dir, &["eu-west-2-prod", "--no-input"]);
    std::os::unix::fs::symlink("/etc", dir.join("components-elsewhere")).unwrap();
    let layer = dir.join("cells/eu-west-2-prod/controllers.yaml");
    let text = std::fs::read_to_string(&layer).unwrap();
    std::fs::write(
        layer,
        text.replace("components: []", "components: [../../components-elsewhere]"),
    )
    .unwrap();
}

pub fn cases() -> Vec<Case> {
    #[cfg(not(unix))]
    return vec![];
    #[cfg(unix)]
    vec![
        Case {
            name: "a layer resource linked to a file outside the repository",
            setup: resource_links_outside,
            args: &["render", "eu-west-2-prod", "--layer", "controllers"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "infrastructure/controllers/leak.yaml",
                    "symbolic link",
                    "Flux",
                ],
            },
        },
        Case {
            name: "a Flux component path that is a linked directory",
            setup: component_is_a_linked_directory,
            args: &["render", "eu-west-2-prod", "--layer", "controllers"],
            expect: Expect::Fails {
                code: 1,
                words: &["components-elsewhere", "symbolic link"],
            },
        },
    ]
}

#[test]
fn symlinks_table() {
    run_table("symlinks", &cases());
}
