//! Property tests of the editors over hand-edited layouts: generated variations of a layer's
//! Flux Kustomization and of cell-metadata.tf (indentation, block and flow style, comments,
//! blank lines, trailing commas, ordering, the closing bracket's place, heredocs, alignment).
//!
//! For each: the edit succeeds, the result parses, exactly the intended entry is added or removed
//! (nothing else changes meaning), and add then remove gives back the original bytes. The HCL
//! results are also read by HashiCorp's own parser, and formatted inputs stay `terraform fmt`
//! clean.

#[path = "support/mod.rs"]
mod support;

use cellgen::ports::edit::{hcl, yaml};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};

// ---------------------------------------------------------------------------------------------
// Layer YAML
// ---------------------------------------------------------------------------------------------

const PATHS: &[&str] = &[
    "../../components/karpenter/controllers",
    "../x",
    "../../components/b-2/configs",
    "./local/dir",
];
const NEW_PATH: &str = "../../components/new-one/controllers";

#[derive(Debug, Clone)]
enum ListStyle {
    /// `- item` lines; the dashes at the key's indentation plus this.
    Block { extra: usize },
    /// `[a, b]` on the key's line, with spaces inside the brackets or not.
    OneLine { spaced: bool },
    /// `[` then one item per line, with a trailing comma or not, `]` on its own line.
    Lines { trailing_comma: bool },
}

#[derive(Debug, Clone)]
struct Layer {
    indent: usize,
    flow_spec: bool,
    style: ListStyle,
    /// Items: index into PATHS and quoting (0 plain, 1 single, 2 double).
    items: Vec<(usize, u8)>,
    comments: bool,
    blank_lines: bool,
    /// Rotation of the spec's fields.
    order: usize,
    anchor: bool,
}

fn quoted(path: &str, quote: u8) -> String {
    match quote {
        1 => format!("'{path}'"),
        2 => format!("\"{path}\""),
        _ => path.to_string(),
    }
}

impl Layer {
    fn paths(&self) -> Vec<String> {
        self.items
            .iter()
            .map(|(i, _)| PATHS[*i].to_string())
            .collect()
    }

    fn build(&self) -> String {
        let pad = " ".repeat(self.indent);
        let items: Vec<String> = self
            .items
            .iter()
            .map(|(i, q)| quoted(PATHS[*i], *q))
            .collect();
        let anchor = if self.anchor { "&list " } else { "" };
        if self.flow_spec {
            let list = format!("{anchor}[{}]", items.join(", "));
            let mut fields = [
                "path: ./infrastructure/controllers".to_string(),
                format!("components: {list}"),
                "prune: true".to_string(),
            ];
            fields.rotate_left(self.order % 3);
            let sep = if self.comments { ",\n  " } else { ", " };
            let open = if self.comments { "{\n  " } else { "{" };
            let close = if self.comments { "\n}" } else { "}" };
            return format!(
                "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nspec: {open}{}{close}\n",
                fields.join(sep)
            );
        }
        let comment = |text: &str| {
            if self.comments {
                format!(" # {text}")
            } else {
                String::new()
            }
        };
        let list = match &self.style {
            ListStyle::Block { .. } if items.is_empty() => {
                format!(" {anchor}[]{}\n", comment("none yet"))
            }
            ListStyle::Block { extra } => {
                let dash = " ".repeat(self.indent + extra);
                let mut out = format!(
                    "{}{}\n",
                    if self.anchor { " &list" } else { "" },
                    comment("add-ons")
                );
                for (k, item) in items.iter().enumerate() {
                    if self.comments && k == 1 {
                        out.push_str(&format!("{dash}# between\n"));
                    }
                    if self.blank_lines && k == 1 {
                        out.push('\n');
                    }
                    out.push_str(&format!("{dash}- {item}{}\n", comment("why")));
                }
                out
            }
            ListStyle::OneLine { spaced } => {
                let s = if *spaced { " " } else { "" };
                format!(" {anchor}[{s}{}{s}]{}\n", items.join(", "), comment("flow"))
            }
            ListStyle::Lines { trailing_comma } => {
                let inner = format!("{pad}{pad}");
                let mut out = format!(" {anchor}[{}\n", comment("open"));
                for (k, item) in items.iter().enumerate() {
                    let last = k + 1 == items.len();
                    let comma = if !last || *trailing_comma { "," } else { "" };
                    out.push_str(&format!("{inner}{item}{comma}{}\n", comment("item")));
                }
                out.push_str(&format!("{pad}{pad}]\n"));
                out
            }
        };
        let mut fields = [
            format!("{pad}path: ./infrastructure/controllers\n"),
            format!("{pad}components:{list}"),
            format!("{pad}prune: true\n"),
            format!(
                "{pad}postBuild:\n{pad}{pad}substituteFrom:\n{pad}{pad}  - kind: ConfigMap\n{pad}{pad}    name: cell-metadata\n"
            ),
        ];
        fields.rotate_left(self.order % 4);
        let blank = if self.blank_lines { "\n" } else { "" };
        format!(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n{pad}name: controllers\n{blank}spec:\n{}",
            fields.join(blank)
        )
    }
}

