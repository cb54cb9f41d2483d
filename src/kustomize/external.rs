//! Building with an external `kustomize build` / `kubectl kustomize`, confined.
//!
//! The tool runs on a temporary copy holding only the files the build reads (found by
//! `closure`, which refuses references outside the repository and symbolic links, as the
//! native builder does): it cannot read anything else, and sees the repository as Flux's
//! artifact has it. Flux appends `spec.components` to the kustomization at `spec.path`
//! itself (and generates one when missing); that is done to the copy. The repository is
//! never written to.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::closure::Closure;
use super::fsroot::Fs;
use super::{BuildError, Resource, flux_generate, load};

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(tool).is_file()))
}

fn command_for(dir: &Path, shown_dir: &Path) -> Result<(Command, String), BuildError> {
    let (mut cmd, shown) = if on_path("kustomize") {
        let mut c = Command::new("kustomize");
        c.arg("build");
        (c, "kustomize build")
    } else if on_path("kubectl") {
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
            shown_dir.display()
        ),
    ))
}

/// A temporary directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<Self, BuildError> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let p = std::env::temp_dir().join(format!(
            "cellgen-kustomize-{}-{nanos}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        // create_dir (not _all): fails rather than reuse anything already there.
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&p).map_err(|source| BuildError::Io {
            path: p.clone(),
            source,
        })?;
        Ok(TempDir(p))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Copies `files` (absolute, under `root`) to the same places under `to`.
fn copy_files(
    root: &Path,
    files: &std::collections::BTreeSet<PathBuf>,
    to: &Path,
) -> Result<(), BuildError> {
    for f in files {
        let rel = f.strip_prefix(root).unwrap_or(f);
        let dst = to.join(rel);
        if let Some(parent) = dst.parent() {
            std::fs::create_dir_all(parent).map_err(|source| BuildError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        std::fs::copy(f, &dst).map_err(|source| BuildError::Io {
            path: rel.to_path_buf(),
            source,
        })?;
    }
    Ok(())
}

/// Writes the kustomization Flux would build into `dir` (a copy): the existing one
/// with components appended, or a generated one.
fn flux_kustomization(
    root: &Path,
    dir: &Path,
    copy: &Path,
    components: &[String],
) -> Result<(), BuildError> {
    let (file, mut k) = match load::find_kustomization(dir) {
        Some(f) => {
            let text = load::read_to_string(root, &f)?;
            let v = load::parse_one(&load::rel(root, &f), &text)?;
            (copy.join(f.file_name().unwrap_or_default()), v)
        }
        None => {
            let res = flux_generate::resources(root, dir, &mut Default::default())?;
            let v = serde_json::json!({
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "resources": res,
            });
            (copy.join("kustomization.yaml"), v)
        }
    };
    if !components.is_empty() {
        let Some(map) = k.as_object_mut() else {
            return Err(BuildError::Invalid {
                file: load::rel(root, &file),
                message: "kustomization is not a mapping".into(),
            });
        };
        let list = map
            .entry("components")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(items) = list {
            items.extend(components.iter().map(|c| Value::String(c.clone())));
        }
    }
    let text = serde_json::to_string_pretty(&k).unwrap_or_default();
    std::fs::write(&file, text).map_err(|source| BuildError::Io {
        path: file.clone(),
        source,
    })
}

/// The tool's raw output for what Flux would build at `path` with `components`.
pub fn build_text(
    repo_root: &Path,
    path: &str,
    components: &[String],
) -> Result<(String, String), BuildError> {
    let fs = Fs::new(repo_root)?;
    let shown = PathBuf::from(path);
    let dir = fs.resolve(&fs.root, path, &shown)?;
    let mut closure = Closure::new(&fs);
    closure.dir(&dir, true)?;
    for c in components {
        let abs = fs.resolve(&dir, c, &fs.rel(&dir.join("kustomization.yaml")))?;
        closure.dir(&abs, false)?;
    }
    let tmp = TempDir::new()?;
    copy_files(&fs.root, &closure.files, &tmp.0)?;
    let rel = dir
        .strip_prefix(&fs.root)
        .unwrap_or(Path::new(path))
        .to_path_buf();
    let copied = tmp.0.join(&rel);
    std::fs::create_dir_all(&copied).map_err(|source| BuildError::Io {
        path: rel.clone(),
        source,
    })?;
    if !components.is_empty() || load::find_kustomization(&copied).is_none() {
        flux_kustomization(&fs.root, &dir, &copied, components)?;
    }
    let (mut cmd, shown) = command_for(&copied, &rel)?;
    let out = cmd.output().map_err(|e| BuildError::External {
        command: shown.clone(),
        stderr: e.to_string(),
    })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr).replace(&*tmp.0.to_string_lossy(), "");
        return Err(BuildError::External {
            command: shown,
            stderr: stderr.trim().to_string(),
        });
    }
    Ok((String::from_utf8_lossy(&out.stdout).into_owned(), shown))
}

pub fn build(
    repo_root: &Path,
    path: &str,
    components: &[String],
) -> Result<Vec<Resource>, BuildError> {
    let dir = load::normalize(&repo_root.join(path));
    let kfile = load::find_kustomization(&dir);
    let origin = load::rel(
        repo_root,
        kfile.as_deref().unwrap_or(&dir.join("kustomization.yaml")),
    );
    let (text, shown) = build_text(repo_root, path, components)?;
    let docs = load::parse_output(Path::new(&shown), &text)?;
    Ok(docs
        .into_iter()
        .map(|object| Resource {
            object,
            origin: origin.clone(),
            patched_by: Vec::new(),
        })
        .collect())
}
