//! The repository around the cells: the CI workflow (pinned, cached, working without
//! CELLGEN_GIT_URL, `terraform fmt -check` on the stacks a change touches), the `git add` line
//! `new` prints, the branch Flux syncs, and the README's layout.

use std::process::Command;

use super::*;

fn workflow(root: &Path) -> Value {
    let text = read(&root.join(".github/workflows/cellgen.yaml"));
    yaml_serde::from_str(&text).unwrap()
}

fn steps(workflow: &Value) -> Vec<Value> {
    workflow["jobs"]["check"]["steps"]
        .as_array()
        .unwrap()
        .clone()
}

/// Whether a step runs when CELLGEN_GIT_URL is `url` and the repository has cells or not (the
/// conditions the workflow uses).
fn runs_with(step: &Value, url: &str, cells: bool) -> bool {
    let Some(condition) = step["if"].as_str() else {
        return true;
    };
    condition.split("&&").all(|term| {
        let term = term.trim();
        if let Some(value) = term.strip_prefix("env.CELLGEN_GIT_URL != ") {
            url != value.trim_matches('\'')
        } else if let Some(value) = term.strip_prefix("env.CELLGEN_GIT_URL == ") {
            url == value.trim_matches('\'')
        } else if term == "hashFiles('cells/*/*') != ''" {
            cells
        } else if term == "hashFiles('cells/*/*') == ''" {
            !cells
        } else {
            // Cache hits only skip work; assume a miss.
            term == "steps.cellgen-cache.outputs.cache-hit != 'true'"
        }
    })
}

#[test]
fn the_workflow_pins_its_actions_caches_cellgen_and_works_without_cellgen_git_url() {
    let dir = new_repo(&[PROD]);
    let flow = workflow(dir.path());
    let steps = steps(&flow);
    for step in &steps {
        if let Some(uses) = step["uses"].as_str() {
            let (_, sha) = uses.split_once('@').unwrap();
            assert!(
                sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()),
                "{uses} is not pinned by commit"
            );
        }
    }
    let toolchain = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("dtolnay/rust-toolchain@"))
        })
        .unwrap();
    assert_eq!(toolchain["with"]["toolchain"], "1.95.0");
    let cache = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/cache@"))
        })
        .unwrap();
    assert_eq!(cache["with"]["path"], "~/.cargo/bin/cellgen");
    assert!(
        cache["with"]["key"]
            .as_str()
            .unwrap()
            .contains(env!("CARGO_PKG_VERSION"))
    );
    let build = steps
        .iter()
        .find(|s| {
            s["run"]
                .as_str()
                .is_some_and(|r| r.contains("cargo install"))
        })
        .unwrap();
    assert!(
        build["run"].as_str().unwrap().contains("--locked")
            && build["run"]
                .as_str()
                .unwrap()
                .contains("--tag \"v$CELLGEN_VERSION\"")
    );
    assert_eq!(flow["env"]["CELLGEN_VERSION"], env!("CARGO_PKG_VERSION"));

    let run_text_in = |url: &str, cells: bool| -> String {
        steps
            .iter()
            .filter(|s| runs_with(s, url, cells))
            .map(|s| {
                format!(
                    "{}\n{}\n",
                    s["run"].as_str().unwrap_or_default(),
                    s["uses"].as_str().unwrap_or_default()
                )
            })
            .collect()
    };
    let run_text = |url: &str| run_text_in(url, true);
    // Before the first cell: `cellgen check` (which fails without cells) waits, a notice says why.
    let empty = run_text_in("https://git.example.com/tools/cellgen.git", false);
    assert!(
        !empty.contains("cellgen check --format") && empty.contains("No cell under cells/ yet"),
        "{empty}"
    );
    // With the variable: cellgen is built on a cache miss and checks; terraform fmt runs.
    let set = run_text("https://git.example.com/tools/cellgen.git");
    assert!(
        set.contains("cellgen check --format github") && set.contains("cargo install"),
        "{set}"
    );
    assert!(set.contains("terraform fmt -check"), "{set}");
    // Without it: nothing needs cellgen, a warning says why, terraform fmt still runs.
    let set = run_text("");
    assert!(
        !set.contains("cellgen check --format") && !set.contains("cargo install"),
        "{set}"
    );
    assert!(
        set.contains("::warning") && set.contains("terraform fmt -check"),
        "{set}"
    );
}

