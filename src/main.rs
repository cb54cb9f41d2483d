use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let matches = cellgen::cli::Cli::command()
        .color(cellgen::color::clap_choice(&args))
        .get_matches_from(args);
    let cli = cellgen::cli::Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    cellgen::color::init(cli.color);
    match cellgen::commands::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("{} {err:#}", cellgen::color::error_label());
            let code = err
                .downcast_ref::<cellgen::error::CellgenError>()
                .map_or(1, |e| e.exit_code());
            ExitCode::from(code)
        }
    }
}
