//! Hostile input: filesystem. Files cellgen did not create where it would write, bytes that are
//! not UTF-8, CRLF line endings and modes that must survive a rewrite, records and journals that
//! are damaged, write failures in the middle of a plan.

use std::fs;
use std::path::Path;

use super::*;

pub const PROD: &str = "eu-west-2-prod";
const META: &str = "terraform/cells/eu-west-2-prod/cell-metadata.tf";
const CONTROLLERS: &str = "cells/eu-west-2-prod/controllers.yaml";
const RECORD: &str = ".cellgen/cells/eu-west-2-prod.json";

pub fn prod(dir: &Path) {
    new_cell(dir, &[PROD]);
}

/// A key of the user's own (the seed keys are cellgen's: no key command renames them).
fn team_key(dir: &Path) {
    edits::run_ok(
        dir,
        &[
            "key",
            "add",
            "team_id",
            "--terraform",
            "var.name",
            "--example",
            "t",
            "--description",
            "d",
        ],
    );
}

pub fn put(dir: &Path, rel: &str, bytes: &[u8]) {
    let path = dir.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, bytes).unwrap();
}

fn append(dir: &Path, rel: &str, bytes: &[u8]) {
    let mut all = fs::read(dir.join(rel)).unwrap();
    all.extend_from_slice(bytes);
    fs::write(dir.join(rel), all).unwrap();
}

pub fn to_crlf(dir: &Path, rel: &str) {
    let text = fs::read_to_string(dir.join(rel)).unwrap();
    fs::write(dir.join(rel), text.replace('\n', "\r\n")).unwrap();
}

/// Every line ends in CRLF: no bare LF anywhere.
#[track_caller]
pub fn assert_all_crlf(dir: &Path, rel: &str) {
    let bytes = fs::read(dir.join(rel)).unwrap();
    let bare = bytes
        .iter()
        .enumerate()
        .filter(|(i, b)| **b == b'\n' && (*i == 0 || bytes[i - 1] != b'\r'))
        .count();
    assert_eq!(
        bare, 0,
        "{rel} has {bare} bare LF line endings (mixed endings)"
    );
    assert!(bytes.ends_with(b"\r\n"), "{rel} does not end in CRLF");
}

pub fn mode(dir: &Path, rel: &str) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(dir.join(rel)).unwrap().permissions().mode() & 0o777
}

pub fn set_mode(dir: &Path, rel: &str, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(dir.join(rel), fs::Permissions::from_mode(mode)).unwrap();
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Rewrites the cell's record in cellgen 0.1.0's format (`files: { path: sha256 }`).
pub fn legacy_record(dir: &Path) {
    let record: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join(RECORD)).unwrap()).unwrap();
    let files: serde_json::Map<String, serde_json::Value> = record["files"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v["sha256"].clone()))
        .collect();
    let legacy = serde_json::json!({ "cellgen": record["cellgen"], "files": files });
    let mut text = serde_json::to_string_pretty(&legacy).unwrap();
    text.push('\n');
    fs::write(dir.join(RECORD), text).unwrap();
}

/// The controllers layer lists `deep/d0`, the start of a 10,000-deep chain of kustomizations.
fn ten_thousand_deep_resources(dir: &Path) {
    prod(dir);
    let n = 10_000;
    for i in 0..n {
        let next = if i + 1 < n {
            format!("resources: [../d{}]\n", i + 1)
        } else {
            "namePrefix: x-\n".to_string()
        };
        put(
            dir,
            &format!("deep/d{i}/kustomization.yaml"),
            next.as_bytes(),
        );
    }
    let k = dir.join("infrastructure/controllers/kustomization.yaml");
    let text = fs::read_to_string(&k).unwrap();
    fs::write(
        k,
        text.replace(
            "  - platform-namespace.yaml",
            "  - platform-namespace.yaml\n  - ../../deep/d0",
        ),
    )
    .unwrap();
}

/// `<parent>/bad\xfe`: a directory whose name is not UTF-8.
fn non_utf8_dir(dir: &Path, parent: &str) {
    use std::os::unix::ffi::OsStrExt;
    let name = std::ffi::OsStr::from_bytes(b"bad\xfe");
    fs::create_dir_all(dir.join(parent).join(name)).unwrap();
}

