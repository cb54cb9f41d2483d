//! The trace against hand-built stacks.
use super::{Taint, trace, trace_all, trace_loaded};
use camino::Utf8Path;
use std::collections::BTreeMap;

fn write(root: &std::path::Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// `stack` traced with files' contents shared by text, checked against the trace computing
/// every file's content afresh, three times over (a text's content is kept from its second
/// sighting, so the third is served from the cache).
fn traced(root: &std::path::Path, stack: &str) -> BTreeMap<String, Taint> {
    let root = Utf8Path::from_path(root).unwrap();
    let store = || crate::root::filestore::FileStore::new(root);
    let fresh = trace_loaded(&store(), Utf8Path::new(stack), false).taints;
    for _ in 0..3 {
        assert_eq!(trace(&store(), Utf8Path::new(stack)), fresh, "{stack}");
    }
    fresh
}

/// A stack of `files` traced; each key's chain joined.
fn chains(files: &[(&str, &str)]) -> Vec<(String, String)> {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), files);
    traced(dir.path(), "stack")
        .into_iter()
        .map(|(k, t)| (k, t.chain.join(" <- ")))
        .collect()
}

/// `text` padded with a comment to `len` bytes: files of two cells that differ but have one
/// length, so a cache keyed by less than the whole text mixes them up.
fn padded(text: &str, len: usize) -> String {
    assert!(text.len() + 2 <= len, "{text}");
    format!("{text}#{}\n", " ".repeat(len - text.len() - 2))
}

// Two cells whose stacks are the same files but for their name, a file that is a secret in
// one cell only, and a file that parses in one cell only: each cell's trace is its own, and
// the same with contents shared by text as without.
#[test]
fn shared_contents_trace_as_each_cell_alone() {
    let dir = tempfile::tempdir().unwrap();
    let map = r#"resource "kubernetes_config_map_v1" "cell_metadata" {
  data = {
a = local.a
b = var.bee
c = module.m.out
d = var.name
e = local.x
f = random_password.p.result
g = local.plain
  }
}
"#;
    let common = [
        ("cell-metadata.tf", map.to_string()),
        (
            "vars.tf",
            "variable \"bee\" {\n  sensitive = true\n}\nvariable \"name\" {}\n".into(),
        ),
        (
            "mods.tf",
            "module \"m\" {\n  source = \"../../mod\"\n}\n".into(),
        ),
        (
            "secrets.tf",
            "resource \"random_password\" \"p\" {\n  length = 8\n}\n".into(),
        ),
        ("plain.tf", "locals {\n  plain = var.name\n}\n".into()),
    ];
    for cell in ["eu-west-1-prod", "eu-west-2-prod"] {
        let stack = format!("cells/{cell}");
        let a = cell == "eu-west-1-prod";
        let mut files: Vec<(String, String)> = common
            .iter()
            .map(|(n, t)| (format!("{stack}/{n}"), t.clone()))
            .collect();
        let name = if a {
            cell
        } else {
            "ghp_abcdefghijklmnopqrstuvwxyz012345"
        };
        files.extend([
            (
                format!("{stack}/terraform.tfvars"),
                padded(&format!("name = \"{name}\"\n"), 64),
            ),
            (
                format!("{stack}/locals.tf"),
                padded(
                    if a {
                        "locals {\n  x = \"plain\"\n}\n"
                    } else {
                        "locals {\n  x = sensitive(\"p\")\n}\n"
                    },
                    48,
                ),
            ),
            (
                format!("{stack}/broken.tf"),
                padded(
                    if a {
                        "locals {\n  a = sensitive(\"q\")\n}\n"
                    } else {
                        "locals {\n  a = sensitive(\"q\"\n}\n"
                    },
                    48,
                ),
            ),
            (
                format!("{stack}/flux.tf"),
                format!(
                    "resource \"flux_bootstrap_git\" \"this\" {{\n  path = \"cells/{cell}\"\n}}\n"
                ),
            ),
        ]);
        files.push((
            "mod/main.tf".into(),
            "output \"out\" {\n  value     = \"x\"\n  sensitive = true\n}\n".into(),
        ));
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(n, t)| (n.as_str(), t.as_str()))
            .collect();
        write(dir.path(), &files);
    }
    let chains = |cell: &str| -> Vec<String> {
        traced(dir.path(), &format!("cells/{cell}"))
            .into_iter()
            .map(|(k, t)| format!("{k}: {}", t.chain.join(" <- ")))
            .collect()
    };
    for _ in 0..2 {
        assert_eq!(
            chains("eu-west-1-prod"),
            [
                "a: a <- local.a (broken.tf:2) <- sensitive(...) (broken.tf:2)",
                "b: b <- var.bee (vars.tf:1)",
                "c: c <- module.m.out (mods.tf:1) <- output \"out\" (mod/main.tf:1)",
                "f: f <- random_password.p.result (secrets.tf:1)",
            ]
        );
        assert_eq!(
            chains("eu-west-2-prod"),
            [
                "b: b <- var.bee (vars.tf:1)",
                "c: c <- module.m.out (mods.tf:1) <- output \"out\" (mod/main.tf:1)",
                "d: d <- var.name (vars.tf:4) <- terraform.tfvars:1",
                "e: e <- local.x (locals.tf:2) <- sensitive(...) (locals.tf:2)",
                "f: f <- random_password.p.result (secrets.tf:1)",
                "g: g <- local.plain (plain.tf:2) <- var.name (vars.tf:4) <- terraform.tfvars:1",
            ]
        );
    }
}