fn layer() -> impl Strategy<Value = Layer> {
    let style = prop_oneof![
        (0usize..=1).prop_map(|e| ListStyle::Block { extra: e * 2 }),
        any::<bool>().prop_map(|spaced| ListStyle::OneLine { spaced }),
        any::<bool>().prop_map(|trailing_comma| ListStyle::Lines { trailing_comma }),
    ];
    (
        prop_oneof![Just(2usize), Just(4)],
        prop::bool::weighted(0.2),
        style,
        prop::sample::subsequence((0..PATHS.len()).collect::<Vec<_>>(), 0..=PATHS.len()),
        prop::collection::vec(0u8..3, PATHS.len()),
        any::<bool>(),
        any::<bool>(),
        0usize..4,
        prop::bool::weighted(0.2),
    )
        .prop_map(
            |(indent, flow_spec, style, picked, quotes, comments, blank_lines, order, anchor)| {
                Layer {
                    indent,
                    flow_spec,
                    style,
                    items: picked.into_iter().map(|i| (i, quotes[i])).collect(),
                    comments,
                    blank_lines,
                    order,
                    anchor,
                }
            },
        )
}

fn parse_yaml(text: &str) -> yaml_serde::Value {
    yaml_serde::from_str(text).unwrap_or_else(|e| panic!("not YAML ({e}):\n{text}"))
}

/// The document with spec.components replaced.
fn with_components(text: &str, paths: &[String]) -> yaml_serde::Value {
    let mut value = parse_yaml(text);
    value["spec"]["components"] = yaml_serde::Value::Sequence(
        paths
            .iter()
            .cloned()
            .map(yaml_serde::Value::String)
            .collect(),
    );
    value
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn layer_add_then_remove_is_the_identity(layer in layer()) {
        let text = layer.build();
        let before = layer.paths();
        prop_assert_eq!(yaml::flux_components(&text).unwrap(), before.clone(), "{}", text);

        let added = yaml::add_flux_component(&text, NEW_PATH)
            .unwrap_or_else(|e| panic!("add refused ({e}):\n{text}"));
        let mut expected = before.clone();
        expected.push(NEW_PATH.to_string());
        prop_assert_eq!(parse_yaml(&added), with_components(&text, &expected), "{}", added);
        prop_assert_eq!(yaml::add_flux_component(&added, NEW_PATH).unwrap(), added.clone());

        let back = yaml::remove_flux_component(&added, NEW_PATH).unwrap();
        prop_assert_eq!(&back, &text, "added:\n{}", added);
    }

    #[test]
    fn layer_remove_takes_exactly_one_item(layer in layer(), pick in 0usize..8) {
        let text = layer.build();
        let before = layer.paths();
        prop_assume!(!before.is_empty());
        let gone = &before[pick % before.len()];
        let removed = yaml::remove_flux_component(&text, gone)
            .unwrap_or_else(|e| panic!("remove refused ({e}):\n{text}"));
        let expected: Vec<String> = before.iter().filter(|p| *p != gone).cloned().collect();
        prop_assert_eq!(parse_yaml(&removed), with_components(&text, &expected), "{}", removed);
    }
}

// ---------------------------------------------------------------------------------------------
// cell-metadata.tf
// ---------------------------------------------------------------------------------------------

const KEYS: &[&str] = &[
    "schema",
    "cell_name",
    "aws_region",
    "cluster_name",
    "vpc_id",
    "app_role_arn",
    "admission_action",
];
const VALUES: &[&str] = &[
    "var.name",
    "module.eks.cluster_name",
    "\"literal\"",
    "var.environment == \"dev\" ? \"Audit\" : \"Deny\"",
    "format(\"%s-x\", var.name)",
    "\"a # not a comment }\"",
    "aws_iam_role.app_abac.arn",
];
const HEREDOC: &str = "<<EOT\n  x }\nEOT";
const DEPS: &[&str] = &[
    "flux_bootstrap_git.this",
    "aws_eks_pod_identity_association.app",
];
const NEW_DEPS: &[&str] = &["module.karpenter", "aws_iam_role_policy_attachment.billing"];

