#![no_main]
//! The editors on any text: never a panic, and whenever an edit succeeds its result reads back
//! with exactly the intended change, and removing what was added gives back what the input
//! meant. (Byte identity is the property tests' claim, over layouts people write; a fuzzer can
//! write padding that only looks aligned once a key joins it.)

use libfuzzer_sys::fuzz_target;

use cellgen::ports::edit::{hcl, yaml};

const PATH: &str = "../../components/fuzz/controllers";

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    if which % 2 == 0 {
        let Ok(before) = yaml::flux_components(text) else {
            return;
        };
        if let Ok(added) = yaml::add_flux_component(text, PATH) {
            let mut want = before.clone();
            if !want.iter().any(|p| p.trim_end_matches('/') == PATH) {
                want.push(PATH.to_string());
            }
            assert_eq!(yaml::flux_components(&added).unwrap(), want);
            let back = yaml::remove_flux_component(&added, PATH).unwrap();
            assert!(yaml::flux_components(&back).is_ok());
        }
    } else {
        let Ok(before) = hcl::read(text) else {
            return;
        };
        if before.depends_on.iter().any(|d| d == "module.fuzz") {
            return;
        }
        let new = vec![("fuzz_key".to_string(), "module.fuzz.value".to_string())];
        if let Ok(added) = hcl::add(text, &new, &["module.fuzz".to_string()]) {
            let after = hcl::read(&added).unwrap();
            assert_eq!(after.entries.len(), before.entries.len() + 1);
            assert_eq!(after.get("fuzz_key").unwrap().value, "module.fuzz.value");
            let back = hcl::remove(
                &added,
                &["fuzz_key".to_string()],
                &["module.fuzz".to_string()],
            )
            .unwrap();
            let back = hcl::read(&back).unwrap();
            assert_eq!(back.entries.len(), before.entries.len());
            for (a, b) in back.entries.iter().zip(&before.entries) {
                assert_eq!((&a.key, &a.value), (&b.key, &b.value));
            }
            assert_eq!(back.depends_on, before.depends_on);
        }
    }
});
