//! `cellgen graph` (text, Mermaid, DOT) and `cellgen explain KEY`.

use std::collections::BTreeSet;

use super::*;

#[test]
fn explain_says_where_a_key_comes_from_and_who_uses_it() {
    let dir = repo_with_history();
    let before = tree_hash(dir.path());
    let out = run(dir.path(), &["explain", "${karpenter_node_role}"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("karpenter_node_role — "), "{text}");
    assert_eq!(
        lines[1],
        format!(
            "  written by: module.karpenter.node_iam_role_name (terraform/cells/{PROD_A}/cell-metadata.tf:20, terraform/cells/{PROD_B}/cell-metadata.tf:20) [{PROD_A}, {PROD_B}]"
        )
    );
    assert_eq!(lines[2], "    waits for: module.karpenter");
    assert_eq!(
        lines[3],
        format!(
            "  used by: components/karpenter/configs/ec2nodeclass.yaml:10 ${{karpenter_node_role}} in EC2NodeClass default [{PROD_A}, {PROD_B}; layer configs]"
        )
    );
    assert_eq!(lines.len(), 4, "{text}");
    // A key every cell uses, from shared layers.
    let text = stdout(&run(dir.path(), &["explain", "aws_region"]));
    assert!(text.contains("  written by: var.region ("), "{text}");
    assert_mentions(&text, &["[all 3 cells]"]);
    assert_mentions(
        &text,
        &[
            "  used by: infrastructure/controllers/platform-namespace.yaml:9 ${aws_region} in Namespace platform-system [all 3 cells; layer controllers]",
        ],
    );
    assert_tree_unchanged(&before, &tree_hash(dir.path()), "cellgen explain");
}

#[test]
fn explain_follows_a_change_and_suggests_a_near_key() {
    let dir = repo_with_history();
    let out = run(dir.path(), &["explain", "karpenter_node_rol"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Did you mean `karpenter_node_role`?"),
        "{}",
        stderr(&out)
    );
    // A manifest using a key no cell writes: explain says so.
    let file = dir.path().join("apps/namespace.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace(
            "metadata:\n",
            "metadata:\n  annotations:\n    owner: ${team_owner}\n",
        ),
    )
    .unwrap();
    let text = stdout(&run(dir.path(), &["explain", "team_owner"]));
    assert!(
        text.starts_with("team_owner (not in cellgen.yaml's contract)\n"),
        "{text}"
    );
    assert_mentions(&text, &["  written by: no cell's cell-metadata.tf\n"]);
    assert_mentions(
        &text,
        &[
            "  used by: apps/namespace.yaml:5 ${team_owner} in Namespace apps [all 3 cells; layer apps]",
        ],
    );
}

/// The flowchart subset `to_mermaid` writes, checked line by line: generated ids, quoted and
/// escaped labels, edges between defined nodes.
fn assert_valid_mermaid(text: &str) -> (usize, usize) {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("flowchart LR"));
    let label = r#""[^"\n]*""#;
    let node = regex::Regex::new(&format!(
        r#"^  ([ktim][0-9]+)(\(\[{label}\]\)|\[{label}\]|\[\[{label}\]\]|\[/{label}/\])$"#
    ))
    .unwrap();
    let edge = regex::Regex::new(r#"^  ([ktim][0-9]+) -->\|"[^"|\n]*"\| ([ktim][0-9]+)$"#).unwrap();
    let mut ids = BTreeSet::new();
    let mut edges = 0;
    for line in lines {
        if let Some(c) = node.captures(line) {
            assert!(ids.insert(c[1].to_string()), "id defined twice: {line}");
        } else if let Some(c) = edge.captures(line) {
            assert!(
                ids.contains(&c[1]) && ids.contains(&c[2]),
                "undefined node: {line}"
            );
            edges += 1;
        } else {
            panic!("not valid for the flowchart subset: {line}");
        }
    }
    (ids.len(), edges)
}

#[test]
fn graph_in_every_format() {
    let dir = repo_with_history();
    // A label with every character Mermaid and DOT treat specially.
    let file = dir
        .path()
        .join(format!("terraform/cells/{STAGING}/cell-metadata.tf"));
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace(
            "var.environment == \"dev\" ? \"Audit\" : \"Deny\"",
            r#"var.environment == "dev" ? "Audit" : "Deny|<#>\\""#,
        ),
    )
    .unwrap();

    let mermaid = stdout(&run(dir.path(), &["graph", "--format", "mermaid"]));
    let (nodes, edges) = assert_valid_mermaid(&mermaid);
    assert!(nodes > 20 && edges > 20, "{mermaid}");
    assert_mentions(&mermaid, &[r#"(["karpenter_node_role"])"#]);
    assert_mentions(&mermaid, &["#quot;dev#quot;"]);
    assert_mentions(&mermaid, &["#quot;Deny#124;#lt;#35;#gt;\\\\#quot;"]);
    assert_mentions(&mermaid, &[r#"[/"module.karpenter"/]"#]);

    let dot = stdout(&run(dir.path(), &["graph", "--format", "dot"]));
    assert!(
        dot.starts_with("digraph cellgen {\n") && dot.ends_with("}\n"),
        "{dot}"
    );
    assert_mentions(&dot, &[r#"\"Deny|<#>\\\\\""#]);
    // The same nodes and edges as the flowchart.
    assert_eq!(dot.matches(" [label=").count(), nodes + edges, "{dot}");
    assert_eq!(dot.matches(" -> ").count(), edges, "{dot}");
    if !support::tools::runs("dot", &["-V"]) {
        support::tools::skip_without("dot", "rendering the DOT output with Graphviz");
    } else if let Ok(out) = std::process::Command::new("dot")
        .arg("-Tsvg")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(dot.as_bytes())?;
            child.wait_with_output()
        })
    {
        // Graphviz is there (apt-get install graphviz): it must accept the graph as is.
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "dot: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    // One cell: only its keys' producers and consumers.
    let one = stdout(&run(dir.path(), &["graph", STAGING, "--format", "text"]));
    assert_never_mentions(&one, &["karpenter_node_role — "]);
    assert_mentions(
        &one,
        &[&format!("terraform/cells/{STAGING}/cell-metadata.tf:12")],
    );
    assert_never_mentions(&one, &[PROD_A]);
    let all = stdout(&run(dir.path(), &["graph"]));
    assert_mentions(&all, &["karpenter_node_role — "]);
}
