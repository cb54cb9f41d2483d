use super::*;
use git_for_test as git;

/// A file's object id is Git's, in either hash, so an unchanged file is never read from Git.
#[test]
fn object_ids_are_gits_and_reads_replay_by_them() {
    for format in ["sha1", "sha256"] {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path())
            .unwrap()
            .canonicalize_utf8()
            .unwrap();
        git(&root, &["init", "-q", &format!("--object-format={format}")]);
        std::fs::write(root.join("a.yaml"), "a: 1\n").unwrap();
        std::fs::write(root.join("b.yaml"), "b: 1\n").unwrap();
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", "one"]);
        let oid = git(&root, &["hash-object", "a.yaml"]);
        assert_eq!(object_id(b"a: 1\n", oid.trim().len()).unwrap(), oid.trim());
        std::fs::write(root.join("b.yaml"), "b: 2\n").unwrap();
        let (disk, recorder) = Source::disk(&root).recorded();
        for name in ["a.yaml", "b.yaml", "c.yaml"] {
            let _ = disk.read(&root, &root.join(name));
        }
        let reads = recorder.reads();
        let tree = Source::Tree(Arc::new(GitTree::load(&root, "HEAD").unwrap()));
        assert!(tree.replays(&reads[..1]), "{format}");
        assert!(!tree.replays(&reads[1..2]), "{format}: b.yaml changed");
        assert!(
            !tree.replays(&reads[2..]),
            "{format}: c.yaml is missing on both, with other messages"
        );
        // Nothing was read from Git for that: the first read starts `git cat-file`.
        let Source::Tree(t) = &tree else {
            unreachable!()
        };
        assert!(t.reader.lock().unwrap().is_none());
        assert_eq!(tree.read(&root, &root.join("b.yaml")).unwrap(), b"b: 1\n");
        assert!(t.reader.lock().unwrap().is_some());
    }
}

/// A path is inside a submodule when a directory above it (not the root) holds a `.git`: found
/// by the path's text as `Path::ancestors` finds it, for every spelling.
#[test]
fn a_path_is_in_a_submodule_as_its_ancestors_say() {
    let dir = tempfile::tempdir().unwrap();
    let root = Utf8Path::from_path(dir.path()).unwrap();
    std::fs::create_dir_all(root.join("a/sub/.git")).unwrap();
    std::fs::create_dir_all(root.join("a/plain/deep")).unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let files = FileStore::new(root);
    let by_ancestors = |rel: &Utf8Path| {
        rel.ancestors()
            .skip(1)
            .take_while(|a| !a.as_str().is_empty())
            .any(|a| is_submodule(&files, a))
    };
    for rel in [
        "a/sub/x.yaml",
        "a/sub/deep/x.yaml",
        "a/sub",
        "a/plain/deep/x.yaml",
        "a/plain",
        "x.yaml",
        "",
        "a/./sub/x.yaml",
        "a//sub/x.yaml",
        "./a/sub/x.yaml",
    ] {
        let rel = Utf8Path::new(rel);
        assert_eq!(in_submodule(&files, rel), by_ancestors(rel), "{rel}");
    }
    assert!(in_submodule(&files, Utf8Path::new("a/sub/deep/x.yaml")));
    assert!(!in_submodule(&files, Utf8Path::new("a/plain/deep/x.yaml")));
}
