//! One generated file through an upgrade: base (what cellgen generated before), ours (the file
//! as it is) and theirs (what this cellgen generates) decide whether it is replaced, merged, kept
//! or left alone, and what the record says of it afterwards.

use camino::{Utf8Path, Utf8PathBuf};

use crate::model::state::{FileRecord, sha256};
use crate::ports::merge::{self, Syntax};

/// What cellgen generated before, as far as upgrade can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Base {
    Known(String),
    /// cellgen generated the file, but its text then is lost (why).
    Unknown(String),
    /// cellgen did not generate the file (or cannot tell that it did): it is the user's.
    NotGenerated,
}

/// What happened to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Already what this cellgen generates.
    Current,
    /// Untouched since cellgen generated it: now what this cellgen generates.
    Replaced,
    /// Missing: written.
    Added,
    /// Changed by the user, and by cellgen elsewhere: both kept.
    Merged,
    /// Changed by the user only: left as it is.
    Kept,
    /// Deleted by the user (the record names it): a deletion is an edit, kept like any other.
    KeptDeleted,
    /// Changed by both in the same place: written with conflict markers (how many, and why
    /// there is no base, if there is none).
    Conflicts(usize, Option<String>),
    /// No longer generated and untouched: deleted.
    Deleted,
    /// Left alone: not cellgen's, or no longer (why).
    Left(String),
}

impl Outcome {
    pub fn is_conflict(&self) -> bool {
        matches!(self, Outcome::Conflicts(..))
    }
}

/// The decision for one file.
#[derive(Debug, Clone)]
pub struct Decision {
    pub path: Utf8PathBuf,
    pub outcome: Outcome,
    /// The file's new content (None: delete it), when it changes.
    pub write: Option<Option<String>>,
    /// What the record says of the file afterwards (None: not cellgen's).
    pub record: Option<FileRecord>,
}

/// The record entry for `theirs`: the previous one (its version and extra fields) when it says
/// the same text, else a new one naming this cellgen.
fn record_for(theirs: &str, previous: Option<&FileRecord>) -> FileRecord {
    match previous {
        Some(entry) if entry.sha256 == sha256(theirs) => FileRecord {
            text: Some(theirs.to_string()),
            ..entry.clone()
        },
        _ => FileRecord::new(theirs),
    }
}

