//! The journal's own tests: every step an apply can be stopped at undoes to the original.

use super::*;
use std::fs;

fn change(path: &str, contents: Option<&str>, existed: bool) -> Change {
    Change {
        path: path.into(),
        contents: contents.map(|c| c.as_bytes().to_vec()),
        mode: None,
        existed,
    }
}

fn listing(root: &Utf8Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in walk(root) {
        let rel = entry.strip_prefix(root).unwrap().to_string();
        let kind = if entry.is_dir() {
            "/".to_string()
        } else {
            format!("={}", fs::read_to_string(&entry).unwrap())
        };
        out.push(format!("{rel}{kind}"));
    }
    out.sort();
    out
}

fn walk(dir: &Utf8Path) -> Vec<Utf8PathBuf> {
    let mut out = Vec::new();
    for entry in dir.read_dir_utf8().unwrap() {
        let path = entry.unwrap().into_path();
        if path.is_dir() {
            out.extend(walk(&path));
        }
        out.push(path);
    }
    out
}

#[test]
fn every_interruption_point_of_a_record_undoes_to_the_original() {
    let changes = [
        change("a.txt", Some("new a"), true),
        change("gone.txt", None, true),
        change("d/e/new.txt", Some("created"), false),
    ];
    // Replays the apply step by step, and at each step undoes from the disk alone.
    for stop in 0..=9 {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        fs::write(root.join("a.txt"), "old a").unwrap();
        fs::write(root.join("gone.txt"), "bye").unwrap();
        let original = listing(root);
        let record = plan_record(root, &changes).unwrap();
        let mut step = 0;
        let mut go = |f: &mut dyn FnMut()| {
            if step < stop {
                f();
            }
            step += 1;
        };
        go(&mut || fs::create_dir(root.join(JOURNAL_DIR)).unwrap());
        go(&mut || write_record(root, &record).unwrap());
        go(&mut || {
            for d in record.dirs.iter().skip(1) {
                fs::create_dir(root.join(d)).unwrap();
            }
        });
        for (op, c) in record.ops.iter().zip(&changes) {
            if let (Some(t), Some(bytes)) = (&op.temp, &c.contents) {
                let t = root.join(t);
                let bytes = bytes.clone();
                go(&mut || stage(&t, &bytes, None).unwrap());
            }
        }
        go(&mut || {
            make_backup(
                &root.join("a.txt"),
                &root.join(record.ops[0].backup.as_ref().unwrap()),
            )
            .unwrap()
        });
        for op in &record.ops {
            let op = op.clone();
            go(&mut || match (&op.temp, &op.backup) {
                (Some(t), _) => fs::rename(root.join(t), root.join(&op.path)).unwrap(),
                (None, Some(b)) => fs::rename(root.join(&op.path), root.join(b)).unwrap(),
                _ => {}
            });
        }
        let recovered = recover(root).unwrap();
        assert_eq!(recovered.is_some(), stop >= 2, "stop {stop}");
        if stop == 1 {
            // Only the journal directory exists: that is all a kill can leave so early.
            fs::remove_dir(root.join(JOURNAL_DIR)).unwrap();
        }
        assert_eq!(listing(root), original, "after stopping at step {stop}");
    }
}

#[test]
fn a_committed_journal_is_finished() {
    let dir = tempfile::tempdir().unwrap();
    let root = Utf8Path::from_path(dir.path()).unwrap();
    fs::create_dir_all(root.join("x/y")).unwrap();
    fs::write(root.join("x/y/gone.txt"), "bye").unwrap();
    fs::write(root.join("keep.txt"), "old").unwrap();
    let changes = [
        change("x/y/gone.txt", None, true),
        change("keep.txt", Some("new"), true),
    ];
    let mut record = plan_record(root, &changes).unwrap();
    fs::create_dir(root.join(JOURNAL_DIR)).unwrap();
    fs::write(root.join(record.ops[1].temp.as_ref().unwrap()), "new").unwrap();
    make_backup(
        &root.join("keep.txt"),
        &root.join(record.ops[1].backup.as_ref().unwrap()),
    )
    .unwrap();
    fs::rename(
        root.join("x/y/gone.txt"),
        root.join(record.ops[0].backup.as_ref().unwrap()),
    )
    .unwrap();
    fs::rename(
        root.join(record.ops[1].temp.as_ref().unwrap()),
        root.join("keep.txt"),
    )
    .unwrap();
    record.state = State::Committed;
    write_record(root, &record).unwrap();
    let recovered = recover(root).unwrap().unwrap();
    assert!(!recovered.rolled_back);
    assert_eq!(listing(root), ["keep.txt=new"]);
}

#[test]
fn a_temporary_file_cut_short_while_staging_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let root = Utf8Path::from_path(dir.path()).unwrap();
    fs::write(root.join("a.txt"), "old a").unwrap();
    let changes = [change("a.txt", Some("new content of a"), true)];
    let record = plan_record(root, &changes).unwrap();
    fs::create_dir(root.join(JOURNAL_DIR)).unwrap();
    write_record(root, &record).unwrap();
    // A kill in the middle of the write: the first bytes only.
    fs::write(root.join(record.ops[0].temp.as_ref().unwrap()), "new con").unwrap();
    assert!(recover(root).unwrap().unwrap().rolled_back);
    assert_eq!(listing(root), ["a.txt=old a"]);
}

#[test]
fn a_target_changed_since_the_crash_is_not_touched() {
    let dir = tempfile::tempdir().unwrap();
    let root = Utf8Path::from_path(dir.path()).unwrap();
    let changes = [change("created.txt", Some("cellgen's"), false)];
    let record = plan_record(root, &changes).unwrap();
    fs::create_dir(root.join(JOURNAL_DIR)).unwrap();
    write_record(root, &record).unwrap();
    // Renamed into place, then (after the crash) replaced by someone else's file.
    fs::write(root.join("created.txt"), "someone else's").unwrap();
    let before = listing(root);
    let err = recover(root).unwrap_err().to_string();
    assert!(
        err.contains("does not prove it is cellgen's own")
            && err.contains("the target `created.txt` is sha256"),
        "{err}"
    );
    assert_eq!(listing(root), before);
    // Once it is as cellgen staged it, the creation is undone.
    fs::write(root.join("created.txt"), "cellgen's").unwrap();
    assert!(recover(root).unwrap().unwrap().rolled_back);
    assert_eq!(listing(root), Vec::<String>::new());
}
