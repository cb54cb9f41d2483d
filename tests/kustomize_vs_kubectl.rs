//! Every fixture under tests/fixtures/kustomize/<case>/ is built natively and
//! compared with `kubectl kustomize` (the oracle): same objects, same order.
//!
//! `case.yaml` holds `path` (the Flux spec.path inside the case), optional
//! `components` (relative to path) and optional `oracle`, a directory with an
//! explicit kustomization equivalent to what Flux generates. `also` lists more
//! paths of the same case to build (without components).

use std::path::{Path, PathBuf};
use std::process::Command;

use cellgen::ports::kustomize::{self, BuildError, Mode, Resource};
use cellgen::root::source::Source;
use serde_json::Value;

/// The builder over the working tree at `root`, read through the file layer as cellgen's
/// commands read it.
fn build(
    root: &camino::Utf8Path,
    path: &str,
    components: &[String],
    mode: Mode,
) -> Result<Vec<Resource>, BuildError> {
    kustomize::build(Source::disk(root).files(), root, path, components, mode)
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kustomize")
}

#[path = "support/tools.rs"]
mod tools;

fn kubectl(dir: &Path) -> Vec<Value> {
    let out = Command::new("kubectl")
        .args(["kustomize", "--load-restrictor", "LoadRestrictionsNone"])
        .arg(dir)
        .output()
        .expect("run kubectl");
    assert!(
        out.status.success(),
        "kubectl kustomize {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    parse_stream(&String::from_utf8_lossy(&out.stdout))
}

fn parse_stream(text: &str) -> Vec<Value> {
    use serde::Deserialize;
    yaml_serde::Deserializer::from_str(text)
        .map(|d| Value::deserialize(d).expect("kubectl output is YAML"))
        .filter(|v| !v.is_null())
        .collect()
}

fn ids(objs: &[Value]) -> Vec<String> {
    objs.iter()
        .map(|o| {
            let s = |p: &str| {
                o.pointer(p)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            format!(
                "{} {}/{}",
                s("/kind"),
                s("/metadata/namespace"),
                s("/metadata/name")
            )
        })
        .collect()
}

fn sorted_json(objs: &[Value]) -> Vec<String> {
    let mut v: Vec<String> = objs
        .iter()
        .map(|o| serde_json::to_string_pretty(o).unwrap())
        .collect();
    v.sort();
    v
}

struct Case {
    name: String,
    root: camino::Utf8PathBuf,
    path: String,
    components: Vec<String>,
    oracle: Option<String>,
    also: Vec<String>,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    for root in dirs {
        let Ok(text) = std::fs::read_to_string(root.join("case.yaml")) else {
            continue;
        };
        let spec: Value = yaml_serde::from_str(&text).unwrap();
        let list = |k: &str| -> Vec<String> {
            spec.get(k)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default()
        };
        out.push(Case {
            name: root.file_name().unwrap().to_string_lossy().into_owned(),
            path: spec["path"].as_str().unwrap_or(".").to_string(),
            components: list("components"),
            oracle: spec.get("oracle").and_then(Value::as_str).map(String::from),
            also: list("also"),
            root: camino::Utf8PathBuf::from_path_buf(root).expect("fixture paths are UTF-8"),
        });
    }
    out
}

fn objects(rs: Vec<Resource>) -> Vec<Value> {
    rs.into_iter()
        .map(|r| std::sync::Arc::unwrap_or_clone(r.object))
        .collect()
}

fn compare(case: &Case, what: &str, native: &[Value], oracle: &[Value]) -> Option<String> {
    if sorted_json(native) != sorted_json(oracle) {
        let n = sorted_json(native);
        let o = sorted_json(oracle);
        let only_n: Vec<_> = n.iter().filter(|x| !o.contains(x)).collect();
        let only_o: Vec<_> = o.iter().filter(|x| !n.contains(x)).collect();
        return Some(format!(
            "{}: objects differ from {what}\n--- native only:\n{}\n--- {what} only:\n{}",
            case.name,
            only_n
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            only_o
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        ));
    }
    if ids(native) != ids(oracle) {
        return Some(format!(
            "{}: order differs from {what}\nnative: {:#?}\n{what}: {:#?}",
            case.name,
            ids(native),
            ids(oracle)
        ));
    }
    None
}

/// The native build printed the way `kubectl kustomize` prints (go-yaml v2 documents
/// joined by `---`).
fn as_kubectl_text(objs: &[Value]) -> String {
    objs.iter()
        .map(cellgen::ports::envsubst::to_flux_yaml)
        .collect::<Vec<_>>()
        .join("---\n")
}

/// Native build of `path` against kubectl on what Flux would build there.
fn check(case: &Case, path: &str, components: &[String]) -> Option<String> {
    let native = match build(&case.root, path, components, Mode::Native) {
        Ok(rs) if rs.is_empty() => {
            return Some(format!(
                "{} ({path}): native build produced nothing",
                case.name
            ));
        }
        Ok(rs) => objects(rs),
        Err(e) => return Some(format!("{} ({path}): native build failed: {e}", case.name)),
    };
    // kubectl runs on the kustomization Flux would build (components appended, or the
    // generated kustomization); its output must be the native one, byte for byte.
    match kustomize::external_output(
        Source::disk(&case.root).files(),
        &case.root,
        path,
        components,
    ) {
        Ok(text) => {
            let mine = as_kubectl_text(&native);
            if mine == text {
                return None;
            }
            let diff = similar::TextDiff::from_lines(&text, &mine)
                .unified_diff()
                .header("kubectl", "native")
                .to_string();
            Some(format!(
                "{} ({path}): output differs from kubectl\n{diff}",
                case.name
            ))
        }
        Err(e) => Some(format!(
            "{} ({path}): external build failed: {e}",
            case.name
        )),
    }
}

#[test]
fn native_matches_kubectl_kustomize() {
    if !tools::tool_or_skip(
        "kubectl",
        &["version", "--client"],
        "the comparison with kubectl kustomize",
    ) {
        return;
    }
    let cases = cases();
    assert!(
        cases.len() >= 20,
        "fixture corpus shrank to {}",
        cases.len()
    );
    let mut failures = Vec::new();
    for case in &cases {
        failures.extend(check(case, &case.path, &case.components));
        for path in &case.also {
            failures.extend(check(case, path, &[]));
        }
        if let Some(oracle) = &case.oracle {
            match build(&case.root, &case.path, &case.components, Mode::Native) {
                Ok(native) => {
                    let explicit = kubectl(case.root.join(oracle).as_std_path());
                    failures.extend(compare(
                        case,
                        "explicit oracle",
                        &objects(native),
                        &explicit,
                    ));
                }
                Err(e) => failures.push(format!("{}: native build failed: {e}", case.name)),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
