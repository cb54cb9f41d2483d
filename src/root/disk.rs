//! The file system, as the rest of cellgen may touch it: every call to `std::fs` outside
//! `src/root/` goes through here (`tests/file_layer.rs` holds that), so one place answers what
//! cellgen reads and writes and how. Containment in the repository root is the caller's
//! `fsguard::Root` / `FileStore` (repository paths) or a path the user named (a flag, an
//! environment variable); here every read is bounded ([`MAX_READ`]): a file, a device or a FIFO
//! that never ends (`/dev/zero`) is an error, not a read until memory runs out.

use std::fs::{self, OpenOptions};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

pub use std::fs::{File, Metadata, ReadDir, TryLockError};

/// The most cellgen reads of one file (64 MiB): far above any repository file it works with.
pub const MAX_READ: u64 = 64 << 20;

/// The bytes of `path` (following a link, like `std::fs::read`), at most [`MAX_READ`]: a
/// longer file is an `InvalidData` error saying so.
pub fn read(path: impl AsRef<Path>) -> io::Result<Vec<u8>> {
    read_at_most(path.as_ref(), MAX_READ)
}

/// [`read`], as UTF-8 text (`InvalidData` otherwise, as `std::fs::read_to_string`).
pub fn read_to_string(path: impl AsRef<Path>) -> io::Result<String> {
    String::from_utf8(read(path)?).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// The bytes of `path`, refused past `limit`.
pub fn read_at_most(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = File::open(path)?;
    let hint = file.metadata().map_or(0, |m| m.len()).min(limit);
    let mut bytes = Vec::with_capacity(hint as usize);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "longer than the {} MiB cellgen reads of one file",
                limit >> 20
            ),
        ));
    }
    Ok(bytes)
}

pub fn write(path: impl AsRef<Path>, bytes: impl AsRef<[u8]>) -> io::Result<()> {
    fs::write(path, bytes)
}

/// Appends `bytes` to `path`, creating it.
pub fn append(path: impl AsRef<Path>, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?
        .write_all(bytes)
}

/// A new file at `path` (an error when anything is there, a link included), with permission
/// bits `mode` where the platform has them.
pub fn create_new(path: impl AsRef<Path>, mode: Option<u32>) -> io::Result<File> {
    let file = OpenOptions::new().write(true).create_new(true).open(path)?;
    #[cfg(unix)]
    if let Some(mode) = mode {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(fs::Permissions::from_mode(mode))?;
    }
    #[cfg(not(unix))]
    let _ = mode;
    Ok(file)
}

/// `path` opened to read (a lock's handle, a file or directory to flush).
pub fn open(path: impl AsRef<Path>) -> io::Result<File> {
    File::open(path)
}

pub fn create_dir(path: impl AsRef<Path>) -> io::Result<()> {
    fs::create_dir(path)
}

pub fn create_dir_all(path: impl AsRef<Path>) -> io::Result<()> {
    fs::create_dir_all(path)
}

/// A directory only its owner may enter (where the platform has modes).
pub fn create_private_dir(path: impl AsRef<Path>) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(path)
}

pub fn remove_file(path: impl AsRef<Path>) -> io::Result<()> {
    fs::remove_file(path)
}

/// Removes an empty directory.
pub fn remove_dir(path: impl AsRef<Path>) -> io::Result<()> {
    fs::remove_dir(path)
}

/// Removes a directory and what it holds (cellgen's own temporary directories only).
pub fn remove_dir_all(path: impl AsRef<Path>) -> io::Result<()> {
    fs::remove_dir_all(path)
}

pub fn rename(from: impl AsRef<Path>, to: impl AsRef<Path>) -> io::Result<()> {
    fs::rename(from, to)
}

pub fn hard_link(from: impl AsRef<Path>, to: impl AsRef<Path>) -> io::Result<()> {
    fs::hard_link(from, to)
}

pub fn copy(from: impl AsRef<Path>, to: impl AsRef<Path>) -> io::Result<u64> {
    fs::copy(from, to)
}

/// What `path` is, a symbolic link at its end not followed.
pub fn symlink_metadata(path: impl AsRef<Path>) -> io::Result<Metadata> {
    fs::symlink_metadata(path)
}

/// What `path` is, a link followed.
pub fn metadata(path: impl AsRef<Path>) -> io::Result<Metadata> {
    fs::metadata(path)
}

/// Whether anything is at `path`, a dangling link included.
pub fn exists(path: impl AsRef<Path>) -> bool {
    fs::symlink_metadata(path).is_ok()
}

/// Whether `path` is a directory (a link to one followed).
pub fn is_dir(path: impl AsRef<Path>) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_dir())
}

/// Whether `path` is a regular file (a link to one followed).
pub fn is_file(path: impl AsRef<Path>) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file())
}

pub fn read_dir(path: impl AsRef<Path>) -> io::Result<ReadDir> {
    fs::read_dir(path)
}

pub fn canonicalize(path: impl AsRef<Path>) -> io::Result<PathBuf> {
    fs::canonicalize(path)
}

/// Flushes a directory's entries (a rename in it) to disk; where a directory cannot be opened
/// or flushed (some platforms), nothing.
pub fn sync_dir(path: impl AsRef<Path>) {
    if let Ok(dir) = File::open(path) {
        let _ = dir.sync_all();
    }
}

/// What a directory entry or `lstat` says a path is (never `Missing`); here, not in
/// `crate::paths`, since it takes what the file system answered.
pub fn kind_of(t: std::fs::FileType) -> crate::paths::Kind {
    use crate::paths::Kind;
    if t.is_symlink() {
        Kind::Link
    } else if t.is_dir() {
        Kind::Dir
    } else if t.is_file() {
        Kind::File
    } else {
        Kind::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that never ends is refused at the limit instead of filling memory.
    #[test]
    fn reads_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        fs::write(&path, vec![b'a'; 100]).unwrap();
        assert_eq!(read_at_most(&path, 100).unwrap().len(), 100);
        let err = read_at_most(&path, 99).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        #[cfg(target_os = "linux")]
        {
            let err = read_at_most(Path::new("/dev/zero"), 1 << 20).unwrap_err();
            assert!(err.to_string().contains("longer than the 1 MiB"), "{err}");
        }
    }
}
