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

/// Texts that made readers loop or could make them work without bound: conflict markers (what
/// `upgrade` writes), an unclosed bracket, a tab, bad indentation, each alone and inside a
/// stream of valid documents; deep nesting; an alias bomb; stray bytes.
fn hostile_corpus() -> Vec<(String, String)> {
    let broken = [
        (
            "conflict markers",
            "<<<<<<< ours\na: 1\n=======\na: 2\n>>>>>>> theirs\n",
        ),
        ("an unclosed [", "x: [a, b\n"),
        ("a tab", "\tx: 1\n"),
        ("bad indentation", "a:\n  b: 1\n c: 2\n"),
        ("an unclosed quote", "a: \"b\n"),
        ("a stray document end", "a: 1\n...\n- b\n"),
    ];
    let mut corpus = Vec::new();
    for (name, text) in broken {
        corpus.push((name.to_string(), text.to_string()));
        corpus.push((
            format!("{name} between documents"),
            format!("kind: A\n---\n{text}---\nkind: B\n"),
        ));
        corpus.push((format!("{name}, {} times", 10_000), text.repeat(10_000)));
    }
    let laughs: String = std::iter::once("a: &a [x, x, x, x, x, x, x, x, x]\n".to_string())
        .chain((b'b'..=b'k').map(|c| {
            let prev = (c - 1) as char;
            let c = c as char;
            format!("{c}: &{c} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n")
        }))
        .collect();
    corpus.push(("an alias bomb".into(), laughs));
    corpus.push(("100,000 [".into(), "[".repeat(100_000)));
    corpus.push((
        "100,000 nested blocks".into(),
        (0..100_000)
            .map(|i| format!("{}- \n", " ".repeat(i % 200)))
            .collect(),
    ));
    corpus.push(("NUL and BOM".into(), "\u{feff}a: \0\n".into()));
    corpus.push((
        "over the size limit".into(),
        format!("# {}\n", "x".repeat(33 * 1024 * 1024)),
    ));
    corpus
}

/// A YAML reader of cellgen: what it reads, and a call of it.
type Reader = (&'static str, fn(&str));

/// Each YAML reader of cellgen, by what it reads.
fn readers() -> Vec<Reader> {
    use cellgen::ports::yaml;
    type V = yaml_serde::Value;
    vec![
        ("cellgen.yaml", |t| {
            let _ = cellgen::model::config::Config::parse(t, camino::Utf8Path::new("cellgen.yaml"));
        }),
        ("component.yaml", |t| {
            let _ = yaml::from_str::<cellgen::model::catalog::ComponentSpec>(t);
        }),
        ("multi-document layer files", |t| {
            let _ = yaml::documents::<V>(t);
        }),
        ("the lossless editor", |t| {
            let _ = yaml::lossless(t);
            let _ = cellgen::ports::edit::yaml::add_flux_component(t, "../../components/x/a");
        }),
        ("kustomization files (go-yaml v2)", |t| {
            let _ = yaml::yaml_to_json(t);
        }),
        ("resources (kyaml, go-yaml v3)", |t| {
            if let Ok(docs) = yaml::kio_documents(t) {
                for d in docs {
                    let _ = d.to_json(true);
                }
            }
        }),
    ]
}

/// Every reader ends on every hostile text, without a panic, well within the guard's time (a
/// loop or quadratic work would not; the guard is far above what a debug build takes).
#[test]
fn every_reader_ends_on_hostile_yaml() {
    let guard = std::time::Duration::from_secs(60);
    for (input, text) in hostile_corpus() {
        let text = std::sync::Arc::new(text);
        for (reader, read) in readers() {
            let (done, finished) = std::sync::mpsc::channel();
            let t = std::sync::Arc::clone(&text);
            let started = std::time::Instant::now();
            std::thread::spawn(move || {
                let outcome = std::panic::catch_unwind(|| read(&t));
                let _ = done.send(outcome.is_ok());
            });
            match finished.recv_timeout(guard) {
                Ok(true) => {}
                Ok(false) => panic!("{reader} panicked on {input}"),
                Err(_) => panic!("{reader} still runs after {guard:?} on {input}: a hang"),
            }
            let took = started.elapsed();
            if took.as_secs() >= 1 {
                eprintln!("{reader} on {input}: {took:.1?}");
            }
        }
    }
}
