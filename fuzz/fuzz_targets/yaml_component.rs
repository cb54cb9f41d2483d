#![no_main]
//! component.yaml as the catalog reads it: typed, through the YAML entry point.

use libfuzzer_sys::fuzz_target;

use cellgen::model::catalog::ComponentSpec;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = cellgen::ports::yaml::from_str::<ComponentSpec>(text);
});