#[derive(Debug, Clone)]
enum DataLayout {
    /// One entry per line.
    Lines {
        aligned: bool,
        trailing_commas: bool,
        close_on_last: bool,
        comments: bool,
        blank_line: bool,
        heredoc: bool,
    },
    /// `data = { a = 1, b = 2 }`.
    OneLine { trailing_comma: bool },
}

#[derive(Debug, Clone)]
enum DepsLayout {
    Lines { trailing_comma: bool },
    OneLine,
    Empty,
}

#[derive(Debug, Clone)]
struct Metadata {
    other_first: bool,
    entries: Vec<(usize, usize)>,
    layout: DataLayout,
    deps: usize,
    deps_layout: DepsLayout,
}

impl Metadata {
    fn entries(&self) -> Vec<(String, String)> {
        // A heredoc's end marker must end its line: never the last entry, never a comma after it.
        let heredoc = matches!(self.layout, DataLayout::Lines { heredoc: true, .. })
            && self.entries.len() > 2;
        self.entries
            .iter()
            .enumerate()
            .map(|(n, (k, v))| {
                let value = if heredoc && n == 1 {
                    HEREDOC
                } else {
                    VALUES[*v]
                };
                (KEYS[*k].to_string(), value.to_string())
            })
            .collect()
    }

    fn depends(&self) -> Vec<String> {
        match self.deps_layout {
            DepsLayout::Empty => Vec::new(),
            _ => DEPS[..self.deps].iter().map(|s| s.to_string()).collect(),
        }
    }

    fn data(&self) -> String {
        let entries = self.entries();
        match &self.layout {
            DataLayout::OneLine { trailing_comma } => {
                let joined: Vec<String> =
                    entries.iter().map(|(k, v)| format!("{k} = {v}")).collect();
                let comma = if *trailing_comma { "," } else { "" };
                format!("  data = {{ {}{comma} }}\n", joined.join(", "))
            }
            DataLayout::Lines {
                aligned,
                trailing_commas,
                close_on_last,
                comments,
                blank_line,
                ..
            } => {
                // Lines, then chains (terraform fmt's alignment groups) broken by comment and
                // blank lines and by the last line when the closing brace is on it.
                let mut lines: Vec<Option<(String, String)>> = Vec::new();
                for (n, entry) in entries.iter().enumerate() {
                    if n == 2 && *comments {
                        lines.push(None);
                    }
                    if n == 3 && *blank_line {
                        lines.push(None);
                    }
                    lines.push(Some(entry.clone()));
                }
                let count = entries.len();
                let mut out = String::from("  data = {\n");
                let mut group: Vec<usize> = Vec::new();
                let mut groups: Vec<Vec<usize>> = Vec::new();
                let mut seen = 0;
                for (i, line) in lines.iter().enumerate() {
                    match line {
                        Some(_) => {
                            seen += 1;
                            if *close_on_last && seen == count {
                                groups.push(std::mem::take(&mut group));
                            } else {
                                group.push(i);
                            }
                        }
                        None => groups.push(std::mem::take(&mut group)),
                    }
                }
                groups.push(group);
                let width = |i: usize| -> usize {
                    if !aligned {
                        return 0;
                    }
                    groups.iter().find(|g| g.contains(&i)).map_or(0, |g| {
                        g.iter()
                            .map(|j| lines[*j].as_ref().unwrap().0.len())
                            .max()
                            .unwrap()
                    })
                };
                let mut emitted = 0;
                for (i, line) in lines.iter().enumerate() {
                    match line {
                        None if *comments && i == 2 => out.push_str("    # a comment line\n"),
                        None => out.push('\n'),
                        Some((k, v)) => {
                            emitted += 1;
                            let last = emitted == count;
                            let comma = if *trailing_commas && !v.starts_with("<<") {
                                ","
                            } else {
                                ""
                            };
                            let note = if *comments && !last && emitted == 1 {
                                " # first"
                            } else {
                                ""
                            };
                            let w = width(i).max(k.len());
                            out.push_str(&format!("    {k:w$} = {v}{comma}{note}"));
                            if last && *close_on_last {
                                out.push_str(" }\n");
                            } else {
                                out.push('\n');
                            }
                        }
                    }
                }
                if !*close_on_last {
                    out.push_str("  }\n");
                }
                out
            }
        }
    }

