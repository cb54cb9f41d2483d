//! What every command shares on a terminal: colours, progress bars, questions.

pub mod color;
pub mod complete;
pub mod out;
pub mod progress;
pub mod prompt;
