//! YAML and HCL merged by their structure, read from indentation (so the text itself is never
//! rebuilt: every line comes from one of the three versions).
//!
//! A block of lines at one indentation is a list of entries: a YAML `key:` or list item `- …`, an
//! HCL attribute `name = …`, block `type "label" {` or list element, each with the comments and
//! blank lines above it and the more indented lines below it (and, in HCL, its closing bracket).
//! A mapping is merged key by key: a key only one side changed takes that side's version,
//! whatever happened around it, and a key both changed is merged inside (the lines under it, a
//! block at the next indentation). A list is merged item by item (diff3 over items), keeping
//! every item when both sides inserted at one place. Anything this reading does not cover (a
//! block scalar, a heredoc, a flow collection over several lines, a repeated key) is merged line
//! by line. In HCL, `=` alignment is not a change, and a merged body the user kept aligned like
//! `terraform fmt` is aligned again.

use std::collections::BTreeMap;

use super::blocks::{
    Block, Entry, Kind, aligned, lines_of, lookup, normalise, parse, realign_clean, same_lines,
};
use super::diff3::{self, Changed};
use super::{Chunk, Syntax};

/// Merges `theirs` into `ours` (`base` None: no common ancestor).
pub fn merge(base: Option<&[&str]>, ours: &[&str], theirs: &[&str], syntax: Syntax) -> Vec<Chunk> {
    if syntax == Syntax::Text {
        return textual(base, ours, theirs);
    }
    merge_block(base, ours, theirs, syntax)
}

fn textual(base: Option<&[&str]>, ours: &[&str], theirs: &[&str]) -> Vec<Chunk> {
    match base {
        Some(base) => diff3::merge(base, ours, theirs),
        None => diff3::two_way(ours, theirs),
    }
}

fn clean(lines: &[&str]) -> Vec<Chunk> {
    vec![Chunk::Clean(lines.iter().map(|l| l.to_string()).collect())]
}

fn conflict(base: &[&str], ours: &[&str], theirs: &[&str]) -> Vec<Chunk> {
    diff3::conflict(base, ours, theirs)
}

fn merge_block(
    base: Option<&[&str]>,
    ours: &[&str],
    theirs: &[&str],
    syntax: Syntax,
) -> Vec<Chunk> {
    let same = |a: &[&str], b: &[&str]| same_lines(syntax, a, b);
    if same(ours, theirs) {
        return clean(theirs);
    }
    // Without a common ancestor a key or item only one side has may be the other's deletion
    // as well as this side's addition: every difference is a conflict.
    let Some(base) = base else {
        return diff3::two_way(ours, theirs);
    };
    if same(base, ours) {
        return clean(theirs);
    }
    if same(base, theirs) {
        return clean(ours);
    }
    let (Some(o), Some(t), Some(b)) = (
        parse(ours, syntax),
        parse(theirs, syntax),
        parse(base, syntax),
    ) else {
        return diff3::merge(base, ours, theirs);
    };
    let compatible = |x: &Block, y: &Block| {
        x.entries.is_empty() || y.entries.is_empty() || (x.kind == y.kind && x.indent == y.indent)
    };
    if o.entries.is_empty()
        || t.entries.is_empty()
        || !compatible(&o, &t)
        || !compatible(&b, &o)
        || !compatible(&b, &t)
    {
        return diff3::merge(base, ours, theirs);
    }
    let merger = Merger { syntax };
    let mut chunks = match o.kind {
        Some(Kind::Sequence) => merger.sequence(&b, &o, &t),
        _ => merger.mapping(&b, &o, &t),
    };
    let tails = diff3::merge(&b.tail, &o.tail, &t.tail);
    chunks.extend(tails);
    if syntax == Syntax::Hcl && aligned(&o) {
        realign_clean(chunks)
    } else {
        chunks
    }
}

struct Merger {
    syntax: Syntax,
}

impl Merger {
    fn same(&self, a: &[&str], b: &[&str]) -> bool {
        same_lines(self.syntax, a, b)
    }

