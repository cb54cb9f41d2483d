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

impl Prompter for Terminal {
    fn interactive(&self) -> bool {
        true
    }
    fn input(&mut self, prompt: &str, default: Option<&str>) -> Result<String> {
        let mut input = dialoguer::Input::<String>::with_theme(&self.theme).with_prompt(prompt);
        if let Some(default) = default {
            input = input.default(default.to_string());
        }
        Ok(input.interact_text()?)
    }
    fn confirm(&mut self, prompt: &str, default: bool) -> Result<bool> {
        Ok(dialoguer::Confirm::with_theme(&self.theme)
            .with_prompt(prompt)
            .default(default)
            .interact()?)
    }
    fn select(&mut self, prompt: &str, items: &[String]) -> Result<usize> {
        Ok(dialoguer::Select::with_theme(&self.theme)
            .with_prompt(prompt)
            .items(items)
            .default(0)
            .interact()?)
    }
    fn multi_select(&mut self, prompt: &str, items: &[String]) -> Result<Vec<usize>> {
        Ok(dialoguer::MultiSelect::with_theme(&self.theme)
            .with_prompt(format!("{prompt} (space to toggle, enter to confirm)"))
            .items(items)
            .interact()?)
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
