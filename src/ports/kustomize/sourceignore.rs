//! Which repository files Flux's artifact leaves out, as source-controller decides it
//! (fluxcd/pkg `sourceignore` and `artifact/storage.SourceIgnoreFilter`, over the gitignore
//! matcher fluxcd/pkg copied from go-git v5.16.4):
//!
//! - `.sourceignore` files, in every directory but `.git` (a directory reached through a
//!   symbolic link is not descended into), each scoped to its directory, deeper files last;
//! - `.git/`, `.gitignore`, `.gitmodules`, `.gitattributes`, always;
//! - only when no `.sourceignore` pattern exists at all, the defaults: images and archives
//!   (`*.png`, `*.zip`, ...), CI files (`.github/`, `cloudbuild.yaml`, ...), `.sops.yaml`,
//!   `.flux.yaml`, `.goreleaser.yml`.
//!
//! Every path is matched on its own (an excluded directory's files are matched again), the
//! last matching pattern deciding. The bootstrap GitRepository that `flux_bootstrap_git`
//! writes sets no `spec.ignore`, so nothing else applies.

use camino::{Utf8Path, Utf8PathBuf};

use super::BuildError;
use super::files::BuildFiles;
use crate::paths::Kind;

mod index;

pub const IGNORE_FILE: &str = ".sourceignore";
const EXCLUDE_VCS: &str = ".git/,.gitignore,.gitmodules,.gitattributes";
const EXCLUDE_EXT: &str = "*.jpg,*.jpeg,*.gif,*.png,*.wmv,*.flv,*.tar.gz,*.zip";
const EXCLUDE_CI: &str = ".github/,.circleci/,.travis.yml,.gitlab-ci.yml,appveyor.yml,.drone.yml,cloudbuild.yaml,codeship-services.yml,codeship-steps.yml";
const EXCLUDE_EXTRA: &str = "**/.goreleaser.yml,**/.sops.yaml,**/.flux.yaml";

/// Where a pattern was written, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A line of a `.sourceignore` file (repository-relative).
    File { path: Utf8PathBuf, line: usize },
    /// source-controller's exclusions of version-control files, always in force.
    Vcs,
    /// source-controller's default exclusions, in force when no `.sourceignore` pattern is.
    Default,
}

/// One gitignore pattern (go-git's `pattern`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    /// The directory it applies in, as path components below the repository root.
    domain: Vec<Vec<u8>>,
    parts: Vec<Vec<u8>>,
    /// How each of `parts` is matched: most are a name or `*.ext` (the defaults are), which
    /// need no glob matcher.
    kinds: Vec<PartKind>,
    inclusion: bool,
    dir_only: bool,
    is_glob: bool,
    pub text: String,
    pub origin: Origin,
}

/// A pattern part by what matching it takes; `go_match` answers the same for every name (a
/// component, so without `/`), tested below.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PartKind {
    /// No `*`, `?`, `[` or `\`: the name itself.
    Literal,
    /// `*` then a literal: a name ending so.
    Suffix,
    Glob,
}

