#![no_main]
//! cellgen.yaml through its one reader (`Config::parse`, over the YAML entry point): any text
//! ends, without a panic, in a config or an error naming the file.

use libfuzzer_sys::fuzz_target;

use cellgen::model::config::Config;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = Config::parse(text, camino::Utf8Path::new("cellgen.yaml")) {
        assert!(e.to_string().starts_with("cellgen.yaml"), "{e}");
    }
});
