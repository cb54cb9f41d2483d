use super::*;

const JOBS: &str = "apps/jobs.yaml";

/// A manifest of the shared apps layer that reads `key` in every form Flux substitutes, next to
/// forms that are not that key (escaped, a longer name in a comment).
fn write_jobs(root: &Path, key: &str) {
    fs::write(
        root.join(JOBS),
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: jobs\n  namespace: apps\ndata:\n  # not ours: ${{{key}_v2}}\n  url: ${{{key}}}\n  fallback: \"${{{key}:=none}}\"\n  literal: $${{{key}}}\n  region: ${{aws_region}}\n"
        ),
    )
    .unwrap();
    let kustomization = root.join("apps/kustomization.yaml");
    let text = read(&kustomization);
    if !text.contains("jobs.yaml") {
        fs::write(&kustomization, format!("{text}  - jobs.yaml\n")).unwrap();
    }
}

/// The fleet, each cell's stack declaring the jobs queue the keys below refer to (`key add`
/// refuses a reference to nothing).
fn jobs_fleet() -> tempfile::TempDir {
    let dir = fleet();
    for cell in CELLS {
        fs::write(
            dir.path().join(format!("terraform/cells/{cell}/jobs.tf")),
            "resource \"aws_sqs_queue\" \"jobs\" {\n  name = \"jobs\"\n}\n",
        )
        .unwrap();
    }
    dir
}

fn add_args<'a>(name: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "key",
        "add",
        name,
        "--terraform",
        "aws_sqs_queue.jobs.url",
        "--example",
        "https://sqs.eu-west-2.amazonaws.com/123456789012/jobs",
        "--description",
        "URL of the jobs queue",
    ];
    args.extend_from_slice(extra);
    args
}

fn metadata(root: &Path, cell: &str) -> String {
    read(&root.join(format!("terraform/cells/{cell}/cell-metadata.tf")))
}

#[test]
fn a_key_is_added_renamed_and_removed_on_both_sides_touching_only_its_cells() {
    let dir = jobs_fleet();
    let root = dir.path();
    let start = contract_number(root);
    let numbers: Vec<u32> = CELLS.iter().map(|c| cell_number(root, c)).collect();

    // add, for dev only: the contract and dev's ConfigMap; the number moves once.
    let (out, changed) = apply_once(root, &add_args("jobs_queue_url", &["--env", "dev"]));
    assert_eq!(
        changed,
        [
            format!(".cellgen/cells/{DEV}.json"),
            "cellgen.yaml".into(),
            format!("terraform/cells/{DEV}/cell-metadata.tf"),
        ],
        "{out}"
    );
    assert_eq!(contract_number(root), start + 1);
    assert_eq!(cell_number(root, DEV), start + 1);
    assert_eq!(cell_number(root, STAGING), numbers[1]);
    assert_eq!(cell_number(root, PROD), numbers[2]);
    assert!(metadata(root, DEV).contains("jobs_queue_url"));
    assert!(!metadata(root, PROD).contains("jobs_queue_url"));
    let config = read(&root.join("cellgen.yaml"));
    assert!(
        config.contains(&format!(
            "  jobs_queue_url:\n    description: URL of the jobs queue\n    example: https://sqs.eu-west-2.amazonaws.com/123456789012/jobs\n    terraform: aws_sqs_queue.jobs.url\n    environments: [dev]\n    since: {}\n",
            start + 1
        )),
        "{config}"
    );
    terraform_fmt_check(&root.join(format!("terraform/cells/{DEV}"))).unwrap();
    check_green(root);

    // A shared manifest reading it: check names the cells without it, and the line.
    write_jobs(root, "jobs_queue_url");
    let out = run(root, &["check"]);
    assert_eq!(out.status.code(), Some(1));
    let report = stdout(&out);
    for word in ["missing-key", "apps/jobs.yaml:8", STAGING, PROD] {
        assert!(report.contains(word), "check lacks `{word}`:\n{report}");
    }

    // rename: the contract, dev's ConfigMap and every substitution of it, and the repository's
    // record, which learns it (for what cellgen generates later); nothing else; one bump.
    let n = contract_number(root);
    let (out, changed) = apply_once(root, &["key", "rename", "jobs_queue_url", "queue_url"]);
    assert_eq!(
        changed,
        [
            format!(".cellgen/cells/{DEV}.json"),
            ".cellgen/repository.json".into(),
            JOBS.into(),
            "cellgen.yaml".into(),
            format!("terraform/cells/{DEV}/cell-metadata.tf"),
        ],
        "{out}"
    );
    assert_eq!(contract_number(root), n + 1);
    assert_eq!(cell_number(root, DEV), n + 1);
    assert_eq!(cell_number(root, PROD), numbers[2]);
    let jobs = read(&root.join(JOBS));
    for (kept, what) in [
        ("${queue_url}", "the plain form"),
        ("${queue_url:=none}", "the operator form"),
        ("$${jobs_queue_url}", "the escaped form"),
        ("${jobs_queue_url_v2}", "a longer name"),
    ] {
        assert!(jobs.contains(kept), "{what}: no `{kept}` in\n{jobs}");
    }
    assert!(read(&root.join("cellgen.yaml")).contains("renamed_from: jobs_queue_url"));
    assert!(metadata(root, DEV).contains("queue_url "));
    assert!(!metadata(root, DEV).contains("jobs_queue_url"));

    // remove: refused while used, naming each use; then the contract and dev's ConfigMap.
    let err = run_fails(
        root,
        &["key", "remove", "queue_url"],
        1,
        &["still used", "apps/jobs.yaml:8", "apps/jobs.yaml:9"],
    );
    assert!(!err.contains("apps/jobs.yaml:10"), "$$ is no use:\n{err}");
    fs::remove_file(root.join(JOBS)).unwrap();
    edit_file(root, "apps/kustomization.yaml", "  - jobs.yaml\n", "");
    let n = contract_number(root);
    let (out, changed) = apply_once(root, &["key", "remove", "queue_url"]);
    assert_eq!(
        changed,
        [
            format!(".cellgen/cells/{DEV}.json"),
            "cellgen.yaml".into(),
            format!("terraform/cells/{DEV}/cell-metadata.tf"),
        ],
        "{out}"
    );
    assert_eq!(contract_number(root), n + 1, "a removal is a new number");
    assert!(!read(&root.join("cellgen.yaml")).contains("queue_url"));
    assert!(!metadata(root, DEV).contains("queue_url"));
    assert_eq!(
        cell_number(root, DEV),
        numbers[0],
        "dev's newest key is older again"
    );
    check_green(root);
}

