use std::process::ExitCode;

use clap::FromArgMatches;

// `check` allocates and frees many small values (parsed and substituted objects) on every
// core; the system allocator spent about a quarter of its instructions there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    restore_sigpipe();
    // `COMPLETE=bash cellgen` prints the shell's registration; the shell then calls back with
    // the words typed, and cellgen prints the names that fit (cells, components, keys) and exits.
    clap_complete::CompleteEnv::with_factory(cellgen::cli::command).complete();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let matches = cellgen::cli::command()
        .color(cellgen::commands::ui::color::clap_choice(&args))
        .get_matches_from(args);
    let cli = cellgen::cli::Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    cellgen::commands::ui::color::init(cli.color);
    match cellgen::commands::dispatch::run(cli) {
        Ok(code) => code,
        // Whoever read the output stopped reading (`| head`): nothing is wrong, nothing to say.
        Err(err) if cellgen::commands::ui::out::is_closed_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            cellgen::errln!("{} {err:#}", cellgen::commands::ui::color::error_label());
            let code = err
                .downcast_ref::<cellgen::error::CellgenError>()
                .map_or(1, |e| e.exit_code());
            ExitCode::from(code)
        }
    }
}

/// `cellgen list | head` must end quietly, as other Unix tools do, not panic in a write. Rust
/// ignores SIGPIPE by default; restore the default action. Applies never write to stdout, and
/// the journal repairs an interrupted one anyway.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first in main, before any thread exists; SIG_DFL is a valid disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
