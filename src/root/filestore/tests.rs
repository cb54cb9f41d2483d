use super::*;

fn tempdir() -> (tempfile::TempDir, Utf8PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = Utf8Path::from_path(dir.path()).unwrap().to_path_buf();
    (dir, root)
}

/// The store answers as the direct reads it replaces: `std::fs::read`, `read_to_string` and
/// `symlink_metadata`, on every kind of path.
#[test]
fn answers_as_direct_reads() {
    let (_dir, root) = tempdir();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.tf"), "x = 1\n").unwrap();
    std::fs::create_dir_all(root.join("d/sub")).unwrap();
    std::fs::write(root.join("a.tf"), "a = 1\n").unwrap();
    std::fs::write(root.join("empty"), "").unwrap();
    std::fs::write(root.join("latin1.yaml"), b"k: \xe9t\xe9\n").unwrap();
    std::fs::write(root.join("d/b.yaml"), "b: 2\n").unwrap();
    let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(root.join("big.bin"), &big).unwrap();
    let mut paths = vec![
        "a.tf",
        "empty",
        "latin1.yaml",
        "big.bin",
        "d",
        "d/sub",
        "d/b.yaml",
        "missing.tf",
        "a.tf/under-a-file",
        "d/missing/x",
    ];
    #[cfg(unix)]
    {
        use std::os::unix::fs::symlink;
        symlink("a.tf", root.join("link-inside.tf")).unwrap();
        symlink(
            outside.path().join("secret.tf"),
            root.join("link-outside.tf"),
        )
        .unwrap();
        symlink("nowhere", root.join("dangling.tf")).unwrap();
        symlink("d", root.join("link-dir")).unwrap();
        let fifo = std::ffi::CString::new(root.join("fifo").as_str()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        paths.extend([
            "link-inside.tf",
            "link-outside.tf",
            "dangling.tf",
            "link-dir",
            "link-dir/b.yaml",
            "fifo",
        ]);
    }
    let store = FileStore::new(&root);
    // Twice: the second answer comes from the store.
    for _ in 0..2 {
        for rel in &paths {
            let rel = Utf8Path::new(rel);
            let abs = root.join(rel);
            let lstat =
                std::fs::symlink_metadata(&abs).map(|m| crate::root::disk::kind_of(m.file_type()));
            let kind = store.kind(rel);
            match lstat {
                Ok(k) => assert_eq!(kind.unwrap(), k, "{rel}"),
                Err(e) if is_missing(&e) => assert_eq!(kind.unwrap(), Kind::Missing, "{rel}"),
                Err(e) => assert_eq!(kind.unwrap_err().to_string(), e.to_string(), "{rel}"),
            }
            if rel == "fifo" {
                // Reading a FIFO without a writer waits, as `std::fs::read` does: not asked.
                assert!(store.contents(rel).is_none());
                continue;
            }
            let direct = std::fs::read(&abs);
            match (store.read(rel), &direct) {
                (Ok(got), Ok(want)) => assert_eq!(got.as_slice(), want.as_slice(), "{rel}"),
                (Err(got), Err(want)) => assert_eq!(got.to_string(), want.to_string(), "{rel}"),
                (got, want) => panic!("{rel}: {got:?} against {want:?}"),
            }
            match (store.read_to_string(rel), std::fs::read_to_string(&abs)) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{rel}"),
                (Err(got), Err(want)) => assert_eq!(got.kind(), want.kind(), "{rel}"),
                (got, want) => panic!("{rel}: {got:?} against {want:?}"),
            }
            // Without following: a regular file's contents only.
            let unfollowed = store
                .contents(rel)
                .map(|r| r.map(|b| b.as_ref().clone()).ok());
            let want = (kind_of(&abs) == Some(Kind::File)).then(|| direct.ok());
            assert_eq!(unfollowed, want, "{rel}");
        }
    }
    // Each path opened once (each of the four links followed once more).
    #[cfg(unix)]
    assert_eq!(store.opens(), paths.len() + 4, "{} paths", paths.len());
    assert_eq!(store.paths_opened(), paths.len());
}

fn kind_of(abs: &Utf8Path) -> Option<Kind> {
    let m = std::fs::symlink_metadata(abs).ok()?;
    Some(if m.file_type().is_symlink() {
        Kind::Link
    } else if m.is_file() {
        Kind::File
    } else {
        Kind::Other
    })
}

/// A file that may not be read is a file whose read fails, as `lstat` then `read` found.
#[cfg(unix)]
#[test]
fn an_unreadable_file_is_a_file_whose_read_fails() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, root) = tempdir();
    std::fs::write(root.join("locked"), "x").unwrap();
    std::fs::set_permissions(root.join("locked"), std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read(root.join("locked")).is_ok() {
        return; // root reads anything
    }
    let store = FileStore::new(&root);
    let rel = Utf8Path::new("locked");
    assert_eq!(store.kind(rel).unwrap(), Kind::File);
    let err = store.read(rel).unwrap_err();
    assert_eq!(
        err.to_string(),
        std::fs::read(root.join(rel)).unwrap_err().to_string()
    );
    assert!(store.contents(rel).unwrap().is_err());
}

