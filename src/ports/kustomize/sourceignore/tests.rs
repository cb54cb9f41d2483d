use super::*;

#[test]
fn go_filepath_match() {
    let m = |p: &str, n: &str| go_match(p.as_bytes(), n.as_bytes());
    // Cases from Go's path/filepath match_test.go.
    assert_eq!(m("abc", "abc"), Ok(true));
    assert_eq!(m("*", "abc"), Ok(true));
    assert_eq!(m("*c", "abc"), Ok(true));
    assert_eq!(m("a*", "a"), Ok(true));
    assert_eq!(m("a*", "abc"), Ok(true));
    assert_eq!(m("a*", "ab/c"), Ok(false));
    assert_eq!(m("a*/b", "abc/b"), Ok(true));
    assert_eq!(m("a*b*c*d*e*/f", "axbxcxdxe/f"), Ok(true));
    assert_eq!(m("a*b?c*x", "abxbbxdbxebxczzx"), Ok(true));
    assert_eq!(m("a*b?c*x", "abxbbxdbxebxczzy"), Ok(false));
    assert_eq!(m("ab[c]", "abc"), Ok(true));
    assert_eq!(m("ab[b-d]", "abc"), Ok(true));
    assert_eq!(m("ab[e-g]", "abc"), Ok(false));
    assert_eq!(m("ab[^c]", "abc"), Ok(false));
    assert_eq!(m("ab[^b-d]", "abc"), Ok(false));
    assert_eq!(m("ab[^e-g]", "abc"), Ok(true));
    assert_eq!(m("a\\*b", "a*b"), Ok(true));
    assert_eq!(m("a\\*b", "ab"), Ok(false));
    assert_eq!(m("a?b", "a☺b"), Ok(true));
    assert_eq!(m("a[^a]b", "a☺b"), Ok(true));
    assert_eq!(m("a???b", "a☺b"), Ok(false));
    assert_eq!(m("[a-ζ]*", "α"), Ok(true));
    assert_eq!(m("*[a-ζ]", "A"), Ok(false));
    assert_eq!(m("a?b", "a/b"), Ok(false));
    assert_eq!(m("a*b", "a/b"), Ok(false));
    assert_eq!(m("[\\]a]", "]"), Ok(true));
    assert_eq!(m("[\\-]", "-"), Ok(true));
    assert_eq!(m("[x\\-]", "z"), Ok(false));
    assert_eq!(m("[\\-x]", "a"), Ok(false));
    assert_eq!(m("[]a]", "]"), Err(()));
    assert_eq!(m("[-]", "-"), Err(()));
    assert_eq!(m("[x-]", "x"), Err(()));
    assert_eq!(m("[a-b-c]", "a"), Err(()));
    assert_eq!(m("\\", "a"), Err(()));
    assert_eq!(m("[x-]", "z"), Err(()));
    assert_eq!(m("[-x]", "a"), Err(()));
    assert_eq!(m("[", "a"), Err(()));
    assert_eq!(m("[^", "a"), Err(()));
    assert_eq!(m("[^bc", "a"), Err(()));
    assert_eq!(m("a[", "a"), Err(()));
    assert_eq!(m("a[", "ab"), Err(()));
    assert_eq!(m("a[", "x"), Err(()));
    assert_eq!(m("a/b[", "x"), Err(()));
    assert_eq!(m("*x", "xxx"), Ok(true));
    // The direct answers for plain names and `*suffix`, against the general matcher's.
    assert_eq!(m("", ""), Ok(true));
    assert_eq!(m("", "a"), Ok(false));
    assert_eq!(m("abc", "abcd"), Ok(false));
    assert_eq!(m("*.tar.gz", "x.tar.gz"), Ok(true));
    assert_eq!(m("*.tar.gz", ".tar.gz"), Ok(true));
    assert_eq!(m("*.tar.gz", "x.tar.gzip"), Ok(false));
    assert_eq!(m("*/b", "a/b"), Ok(true));
    assert_eq!(m("*/b", "a/c/b"), Ok(false));
    assert_eq!(m("*", "a/b"), Ok(false));
    for (p, n) in [
        ("abc", "abc"),
        ("abc", "abd"),
        ("*.png", "a.png"),
        ("*.png", "a/b.png"),
        ("*.png", "png"),
        ("*b", "a/b"),
    ] {
        let general = |p: &[u8], n: &[u8]| {
            // The general path: a pattern with a class that matches only its own byte.
            let mut q = Vec::new();
            for b in p {
                if *b == b'*' {
                    q.push(b'*')
                } else {
                    q.extend([b'[', *b, b']'])
                }
            }
            go_match(&q, n)
        };
        assert_eq!(m(p, n), general(p.as_bytes(), n.as_bytes()), "{p} {n}");
    }
}