impl PartKind {
    fn of(part: &[u8]) -> PartKind {
        let meta = |b: &u8| matches!(b, b'*' | b'?' | b'[' | b'\\');
        match part.split_first() {
            _ if !part.iter().any(meta) => PartKind::Literal,
            Some((b'*', rest)) if !rest.iter().any(meta) => PartKind::Suffix,
            _ => PartKind::Glob,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MatchResult {
    NoMatch,
    Exclude,
    Include,
}

impl Pattern {
    /// gitignore.ParsePattern.
    pub fn parse(p: &[u8], domain: &[Vec<u8>], origin: Origin) -> Pattern {
        let text = String::from_utf8_lossy(p).into_owned();
        let mut p = p;
        let mut inclusion = false;
        if let Some(rest) = p.strip_prefix(b"!") {
            inclusion = true;
            p = rest;
        }
        if !p.ends_with(b"\\ ") {
            while let Some(rest) = p.strip_suffix(b" ") {
                p = rest;
            }
        }
        let mut dir_only = false;
        if let Some(rest) = p.strip_suffix(b"/") {
            dir_only = true;
            p = rest;
        }
        let parts: Vec<Vec<u8>> = p.split(|b| *b == b'/').map(<[u8]>::to_vec).collect();
        Pattern {
            domain: domain.to_vec(),
            kinds: parts.iter().map(|part| PartKind::of(part)).collect(),
            parts,
            inclusion,
            dir_only,
            is_glob: p.contains(&b'/'),
            text,
            origin,
        }
    }

    fn matches(&self, path: &[&[u8]], is_dir: bool) -> MatchResult {
        if path.len() <= self.domain.len()
            || self
                .domain
                .iter()
                .zip(path)
                .any(|(d, p)| d.as_slice() != *p)
        {
            return MatchResult::NoMatch;
        }
        let path = &path[self.domain.len()..];
        let hit = if self.is_glob {
            self.glob_match(path, is_dir)
        } else {
            self.simple_name_match(path, is_dir)
        };
        match (hit, self.inclusion) {
            (false, _) => MatchResult::NoMatch,
            (true, true) => MatchResult::Include,
            (true, false) => MatchResult::Exclude,
        }
    }

    /// `go_match(parts[i], name)`, without the glob matcher where the part needs none.
    fn part_match(&self, i: usize, name: &[u8]) -> Result<bool, ()> {
        let part = &self.parts[i];
        match self.kinds[i] {
            PartKind::Literal => Ok(part.as_slice() == name),
            PartKind::Suffix => Ok(name.ends_with(&part[1..])),
            PartKind::Glob => go_match(part, name),
        }
    }

    fn simple_name_match(&self, path: &[&[u8]], is_dir: bool) -> bool {
        for (i, name) in path.iter().enumerate() {
            match self.part_match(0, name) {
                Err(()) => return false,
                Ok(false) => continue,
                Ok(true) => {}
            }
            if self.dir_only && !is_dir && i == path.len() - 1 {
                return false;
            }
            return true;
        }
        false
    }

    fn glob_match(&self, mut path: &[&[u8]], is_dir: bool) -> bool {
        let mut matched = false;
        let mut can_traverse = false;
        for (i, pattern) in self.parts.iter().enumerate() {
            if pattern.is_empty() {
                can_traverse = false;
                continue;
            }
            if pattern == b"**" {
                if i == self.parts.len() - 1 {
                    break;
                }
                can_traverse = true;
                continue;
            }
            if pattern.windows(2).any(|w| w == b"**") {
                return false;
            }
            if path.is_empty() {
                return false;
            }
            if can_traverse {
                can_traverse = false;
                while let Some((e, rest)) = path.split_first() {
                    path = rest;
                    match self.part_match(i, e) {
                        Err(()) => return false,
                        Ok(true) => {
                            matched = true;
                            break;
                        }
                        Ok(false) if path.is_empty() => matched = false,
                        Ok(false) => {}
                    }
                }
            } else {
                match self.part_match(i, path[0]) {
                    Ok(true) => {}
                    _ => return false,
                }
                matched = true;
                path = &path[1..];
            }
        }
        if matched && self.dir_only && !is_dir && path.is_empty() {
            matched = false;
        }
        matched
    }
}

/// The patterns in force for a repository, lowest priority first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Matcher {
    patterns: Vec<Pattern>,
    /// `patterns` by the names they match (made from them: equal patterns, equal indexes).
    index: index::Index,
}

impl Matcher {
    fn new(patterns: Vec<Pattern>) -> Matcher {
        Matcher {
            index: index::Index::new(&patterns),
            patterns,
        }
    }

    /// Whether any pattern re-includes paths (`!...`).
    pub fn has_inclusions(&self) -> bool {
        self.patterns.iter().any(|p| p.inclusion)
    }

    /// The pattern that excludes `rel` (repository-relative) from the artifact, if one does.
    pub fn excluded_by(&self, rel: &Utf8Path, is_dir: bool) -> Option<&Pattern> {
        let parts = components(rel.as_str());
        let last = &self.patterns[self.index.last_match(&self.patterns, &parts, is_dir)?];
        (!last.inclusion).then_some(last)
    }

    /// [`Matcher::excluded_by`] by trying each pattern from the last (what the index answers).
    #[cfg(test)]
    fn excluded_by_each(&self, rel: &Utf8Path, is_dir: bool) -> Option<&Pattern> {
        let parts = components(rel.as_str());
        self.patterns
            .iter()
            .rev()
            .find_map(|p| match p.matches(&parts, is_dir) {
                MatchResult::NoMatch => None,
                MatchResult::Exclude => Some(Some(p)),
                MatchResult::Include => Some(None),
            })
            .flatten()
    }
}

/// `Path::components` of `path` as bytes, by splitting its text (the std iterator costs more
/// than the matching on paths this short): a leading `/` or `.` kept as a component, empty
/// and other `.` segments dropped.
fn components(path: &str) -> Vec<&[u8]> {
    let mut out = Vec::with_capacity(8);
    let mut segments = path.split('/');
    if path.starts_with('/') {
        out.push(&b"/"[..]);
        segments.next();
    } else if path == "." || path.starts_with("./") {
        out.push(&b"."[..]);
        segments.next();
    }
    out.extend(
        segments
            .filter(|s| !s.is_empty() && *s != ".")
            .map(str::as_bytes),
    );
    out
}

fn split_list(list: &str) -> impl Iterator<Item = &str> {
    list.split(',')
}

/// The matcher source-controller archives a GitRepository with (no `spec.ignore`).
pub fn load(source: &dyn BuildFiles, root: &Utf8Path) -> Result<Matcher, BuildError> {
    let mut found = Vec::new();
    load_dir(source, root, root, &[], &mut found)?;
    let parse = |list: &'static str, origin: Origin| {
        split_list(list).map(move |p| Pattern::parse(p.as_bytes(), &[], origin.clone()))
    };
    let mut patterns: Vec<Pattern> = parse(EXCLUDE_VCS, Origin::Vcs).collect();
    // SourceIgnoreFilter: the defaults only apply when no pattern was found.
    if found.is_empty() {
        for list in [EXCLUDE_EXT, EXCLUDE_CI, EXCLUDE_EXTRA] {
            patterns.extend(parse(list, Origin::Default));
        }
    }
    patterns.extend(found);
    Ok(Matcher::new(patterns))
}

/// sourceignore.LoadIgnorePatterns: this directory's file, then each sub-directory's (in
/// name order, depth first), `.git` and symbolic links left out.
fn load_dir(
    source: &dyn BuildFiles,
    root: &Utf8Path,
    dir: &Utf8Path,
    domain: &[Vec<u8>],
    out: &mut Vec<Pattern>,
) -> Result<(), BuildError> {
    let rel = |p: &Utf8Path| p.strip_prefix(root).unwrap_or(p).to_path_buf();
    // Listed first: the disk's store then knows a directory without a .sourceignore without
    // asking for it (errors are still told in the order below).
    let listed = source.list(root, dir);
    let file = dir.join(IGNORE_FILE);
    // A listing without the name answers for it: nothing to read (most directories).
    let named = listed.as_ref().map_or(true, |entries| {
        entries.iter().any(|(name, _)| name == IGNORE_FILE)
    });
    let kind = if named {
        source.kind(root, &file)
    } else {
        Ok(Kind::Missing)
    };
    match kind {
        Ok(Kind::Link) => {
            return Err(BuildError::Invalid {
                file: rel(&file),
                message: "is a symbolic link; source-controller reads .sourceignore files through links, cellgen does not follow them (commit the file itself)".into(),
            });
        }
        Ok(Kind::File) => {
            let bytes = source.read(root, &file).map_err(|source| BuildError::Io {
                path: rel(&file),
                source,
            })?;
            out.extend(read_patterns(&bytes, domain, &rel(&file)));
        }
        // A directory named .sourceignore opens but reads nothing; no file, no patterns.
        _ => {}
    }
    let io = |source| BuildError::Io {
        path: rel(dir),
        source,
    };
    let mut subdirs = Vec::new();
    for (name, kind) in listed.map_err(io)? {
        if kind == Kind::Dir && name != ".git" {
            // A directory whose name is not UTF-8 may hold a .sourceignore Flux reads: an error
            // naming where, never patterns silently missed.
            match name.into_string() {
                Ok(name) => subdirs.push(name),
                Err(name) => {
                    return Err(BuildError::NotUtf8Name {
                        dir: rel(dir),
                        name: name.to_string_lossy().into_owned(),
                    });
                }
            }
        }
    }
    // os.ReadDir sorts by name.
    subdirs.sort();
    for name in subdirs {
        let mut sub = domain.to_vec();
        sub.push(name.as_bytes().to_vec());
        load_dir(source, root, &dir.join(&name), &sub, out)?;
    }
    Ok(())
}

/// sourceignore.ReadPatterns: one pattern a line, `#` comments and blank lines skipped.
/// bufio.Scanner stops (silently) at a line longer than its 64 KiB buffer.
fn read_patterns(bytes: &[u8], domain: &[Vec<u8>], file: &Utf8Path) -> Vec<Pattern> {
    const MAX_LINE: usize = 64 * 1024 - 1;
    let mut out = Vec::new();
    let mut lines = bytes.split(|b| *b == b'\n').enumerate().peekable();
    while let Some((n, line)) = lines.next() {
        let last = lines.peek().is_none();
        if last && line.is_empty() {
            break;
        }
        if line.len() > MAX_LINE + usize::from(last) {
            break;
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let blank = String::from_utf8_lossy(line).trim().is_empty();
        if line.starts_with(b"#") || blank {
            continue;
        }
        let origin = Origin::File {
            path: file.to_path_buf(),
            line: n + 1,
        };
        out.push(Pattern::parse(line, domain, origin));
    }
    out
}

/// Go's path/filepath.Match on one path component (Unix: `\` escapes). `Err` is
/// ErrBadPattern, which the gitignore matcher takes as no match.
pub fn go_match(pattern: &[u8], name: &[u8]) -> Result<bool, ()> {
    // The shapes of source-controller's defaults and of most patterns, a plain name or `*` and a
    // plain suffix, answered directly (the same answers; `check` matches every path it reads).
    let plain = |p: &[u8]| !p.iter().any(|b| matches!(b, b'*' | b'?' | b'[' | b'\\'));
    if plain(pattern) {
        return Ok(pattern == name);
    }
    if let Some(suffix) = pattern.strip_prefix(b"*")
        && plain(suffix)
    {
        return Ok(name
            .strip_suffix(suffix)
            .is_some_and(|head| !head.contains(&b'/')));
    }
    crate::ports::golang::path_match::filepath_match(pattern, name).map_err(|_| ())
}

#[cfg(test)]
mod tests;