    fn build(&self) -> String {
        let deps = self.depends();
        let depends = match self.deps_layout {
            DepsLayout::Empty => "  depends_on = []\n".to_string(),
            DepsLayout::OneLine => format!("  depends_on = [{}]\n", deps.join(", ")),
            DepsLayout::Lines { trailing_comma } => {
                let mut out = String::from("  depends_on = [\n");
                for (i, d) in deps.iter().enumerate() {
                    let comma = if i + 1 < deps.len() || trailing_comma {
                        ","
                    } else {
                        ""
                    };
                    out.push_str(&format!("    {d}{comma}\n"));
                }
                out.push_str("  ]\n");
                out
            }
        };
        let other = if self.other_first {
            "resource \"kubernetes_config_map_v1\" \"app\" {\n  metadata {\n    name = \"app\"\n  }\n  data = { a = \"1\" }\n}\n\n"
        } else {
            ""
        };
        format!(
            "# The bridge.\n{other}resource \"kubernetes_config_map_v1\" \"cell_metadata\" {{\n  metadata {{\n    name      = \"cell-metadata\"\n    namespace = \"flux-system\"\n  }}\n\n{}\n  # why\n{depends}}}\n",
            self.data()
        )
    }
}

fn metadata() -> impl Strategy<Value = Metadata> {
    let lines = (
        any::<bool>(),
        any::<bool>(),
        prop::bool::weighted(0.2),
        any::<bool>(),
        any::<bool>(),
        prop::bool::weighted(0.3),
    )
        .prop_map(
            |(aligned, trailing_commas, close_on_last, comments, blank_line, heredoc)| {
                DataLayout::Lines {
                    aligned,
                    trailing_commas,
                    close_on_last,
                    comments,
                    blank_line,
                    heredoc,
                }
            },
        );
    let layout = prop_oneof![
        4 => lines,
        1 => any::<bool>().prop_map(|trailing_comma| DataLayout::OneLine { trailing_comma }),
    ];
    let deps_layout = prop_oneof![
        any::<bool>().prop_map(|trailing_comma| DepsLayout::Lines { trailing_comma }),
        Just(DepsLayout::OneLine),
        Just(DepsLayout::Empty),
    ];
    (
        prop::bool::weighted(0.2),
        prop::sample::subsequence((0..KEYS.len()).collect::<Vec<_>>(), 1..=KEYS.len()),
        prop::collection::vec(0..VALUES.len(), KEYS.len()),
        layout,
        1..=DEPS.len(),
        deps_layout,
    )
        .prop_map(
            |(other_first, keys, values, layout, deps, deps_layout)| Metadata {
                other_first,
                entries: keys.into_iter().map(|k| (k, values[k])).collect(),
                layout,
                deps,
                deps_layout,
            },
        )
}

fn new_entries() -> impl Strategy<Value = Vec<(String, String)>> {
    prop::collection::vec(0..VALUES.len(), 1..=3).prop_map(|values| {
        values
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                (
                    ["karpenter_interruption_queue", "k", "billing_role_arn"][i].to_string(),
                    VALUES[v].to_string(),
                )
            })
            .collect()
    })
}

fn entries_of(text: &str) -> Vec<(String, String)> {
    hcl::read(text)
        .unwrap_or_else(|e| panic!("does not read back ({e}):\n{text}"))
        .entries
        .iter()
        .map(|e| (e.key.clone(), e.value.clone()))
        .collect()
}

/// One generated case: the input, the result of adding, and what data must then hold.
struct HclCase {
    input: String,
    added: String,
    keys: Vec<String>,
    /// One entry per line, the closing brace on its own line: the layout `terraform fmt` keeps.
    one_per_line: bool,
}