/// `<parent>/bad\xfe.yaml`: a file whose name is not UTF-8.
fn non_utf8_file(dir: &Path, parent: &str) {
    use std::os::unix::ffi::OsStrExt;
    let name = std::ffi::OsStr::from_bytes(b"bad\xfe.yaml");
    fs::create_dir_all(dir.join(parent)).unwrap();
    fs::write(dir.join(parent).join(name), "kind: ConfigMap\n").unwrap();
}

/// cellgen started in (or with -C naming) a directory whose path is not UTF-8: a clear error
/// naming it, exit 2 for the flag and 1 for the current directory, and nothing written.
#[test]
fn a_start_directory_whose_path_is_not_utf8_is_an_error_naming_it() {
    use std::os::unix::ffi::OsStrExt;
    let parent = temp_dir();
    let dir = parent
        .path()
        .join(std::ffi::OsStr::from_bytes(b"infra\xff"));
    fs::create_dir(&dir).unwrap();
    let shown = format!("{}/infra\u{FFFD}", parent.path().display());
    let flag = cellgen()
        .arg("-C")
        .arg(&dir)
        .args(["new", PROD, "--git-url", GIT_URL])
        .output()
        .unwrap();
    assert_eq!(flag.status.code(), Some(2), "{}", stderr(&flag));
    for word in ["invalid value for -C", &shown, "is not valid UTF-8"] {
        assert!(stderr(&flag).contains(word), "{}", stderr(&flag));
    }
    let cwd = cellgen()
        .current_dir(&dir)
        .args(["new", PROD, "--git-url", GIT_URL])
        .output()
        .unwrap();
    assert_eq!(cwd.status.code(), Some(1), "{}", stderr(&cwd));
    for word in ["the current directory", &shown, "is not valid UTF-8"] {
        assert!(stderr(&cwd).contains(word), "{}", stderr(&cwd));
    }
    assert_eq!(
        fs::read_dir(&dir).unwrap().count(),
        0,
        "something was written"
    );

    // A file given by a flag, likewise.
    let repo = parent.path().join("repo");
    fs::create_dir(&repo).unwrap();
    prod(&repo);
    let values = parent
        .path()
        .join(std::ffi::OsStr::from_bytes(b"values\xff.yaml"));
    fs::write(&values, "cluster_name: x\n").unwrap();
    let out = cellgen()
        .arg("-C")
        .arg(&repo)
        .args(["check", "--values"])
        .arg(&values)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    for word in ["the file", "values\u{FFFD}.yaml", "is not valid UTF-8"] {
        assert!(stderr(&out).contains(word), "{}", stderr(&out));
    }
}

/// The builder lists a layer directory without a kustomization (Flux generates one naming every
/// YAML file in it): a file there whose name is not UTF-8 is an error naming the directory and
/// the file (lossily, the one way to show it), exit 1, nothing written; never a file left out or
/// shown under another name. Skipped where the filesystem refuses such names.
#[test]
fn a_layer_file_whose_name_is_not_utf8_is_an_error_naming_its_directory() {
    use std::os::unix::ffi::OsStrExt;
    let dir = temp_dir();
    let root = dir.path();
    prod(root);
    fs::remove_file(root.join("apps/kustomization.yaml")).unwrap();
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.yaml");
    if let Err(e) = fs::write(root.join("apps").join(name), "kind: ConfigMap\n") {
        support::tools::skip_environment(
            "a file name that is not UTF-8",
            &format!("this filesystem refuses one ({e})"),
        );
        return;
    }
    let before = tree_hash(root);
    for args in [
        &["render", PROD, "--layer", "apps"][..],
        &["render", PROD, "--layer", "apps", "--kustomize", "external"][..],
    ] {
        let out = cellgen().arg("-C").arg(root).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        for word in [
            "apps: the entry `caf\u{FFFD}.yaml`",
            "is not valid UTF-8",
            "rename it",
        ] {
            assert!(
                stderr(&out).contains(word),
                "{args:?}: {word}: {}",
                stderr(&out)
            );
        }
    }
    // `check` names it too, as a finding of the layer that does not build.
    let out = cellgen().arg("-C").arg(root).arg("check").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("apps: the entry `caf\u{FFFD}.yaml` has a name that is not valid UTF-8"),
        "{report}"
    );
    assert_tree_unchanged(
        &before,
        &tree_hash(root),
        "a layer file whose name is not UTF-8",
    );
}

