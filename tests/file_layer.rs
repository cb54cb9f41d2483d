//! The house rules of file access, processes and state, read from the source (issue 20):
//! - every file-system call of src goes through `src/root/` (`root::disk`, `fsguard::Root`,
//!   `FileStore`, `source`), so one layer decides symbolic links, containment and size limits;
//! - `git` is started only by `src/root/git.rs`, the one hardened way;
//! - no process-wide cache: a `static` or `thread_local!` holding mutable state is refused
//!   unless it is an immutable constant built once (listed below with why).
//!
//! Test code (a trailing `#[cfg(test)] mod tests`, files named `tests.rs` or `*_tests.rs`) may set
//! up fixtures directly: what it tests still reads through the layer.

use std::fs;
use std::path::{Path, PathBuf};

use regex::Regex;

/// Every `.rs` file under src, with its path relative to src ('/'-separated) and its lines that
/// are not test code, each with its line number.
fn source_lines() -> Vec<(String, Vec<(usize, String)>)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files: Vec<PathBuf> = Vec::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let rel = path
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let name = rel.rsplit('/').next().unwrap_or("");
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap();
        let all: Vec<&str> = text.lines().collect();
        let mut lines = Vec::new();
        for (i, line) in all.iter().enumerate() {
            // The trailing test module: `#[cfg(test)]` then `mod tests` to the end of the file.
            if line.trim() == "#[cfg(test)]"
                && all
                    .get(i + 1)
                    .is_some_and(|next| next.trim_start().starts_with("mod tests"))
            {
                break;
            }
            let code = match line.find("//") {
                Some(at) => &line[..at],
                None => line,
            };
            lines.push((i + 1, code.to_string()));
        }
        out.push((rel, lines));
    }
    out
}

/// `src/<file>:<line>: <code>` for each line outside `allowed` files matching `pattern`.
fn offenders(pattern: &Regex, allowed: impl Fn(&str) -> bool) -> Vec<String> {
    let mut found = Vec::new();
    for (rel, lines) in source_lines() {
        if allowed(&rel) {
            continue;
        }
        for (n, code) in lines {
            if pattern.is_match(&code) {
                found.push(format!("src/{rel}:{n}: {}", code.trim()));
            }
        }
    }
    found
}

#[test]
fn every_file_access_goes_through_the_root_layer() {
    // `std::fs` in any form, a `fs::` path after `use std::fs` (not `os::unix::fs::`, the
    // extension traits, which touch nothing), opening or listing a path, resolving links.
    let pattern = Regex::new(
        r"std::fs\b|(^|[^:\w])fs::|\bFile::(open|create)\b|\bOpenOptions\b|\bread_dir(_utf8)?\b|\bcanonicalize(_utf8)?\b|\bread_link(_utf8)?\b|\bsymlink_metadata\b|\bDirBuilder\b",
    )
    .unwrap();
    // A call into the layer (`disk::read_dir`, `crate::root::disk::canonicalize`) is the rule kept.
    let layer = Regex::new(r"\bdisk::\w+").unwrap();
    let found: Vec<String> = offenders(&pattern, |rel| rel.starts_with("root/"))
        .into_iter()
        .filter(|line| {
            pattern.is_match(&layer.replace_all(line.split_once(": ").map_or("", |(_, c)| c), ""))
        })
        .collect();
    assert!(
        found.is_empty(),
        "read and write files through src/root/ (root::disk, fsguard::Root, FileStore), not directly:\n{}",
        found.join("\n")
    );
}

#[test]
fn git_is_started_only_by_the_hardened_helper() {
    let pattern = Regex::new(r#"Command::new\(\s*"git"|Command::new\(\s*GIT\b"#).unwrap();
    let found = offenders(&pattern, |rel| rel == "root/git.rs");
    assert!(
        found.is_empty(),
        "start git through crate::root::git (command/output/answer), which clears GIT_DIR and friends and runs no hook or pager:\n{}",
        found.join("\n")
    );
}

/// Statics allowed, by file and name, with why each is not a cache of a command's data: most
/// hold something built once from embedded constants and never changed after.
const CONSTANTS: &[(&str, &str, &str)] = &[
    (
        "model/generated.rs",
        "CELL_TERRAFORM",
        "file names of the embedded templates",
    ),
    (
        "model/generated.rs",
        "SCAFFOLD",
        "file names of the embedded templates",
    ),
    (
        "model/generated.rs",
        "EMBEDDED",
        "file names of the embedded templates",
    ),
    (
        "ports/kustomize/fieldspec.rs",
        "B",
        "kustomize's built-in field specs, parsed from embedded text",
    ),
    (
        "ports/kustomize/smp_schema.rs",
        "S",
        "the embedded strategic-merge schema, parsed once",
    ),
    (
        "analysis/check/schema.rs",
        "SCHEMAS",
        "the embedded JSON schemas, compiled once",
    ),
    (
        "analysis/check/schema/values.rs",
        "RE",
        "a constant regular expression",
    ),
    (
        "analysis/secrets/stack.rs",
        "FINDERS",
        "substring finders for a constant word list",
    ),
    (
        "writer/lock.rs",
        "HELD",
        "the repository locks this process holds: the kernel's per-process state mirrored (a lock taken twice in one process would deadlock), not a cache",
    ),
];

#[test]
fn no_process_wide_cache() {
    let pattern = Regex::new(
        r"\bstatic\s+(mut\s+)?([A-Z_][A-Z0-9_]*)\s*:\s*[^=]*\b(Mutex|RwLock|RefCell|Cell|OnceLock|OnceCell|LazyLock|Lazy|HashMap|HashSet|BTreeMap|Vec|VecDeque|Atomic\w+|Memo)\b",
    )
    .unwrap();
    let mut found = Vec::new();
    for (rel, lines) in source_lines() {
        for (i, (n, code)) in lines.iter().enumerate() {
            // A thread-local's statics are judged on their own lines (below); one whose
            // statics are not found is refused here.
            if code.contains("thread_local!") {
                let declares = lines[i + 1..]
                    .iter()
                    .take(3)
                    .any(|(_, next)| pattern.is_match(next));
                if !declares {
                    found.push(format!("src/{rel}:{n}: {}", code.trim()));
                }
                continue;
            }
            let Some(caps) = pattern.captures(code) else {
                continue;
            };
            let name = caps.get(2).map_or("", |m| m.as_str());
            let listed = CONSTANTS
                .iter()
                .any(|(file, constant, _)| *file == rel && *constant == name);
            if !listed {
                found.push(format!("src/{rel}:{n}: {}", code.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "keep caches in the command's memos (root::memos, the FileStore's) or its Repo's kustomize::Caches, not in statics; an immutable embedded constant goes on CONSTANTS in tests/file_layer.rs with why:\n{}",
        found.join("\n")
    );
}