/// `dir_inside` says what canonicalising the directory and comparing it with the canonical root
/// says, whether or not a link is on the way.
#[test]
fn dir_inside_is_the_canonical_comparison() {
    let (_dir, root) = tempdir();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.join("terraform/cells/a")).unwrap();
    std::fs::create_dir_all(root.join("modules/m")).unwrap();
    std::fs::write(root.join("terraform/file"), "").unwrap();
    let mut dirs = vec![
        "",
        "terraform",
        "terraform/cells/a",
        "terraform/cells/b",
        "terraform/file",
        "modules/m",
    ];
    #[cfg(unix)]
    {
        use std::os::unix::fs::symlink;
        symlink("../modules", root.join("terraform/in")).unwrap();
        symlink(outside.path(), root.join("terraform/out")).unwrap();
        dirs.extend(["terraform/in", "terraform/in/m", "terraform/out"]);
    }
    let store = FileStore::new(&root);
    let real_root = root.canonicalize_utf8().unwrap();
    for rel in dirs {
        let want = root
            .join(rel)
            .canonicalize()
            .is_ok_and(|real| real.starts_with(&real_root) && real.is_dir());
        assert_eq!(store.dir_inside(Utf8Path::new(rel)), want, "{rel}");
    }
}

/// Files whose paths differ only in the cell's name are kept apart (the key is the whole
/// repository-relative path), and a listing is that directory's.
#[test]
fn files_differing_only_in_a_cell_name_are_kept_apart() {
    let (_dir, root) = tempdir();
    let cells = ["eu-west-1-dev", "eu-west-1-dev2", "us-east-1-dev"];
    for (i, cell) in cells.iter().enumerate() {
        let dir = root.join("terraform/cells").join(cell);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("terraform.tfvars"),
            format!("vpc_cidr = \"10.{i}.0.0/16\"\n"),
        )
        .unwrap();
        for n in 0..=i {
            std::fs::write(dir.join(format!("f{n}.tf")), "").unwrap();
        }
    }
    let store = FileStore::new(&root);
    for _ in 0..2 {
        for cell in cells {
            let rel = Utf8Path::new("terraform/cells").join(cell);
            let file = rel.join("terraform.tfvars");
            assert_eq!(
                store.read_to_string(&file).unwrap(),
                std::fs::read_to_string(root.join(&file)).unwrap(),
                "{file}"
            );
            let mut listed: Vec<_> = store.list(&rel).kinds().unwrap();
            listed.sort_by(|a, b| a.0.cmp(&b.0));
            let mut direct: Vec<_> = std::fs::read_dir(root.join(&rel))
                .unwrap()
                .map(|e| (e.unwrap().file_name(), Kind::File))
                .collect();
            direct.sort_by(|a, b| a.0.cmp(&b.0));
            assert_eq!(listed, direct, "{rel}");
        }
    }
    assert_eq!(store.opens(), cells.len());
    assert_eq!(store.listings(), cells.len());
    // A directory that is not there: not opened, and the error `read_dir` gives.
    let missing = store.list(Utf8Path::new("terraform/cells/nope"));
    assert!(!missing.opened);
    assert_eq!(
        missing.error().unwrap().kind(),
        std::fs::read_dir(root.join("terraform/cells/nope"))
            .unwrap_err()
            .kind()
    );
}

/// A name a listed directory does not hold is missing without an open, with the error an
/// open gives; a name it holds (or one in a directory not listed) is still opened.
#[test]
fn a_listed_directory_answers_for_names_it_lacks() {
    let (_dir, root) = tempdir();
    std::fs::create_dir_all(root.join("cells/a")).unwrap();
    std::fs::create_dir_all(root.join("cells/b")).unwrap();
    std::fs::write(root.join("cells/a/kustomization.yaml"), "resources: []\n").unwrap();
    let store = FileStore::new(&root);
    assert!(store.list(Utf8Path::new("cells/a")).opened);
    for name in ["kustomization.yml", "Kustomization"] {
        let rel = Utf8Path::new("cells/a").join(name);
        assert_eq!(store.kind(&rel).unwrap(), Kind::Missing);
        assert_eq!(
            store.read(&rel).unwrap_err().to_string(),
            std::fs::read(root.join(&rel)).unwrap_err().to_string()
        );
    }
    assert_eq!(store.opens(), 0);
    assert!(store.paths().is_empty());
    let present = Utf8Path::new("cells/a/kustomization.yaml");
    assert_eq!(store.kind(present).unwrap(), Kind::File);
    // Not listed: opened.
    assert_eq!(
        store
            .kind(Utf8Path::new("cells/b/kustomization.yml"))
            .unwrap(),
        Kind::Missing
    );
    assert_eq!(store.opens(), 2);
}