#[test]
fn a_key_added_to_named_cells_moves_the_number_once() {
    let dir = jobs_fleet();
    let root = dir.path();
    let start = contract_number(root);
    let (_, changed) = apply_once(
        root,
        &add_args("jobs_queue_url", &["--cell", DEV, "--cell", PROD]),
    );
    assert!(!changed.iter().any(|p| p.contains(STAGING)), "{changed:?}");
    assert_eq!(contract_number(root), start + 1);
    assert_eq!(cell_number(root, DEV), start + 1);
    assert_eq!(cell_number(root, PROD), start + 1);
    assert!(
        read(&root.join("cellgen.yaml")).contains(&format!("    cells: [{PROD}, {DEV}]\n")),
        "the cells, sorted"
    );
    check_green(root);
}

#[test]
fn key_commands_refuse_bad_input_naming_the_flag_or_line() {
    let dir = jobs_fleet();
    let root = dir.path();
    run_fails(
        root,
        &add_args("jobs-queue", &[]),
        2,
        &[
            "NAME",
            "`jobs-queue` is not a Flux variable name",
            "jobs_queue",
        ],
    );
    let mut args = add_args("jobs_queue_url", &[]);
    args[4] = "aws_sqs_queue.jobs.url aws_sqs_queue.other.url";
    run_fails(root, &args, 2, &["--terraform", "not one HCL expression"]);
    run_fails(
        root,
        &add_args("jobs_queue_url", &["--env", "qa"]),
        2,
        &["--env", "`qa` is not an environment"],
    );
    run_fails(
        root,
        &add_args("jobs_queue_url", &["--cell", "eu-west-2-prd"]),
        2,
        &[
            "unknown cell `eu-west-2-prd`",
            "Did you mean `eu-west-2-prod`?",
        ],
    );
    run_fails(
        root,
        &add_args("vpc_id", &[]),
        2,
        &["the contract has a key `vpc_id` already", "cellgen.yaml:"],
    );
    run_fails(
        root,
        &["key", "rename", "vpc_idd", "network_id"],
        2,
        &["unknown key `vpc_idd`"],
    );
    run_fails(
        root,
        &["key", "rename", "vpc_id", "cluster_name"],
        2,
        &["NEW", "the contract has a key `cluster_name` already"],
    );
    run_fails(
        root,
        &["key", "rename", "karpenter_role_arn", "karpenter_arn"],
        2,
        &["OLD", "a key of cellgen's component `karpenter`"],
    );
    // The contract's number is cellgen's: never removed or renamed; a seed key is never removed,
    // whether a manifest uses it or not (renaming one is the repository's to do).
    for (args, flag, why) in [
        (
            &["key", "remove", "schema"][..],
            "NAME",
            "`schema` is the contract's number",
        ),
        (
            &["key", "rename", "schema", "version"][..],
            "OLD",
            "`schema` is the contract's number",
        ),
        (
            &["key", "remove", "admission_action"][..],
            "NAME",
            "`admission_action` is one of the seed keys every cell writes",
        ),
        (
            &["key", "remove", "cell_name"][..],
            "NAME",
            "`cell_name` is one of the seed keys",
        ),
    ] {
        run_fails(root, args, 2, &[flag, why, "Nothing was changed"]);
    }
    run_fails(
        root,
        &["key", "remove", "karpenter_node_role"],
        2,
        &[
            "a key of component `karpenter`",
            "remove-component karpenter",
        ],
    );
}