#[test]
fn components_split_as_path_does() {
    for path in [
        "",
        ".",
        "./",
        "./a",
        "a/./b",
        "a//b/",
        "/",
        "/a",
        "//a/./b/.",
        "a/..",
        "..",
        ".a/b.",
        "a/b/c.yaml",
    ] {
        let std: Vec<&[u8]> = Utf8Path::new(path)
            .components()
            .map(|c| c.as_os_str().as_encoded_bytes())
            .collect();
        assert_eq!(components(path), std, "{path:?}");
    }
}

proptest::proptest! {
    #[test]
    fn fast_parts_match_as_go_does(
        part in "[*]?[a-c.?*\\\\\\[\\]]{0,4}",
        name in "[a-c.*?\\[\\]]{0,5}",
    ) {
        let p = Pattern::parse(part.as_bytes(), &[], Origin::Default);
        if !p.parts[0].contains(&b'/') {
            proptest::prop_assert_eq!(
                p.part_match(0, name.as_bytes()),
                go_match(&p.parts[0], name.as_bytes())
            );
        }
    }
}

proptest::proptest! {
    #[test]
    fn the_index_finds_the_pattern_each_pattern_tried_finds(
        lines in proptest::collection::vec(
            "!?(/|\\*\\*/)?(a|b|ab|\\*|\\*b|a\\*|\\?b|\\[ab\\]|\\.git)(/(a|b|\\*|\\*\\*))?/?",
            0..8,
        ),
        scoped in proptest::collection::vec(0usize..3, 0..8),
        path in "(a|b|ab|bb|\\.git|x)(/(a|b|ab|bb|\\.git|x)){0,3}",
        is_dir: bool,
    ) {
        let domains: [&[Vec<u8>]; 3] = [&[], &[b"a".to_vec()], &[b"a".to_vec(), b"b".to_vec()]];
        let patterns = lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let domain = domains[scoped.get(i).copied().unwrap_or(0)];
                Pattern::parse(l.as_bytes(), domain, Origin::Default)
            })
            .collect();
        let m = Matcher::new(patterns);
        let path = Utf8Path::new(&path);
        proptest::prop_assert_eq!(
            m.excluded_by(path, is_dir).map(|p| &p.text),
            m.excluded_by_each(path, is_dir).map(|p| &p.text)
        );
    }
}

fn matcher(files: &[(&str, &str)]) -> (tempfile::TempDir, Matcher) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let root = Utf8Path::from_path(dir.path()).unwrap();
    let m = load(&*crate::ports::kustomize::files::tests::Disk::files(), root).unwrap();
    (dir, m)
}

fn excluded(m: &Matcher, path: &str) -> bool {
    m.excluded_by(Utf8Path::new(path), false).is_some()
}

#[test]
fn defaults_apply_only_without_patterns() {
    let (_d, m) = matcher(&[("a/keep.yaml", "")]);
    for path in [
        "logo.png",
        "a/b/logo.png",
        ".github/workflows/ci.yaml",
        "a/cloudbuild.yaml",
        "a/.sops.yaml",
        ".git/config",
        "a/.gitignore",
    ] {
        assert!(excluded(&m, path), "{path}");
    }
    assert!(!excluded(&m, "a/keep.yaml"));
    assert!(!excluded(&m, "a/cloudbuild.yml"));
    // Any pattern replaces the defaults (but not the VCS ones).
    let (_d, m) = matcher(&[(".sourceignore", "# only comments count as none\n*.md\n")]);
    assert!(excluded(&m, "README.md"));
    assert!(!excluded(&m, "logo.png"));
    assert!(!excluded(&m, ".github/workflows/ci.yaml"));
    assert!(excluded(&m, ".gitattributes"));
}

#[test]
fn scoped_patterns_and_negation() {
    let (_d, m) = matcher(&[
        (
            ".sourceignore",
            "/terraform/\napps/*.yaml\n!apps/keep.yaml\n",
        ),
        ("sub/.sourceignore", "secret.yaml\r\n"),
        ("x/.sourceignore", "**/deep/\n"),
    ]);
    assert!(excluded(&m, "terraform/main.tf"));
    assert!(!excluded(&m, "a/terraform/main.tf"));
    assert!(excluded(&m, "apps/a.yaml"));
    assert!(!excluded(&m, "apps/keep.yaml"));
    assert!(excluded(&m, "apps/a.yaml/b"));
    assert!(excluded(&m, "sub/secret.yaml"));
    assert!(excluded(&m, "sub/z/secret.yaml"));
    assert!(!excluded(&m, "secret.yaml"));
    assert!(excluded(&m, "x/a/deep/f.yaml"));
    assert!(!excluded(&m, "deep/f.yaml"));
    let by = m
        .excluded_by(Utf8Path::new("sub/secret.yaml"), false)
        .unwrap();
    assert_eq!(
        by.origin,
        Origin::File {
            path: "sub/.sourceignore".into(),
            line: 1
        }
    );
    // A directory-only pattern does not match a file of that name.
    let (_d, m) = matcher(&[(".sourceignore", "build/\n")]);
    assert!(!excluded(&m, "build"));
    assert!(m.excluded_by(Utf8Path::new("build"), true).is_some());
    assert!(excluded(&m, "build/x.yaml"));
}