const MAP: &str = r#"resource "kubernetes_config_map_v1" "cell_metadata" {
  data = {
a = local.a
b = var.bee
c = module.m.out
  }
}
"#;

// Declarations are indexed lazily, a file only when its text may hold the name: the
// answers must be those of indexing every file.
#[test]
fn lazy_index_finds_what_an_eager_one_does() {
    let found = chains(&[
        ("stack/cell-metadata.tf", MAP),
        // The first file (by name) declaring a local wins; the later one is a secret.
        ("stack/a.tf", "locals {\n  a = \"plain\"\n}\n"),
        ("stack/z.tf", "locals {\n  a = sensitive(\"x\")\n}\n"),
        // A label written with an escape holds the name only once decoded.
        (
            "stack/vars.tf",
            "variable \"\\u0062ee\" {\n  sensitive = true\n}\n",
        ),
        // A module block after an inline comment is still a block.
        (
            "stack/mods.tf",
            "/* local */ module \"m\" {\n  source = \"../mod\"\n}\n",
        ),
        (
            "mod/main.tf",
            "output \"out\" {\n  value     = \"x\"\n  sensitive = true\n}\n",
        ),
    ]);
    assert_eq!(
        found,
        [
            ("b".to_string(), "b <- var.bee (vars.tf:1)".to_string()),
            (
                "c".to_string(),
                "c <- module.m.out (mods.tf:1) <- output \"out\" (mod/main.tf:1)".to_string()
            ),
        ]
    );
}

/// The references of each key the stack declares nowhere, as `key: address (kind) ~nearest`.
fn undeclared(files: &[(&str, &str)]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), files);
    let root = Utf8Path::from_path(dir.path()).unwrap();
    let store = crate::root::filestore::FileStore::new(root);
    trace_all(&store, Utf8Path::new("stack"))
        .undeclared
        .into_iter()
        .flat_map(|(key, refs)| {
            refs.into_iter().map(move |u| {
                format!(
                    "{key}: {} ({}) ~{}",
                    u.address,
                    u.kind,
                    u.nearest.unwrap_or_default()
                )
            })
        })
        .collect()
}

const CONFIG_MAP_HEAD: &str =
    "resource \"kubernetes_config_map_v1\" \"cell_metadata\" {\n  data = {\n";

#[test]
fn references_the_stack_declares_nowhere_are_named() {
    let meta = format!(
        "{CONFIG_MAP_HEAD}    queue = aws_sqs_queue.jobs.url\n    x = var.x\n    vpc = data.aws_vpc.thiss.id\n    l = local.nope\n    m = module.gone.out\n    ok = aws_sqs_queue.job.url\n    v = var.region\n    w = \"${{path.module}}-${{terraform.workspace}}\"\n  }}\n}}\n"
    );
    let found = undeclared(&[
        ("stack/cell-metadata.tf", &meta),
        (
            "stack/main.tf",
            "resource \"aws_sqs_queue\" \"job\" {}\ndata \"aws_vpc\" \"this\" {}\nvariable \"region\" {}\n",
        ),
    ]);
    assert_eq!(
        found,
        [
            "l: local.nope (local value) ~",
            "m: module.gone (module) ~",
            "queue: aws_sqs_queue.jobs (resource) ~aws_sqs_queue.job",
            "vpc: data.aws_vpc.thiss (data source) ~data.aws_vpc.this",
            "x: var.x (variable) ~",
        ]
    );
}

#[test]
fn a_stack_file_that_does_not_parse_hides_nothing_and_calls_nothing_undeclared() {
    let meta = format!("{CONFIG_MAP_HEAD}    queue = aws_sqs_queue.jobs.url\n  }}\n}}\n");
    assert!(
        undeclared(&[
            ("stack/cell-metadata.tf", &meta),
            ("stack/main.tf", "resource \"aws_sqs_queue\" \"jobs\" {\n"),
        ])
        .is_empty()
    );
}