pub fn cases() -> Vec<Case> {
    vec![
        // Files cellgen did not create are never overwritten.
        Case {
            name: "the first new keeps an existing .github/workflows/cellgen.yaml",
            setup: |dir| put(dir, ".github/workflows/cellgen.yaml", b"name: ours\n"),
            args: &["new", PROD, "--git-url", GIT_URL],
            expect: Expect::Succeeds(|dir, out| {
                assert_eq!(
                    read(&dir.join(".github/workflows/cellgen.yaml")),
                    "name: ours\n"
                );
                assert!(dir.join("cellgen.yaml").is_file());
                assert!(
                    stdout(out)
                        .contains("kept  .github/workflows/cellgen.yaml (it was already there"),
                    "{}",
                    stdout(out)
                );
            }),
        },
        Case {
            name: "init keeps a shared layer file that exists and writes the rest",
            setup: |dir| {
                put(
                    dir,
                    "infrastructure/controllers/platform-namespace.yaml",
                    b"# ours\n",
                )
            },
            args: &["init", "--git-url", GIT_URL],
            expect: Expect::Succeeds(|dir, out| {
                assert_eq!(
                    read(&dir.join("infrastructure/controllers/platform-namespace.yaml")),
                    "# ours\n"
                );
                assert!(
                    dir.join("infrastructure/controllers/kustomization.yaml")
                        .is_file()
                );
                assert!(
                    stdout(out)
                        .contains("kept  infrastructure/controllers/platform-namespace.yaml"),
                    "{}",
                    stdout(out)
                );
            }),
        },
        Case {
            name: "init leaves a layer directory with its own kustomization.yaml alone",
            setup: |dir| put(dir, "apps/kustomization.yaml", b"resources: []\n"),
            args: &["init", "--git-url", GIT_URL],
            expect: Expect::Succeeds(|dir, out| {
                assert_eq!(
                    read(&dir.join("apps/kustomization.yaml")),
                    "resources: []\n"
                );
                assert!(!dir.join("apps/namespace.yaml").exists());
                // The directory is kept whole, and what that leaves out is said.
                assert!(
                    stdout(out).contains("kept  apps/ (it was already there"),
                    "{}",
                    stdout(out)
                );
                assert!(
                    stdout(out)
                        .contains("skipped  apps/namespace.yaml (not created: Namespace apps"),
                    "{}",
                    stdout(out)
                );
            }),
        },
        // Bytes that are not UTF-8: said so, with where; never "does not exist".
        Case {
            name: "a layer file that is not UTF-8",
            setup: |dir| {
                prod(dir);
                // First, so the position does not depend on the template's length.
                let mut all = b"# caf\xe9\n".to_vec();
                all.extend(fs::read(dir.join(CONTROLLERS)).unwrap());
                fs::write(dir.join(CONTROLLERS), all).unwrap();
            },
            args: &["add-component", "karpenter"],
            expect: Expect::Fails {
                code: 1,
                words: &[CONTROLLERS, "not valid UTF-8 at line 1, column 6"],
            },
        },
        Case {
            name: "cellgen.yaml that is not UTF-8",
            setup: |dir| {
                prod(dir);
                append(dir, "cellgen.yaml", b"# \xff\n");
            },
            args: &["list"],
            expect: Expect::Fails {
                code: 1,
                words: &["cellgen.yaml", "not valid UTF-8"],
            },
        },
        Case {
            name: "cell-metadata.tf that is not UTF-8, on new --force",
            setup: |dir| {
                prod(dir);
                append(dir, META, b"# \xc3\x28\n");
            },
            args: &["new", PROD, "--force"],
            expect: Expect::Fails {
                code: 1,
                words: &[META, "not valid UTF-8"],
            },
        },
        Case {
            name: "a repository component.yaml that is not UTF-8",
            setup: |dir| {
                prod(dir);
                put(
                    dir,
                    "components/billing/component.yaml",
                    b"description: \xff\n",
                );
            },
            args: &["add-component", "billing"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "components/billing/component.yaml",
                    "not valid UTF-8 at line 1",
                ],
            },
        },
        Case {
            name: "a record that is not UTF-8",
            setup: |dir| {
                prod(dir);
                put(dir, RECORD, b"{\"cellgen\": \"\xff\"}");
            },
            args: &["new", PROD, "--force"],
            expect: Expect::Fails {
                code: 1,
                words: &[RECORD, "not valid UTF-8"],
            },
        },
        // CRLF files stay CRLF, every line of them.
        Case {
            name: "a CRLF layer file stays CRLF when a component is added",
            setup: |dir| {
                prod(dir);
                to_crlf(dir, CONTROLLERS);
                to_crlf(dir, "cells/eu-west-2-prod/configs.yaml");
            },
            args: &["add-component", "karpenter"],
            expect: Expect::Succeeds(|dir, _| {
                assert_all_crlf(dir, CONTROLLERS);
                assert_all_crlf(dir, "cells/eu-west-2-prod/configs.yaml");
                assert!(
                    read(&dir.join(CONTROLLERS)).contains("components/karpenter/controllers\r\n")
                );
            }),
        },
        Case {
            name: "CRLF cellgen.yaml and cell-metadata.tf stay CRLF through a schema bump",
            setup: |dir| {
                prod(dir);
                to_crlf(dir, "cellgen.yaml");
                to_crlf(dir, META);
            },
            args: &["add-component", "karpenter"],
            expect: Expect::Succeeds(|dir, _| {
                assert_all_crlf(dir, "cellgen.yaml");
                assert_all_crlf(dir, META);
                assert!(read(&dir.join("cellgen.yaml")).contains("schema: 2\r\n"));
                assert!(read(&dir.join(META)).contains("karpenter_role_arn"));
            }),
        },
        Case {
            name: "a cell checked out with CRLF is not an edit for new --force",
            setup: |dir| {
                new_cell(dir, &[PROD, "--components", "karpenter"]);
                for entry in walkdir::WalkDir::new(dir.join("cells"))
                    .into_iter()
                    .chain(walkdir::WalkDir::new(dir.join("terraform")))
                {
                    let entry = entry.unwrap();
                    if entry.file_type().is_file() {
                        let rel = entry.path().strip_prefix(dir).unwrap();
                        to_crlf(dir, rel.to_str().unwrap());
                    }
                }
            },
            args: &["new", PROD, "--force"],
            expect: Expect::Succeeds(|dir, out| {
                assert!(stdout(out).contains("Nothing to change"), "{}", stdout(out));
                assert!(!stdout(out).contains("kept"), "{}", stdout(out));
                assert_all_crlf(dir, META);
            }),
        },
        // Modes survive a rewrite.
        Case {
            name: "0600 files stay 0600 when edited",
            setup: |dir| {
                prod(dir);
                set_mode(dir, META, 0o600);
                set_mode(dir, "cellgen.yaml", 0o640);
            },
            args: &["add-component", "karpenter"],
            expect: Expect::Succeeds(|dir, _| {
                assert!(read(&dir.join(META)).contains("karpenter_role_arn"));
                assert_eq!(mode(dir, META), 0o600);
                assert_eq!(mode(dir, "cellgen.yaml"), 0o640);
            }),
        },
        // Records and journals that are damaged.
        Case {
            name: "a record that is not JSON",
            setup: |dir| {
                prod(dir);
                put(dir, RECORD, b"not json\n");
            },
            args: &["new", PROD, "--force"],
            expect: Expect::Fails {
                code: 1,
                words: &[RECORD, "not a cellgen record", "delete it"],
            },
        },
        Case {
            name: "a record in cellgen 0.1.0's format is read, and an untouched cell stays as it is",
            setup: |dir| {
                new_cell(dir, &[PROD, "--components", "kyverno"]);
                legacy_record(dir);
            },
            args: &["new", PROD, "--force"],
            expect: Expect::Succeeds(|dir, out| {
                assert!(stdout(out).contains("Nothing to change"), "{}", stdout(out));
                let record = read(&dir.join(RECORD));
                assert!(
                    !record.contains("sha256"),
                    "the record was rewritten:\n{record}"
                );
            }),
        },
        Case {
            name: "a record in cellgen 0.1.0's format still tells an edited file",
            setup: |dir| {
                prod(dir);
                legacy_record(dir);
                append(dir, CONTROLLERS, b"# tuned\n");
                fs::remove_file(dir.join("terraform/cells/eu-west-2-prod/outputs.tf")).unwrap();
            },
            args: &["new", PROD, "--force"],
            expect: Expect::Succeeds(|dir, out| {
                assert!(read(&dir.join(CONTROLLERS)).ends_with("# tuned\n"));
                assert!(
                    dir.join("terraform/cells/eu-west-2-prod/outputs.tf")
                        .is_file()
                );
                assert!(
                    stdout(out).contains(&format!("kept  {CONTROLLERS}")),
                    "{}",
                    stdout(out)
                );
            }),
        },
        Case {
            name: "a record naming files outside the cell is not obeyed",
            setup: |dir| {
                prod(dir);
                use sha2::Digest;
                let config = fs::read(dir.join("cellgen.yaml")).unwrap();
                let hash: String = sha2::Sha256::digest(&config)
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                let path = dir.join(RECORD);
                let mut record: serde_json::Value =
                    serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
                for key in ["cellgen.yaml", "cells/eu-west-2-prod/../../cellgen.yaml"] {
                    record["files"][key] = serde_json::json!({"sha256": hash, "cellgen": "0.1.0"});
                }
                fs::write(&path, serde_json::to_string_pretty(&record).unwrap()).unwrap();
            },
            args: &["new", PROD, "--force"],
            expect: Expect::Succeeds(|dir, _| {
                assert!(
                    dir.join("cellgen.yaml").is_file(),
                    "--force deleted cellgen.yaml"
                );
            }),
        },
        Case {
            name: "a journal that cannot be read",
            setup: |dir| {
                prod(dir);
                put(dir, ".cellgen/journal", b"garbage");
            },
            args: &["repair"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    ".cellgen/journal",
                    "does not prove it is cellgen's own",
                    "not a journal cellgen can read",
                ],
            },
        },
        Case {
            name: "a journal naming a path outside the repository",
            setup: |dir| {
                prod(dir);
                put(
                    dir,
                    ".cellgen/journal",
                    br#"{"cellgen":"0.1.0","pid":1,"command":"x","state":"applying","dirs":[],"ops":[{"path":"../etc/passwd","backup":"../x"}]}"#,
                );
            },
            args: &["repair"],
            expect: Expect::Fails {
                code: 1,
                words: &["../etc/passwd", "not a plain path inside the repository"],
            },
        },
        Case {
            name: "the start of a journal a killed cellgen left is removed",
            setup: |dir| {
                prod(dir);
                put(dir, ".cellgen/journal.tmp", b"{\"cellg");
            },
            args: &["repair"],
            expect: Expect::Succeeds(|dir, out| {
                assert!(!dir.join(".cellgen/journal.tmp").exists());
                assert!(stderr(out).contains("rolled back"), "{}", stderr(out));
            }),
        },
        // Write failures in the middle of a plan.
        Case {
            name: "a directory where a component's .tf goes",
            setup: |dir| {
                prod(dir);
                fs::create_dir_all(dir.join("terraform/cells/eu-west-2-prod/karpenter.tf"))
                    .unwrap();
            },
            args: &["add-component", "karpenter"],
            expect: Expect::Fails {
                code: 1,
                words: &["terraform/cells/eu-west-2-prod/karpenter.tf"],
            },
        },
        Case {
            name: ".cellgen is a file",
            setup: |dir| {
                prod(dir);
                fs::remove_dir_all(dir.join(".cellgen")).unwrap();
                put(dir, ".cellgen", b"not a directory\n");
            },
            args: &["add-component", "karpenter"],
            expect: Expect::Fails {
                code: 1,
                words: &["cannot write", ".cellgen"],
            },
        },
        Case {
            name: "a file where a component's shared directory goes",
            setup: |dir| {
                prod(dir);
                put(dir, "components/karpenter", b"x\n");
            },
            args: &["add-component", "karpenter"],
            expect: Expect::Fails {
                code: 1,
                words: &["cannot write", "components/karpenter", "Not a directory"],
            },
        },
        // Paths are UTF-8 (issue 12): a directory listed whose name is not is an error naming
        // it (lossily, the one place cellgen shows such a name), never a cell left out.
        Case {
            name: "a cell directory whose name is not UTF-8",
            setup: |dir| {
                prod(dir);
                non_utf8_dir(dir, "cells");
            },
            args: &["check"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "/cells: the entry `bad\u{FFFD}`",
                    "is not valid UTF-8",
                    "Rename it",
                ],
            },
        },
        Case {
            name: "a component directory whose name is not UTF-8",
            setup: |dir| {
                prod(dir);
                non_utf8_dir(dir, "components");
            },
            args: &["add-component", "karpenter"],
            expect: Expect::Fails {
                code: 1,
                words: &["/components: the entry `bad\u{FFFD}`", "is not valid UTF-8"],
            },
        },
        // `key rename` looks for `${KEY}` in every file Flux reads: one whose name is not UTF-8
        // is an error naming its directory, never a file silently left with the old name.
        Case {
            name: "a file whose name is not UTF-8 in a cell, met by key rename",
            setup: |dir| {
                prod(dir);
                team_key(dir);
                non_utf8_file(dir, "cells/eu-west-2-prod");
            },
            args: &["key", "rename", "team_id", "team"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "cells/eu-west-2-prod: the entry `bad\u{FFFD}.yaml`",
                    "is not valid UTF-8",
                    "Rename it",
                ],
            },
        },
        Case {
            name: "a file whose name is not UTF-8 in a shared component, met by key rename",
            setup: |dir| {
                prod(dir);
                edits::run_ok(dir, &["add-component", "karpenter"]);
                team_key(dir);
                non_utf8_file(dir, "components/karpenter/controllers");
            },
            args: &["key", "rename", "team_id", "team"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "components/karpenter/controllers: the entry `bad\u{FFFD}.yaml`",
                    "is not valid UTF-8",
                ],
            },
        },
        // A build is bounded: a chain of kustomizations deeper than the bound is refused.
        Case {
            name: "a 10,000-deep chain of kustomizations",
            setup: ten_thousand_deep_resources,
            args: &["render", PROD, "--layer", "controllers"],
            expect: Expect::Fails {
                code: 1,
                words: &["infrastructure/controllers", "nest more than 100 levels"],
            },
        },
    ]
}

