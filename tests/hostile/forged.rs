//! Hostile input: a journal or a record cellgen did not write (issue 18). A journal is only
//! evidence of cellgen's own interrupted apply: planted or committed, it must not make any
//! command delete, rename or overwrite a file (an untracked terraform.tfstate, cellgen.yaml,
//! `.git/config`), and a command that only reads never repairs. A record is committed, so
//! forgeable: it must not make cellgen delete or replace a file it does not generate, nor one
//! whose content is not what it generated.

use std::fs;

use sha2::Digest;

use super::filesystem::{PROD, prod, put, stdout};
use super::*;

const STATE: &str = "terraform/cells/eu-west-2-prod/terraform.tfstate";
const STATE_TEXT: &[u8] = b"{\"version\": 4, \"resources\": [\"live vpc-0a1b2c\"]}\n";
const RECORD: &str = ".cellgen/cells/eu-west-2-prod.json";
const PID: u32 = 4242;

fn sha(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn file_sha(dir: &Path, rel: &str) -> String {
    sha(&fs::read(dir.join(rel)).unwrap())
}

/// cellgen's temporary or backup name for `target`.
fn name(target: &str, ext: &str) -> String {
    let (parent, file) = match target.rsplit_once('/') {
        Some((parent, file)) => (format!("{parent}/"), file),
        None => (String::new(), target),
    };
    format!("{parent}.{file}.cellgen-{PID}.{ext}")
}

/// A journal (state `applying`, or `committed`) with these operations.
fn journal(dir: &Path, state: &str, ops: serde_json::Value) {
    let record = serde_json::json!({
        "cellgen": "0.3.0",
        "pid": PID,
        "command": "cellgen add-component karpenter",
        "state": state,
        "dirs": [],
        "ops": ops,
    });
    put(
        dir,
        ".cellgen/journal",
        serde_json::to_string_pretty(&record).unwrap().as_bytes(),
    );
}

/// A creation of `target` whose temporary file is gone, as if renamed: undo would delete it.
fn creation(target: &str, staged_sha: &str) -> serde_json::Value {
    serde_json::json!({
        "path": target,
        "temp": name(target, "tmp"),
        "temp_sha256": staged_sha,
        "temp_size": 10,
    })
}

/// A cell with an untracked Terraform state of a live VPC, and a journal claiming that an
/// apply created it.
fn state_journal(dir: &Path) {
    prod(dir);
    put(dir, STATE, STATE_TEXT);
    journal(
        dir,
        "applying",
        serde_json::json!([creation(STATE, &sha(b"what cellgen staged"))]),
    );
}

fn git_repo(dir: &Path) {
    prod(dir);
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "cells"]);
}

/// The cell's record, edited.
fn edit_record(dir: &Path, rel: &str, edit: impl FnOnce(&mut serde_json::Value)) {
    let path = dir.join(rel);
    let mut record: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut record);
    fs::write(&path, serde_json::to_string_pretty(&record).unwrap()).unwrap();
}

/// A record entry saying cellgen generated `rel` as it is now.
fn claim(dir: &Path, record: &str, rel: &str) {
    let hash = file_sha(dir, rel);
    edit_record(dir, record, |r| {
        r["files"][rel] = serde_json::json!({"sha256": hash, "cellgen": "0.2.0"});
    });
}

fn pending(args: &'static [&'static str]) -> Case {
    Case {
        name: "a journal under a command that only reads: a repair is pending, nothing done",
        setup: state_journal,
        args,
        expect: Expect::Fails {
            code: 1,
            words: &[
                ".cellgen/journal: a repair is pending",
                "`cellgen add-component karpenter` (pid 4242)",
                "cellgen repair",
            ],
        },
    }
}

