//! `cellgen diff`: what every cell applies at a base commit against the working tree, per cell and
//! layer, objects added, removed or changed (identity: API group, kind, namespace, name), each
//! changed object with a unified YAML diff; cells with the same change grouped, for a
//! blast-radius summary. Formatting is in `format`; the command prints.

pub mod format;

use camino::{Utf8Path, Utf8PathBuf};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;

use crate::analysis::render::BuildCache;
use crate::analysis::snapshot::{
    CellObjects, Identity, LayerObjects, Object, RenderedSide, Snapshot,
};
use crate::ports::envsubst::to_flux_yaml;
use crate::ports::kustomize::Mode;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Added,
    Removed,
    Changed,
}

/// One object that differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub change: ChangeKind,
    #[serde(flatten)]
    pub id: Identity,
    /// The repository files the object comes from (its file, then the patches that changed it),
    /// on the working tree's side (the base's for a removed object).
    pub sources: Vec<Utf8PathBuf>,
    /// Unified diff of the object's YAML (all `+` for an added object, all `-` for a removed one).
    pub diff: String,
    /// The same change before substitution (identity and diff of the built objects): equal in
    /// every cell that gets the same edit, whatever its own values.
    #[serde(skip)]
    pub template: String,
}

/// One layer of one cell that differs (the cell's directory is a layer named
/// `snapshot::CELL_DIRECTORY`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LayerDiff {
    pub layer: String,
    /// Why the layer does not render, at the base and in the working tree (when that differs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub changes: Vec<Change>,
}

/// A cell that differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellDiff {
    pub cell: String,
    /// `added`/`removed` when the cell exists on one side only; `changed` otherwise.
    pub status: ChangeKind,
    pub layers: Vec<LayerDiff>,
}

/// Cells whose change is the same once each cell's own cell-metadata values are set aside.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    pub cells: Vec<String>,
    /// How many of the cells are in each environment.
    pub environments: BTreeMap<String, usize>,
    /// The change, as the first cell of the group has it.
    pub example: CellDiff,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diff {
    /// What was compared: the base as given (or found) and the commit it names.
    pub base: String,
    pub base_commit: String,
    /// Every cell on either side.
    pub cells: Vec<String>,
    pub groups: Vec<Group>,
    /// Per changed file, the changed lines of the working tree's version (for annotations).
    #[serde(skip)]
    pub changed_lines: BTreeMap<Utf8PathBuf, Vec<usize>>,
}