#[test]
fn filesystem_table() {
    run_table("filesystem", &cases());
}

/// Runs cellgen with a file size limit (RLIMIT_FSIZE) and SIGXFSZ ignored, so a write past the
/// limit fails with EFBIG, as a full disk fails with ENOSPC.
#[cfg(target_os = "linux")]
fn cellgen_with_file_limit(dir: &Path, limit: u64, args: &[&str]) -> Output {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_cellgen"));
    isolate(&mut cmd);
    cmd.env("CELLGEN_NO_INPUT", "1")
        .arg("-C")
        .arg(dir)
        .args(args);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: limit,
                rlim_max: libc::RLIM_INFINITY,
            };
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.output().unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn a_write_that_fails_for_lack_of_space_leaves_no_temporary_file() {
    // A big cellgen.yaml (a long comment) cannot be staged under the limit; the journal can.
    let dir = temp_dir();
    prod(dir.path());
    append(
        dir.path(),
        "cellgen.yaml",
        format!("# {}\n", "x".repeat(200_000)).as_bytes(),
    );
    let before = tree_hash(dir.path());
    let out = cellgen_with_file_limit(dir.path(), 100_000, &["add-component", "karpenter"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("cannot write") && err.contains("cellgen.yaml"),
        "{err}"
    );
    assert!(err.contains("File too large"), "{err}");
    assert_tree_unchanged(&before, &tree_hash(dir.path()), "EFBIG while staging");

    // The journal itself cannot be written: nothing else has been touched yet.
    let out = cellgen_with_file_limit(dir.path(), 64, &["add-component", "kyverno"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(".cellgen/journal"), "{err}");
    assert_tree_unchanged(&before, &tree_hash(dir.path()), "EFBIG on the journal");
}

/// An immutable target (chattr +i) cannot be replaced: the rollback leaves no backup behind (its
/// hard link is refused, so the backup is a copy, removed once the target still has the old
/// hash). Needs the privilege to set the flag; elsewhere there is nothing to test.
#[cfg(target_os = "linux")]
#[test]
fn an_immutable_target_is_rolled_back_without_a_backup_left() {
    let dir = temp_dir();
    prod(dir.path());
    let target = dir.path().join(META);
    let chattr = |flag: &str| {
        std::process::Command::new("chattr")
            .arg(flag)
            .arg(&target)
            .status()
            .is_ok_and(|s| s.success())
    };
    if !chattr("+i") {
        support::tools::skip_environment("an immutable target", "chattr +i is not permitted here");
        return;
    }
    let before = tree_hash(dir.path());
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args([
            "key",
            "add",
            "k1",
            "--terraform",
            "var.name",
            "--example",
            "x",
        ])
        .args(["--description", "d"])
        .output()
        .unwrap();
    let after = tree_hash(dir.path());
    assert!(chattr("-i"));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Operation not permitted"),
        "{}",
        stderr(&out)
    );
    assert_tree_unchanged(&before, &after, "a rollback around an immutable file");
}

/// `new` in a directory below a repository works on that repository and says so; a
/// cellgen.yaml above the Git work tree the directory is in belongs to someone else.
#[test]
fn new_below_a_repository_uses_it_and_never_one_above_the_git_work_tree() {
    let dir = temp_dir();
    prod(dir.path());
    let sub = dir.path().join("docs/notes");
    fs::create_dir_all(&sub).unwrap();
    let out = cellgen()
        .arg("-C")
        .arg(&sub)
        .args(["new", "us-east-1-staging"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "Using the cellgen repository at {}",
            dir.path().display()
        )),
        "{}",
        stderr(&out)
    );
    assert!(dir.path().join("cells/us-east-1-staging").is_dir());
    assert_eq!(
        fs::read_dir(&sub).unwrap().count(),
        0,
        "wrote into the start directory"
    );

    // A Git work tree below the repository: its own scaffold, the outer repository untouched.
    let inner = dir.path().join("vendor/other");
    fs::create_dir_all(inner.join(".git")).unwrap();
    let before = tree_hash(dir.path());
    let out = cellgen()
        .arg("-C")
        .arg(&inner)
        .args(["new", "us-east-1-dev", "--git-url", GIT_URL])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(inner.join("cellgen.yaml").is_file());
    assert!(inner.join("cells/us-east-1-dev").is_dir());
    let changed: Vec<String> = tree_diff(&before, &tree_hash(dir.path()))
        .into_iter()
        .filter(|line| !line.contains("vendor/other/"))
        .collect();
    assert!(
        changed.is_empty(),
        "outside the inner work tree: {changed:?}"
    );
}

