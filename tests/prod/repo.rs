//! The repository around the cells: the CI workflow (pinned, failing closed: the check always
//! runs, with a checksum-verified release binary; `terraform fmt -check` on the stacks a change touches), the `git add` line
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

/// The CI gate fails closed (issue 19): `cellgen check` runs on every run, with no condition
/// that could skip it, after installing the released binary of the pinned version, verified
/// against the release's SHA-256 checksums; a missing variable, release or checksum fails.
#[test]
fn the_workflow_always_runs_the_check_with_a_checksum_verified_release_binary() {
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
    assert_eq!(flow["env"]["CELLGEN_VERSION"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        flow["env"]["CELLGEN_RELEASES"],
        "${{ vars.CELLGEN_RELEASES }}"
    );
    // Pull requests and pushes to the synced branch; the job itself has no condition.
    assert!(flow["on"]["pull_request"].is_null() || flow["on"]["pull_request"].is_object());
    assert!(flow["jobs"]["check"]["if"].is_null());
    let text = read(&dir.path().join(".github/workflows/cellgen.yaml"));
    assert!(
        !text.contains("CELLGEN_GIT_URL") && !text.contains("cargo install"),
        "{text}"
    );

    let position = |pred: &dyn Fn(&Value) -> bool| steps.iter().position(pred);
    let install = position(&|s| {
        s["run"]
            .as_str()
            .is_some_and(|r| r.contains("gh release download"))
    })
    .expect("a step installing the release binary");
    let check = position(&|s| s["run"] == "cellgen check --format github")
        .expect("a step running cellgen check");
    assert!(install < check);
    // Neither the install nor the check can be skipped, and neither may fail quietly.
    for step in [&steps[install], &steps[check]] {
        assert!(step["if"].is_null(), "{step}");
        assert!(step["continue-on-error"].is_null(), "{step}");
    }
    // Every step before the check that may be skipped or may fail quietly would let it pass
    // without running: there is none.
    for step in &steps[..check] {
        assert!(
            step["if"].is_null() && step["continue-on-error"].is_null(),
            "{step}"
        );
    }
    let script = steps[install]["run"].as_str().unwrap();
    for needed in [
        "set -euo pipefail",
        "gh release download \"v$CELLGEN_VERSION\" -R \"$CELLGEN_RELEASES\" -p \"$archive\" -p SHA256SUMS",
        "sha256sum --strict -c",
        "x86_64-unknown-linux-musl",
        "aarch64-unknown-linux-musl",
    ] {
        assert!(
            script.contains(needed),
            "the install step lacks {needed}:\n{script}"
        );
    }

    // Run the install script against stand-ins for `gh`, to see it fail closed: without the
    // variable, with a checksum that does not match, with no checksum line; and pass with the
    // right one.
    let work = temp_dir();
    let bin = work.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let payload = work.path().join("payload");
    std::fs::create_dir_all(&payload).unwrap();
    let fake_cellgen = payload.join("cellgen");
    std::fs::write(
        &fake_cellgen,
        format!("#!/bin/sh\necho cellgen {}\n", env!("CARGO_PKG_VERSION")),
    )
    .unwrap();
    let archive = format!(
        "cellgen-{}-{}-unknown-linux-musl.tar.gz",
        env!("CARGO_PKG_VERSION"),
        if cfg!(target_arch = "aarch64") {
            "aarch64"
        } else {
            "x86_64"
        }
    );
    assert!(
        Command::new("chmod")
            .args(["+x"])
            .arg(&fake_cellgen)
            .status()
            .unwrap()
            .success()
    );
    assert!(
        Command::new("tar")
            .args(["-czf"])
            .arg(payload.join(&archive))
            .arg("-C")
            .arg(&payload)
            .arg("cellgen")
            .status()
            .unwrap()
            .success()
    );
    // `gh release download` copies the archive and the SHA256SUMS the test wrote.
    std::fs::write(
        bin.join("gh"),
        format!(
            "#!/bin/sh\ncp {p}/{archive} . && cp {p}/SHA256SUMS .\n",
            p = payload.display()
        ),
    )
    .unwrap();
    assert!(
        Command::new("chmod")
            .args(["+x"])
            .arg(bin.join("gh"))
            .status()
            .unwrap()
            .success()
    );
    let sum = {
        let out = Command::new("sha256sum")
            .arg(payload.join(&archive))
            .output()
            .unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .to_string()
    };
    let run = |releases: &str, sums: &str| {
        std::fs::write(payload.join("SHA256SUMS"), sums).unwrap();
        let home = work.path().join("home");
        let _ = std::fs::remove_dir_all(&home);
        let out = Command::new("bash")
            .args(["-c", script])
            .env(
                "PATH",
                format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
            )
            .env("CELLGEN_VERSION", env!("CARGO_PKG_VERSION"))
            .env("CELLGEN_RELEASES", releases)
            .env("RUNNER_TEMP", work.path().join("tmp"))
            .env("HOME", &home)
            .env("GITHUB_PATH", work.path().join("github_path"))
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let good = format!("{sum}  {archive}\n");
    let (ok, out) = run("", &good);
    assert!(!ok && out.contains("CELLGEN_RELEASES"), "{out}");
    let (ok, out) = run("acme/cellgen", &format!("{}  {archive}\n", "0".repeat(64)));
    assert!(!ok, "a wrong checksum passed: {out}");
    let (ok, out) = run("acme/cellgen", "");
    assert!(!ok && out.contains("no checksum"), "{out}");
    let (ok, out) = run("acme/cellgen", &good);
    assert!(ok, "{out}");
    assert!(work.path().join("home/.local/bin/cellgen").is_file());
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
    let readme = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reference.md"));
    let layout = readme
        .split("## What it generates")
        .nth(1)
        .and_then(|s| s.split("```").nth(1))
        .expect("docs/reference.md has no layout block under `## What it generates`");
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

/// The project's own release workflow (issue 19): tagged builds of every target the generated
/// workflow and the README's install line download, archives named as they expect, SHA256SUMS,
/// and a release published only once all of them are there.
#[test]
fn the_release_workflow_builds_every_target_with_checksums() {
    let text = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join(".github/workflows/release.yml"));
    let flow: Value = yaml_serde::from_str(&text).unwrap();
    assert_eq!(flow["on"]["push"]["tags"][0], "v*", "{}", flow["on"]);
    let targets: Vec<&str> = flow["jobs"]["build"]["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["target"].as_str().unwrap())
        .collect();
    let wanted = [
        "x86_64-unknown-linux-musl",
        "aarch64-unknown-linux-musl",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
    ];
    assert_eq!(targets, wanted);
    // The generated workflow downloads the Linux ones; the README names them all.
    let readme = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"));
    for target in wanted {
        assert!(readme.contains(target), "README.md does not name {target}");
        assert!(
            text.contains(&format!("cellgen-$version-{target}.tar.gz")) || text.contains(target)
        );
    }
    let scripts: String = flow["jobs"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|job| job["steps"].as_array().unwrap().clone())
        .filter_map(|step| step["run"].as_str().map(str::to_string))
        .collect::<Vec<_>>()
        .join("\n");
    for needed in [
        "cargo build --release --locked --target",
        "archive=\"cellgen-${GITHUB_REF_NAME#v}-$TARGET.tar.gz\"",
        "sha256sum cellgen-*.tar.gz >SHA256SUMS",
        "gh release upload \"$GITHUB_REF_NAME\" SHA256SUMS",
        "--draft=false",
    ] {
        assert!(scripts.contains(needed), "release.yml lacks {needed}");
    }
    // Published only after every build: publish needs build, which needs the draft.
    assert_eq!(flow["jobs"]["publish"]["needs"], "build");
    assert_eq!(flow["jobs"]["build"]["needs"], "draft");
    for step in flow["jobs"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|job| job["steps"].as_array().unwrap().clone())
    {
        if let Some(uses) = step["uses"].as_str() {
            let (_, sha) = uses.split_once('@').unwrap();
            assert!(sha.len() == 40, "{uses} is not pinned by commit");
        }
        if let Some(script) = step["run"].as_str() {
            let ok = Command::new("bash")
                .args(["-n", "-c", script])
                .status()
                .unwrap();
            assert!(ok.success(), "{script}");
        }
    }
}
