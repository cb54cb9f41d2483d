#![no_main]
//! The HCL expression validator on any string (issue 18): whatever it accepts is one line with
//! no heredoc, reads as exactly one attribute and no block, and the edit of cell-metadata.tf it
//! lets through has exactly the intended structure: one new entry in the ConfigMap's data, no
//! new block or attribute anywhere, every other character the same but layout whitespace.
//! (HashiCorp's parser is the property test's judge, tests/hcl_injection_props.rs; a fuzzer
//! cannot call it, so here hcl-edit judges, and the line rule keeps the two from disagreeing.)

use libfuzzer_sys::fuzz_target;

use cellgen::ports::edit::hcl::{self, syntax};
use hcl_edit::structure::{Body, Structure};

const BASE: &str = r#"# The bridge between Terraform and Flux.
resource "kubernetes_config_map_v1" "cell_metadata" {
  metadata {
    name      = "cell-metadata"
    namespace = "flux-system"
  }

  data = {
    schema           = "1"
    cell_name        = var.name
    admission_action = var.environment == "dev" ? "Audit" : "Deny"
    notes            = <<EOT
}
EOT
  }

  # a comment
  depends_on = [
    helm_release.flux_instance,
  ]
}
"#;

fn skeleton(body: &Body, depth: usize, out: &mut Vec<String>) {
    for s in body.iter() {
        match s {
            Structure::Attribute(a) => out.push(format!("{depth}:{}", a.key.as_str())),
            Structure::Block(b) => {
                let labels: Vec<&str> = b.labels.iter().map(|l| l.as_str()).collect();
                out.push(format!("{depth}:{} {labels:?}", b.ident.as_str()));
                skeleton(&b.body, depth + 1, out);
            }
        }
    }
}

fn shape(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    skeleton(&hcl_edit::parser::parse_body(text).unwrap(), 0, &mut out);
    out
}

fn squeeze(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = std::str::from_utf8(data) else {
        return;
    };
    let checked = syntax::check_expression(value);
    let added = hcl::add(BASE, &[("k1".to_string(), value.to_string())], &[]);
    let Ok(edited) = added else {
        return;
    };
    assert!(checked.is_ok(), "the edit took {value:?}, which the validator refuses");
    assert!(!value.contains(['\n', '\r']), "a multi-line value: {value:?}");
    // Alone, it is one attribute and nothing else.
    let alone = hcl_edit::parser::parse_body(&format!("x = {value}\n")).unwrap();
    assert_eq!(alone.iter().count(), 1, "{value:?}");
    assert!(alone.get_attribute("x").is_some(), "{value:?}");
    // In the file: the entries are the old ones plus k1, the structure is the same.
    let (before, after) = (hcl::read(BASE).unwrap(), hcl::read(&edited).unwrap());
    let mut want: Vec<(String, String)> =
        before.entries.iter().map(|e| (e.key.clone(), e.value.clone())).collect();
    want.push(("k1".into(), value.to_string()));
    let got: Vec<(String, String)> =
        after.entries.iter().map(|e| (e.key.clone(), e.value.clone())).collect();
    assert_eq!(got, want);
    assert_eq!(shape(BASE), shape(&edited));
    // Every other character is the same: the k1 line out, only whitespace differs.
    let line = edited
        .lines()
        .find(|l| l.trim_start().starts_with("k1 "))
        .expect("k1 has a line of its own");
    assert!(line.trim_end().ends_with(value), "{line:?}");
    let without = edited.replacen(&format!("{line}\n"), "", 1);
    assert_eq!(squeeze(&without), squeeze(BASE), "{edited}");
});
