#![no_main]
//! The kustomize readers: kustomization files and JSON patches (go-yaml v2, `yaml_to_json`) and
//! resources (kyaml's stream split, go-yaml v3, then JSON).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = cellgen::ports::yaml::yaml_to_json(text);
    if let Ok(docs) = cellgen::ports::yaml::kio_documents(text) {
        for doc in docs {
            let _ = doc.to_json(true);
        }
    }
});
