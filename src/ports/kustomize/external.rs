//! Building with an external `kustomize build` / `kubectl kustomize`, confined.
//!
//! The tool runs on a temporary copy holding only the files the build reads (found by
//! `closure`, which refuses references outside the repository and symbolic links, as the
//! native builder does): it cannot read anything else, and sees the repository as Flux's
//! artifact has it. The kustomization at `spec.path` is the one kustomize-controller writes
//! there (the Flux Kustomization's fields written into it, or generated when missing; see
//! `flux_generate`), written into the copy. The repository is never written to.
//!
//! The copy, and the lookup of the tool on PATH, go through the [`Scratch`] the repository was
//! opened with (the file layer's, `root::source`): the port touches no file itself.

use camino::{Utf8Path, Utf8PathBuf};
use std::process::Command;

use super::closure::Closure;
use super::files::Scratch;
use super::flux_generate::{self, FluxFields};
use super::fsroot::{Entry, Fs};
use super::{BuildError, Resource, load};

fn on_path(scratch: &dyn Scratch, tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| scratch.is_file(&d.join(tool))))
}

fn command_for(
    scratch: &dyn Scratch,
    dir: &Utf8Path,
    shown_dir: &Utf8Path,
) -> Result<(Command, String), BuildError> {
    let (mut cmd, shown) = if on_path(scratch, "kustomize") {
        let mut c = Command::new("kustomize");
        c.arg("build");
        (c, "kustomize build")
    } else if on_path(scratch, "kubectl") {
        let mut c = Command::new("kubectl");
        c.arg("kustomize");
        (c, "kubectl kustomize")
    } else {
        return Err(BuildError::External {
            command: "kustomize build".into(),
            stderr: "neither kustomize nor kubectl is on PATH".into(),
        });
    };
    // kustomize-controller builds with LoadRestrictionsNone; the copy holds nothing else.
    cmd.arg("--load-restrictor")
        .arg("LoadRestrictionsNone")
        .arg(dir);
    Ok((
        cmd,
        format!(
            "{shown} --load-restrictor LoadRestrictionsNone {} (on a copy of the files it reads)",
            shown_dir
        ),
    ))
}

/// A temporary directory removed on drop.
struct TempDir<'a> {
    path: Utf8PathBuf,
    scratch: &'a dyn Scratch,
}

impl<'a> TempDir<'a> {
    fn new(scratch: &'a dyn Scratch) -> Result<Self, BuildError> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        // The environment (TMPDIR) is where this path enters: UTF-8, or an error naming it
        // (lossily: the one way to show it).
        let base = Utf8PathBuf::from_path_buf(std::env::temp_dir()).map_err(|p| {
            BuildError::External {
                command: "kustomize build".into(),
                stderr: format!(
                    "the temporary directory `{}` is not valid UTF-8 (shown with U+FFFD for the bytes that are not): set TMPDIR to a directory whose path is UTF-8",
                    p.to_string_lossy()
                ),
            }
        })?;
        // A new directory, never one already there: the next number when the name is taken
        // (no process-wide counter: the kernel's "exists" is the one source of truth).
        for n in 0u32.. {
            let p = base.join(format!(
                "cellgen-kustomize-{}-{nanos}-{n}",
                std::process::id()
            ));
            match scratch.create_private_dir(&p) {
                Ok(()) => return Ok(TempDir { path: p, scratch }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => {}
                Err(source) => return Err(BuildError::Io { path: p, source }),
            }
        }
        unreachable!("the loop returns by its 1000th name")
    }
}

impl Drop for TempDir<'_> {
    fn drop(&mut self) {
        let _ = self.scratch.remove_dir_all(&self.path);
    }
}

/// Copies `files` (absolute, under the root), read through `fs` (the working tree or a Git
/// tree), to the same places under `to`.
fn copy_files(
    fs: &Fs,
    files: &std::collections::BTreeSet<Utf8PathBuf>,
    to: &Utf8Path,
) -> Result<(), BuildError> {
    for f in files {
        let rel = f.strip_prefix(&fs.root).unwrap_or(f);
        let dst = to.join(rel);
        if let Some(parent) = dst.parent() {
            fs.scratch()
                .create_dir_all(parent)
                .map_err(|source| BuildError::Io {
                    path: parent.to_path_buf(),
                    source,
                })?;
        }
        fs.scratch()
            .write(&dst, &fs.read_bytes(f)?)
            .map_err(|source| BuildError::Io {
                path: rel.to_path_buf(),
                source,
            })?;
    }
    Ok(())
}

/// The tool's raw output for what Flux would build at `path` with `flux`.
pub fn build_text(fs: &Fs, path: &str, flux: &FluxFields) -> Result<(String, String), BuildError> {
    let shown = Utf8PathBuf::from(path);
    let dir = fs.resolve(&fs.root, path, &shown)?;
    if fs.entry(&dir, &shown, path)? != Entry::Dir {
        return Err(BuildError::Invalid {
            file: shown,
            message: "kustomization path not found".into(),
        });
    }
    let generated = flux_generate::kustomization(fs, &dir, flux, &mut Default::default())?;
    let mut closure = Closure::new(fs);
    let listed_in = fs.rel(&generated.file);
    closure.dir(&dir, true, &listed_in)?;
    for c in &flux.components {
        let abs = fs.resolve(&dir, c, &listed_in)?;
        closure.dir(&abs, false, &listed_in)?;
    }
    let tmp = TempDir::new(fs.scratch())?;
    copy_files(fs, &closure.files, &tmp.path)?;
    let rel = dir
        .strip_prefix(&fs.root)
        .unwrap_or(Utf8Path::new(path))
        .to_path_buf();
    let copied = tmp.path.join(&rel);
    fs.scratch()
        .create_dir_all(&copied)
        .map_err(|source| BuildError::Io {
            path: rel.clone(),
            source,
        })?;
    if generated.changed {
        let name = generated.file.file_name().unwrap_or_default();
        let file = copied.join(name);
        let text = serde_json::to_string_pretty(&generated.value).unwrap_or_default();
        fs.scratch()
            .write(&file, text.as_bytes())
            .map_err(|source| BuildError::Io {
                path: listed_in.clone(),
                source,
            })?;
    }
    let (mut cmd, shown) = command_for(fs.scratch(), &copied, &rel)?;
    let out = cmd.output().map_err(|e| BuildError::External {
        command: shown.clone(),
        stderr: e.to_string(),
    })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr).replace(tmp.path.as_str(), "");
        return Err(BuildError::External {
            command: shown,
            stderr: stderr.trim().to_string(),
        });
    }
    Ok((String::from_utf8_lossy(&out.stdout).into_owned(), shown))
}

pub fn build(fs: &Fs, path: &str, flux: &FluxFields) -> Result<Vec<Resource>, BuildError> {
    let dir = fs.resolve(&fs.root, path, Utf8Path::new(path))?;
    let kfile = fs
        .kustomization_file(&dir)
        .ok()
        .flatten()
        .unwrap_or_else(|| dir.join("kustomization.yaml"));
    let origin = fs.rel(&kfile);
    let (text, shown) = build_text(fs, path, flux)?;
    let docs = load::parse_output(Utf8Path::new(&shown), &text)?;
    Ok(docs
        .into_iter()
        .map(|object| Resource {
            object: std::sync::Arc::new(object),
            origin: origin.clone(),
            patched_by: Vec::new(),
        })
        .collect())
}
