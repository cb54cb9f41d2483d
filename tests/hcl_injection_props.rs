//! Issue 18: the HCL expression validator against HashiCorp's own parser. Generated hostile
//! values (heredocs, braces, quotes, comments, line breaks, `${}`/`%{}` templates, block
//! openers) go through cellgen's validator and its edit of a real `cell-metadata.tf`; every one
//! it accepts must be, for HashiCorp's parser, exactly one attribute holding one expression, and
//! the edited file must parse to the original plus exactly one data key: no new block, no new
//! attribute. An empty heredoc, which hcl-edit and HashiCorp read differently, once let a value
//! close the ConfigMap and open a `provisioner`.

#[path = "support/mod.rs"]
mod support;

use std::collections::BTreeMap;

use cellgen::ports::edit::hcl;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};
use serde_json::Value;

/// Pieces a hostile value is made of.
const PIECES: &[&str] = &[
    "var.x",
    "module.m.out",
    "aws_sqs_queue.jobs.url",
    "\"s\"",
    "1",
    "a.b[0]",
    "f(x)",
    "{ a = 1 }",
    "[1, 2]",
    "x ? y : z",
    "<<EOT",
    "<<-EOT",
    "EOT",
    "\n",
    "\r\n",
    "\r",
    "}",
    "{",
    "]",
    "[",
    ")",
    "(",
    "\"",
    "\\\"",
    "'",
    "#",
    "//",
    "/*",
    "*/",
    "${",
    "%{",
    "$${",
    "%%{",
    "if x",
    "endif",
    "for k, v in m :",
    "provisioner \"local-exec\" {",
    "command = \"touch /tmp/PWNED\"",
    "=",
    " ",
    ",",
    "\t",
    "\\n",
    "\u{2028}",
];

/// Values known to have broken validators, always tried.
const SEEDS: &[&str] = &[
    "<<EOT\nEOT\n}\nprovisioner \"local-exec\" {\n  command = <<EOT\ntouch /tmp/PWNED\nEOT",
    "<<EOT\nEOT",
    "<<-EOT\n  EOT\n}\nresource \"null_resource\" \"x\" {\nEOT",
    "module.x.y }\nresource \"aws_iam_user\" \"evil\" {\n  name = \"x\"",
    "module.x.y # }",
    "module.x.y // }",
    "module.x.y /* } */",
    "\"${\"}\"}\"",
    "\"%{ if true }}%{ endif }\"",
    "\"$${x}\"",
    "\"a\" # \"b\"",
    "{ a = \"}\" }",
    "[for k, v in var.m : \"${k}=${v}\"]",
    "var.a /* x */",
    "var.a\n",
];

fn hostile() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::collection::vec(prop::sample::select(PIECES), 1..8).prop_map(|p| p.concat()),
        2 => "[a-zEOT\"'${}%#/*<>\n\r\t =.,()\\[\\]\\\\-]{1,24}",
        1 => ("[a-z.]{1,8}", "[\"${}%#/*\n]{0,6}", "[a-z.]{0,8}")
            .prop_map(|(a, b, c)| format!("\"{a}{b}{c}\"")),
        1 => prop::sample::select(SEEDS).prop_map(str::to_string),
    ]
}

/// The generated cell's cell-metadata.tf: the file every accepted value is added to.
fn metadata_file() -> String {
    let dir = support::temp_dir();
    let out = support::new_cell(dir.path(), &["eu-west-2-prod"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    support::read(
        &dir.path()
            .join("terraform/cells/eu-west-2-prod/cell-metadata.tf"),
    )
}

fn config_map(parsed: &mut Value) -> &mut Value {
    &mut parsed["resource"]["kubernetes_config_map_v1"]["cell_metadata"][0]
}

#[test]
fn only_what_hashicorp_reads_as_one_expression_is_accepted() {
    const CASES: usize = 3000;
    let base = metadata_file();
    let mut runner = TestRunner::new(Config {
        cases: CASES as u32,
        ..Config::default()
    });
    let mut values: Vec<String> = SEEDS.iter().map(|s| s.to_string()).collect();
    while values.len() < CASES {
        values.push(hostile().new_tree(&mut runner).unwrap().current());
    }
    let dir = support::temp_dir();
    std::fs::write(dir.path().join("base.tf"), &base).unwrap();
    let mut accepted = BTreeMap::new();
    for (i, value) in values.iter().enumerate() {
        std::fs::write(
            dir.path().join(format!("e{i:05}.tf")),
            format!("x = {value}\n"),
        )
        .unwrap();
        let checked = hcl::syntax::check_expression(value).is_ok();
        let added = hcl::add(&base, &[("k1".into(), value.clone())], &[]);
        assert!(
            checked || added.is_err(),
            "the edit accepts {value:?}, which the validator refuses"
        );
        if let (true, Ok(edited)) = (checked, added) {
            std::fs::write(dir.path().join(format!("f{i:05}.tf")), &edited).unwrap();
            accepted.insert(i, edited);
        }
    }
    let parsed = support::hcl_parse_each(dir.path());
    let mut want = parsed["base.tf"]
        .clone()
        .expect("the generated file parses");
    let mut problems = Vec::new();
    let mut heredocs = 0;
    for (i, value) in values.iter().enumerate() {
        let multi_line = value.contains(['\n', '\r']);
        heredocs += usize::from(value.contains("<<") && multi_line);
        let Some(edited) = accepted.get(&i) else {
            continue;
        };
        if multi_line {
            problems.push(format!("accepted a multi-line value {value:?}"));
        }
        match &parsed[&format!("e{i:05}.tf")] {
            Ok(Value::Object(attrs)) if attrs.len() == 1 && attrs.contains_key("x") => {}
            other => problems.push(format!(
                "accepted {value:?}; HashiCorp reads `x = <it>` as {other:?}"
            )),
        }
        match &parsed[&format!("f{i:05}.tf")] {
            Ok(got) => {
                let mut got = got.clone();
                let data = &mut config_map(&mut got)["data"];
                let k1 = data.as_object_mut().and_then(|d| d.remove("k1"));
                if k1.is_none() || got != want {
                    problems.push(format!(
                        "accepted {value:?}; HashiCorp reads the edited file with other structure:\n{edited}"
                    ));
                }
            }
            Err(e) => problems.push(format!(
                "accepted {value:?}; HashiCorp cannot parse the edited file ({e}):\n{edited}"
            )),
        }
    }
    // The base's data has no k1: what every edited file must equal once k1 is taken out.
    assert!(config_map(&mut want)["data"].get("k1").is_none());
    eprintln!(
        "{} values ({} seeds), {} accepted, {} refused, {} multi-line with a heredoc marker",
        values.len(),
        SEEDS.len(),
        accepted.len(),
        values.len() - accepted.len(),
        heredocs
    );
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n\n")
    );
    // The generator must reach both sides, or it proves nothing.
    assert!(
        accepted.len() >= CASES / 20,
        "only {} accepted",
        accepted.len()
    );
    assert!(heredocs >= 20, "only {heredocs} heredoc values");
}
