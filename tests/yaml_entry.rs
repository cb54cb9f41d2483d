//! One YAML entry point (issues 18 and 20): every YAML parse of `src` goes through
//! `src/ports/yaml/`, where the size limit and the nesting bound are built in and a stream stops
//! at its first error. A parser called anywhere else would skip them (and the multi-document
//! iterator of yaml_serde repeats a syntax error forever), so this test fails naming it.

use std::fs;
use std::path::{Path, PathBuf};

/// Calls into a YAML parser: yaml_serde's (libyaml), yaml-edit's lossless one, libyaml itself.
/// Naming a type (`&yaml_edit::Document`) or converting a value (`yaml_serde::from_value`) is
/// no parse and stays allowed.
const PARSER_CALLS: &[&str] = &[
    "yaml_serde::from_str",
    "yaml_serde::from_slice",
    "yaml_serde::from_reader",
    "Deserializer::from_str",
    "Deserializer::from_slice",
    "Deserializer::from_reader",
    "Document::from_str",
    "YamlFile::from_str",
    "YamlFile::parse",
    "Yaml::from_str",
    "parse::<Document>",
    "parse::<yaml_edit::",
    "parse::<YamlFile>",
    "yaml_edit::parse",
    "libyaml_rs",
    "unsafe_libyaml",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `file:line: text` of every parser call in `src` outside `src/ports/yaml/`.
fn parser_calls_outside(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for path in files {
        let rel = path
            .strip_prefix(src)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel.starts_with("ports/yaml/") {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            // `use yaml_serde::{from_str, ...}` imports a parser under a bare name.
            let imported = code.contains("yaml_serde::{")
                && ["from_str", "from_slice", "from_reader", "Deserializer"]
                    .iter()
                    .any(|f| code.contains(f));
            if imported || PARSER_CALLS.iter().any(|call| code.contains(call)) {
                found.push(format!("src/{rel}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    found
}

#[test]
fn every_yaml_parse_goes_through_ports_yaml() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = parser_calls_outside(&src);
    assert!(
        found.is_empty(),
        "parse YAML through crate::ports::yaml (from_str, documents, lossless; the size limit and \
         the nesting bound are there) instead of:\n{}",
        found.join("\n")
    );
}

/// The scan itself finds each kind of call, so that the test above cannot pass by missing them.
#[test]
fn the_scan_finds_every_kind_of_call() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    fs::create_dir_all(src.join("ports/yaml")).unwrap();
    fs::create_dir_all(src.join("model")).unwrap();
    fs::write(
        src.join("ports/yaml/entry.rs"),
        "fn f(t: &str) { yaml_serde::from_str::<V>(t); }\n",
    )
    .unwrap();
    let calls = [
        "let v: V = yaml_serde::from_str(t)?;",
        "for d in yaml_serde::Deserializer::from_str(t) {}",
        "let d = Document::from_str(t);",
        "let d = t.parse::<yaml_edit::Document>();",
        "use yaml_serde::{from_slice, Value};",
        "let p = libyaml_rs::yaml_parser_initialize(p);",
    ];
    let text: String = calls.iter().map(|c| format!("{c}\n")).collect();
    let allowed = "fn g(d: &yaml_edit::Document) { yaml_serde::from_value::<V>(v); } // yaml_serde::from_str\n";
    fs::write(src.join("model/reader.rs"), format!("{text}{allowed}")).unwrap();
    let found = parser_calls_outside(src);
    let lines: Vec<String> = (1..=calls.len())
        .map(|i| format!("src/model/reader.rs:{i}: {}", calls[i - 1]))
        .collect();
    assert_eq!(found, lines);
}