    fn same_entry(&self, a: &Entry, b: &Entry) -> bool {
        self.same(&a.lines(), &b.lines())
    }

    /// Key by key, in ours' order; a key only theirs has goes after the key theirs has before it.
    fn mapping(&self, b: &Block, o: &Block, t: &Block) -> Vec<Chunk> {
        let index = |block: &Block| -> BTreeMap<String, usize> {
            block
                .entries
                .iter()
                .enumerate()
                .map(|(i, e)| (e.key.clone(), i))
                .collect()
        };
        let (bi, oi, ti) = (index(b), index(o), index(t));
        let mut anchored: BTreeMap<Option<&str>, Vec<&str>> = BTreeMap::new();
        let mut previous: Option<&str> = None;
        for entry in &t.entries {
            if oi.contains_key(&entry.key) {
                previous = Some(&entry.key);
            } else {
                anchored.entry(previous).or_default().push(&entry.key);
            }
        }
        let mut out = Vec::new();
        let decide = |key: &str, out: &mut Vec<Chunk>| {
            let entry = self.entry(
                lookup(b, &bi, key),
                lookup(o, &oi, key),
                lookup(t, &ti, key),
            );
            out.extend(entry);
        };
        for key in anchored.get(&None).into_iter().flatten() {
            decide(key, &mut out);
        }
        for entry in &o.entries {
            decide(&entry.key, &mut out);
            for key in anchored
                .get(&Some(entry.key.as_str()))
                .into_iter()
                .flatten()
            {
                decide(key, &mut out);
            }
        }
        out
    }

    /// One key of a mapping.
    fn entry(&self, b: Option<Entry>, o: Option<Entry>, t: Option<Entry>) -> Vec<Chunk> {
        match (&b, &o, &t) {
            (_, Some(o), Some(t)) => {
                let base_is = |e: &Entry| b.as_ref().is_some_and(|b| self.same_entry(b, e));
                if self.same_entry(o, t) || base_is(o) {
                    clean(&t.lines())
                } else if base_is(t) {
                    clean(&o.lines())
                } else {
                    self.both_changed(b.as_ref(), o, t)
                }
            }
            // One side deleted it: gone if the other left it as it was, else a conflict.
            (Some(b), Some(o), None) => {
                if self.same_entry(b, o) {
                    Vec::new()
                } else {
                    conflict(&b.lines(), &o.lines(), &[])
                }
            }
            (Some(b), None, Some(t)) => {
                if self.same_entry(b, t) {
                    Vec::new()
                } else {
                    conflict(&b.lines(), &[], &t.lines())
                }
            }
            (None, Some(o), None) => clean(&o.lines()),
            (None, None, Some(t)) => clean(&t.lines()),
            _ => Vec::new(),
        }
    }

    /// An entry both sides changed: its own line, then what is under it, merged one level down.
    fn both_changed(&self, b: Option<&Entry>, o: &Entry, t: &Entry) -> Vec<Chunk> {
        let whole = || textual(b.map(Entry::lines).as_deref(), &o.lines(), &t.lines());
        if o.opaque || t.opaque || b.is_some_and(|b| b.opaque) {
            return whole();
        }
        let (Some(head), Some(close)) = (
            self.pick(b.map(|b| Some(b.head)), Some(o.head), Some(t.head)),
            self.pick(b.map(|b| b.close), o.close, t.close),
        ) else {
            return whole();
        };
        let mut out = textual(b.map(|b| b.trivia.as_slice()), &o.trivia, &t.trivia);
        out.extend(head.map(|h| Chunk::Clean(vec![h.to_string()])));
        out.extend(merge_block(
            b.map(|b| b.body.as_slice()),
            &o.body,
            &t.body,
            self.syntax,
        ));
        out.extend(close.map(|c| Chunk::Clean(vec![c.to_string()])));
        out
    }

