use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cellgen::cli::Cli::parse();
    match cellgen::commands::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            let code = err
                .downcast_ref::<cellgen::error::CellgenError>()
                .map_or(1, |e| e.exit_code());
            ExitCode::from(code)
        }
    }
}
