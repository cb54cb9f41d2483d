//! Three-way merge of sequences (diff3). Changes of the two sides that overlap or touch form one
//! region, as in `git merge`; the callers decide what a region both sides changed becomes (text:
//! a conflict unless the change is the same; a list: also both insertions).

use std::hash::Hash;
use std::ops::Range;

use similar::{Algorithm, DiffTag, capture_diff_slices};

use super::Chunk;

/// One changed region: `base` items replaced by `side` items.
#[derive(Debug, Clone)]
struct Hunk {
    base: Range<usize>,
    side: Range<usize>,
}

/// Which side changed a stretch of the merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Changed {
    Neither,
    Ours,
    Theirs,
    Both,
}

/// A stretch of the merge, as index ranges into the three inputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    pub changed: Changed,
    pub base: Range<usize>,
    pub ours: Range<usize>,
    pub theirs: Range<usize>,
}

/// The changes that turn `base` into `side`, consecutive changes as one hunk.
fn hunks<T: Hash + Eq + Ord>(base: &[T], side: &[T]) -> Vec<Hunk> {
    let mut out: Vec<Hunk> = Vec::new();
    for op in capture_diff_slices(Algorithm::Patience, base, side) {
        let (tag, old, new) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.base.end == old.start && last.side.end == new.start => {
                last.base.end = old.end;
                last.side.end = new.end;
            }
            _ => out.push(Hunk {
                base: old,
                side: new,
            }),
        }
    }
    out
}

/// Where `base[start..end]` is on a side whose hunks within it are `hunks`; `offset` is how
/// much longer that side is than the base before `start`.
fn side_range(hunks: &[Hunk], start: usize, end: usize, offset: isize) -> Range<usize> {
    match (hunks.first(), hunks.last()) {
        (Some(first), Some(last)) => {
            first.side.start - (first.base.start - start)..last.side.end + (end - last.base.end)
        }
        _ => shift(start, offset)..shift(end, offset),
    }
}

fn shift(index: usize, offset: isize) -> usize {
    index
        .checked_add_signed(offset)
        .expect("a side range starts at 0 or later")
}

fn growth(range: &Range<usize>, base: &Range<usize>) -> isize {
    range.len() as isize - base.len() as isize
}

/// The regions of a three-way merge of `base` into `ours` and `theirs`, in order, covering all
/// three.
pub fn regions<T: Hash + Eq + Ord>(base: &[T], ours: &[T], theirs: &[T]) -> Vec<Region> {
    let ho = hunks(base, ours);
    let ht = hunks(base, theirs);
    let (mut i, mut j, mut pos) = (0, 0, 0);
    let (mut off_o, mut off_t) = (0isize, 0isize);
    let mut out = Vec::new();
    let stable = |from: usize, to: usize, off_o: isize, off_t: isize| Region {
        changed: Changed::Neither,
        base: from..to,
        ours: shift(from, off_o)..shift(to, off_o),
        theirs: shift(from, off_t)..shift(to, off_t),
    };
    loop {
        let start = match (ho.get(i), ht.get(j)) {
            (None, None) => break,
            (Some(o), None) => o.base.start,
            (None, Some(t)) => t.base.start,
            (Some(o), Some(t)) => o.base.start.min(t.base.start),
        };
        if pos < start {
            out.push(stable(pos, start, off_o, off_t));
        }
        let (i0, j0) = (i, j);
        let mut end = start;
        // A region grows while a hunk of either side starts inside it or right at its end.
        loop {
            let mut grew = false;
            while let Some(h) = ho.get(i).filter(|h| h.base.start <= end) {
                end = end.max(h.base.end);
                i += 1;
                grew = true;
            }
            while let Some(h) = ht.get(j).filter(|h| h.base.start <= end) {
                end = end.max(h.base.end);
                j += 1;
                grew = true;
            }
            if !grew {
                break;
            }
        }
        let (os, ts) = (&ho[i0..i], &ht[j0..j]);
        let base_range = start..end;
        let ours_range = side_range(os, start, end, off_o);
        let theirs_range = side_range(ts, start, end, off_t);
        off_o += growth(&ours_range, &base_range);
        off_t += growth(&theirs_range, &base_range);
        out.push(Region {
            changed: match (os.is_empty(), ts.is_empty()) {
                (false, true) => Changed::Ours,
                (true, false) => Changed::Theirs,
                _ => Changed::Both,
            },
            base: base_range,
            ours: ours_range,
            theirs: theirs_range,
        });
        pos = end;
    }
    if pos < base.len() {
        out.push(stable(pos, base.len(), off_o, off_t));
    } else if out.is_empty() {
        out.push(stable(0, 0, 0, 0));
    }
    out
}

fn owned(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|l| l.to_string()).collect()
}

/// Line-based three-way merge: a region both sides changed differently is a conflict.
pub fn merge(base: &[&str], ours: &[&str], theirs: &[&str]) -> Vec<Chunk> {
    let mut out = Vec::new();
    for region in regions(base, ours, theirs) {
        match region.changed {
            Changed::Neither | Changed::Ours => out.push(Chunk::Clean(owned(&ours[region.ours]))),
            Changed::Theirs => out.push(Chunk::Clean(owned(&theirs[region.theirs]))),
            Changed::Both => out.extend(conflict(
                &base[region.base],
                &ours[region.ours],
                &theirs[region.theirs],
            )),
        }
    }
    out
}

