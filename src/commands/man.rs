//! `cellgen man`: the man page on stdout, or one page per subcommand in a directory.

use anyhow::{Context, Result};

use super::Session;
use crate::cli::ManArgs;
use crate::writer::plan::Plan;

pub fn run(session: &mut Session, args: ManArgs) -> Result<()> {
    // Without the `help` subcommand, as clap_mangen's own generate_to does: it has no page.
    let mut command = crate::cli::command().disable_help_subcommand(true);
    command.build();
    let Some(dir) = args.out_dir else {
        let out = render(&clap_mangen::Man::new(command))?;
        crate::commands::ui::out::stdout_bytes(&out)?;
        return Ok(());
    };
    let mut pages = Vec::new();
    collect_pages(command, &mut pages)?;
    // The pages are written like any other change: all or none, and again only if they differ,
    // under the lock of the directory they go to.
    let dir = crate::paths::from_user(
        &session.start.as_std_path().join(dir),
        "the directory",
        "Pass --out-dir a directory whose path is UTF-8",
    )?;
    crate::root::disk::create_dir_all(&dir).with_context(|| format!("cannot create {dir}"))?;
    let _lock = crate::writer::lock::acquire(&dir, crate::writer::lock::Access::Write, |_| {})?;
    let mut plan = Plan::new(dir, crate::model::repo::read_by_flux);
    for (name, page) in pages {
        plan.write(name, page)?;
    }
    super::finish(session, &plan, &[], false)
}

/// `(file name, roff)` of the command and of every subcommand under it.
fn collect_pages(command: clap::Command, pages: &mut Vec<(String, String)>) -> Result<()> {
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect_pages(sub.clone(), pages)?;
    }
    let man = clap_mangen::Man::new(command);
    let out = render(&man)?;
    pages.push((man.get_filename(), String::from_utf8(out)?));
    Ok(())
}

/// A page as clap_mangen renders it, with the examples and exit status (`--help`'s closing
/// text) as EXAMPLES and EXIT STATUS sections where clap_mangen would print them as "EXTRA".
fn render(man: &clap_mangen::Man) -> Result<Vec<u8>> {
    let command = man_command(man);
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    if command.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut out)?;
    }
    if command.has_subcommands() {
        man.render_subcommands_section(&mut out)?;
    }
    let closing = command
        .get_after_long_help()
        .map(|t| t.to_string())
        .unwrap_or_default();
    let (examples, status) = match closing.split_once("Exit status:\n") {
        Some((examples, status)) => (examples, status),
        None => (closing.as_str(), ""),
    };
    let examples = examples
        .trim()
        .strip_prefix("Examples:")
        .unwrap_or("")
        .trim_matches('\n');
    for (title, body) in [("EXAMPLES", examples), ("\"EXIT STATUS\"", status)] {
        if body.trim().is_empty() {
            continue;
        }
        out.extend_from_slice(format!(".SH {title}\n.nf\n").as_bytes());
        for line in body.lines() {
            out.extend_from_slice(roff_line(line).as_bytes());
            out.push(b'\n');
        }
        out.extend_from_slice(b".fi\n");
    }
    if command.get_version().is_some() {
        man.render_version_section(&mut out)?;
    }
    Ok(out)
}

/// The command a page is of (clap_mangen keeps it private; the page's own name finds it again).
fn man_command(man: &clap_mangen::Man) -> clap::Command {
    let mut command = crate::cli::command().disable_help_subcommand(true);
    command.build();
    // cellgen.1, cellgen-key.1, cellgen-key-add.1
    let filename = man.get_filename();
    let stem = filename.trim_end_matches(".1");
    let mut words = stem.split('-').skip(1).peekable();
    let mut found = command;
    let mut name = String::new();
    while let Some(word) = words.next() {
        name = if name.is_empty() {
            word.to_string()
        } else {
            format!("{name}-{word}")
        };
        if let Some(sub) = found.find_subcommand(&name).cloned() {
            found = sub;
            name.clear();
        } else if words.peek().is_none() {
            break;
        }
    }
    found
}

/// A line of text for roff's no-fill mode: backslashes escaped, and a line that would read as a
/// request (a leading `.` or `'`) made text.
fn roff_line(line: &str) -> String {
    let line = line.replace('\\', "\\e").replace('-', "\\-");
    if line.starts_with('.') || line.starts_with('\'') {
        format!("\\&{line}")
    } else {
        line
    }
}