impl Diff {
    pub fn affected(&self) -> usize {
        self.groups.iter().map(|g| g.cells.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }
}

/// Everything [`compare`] rendered and cached, handed back so that the command decides when
/// to free it (`cellgen diff` never does: see `commands::diff`).
pub struct Renderings {
    _head: Vec<RenderedSide>,
    _base: Vec<RenderedSide>,
    _head_cache: Arc<BuildCache>,
    _base_cache: BuildCache,
    _base_snapshot: Snapshot,
}

/// A cell's sample at the base and in the working tree.
type Samples = (BTreeMap<String, String>, BTreeMap<String, String>);

/// Renders every cell of both snapshots and compares them: the working tree (`head`) first,
/// while `base` (a closure: reading a commit from Git takes a while) is loaded on another
/// thread; then the base, with a cache that takes every build of the working tree that read
/// the same files, and every layer whose build and variables are the same. The result is what
/// rendering both sides apart gives; only the work is shared.
pub fn compare<E: Send>(
    head: &Snapshot,
    base: impl FnOnce() -> Result<Snapshot, E> + Send,
    base_name: &str,
    base_commit: &str,
    mode: Mode,
) -> Result<(Diff, Renderings), E> {
    let head_cache = Arc::new(BuildCache::recording(&head.root, head.source.clone(), mode));
    let head_cells: Vec<&String> = head.cells.iter().collect();
    let (base, head_sides) = std::thread::scope(|scope| {
        let loader = scope.spawn(base);
        let sides = on_every_core(&head_cells, |cell| {
            head.render_side(cell, &head_cache, None, false)
        });
        let base = loader
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (base, sides)
    });
    let base = base?;
    let base_cache = BuildCache::sharing(&base.root, base.source.clone(), mode, head_cache.clone());
    let by_name: HashMap<&str, &RenderedSide> = head
        .cells
        .iter()
        .map(String::as_str)
        .zip(&head_sides)
        .collect();
    let cells: BTreeSet<String> = base.cells.iter().chain(&head.cells).cloned().collect();
    let list: Vec<&String> = cells.iter().collect();
    let same_contract = base.config == head.config && base.catalog == head.catalog;
    let compared = on_every_core(&list, |cell| {
        let after = by_name.get(cell.as_str()).copied();
        let before = base
            .cells
            .contains(cell)
            .then(|| base.render_side(cell, &base_cache, after, same_contract));
        compare_sides(&head.config.environments, cell, before, after)
    });
    let mut diffs: Vec<(CellDiff, String, String)> = Vec::new();
    let mut base_sides = Vec::new();
    for (diff, side) in compared {
        diffs.extend(diff);
        base_sides.extend(side);
    }
    let mut changed_lines = BTreeMap::new();
    for (diff, _, _) in &diffs {
        for layer in &diff.layers {
            for change in &layer.changes {
                for file in &change.sources {
                    if !changed_lines.contains_key(file)
                        && let Some(lines) = changed_file_lines(&base, head, file)
                    {
                        changed_lines.insert(file.clone(), lines);
                    }
                }
            }
        }
    }
    let groups = group(diffs);
    let diff = Diff {
        base: base_name.to_string(),
        base_commit: base_commit.to_string(),
        cells: cells.into_iter().collect(),
        groups,
        changed_lines,
    };
    let renderings = Renderings {
        _head: head_sides,
        _base: base_sides,
        _head_cache: head_cache,
        _base_cache: base_cache,
        _base_snapshot: base,
    };
    Ok((diff, renderings))
}

/// One cell compared: its diff, the signature of its change and its environment (`None` when
/// nothing differs), and its base side, kept with the other renderings.
fn compare_sides(
    environments: &[String],
    cell: &str,
    before: Option<RenderedSide>,
    after: Option<&RenderedSide>,
) -> (Option<(CellDiff, String, String)>, Option<RenderedSide>) {
    let status = match (&before, after) {
        (None, Some(_)) => ChangeKind::Added,
        (Some(_), None) => ChangeKind::Removed,
        _ => ChangeKind::Changed,
    };
    let empty: CellObjects = Ok(Vec::new());
    let layers = compare_cell(
        before.as_ref().map_or(&empty, |b| &b.objects),
        after.map_or(&empty, |a| &a.objects),
    );
    let samples = (
        before
            .as_ref()
            .map(|b| b.sample.clone())
            .unwrap_or_default(),
        after.map(|a| a.sample.clone()).unwrap_or_default(),
    );
    if layers.is_empty() {
        return (None, before);
    }
    let environment = crate::model::cell::CellName::parse(cell, environments)
        .map_or_else(|_| "other".to_string(), |c| c.environment);
    let diff = CellDiff {
        cell: cell.to_string(),
        status,
        layers,
    };
    let key = signature(&diff, &samples);
    (Some((diff, key, environment)), before)
}

/// `work` done for every item, on every core (as `check` does: one item per thread from start
/// to end, so the result does not depend on timing), in `items`' order.
fn on_every_core<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(items.len())
        .max(1);
    let next = AtomicUsize::new(0);
    let mut slots: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let (next, work) = (&next, &work);
                scope.spawn(move || {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        done.push((i, work(item)));
                    }
                    done
                })
            })
            .collect();
        for worker in workers {
            match worker.join() {
                Ok(done) => {
                    for (i, result) in done {
                        slots[i] = Some(result);
                    }
                }
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    });
    slots
        .into_iter()
        .map(|slot| slot.expect("every item is done by one worker"))
        .collect()
}

fn compare_cell<'a>(before: &'a CellObjects, after: &'a CellObjects) -> Vec<LayerDiff> {
    let (before, after) = match (before, after) {
        (Ok(b), Ok(a)) => (b, a),
        (b, a) => {
            let (b, a) = (b.as_ref().err(), a.as_ref().err());
            if b == a {
                return Vec::new();
            }
            return vec![LayerDiff {
                layer: crate::analysis::snapshot::CELL_DIRECTORY.to_string(),
                base_error: b.cloned(),
                error: a.cloned(),
                changes: Vec::new(),
            }];
        }
    };
    // Layers in the working tree's order, then those only the base has.
    let mut names: Vec<&String> = after.iter().map(|(n, _)| n).collect();
    for (n, _) in before {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    let empty: LayerObjects = Ok(BTreeMap::new());
    let find = |list: &'a [(String, Arc<LayerObjects>)], name: &str| {
        list.iter().find(|(n, _)| n == name).map(|(_, l)| l)
    };
    let mut out = Vec::new();
    for name in names {
        let (b, a) = (find(before, name), find(after, name));
        if let (Some(b), Some(a)) = (b, a)
            && Arc::ptr_eq(b, a)
        {
            // One rendering shared by both sides: nothing differs.
            continue;
        }
        let b = b.map_or(&empty, |b| b.as_ref());
        let a = a.map_or(&empty, |a| a.as_ref());
        let diff = match (b, a) {
            (Ok(b), Ok(a)) => LayerDiff {
                layer: name.clone(),
                base_error: None,
                error: None,
                changes: compare_objects(b, a),
            },
            _ => {
                let (be, ae) = (b.as_ref().err().cloned(), a.as_ref().err().cloned());
                if be == ae {
                    continue;
                }
                LayerDiff {
                    layer: name.clone(),
                    base_error: be,
                    error: ae,
                    changes: Vec::new(),
                }
            }
        };
        if !diff.changes.is_empty() || diff.base_error.is_some() || diff.error.is_some() {
            out.push(diff);
        }
    }
    out
}