pub fn cases() -> Vec<Case> {
    vec![
        // Journals.
        pending(&["list"]),
        pending(&["check"]),
        pending(&["render", PROD]),
        pending(&["add-component", "kyverno", "--dry-run"]),
        Case {
            name: "a planted journal creating an untracked terraform.tfstate: repair keeps the state",
            setup: state_journal,
            args: &["repair"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    ".cellgen/journal",
                    "does not prove it is cellgen's own",
                    STATE,
                    "does not exist",
                    "delete",
                ],
            },
        },
        Case {
            name: "a planted journal under a command that writes: nothing done, nothing written",
            setup: state_journal,
            args: &["add-component", "kyverno"],
            expect: Expect::Fails {
                code: 1,
                words: &[".cellgen/journal", "does not prove", STATE],
            },
        },
        Case {
            name: "a planted journal creating cellgen.yaml, with another hash",
            setup: |dir| {
                prod(dir);
                journal(
                    dir,
                    "applying",
                    serde_json::json!([creation("cellgen.yaml", &sha(b"other"))]),
                );
            },
            args: &["repair"],
            expect: Expect::Fails {
                code: 1,
                words: &["does not prove", "the target `cellgen.yaml` is sha256"],
            },
        },
        Case {
            name: "a planted journal naming .git/config",
            setup: |dir| {
                git_repo(dir);
                let hash = file_sha(dir, ".git/config");
                journal(
                    dir,
                    "applying",
                    serde_json::json!([creation(".git/config", &hash)]),
                );
            },
            args: &["repair"],
            expect: Expect::Fails {
                code: 1,
                words: &["`.git/config` is under .git/, which cellgen never writes"],
            },
        },
        Case {
            name: "a committed journal whose hashes all hold is still not obeyed",
            setup: |dir| {
                git_repo(dir);
                // Everything a finished rename would leave: cellgen.yaml as "staged", its
                // "backup" holding other text. Obeyed, undo would replace cellgen.yaml.
                let backup = name("cellgen.yaml", "bak");
                put(dir, &backup, b"git:\n  url: ssh://evil.example/x.git\n");
                journal(
                    dir,
                    "applying",
                    serde_json::json!([{
                        "path": "cellgen.yaml",
                        "temp": name("cellgen.yaml", "tmp"),
                        "temp_sha256": file_sha(dir, "cellgen.yaml"),
                        "temp_size": 1,
                        "backup": backup,
                        "backup_sha256": file_sha(dir, &backup),
                    }]),
                );
                git(dir, &["add", "-f", ".cellgen/journal", &backup]);
                git(dir, &["commit", "-q", "-m", "planted"]);
            },
            args: &["repair"],
            expect: Expect::Fails {
                code: 1,
                words: &["is committed to Git", "never committed"],
            },
        },
        Case {
            name: "a journal whose target is not what it says cellgen staged",
            setup: |dir| {
                prod(dir);
                let backup = name("cellgen.yaml", "bak");
                put(dir, &backup, b"an old cellgen.yaml\n");
                journal(
                    dir,
                    "applying",
                    serde_json::json!([{
                        "path": "cellgen.yaml",
                        "temp": name("cellgen.yaml", "tmp"),
                        "temp_sha256": sha(b"what cellgen staged"),
                        "temp_size": 19,
                        "backup": backup,
                        "backup_sha256": file_sha(dir, &backup),
                    }]),
                );
            },
            args: &["repair"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    "the target `cellgen.yaml` is sha256",
                    "where the journal says what cellgen staged",
                ],
            },
        },
        Case {
            name: "a journal whose backup is not the file it replaced",
            setup: |dir| {
                prod(dir);
                // A deletion of the state "renamed" to a backup that is not the state.
                let backup = name(STATE, "bak");
                put(dir, &backup, b"{}\n");
                journal(
                    dir,
                    "applying",
                    serde_json::json!([{
                        "path": STATE,
                        "backup": backup,
                        "backup_sha256": sha(b"the state as it was"),
                    }]),
                );
            },
            args: &["repair"],
            expect: Expect::Fails {
                code: 1,
                words: &["does not prove", "the backup", "the file it replaced"],
            },
        },
        Case {
            name: "a journal naming a user's file as its temporary file",
            setup: |dir| {
                prod(dir);
                put(dir, STATE, STATE_TEXT);
                journal(
                    dir,
                    "committed",
                    serde_json::json!([{
                        "path": "terraform/cells/eu-west-2-prod/cluster.tf",
                        "temp": STATE,
                        "temp_sha256": sha(STATE_TEXT),
                        "temp_size": STATE_TEXT.len(),
                    }]),
                );
            },
            args: &["repair"],
            expect: Expect::Fails {
                code: 1,
                words: &["a name cellgen's apply (pid 4242) does not make", STATE],
            },
        },
        Case {
            name: "a journal of a cellgen that recorded no hashes",
            setup: |dir| {
                prod(dir);
                put(dir, STATE, STATE_TEXT);
                journal(
                    dir,
                    "applying",
                    serde_json::json!([{"path": STATE, "temp": name(STATE, "tmp")}]),
                );
            },
            args: &["repair"],
            expect: Expect::Fails {
                code: 1,
                words: &["gives no sha256", "delete"],
            },
        },
        Case {
            name: "a journal removing a directory that holds none of its files",
            setup: |dir| {
                prod(dir);
                journal(
                    dir,
                    "applying",
                    serde_json::json!([creation("cells/new.yaml", &sha(b"x"))]),
                );
                edit_record(dir, ".cellgen/journal", |j| {
                    j["dirs"] = serde_json::json!(["terraform"]);
                });
            },
            args: &["repair"],
            expect: Expect::Fails {
                code: 1,
                words: &["the directory `terraform`, which holds none of the files"],
            },
        },
        Case {
            name: "a journal naming a path through a link inside the repository",
            setup: |dir| {
                prod(dir);
                std::os::unix::fs::symlink(".", dir.join("here")).unwrap();
                let hash = file_sha(dir, "cellgen.yaml");
                journal(
                    dir,
                    "applying",
                    serde_json::json!([creation("here/cellgen.yaml", &hash)]),
                );
            },
            args: &["repair"],
            expect: Expect::Fails {
                code: 1,
                words: &["`here/cellgen.yaml` leads through the symbolic link here"],
            },
        },
        Case {
            name: "the journal's temporary file planted as a link out: never written through",
            setup: |dir| {
                prod(dir);
                let outside = outside_dir(dir);
                fs::create_dir_all(&outside).unwrap();
                fs::write(outside.join("victim"), "theirs\n").unwrap();
                std::os::unix::fs::symlink(
                    outside.join("victim"),
                    dir.join(".cellgen/journal.tmp"),
                )
                .unwrap();
            },
            args: &["add-component", "kyverno"],
            // The outside file is compared by the table itself.
            expect: Expect::Succeeds(|dir, _| {
                assert!(!dir.join(".cellgen/journal.tmp").exists());
                assert!(!dir.join(".cellgen/journal").exists());
            }),
        },
        Case {
            name: ".cellgen is a link to .git: no journal is written there",
            setup: |dir| {
                git_repo(dir);
                fs::rename(dir.join(".cellgen"), dir.join(".git/cellgen")).unwrap();
                std::os::unix::fs::symlink(".git/cellgen", dir.join(".cellgen")).unwrap();
            },
            args: &["add-component", "kyverno"],
            expect: Expect::Fails {
                code: 1,
                words: &[".cellgen", "symbolic link"],
            },
        },
        // Records.
        Case {
            name: "a cell record naming the untracked terraform.tfstate: new --force keeps it",
            setup: |dir| {
                prod(dir);
                put(dir, STATE, STATE_TEXT);
                claim(dir, RECORD, STATE);
            },
            args: &["new", PROD, "--force"],
            expect: Expect::Succeeds(|dir, out| {
                assert_eq!(fs::read(dir.join(STATE)).unwrap(), STATE_TEXT);
                let said = stdout(out);
                assert!(
                    said.contains(&format!("kept  {STATE}"))
                        && said.contains("cellgen does not generate such a file for cell"),
                    "{said}"
                );
                // Written back without the forged entry.
                assert!(!read(&dir.join(RECORD)).contains(&format!("\"{STATE}\": {{")));
            }),
        },
        Case {
            name: "a cell record naming the untracked terraform.tfstate: upgrade keeps it",
            setup: |dir| {
                prod(dir);
                put(dir, STATE, STATE_TEXT);
                claim(dir, RECORD, STATE);
            },
            args: &["upgrade"],
            expect: Expect::Succeeds(|dir, out| {
                assert_eq!(fs::read(dir.join(STATE)).unwrap(), STATE_TEXT);
                assert!(stdout(out).contains(STATE), "{}", stdout(out));
            }),
        },
        Case {
            name: "a cell record naming a team's own .tf: new --force keeps it",
            setup: |dir| {
                prod(dir);
                let alarms = "terraform/cells/eu-west-2-prod/alarms.tf";
                put(dir, alarms, b"resource \"aws_sns_topic\" \"alarms\" {}\n");
                claim(dir, RECORD, alarms);
            },
            args: &["new", PROD, "--force"],
            expect: Expect::Succeeds(|dir, _| {
                assert!(
                    dir.join("terraform/cells/eu-west-2-prod/alarms.tf")
                        .is_file()
                );
            }),
        },
        Case {
            name: "a generated file linked to .git/config, recorded as untouched: not overwritten",
            setup: |dir| {
                git_repo(dir);
                let outputs = "terraform/cells/eu-west-2-prod/outputs.tf";
                fs::remove_file(dir.join(outputs)).unwrap();
                std::os::unix::fs::symlink("../../../.git/config", dir.join(outputs)).unwrap();
                let hash = file_sha(dir, ".git/config");
                edit_record(dir, RECORD, |r| {
                    r["files"][outputs] = serde_json::json!({"sha256": hash, "cellgen": "0.2.0"});
                });
            },
            args: &["new", PROD, "--force"],
            expect: Expect::Succeeds(|dir, out| {
                assert!(
                    read(&dir.join(".git/config")).contains("[core]"),
                    "{}",
                    read(&dir.join(".git/config"))
                );
                assert!(
                    stdout(out).contains("leads through the symbolic link"),
                    "{}",
                    stdout(out)
                );
            }),
        },
        Case {
            name: "the repository record naming .git/config and cellgen.yaml: upgrade leaves them",
            setup: |dir| {
                git_repo(dir);
                claim(dir, ".cellgen/repository.json", ".git/config");
                claim(dir, ".cellgen/repository.json", "cellgen.yaml");
            },
            args: &["upgrade"],
            expect: Expect::Succeeds(|dir, out| {
                assert!(read(&dir.join(".git/config")).contains("[core]"));
                let said = stdout(out);
                assert_mentions(
                    &said,
                    &[".git/config: .cellgen/repository.json names it, but"],
                );
            }),
        },
        Case {
            name: "a record that is a link to the Terraform state",
            setup: |dir| {
                prod(dir);
                put(dir, STATE, b"{\"cellgen\": \"0.2.0\", \"files\": {}}\n");
                fs::remove_file(dir.join(RECORD)).unwrap();
                std::os::unix::fs::symlink(
                    "../../terraform/cells/eu-west-2-prod/terraform.tfstate",
                    dir.join(RECORD),
                )
                .unwrap();
            },
            args: &["new", PROD, "--force"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    RECORD,
                    "leads through the symbolic link",
                    "a record is a plain file",
                ],
            },
        },
        Case {
            name: "a cell's record linked to another cell's terraform.tfstate: remove-cell keeps it",
            setup: |dir| {
                prod(dir);
                new_cell(dir, &["us-east-1-dev"]);
                put(dir, STATE, STATE_TEXT);
                let record = dir.join(".cellgen/cells/us-east-1-dev.json");
                fs::remove_file(&record).unwrap();
                std::os::unix::fs::symlink(
                    "../../terraform/cells/eu-west-2-prod/terraform.tfstate",
                    record,
                )
                .unwrap();
            },
            args: &["remove-cell", "us-east-1-dev"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    ".cellgen/cells/us-east-1-dev.json",
                    "symbolic link",
                    "a record is a plain file",
                ],
            },
        },
        Case {
            name: "a record naming a path with control characters is shown escaped",
            setup: |dir| {
                prod(dir);
                edit_record(dir, RECORD, |r| {
                    r["files"]["cells/eu-west-2-prod/\u{1b}[2J.yaml"] =
                        serde_json::json!({"sha256": "00", "cellgen": "0.2.0"});
                });
            },
            args: &["new", PROD, "--force"],
            expect: Expect::Succeeds(|_, out| {
                let said = stdout(out);
                assert!(!said.contains('\u{1b}'), "{said:?}");
                assert!(said.contains("\\u{1b}[2J.yaml"), "{said}");
            }),
        },
        Case {
            name: "a record a newer cellgen wrote: upgrade refuses, naming both versions",
            setup: |dir| {
                prod(dir);
                edit_record(dir, RECORD, |r| r["cellgen"] = "99.0.0".into());
            },
            args: &["upgrade"],
            expect: Expect::Fails {
                code: 1,
                words: &[
                    RECORD,
                    "cellgen 99.0.0 wrote",
                    concat!("this is cellgen ", env!("CARGO_PKG_VERSION")),
                    "Nothing was written",
                ],
            },
        },
    ]
}