fn hcl_case(
    meta: &Metadata,
    new: &[(String, String)],
    deps: usize,
) -> Result<HclCase, TestCaseError> {
    let text = meta.build();
    prop_assert!(
        hcl_edit::parser::parse_body(&text).is_ok(),
        "generator: not HCL:\n{}",
        text
    );
    prop_assert_eq!(entries_of(&text), meta.entries(), "{}", text);
    let new_deps: Vec<String> = NEW_DEPS[..deps].iter().map(|s| s.to_string()).collect();
    let added =
        hcl::add(&text, new, &new_deps).unwrap_or_else(|e| panic!("add refused ({e}):\n{text}"));
    let mut want = meta.entries();
    want.extend(new.iter().cloned());
    prop_assert_eq!(entries_of(&added), want.clone(), "{}", added);
    let mut want_deps = meta.depends();
    want_deps.extend(new_deps.iter().cloned());
    prop_assert_eq!(
        hcl::read(&added).unwrap().depends_on,
        want_deps,
        "{}",
        added
    );

    let keys: Vec<String> = new.iter().map(|(k, _)| k.clone()).collect();
    let back = hcl::remove(&added, &keys, &new_deps).unwrap();
    prop_assert_eq!(&back, &text, "added:\n{}", added);
    Ok(HclCase {
        input: text,
        added,
        keys: want.into_iter().map(|(k, _)| k).collect(),
        one_per_line: matches!(
            meta.layout,
            DataLayout::Lines {
                close_on_last: false,
                ..
            }
        ),
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn metadata_add_then_remove_is_the_identity(meta in metadata(), new in new_entries(), deps in 0..=NEW_DEPS.len()) {
        hcl_case(&meta, &new, deps)?;
    }

    #[test]
    fn metadata_remove_takes_exactly_one_entry(meta in metadata(), pick in 0usize..8) {
        let text = meta.build();
        let entries = meta.entries();
        let gone = entries[pick % entries.len()].0.clone();
        let removed = hcl::remove(&text, std::slice::from_ref(&gone), &[])
            .unwrap_or_else(|e| panic!("remove refused ({e}):\n{text}"));
        let want: Vec<(String, String)> = entries.into_iter().filter(|(k, _)| *k != gone).collect();
        prop_assert_eq!(entries_of(&removed), want, "{}", removed);
    }
}

/// The same generated cases, read by HashiCorp's parser (one node process for all of them):
/// every result parses, and its ConfigMap's data holds exactly the intended keys. Inputs
/// formatted by `terraform fmt` stay formatted after the edit.
#[test]
fn hashicorp_parser_and_terraform_fmt_agree() {
    let dir = support::temp_dir();
    let formatted = support::temp_dir();
    let mut runner = TestRunner::new(Config {
        cases: 60,
        ..Config::default()
    });
    let mut cases: Vec<HclCase> = Vec::new();
    let strategy = (metadata(), new_entries(), 0..=NEW_DEPS.len());
    for _ in 0..60 {
        let (meta, new, deps) = strategy.new_tree(&mut runner).unwrap().current();
        cases.push(hcl_case(&meta, &new, deps).unwrap());
    }
    for (i, case) in cases.iter().enumerate() {
        std::fs::write(dir.path().join(format!("case{i:03}.tf")), &case.added).unwrap();
    }
    let parsed = support::hcl_parse_dir(dir.path());
    for (i, case) in cases.iter().enumerate() {
        let file = format!("case{i:03}.tf");
        let data =
            &parsed[&file]["resource"]["kubernetes_config_map_v1"]["cell_metadata"][0]["data"];
        let keys: Vec<String> = data
            .as_object()
            .unwrap_or_else(|| {
                panic!(
                    "{file}: no data object in {}:\n{}",
                    parsed[&file], case.added
                )
            })
            .keys()
            .cloned()
            .collect();
        let mut want = case.keys.clone();
        want.sort();
        let mut got = keys;
        got.sort();
        assert_eq!(got, want, "{file}:\n{}", case.added);
    }

    // terraform fmt: format the inputs of one-entry-per-line cases, edit them, check them.
    let mut checked = 0;
    for (i, case) in cases.iter().enumerate() {
        if !case.one_per_line {
            continue;
        }
        std::fs::write(formatted.path().join(format!("case{i:03}.tf")), &case.input).unwrap();
        checked += 1;
    }
    let fmt = |args: &[&str]| {
        std::process::Command::new("terraform")
            .arg("fmt")
            .args(args)
            .arg(formatted.path())
            .output()
            .expect("cannot run terraform (it must be installed for the tests)")
    };
    assert!(fmt(&[]).status.success());
    for entry in std::fs::read_dir(formatted.path()).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let new = vec![(
            "karpenter_interruption_queue".to_string(),
            "module.karpenter.queue_name".to_string(),
        )];
        let added = hcl::add(&text, &new, &[]).unwrap();
        std::fs::write(&path, &added).unwrap();
        assert_eq!(hcl::remove(&added, &[new[0].0.clone()], &[]).unwrap(), text);
    }
    let check = fmt(&["-check", "-diff"]);
    assert!(
        check.status.success(),
        "{checked} formatted inputs; after adding a key, terraform fmt would change:\n{}",
        String::from_utf8_lossy(&check.stdout)
    );
}