fn sources_of(object: &Object) -> Vec<Utf8PathBuf> {
    let mut files = vec![object.origin().to_path_buf()];
    for p in object.patched_by() {
        if !files.contains(p) {
            files.push(p.clone());
        }
    }
    files
}

fn compare_objects(
    before: &BTreeMap<Identity, Object>,
    after: &BTreeMap<Identity, Object>,
) -> Vec<Change> {
    let mut out = Vec::new();
    let ids: BTreeSet<&Identity> = before.keys().chain(after.keys()).collect();
    let yaml = |o: Option<&Object>, built: bool| {
        o.map_or_else(String::new, |o| {
            to_flux_yaml(if built { o.built() } else { o.value() })
        })
    };
    for id in ids {
        let (b, a) = (before.get(id), after.get(id));
        let (change, sources) = match (b, a) {
            (Some(b), Some(a)) if b.same(a) || b.value() == a.value() => continue,
            (Some(_), Some(a)) => (ChangeKind::Changed, sources_of(a)),
            (None, Some(a)) => (ChangeKind::Added, sources_of(a)),
            (Some(b), None) => (ChangeKind::Removed, sources_of(b)),
            (None, None) => continue,
        };
        let built_id = a.or(b).map(|o| Identity::of(o.built()));
        out.push(Change {
            change,
            id: id.clone(),
            sources,
            diff: unified(&yaml(b, false), &yaml(a, false)),
            template: format!(
                "{:?}\n{}",
                built_id,
                unified(&yaml(b, true), &yaml(a, true))
            ),
        });
    }
    out
}

/// A unified diff of two YAML texts, three lines of context, without file headers.
pub fn unified(before: &str, after: &str) -> String {
    let diff = similar::TextDiff::from_lines(before, after);
    let mut out = String::new();
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        out.push_str(&hunk.to_string());
    }
    if !out.ends_with('\n') && !out.is_empty() {
        out.push('\n');
    }
    out
}

/// Cells whose changes have the same `signature`: the same edit, whatever each cell's own
/// values (so one edit of a shared layer is one change for 37 cells).
fn group(diffs: Vec<(CellDiff, String, String)>) -> Vec<Group> {
    let mut groups: Vec<(String, Group)> = Vec::new();
    for (diff, key, environment) in diffs {
        let at = match groups.iter().position(|(k, _)| *k == key) {
            Some(at) => {
                groups[at].1.cells.push(diff.cell.clone());
                at
            }
            None => {
                groups.push((
                    key,
                    Group {
                        cells: vec![diff.cell.clone()],
                        environments: BTreeMap::new(),
                        example: diff,
                    },
                ));
                groups.len() - 1
            }
        };
        *groups[at].1.environments.entry(environment).or_default() += 1;
    }
    let mut groups: Vec<Group> = groups.into_iter().map(|(_, g)| g).collect();
    // The widest change first.
    groups.sort_by_key(|g| std::cmp::Reverse(g.cells.len()));
    groups
}

/// What makes two cells' changes the same: the edits before substitution (layer, identity and
/// diff of the built objects, rendering errors with the cell's name set aside), and the
/// cell-metadata values that changed (keys added or removed by name only: a renamed key keeps
/// each cell's own value).
fn signature(diff: &CellDiff, samples: &Samples) -> String {
    let (before, after) = samples;
    let mut text = format!("{:?}\n", diff.status);
    for layer in &diff.layers {
        text.push_str(&format!(
            "layer {}\n{:?}\n{:?}\n",
            layer.layer, layer.base_error, layer.error
        ));
        for c in &layer.changes {
            text.push_str(&format!("{:?} {}\n", c.change, c.template));
        }
    }
    let keys: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    for key in keys {
        match (before.get(key), after.get(key)) {
            (Some(b), Some(a)) if a != b => text.push_str(&format!("value {key}: {b} -> {a}\n")),
            (Some(_), None) => text.push_str(&format!("key removed {key}\n")),
            (None, Some(_)) => text.push_str(&format!("key added {key}\n")),
            _ => {}
        }
    }
    text.replace(&diff.cell, "${cell}")
}

/// The lines (1-based, working tree's side) where `file` differs from the base: the first line of
/// each changed block (line 1 for a new file); `None` when the file is the same or gone.
fn changed_file_lines(base: &Snapshot, head: &Snapshot, file: &Utf8Path) -> Option<Vec<usize>> {
    let after = head.source.read_text(&head.root, file)?;
    let before = base.source.read_text(&base.root, file).unwrap_or_default();
    if before == after {
        return None;
    }
    if before.is_empty() {
        return Some(vec![1]);
    }
    let diff = similar::TextDiff::from_lines(&before, &after);
    let mut lines = Vec::new();
    for op in diff.ops() {
        let new = op.new_range();
        match op.tag() {
            similar::DiffTag::Equal => {}
            // A deletion is shown on the line after it (or the last line).
            similar::DiffTag::Delete => {
                lines.push((new.start + 1).min(after.lines().count().max(1)));
            }
            _ => lines.push(new.start + 1),
        }
    }
    lines.dedup();
    Some(lines)
}