#[test]
fn the_workflow_checks_the_formatting_of_the_stacks_a_change_touches() {
    let dir = new_repo(&[PROD, STAGING]);
    let root = dir.path();
    let script = steps(&workflow(root))
        .into_iter()
        .find(|s| {
            s["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("terraform fmt"))
        })
        .and_then(|s| s["run"].as_str().map(str::to_string))
        .unwrap();
    // A base commit where PROD's stack is already badly formatted.
    let misformat = |cell: &str| {
        let file = stack_dir(root, cell).join("outputs.tf");
        fs::write(
            &file,
            read(&file).replacen("  description = ", "  description   = ", 1),
        )
        .unwrap();
    };
    git(root, &["init", "-q", "-b", "main"]);
    misformat(PROD);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "base"]);
    let base = git(root, &["rev-parse", "HEAD"]).trim().to_string();
    misformat(STAGING);
    git(root, &["commit", "-q", "-am", "change staging"]);

    let check = |base: &str| {
        let out = Command::new("bash")
            .current_dir(root)
            .args(["-e", "-c", &script])
            .env("BASE", base)
            .output()
            .expect("bash must be installed");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (ok, stdout) = check(&base);
    assert!(!ok, "a misformatted changed stack passed:\n{stdout}");
    assert!(
        stdout.contains(&format!("terraform/cells/{STAGING}"))
            && !stdout.contains(&format!("terraform/cells/{PROD}")),
        "{stdout}"
    );
    // Formatting the changed stack makes the change pass, whatever the untouched stacks hold.
    let out = Command::new("terraform")
        .args(["fmt", "-no-color"])
        .arg(stack_dir(root, STAGING))
        .output()
        .unwrap();
    assert!(out.status.success());
    git(root, &["commit", "-q", "-am", "fmt staging"]);
    let (ok, stdout) = check(&base);
    assert!(ok, "{stdout}");
    // No base to compare with (a first push): every stack.
    let (ok, stdout) = check("0000000000000000000000000000000000000000");
    assert!(
        !ok && stdout.contains(&format!("terraform/cells/{PROD}")),
        "{stdout}"
    );
}

/// The paths of the `git add` line `new` printed.
fn git_add_paths(stdout: &str) -> Vec<String> {
    let line = stdout
        .lines()
        .find(|l| l.contains("git add "))
        .unwrap_or_else(|| panic!("no git add line:\n{stdout}"));
    let args = line
        .split("git add ")
        .nth(1)
        .unwrap()
        .split(" && ")
        .next()
        .unwrap();
    args.split_whitespace().map(str::to_string).collect()
}

#[test]
fn the_git_add_line_stages_everything_new_wrote_and_the_branch_is_the_current_one() {
    let dir = temp_dir();
    let root = dir.path();
    git(root, &["init", "-q", "-b", "trunk"]);
    let out = new_cell(root, &[PROD, "--components", "karpenter"]);
    let paths = git_add_paths(&String::from_utf8_lossy(&out.stdout));
    for expected in [
        "cellgen.yaml",
        ".github",
        "infrastructure",
        "apps",
        "components/karpenter",
        &format!("cells/{PROD}"),
        &format!("terraform/cells/{PROD}"),
        ".cellgen",
    ] {
        assert!(
            paths.contains(&expected.to_string()),
            "git add lacks {expected}: {paths:?}"
        );
    }
    let mut args = vec!["add", "--"];
    args.extend(paths.iter().map(String::as_str));
    git(root, &args);
    assert_eq!(
        git(root, &["status", "--porcelain", "--untracked-files=all"])
            .lines()
            .filter(|l| !l.starts_with("A "))
            .collect::<Vec<_>>(),
        Vec::<&str>::new(),
        "left out of the git add line"
    );
    git(root, &["commit", "-q", "-m", "first cell"]);

    // Flux syncs the branch this repository is on.
    let config: Value = yaml_serde::from_str(&read(&root.join("cellgen.yaml"))).unwrap();
    assert_eq!(config["git"]["branch"], "trunk");
    assert_eq!(
        workflow(root)["on"]["push"]["branches"],
        serde_json::json!(["trunk"])
    );
    let parsed = hcl_parse_dir(&stack_dir(root, PROD));
    assert_eq!(parsed["terraform.tfvars"]["git_branch"], "trunk");

    // A second cell: only what this run wrote, and all of it.
    let out = new_cell(root, &[STAGING, "--components", "kyverno"]);
    let paths = git_add_paths(&String::from_utf8_lossy(&out.stdout));
    for untouched in [".github", "infrastructure", "apps", "components/karpenter"] {
        assert!(
            !paths.contains(&untouched.to_string()),
            "git add lists {untouched}, which this run did not change: {paths:?}"
        );
    }
    let mut args = vec!["add", "--"];
    args.extend(paths.iter().map(String::as_str));
    git(root, &args);
    assert_eq!(
        git(root, &["status", "--porcelain", "--untracked-files=all"])
            .lines()
            .filter(|l| !l.starts_with("A ") && !l.starts_with("M "))
            .collect::<Vec<_>>(),
        Vec::<&str>::new()
    );
}

