use super::*;

const TF: &str = r#"# keep me
resource "kubernetes_config_map_v1" "cell_metadata" {
  metadata {
    name      = "cell-metadata"
    namespace = "flux-system"
  }

  data = {
    schema       = "1" # the contract version
    cell_name    = var.name
    cluster_name = module.eks.cluster_name
  }

  depends_on = [
    flux_bootstrap_git.this,
  ]
}
"#;

fn entry(key: &str, value: &str) -> Vec<(String, String)> {
    vec![(key.to_string(), value.to_string())]
}

fn deps(d: &[&str]) -> Vec<String> {
    d.iter().map(|s| s.to_string()).collect()
}

#[track_caller]
fn round_trip(text: &str) -> String {
    let new = vec![
        (
            "karpenter_interruption_queue".to_string(),
            "module.karpenter.queue_name".to_string(),
        ),
        ("x".to_string(), "\"y\"".to_string()),
    ];
    let added = add(text, &new, &deps(&["module.karpenter"])).unwrap();
    let meta = read(&added).unwrap();
    let n = meta.entries.len();
    assert_eq!(
        meta.entries[n - 2].key,
        "karpenter_interruption_queue",
        "{added}"
    );
    assert_eq!(meta.entries[n - 1].value, "\"y\"", "{added}");
    assert!(
        meta.depends_on.contains(&"module.karpenter".to_string()),
        "{added}"
    );
    let keys = vec!["karpenter_interruption_queue".to_string(), "x".to_string()];
    let removed = remove(&added, &keys, &deps(&["module.karpenter"])).unwrap();
    assert_eq!(removed, text, "after adding:\n{added}");
    // One key at a time gives the same.
    let one = remove(&added, &keys[1..], &[]).unwrap();
    let two = remove(&one, &keys[..1], &deps(&["module.karpenter"])).unwrap();
    assert_eq!(two, text);
    added
}

#[test]
fn reads_entries_and_literals() {
    let meta = read(TF).unwrap();
    let keys: Vec<_> = meta.entries.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(keys, ["schema", "cell_name", "cluster_name"]);
    assert_eq!(meta.get("schema").unwrap().literal.as_deref(), Some("1"));
    assert_eq!(meta.get("cell_name").unwrap().value, "var.name");
    assert_eq!(meta.get("cell_name").unwrap().line, 10);
    assert_eq!(meta.depends_on, ["flux_bootstrap_git.this"]);
}

#[test]
fn add_then_remove_restores_bytes_and_keeps_alignment() {
    let added = round_trip(TF);
    assert!(
        added.contains("    karpenter_interruption_queue = module.karpenter.queue_name\n"),
        "{added}"
    );
    assert!(
        added.contains("    schema                       = \"1\" # the contract version\n"),
        "{added}"
    );
    assert!(
        added.contains("    flux_bootstrap_git.this,\n    module.karpenter,\n"),
        "{added}"
    );
}

#[test]
fn short_keys_do_not_realign() {
    let added = add(TF, &entry("vpc_id", "module.vpc.vpc_id"), &[]).unwrap();
    assert!(
        added.contains("    vpc_id       = module.vpc.vpc_id\n"),
        "{added}"
    );
    assert_eq!(remove(&added, &["vpc_id".into()], &[]).unwrap(), TF);
}

