//! Every read and write of the plan layer stays inside the repository root.
//!
//! A repository-relative path is resolved one component at a time: a symbolic link is followed
//! only while the result stays under the (canonical) root; one that leads outside is refused,
//! naming the link and where it points. Text is read as UTF-8 (an invalid byte is reported with
//! its line and column, never as a missing file), with CRLF line endings normalised to LF and
//! remembered, together with the file's mode, so a rewrite can restore both.
//!
//! The check and the later write are not one atomic step: cellgen holds the repository lock
//! (`crate::writer::lock`) across both, which keeps other cellgen processes out; a hostile process
//! swapping directories for links in between is outside what a file-based tool can prevent
//! without `openat`-style descriptors.

use std::fs;

use camino::{Utf8Component as Component, Utf8Path, Utf8PathBuf};

use crate::error::CellgenError;

/// Symbolic links followed while resolving one path, like the kernel's ELOOP limit.
const MAX_LINKS: usize = 40;

/// The root as given (for messages) and as the kernel sees it (for containment).
#[derive(Debug, Clone)]
pub struct Root {
    given: Utf8PathBuf,
    canonical: Utf8PathBuf,
}

impl Root {
    pub fn new(root: impl Into<Utf8PathBuf>) -> Root {
        let given = root.into();
        // A root that does not exist yet cannot hold a link; its lexical form is all there is.
        // A canonical form that is not UTF-8 (a link above the repository to such a directory)
        // is not used either: containment is then judged from the given form, lexically, which
        // refuses more links (absolute ones into the repository), never fewer.
        let canonical = fs::canonicalize(&given)
            .ok()
            .and_then(|c| Utf8PathBuf::from_path_buf(c).ok())
            .unwrap_or_else(|| given.clone());
        Root { given, canonical }
    }

    pub fn given(&self) -> &Utf8Path {
        &self.given
    }

    pub fn canonical(&self) -> &Utf8Path {
        &self.canonical
    }

    /// Where `rel` really is: a path under the canonical root, with every link inside the
    /// repository followed. A link (or `..`) leading outside is an error naming it.
    pub fn resolve(&self, rel: &Utf8Path) -> Result<Utf8PathBuf, CellgenError> {
        self.resolve_traced(rel).map(|(real, _)| real)
    }

    /// [`Root::resolve`], and the first symbolic link on the way (as the user knows it, relative
    /// to the root) with its target.
    pub fn resolve_traced(
        &self,
        rel: &Utf8Path,
    ) -> Result<(Utf8PathBuf, Option<(Utf8PathBuf, Utf8PathBuf)>), CellgenError> {
        let mut cur = self.canonical.clone();
        // Components still to walk, last one first; a link pushes its target's components.
        let mut rest: Vec<String> = Vec::new();
        push_components(&mut rest, rel);
        let mut links = 0;
        // The first link on the way, as the user knows it (relative to the root), and its target.
        let mut first_link: Option<(Utf8PathBuf, Utf8PathBuf)> = None;
        let mut walked = Utf8PathBuf::new();
        while let Some(part) = rest.pop() {
            if part == "/" {
                cur = Utf8PathBuf::from("/");
                continue;
            }
            if part == ".." {
                cur.pop();
                if first_link.is_none() {
                    walked.pop();
                }
                continue;
            }
            let next = cur.join(&part);
            if first_link.is_none() {
                walked.push(&part);
            }
            match fs::symlink_metadata(&next) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    links += 1;
                    let target = fs::read_link(&next).map_err(|source| CellgenError::Read {
                        path: self.given.join(&walked),
                        source,
                    })?;
                    // A link's target is where a path is met: UTF-8, or an error naming the link.
                    let target = Utf8PathBuf::from_path_buf(target).map_err(|target| {
                        CellgenError::NotUtf8Path {
                            what: "the target of the symbolic link",
                            path: format!("{} -> {}", self.given.join(&walked), target.to_string_lossy()),
                            fix: "Point the link at a path that is UTF-8, or replace it by the file",
                        }
                    })?;
                    if links > MAX_LINKS {
                        return Err(CellgenError::InvalidFile {
                            path: self.given.join(rel),
                            message: format!(
                                "more than {MAX_LINKS} symbolic links on the way (a loop?)"
                            ),
                        });
                    }
                    if first_link.is_none() {
                        first_link = Some((walked.clone(), target.clone()));
                    }
                    push_components(&mut rest, &target);
                }
                _ => cur = next,
            }
        }
        if cur.starts_with(&self.canonical) {
            return Ok((cur, first_link));
        }
        Err(match first_link {
            Some((link, target)) => CellgenError::OutsideRoot {
                path: link,
                target: Some(target),
                root: self.given.clone(),
            },
            None => CellgenError::OutsideRoot {
                path: rel.to_path_buf(),
                target: None,
                root: self.given.clone(),
            },
        })
    }

    /// The text of `rel`, if it exists (see `read_text`).
    pub fn read(&self, rel: &Utf8Path) -> Result<Option<Text>, CellgenError> {
        let real = self.resolve(rel)?;
        read_text(&real, &self.given.join(rel))
    }
}