#[test]
fn the_readme_layout_lists_exactly_the_files_of_a_cell() {
    let readme = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"));
    let layout = readme
        .split("## What it generates")
        .nth(1)
        .and_then(|s| s.split("```").nth(1))
        .expect("README has no layout block under `## What it generates`");
    // Names are in the first column; a stack file's description starts at column 40.
    let mut in_stack = false;
    let mut stack_files = BTreeSet::new();
    let mut cell_files = BTreeSet::new();
    for line in layout.lines() {
        let names = line.get(..40).unwrap_or(line);
        if names.starts_with("terraform/cells/<cell>/") {
            in_stack = true;
        } else if !names.starts_with("  ") {
            in_stack = false;
            let first = names.split_whitespace().next().unwrap_or_default();
            if let Some(file) = first.strip_prefix("cells/<cell>/") {
                cell_files.insert(file.to_string());
            }
        } else if in_stack {
            stack_files.extend(names.split_whitespace().map(str::to_string));
        }
    }
    // A cell with an egress gateway and one component (the README's `<component>.tf`).
    let dir = new_repo(&[&format!(
        "{PROD} --egress-gateway --components metrics-server,kyverno,karpenter"
    )]);
    let generated: BTreeSet<String> = fs::read_dir(stack_dir(dir.path(), PROD))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .map(|f| {
            if f == "karpenter.tf" {
                "<component>.tf".to_string()
            } else {
                f
            }
        })
        .collect();
    assert_eq!(
        stack_files, generated,
        "README's terraform/cells/<cell>/ block and a generated stack differ"
    );
    let generated: BTreeSet<String> = fs::read_dir(dir.path().join("cells").join(PROD))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .map(|f| {
            if LAYERS.contains(&f.trim_end_matches(".yaml")) {
                "<layer>.yaml".to_string()
            } else {
                f
            }
        })
        .collect();
    assert_eq!(
        cell_files, generated,
        "README's cells/<cell>/ lines and a generated cell differ"
    );
}

/// What CI runs on every stack a change touches: a freshly generated one passes it (with a state
/// bucket, whose `bucket` and `region` align with the backend's other arguments).
#[test]
fn generated_stacks_are_terraform_fmt_clean() {
    let dir = new_repo(&[
        &format!(
            "{PROD} --egress-gateway --with-requirements --components {} --state-bucket acme-tf-state --state-region us-east-2",
            catalog_names().join(",")
        ),
        STAGING,
    ]);
    let out = Command::new("terraform")
        .args(["fmt", "-check", "-diff", "-recursive", "-no-color"])
        .arg(dir.path().join("terraform"))
        .output()
        .expect("terraform must be installed (CI runs terraform fmt)");
    assert!(
        out.status.success(),
        "terraform fmt would change the generated stacks:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What `terraform init`, `plan` and `apply` leave in a stack stays out of Git; the lock file
/// goes in (issue 19). Asked of Git itself.
#[test]
fn a_stack_keeps_terraforms_local_files_out_of_git_and_its_lock_file_in() {
    let dir = new_repo(&[PROD]);
    let root = dir.path();
    git(root, &["init", "-q"]);
    let stack = format!("terraform/cells/{PROD}");
    let ignored = |file: &str| -> bool {
        let out = std::process::Command::new("git")
            .current_dir(root)
            .args(["check-ignore", "-q", "--no-index"])
            .arg(format!("{stack}/{file}"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", root)
            .status()
            .unwrap();
        out.success()
    };
    for file in [
        ".terraform/providers/registry.terraform.io/hashicorp/aws/6.66.0/linux_amd64/terraform-provider-aws",
        ".terraform/modules/modules.json",
        "terraform.tfstate",
        "terraform.tfstate.backup",
        ".terraform.tfstate.lock.info",
        "plan.tfplan",
        "tfplan",
        "crash.log",
    ] {
        assert!(ignored(file), "{file} is not ignored");
    }
    for file in [
        ".terraform.lock.hcl",
        "cluster.tf",
        "terraform.tfvars",
        ".gitignore",
    ] {
        assert!(!ignored(file), "{file} is ignored");
    }
    let text = read(&root.join(&stack).join(".gitignore"));
    assert!(text.contains("Commit .terraform.lock.hcl"), "{text}");
}
