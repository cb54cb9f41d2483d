//! Questions for values a flag did not give. Only ever asked on a terminal; everything else
//! (CI, pipes, `--no-input`) goes through `NoInput`, which tells the caller to use a default or
//! fail naming the flag.

use std::io::IsTerminal;

use anyhow::Result;

pub trait Prompter {
    /// Whether a person can answer. When false, no other method may be called.
    fn interactive(&self) -> bool;
    fn input(&mut self, prompt: &str, default: Option<&str>) -> Result<String>;
    fn confirm(&mut self, prompt: &str, default: bool) -> Result<bool>;
    fn select(&mut self, prompt: &str, items: &[String]) -> Result<usize>;
    fn multi_select(&mut self, prompt: &str, items: &[String]) -> Result<Vec<usize>>;
}

/// Non-interactive runs: every question is answered by a default or a flag.
pub struct NoInput;

impl Prompter for NoInput {
    fn interactive(&self) -> bool {
        false
    }
    fn input(&mut self, prompt: &str, _: Option<&str>) -> Result<String> {
        anyhow::bail!("internal error: asked `{prompt}` without a terminal")
    }
    fn confirm(&mut self, prompt: &str, _: bool) -> Result<bool> {
        anyhow::bail!("internal error: asked `{prompt}` without a terminal")
    }
    fn select(&mut self, prompt: &str, _: &[String]) -> Result<usize> {
        anyhow::bail!("internal error: asked `{prompt}` without a terminal")
    }
    fn multi_select(&mut self, prompt: &str, _: &[String]) -> Result<Vec<usize>> {
        anyhow::bail!("internal error: asked `{prompt}` without a terminal")
    }
}

/// dialoguer prompts, drawn on stderr so stdout stays clean for output.
pub struct Terminal {
    theme: dialoguer::theme::SimpleTheme,
}

/// Shows the cursor again when dropped: a picker hides it while it draws, and returns early
/// (Ctrl-C reads as an error in its raw mode) without showing it, which left the shell's cursor
/// hidden. Dropping runs on every path out of a question: an answer, an error, a panic. Between
/// two keys the terminal is not in raw mode, so Ctrl-C is SIGINT there: while a question is
/// open, a handler shows the cursor and then lets the signal end cellgen as it would have.
struct CursorGuard {
    #[cfg(unix)]
    previous: libc::sighandler_t,
}

#[cfg(unix)]
extern "C" fn show_cursor_then_die(signal: libc::c_int) {
    const SHOW: &[u8] = b"\x1b[?25h\n";
    // SAFETY: write, signal and raise are async-signal-safe; nothing else runs here.
    unsafe {
        libc::write(2, SHOW.as_ptr().cast(), SHOW.len());
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}

impl CursorGuard {
    fn new() -> CursorGuard {
        #[cfg(unix)]
        {
            let handler = show_cursor_then_die as extern "C" fn(libc::c_int);
            // SAFETY: installs a handler that only calls async-signal-safe functions; the
            // previous disposition is restored on drop.
            let previous = unsafe { libc::signal(libc::SIGINT, handler as libc::sighandler_t) };
            CursorGuard { previous }
        }
        #[cfg(not(unix))]
        CursorGuard {}
    }
}

impl Drop for CursorGuard {
    fn drop(&mut self) {
        let _ = console::Term::stderr().show_cursor();
        #[cfg(unix)]
        // SAFETY: puts back the disposition `new` found.
        unsafe {
            libc::signal(libc::SIGINT, self.previous);
        }
    }
}

/// A question's outcome: Ctrl-C (or a closed terminal) is the user cancelling, not a failure.
fn answered<T>(prompt: &str, result: dialoguer::Result<T>) -> Result<T> {
    match result {
        Ok(value) => Ok(value),
        Err(dialoguer::Error::IO(io))
            if matches!(
                io.kind(),
                std::io::ErrorKind::Interrupted | std::io::ErrorKind::UnexpectedEof
            ) =>
        {
            Err(crate::error::CellgenError::Cancelled {
                prompt: prompt.to_string(),
            }
            .into())
        }
        Err(e) => Err(e.into()),
    }
}

impl Prompter for Terminal {
    fn interactive(&self) -> bool {
        true
    }
    fn input(&mut self, prompt: &str, default: Option<&str>) -> Result<String> {
        let _cursor = CursorGuard::new();
        // An empty answer is returned, not silently re-asked: the caller says whether it is
        // allowed (an optional list) or why one is needed (`required`).
        let mut input = dialoguer::Input::<String>::with_theme(&self.theme)
            .with_prompt(prompt)
            .allow_empty(true);
        if let Some(default) = default {
            input = input.default(default.to_string());
        }
        answered(prompt, input.interact_text())
    }
    fn confirm(&mut self, prompt: &str, default: bool) -> Result<bool> {
        let _cursor = CursorGuard::new();
        answered(
            prompt,
            dialoguer::Confirm::with_theme(&self.theme)
                .with_prompt(prompt)
                .default(default)
                .interact(),
        )
    }
    fn select(&mut self, prompt: &str, items: &[String]) -> Result<usize> {
        let _cursor = CursorGuard::new();
        answered(
            prompt,
            dialoguer::Select::with_theme(&self.theme)
                .with_prompt(prompt)
                .items(items)
                .default(0)
                .interact(),
        )
    }
    fn multi_select(&mut self, prompt: &str, items: &[String]) -> Result<Vec<usize>> {
        let _cursor = CursorGuard::new();
        answered(
            prompt,
            dialoguer::MultiSelect::with_theme(&self.theme)
                .with_prompt(format!("{prompt} (space to toggle, enter to confirm)"))
                .items(items)
                .interact(),
        )
    }
}

/// Asks `prompt` until the answer is not empty, saying `why` one is needed after an empty one
/// (rather than asking again without a word).
pub fn required(
    prompter: &mut dyn Prompter,
    prompt: &str,
    default: Option<&str>,
    why: &str,
) -> Result<String> {
    loop {
        let answer = prompter.input(prompt, default)?;
        if !answer.trim().is_empty() {
            return Ok(answer);
        }
        crate::errln!("An answer is needed: {why}.");
    }
}

/// A terminal prompter when stdin and stderr are terminals and `--no-input` is off.
pub fn for_session(no_input: bool) -> Box<dyn Prompter> {
    if !no_input && std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        Box::new(Terminal {
            theme: dialoguer::theme::SimpleTheme,
        })
    } else {
        Box::new(NoInput)
    }
}