#[test]
fn forged_journals_and_records() {
    run_table("forged", &cases());
}

/// Git ignores the journal wherever cellgen writes it: `init`, `new` and `upgrade` add
/// `.cellgen/.gitignore` to repositories that lack it, and the lines it lacks to a user's own.
#[test]
fn git_never_sees_the_journal() {
    let ignored = |dir: &Path| {
        [".cellgen/journal", ".cellgen/journal.tmp"]
            .iter()
            .all(|path| {
                std::process::Command::new("git")
                    .arg("-C")
                    .arg(dir)
                    .args(["check-ignore", "-q", path])
                    .env("GIT_CONFIG_NOSYSTEM", "1")
                    .status()
                    .unwrap()
                    .success()
            })
    };
    let run = |dir: &Path, args: &[&str]| {
        let out = cellgen().arg("-C").arg(dir).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    for args in [&["init"][..], &["new", PROD, "--force"], &["upgrade"]] {
        let dir = temp_dir();
        git_repo(dir.path());
        fs::remove_file(dir.path().join(".cellgen/.gitignore")).unwrap();
        put(dir.path(), ".cellgen/.gitignore", b"# ours\n*.bak");
        assert!(!ignored(dir.path()));
        run(dir.path(), args);
        assert!(ignored(dir.path()), "{args:?}");
        assert_eq!(
            read(&dir.path().join(".cellgen/.gitignore")),
            "# ours\n*.bak\n/journal\n/journal.tmp\n",
            "{args:?}"
        );
        // Twice changes nothing.
        let before = tree_hash(dir.path());
        run(dir.path(), args);
        assert_tree_unchanged(&before, &tree_hash(dir.path()), "a second run");
    }
}