#[test]
fn every_layout_keeps_keys_inside_data() {
    let layouts = [
        TF.to_string(),
        TF.replace(
            "data = {\n    schema       = \"1\" # the contract version\n    cell_name    = var.name\n    cluster_name = module.eks.cluster_name\n  }",
            "data = { schema = \"1\", cell_name = var.name }",
        ),
        TF.replace("module.eks.cluster_name\n  }", "module.eks.cluster_name }"),
        TF.replace("module.eks.cluster_name\n", "module.eks.cluster_name,\n"),
        TF.replace("var.name\n", "var.name, other = 1\n"),
        TF.replace(
            "module.eks.cluster_name\n",
            "module.eks.cluster_name\n    doc          = <<EOT\n}\nEOT\n",
        ),
        TF.replace("  depends_on = [\n    flux_bootstrap_git.this,\n  ]\n", "  depends_on = [flux_bootstrap_git.this]\n"),
        TF.replace("  depends_on = [\n    flux_bootstrap_git.this,\n  ]\n", "  depends_on = []\n"),
        TF.replace("schema       = \"1\" # the contract version", "# first\n    schema = \"1\"\n\n    // second"),
        format!("resource \"kubernetes_config_map_v1\" \"other\" {{\n  data = {{ a = 1 }}\n}}\n\n{TF}"),
    ];
    for text in layouts {
        round_trip(&text);
    }
}

#[test]
fn a_one_line_data_object_stays_one_line() {
    let text = TF.replace(
        "data = {\n    schema       = \"1\" # the contract version\n    cell_name    = var.name\n    cluster_name = module.eks.cluster_name\n  }",
        "data = { schema = \"1\", cell_name = var.name }",
    );
    let added = add(&text, &entry("k", "v.w"), &[]).unwrap();
    assert!(
        added.contains("data = { schema = \"1\", cell_name = var.name, k = v.w }"),
        "{added}"
    );
}

#[test]
fn closing_brace_on_the_last_entry_line() {
    let text = TF.replace("module.eks.cluster_name\n  }", "module.eks.cluster_name }");
    let added = add(&text, &entry("k", "v.w"), &[]).unwrap();
    // That line is not aligned by terraform fmt (it closes a bracket), so neither is the new one.
    assert!(
        added.contains("module.eks.cluster_name\n    k = v.w }"),
        "{added}"
    );
}

#[test]
fn picks_the_cell_metadata_config_map_among_several() {
    let other = "resource \"kubernetes_config_map_v1\" \"app\" {\n  metadata {\n    name = \"app\"\n  }\n  data = {\n    a = 1\n  }\n}\n";
    let text = format!("{other}{TF}");
    let added = add(&text, &entry("k", "v.w"), &[]).unwrap();
    assert!(added.starts_with(other), "{added}");
    assert_eq!(read(&added).unwrap().get("k").unwrap().value, "v.w");
    // By metadata.name when the label differs.
    let renamed = TF.replace("\"cell_metadata\"", "\"bridge\"");
    assert!(read(&renamed).is_ok());
    // Two candidates: refused, naming both.
    let twice = format!("{TF}\n{}", TF.replace("\"cell_metadata\"", "\"copy\""));
    let e = read(&twice).unwrap_err();
    assert!(
        e.message
            .contains("could each be the cell-metadata ConfigMap"),
        "{e}"
    );
    assert!(
        e.message.contains("(line 2)") && e.message.contains("(line 20)"),
        "{e}"
    );
}

#[test]
fn a_data_expression_is_refused_with_the_line() {
    let text = TF.replace(
        "data = {\n    schema       = \"1\" # the contract version\n    cell_name    = var.name\n    cluster_name = module.eks.cluster_name\n  }",
        "data = merge(local.base, { schema = \"1\" })",
    );
    let e = add(&text, &entry("k", "v"), &[]).unwrap_err();
    assert_eq!(e.line, 8);
    assert!(e.message.contains("not an object literal"), "{e}");
}

#[test]
fn a_key_that_is_there_is_an_error() {
    let e = add(TF, &entry("cell_name", "x.y"), &[]).unwrap_err();
    assert_eq!(e.line, 10);
}

#[test]
fn a_one_line_resource_cannot_take_depends_on() {
    let text = "resource \"kubernetes_config_map_v1\" \"cell_metadata\" { data = { a = 1 } }\n";
    let added = add(text, &entry("k", "v.w"), &[]).unwrap();
    assert_eq!(
        added,
        "resource \"kubernetes_config_map_v1\" \"cell_metadata\" { data = { a = 1, k = v.w } }\n"
    );
    let e = add(text, &[], &deps(&["module.x"])).unwrap_err();
    assert!(
        e.message.contains("closing `}` on a line of its own"),
        "{e}"
    );
}

