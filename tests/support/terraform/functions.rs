//! Terraform's built-in functions as the installed Terraform lists them
//! (`terraform metadata functions -json`, offline): a call to a function that does not exist, or
//! with a number of arguments it does not take, fails `terraform validate`.

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::OnceLock;

/// Parameters a function takes: (fixed, variadic).
pub type Arity = (usize, bool);

/// Name (`join`, `core::join`) → arity, read once per test binary.
pub fn functions() -> &'static BTreeMap<String, Arity> {
    static FUNCTIONS: OnceLock<BTreeMap<String, Arity>> = OnceLock::new();
    FUNCTIONS.get_or_init(|| {
        let output = Command::new("terraform")
            .args(["metadata", "functions", "-json"])
            .env("TF_CLI_CONFIG_FILE", "/dev/null")
            .output()
            .unwrap_or_else(|e| {
                panic!("cannot run `terraform metadata functions` (is terraform installed? .ci/run requires it): {e}")
            });
        assert!(
            output.status.success(),
            "`terraform metadata functions -json` failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&output.stdout)
            .expect("`terraform metadata functions -json` printed no JSON");
        let signatures = json["function_signatures"]
            .as_object()
            .expect("no function_signatures in `terraform metadata functions -json`");
        assert!(signatures.contains_key("join"), "Terraform lists no `join` function");
        signatures
            .iter()
            .map(|(name, sig)| {
                let fixed = sig["parameters"].as_array().map_or(0, Vec::len);
                (name.clone(), (fixed, sig.get("variadic_parameter").is_some()))
            })
            .collect()
    })
}
