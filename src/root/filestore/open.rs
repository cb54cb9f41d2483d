//! Opening and reading one file for the store: without following a link at the end, the size
//! `fstat` gave read at once, and the errors the store keeps for what cannot be read.

use camino::Utf8Path;
use std::io::{self, Read};
use std::sync::Arc;

use super::{Bytes, Failure, Kind};

/// `std::fs::symlink_metadata`'s kind, a path that is not there `Missing`.
pub(super) fn lstat(path: &Utf8Path) -> io::Result<Kind> {
    match std::fs::symlink_metadata(path) {
        Ok(m) => Ok(crate::root::disk::kind_of(m.file_type())),
        Err(e) if is_missing(&e) => Ok(Kind::Missing),
        Err(e) => Err(e),
    }
}

pub(super) fn is_missing(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// What opening a name a directory does not hold fails with.
#[cfg(unix)]
pub(super) fn not_found() -> Failure {
    Failure::Os(libc::ENOENT)
}

#[cfg(not(unix))]
pub(super) fn not_found() -> Failure {
    Failure::Other(io::ErrorKind::NotFound, "not found".into())
}

#[cfg(unix)]
pub(super) fn is_a_directory() -> io::Error {
    io::Error::from_raw_os_error(libc::EISDIR)
}

#[cfg(not(unix))]
pub(super) fn is_a_directory() -> io::Error {
    io::Error::new(io::ErrorKind::IsADirectory, "is a directory")
}

#[cfg(unix)]
pub(super) fn open_nofollow(path: &Utf8Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

/// Without `O_NOFOLLOW`: a link is found by `lstat` first.
#[cfg(not(unix))]
pub(super) fn open_nofollow(path: &Utf8Path) -> io::Result<std::fs::File> {
    if std::fs::symlink_metadata(path)?.file_type().is_symlink() {
        return Err(io::Error::other("a symbolic link"));
    }
    std::fs::File::open(path)
}

/// Reads the size `fstat` gave into a buffer of that size, neither zeroed first nor with the
/// size hint `Read::read_to_end` asks the file system for, and without a second read to see
/// the end: the file as it was when it was opened. A file that reports no size is read to the
/// end.
pub(super) fn read_all(file: &mut std::fs::File, len: u64) -> io::Result<Bytes> {
    let mut buf = Vec::new();
    if len == 0 {
        file.read_to_end(&mut buf)?;
        return Ok(Arc::new(buf));
    }
    buf.reserve_exact(usize::try_from(len).map_err(io::Error::other)?);
    while buf.len() < buf.capacity() {
        match read_into_spare(file, &mut buf) {
            // Shorter than `fstat` said: it shrank since.
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(Arc::new(buf))
}

/// One `read(2)` into the buffer's spare room. `Read::read_to_end` on a `take` reads at most
/// 8 KiB at a time (two reads for a larger file), and `Read::read` needs the room zeroed first.
#[cfg(unix)]
pub(super) fn read_into_spare(file: &std::fs::File, buf: &mut Vec<u8>) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    let spare = buf.spare_capacity_mut();
    // SAFETY: read(2) writes at most `spare.len()` bytes at the start of the spare room, and
    // the length grows by exactly the number it reports written.
    let read = unsafe { libc::read(file.as_raw_fd(), spare.as_mut_ptr().cast(), spare.len()) };
    let read = usize::try_from(read).map_err(|_| io::Error::last_os_error())?;
    // SAFETY: those `read` bytes were just written, within the capacity.
    unsafe { buf.set_len(buf.len() + read) };
    Ok(read)
}

#[cfg(not(unix))]
pub(super) fn read_into_spare(file: &mut std::fs::File, buf: &mut Vec<u8>) -> io::Result<usize> {
    let room = buf.capacity() - buf.len();
    file.take(room as u64).read_to_end(buf)
}
