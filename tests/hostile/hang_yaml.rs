//! Hostile input: invalid YAML in every file the day-2 commands read (cellgen.yaml, the cell's
//! layer files and kustomization, a component's manifests, a repository's component.yaml, the
//! cell's record). yaml_serde's document iterator repeats a syntax error forever, so the
//! multi-document readers of `list`, `remove-cell` and `set-version` looped holding the
//! repository lock. Every case must end (the table's runner kills a case after its timeout and
//! reports a hang) with an error naming the file and the line, or, where the file only adds
//! detail (`list`'s chart versions), with a note naming it.

use std::fs;
use std::sync::OnceLock;

use super::edits::{CELL, cell, run_ok};
use super::*;

/// What `upgrade` writes into a file it cannot merge, and three other ways to break YAML.
pub const CONFLICT: &str = "<<<<<<< ours\na: 1\n=======\na: 2\n>>>>>>> theirs\n";
pub const UNCLOSED: &str = "x: [a, b\n";
pub const TAB: &str = "\tx: 1\n";
pub const INDENT: &str = "a:\n  b: 1\n c: 2\n";

const APPS: &str = "cells/eu-west-2-prod/apps.yaml";
const CONTROLLERS: &str = "cells/eu-west-2-prod/controllers.yaml";
const CELL_KUSTOMIZATION: &str = "cells/eu-west-2-prod/kustomization.yaml";
const HELMRELEASE: &str = "components/karpenter/controllers/helmrelease.yaml";
const OCIREPOSITORY: &str = "components/karpenter/controllers/ocirepository.yaml";
const COMPONENT_YAML: &str = "components/karpenter/component.yaml";
const RECORD: &str = ".cellgen/cells/eu-west-2-prod.json";

const LIST: &[&str] = &["list"];
const REMOVE: &[&str] = &["remove-cell", CELL, "--dry-run"];
const SET_VERSION: &[&str] = &["set-version", "karpenter", "1.2.3", "--dry-run"];

/// The cell with karpenter, built once and copied into each case's directory.
pub fn with_karpenter(dir: &Path) {
    static TEMPLATE: OnceLock<tempfile::TempDir> = OnceLock::new();
    let template = TEMPLATE.get_or_init(|| {
        let t = temp_dir();
        cell(t.path());
        run_ok(t.path(), &["add-component", "karpenter"]);
        t
    });
    copy_dir(template.path(), dir);
}

/// The repository, with `bad` appended to `file` (created when missing).
pub fn broken(dir: &Path, file: &str, bad: &str) {
    with_karpenter(dir);
    let path = dir.join(file);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut text = fs::read_to_string(&path).unwrap_or_default();
    text.push_str(bad);
    fs::write(path, text).unwrap();
}

/// Fails naming the file and a line.
macro_rules! fails_at_line {
    ($file:expr) => {
        Expect::Fails {
            code: 1,
            words: &[$file, "line"],
        }
    };
}

/// `list` succeeds, and its note names the component file that does not parse.
fn noted(file: &'static str) -> fn(&Path, &Output) {
    match file {
        HELMRELEASE => |_, out| note_names(out, HELMRELEASE),
        _ => |_, out| note_names(out, OCIREPOSITORY),
    }
}

fn note_names(out: &Output, file: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("note: {file}:")),
        "list does not name {file} with its line:\n{stderr}"
    );
}

macro_rules! case {
    ($name:expr, $file:expr, $bad:expr, $args:expr, $expect:expr) => {
        Case {
            name: $name,
            setup: |d| broken(d, $file, $bad),
            args: $args,
            expect: $expect,
        }
    };
}

