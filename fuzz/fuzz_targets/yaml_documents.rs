#![no_main]
//! Multi-document layer files and the lossless editor's reader: every stream ends (the first
//! error ends it), and a text the strict reader takes as one document the editor reads too, or
//! refuses with an error (never a panic).

use libfuzzer_sys::fuzz_target;

type Value = yaml_serde::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let docs = cellgen::ports::yaml::documents::<Value>(text);
    if text.len() > cellgen::ports::yaml::MAX_BYTES {
        assert!(docs.is_err());
    }
    let _ = cellgen::ports::yaml::lossless(text);
    let _ = cellgen::ports::edit::yaml::flux_components(text);
});
