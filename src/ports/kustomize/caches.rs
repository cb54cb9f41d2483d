//! What the builds of one command remember, owned by the repository it opened (`Repo`, through
//! its `Fs`): dropped with it, so nothing outlives the command or leaks between two of them
//! (a test, a library caller building two repositories). Cells are written from one template,
//! so most files a command builds hold one of a few texts: each is parsed once per command,
//! each Go pattern compiled once, and a directory listing only files built once per content.
//! Every entry is a function of content, never of a path, so two repositories (the two sides
//! of `cellgen diff`) may share one `Caches`.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

use super::load::MarkedObjects;
use super::load::memo::Memo;

/// Patterns remembered; past this, new ones are compiled every time.
const MAX_REGEXES: usize = 4096;

#[derive(Default)]
pub struct Caches {
    /// Kustomization files by content (`load::parse_kustomization`).
    pub(super) kustomizations: Memo<Value>,
    /// Resource files by content (`load::parse_objects_marked`).
    pub(super) objects: Memo<MarkedObjects>,
    /// Go patterns (image names, patch targets) compiled (`select::go_regex`).
    regexes: Mutex<foldhash::HashMap<String, regex::Regex>>,
    /// Builds of directories listing only files (`native::plain`).
    pub(super) plain: Mutex<super::native::PlainMemo>,
    /// Builds `plain` answered from its memo (tests see that it is used).
    plain_hits: AtomicUsize,
}

impl Caches {
    /// `pattern` compiled by `compile`, or what it gave before (successes only are kept).
    pub(super) fn regex(
        &self,
        pattern: &str,
        compile: impl FnOnce(&str) -> Result<regex::Regex, String>,
    ) -> Result<regex::Regex, String> {
        if let Some(re) = lock(&self.regexes).get(pattern) {
            return Ok(re.clone());
        }
        let re = compile(pattern)?;
        let mut map = lock(&self.regexes);
        if map.len() < MAX_REGEXES {
            map.insert(pattern.to_string(), re.clone());
        }
        Ok(re)
    }

    pub(super) fn plain_hit(&self) {
        self.plain_hits.fetch_add(1, Ordering::Relaxed);
    }

    /// How many builds `native::plain` answered from its memo.
    pub fn plain_hits(&self) -> usize {
        self.plain_hits.load(Ordering::Relaxed)
    }
}

/// Whole entries are inserted, never half-written ones: a poisoned lock's map is whole.
pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
