//! The vendored Flux CRDs (schemas/flux/*.yaml), turned into one JSON document at build time:
//! `check` then reads JSON instead of parsing 170 KB of YAML on every run (that parse was about
//! 4% of its instructions at 1,000 cells, on the first cell's path). The YAML stays what is
//! vendored; a unit test (analysis::check::schema) checks the JSON reads back as the same values.

use std::path::{Path, PathBuf};

fn main() {
    let dir = Path::new("schemas/flux");
    println!("cargo::rerun-if-changed={}", dir.display());
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("schemas/flux is part of the crate")
        .map(|entry| entry.expect("schemas/flux lists").file_name())
        .filter_map(|name| name.into_string().ok())
        .filter(|name| name.ends_with(".yaml"))
        .collect();
    names.sort();
    let mut crds = serde_json::Map::new();
    for name in names {
        let path = dir.join(&name);
        println!("cargo::rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let crd: serde_json::Value =
            yaml_serde::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        crds.insert(name, crd);
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let json = serde_json::to_string(&crds).expect("JSON values serialise");
    std::fs::write(out.join("flux_crds.json"), json).expect("OUT_DIR is writable");
}