#[test]
fn sets_schema_value() {
    let bumped = set_data_value(TF, "schema", "\"2\"").unwrap();
    assert!(bumped.contains("schema       = \"2\" # the contract version"));
}

#[test]
fn malformed_hcl_names_the_line() {
    let e = read("resource \"x\" {\n  a = \n}\n").unwrap_err();
    assert!(e.line >= 2, "{e:?}");
}

/// Issue 18: hcl-edit reads `<<EOT\nEOT\n...EOT` as one heredoc where HashiCorp's parser ends it
/// at the first `EOT`, so the value closed the ConfigMap and opened a `provisioner`. The edit
/// itself refuses it, whatever the caller checked.
#[test]
fn a_heredoc_value_cannot_open_a_block() {
    let hostile =
        "<<EOT\nEOT\n}\nprovisioner \"local-exec\" {\n  command = <<EOT\ntouch /tmp/PWNED\nEOT";
    let e = add(TF, &entry("k1", hostile), &[]).unwrap_err();
    assert!(e.message.contains("cannot edit this layout safely"), "{e}");
    for value in ["<<EOT\nx\nEOT", "module.x.y\n", "\"a\"\n# c"] {
        assert!(add(TF, &entry("k1", value), &[]).is_err(), "{value:?}");
        assert!(set_data_value(TF, "cell_name", value).is_err(), "{value:?}");
    }
}

/// The proof holds on its own: an edit that adds anything but the named entries is refused even
/// when the entries read back right.
#[test]
fn the_whole_file_keeps_its_structure() {
    let before = read(TF).unwrap();
    let good = TF.replace(
        "module.eks.cluster_name\n",
        "module.eks.cluster_name\n    k1           = var.x\n",
    );
    proof::structure_kept(TF, &before, &good, &read(&good).unwrap()).unwrap();
    for forged in [
        // A block inside the ConfigMap.
        TF.replace(
            "  depends_on",
            "  provisioner \"local-exec\" {}\n  depends_on",
        ),
        // An attribute outside data.
        TF.replace("  depends_on", "  lifecycle_x = 1\n  depends_on"),
        // A comment that was not there.
        TF.replace("var.name\n", "var.name # x\n"),
    ] {
        let after = read(&forged).unwrap();
        assert!(
            proof::structure_kept(TF, &before, &forged, &after).is_err(),
            "{forged}"
        );
    }
    // A depends_on the edit adds is the one attribute that may appear.
    let no_deps = TF.replace("  depends_on = [\n    flux_bootstrap_git.this,\n  ]\n", "");
    let added = add(&no_deps, &[], &deps(&["module.karpenter"])).unwrap();
    assert!(added.contains("depends_on = [module.karpenter]"), "{added}");
}

/// A cell-metadata.tf that already holds the heredoc (written by an older cellgen, or by hand)
/// is refused on reading, so `check` reports it and no command edits around it.
#[test]
fn a_heredoc_read_past_its_end_is_refused() {
    let pwned = TF.replace(
        "module.eks.cluster_name\n",
        "module.eks.cluster_name\n    k1 = <<EOT\nEOT\n}\nprovisioner \"local-exec\" {\n  command = <<EOT\ntouch /tmp/PWNED\nEOT\n",
    );
    let e = read(&pwned).unwrap_err();
    assert_eq!(e.line, 12, "{e}");
    assert!(e.message.contains("Terraform ends the heredoc"), "{e}");
    // A heredoc closed once is fine, `}` inside it included.
    let fine = TF.replace(
        "module.eks.cluster_name\n",
        "module.eks.cluster_name\n    notes = <<EOT\n}\nEOTX\nEOT\n",
    );
    assert_eq!(read(&fine).unwrap().get("notes").unwrap().line, 12);
}
