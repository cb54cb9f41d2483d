//! `cellgen completions <shell>`: a completion script on stdout. The names shells complete
//! dynamically (`source <(COMPLETE=bash cellgen)`) are in `ui::complete`.

use anyhow::Result;

use crate::cli::CompletionsArgs;

pub fn run(args: CompletionsArgs) -> Result<()> {
    let mut command = crate::cli::command();
    let name = command.get_name().to_string();
    // clap_complete panics when its writer fails: render in memory, then report a closed pipe.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, name, &mut script);
    Ok(crate::commands::ui::out::stdout_bytes(&script)?)
}
