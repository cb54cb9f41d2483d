//! `cellgen completions <shell>`: a completion script on stdout.

use anyhow::Result;
use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs};

pub fn run(args: CompletionsArgs) -> Result<()> {
    let mut command = Cli::command();
    let name = command.get_name().to_string();
    // clap_complete panics when its writer fails: render in memory, then report a closed pipe.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, name, &mut script);
    Ok(crate::commands::ui::out::stdout_bytes(&script)?)
}
