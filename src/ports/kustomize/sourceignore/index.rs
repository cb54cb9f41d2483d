//! The patterns of a [`Matcher`](super::Matcher) indexed by the names they match, so that a
//! path is matched by looking its components up rather than by trying every pattern on every
//! component (the defaults are two dozen patterns, and every file a build reads is matched).

use foldhash::HashMap;

use super::{MatchResult, PartKind, Pattern};

/// Where each pattern is tried. Only patterns of the repository root's `.sourceignore` (or the
/// defaults) that name one path component are indexed; the rest are tried as before.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Index {
    /// A name → the patterns that are exactly that name.
    literal: HashMap<Vec<u8>, Vec<usize>>,
    /// `*` + an ending, and the pattern.
    suffix: Vec<(Vec<u8>, usize)>,
    /// Every other pattern.
    other: Vec<usize>,
}

impl Index {
    pub(super) fn new(patterns: &[Pattern]) -> Index {
        let mut index = Index::default();
        for (i, p) in patterns.iter().enumerate() {
            match (p.domain.is_empty() && !p.is_glob, p.kinds[0]) {
                (true, PartKind::Literal) => {
                    index.literal.entry(p.parts[0].clone()).or_default().push(i)
                }
                (true, PartKind::Suffix) => index.suffix.push((p.parts[0][1..].to_vec(), i)),
                _ => index.other.push(i),
            }
        }
        index
    }

    /// The index of the last pattern that matches `path` (its components), as trying each
    /// pattern from the last would find it.
    pub(super) fn last_match(
        &self,
        patterns: &[Pattern],
        path: &[&[u8]],
        is_dir: bool,
    ) -> Option<usize> {
        let mut last: Option<usize> = None;
        let found = |last: &mut Option<usize>, i: usize| *last = Some(last.map_or(i, |l| l.max(i)));
        for (at, name) in path.iter().enumerate() {
            // A name pattern matches any component, but one ending in `/` not a file's own name.
            let counts = |i: usize| !(patterns[i].dir_only && !is_dir && at == path.len() - 1);
            for &i in self.literal.get(*name).into_iter().flatten() {
                if counts(i) {
                    found(&mut last, i);
                }
            }
            for (ending, i) in &self.suffix {
                if name.ends_with(ending) && counts(*i) {
                    found(&mut last, *i);
                }
            }
        }
        for &i in &self.other {
            if last.is_some_and(|l| l > i) {
                continue;
            }
            if patterns[i].matches(path, is_dir) != MatchResult::NoMatch {
                found(&mut last, i);
            }
        }
        last
    }
}
