//! Progress of long operations (`check` today; `diff` and `upgrade` on many cells later): a bar
//! on stderr, only when stderr is a terminal that can redraw a line, never in machine-readable
//! runs (the command passes `wanted: false` for `--format json`). It is cleared when done, so
//! what remains on the terminal is the command's output alone.
//!
//! Core modules report steps through a plain callback (`FnMut(done, total, item)`); only this
//! module knows how they are drawn.

use std::cell::Cell;
use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Whether a bar is drawn: pure, so it can be tested without a terminal.
pub fn shown(wanted: bool, stderr_is_terminal: bool, term: Option<&str>) -> bool {
    // A dumb terminal cannot move the cursor back: the bar would print one line per redraw.
    wanted && stderr_is_terminal && term != Some("dumb")
}

/// A progress bar that may be hidden; every method is a no-op then.
pub struct Progress {
    bar: Option<ProgressBar>,
    /// Drawing starts with the first step, once the total is known.
    started: Cell<bool>,
}

impl Progress {
    /// A bar counting `what` (e.g. "cells"), drawn when `wanted` and stderr is a terminal.
    pub fn new(what: &str, wanted: bool) -> Progress {
        let term = std::env::var("TERM").ok();
        if !shown(wanted, std::io::stderr().is_terminal(), term.as_deref()) {
            return Progress {
                bar: None,
                started: Cell::new(false),
            };
        }
        let style = ProgressStyle::with_template(&format!(
            "{{spinner}} {{pos}}/{{len}} {what} [{{bar:24}}] {{elapsed}} {{wide_msg}}"
        ))
        .expect("the progress template is valid")
        .progress_chars("=> ");
        let bar =
            ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()).with_style(style);
        Progress {
            bar: Some(bar),
            started: Cell::new(false),
        }
    }

    pub fn is_shown(&self) -> bool {
        self.bar.is_some()
    }

    /// `done` of `total` items are finished; `item` is the one being worked on.
    pub fn step(&self, done: usize, total: usize, item: &str) {
        if let Some(bar) = &self.bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
            bar.set_message(item.to_string());
            if !self.started.replace(true) {
                // Keeps the spinner and the elapsed time moving while one item takes long.
                bar.enable_steady_tick(Duration::from_millis(120));
            }
        }
    }

    /// Clears the bar from the terminal (dropping the progress does too).
    pub fn finish(self) {}
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drawn_only_when_wanted_on_a_capable_terminal() {
        assert!(shown(true, true, Some("xterm-256color")));
        assert!(shown(true, true, None));
        assert!(!shown(false, true, Some("xterm")), "--format json");
        assert!(!shown(true, false, Some("xterm")), "stderr piped");
        assert!(!shown(true, true, Some("dumb")));
    }

    #[test]
    fn a_hidden_progress_accepts_steps() {
        let progress = Progress::new("cells", false);
        assert!(!progress.is_shown());
        progress.step(1, 2, "eu-west-2-prod");
        progress.finish();
    }
}
