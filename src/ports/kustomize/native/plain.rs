//! Builds of a directory whose kustomization lists only files, remembered by content: every
//! cell's directory is one (its kustomization.yaml and one Flux Kustomization file per layer),
//! and across cells these differ only in the comment header naming the cell and in the path.
//!
//! Such a build reads the kustomization and the listed files and nothing else (no Flux field
//! asks for more, no other kustomization field names a file), and a successful build is a
//! function of what they parse to: paths appear only in errors and in each object's origin.
//! The key is the parses themselves, the `Arc`s the content-keyed parse memos hand out
//! (`load::memo`: one per content), so a directory is recognised without hashing its text again;
//! the origins are this directory's own files. The file checks and reads are made as the full
//! build makes them, and anything unusual (an error on the way, a directory, a kustomization
//! field other than `resources`) is left to the full build, so its errors are its own. Only
//! successes are kept.

use camino::{Utf8Path, Utf8PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::super::fsroot::{Entry, Fs};
use super::super::load;
use super::super::{BuildError, FluxFields, Resource};
use super::is_remote;

/// Distinct directories remembered; past this, new ones are built in full every time.
const MAX_ENTRIES: usize = 4096;

type Objects = Arc<load::MarkedObjects>;

/// What a directory's build reads: its kustomization and each listed file, parsed.
struct Inputs {
    kustomization: Arc<Value>,
    files: Vec<Objects>,
    /// Repository-relative path of each listed file, as the objects' origins.
    origins: Vec<Utf8PathBuf>,
}

/// A remembered build: each object, and which listed file it came from.
pub struct Remembered {
    flux: FluxFields,
    /// Held so that no other content's parse can have their addresses while this is kept.
    kustomization: Arc<Value>,
    files: Vec<Objects>,
    objects: Arc<Vec<(Arc<Value>, usize)>>,
}

impl Remembered {
    fn answers(&self, flux: &FluxFields, inputs: &Inputs) -> bool {
        Arc::ptr_eq(&self.kustomization, &inputs.kustomization)
            && self.files.len() == inputs.files.len()
            && self
                .files
                .iter()
                .zip(&inputs.files)
                .all(|(a, b)| Arc::ptr_eq(a, b))
            && self.flux == *flux
    }
}

/// Keyed by the kustomization's parse (its address: the entry holds it); the command's, in
/// `Caches`, with the parse memos whose `Arc`s it holds.
pub type Memo = foldhash::HashMap<usize, Vec<Remembered>>;

fn memo(fs: &Fs) -> std::sync::MutexGuard<'_, Memo> {
    super::super::lock_cache(&fs.caches().plain)
}

/// `full()` (the build of `dir`, a directory under the root, with `flux`), or what it gave for
/// a directory reading the same content, with this directory's origins.
pub(super) fn build(
    fs: &Fs,
    dir: &Utf8Path,
    flux: &FluxFields,
    full: impl FnOnce() -> Result<Vec<Resource>, BuildError>,
) -> Result<Vec<Resource>, BuildError> {
    let Some(inputs) = inputs(fs, dir, flux) else {
        return full();
    };
    let key = Arc::as_ptr(&inputs.kustomization) as usize;
    let hit = memo(fs)
        .get(&key)
        .and_then(|kept| kept.iter().find(|r| r.answers(flux, &inputs)))
        .map(|r| r.objects.clone());
    if let Some(hit) = hit {
        fs.caches().plain_hit();
        return Ok(hit
            .iter()
            .map(|(object, file)| Resource {
                object: object.clone(),
                origin: inputs.origins[*file].clone(),
                patched_by: Vec::new(),
            })
            .collect());
    }
    let built = full()?;
    let objects: Option<Vec<(Arc<Value>, usize)>> = built
        .iter()
        .map(|r| {
            let file = inputs.origins.iter().position(|o| *o == r.origin)?;
            r.patched_by.is_empty().then(|| (r.object.clone(), file))
        })
        .collect();
    if let Some(objects) = objects {
        let mut memo = memo(fs);
        if memo.values().map(Vec::len).sum::<usize>() < MAX_ENTRIES {
            memo.entry(key).or_default().push(Remembered {
                flux: flux.clone(),
                kustomization: inputs.kustomization,
                files: inputs.files,
                objects: Arc::new(objects),
            });
        }
    }
    Ok(built)
}

/// What the build of `dir` reads, when it is a plain one: a kustomization file (not one Flux
/// generates) with `apiVersion`, `kind` and `resources` only, each resource a local file, and
/// no Flux field. `None` when anything else (or any error) is met.
fn inputs(fs: &Fs, dir: &Utf8Path, flux: &FluxFields) -> Option<Inputs> {
    let no_fields = FluxFields {
        round_trip: flux.round_trip,
        ..FluxFields::default()
    };
    if *flux != no_fields {
        return None;
    }
    let file = fs.kustomization_file(dir).ok()??;
    let rel = fs.rel(&file);
    let kustomization =
        load::parse_kustomization_shared(fs.caches(), &rel, &fs.read_text(&file).ok()?).ok()?;
    let fields = kustomization.as_object()?;
    if !fields
        .keys()
        .all(|k| matches!(k.as_str(), "apiVersion" | "kind" | "resources"))
    {
        return None;
    }
    let entries = fields.get("resources")?.as_array()?;
    if entries.is_empty() {
        return None;
    }
    let mut files = Vec::with_capacity(entries.len());
    let mut origins = Vec::with_capacity(entries.len());
    for entry in entries {
        let entry = entry.as_str()?;
        if is_remote(entry) {
            return None;
        }
        let abs = fs.resolve(dir, entry, &rel).ok()?;
        if fs.entry(&abs, &rel, entry).ok()? != Entry::File {
            return None;
        }
        let origin = fs.rel(&abs);
        let text = fs.read_text(&abs).ok()?;
        files.push(load::parse_objects_marked_shared(fs.caches(), &origin, &text).ok()?);
        origins.push(origin);
    }
    Some(Inputs {
        kustomization,
        files,
        origins,
    })
}