pub fn cases() -> Vec<Case> {
    vec![
        // Conflict markers (what `upgrade` writes) in every file the commands read.
        case!(
            "conflict in cellgen.yaml: list",
            "cellgen.yaml",
            CONFLICT,
            LIST,
            fails_at_line!("cellgen.yaml:")
        ),
        case!(
            "conflict in cellgen.yaml: remove-cell",
            "cellgen.yaml",
            CONFLICT,
            REMOVE,
            fails_at_line!("cellgen.yaml:")
        ),
        case!(
            "conflict in cellgen.yaml: set-version",
            "cellgen.yaml",
            CONFLICT,
            SET_VERSION,
            fails_at_line!("cellgen.yaml:")
        ),
        case!(
            "conflict in a layer file: list",
            APPS,
            CONFLICT,
            LIST,
            fails_at_line!(APPS)
        ),
        case!(
            "conflict in a layer file: remove-cell",
            APPS,
            CONFLICT,
            REMOVE,
            fails_at_line!(APPS)
        ),
        case!(
            "conflict in a layer file: set-version",
            APPS,
            CONFLICT,
            SET_VERSION,
            fails_at_line!(APPS)
        ),
        case!(
            "conflict in the controllers layer: remove-cell",
            CONTROLLERS,
            CONFLICT,
            REMOVE,
            fails_at_line!(CONTROLLERS)
        ),
        case!(
            "conflict in the controllers layer: set-version",
            CONTROLLERS,
            CONFLICT,
            SET_VERSION,
            fails_at_line!(CONTROLLERS)
        ),
        case!(
            "conflict in the cell's kustomization: remove-cell",
            CELL_KUSTOMIZATION,
            CONFLICT,
            REMOVE,
            fails_at_line!(CELL_KUSTOMIZATION)
        ),
        case!(
            "conflict in a component's HelmRelease: list",
            HELMRELEASE,
            CONFLICT,
            LIST,
            Expect::Succeeds(noted(HELMRELEASE))
        ),
        case!(
            "conflict in a component's HelmRelease: set-version",
            HELMRELEASE,
            CONFLICT,
            SET_VERSION,
            fails_at_line!(HELMRELEASE)
        ),
        case!(
            "conflict in a component's OCIRepository: list",
            OCIREPOSITORY,
            CONFLICT,
            LIST,
            Expect::Succeeds(noted(OCIREPOSITORY))
        ),
        case!(
            "conflict in a component's OCIRepository: set-version",
            OCIREPOSITORY,
            CONFLICT,
            SET_VERSION,
            fails_at_line!(OCIREPOSITORY)
        ),
        case!(
            "conflict in component.yaml: list",
            COMPONENT_YAML,
            CONFLICT,
            LIST,
            fails_at_line!(COMPONENT_YAML)
        ),
        case!(
            "conflict in component.yaml: remove-cell",
            COMPONENT_YAML,
            CONFLICT,
            REMOVE,
            fails_at_line!(COMPONENT_YAML)
        ),
        case!(
            "conflict in component.yaml: set-version",
            COMPONENT_YAML,
            CONFLICT,
            SET_VERSION,
            fails_at_line!(COMPONENT_YAML)
        ),
        case!(
            "conflict in the cell's record: list",
            RECORD,
            CONFLICT,
            LIST,
            fails_at_line!(RECORD)
        ),
        // An unclosed bracket, a tab, bad indentation: each multi-document reader.
        case!(
            "unclosed [ in a layer file: remove-cell",
            APPS,
            UNCLOSED,
            REMOVE,
            fails_at_line!(APPS)
        ),
        case!(
            "unclosed [ in a HelmRelease: list",
            HELMRELEASE,
            UNCLOSED,
            LIST,
            Expect::Succeeds(noted(HELMRELEASE))
        ),
        case!(
            "unclosed [ in a HelmRelease: set-version",
            HELMRELEASE,
            UNCLOSED,
            SET_VERSION,
            fails_at_line!(HELMRELEASE)
        ),
        case!(
            "unclosed [ in cellgen.yaml: list",
            "cellgen.yaml",
            UNCLOSED,
            LIST,
            // The unknown setting `x` is met before the bracket that never closes; the message
            // names the file and line as `cellgen.yaml:<line>:`.
            Expect::Fails {
                code: 1,
                words: &["cellgen.yaml:", "`x` is not a setting cellgen knows here"],
            }
        ),
        case!(
            "a tab in a layer file: remove-cell",
            APPS,
            TAB,
            REMOVE,
            fails_at_line!(APPS)
        ),
        case!(
            "a tab in an OCIRepository: list",
            OCIREPOSITORY,
            TAB,
            LIST,
            Expect::Succeeds(noted(OCIREPOSITORY))
        ),
        case!(
            "a tab in an OCIRepository: set-version",
            OCIREPOSITORY,
            TAB,
            SET_VERSION,
            fails_at_line!(OCIREPOSITORY)
        ),
        case!(
            "a tab in component.yaml: set-version",
            COMPONENT_YAML,
            TAB,
            SET_VERSION,
            fails_at_line!(COMPONENT_YAML)
        ),
        case!(
            "bad indentation in a layer file: remove-cell",
            CONTROLLERS,
            INDENT,
            REMOVE,
            fails_at_line!(CONTROLLERS)
        ),
        case!(
            "bad indentation in a HelmRelease: set-version",
            HELMRELEASE,
            INDENT,
            SET_VERSION,
            fails_at_line!(HELMRELEASE)
        ),
        case!(
            "bad indentation in the cell's kustomization: remove-cell",
            CELL_KUSTOMIZATION,
            INDENT,
            REMOVE,
            fails_at_line!(CELL_KUSTOMIZATION)
        ),
    ]
}

#[test]
fn hang_on_invalid_yaml_table() {
    run_table("hang on invalid YAML", &cases());
}
