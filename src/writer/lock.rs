//! The repository lock: one writer at a time, readers share.
//!
//! The lock is `flock(2)` on the repository root directory itself, so it needs no file (nothing
//! is left in the tree, even by a killed process) and the kernel releases it when its holder
//! exits, however it exits. A writer (a command that may write) takes it exclusively; a reader
//! (`check`, `render`, `list`, any `--dry-run`) shares it, so it never sees a half-applied plan. A
//! second process waits up to `CELLGEN_LOCK_WAIT` seconds (default 5), then fails naming the
//! holder: its pid, command line and start time, read from /proc/locks on Linux.
//!
//! Commands never call this directly: `commands::run` takes the lock for the command's access
//! (see `commands::access`) before the command reads anything, repairs an interrupted apply
//! (`crate::writer::journal`), and holds it until the command has finished. `Plan::apply` refuses to run
//! without the write lock on its root.

use crate::root::disk::{self, File, TryLockError};
use camino::{Utf8Path, Utf8PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use crate::error::CellgenError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads the repository (shared).
    Read,
    /// May write to it (exclusive).
    Write,
}

/// Default wait for a lock another process holds.
const DEFAULT_WAIT: Duration = Duration::from_secs(5);
const POLL: Duration = Duration::from_millis(20);

/// Roots this process holds locked, canonical, with the access.
static HELD: Mutex<Vec<(Utf8PathBuf, Access)>> = Mutex::new(Vec::new());

/// A held lock; dropping it releases it.
#[derive(Debug)]
pub struct RepoLock {
    file: File,
    root: Utf8PathBuf,
    access: Access,
}

impl RepoLock {
    pub fn access(&self) -> Access {
        self.access
    }

    pub fn root(&self) -> &Utf8Path {
        &self.root
    }
}

impl Drop for RepoLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
        if let Ok(mut held) = HELD.lock()
            && let Some(i) = held
                .iter()
                .position(|(r, a)| r == &self.root && *a == self.access)
        {
            held.remove(i);
        }
    }
}

/// The environment variable that sets how long to wait, and the most it may say (a day: a
/// larger wait is a mistake, and `Duration` cannot hold every float).
pub const WAIT_VARIABLE: &str = "CELLGEN_LOCK_WAIT";
const MAX_WAIT_SECS: f64 = 86_400.0;

/// How long to wait for a held lock: `CELLGEN_LOCK_WAIT` seconds (0 to 86400, fractions
/// allowed), else 5. Any other value is an error naming the variable: a typo must not turn into
/// the default silently, nor a huge number into a panic.
pub fn wait_limit() -> Result<Duration, CellgenError> {
    let Some(value) = std::env::var_os(WAIT_VARIABLE) else {
        return Ok(DEFAULT_WAIT);
    };
    let text = value.to_string_lossy();
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| (0.0..=MAX_WAIT_SECS).contains(s))
        .map(Duration::from_secs_f64)
        .ok_or_else(|| CellgenError::InvalidEnvironment {
            name: WAIT_VARIABLE,
            value: text.into_owned(),
            accepted: format!(
                "the seconds to wait for the repository lock, a number from 0 to {MAX_WAIT_SECS} (fractions allowed; default {})",
                DEFAULT_WAIT.as_secs()
            ),
        })
}

/// Takes the lock on `root`, waiting up to `wait_limit()`. `waiting` is called once, with the
/// holder, when the lock is busy (a command prints it so a user knows why nothing happens).
pub fn acquire(
    root: &Utf8Path,
    access: Access,
    waiting: impl FnOnce(&str),
) -> Result<RepoLock, CellgenError> {
    let canonical = disk::canonicalize(root).map_err(|source| CellgenError::Lock {
        root: root.to_path_buf(),
        source,
    })?;
    // As `fsguard::Root` does: a canonical form that is not UTF-8 is not used, so the plan's
    // root and this one are the same path.
    let canonical = Utf8PathBuf::from_path_buf(canonical).unwrap_or_else(|_| root.to_path_buf());
    let file = disk::open(&canonical).map_err(|source| CellgenError::Lock {
        root: root.to_path_buf(),
        source,
    })?;
    let limit = wait_limit()?;
    let start = Instant::now();
    let mut waiting = Some(waiting);
    loop {
        let attempt = match access {
            Access::Read => file.try_lock_shared(),
            Access::Write => file.try_lock(),
        };
        match attempt {
            Ok(()) => break,
            Err(TryLockError::WouldBlock) => {
                if let Some(notify) = waiting.take() {
                    notify(&holder(&file));
                }
                if start.elapsed() >= limit {
                    return Err(CellgenError::Locked {
                        root: root.to_path_buf(),
                        holder: holder(&file),
                        waited_secs: limit.as_secs_f64().round() as u64,
                    });
                }
                std::thread::sleep(POLL);
            }
            Err(TryLockError::Error(source)) => {
                return Err(CellgenError::Lock {
                    root: root.to_path_buf(),
                    source,
                });
            }
        }
    }
    HELD.lock()
        .expect("lock registry")
        .push((canonical.clone(), access));
    Ok(RepoLock {
        file,
        root: canonical,
        access,
    })
}

