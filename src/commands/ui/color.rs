//! When cellgen colours its output, and the few styles it uses.
//!
//! `--color auto` (the default) colours a stream only when it is a terminal and `NO_COLOR` is not
//! set to a non-empty value (no-color.org); `always` colours even through a pipe and wins over
//! `NO_COLOR` (a flag given for one run overrides the environment); `never` never colours. The
//! decision is made once per stream and handed to `console`, which every style below (and
//! indicatif's progress bars) consults.

use std::ffi::OsString;
use std::io::IsTerminal;

use console::{Style, style};

use crate::cli::ColorChoice;
use crate::writer::plan::ChangeKind;

/// Whether a stream gets colours: pure, so it can be tested without a terminal.
pub fn enabled(choice: ColorChoice, is_terminal: bool, no_color: Option<OsString>) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => is_terminal && no_color.is_none_or(|v| v.is_empty()),
    }
}

/// Applies `choice` to stdout and stderr for the rest of the run.
pub fn init(choice: ColorChoice) {
    let no_color = || std::env::var_os("NO_COLOR");
    console::set_colors_enabled(enabled(choice, std::io::stdout().is_terminal(), no_color()));
    console::set_colors_enabled_stderr(enabled(
        choice,
        std::io::stderr().is_terminal(),
        no_color(),
    ));
}

/// What clap should do with its own help and errors. It parses before `init` can run, so the
/// flag is read from the raw arguments; `auto` leaves clap's detection (terminal, `NO_COLOR`).
pub fn clap_choice(args: &[OsString]) -> clap::ColorChoice {
    let mut value = None;
    // Arguments, not paths: only `--color` and its value are looked at (clap rejects them later
    // if they are not UTF-8).
    let mut iter = args.iter().skip(1).map(|a| a.to_string_lossy());
    while let Some(arg) = iter.next() {
        if arg == "--" {
            break;
        }
        if let Some(v) = arg.strip_prefix("--color=") {
            value = Some(v.to_string());
        } else if arg == "--color" {
            value = iter.next().map(|v| v.to_string());
        }
    }
    match value.as_deref() {
        Some("always") => clap::ColorChoice::Always,
        Some("never") => clap::ColorChoice::Never,
        _ => clap::ColorChoice::Auto,
    }
}

/// `error:` before a message on stderr.
pub fn error_label() -> String {
    style("error:").for_stderr().red().bold().to_string()
}

/// A change in a command's summary (`created`, `updated`, `deleted`), right-aligned, on stdout.
pub fn change(kind: ChangeKind) -> String {
    let (word, style) = match kind {
        ChangeKind::Create => ("created", Style::new().green()),
        ChangeKind::Update => ("updated", Style::new().yellow()),
        ChangeKind::Delete => ("deleted", Style::new().red()),
    };
    style.apply_to(format!("{word:>7}")).to_string()
}

/// A unified diff with added lines green, removed lines red and hunk headers cyan, on stdout.
pub fn diff(text: &str) -> String {
    if !console::colors_enabled() {
        return text.to_string();
    }
    text.split_inclusive('\n')
        .map(|line| {
            let (body, end) = match line.strip_suffix('\n') {
                Some(body) => (body, "\n"),
                None => (line, ""),
            };
            let styled = if body.starts_with("diff --")
                || body.starts_with("+++ ")
                || body.starts_with("--- ")
            {
                style(body).bold().to_string()
            } else if body.starts_with('+') {
                style(body).green().to_string()
            } else if body.starts_with('-') {
                style(body).red().to_string()
            } else if body.starts_with("@@") {
                style(body).cyan().to_string()
            } else {
                body.to_string()
            };
            styled + end
        })
        .collect()
}

/// `cellgen check`'s text report with each finding's `error[code]` / `warning[code]` head
/// coloured, on stdout. Only line starts are touched, so messages are never altered.
pub fn check_report(text: &str) -> String {
    if !console::colors_enabled() {
        return text.to_string();
    }
    text.split_inclusive('\n')
        .map(|line| {
            for (word, colour) in [
                ("error[", Style::new().red()),
                ("warning[", Style::new().yellow()),
            ] {
                if line.starts_with(word)
                    && let Some(end) = line.find("]:")
                {
                    let head = &line[..end + 1];
                    return format!("{}{}", colour.bold().apply_to(head), &line[end + 1..]);
                }
            }
            line.to_string()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(s: &str) -> Option<OsString> {
        Some(OsString::from(s))
    }

    #[test]
    fn auto_follows_the_terminal_and_no_color() {
        assert!(enabled(ColorChoice::Auto, true, None));
        assert!(!enabled(ColorChoice::Auto, false, None));
        assert!(!enabled(ColorChoice::Auto, true, os("1")));
        // no-color.org: an empty NO_COLOR does not disable colour.
        assert!(enabled(ColorChoice::Auto, true, os("")));
        assert!(enabled(ColorChoice::Always, false, os("1")));
        assert!(!enabled(ColorChoice::Never, true, None));
    }

    #[test]
    fn clap_gets_the_flag_from_the_raw_arguments() {
        let args = |list: &[&str]| list.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            clap_choice(&args(&["cellgen", "--color", "never", "check"])),
            clap::ColorChoice::Never
        );
        assert_eq!(
            clap_choice(&args(&["cellgen", "check", "--color=always"])),
            clap::ColorChoice::Always
        );
        assert_eq!(
            clap_choice(&args(&["cellgen", "envsubst", "--", "--color=always"])),
            clap::ColorChoice::Auto
        );
    }
}
