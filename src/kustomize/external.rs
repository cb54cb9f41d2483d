//! Building with an external `kustomize build` / `kubectl kustomize`.
//!
//! Flux writes the Flux Kustomization's fields into the kustomization at
//! `spec.path` (and generates one when missing; see `flux_generate`), so when that
//! changes anything the repository is copied to a temporary directory and the
//! copy's kustomization is replaced there; the repository is never written to.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::flux_generate::{self, FluxFields};
use super::{BuildError, Resource, load};

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(tool).is_file()))
}

fn command_for(dir: &Path) -> Result<(Command, String), BuildError> {
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
    // kustomize-controller builds with LoadRestrictionsNone.
    cmd.arg("--load-restrictor")
        .arg("LoadRestrictionsNone")
        .arg(dir);
    Ok((
        cmd,
        format!(
            "{shown} --load-restrictor LoadRestrictionsNone {}",
            dir.display()
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
        std::fs::create_dir_all(&p).map_err(|source| BuildError::Io {
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

fn copy_tree(from: &Path, to: &Path) -> Result<(), BuildError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| BuildError::Io { path, source }
    };
    std::fs::create_dir_all(to).map_err(io(to))?;
    for entry in std::fs::read_dir(from).map_err(io(from))? {
        let entry = entry.map_err(io(from))?;
        let src = entry.path();
        if entry.file_name() == ".git" {
            continue;
        }
        let dst = to.join(entry.file_name());
        let ft = entry.file_type().map_err(io(&src))?;
        if ft.is_dir() {
            copy_tree(&src, &dst)?;
        } else if ft.is_symlink() && src.is_dir() {
            // Recreating the link (rather than following it) cannot loop.
            link_dir(&src, &dst).map_err(io(&src))?;
        } else {
            std::fs::copy(&src, &dst).map_err(io(&src))?;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn link_dir(src: &Path, dst: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(std::fs::read_link(src)?, dst)
}

#[cfg(not(unix))]
fn link_dir(src: &Path, _dst: &Path) -> std::io::Result<()> {
    Err(std::io::Error::other(format!(
        "cannot copy symlinked directory {}",
        src.display()
    )))
}

/// Writes the kustomization Flux would build into `dir` (a copy).
fn write_kustomization(dir: &Path, generated: &flux_generate::Generated) -> Result<(), BuildError> {
    let file = dir.join(
        generated
            .file
            .file_name()
            .unwrap_or("kustomization.yaml".as_ref()),
    );
    let text = serde_json::to_string_pretty(&generated.value).unwrap_or_default();
    std::fs::write(&file, text).map_err(|source| BuildError::Io {
        path: file.clone(),
        source,
    })
}

pub fn build(repo_root: &Path, path: &str, flux: &FluxFields) -> Result<Vec<Resource>, BuildError> {
    let dir = load::normalize(&repo_root.join(path));
    let kfile = load::find_kustomization(&dir);
    let origin = load::rel(repo_root, kfile.as_deref().unwrap_or(&dir));
    let generated = flux_generate::kustomization(repo_root, &dir, flux, &mut Default::default())?;
    let tmp;
    let build_dir = if !generated.changed {
        dir.clone()
    } else {
        tmp = TempDir::new()?;
        copy_tree(repo_root, &tmp.0)?;
        let copied = tmp
            .0
            .join(dir.strip_prefix(repo_root).unwrap_or(Path::new(path)));
        write_kustomization(&copied, &generated)?;
        copied
    };
    let (mut cmd, shown) = command_for(&build_dir)?;
    let out = cmd.output().map_err(|e| BuildError::External {
        command: shown.clone(),
        stderr: e.to_string(),
    })?;
    if !out.status.success() {
        return Err(BuildError::External {
            command: shown,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let docs = load::parse_docs(Path::new(&shown), &text)?;
    Ok(docs
        .into_iter()
        .map(|object| Resource {
            object,
            origin: origin.clone(),
            patched_by: Vec::new(),
        })
        .collect())
}
