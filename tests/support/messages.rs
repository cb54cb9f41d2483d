//! What cellgen says, asserted one way: a failure's message names every word given (the file,
//! the line, the flag, what to do), and a failed assertion shows what was missing and the whole
//! text, rather than 300 hand-written `contains` each with its own message.
#![allow(dead_code)]

use std::process::Output;

pub fn stderr_text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

pub fn stdout_text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The words `text` lacks.
pub fn missing<'a, S: AsRef<str>>(text: &str, words: &'a [S]) -> Vec<&'a str> {
    words
        .iter()
        .map(AsRef::as_ref)
        .filter(|w| !text.contains(w))
        .collect()
}

/// Whether stderr mentions every word.
pub fn stderr_mentions<S: AsRef<str>>(output: &Output, words: &[S]) -> bool {
    missing(&stderr_text(output), words).is_empty()
}

/// `text` contains every word.
#[track_caller]
pub fn assert_mentions<S: AsRef<str>>(text: &str, words: &[S]) {
    let lacking = missing(text, words);
    assert!(lacking.is_empty(), "lacks {lacking:?}:\n{text}");
}

/// `text` contains none of the words.
#[track_caller]
pub fn assert_never_mentions<S: AsRef<str>>(text: &str, words: &[S]) {
    let found: Vec<&str> = words
        .iter()
        .map(AsRef::as_ref)
        .filter(|w| text.contains(w))
        .collect();
    assert!(found.is_empty(), "has {found:?}:\n{text}");
}

/// The command failed (not a panic) and its error names every word.
#[track_caller]
pub fn assert_error<S: AsRef<str>>(output: &Output, words: &[S]) {
    let stderr = stderr_text(output);
    let code = output.status.code();
    assert!(
        !output.status.success() && code != Some(101) && !stderr.contains("panicked"),
        "expected a clean failure, got exit {code:?}:\n{stderr}"
    );
    assert_mentions(&stderr, words);
}

/// [`assert_error`] with the exit code: 1 a failure, 2 a usage error.
#[track_caller]
pub fn assert_error_code<S: AsRef<str>>(output: &Output, code: i32, words: &[S]) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "exit code:\n{}",
        stderr_text(output)
    );
    assert_error(output, words);
}