/// Makes `path` immutable (`chattr +i`, as root on ext4/overlay/xfs/btrfs) for as long as the
/// value lives; `None` where that is not possible here.
#[cfg(target_os = "linux")]
struct Immutable(std::path::PathBuf);

#[cfg(target_os = "linux")]
impl Immutable {
    fn set(path: &Path) -> Option<Immutable> {
        let ok = std::process::Command::new("chattr")
            .arg("+i")
            .arg(path)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Immutable(path.to_path_buf()))
    }
}

#[cfg(target_os = "linux")]
impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&self.0)
            .status();
    }
}

/// A target that cannot be replaced (immutable: neither linked nor renamed over): the apply
/// fails naming it and rolls back, leaving nothing behind, not even the backup it had to copy
/// (a hard link to an immutable file is refused). Without chattr (not root), a read-only stack
/// directory stands in for it where permissions bind.
#[cfg(target_os = "linux")]
#[test]
fn an_immutable_target_is_rolled_back_leaving_nothing_behind() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir();
    prod(dir.path());
    let stack = dir.path().join("terraform/cells/eu-west-2-prod");
    let target = stack.join("cell-metadata.tf");
    let before = tree_hash(dir.path());
    let guard = Immutable::set(&target);
    if guard.is_none() {
        fs::set_permissions(&stack, fs::Permissions::from_mode(0o555)).unwrap();
    }
    let out = cellgen()
        .arg("-C")
        .arg(dir.path())
        .args([
            "key",
            "add",
            "team_id",
            "--terraform",
            "var.name",
            "--example",
            "t",
            "--description",
            "d",
        ])
        .output()
        .unwrap();
    drop(guard);
    fs::set_permissions(&stack, fs::Permissions::from_mode(0o755)).unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("cell-metadata.tf") && !err.contains("panicked"),
        "{err}"
    );
    assert_tree_unchanged(&before, &tree_hash(dir.path()), "an immutable target");
}