/// Pushes `path`'s components so that the first one is popped first.
fn push_components(stack: &mut Vec<String>, path: &Utf8Path) {
    let mut parts: Vec<String> = Vec::new();
    for c in path.components() {
        match c {
            Component::RootDir | Component::Prefix(_) => {
                parts.clear();
                parts.push("/".into());
            }
            Component::CurDir => {}
            Component::ParentDir => parts.push("..".into()),
            Component::Normal(name) => parts.push(name.to_owned()),
        }
    }
    stack.extend(parts.into_iter().rev());
}

/// How a file was stored, so a rewrite keeps it so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileStyle {
    /// Lines end in CRLF (decided by the first line ending).
    pub crlf: bool,
    /// Permission bits (unix), e.g. 0o600.
    pub mode: Option<u32>,
}

/// A text file as the plan works with it: LF line endings, and how it was stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text {
    pub text: String,
    pub style: FileStyle,
}

impl FileStyle {
    /// The bytes to store for LF text `text`.
    pub fn encode(&self, text: &str) -> Vec<u8> {
        if self.crlf {
            text.replace('\n', "\r\n").into_bytes()
        } else {
            text.as_bytes().to_vec()
        }
    }
}

/// Reads `real` as UTF-8 text. Missing (or under a file instead of a directory) is `None`;
/// invalid UTF-8 is an error with the line and column of the first bad byte. `shown` is the
/// path used in messages.
pub fn read_text(real: &Utf8Path, shown: &Utf8Path) -> Result<Option<Text>, CellgenError> {
    let bytes = match fs::read(real) {
        Ok(bytes) => bytes,
        Err(err)
            if matches!(
                err.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(None);
        }
        Err(source) => {
            return Err(CellgenError::Read {
                path: shown.to_path_buf(),
                source,
            });
        }
    };
    let mode = file_mode(real);
    let text = decode(bytes, shown)?;
    let crlf = text
        .find('\n')
        .is_some_and(|i| i > 0 && text.as_bytes()[i - 1] == b'\r');
    let text = if crlf {
        text.replace("\r\n", "\n")
    } else {
        text
    };
    Ok(Some(Text {
        text,
        style: FileStyle { crlf, mode },
    }))
}

/// UTF-8, or an error naming the line and column of the first invalid byte.
pub fn decode(bytes: Vec<u8>, shown: &Utf8Path) -> Result<String, CellgenError> {
    String::from_utf8(bytes).map_err(|err| {
        let bytes = err.as_bytes();
        let at = err.utf8_error().valid_up_to();
        let before = &bytes[..at];
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let line_start = before
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&before[line_start..])
            .chars()
            .count()
            + 1;
        CellgenError::NotUtf8 {
            path: shown.to_path_buf(),
            line,
            column,
            byte: at,
        }
    })
}

#[cfg(unix)]
pub fn file_mode(path: &Utf8Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
pub fn file_mode(_path: &Utf8Path) -> Option<u32> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn links_inside_are_followed_and_links_outside_refused() {
        use std::os::unix::fs::symlink;
        let outside = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        fs::create_dir_all(root.join("real/sub")).unwrap();
        symlink("real", root.join("inside")).unwrap();
        symlink(outside.path(), root.join("out")).unwrap();
        symlink("../..", root.join("real/up")).unwrap();
        let r = Root::new(root);
        assert_eq!(
            r.resolve(Utf8Path::new("inside/sub/f")).unwrap(),
            r.canonical().join("real/sub/f")
        );
        let err = r.resolve(Utf8Path::new("out/x/y")).unwrap_err().to_string();
        assert!(err.contains("out is a symbolic link to"), "{err}");
        assert!(err.contains("outside the repository"), "{err}");
        let err = r
            .resolve(Utf8Path::new("real/up/etc"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("real/up is a symbolic link to ../.."), "{err}");
        assert!(r.resolve(Utf8Path::new("../x")).is_err());
        // A dangling link inside the root resolves to where the file would be created.
        symlink("real/new.txt", root.join("dangling")).unwrap();
        assert_eq!(
            r.resolve(Utf8Path::new("dangling")).unwrap(),
            r.canonical().join("real/new.txt")
        );
        symlink("loop", root.join("loop")).unwrap();
        assert!(r.resolve(Utf8Path::new("loop")).is_err());
    }

    #[test]
    fn invalid_utf8_names_line_and_column() {
        let err = decode(b"ok\nab\xffc\n".to_vec(), Utf8Path::new("f.yaml")).unwrap_err();
        assert_eq!(
            err.to_string().split(':').take(2).collect::<Vec<_>>(),
            ["f.yaml", " not valid UTF-8 at line 2, column 3 (byte 5)"]
        );
    }

    #[test]
    fn crlf_is_normalised_and_restored() {
        let dir = tempfile::tempdir().unwrap();
        let path = Utf8Path::from_path(dir.path()).unwrap().join("f");
        fs::write(&path, "a\r\nb\r\n").unwrap();
        let text = read_text(&path, &path).unwrap().unwrap();
        assert_eq!(text.text, "a\nb\n");
        assert!(text.style.crlf);
        assert_eq!(text.style.encode("a\nb\nc\n"), b"a\r\nb\r\nc\r\n");
    }
}
