//! The port's own tests read a directory of fixtures through [`Disk`], plain `std::fs`: the port
//! may not import the file layer (`root::source::Source`, which the commands hand it), and what
//! these tests check is the builder over whatever [`BuildFiles`] answers. The integration tests
//! (tests/kustomize_*.rs, tests/check) build through the file layer's source.

use super::*;

/// A directory on disk, read directly; its scratch copies go where the system's go.
pub(crate) struct Disk;

impl Disk {
    pub(crate) fn files() -> Arc<dyn BuildFiles> {
        Arc::new(Disk)
    }
}

fn kind_of(abs: &Utf8Path) -> io::Result<Kind> {
    match std::fs::symlink_metadata(abs) {
        Ok(m) if m.file_type().is_symlink() => Ok(Kind::Link),
        Ok(m) if m.is_dir() => Ok(Kind::Dir),
        Ok(m) if m.is_file() => Ok(Kind::File),
        Ok(_) => Ok(Kind::Other),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(Kind::Missing)
        }
        Err(e) => Err(e),
    }
}

impl BuildFiles for Disk {
    fn canonical_root(&self, root: &Utf8Path) -> io::Result<Utf8PathBuf> {
        root.canonicalize_utf8()
    }

    fn kind(&self, _root: &Utf8Path, abs: &Utf8Path) -> io::Result<Kind> {
        kind_of(abs)
    }

    fn kind_on_the_way(&self, _root: &Utf8Path, abs: &Utf8Path) -> io::Result<Kind> {
        kind_of(abs)
    }

    fn read(&self, _root: &Utf8Path, abs: &Utf8Path) -> io::Result<Vec<u8>> {
        std::fs::read(abs)
    }

    fn list(&self, _root: &Utf8Path, abs: &Utf8Path) -> io::Result<Vec<(OsString, Kind)>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(abs)? {
            let entry = entry?;
            let path = Utf8PathBuf::from_path_buf(entry.path())
                .map_err(|p| io::Error::other(format!("{} is not UTF-8", p.display())))?;
            out.push((entry.file_name(), kind_of(&path)?));
        }
        Ok(out)
    }

    fn scratch(&self) -> &dyn Scratch {
        self
    }
}

impl Scratch for Disk {
    fn is_file(&self, path: &Path) -> bool {
        path.is_file()
    }

    fn create_private_dir(&self, dir: &Utf8Path) -> io::Result<()> {
        std::fs::create_dir(dir)
    }

    fn create_dir_all(&self, dir: &Utf8Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)
    }

    fn write(&self, file: &Utf8Path, bytes: &[u8]) -> io::Result<()> {
        std::fs::write(file, bytes)
    }

    fn remove_dir_all(&self, dir: &Utf8Path) -> io::Result<()> {
        std::fs::remove_dir_all(dir)
    }
}

fn fixture() -> (tempfile::TempDir, Utf8PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = Utf8Path::from_path(dir.path()).unwrap().to_path_buf();
    std::fs::write(root.join("a"), "x").unwrap();
    (dir, root)
}

/// Reads inside a recording are seen by an enclosing one too, in the order they were made,
/// with what they saw (a missing file's error included).
#[test]
fn recordings_nest() {
    let (_dir, root) = fixture();
    let (outer_files, outer) = recorded(Disk::files());
    let (inner_files, inner) = recorded(outer_files.clone());
    inner_files.read(&root, &root.join("a")).unwrap();
    inner_files.kind(&root, &root.join("b")).unwrap();
    outer_files.list(&root, &root).unwrap();
    assert_eq!(inner.reads().len(), 2);
    assert_eq!(outer.reads()[..2], inner.reads()[..]);
    assert!(matches!(
        &inner.reads()[0],
        Access::Read { seen: Ok(bytes), .. } if bytes == b"x"
    ));
    assert!(matches!(
        &inner.reads()[1],
        Access::Kind {
            seen: Ok(Kind::Missing),
            ..
        }
    ));
    assert!(
        matches!(&outer.reads()[2], Access::ReadDir { seen: Ok(entries), .. } if entries.len() == 1)
    );
    // A source that does not record keeps nothing: the recording is the caller's alone.
    let (_, unused) = recorded(Disk::files());
    Disk.read(&root, &root.join("a")).unwrap();
    assert!(unused.reads().is_empty());
}

/// An answer the caller remembers reaches every enclosing recording, and none where nothing
/// records.
#[test]
fn notes_reach_every_recording() {
    let (_dir, root) = fixture();
    let (outer_files, outer) = recorded(Disk::files());
    let (inner_files, inner) = recorded(outer_files);
    let access = || Access::Kind {
        root: root.clone(),
        abs: root.join("d"),
        seen: Ok(Kind::Dir),
    };
    inner_files.note(&access);
    assert_eq!(inner.reads(), vec![access()]);
    assert_eq!(outer.reads(), vec![access()]);
    Disk.note(&|| panic!("a source that does not record builds no note"));
}
