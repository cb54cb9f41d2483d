//! `cellgen completions <shell>`: a completion script on stdout.

use std::io::Write;

use anyhow::{Context, Result};
use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs};

pub fn run(args: CompletionsArgs) -> Result<()> {
    let mut command = Cli::command();
    let name = command.get_name().to_string();
    // clap_complete panics when its writer fails: render in memory, then report a closed pipe.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, name, &mut script);
    std::io::stdout()
        .write_all(&script)
        .context("cannot write the completion script to stdout")
}