/// Whether this process holds the write lock on `root` (canonical).
pub fn holds_write(root: &Utf8Path) -> bool {
    HELD.lock()
        .map(|held| held.iter().any(|(r, a)| r == root && *a == Access::Write))
        .unwrap_or(false)
}

/// Who holds the lock on `dir`'s inode, as well as this system can tell.
fn holder(file: &File) -> String {
    holder_from_proc(file).unwrap_or_else(|| {
        "another process holds its lock (cellgen could not tell which: /proc/locks is not available here)".into()
    })
}

#[cfg(target_os = "linux")]
fn holder_from_proc(file: &File) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = file.metadata().ok()?;
    let ino = meta.ino();
    let me = std::process::id();
    let locks = disk::read_to_string("/proc/locks").ok()?;
    // e.g. `3: FLOCK  ADVISORY  WRITE 17767 fe:00:8978435 0 EOF`; `->` marks a blocked waiter.
    let mut holders: Vec<(u32, &str)> = Vec::new();
    for line in locks.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.get(1) == Some(&"->") || fields.get(1) != Some(&"FLOCK") {
            continue;
        }
        let (Some(kind), Some(pid), Some(id)) = (fields.get(3), fields.get(4), fields.get(5))
        else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        let lock_ino = id.rsplit(':').next().and_then(|i| i.parse::<u64>().ok());
        if lock_ino == Some(ino) && pid != me {
            holders.push((pid, kind));
        }
    }
    if holders.is_empty() {
        return None;
    }
    let described: Vec<String> = holders
        .iter()
        .map(|(pid, kind)| describe_process(*pid, kind))
        .collect();
    Some(described.join("; "))
}

#[cfg(not(target_os = "linux"))]
fn holder_from_proc(_file: &File) -> Option<String> {
    None
}

#[cfg(target_os = "linux")]
fn describe_process(pid: u32, kind: &str) -> String {
    let access = if kind == "WRITE" {
        "writing"
    } else {
        "reading"
    };
    let command = disk::read(format!("/proc/{pid}/cmdline"))
        .ok()
        .map(|raw| {
            let args: Vec<String> = raw
                .split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            let mut args = args.into_iter();
            let program = args
                .next()
                .map(|p| {
                    Utf8Path::new(&p)
                        .file_name()
                        .map_or(p.clone(), str::to_owned)
                })
                .unwrap_or_default();
            std::iter::once(program)
                .chain(args)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|c| !c.is_empty());
    let mut out = format!("pid {pid}");
    if let Some(command) = command {
        out.push_str(&format!(" (`{command}`)"));
    }
    out.push_str(&format!(", {access}"));
    if let Some(since) = process_start(pid) {
        let age = SystemTime::now()
            .duration_since(since)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        out.push_str(&format!(" since {} ({age} s ago)", utc(since)));
    }
    out
}

/// When a process started: its start time in clock ticks after boot, plus the boot time.
#[cfg(target_os = "linux")]
fn process_start(pid: u32) -> Option<SystemTime> {
    let stat = disk::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses and may contain spaces.
    let after = &stat[stat.rfind(')')? + 2..];
    let start_ticks: u64 = after.split_whitespace().nth(19)?.parse().ok()?;
    let btime: u64 = disk::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    // SAFETY: sysconf only reads a configuration value.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks <= 0 {
        return None;
    }
    let secs = btime as f64 + start_ticks as f64 / ticks as f64;
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs_f64(secs))
}

/// `2026-04-20 10:00:01 UTC`, without a date library.
pub fn utc(time: SystemTime) -> String {
    let secs = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's civil_from_days.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(SystemTime::UNIX_EPOCH), "1970-01-01 00:00:00 UTC");
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_709_210_096);
        assert_eq!(utc(t), "2024-02-29 12:34:56 UTC");
    }

    #[test]
    fn readers_share_and_the_write_lock_is_registered() {
        let dir = tempfile::tempdir().unwrap();
        let first = acquire(
            Utf8Path::from_path(dir.path()).unwrap(),
            Access::Read,
            |_| {},
        )
        .unwrap();
        let second = acquire(
            Utf8Path::from_path(dir.path()).unwrap(),
            Access::Read,
            |_| {},
        )
        .unwrap();
        assert!(!holds_write(first.root()));
        drop((first, second));
        let writer = acquire(
            Utf8Path::from_path(dir.path()).unwrap(),
            Access::Write,
            |_| {},
        )
        .unwrap();
        assert!(holds_write(writer.root()));
        drop(writer);
        assert!(!holds_write(
            &Utf8Path::from_path(dir.path())
                .unwrap()
                .canonicalize_utf8()
                .unwrap()
        ));
    }
}