pub fn decide(
    path: &Utf8Path,
    ours: Option<&str>,
    theirs: Option<&str>,
    base: Base,
    previous: Option<&FileRecord>,
    label: &str,
) -> Decision {
    let decision = |outcome, write, record| Decision {
        path: path.to_path_buf(),
        outcome,
        write,
        record,
    };
    let (ours, theirs) = match (ours, theirs) {
        (None, None) => return decision(Outcome::Current, None, None),
        // cellgen generated it (its record says so) and it is gone: the user deleted it.
        (None, Some(t)) if previous.is_some() => {
            return decision(Outcome::KeptDeleted, None, Some(record_for(t, previous)));
        }
        (None, Some(t)) => {
            return decision(
                Outcome::Added,
                Some(Some(t.to_string())),
                Some(record_for(t, previous)),
            );
        }
        (Some(o), None) => {
            return match base {
                Base::Known(b) if b == o => decision(Outcome::Deleted, Some(None), None),
                Base::Known(_) => decision(
                    Outcome::Left("cellgen no longer generates it; you changed it".into()),
                    None,
                    None,
                ),
                Base::Unknown(why) => decision(
                    Outcome::Left(format!(
                        "cellgen no longer generates it, and cannot tell whether you changed it ({why})"
                    )),
                    None,
                    None,
                ),
                Base::NotGenerated => decision(Outcome::Current, None, None),
            };
        }
        (Some(o), Some(t)) => (o, t),
    };
    if ours == theirs {
        return decision(Outcome::Current, None, Some(record_for(theirs, previous)));
    }
    let record = Some(record_for(theirs, previous));
    let syntax = Syntax::of(path);
    match base {
        Base::NotGenerated => decision(
            Outcome::Left(
                "cellgen did not generate it; delete it and run again to get cellgen's version"
                    .into(),
            ),
            None,
            None,
        ),
        Base::Known(b) if b == ours => {
            decision(Outcome::Replaced, Some(Some(theirs.to_string())), record)
        }
        Base::Known(b) if b == theirs => decision(Outcome::Kept, None, record),
        Base::Known(b) => {
            let merged = merge::merge(Some(&b), ours, theirs, syntax, label);
            let outcome = match merged.conflicts {
                0 if merged.text == ours => Outcome::Kept,
                0 => Outcome::Merged,
                n => Outcome::Conflicts(n, None),
            };
            let write = (merged.text != ours).then_some(Some(merged.text));
            decision(outcome, write, record)
        }
        Base::Unknown(why) => {
            let merged = merge::merge(None, ours, theirs, syntax, label);
            let outcome = match merged.conflicts {
                0 => Outcome::Merged,
                n => Outcome::Conflicts(n, Some(why)),
            };
            let write = (merged.text != ours).then_some(Some(merged.text));
            decision(outcome, write, record)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ours: Option<&str>, theirs: Option<&str>, base: Base) -> Decision {
        decide(Utf8Path::new("a.yaml"), ours, theirs, base, None, "cellgen")
    }

    #[test]
    fn each_side_alone() {
        let base = || Base::Known("a: 1\nb: 2\n".into());
        let d = run(Some("a: 1\nb: 2\n"), Some("a: 1\nb: 3\n"), base());
        assert_eq!(d.outcome, Outcome::Replaced);
        assert_eq!(d.write, Some(Some("a: 1\nb: 3\n".into())));
        let d = run(Some("a: 0\nb: 2\n"), Some("a: 1\nb: 2\n"), base());
        assert_eq!((d.outcome, d.write), (Outcome::Kept, None));
        // The record names what cellgen generates, not the user's file.
        assert_eq!(d.record.unwrap().sha256, sha256("a: 1\nb: 2\n"));
        let d = run(Some("a: 0\nb: 2\n"), Some("a: 1\nb: 3\n"), base());
        assert_eq!(d.outcome, Outcome::Merged);
        assert_eq!(d.write, Some(Some("a: 0\nb: 3\n".into())));
    }

    #[test]
    fn files_not_cellgen_s_are_left_alone() {
        let d = run(Some("mine\n"), Some("theirs\n"), Base::NotGenerated);
        assert!(matches!(d.outcome, Outcome::Left(_)));
        assert_eq!((d.write, d.record), (None, None));
        let d = run(Some("mine\n"), None, Base::NotGenerated);
        assert_eq!((d.write, d.record), (None, None));
    }

    #[test]
    fn a_deletion_is_kept() {
        let entry = FileRecord::new("a: 1\n");
        let d = decide(
            Utf8Path::new("a.yaml"),
            None,
            Some("a: 2\n"),
            Base::NotGenerated,
            Some(&entry),
            "cellgen",
        );
        assert_eq!((d.outcome, d.write), (Outcome::KeptDeleted, None));
        // The record keeps naming it, so the next upgrade keeps the deletion too.
        assert_eq!(d.record.unwrap().sha256, sha256("a: 2\n"));
        let d = run(None, Some("a: 2\n"), Base::NotGenerated);
        assert_eq!(d.outcome, Outcome::Added);
    }

    #[test]
    fn no_longer_generated() {
        let d = run(Some("x\n"), None, Base::Known("x\n".into()));
        assert_eq!((d.outcome, d.write), (Outcome::Deleted, Some(None)));
        let d = run(Some("y\n"), None, Base::Known("x\n".into()));
        assert!(matches!(d.outcome, Outcome::Left(_)));
        assert_eq!(d.write, None);
    }

    #[test]
    fn without_a_base_each_difference_is_a_conflict() {
        let d = run(
            Some("a: 1\nb: 2\n"),
            Some("a: 1\nb: 3\n"),
            Base::Unknown("lost".into()),
        );
        assert_eq!(d.outcome, Outcome::Conflicts(1, Some("lost".into())));
    }
}
