//! What every command shares on a terminal: colours, progress bars, questions.

pub mod color;
pub mod progress;
pub mod prompt;