#[test]
fn a_new_cell_with_components_moves_the_number_once_and_rewrites_no_other_cell() {
    let dir = temp_dir();
    let root = dir.path();
    new_cell(root, &[PROD]);
    let prod = read(&root.join(format!("terraform/cells/{PROD}/cell-metadata.tf")));
    let start = contract_number(root);
    new_cell(root, &[DEV, "--components", "karpenter,external-dns"]);
    assert_eq!(
        contract_number(root),
        start + 1,
        "two components' keys, one command: one move"
    );
    assert_eq!(cell_number(root, DEV), start + 1);
    assert_eq!(
        read(&root.join(format!("terraform/cells/{PROD}/cell-metadata.tf"))),
        prod,
        "prod's keys did not change, nor does its ConfigMap"
    );
    // The same components in prod: its keys change now, the contract's do not.
    run_ok(root, &["add-component", "karpenter", "--cell", PROD]);
    run_ok(root, &["add-component", "external-dns", "--cell", PROD]);
    assert_eq!(contract_number(root), start + 1);
    assert_eq!(cell_number(root, PROD), start + 1);
    check_green(root);
}

#[test]
fn the_same_key_is_added_to_more_cells_without_a_new_number() {
    let dir = jobs_fleet();
    let root = dir.path();
    run_ok(root, &add_args("jobs_queue_url", &["--env", "dev"]));
    let n = contract_number(root);
    // staging too: its ConfigMap gains the key, the contract only the environment.
    let (out, changed) = apply_once(root, &add_args("jobs_queue_url", &["--env", "staging"]));
    assert_eq!(
        changed,
        [
            format!(".cellgen/cells/{STAGING}.json"),
            "cellgen.yaml".into(),
            format!("terraform/cells/{STAGING}/cell-metadata.tf"),
        ],
        "{out}"
    );
    assert_eq!(contract_number(root), n, "the key set is the same");
    assert_eq!(
        cell_number(root, STAGING),
        n,
        "staging now writes the key of number {n}"
    );
    assert!(
        read(&root.join("cellgen.yaml")).contains("    environments: [dev, staging]\n"),
        "{}",
        read(&root.join("cellgen.yaml"))
    );
    // Every cell is a selection cellgen.yaml states by having none: the user's edit.
    run_fails(
        root,
        &add_args("jobs_queue_url", &[]),
        2,
        &[
            "NAME",
            "written for some cells only",
            "cellgen.yaml:",
            "delete those lines",
        ],
    );
    edit_file(
        root,
        "cellgen.yaml",
        "    environments: [dev, staging]\n",
        "",
    );
    let (_, changed) = apply_once(root, &add_args("jobs_queue_url", &[]));
    assert!(
        changed.contains(&format!("terraform/cells/{PROD}/cell-metadata.tf")),
        "{changed:?}"
    );
    assert_eq!(contract_number(root), n);
    check_green(root);
}
