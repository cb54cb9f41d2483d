//! One VPC block per cell from the repository's pool: allocation, overrides, overlaps (new and check), subnets.

use super::*;

#[test]
fn each_cell_gets_the_next_free_block_and_an_overlap_is_refused() {
    let dir = new_repo(&[PROD, &format!("{STAGING} --vpc-cidr 10.7.0.0/16"), DEV]);
    let root = dir.path();
    assert_eq!(tfvars_cidr(root, PROD), "10.0.0.0/16");
    assert_eq!(tfvars_cidr(root, STAGING), "10.7.0.0/16");
    assert_eq!(tfvars_cidr(root, DEV), "10.1.0.0/16");
    // variables.tf has no default block to fall back on: every cell records its own.
    let parsed = hcl_parse_dir(&stack_dir(root, DEV));
    assert!(parsed["variables.tf"]["variable"]["vpc_cidr"][0]["default"].is_null());

    // An override that overlaps another cell: refused, naming the cell and where its block is.
    let before = tree_hash(root);
    let out = run(
        root,
        &["new", "eu-west-1-dev", "--vpc-cidr", "10.7.128.0/17"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    for word in [
        "invalid value for --vpc-cidr",
        "overlaps 10.7.0.0/16",
        &format!("cell `{STAGING}`"),
        &format!("terraform/cells/{STAGING}/terraform.tfvars:5"),
        "e.g. 10.2.0.0/16",
    ] {
        assert!(stderr.contains(word), "no `{word}` in {stderr}");
    }
    for (cidr, words) in [
        ("10.8.0.0/24", "a /16 to /19"),
        ("10.8.0.0/20", "smaller than the /27 an ALB needs"),
        ("10.8.0.1/16", "host bits set"),
    ] {
        let out = run(root, &["new", "eu-west-1-dev", "--vpc-cidr", cidr]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cidr}: {stderr}");
        assert!(stderr.contains(words), "{cidr}: no `{words}` in {stderr}");
    }
    assert_tree_unchanged(&before, &tree_hash(root), "refused --vpc-cidr");

    // Regenerating keeps the cell's block.
    let out = run(root, &["new", STAGING, "--force"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(tfvars_cidr(root, STAGING), "10.7.0.0/16");
    assert_tree_unchanged(&before, &tree_hash(root), "new --force");
}

#[test]
fn a_full_pool_fails_naming_the_setting() {
    let dir = temp_dir();
    let root = dir.path();
    new_cell(root, &[PROD]);
    let config = root.join("cellgen.yaml");
    fs::write(
        &config,
        read(&config).replace("vpc_cidr_pool: 10.0.0.0/8", "vpc_cidr_pool: 10.0.0.0/15"),
    )
    .unwrap();
    new_cell(root, &[STAGING]);
    assert_eq!(tfvars_cidr(root, STAGING), "10.1.0.0/16");
    let before = tree_hash(root);
    let out = run(root, &["new", DEV]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("network.vpc_cidr_pool 10.0.0.0/15 has no free /16")
            && stderr.contains("--vpc-cidr"),
        "{stderr}"
    );
    assert_tree_unchanged(&before, &tree_hash(root), "a full pool");
}

#[test]
fn check_reports_overlapping_vpc_blocks_at_the_cells_tfvars() {
    let dir = new_repo(&[PROD, STAGING]);
    let root = dir.path();
    let out = run(root, &["check"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    let tfvars = stack_dir(root, STAGING).join("terraform.tfvars");
    fs::write(
        &tfvars,
        read(&tfvars).replace("10.1.0.0/16", "10.0.128.0/17"),
    )
    .unwrap();
    let out = run(root, &["check", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "overlapping-vpc-cidr")
        .collect();
    assert_eq!(findings.len(), 2, "one finding per cell: {report}");
    let staging = findings
        .iter()
        .find(|f| f["cells"] == serde_json::json!([STAGING]))
        .unwrap();
    assert_eq!(
        staging["file"],
        format!("terraform/cells/{STAGING}/terraform.tfvars")
    );
    assert_eq!(staging["line"], 5);
    assert!(
        staging["message"]
            .as_str()
            .unwrap()
            .contains(&format!("cell `{PROD}`"))
    );

    // A value cellgen cannot read is a finding too, not a silent pass.
    fs::write(
        &tfvars,
        read(&tfvars).replace("\"10.0.128.0/17\"", "var.other"),
    )
    .unwrap();
    let out = run(root, &["check", STAGING]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("invalid-vpc-cidr"));
}

/// A fleet whose live cells share one block (0.1.0 gave every cell 10.0.0.0/16) can pass once
/// cellgen.yaml acknowledges the overlap, with a reason: each is then a warning. A cell the
/// acknowledgement does not name still fails, and so does a name the repository lacks.
#[test]
fn an_acknowledged_overlap_of_live_cells_is_a_warning() {
    let dir = new_repo(&[PROD, STAGING, DEV]);
    let root = dir.path();
    for cell in [STAGING, DEV] {
        let tfvars = stack_dir(root, cell).join("terraform.tfvars");
        let text = read(&tfvars);
        let own = tfvars_cidr(root, cell);
        fs::write(&tfvars, text.replace(&own, "10.0.0.0/16")).unwrap();
    }
    let codes = |out: &Output| -> Vec<(String, String)> {
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["code"].as_str().unwrap().to_string(),
                    f["message"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let out = run(root, &["check", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        codes(&out)
            .iter()
            .filter(|(c, _)| c == "overlapping-vpc-cidr")
            .count(),
        6
    );

    let config = root.join("cellgen.yaml");
    let original = read(&config);
    let acknowledge = |cells: &str| {
        fs::write(
            &config,
            original.replace(
                "  vpc_prefix_length: 16\n",
                &format!(
                    "  vpc_prefix_length: 16\n  acknowledged_overlaps:\n    - cells: [{cells}]\n      reason: made by cellgen 0.1.0; never routed to each other\n"
                ),
            ),
        )
        .unwrap();
    };
    acknowledge(&format!("{PROD}, {STAGING}, {DEV}"));
    let out = run(root, &["check", "--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let found = codes(&out);
    let acknowledged: Vec<&String> = found
        .iter()
        .filter(|(c, _)| c == "acknowledged-vpc-overlap")
        .map(|(_, m)| m)
        .collect();
    assert_eq!(acknowledged.len(), 6, "{found:?}");
    // Removing one of those cells says the acknowledgement still names it.
    let out = run(root, &["remove-cell", DEV, "--dry-run"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "network.acknowledged_overlaps names {DEV}: drop {DEV}"
        )),
        "{err}"
    );
    assert!(
        acknowledged[0].contains("made by cellgen 0.1.0; never routed to each other"),
        "{}",
        acknowledged[0]
    );

    // Only two of the three: the third cell's overlaps stay errors.
    acknowledge(&format!("{PROD}, {STAGING}"));
    let out = run(root, &["check", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let found = codes(&out);
    let count = |code: &str| found.iter().filter(|(c, _)| c == code).count();
    assert_eq!(
        (
            count("acknowledged-vpc-overlap"),
            count("overlapping-vpc-cidr")
        ),
        (2, 4)
    );

    // A misspelt cell: an error naming it, with the cell meant.
    acknowledge(&format!("{PROD}, {STAGING}, us-east-1-dve"));
    let out = run(root, &["check"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("unknown-acknowledged-cell")
            && text.contains("names `us-east-1-dve`, which is not a cell of this repository")
            && text.contains(&format!("Did you mean `{DEV}`?")),
        "{text}"
    );

    // An entry of one cell, or without a reason, is refused when cellgen.yaml is read.
    for (entry, words) in [
        (
            format!("    - cells: [{PROD}]\n      reason: x\n"),
            "two or more and each once",
        ),
        (
            format!("    - cells: [{PROD}, {DEV}]\n      reason: ' '\n"),
            "has an empty `reason`",
        ),
    ] {
        fs::write(
            &config,
            original.replace(
                "  vpc_prefix_length: 16\n",
                &format!("  vpc_prefix_length: 16\n  acknowledged_overlaps:\n{entry}"),
            ),
        )
        .unwrap();
        let out = run(root, &["check"]);
        assert_eq!(out.status.code(), Some(1));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("cellgen.yaml:") && err.contains(words),
            "{err}"
        );
    }
}

/// `cidrsubnet(var.vpc_cidr, bits, i + offset)` over the zones, as Terraform computes it.
fn subnets(expression: &str, vpc: (u32, u32), zones: u32) -> Vec<(u32, u32)> {
    let args = expression
        .split("cidrsubnet(var.vpc_cidr, ")
        .nth(1)
        .unwrap_or_else(|| panic!("not a cidrsubnet of var.vpc_cidr: {expression}"));
    let mut parts = args.splitn(2, ", ");
    let bits: u32 = parts.next().unwrap().trim().parse().unwrap();
    let index = parts.next().unwrap();
    let offset: u32 = index.split('+').nth(1).map_or(0, |o| {
        o.trim_end_matches(|c: char| !c.is_ascii_digit())
            .trim()
            .parse()
            .unwrap()
    });
    let prefix = vpc.1 + bits;
    (0..zones)
        .map(|i| (vpc.0 + ((i + offset) << (32 - prefix)), prefix))
        .collect()
}

/// Every subnet of the smallest block cellgen allows is at least a /27, the smallest subnet an
/// ALB accepts (and larger than the /28 EKS needs for its control plane's interfaces); no two
/// overlap, none leaves the block, for three zones and for two (us-west-1).
#[test]
fn the_subnets_of_a_cell_never_overlap_stay_in_its_block_and_fit_an_alb() {
    let dir = new_repo(&[&format!("{PROD} --egress-gateway --vpc-cidr 10.20.0.0/19")]);
    let parsed = hcl_parse_dir(&stack_dir(dir.path(), PROD));
    let vpc = block(&parsed, "network.tf", &["module", "vpc"]);
    let mut all = Vec::new();
    for field in ["private_subnets", "public_subnets", "intra_subnets"] {
        all.push((field, vpc[field].as_str().unwrap().to_string()));
    }
    let egress = block(&parsed, "egress.tf", &["resource", "aws_subnet", "egress"]);
    all.push(("egress", egress["cidr_block"].as_str().unwrap().to_string()));
    for ((prefix, base), zones) in [(16u32, 10u32 << 24), (19, (10 << 24) | (20 << 16))]
        .into_iter()
        .flat_map(|block| [(block, 3), (block, 2)])
    {
        let blocks: Vec<(&str, (u32, u32))> = all
            .iter()
            .flat_map(|(name, e)| {
                subnets(e, (base, prefix), zones)
                    .into_iter()
                    .map(move |b| (*name, b))
            })
            .collect();
        assert_eq!(blocks.len(), all.len() * zones as usize);
        let end = |(start, len): (u32, u32)| u64::from(start) + (1u64 << (32 - len));
        for (i, (a_name, a)) in blocks.iter().enumerate() {
            assert!(
                a.0 >= base && end(*a) <= u64::from(base) + (1u64 << (32 - prefix)),
                "{a_name} leaves the /{prefix}"
            );
            assert!(a.1 <= 27, "/{prefix}: {a_name} {a:?} is smaller than a /27");
            for (b_name, b) in &blocks[i + 1..] {
                assert!(
                    end(*a) <= u64::from(b.0) || end(*b) <= u64::from(a.0),
                    "/{prefix}: {a_name} {a:?} overlaps {b_name} {b:?}"
                );
            }
        }
    }
}

/// A cell generated before each cell had its own block (variables.tf defaulted every cell to
/// 10.0.0.0/16, terraform.tfvars had no vpc_cidr) keeps that block when regenerated, overlap or
/// not: another block would replace its VPC. `check` reports the overlap instead.
#[test]
fn a_regenerated_cell_keeps_its_block_even_when_it_overlaps() {
    let dir = new_repo(&[PROD, STAGING]);
    let root = dir.path();
    // Make the staging cell look generated by an older cellgen, its files as generated then.
    let stack = stack_dir(root, STAGING);
    let record_path = root.join(format!(".cellgen/cells/{STAGING}.json"));
    let mut record: Value = serde_json::from_str(&read(&record_path)).unwrap();
    let tfvars = stack.join("terraform.tfvars");
    let old_tfvars: String = read(&tfvars)
        .lines()
        .filter(|l| !l.starts_with("vpc_cidr"))
        .map(|l| format!("{l}\n"))
        .collect();
    let variables = stack.join("variables.tf");
    let old_variables = read(&variables).replacen(
        "  type        = string\n\n  validation {\n    condition     = can(regex(",
        "  type        = string\n  default     = \"10.0.0.0/16\"\n\n  validation {\n    condition     = can(regex(",
        1,
    );
    assert_ne!(old_variables, read(&variables));
    for (file, text) in [(&tfvars, &old_tfvars), (&variables, &old_variables)] {
        fs::write(file, text).unwrap();
        let key = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        record["files"][key] = Value::String(cellgen::model::state::sha256(text));
    }
    fs::write(&record_path, serde_json::to_string_pretty(&record).unwrap()).unwrap();

    let out = run(root, &["new", STAGING, "--force"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("keeps its VPC block 10.0.0.0/16")
            && stderr.contains(&format!("cell `{PROD}`")),
        "{stderr}"
    );
    // Regenerated, both files say so: the block did not move.
    assert_eq!(tfvars_cidr(root, STAGING), "10.0.0.0/16");
    let out = run(root, &["check", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("overlapping-vpc-cidr"));
}
