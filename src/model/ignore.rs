//! `.cellgen/.gitignore`: what of cellgen's own directory Git must never see. The journal of a
//! change being written (`crate::writer::journal`) is evidence of this machine's interrupted
//! apply only; committed, it would reach every clone. `init`, `new` and `upgrade` keep the file
//! naming it, in new repositories and existing ones alike: lines the file lacks are added at its
//! end, and whatever else it says is left as it is.

use std::collections::BTreeSet;

use crate::error::CellgenError;
use crate::writer::journal::{GITIGNORE, GITIGNORED};
use crate::writer::plan::Plan;

const HEADER: &str =
    "# cellgen's journal of a change being written, on this machine only: never commit it.\n";

/// Puts `.cellgen/.gitignore` into `plan` with every name cellgen needs ignored, when it lacks
/// one (a line `journal` ignores what `/journal` does).
pub fn plan_gitignore(plan: &mut Plan) -> Result<(), CellgenError> {
    let current = plan.read(GITIGNORE)?;
    let text = current.clone().unwrap_or_default();
    let present: BTreeSet<&str> = text
        .lines()
        .map(str::trim)
        .map(|l| l.trim_start_matches('/'))
        .collect();
    let missing: Vec<&str> = GITIGNORED
        .iter()
        .copied()
        .filter(|name| !present.contains(name.trim_start_matches('/')))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut out = text;
    if current.is_none() {
        out.push_str(HEADER);
    } else if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    for name in missing {
        out.push_str(name);
        out.push('\n');
    }
    plan.write(GITIGNORE, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planned(existing: Option<&str>) -> Option<String> {
        let dir = tempfile::tempdir().unwrap();
        let root = camino::Utf8Path::from_path(dir.path()).unwrap();
        if let Some(text) = existing {
            std::fs::create_dir(root.join(".cellgen")).unwrap();
            std::fs::write(root.join(GITIGNORE), text).unwrap();
        }
        let mut plan = Plan::new(root, crate::model::repo::read_by_flux);
        plan_gitignore(&mut plan).unwrap();
        plan.changed()
            .next()
            .map(|(_, text)| text.unwrap().to_string())
    }

    #[test]
    fn written_once_and_a_user_s_lines_kept() {
        let new = planned(None).unwrap();
        assert_eq!(new, format!("{HEADER}/journal\n/journal.tmp\n"));
        assert_eq!(planned(Some(&new)), None);
        assert_eq!(
            planned(Some("# mine\n*.bak\njournal")).unwrap(),
            "# mine\n*.bak\njournal\n/journal.tmp\n"
        );
    }
}