#[cfg(test)]
mod tests {
    use super::super::{build, build_dir};
    use super::*;

    /// Writes a fixture file below `root`: test set-up, not the port's own file access.
    fn write(root: &Utf8Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("a file below the root")).unwrap();
        std::fs::write(path, text).unwrap();
    }

    const LAYER: &str = "apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: NAME
  namespace: flux-system
spec:
  path: ./NAME
  sourceRef:
    kind: GitRepository
    name: flux-system
";

    /// A cell's directory: a kustomization (its header names the cell) and its layer files.
    fn cell(root: &Utf8Path, name: &str, layers: &[(&str, &str)]) {
        let list: Vec<String> = layers.iter().map(|(f, _)| format!("  - {f}\n")).collect();
        write(
            root,
            &format!("cells/{name}/kustomization.yaml"),
            &format!(
                "# Cell {name}: its layers.\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n{}",
                list.concat()
            ),
        );
        for (file, text) in layers {
            write(root, &format!("cells/{name}/{file}"), text);
        }
    }

    fn same(a: &Result<Vec<Resource>, BuildError>, b: &Result<Vec<Resource>, BuildError>) -> bool {
        match (a, b) {
            (Ok(a), Ok(b)) => a == b,
            (Err(a), Err(b)) => a.to_string() == b.to_string() && a.location() == b.location(),
            _ => false,
        }
    }

    /// Remembered builds equal the full builds: for directories that differ only in the cell's
    /// name (with their own origins), in a layer's content, in a value whose type YAML reads
    /// differently, and for errors (with their file and line).
    #[test]
    fn remembered_builds_are_the_full_builds() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path())
            .unwrap()
            .canonicalize_utf8()
            .unwrap();
        let apps = LAYER.replace("NAME", "apps");
        let infra = LAYER.replace("NAME", "infra");
        let odd = format!("{apps}  timeout: 0775\n");
        let yes = format!("{apps}  timeout: yes\n");
        cell(&root, "a", &[("apps.yaml", &apps), ("infra.yaml", &infra)]);
        cell(&root, "b", &[("apps.yaml", &apps), ("infra.yaml", &infra)]);
        // The same files, listed the other way round.
        cell(&root, "c", &[("infra.yaml", &infra), ("apps.yaml", &apps)]);
        // One layer's content differs.
        cell(&root, "d", &[("apps.yaml", &odd), ("infra.yaml", &infra)]);
        cell(&root, "e", &[("apps.yaml", &yes), ("infra.yaml", &infra)]);
        // Errors: a file that does not parse, a missing file, an id given twice.
        cell(
            &root,
            "f",
            &[("apps.yaml", "kind: [\n"), ("infra.yaml", &infra)],
        );
        cell(&root, "g", &[("apps.yaml", &apps)]);
        std::fs::remove_file(root.join("cells/g/apps.yaml")).unwrap();
        cell(&root, "h", &[("apps.yaml", &apps), ("again.yaml", &apps)]);
        // A layer file in a directory of its own: the full build, as it is not plain.
        cell(&root, "i", &[("apps.yaml", &apps), ("infra.yaml", &infra)]);
        write(
            &root,
            "cells/i/kustomization.yaml",
            "resources: [apps.yaml, sub]\n",
        );
        write(
            &root,
            "cells/i/sub/kustomization.yaml",
            "resources: [../infra.yaml]\n",
        );
        // A layer file the artifact leaves out, and one that is a link: the same contents as
        // cell a's, and the full build's errors.
        cell(&root, "j", &[("apps.yaml", &apps), ("infra.yaml", &infra)]);
        write(&root, ".sourceignore", "cells/j/infra.yaml\n");
        cell(&root, "k", &[("apps.yaml", &apps), ("infra.yaml", &infra)]);
        std::fs::remove_file(root.join("cells/k/infra.yaml")).unwrap();
        std::os::unix::fs::symlink(
            root.join("cells/a/infra.yaml"),
            root.join("cells/k/infra.yaml"),
        )
        .unwrap();
        let fs = Fs::new(&root, crate::ports::kustomize::files::tests::Disk::files()).unwrap();
        let before = fs.caches().plain_hits();
        for flux in [FluxFields::flux(), FluxFields::default()] {
            for name in [
                "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "a", "d", "e",
            ] {
                let path = format!("cells/{name}");
                let full = build_dir(&fs, &root.join(&path), &flux);
                let remembered = build(&fs, &path, &flux);
                assert!(
                    same(&remembered, &full),
                    "{name}: {remembered:?} != {full:?}"
                );
                let fails = ["f", "g", "h", "j", "k"].contains(&name);
                assert_eq!(full.is_err(), fails, "{name}: {full:?}");
                if let Ok(resources) = &remembered {
                    assert!(resources.iter().all(|r| r.origin.starts_with(&path)));
                }
            }
        }
        assert!(full_error_is_kept(&fs));
        // Cells b, c (second of each content), and the repeats were answered from the memo.
        assert!(fs.caches().plain_hits() >= before + 8);
    }

    /// A Flux field makes the build not plain: it is built in full.
    fn full_error_is_kept(fs: &Fs) -> bool {
        let flux = FluxFields {
            components: vec!["../nowhere".into()],
            ..FluxFields::flux()
        };
        let full = build_dir(fs, &fs.root.join("cells/a"), &flux);
        let remembered = build(fs, "cells/a", &flux);
        full.is_err() && same(&remembered, &full)
    }
}