/// Two versions with no common ancestor: what both have is kept, each difference is a conflict
/// (with an empty base).
pub fn two_way(ours: &[&str], theirs: &[&str]) -> Vec<Chunk> {
    let mut out = Vec::new();
    for op in capture_diff_slices(Algorithm::Patience, ours, theirs) {
        let (tag, old, new) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            out.push(Chunk::Clean(owned(&ours[old])));
        } else {
            out.push(Chunk::Conflict {
                base: Vec::new(),
                ours: owned(&ours[old]),
                theirs: owned(&theirs[new]),
            });
        }
    }
    out
}

/// A region both sides changed: the same change is taken, otherwise a conflict whose lines both
/// sides share at its start and end are moved out of it.
pub fn conflict(base: &[&str], ours: &[&str], theirs: &[&str]) -> Vec<Chunk> {
    if ours == theirs {
        return vec![Chunk::Clean(owned(ours))];
    }
    let prefix = ours.iter().zip(theirs).take_while(|(o, t)| o == t).count();
    let suffix = ours[prefix..]
        .iter()
        .rev()
        .zip(theirs[prefix..].iter().rev())
        .take_while(|(o, t)| o == t)
        .count();
    // The base loses the same lines only where it has them too.
    let base_prefix = if base.len() >= prefix && base[..prefix] == ours[..prefix] {
        prefix
    } else {
        0
    };
    let base_suffix = if base.len() >= base_prefix + suffix
        && base[base.len() - suffix..] == ours[ours.len() - suffix..]
    {
        suffix
    } else {
        0
    };
    vec![
        Chunk::Clean(owned(&ours[..prefix])),
        Chunk::Conflict {
            base: owned(&base[base_prefix..base.len() - base_suffix]),
            ours: owned(&ours[prefix..ours.len() - suffix]),
            theirs: owned(&theirs[prefix..theirs.len() - suffix]),
        },
        Chunk::Clean(owned(&ours[ours.len() - suffix..])),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::merge::render;

    fn lines(s: &str) -> Vec<&str> {
        s.split_inclusive('\n').collect()
    }

    fn run(base: &str, ours: &str, theirs: &str) -> (String, usize) {
        let chunks = merge(&lines(base), &lines(ours), &lines(theirs));
        render(&chunks, "theirs")
    }

    #[test]
    fn separate_changes_merge() {
        let base = "a\nb\nc\nd\ne\n";
        let (text, conflicts) = run(base, "A\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n");
        assert_eq!((text.as_str(), conflicts), ("A\nb\nc\nd\nE\n", 0));
    }

    #[test]
    fn one_side_or_the_same_change_is_no_conflict() {
        let base = "a\nb\nc\n";
        assert_eq!(run(base, base, "a\nB\nc\n"), ("a\nB\nc\n".into(), 0));
        assert_eq!(run(base, "a\nB\nc\n", base), ("a\nB\nc\n".into(), 0));
        assert_eq!(run(base, "a\nB\nc\n", "a\nB\nc\n"), ("a\nB\nc\n".into(), 0));
    }

    #[test]
    fn touching_changes_conflict_with_markers() {
        let (text, conflicts) = run("a\nb\nc\nd\n", "a\nB\nc\nd\n", "a\nb\nC\nd\n");
        assert_eq!(conflicts, 1);
        assert_eq!(
            text,
            "a\n<<<<<<< ours\nB\nc\n||||||| base\nb\nc\n=======\nb\nC\n>>>>>>> theirs\nd\n"
        );
    }

    #[test]
    fn shared_lines_leave_the_conflict() {
        let (text, conflicts) = run("a\nx\nz\n", "a\nsame\nmine\nz\n", "a\nsame\ntheirs\nz\n");
        assert_eq!(conflicts, 1);
        assert!(
            text.starts_with("a\nsame\n<<<<<<< ours\nmine\n||||||| base\nx\n"),
            "{text}"
        );
    }

    #[test]
    fn insertions_at_one_point_are_one_region() {
        let regions = regions(&["a", "b"], &["a", "x", "b"], &["z", "a", "y", "b"]);
        let region =
            |changed, base: Range<usize>, ours: Range<usize>, theirs: Range<usize>| Region {
                changed,
                base,
                ours,
                theirs,
            };
        assert_eq!(
            regions,
            [
                region(Changed::Theirs, 0..0, 0..0, 0..1),
                region(Changed::Neither, 0..1, 0..1, 1..2),
                region(Changed::Both, 1..1, 1..2, 2..3),
                region(Changed::Neither, 1..2, 2..3, 3..4),
            ]
        );
    }

    #[test]
    fn two_way_conflicts_only_where_they_differ() {
        let chunks = two_way(&lines("a\nb\nc\n"), &lines("a\nB\nc\n"));
        let (text, conflicts) = render(&chunks, "theirs");
        assert_eq!(conflicts, 1);
        assert_eq!(
            text,
            "a\n<<<<<<< ours\nb\n||||||| base\n=======\nB\n>>>>>>> theirs\nc\n"
        );
    }
}