    /// One line three ways: the side that changed it, or None when both did, differently.
    fn pick<'a>(
        &self,
        b: Option<Option<&'a str>>,
        o: Option<&'a str>,
        t: Option<&'a str>,
    ) -> Option<Option<&'a str>> {
        let same = |x: Option<&str>, y: Option<&str>| match (x, y) {
            (Some(x), Some(y)) => self.same(&[x], &[y]),
            (None, None) => true,
            _ => false,
        };
        if same(o, t) || b.is_some_and(|b| same(b, o)) {
            Some(t)
        } else if b.is_some_and(|b| same(b, t)) {
            Some(o)
        } else {
            None
        }
    }

    /// Item by item (diff3 over whole items): both sides inserting at one place keeps all the
    /// items; one item both changed is merged inside; anything else both changed is a conflict.
    fn sequence(&self, b: &Block, o: &Block, t: &Block) -> Vec<Chunk> {
        let tokens = |block: &Block| -> Vec<String> {
            block
                .entries
                .iter()
                .map(|e| {
                    e.lines()
                        .iter()
                        .map(|l| normalise(self.syntax, l))
                        .collect::<String>()
                })
                .collect()
        };
        let (bt, ot, tt) = (tokens(b), tokens(o), tokens(t));
        let mut out = Vec::new();
        for region in diff3::regions(&bt, &ot, &tt) {
            let (be, oe, te) = (
                &b.entries[region.base.clone()],
                &o.entries[region.ours.clone()],
                &t.entries[region.theirs.clone()],
            );
            match region.changed {
                Changed::Neither | Changed::Ours => out.extend(clean(&lines_of(oe))),
                Changed::Theirs => out.extend(clean(&lines_of(te))),
                Changed::Both => {
                    if ot[region.ours.clone()] == tt[region.theirs.clone()] {
                        out.extend(clean(&lines_of(oe)));
                    } else if be.is_empty() {
                        out.extend(clean(&lines_of(oe)));
                        let mine = &ot[region.ours.clone()];
                        for (entry, token) in te.iter().zip(&tt[region.theirs.clone()]) {
                            if !mine.contains(token) {
                                out.extend(clean(&entry.lines()));
                            }
                        }
                    } else if let ([be], [oe], [te]) = (be, oe, te)
                        && be.key == oe.key
                        && oe.key == te.key
                    {
                        out.extend(self.both_changed(Some(be), oe, te));
                    } else {
                        out.extend(conflict(&lines_of(be), &lines_of(oe), &lines_of(te)));
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::merge::render;

    fn run(syntax: Syntax, base: &str, ours: &str, theirs: &str) -> (String, usize) {
        fn l(s: &str) -> Vec<&str> {
            s.split_inclusive('\n').collect()
        }
        render(
            &merge(Some(&l(base)), &l(ours), &l(theirs), syntax),
            "cellgen",
        )
    }

    #[test]
    fn yaml_keys_changed_on_touching_lines_merge() {
        let base = "spec:\n  interval: 10m\n  path: ./a\n  prune: true\n";
        let ours = "spec:\n  interval: 5m\n  path: ./a\n  prune: true\n";
        let theirs = "spec:\n  interval: 10m\n  path: ./b\n  prune: true\n";
        assert_eq!(
            run(Syntax::Yaml, base, ours, theirs),
            (
                "spec:\n  interval: 5m\n  path: ./b\n  prune: true\n".into(),
                0
            )
        );
    }

    #[test]
    fn a_key_added_by_theirs_goes_after_its_neighbour() {
        let base = "a: 1\nb: 2\n";
        let ours = "a: 1\nb: 2\nmine: 3\n";
        let theirs = "a: 1\nnew: 9\nb: 2\n";
        assert_eq!(
            run(Syntax::Yaml, base, ours, theirs),
            ("a: 1\nnew: 9\nb: 2\nmine: 3\n".into(), 0)
        );
    }

    #[test]
    fn the_same_key_changed_twice_conflicts_on_that_key_only() {
        let base = "a: 1\nb: 2\nc: 3\n";
        let (text, conflicts) = run(
            Syntax::Yaml,
            base,
            "a: 1\nb: 20\nc: 3\n",
            "a: 1\nb: 21\nc: 4\n",
        );
        assert_eq!(conflicts, 1);
        assert_eq!(
            text,
            "a: 1\n<<<<<<< ours\nb: 20\n||||||| base\nb: 2\n=======\nb: 21\n>>>>>>> cellgen\nc: 4\n"
        );
    }

    #[test]
    fn list_items_both_sides_append_are_all_kept() {
        let base = "spec:\n  components:\n    - ../a\n  prune: true\n";
        let ours = "spec:\n  components:\n    - ../a\n    - ../mine\n  prune: true\n";
        let theirs = "spec:\n  components:\n    - ../a\n    - ../theirs\n  prune: true\n";
        assert_eq!(
            run(Syntax::Yaml, base, ours, theirs).0,
            "spec:\n  components:\n    - ../a\n    - ../mine\n    - ../theirs\n  prune: true\n"
        );
    }

    #[test]
    fn a_list_item_both_replace_is_a_conflict() {
        let base = "terms:\n  - alias: al2023@latest\n";
        let ours = "terms:\n  - alias: al2023@v1\n";
        let theirs = "terms:\n  - alias: ${x}\n";
        assert_eq!(run(Syntax::Yaml, base, ours, theirs).1, 1);
    }

    #[test]
    fn block_scalars_merge_as_text() {
        let base = "a: |\n  x: 1\n  y: 2\nb: 1\n";
        let ours = "a: |\n  x: 1\n  y: 3\nb: 1\n";
        let theirs = "a: |\n  x: 5\n  y: 2\nb: 1\n";
        assert_eq!(run(Syntax::Yaml, base, ours, theirs).1, 1);
    }

    #[test]
    fn hcl_object_keys_merge_and_realign() {
        let base = "x = {\n  data = {\n    schema = \"1\"\n    a      = 1\n  }\n}\n";
        let ours =
            "x = {\n  data = {\n    schema = \"1\"\n    a      = 1\n    mine   = 2\n  }\n}\n";
        let theirs = "x = {\n  data = {\n    schema      = \"2\"\n    a           = 1\n    longer_key  = 3\n  }\n}\n";
        let theirs = theirs.replace("longer_key  =", "longer_key =");
        let (text, conflicts) = run(Syntax::Hcl, base, ours, &theirs);
        assert_eq!(conflicts, 0);
        assert_eq!(
            text,
            "x = {\n  data = {\n    schema     = \"2\"\n    a          = 1\n    longer_key = 3\n    mine       = 2\n  }\n}\n"
        );
    }

    #[test]
    fn hcl_list_elements_both_add_are_kept() {
        let base = "  depends_on = [\n    a,\n  ]\n";
        let ours = "  depends_on = [\n    a,\n    mine,\n  ]\n";
        let theirs = "  depends_on = [\n    a,\n    theirs,\n  ]\n";
        assert_eq!(
            run(Syntax::Hcl, base, ours, theirs),
            (
                "  depends_on = [\n    a,\n    mine,\n    theirs,\n  ]\n".into(),
                0
            )
        );
    }

    #[test]
    fn hcl_blocks_merge_attribute_by_attribute() {
        let base = "module \"eks\" {\n  name = var.name\n  size = 2\n}\n";
        let ours = "module \"eks\" {\n  name = var.name\n  size = 3\n}\n";
        let theirs = "module \"eks\" {\n  name = var.name\n  size = 2\n  more = true\n}\n";
        assert_eq!(
            run(Syntax::Hcl, base, ours, theirs),
            (
                "module \"eks\" {\n  name = var.name\n  size = 3\n  more = true\n}\n".into(),
                0
            )
        );
    }

    #[test]
    fn an_entry_one_side_deletes_and_the_other_changes_conflicts() {
        let (text, conflicts) = run(Syntax::Yaml, "a: 1\nb: 2\n", "a: 1\n", "a: 1\nb: 3\n");
        assert_eq!(conflicts, 1, "{text}");
        let (text, conflicts) = run(Syntax::Yaml, "a: 1\nb: 2\n", "a: 1\n", "a: 1\nb: 2\nc: 3\n");
        assert_eq!((text.as_str(), conflicts), ("a: 1\nc: 3\n", 0));
    }
}