/// A directory's listing answers `lstat` and what a path is for its entries as asking does, in
/// a short listing and a long one (found by name), without opening the directories.
#[test]
fn lstat_from_a_listing_answers_as_lstat() {
    let (_dir, root) = tempdir();
    std::fs::create_dir_all(root.join("long")).unwrap();
    for i in 0..40 {
        std::fs::create_dir(root.join(format!("long/d{i}"))).unwrap();
    }
    std::fs::write(root.join("long/f"), "").unwrap();
    std::fs::create_dir(root.join("d")).unwrap();
    std::fs::write(root.join("f"), "").unwrap();
    let mut paths = vec![
        "d",
        "f",
        "long/d7",
        "long/f",
        "long/missing",
        "missing",
        "f/under",
    ];
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("d", root.join("link-dir")).unwrap();
        std::os::unix::fs::symlink("d7", root.join("long/link")).unwrap();
        std::os::unix::fs::symlink("nowhere", root.join("dangling")).unwrap();
        paths.extend(["link-dir", "long/link", "dangling"]);
    }
    let listed = FileStore::new(&root);
    assert!(listed.list(Utf8Path::new("")).opened);
    assert!(listed.list(Utf8Path::new("long")).opened);
    let asked = FileStore::new(&root);
    for rel in paths {
        let rel = Utf8Path::new(rel);
        let (from_listing, from_lstat) = (listed.lstat(rel), asked.lstat(rel));
        match (&from_listing, &from_lstat) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{rel}"),
            (Err(a), Err(b)) => assert_eq!(a.kind(), b.kind(), "{rel}"),
            _ => panic!("{rel}: {from_listing:?} against {from_lstat:?}"),
        }
        // What a path is, and its contents, the same with the listing as with an open.
        match (listed.kind(rel), asked.kind(rel)) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{rel}"),
            (a, b) => assert_eq!(a.map_err(|e| e.kind()), b.map_err(|e| e.kind()), "{rel}"),
        }
        let contents = |store: &FileStore| store.contents(rel).map(|r| r.map_err(|e| e.kind()));
        assert_eq!(contents(&listed), contents(&asked), "{rel}");
        let read = |store: &FileStore| store.read(rel).map_err(|e| e.kind());
        assert_eq!(read(&listed), read(&asked), "{rel}");
    }
    // The directories were told by the listings, not opened (the links and files were).
    let opened = listed.paths();
    for dir in ["d", "long/d7"] {
        assert!(
            !opened.contains(&Utf8PathBuf::from(dir)),
            "{dir} in {opened:?}"
        );
        assert!(asked.paths().contains(&Utf8PathBuf::from(dir)), "{dir}");
    }
    assert!(opened.contains(&Utf8PathBuf::from("long/f")), "{opened:?}");
    // A name the listing does not hold is missing as listed: one made since is not asked for.
    let fresh = FileStore::new(&root);
    assert!(fresh.list(Utf8Path::new("long")).opened);
    std::fs::create_dir(root.join("long/.git")).unwrap();
    assert_eq!(
        fresh.lstat(Utf8Path::new("long/.git")).unwrap(),
        Kind::Missing
    );
    assert_eq!(asked.lstat(Utf8Path::new("long/.git")).unwrap(), Kind::Dir);
}

/// A released file is read again, as it is then, when asked for; a file never read, or read
/// through a planned change, is not opened by a release.
#[test]
fn a_released_file_is_read_again_when_asked_for() {
    let (_dir, root) = tempdir();
    std::fs::write(root.join("a.tf"), "a = 1\n").unwrap();
    std::fs::write(root.join("b.tf"), "b = 1\n").unwrap();
    let store = FileStore::new(&root);
    let a = Utf8Path::new("a.tf");
    assert_eq!(store.read(a).unwrap().as_slice(), b"a = 1\n");
    assert!(store.holds(a));
    store.release(a);
    assert!(!store.holds(a));
    assert_eq!(store.kind(a).unwrap(), Kind::File);
    assert_eq!(store.opens(), 1);
    std::fs::write(root.join("a.tf"), "a = 2\n").unwrap();
    assert_eq!(store.read(a).unwrap().as_slice(), b"a = 2\n");
    assert_eq!(store.contents(a).unwrap().unwrap().as_slice(), b"a = 2\n");
    assert_eq!(store.opens(), 3);
    store.release(Utf8Path::new("b.tf"));
    assert_eq!(store.opens(), 3);
    assert_eq!(store.paths(), vec![Utf8PathBuf::from("a.tf")]);

    let planned = FileStore::planned(&root, [(Utf8Path::new("b.tf"), Some("b = 2\n"))]);
    let b = Utf8Path::new("b.tf");
    assert_eq!(planned.read(b).unwrap().as_slice(), b"b = 2\n");
    planned.release(b);
    assert_eq!(planned.read(b).unwrap().as_slice(), b"b = 2\n");
    assert_eq!(planned.opens(), 0);
}
