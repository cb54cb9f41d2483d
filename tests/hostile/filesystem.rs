//! Hostile input: filesystem.

use super::*;

/// The controllers layer lists `deep/d0`, the start of a 10,000-deep chain of kustomizations.
fn ten_thousand_deep_resources(dir: &Path) {
    new_cell(dir, &["eu-west-2-prod", "--no-input"]);
    let n = 10_000;
    for i in 0..n {
        let d = dir.join(format!("deep/d{i}"));
        std::fs::create_dir_all(&d).unwrap();
        let next = if i + 1 < n {
            format!("resources: [../d{}]\n", i + 1)
        } else {
            "namePrefix: x-\n".to_string()
        };
        std::fs::write(d.join("kustomization.yaml"), next).unwrap();
    }
    let k = dir.join("infrastructure/controllers/kustomization.yaml");
    let text = std::fs::read_to_string(&k).unwrap();
    std::fs::write(
        k,
        text.replace(
            "  - platform-namespace.yaml",
            "  - platform-namespace.yaml\n  - ../../deep/d0",
        ),
    )
    .unwrap();
}

pub fn cases() -> Vec<Case> {
    vec![Case {
        name: "a 10,000-deep chain of kustomizations",
        setup: ten_thousand_deep_resources,
        args: &["render", "eu-west-2-prod", "--layer", "controllers"],
        expect: Expect::Fails {
            code: 1,
            words: &["infrastructure/controllers", "nest more than 100 levels"],
        },
    }]
}

#[test]
fn filesystem_table() {
    run_table("filesystem", &cases());
}
