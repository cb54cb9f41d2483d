//! The one way commands print. Standard output carries a command's result (a report, a diff,
//! YAML), so a write that fails is an error the command returns (`CellgenError::Stdout`: a full
//! disk, a closed pipe), never a panic; `main` ends quietly on a closed pipe, as `head` expects.
//! Standard error carries messages about the run: when even that cannot be written there is
//! nobody left to tell, so its failures are ignored rather than turned into a panic.
//!
//! Commands print through `out!`/`outln!` (stdout, `?` on the result) and `errln!` (stderr);
//! a test greps src for any other `print!`/`println!`/`eprint!`/`eprintln!`.

use std::fmt;
use std::io::Write;

use crate::error::CellgenError;

/// Writes `args` to standard output and flushes it, so the error surfaces here, not at exit.
pub fn stdout(args: fmt::Arguments<'_>) -> Result<(), CellgenError> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(args)
        .and_then(|()| out.flush())
        .map_err(|io| CellgenError::Stdout { io })
}

/// Writes bytes to standard output (a man page, a completion script), flushed.
pub fn stdout_bytes(bytes: &[u8]) -> Result<(), CellgenError> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|io| CellgenError::Stdout { io })
}

/// Writes `args` to standard error; a failure is ignored (see the module doc).
pub fn stderr(args: fmt::Arguments<'_>) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.flush());
}

/// Whether `err` is standard output closed by its reader (`cellgen list | head` with SIGPIPE
/// ignored by whoever started cellgen): the output is not wanted any more, which is no error.
pub fn is_closed_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        matches!(
            e.downcast_ref::<CellgenError>(),
            Some(CellgenError::Stdout { io }) if io.kind() == std::io::ErrorKind::BrokenPipe
        )
    })
}

/// `print!` to standard output, returning `Result<(), CellgenError>`.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::commands::ui::out::stdout(format_args!($($arg)*))
    };
}

/// `println!` to standard output, returning `Result<(), CellgenError>`.
#[macro_export]
macro_rules! outln {
    () => {
        $crate::commands::ui::out::stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::commands::ui::out::stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprintln!`, without the panic when standard error cannot be written.
#[macro_export]
macro_rules! errln {
    () => {
        $crate::commands::ui::out::stderr(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::commands::ui::out::stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprint!`, without the panic.
#[macro_export]
macro_rules! err {
    ($($arg:tt)*) => {
        $crate::commands::ui::out::stderr(format_args!($($arg)*))
    };
}
