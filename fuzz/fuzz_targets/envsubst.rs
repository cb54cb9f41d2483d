#![no_main]
//! The engine must never panic, whatever the text and whichever mode.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        let lookup = |k: &str| (!k.starts_with('m')).then(|| format!("{k}😀 v"));
        let _ = cellgen::ports::envsubst::envsubst(s, &lookup, true);
        let _ = cellgen::ports::envsubst::envsubst(s, &lookup, false);
        let _ = cellgen::ports::envsubst::analyze(s);
    }
});
