//! `cellgen repair`: the repair every command that writes does first (`lock_repository`), alone.

use anyhow::Result;

use super::Session;

pub fn run(session: &Session) -> Result<()> {
    if session.repaired.is_none() {
        println!(
            "Nothing to repair: no interrupted cellgen left a journal ({}).",
            crate::writer::journal::JOURNAL
        );
    }
    Ok(())
}
