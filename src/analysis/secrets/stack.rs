//! Loading a cell's stack for tracing: its `.tf` files, its tfvars values, and the local modules
//! it calls (each call one context), never reading outside the repository.

use camino::{Utf8Component as Component, Utf8Path, Utf8PathBuf};
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, OnceLock};

use hcl_edit::expr::Expression;
use hcl_edit::structure::Body;

use crate::model::parsed_hcl::{HclParses, tfvars_attributes};
use crate::root::filestore::{Bytes, FileStore, Kind};
use crate::root::memos::Memos;

/// Local modules followed at most (each call is one), so a module calling itself ends.
const MAX_CONTEXTS: usize = 64;

/// One file of a loaded directory: how this cell's chains show it, and what its text holds.
pub(super) struct File {
    /// How chains show it: a name in the stack, a repository-relative path elsewhere.
    pub(super) shown: String,
    /// Shared by every file of the same text ([`shared_content`]).
    pub(super) content: Arc<Content>,
}

/// What is derived from a file's text alone, computed once per distinct text in the command:
/// most of a cell's stack is the same text in every cell (cluster.tf, variables.tf, the
/// components' files), so a cell pays only for the files it does not share. Nothing here
/// depends on where the file is: its shown name is the cell's [`File`]'s.
pub(super) struct Content {
    pub(super) text: String,
    /// Parsed on first use (None: it does not parse, and is skipped).
    body: OnceLock<Option<Arc<Body>>>,
    /// Which of [`DECLARING`]'s words the text holds (bit i: word i), found once.
    words: u8,
    /// For each of [`DECLARING`]'s words, what follows it on the lines it starts (a block's
    /// labels), found when first asked: a trace asks each file for the same words again and
    /// again, each time with another name.
    headers: [OnceLock<Vec<std::ops::Range<usize>>>; DECLARING.len()],
    /// The hashes of the words that start its lines after the first `locals` header, found
    /// when first asked: where a local's name is written. A trace asks each file for many
    /// locals, one at a time; even flux.tf, unique to its cell, is asked enough (about 9) that
    /// the index costs less than a search of the text per name.
    line_words: OnceLock<Vec<u64>>,
    /// Whether the text holds a backslash.
    backslash: bool,
    /// Whether the text holds `/*`: an inline comment may then sit between a block's type and
    /// its labels.
    inline_comment: bool,
    /// Its top-level `module` blocks with a local source: (name, source), in order.
    calls: OnceLock<Vec<(String, String)>>,
    /// Its declarations, indexed on first look-up (`taint`).
    pub(super) decls: OnceLock<super::decls::Decls>,
    /// The command's parse cache its body is parsed through.
    parses: Arc<HclParses>,
}

/// What the secret trace remembers of the stack files' texts during one command (their parses
/// are [`HclParses`]'): the command's, held by its `FileStore` (`FileStore::memos`) and dropped
/// with it. Cells repeat most of their stack (cluster.tf, variables.tf, the components' files
/// are the same text in every cell), so each distinct text is checked once.
#[derive(Default)]
pub struct HclCaches {
    content: Mutex<ContentCache>,
}

/// The texts' [`Content`]s, kept from a text's second sighting (as [`HclParses`] does): a
/// file unique to a cell (flux.tf, backend.tf) costs a hash, not a copy. Keyed by the whole
/// text (a foldhash of it, a hit confirmed by comparing the text).
#[derive(Default)]
struct ContentCache {
    seen: foldhash::HashSet<u64>,
    kept: foldhash::HashMap<u64, Arc<Content>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Whole entries are inserted, never half-written ones.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl HclCaches {
    /// The content of the file `bytes`, shared with every earlier file of the same bytes; None
    /// when they are not UTF-8. A text met before is neither checked nor copied again.
    fn shared_content(&self, bytes: &[u8], parses: &Arc<HclParses>) -> Option<Arc<Content>> {
        let hash = foldhash::fast::FixedState::default().hash_one(bytes);
        let repeated = {
            let mut cache = lock(&self.content);
            match cache.kept.get(&hash) {
                Some(kept) if kept.text.as_bytes() == bytes => return Some(kept.clone()),
                Some(_) => false,
                None => !cache.seen.insert(hash),
            }
        };
        let text = std::str::from_utf8(bytes).ok()?.to_owned();
        let content = Arc::new(Content::new(text, parses.clone()));
        if repeated {
            let mut cache = lock(&self.content);
            return Some(cache.kept.entry(hash).or_insert(content).clone());
        }
        Some(content)
    }
}

impl Content {
    /// The text's body, parsed (once, through the command's parse cache while it lasts) when
    /// first asked for.
    pub(super) fn body(&self) -> Option<&Body> {
        self.body
            .get_or_init(|| self.parses.parse_shared(&self.text, false).ok())
            .as_deref()
    }

    /// Whether the text may declare a `word` block (or local) named `name`: block types and
    /// names are written out in the text (a label or key with an escape is the one way to
    /// write a name otherwise, so a text holding a backslash always may).
    pub(super) fn may_declare(&self, word: &str, name: &str) -> bool {
        let holds_word = match DECLARING.iter().position(|w| *w == word) {
            Some(i) => self.words & (1 << i) != 0,
            None => self.text.contains(word),
        };
        holds_word && self.may_name(word, name)
    }

    /// Whether `name` is written where a `word` declaration could name it. HCL writes a block's
    /// type and labels on one line (a newline ends the header) and an attribute's name first on
    /// its line, so: a line starting with the block word holding the name, or a backslash (a
    /// label with an escape); for a local, a line whose first word is the name, or a one-line
    /// `locals { name = ... }`. An inline comment (`/*`) can come before either: the whole
    /// text is then searched. A superset of the declarations: only a file it keeps is parsed
    /// to be sure. (flux.tf, unique to each cell, holds a backslash in its tear-down script and
    /// was parsed in every cell for every look-up: a third of `check`'s time on 1,000 cells.)
    fn may_name(&self, word: &str, name: &str) -> bool {
        let text = self.text.as_str();
        // memmem's search, not str::contains: this runs for every look-up in every file.
        let holds = |hay: &str| memchr::memmem::find(hay.as_bytes(), name.as_bytes()).is_some();
        if self.inline_comment {
            return self.backslash || holds(text);
        }
        let headed = |rest: &str| holds(rest) || rest.contains('\\');
        let headed = match DECLARING.iter().position(|w| *w == word) {
            Some(i) => self.headers[i]
                .get_or_init(|| header_rests(text, word))
                .iter()
                .any(|r| headed(&text[r.clone()])),
            None => header_rests(text, word)
                .into_iter()
                .any(|r| headed(&text[r])),
        };
        headed || (word == "locals" && self.local_on_its_line(name))
    }

    /// Whether `name` is the first word of a line after the first `locals` header line: a
    /// block's attributes follow its header (`{` ends that line), so every local not on its
    /// block's header line is written there ([`line_words`]).
    fn local_on_its_line(&self, name: &str) -> bool {
        let text = self.text.as_str();
        let Some(first) = self.headers[LOCALS]
            .get_or_init(|| header_rests(text, DECLARING[LOCALS]))
            .first()
        else {
            return false;
        };
        let after = first.end;
        self.line_words
            .get_or_init(|| line_words(&text[after..]))
            .binary_search(&word_hash(name.as_bytes()))
            .is_ok()
    }

    /// The content of `text`, the words [`Content::may_declare`] asks about found once.
    fn new(text: String, parses: Arc<HclParses>) -> Content {
        static FINDERS: OnceLock<Vec<memchr::memmem::Finder<'static>>> = OnceLock::new();
        let finders =
            FINDERS.get_or_init(|| DECLARING.iter().map(memchr::memmem::Finder::new).collect());
        let words = finders
            .iter()
            .enumerate()
            .filter(|(_, f)| f.find(text.as_bytes()).is_some())
            .fold(0u8, |mask, (i, _)| mask | (1 << i));
        Content {
            backslash: memchr::memchr(b'\\', text.as_bytes()).is_some(),
            inline_comment: memchr::memmem::find(text.as_bytes(), b"/*").is_some(),
            words,
            headers: Default::default(),
            line_words: OnceLock::new(),
            text,
            body: OnceLock::new(),
            calls: OnceLock::new(),
            decls: OnceLock::new(),
            parses,
        }
    }

    /// Whether the text may hold a top-level `module` block: a block starts a line (after
    /// blanks, or after a `/* */` comment, so a text holding one always may).
    fn may_call_module(&self) -> bool {
        memchr::memmem::find(self.text.as_bytes(), b"/*").is_some()
            // Each `module` word, not each line: blanks before it on its line, no name
            // character after it.
            || memchr::memmem::find_iter(self.text.as_bytes(), b"module").any(|at| {
                let line_start = self.text[..at].rfind('\n').map_or(0, |n| n + 1);
                self.text[line_start..at].chars().all(char::is_whitespace)
                    && !self.text[at + "module".len()..]
                        .starts_with(|c: char| c.is_alphanumeric() || "_-.".contains(c))
            })
    }

    /// Its top-level `module` blocks whose source is a local path: (name, source).
    fn local_calls(&self) -> &[(String, String)] {
        self.calls.get_or_init(|| {
            if !self.may_call_module() {
                return Vec::new();
            }
            let Some(body) = self.body() else {
                return Vec::new();
            };
            body.get_blocks("module")
                .filter_map(|b| {
                    let name = b.labels.first()?.as_str().to_string();
                    let source = literal_string(&b.body.get_attribute("source")?.value)?;
                    (source.starts_with("./") || source.starts_with("../"))
                        .then(|| (name, source.to_string()))
                })
                .collect()
        })
    }
}

impl File {
    /// A file of `bytes` shown as `shown` (None: not UTF-8); `share`: its content shared with
    /// every other file of the same text (false: computed for this file alone, what the cache
    /// must equal).
    pub(super) fn new(memos: &Memos, shown: String, bytes: &[u8], share: bool) -> Option<File> {
        let parses = memos.get::<HclParses>();
        let content = if share {
            memos.get::<HclCaches>().shared_content(bytes, &parses)?
        } else {
            let text = std::str::from_utf8(bytes).ok()?.to_owned();
            Arc::new(Content::new(text, parses))
        };
        Some(File { shown, content })
    }

    pub(super) fn body(&self) -> Option<&Body> {
        self.content.body()
    }

    pub(super) fn may_declare(&self, word: &str, name: &str) -> bool {
        self.content.may_declare(word, name)
    }

    pub(super) fn line(&self, span: Option<std::ops::Range<usize>>) -> usize {
        let text = &self.content.text;
        let offset = span.map_or(0, |s| s.start).min(text.len());
        text[..offset].matches('\n').count() + 1
    }

    pub(super) fn at(&self, span: Option<std::ops::Range<usize>>) -> String {
        format!("{}:{}", self.shown, self.line(span))
    }
}

/// One directory of `.tf` files.
pub(super) struct Dir {
    pub(super) files: Vec<File>,
}

/// One instance of a directory: the stack itself, or a local module call.
pub(super) struct Ctx {
    pub(super) dir: usize,
    /// (calling context, module name)
    pub(super) call: Option<(usize, String)>,
    pub(super) children: HashMap<String, usize>,
}

pub(super) struct World {
    pub(super) dirs: Vec<Dir>,
    pub(super) ctxs: Vec<Ctx>,
    /// The stack's terraform.tfvars and *.auto.tfvars: variable → (file:line, value).
    pub(super) tfvars: HashMap<String, (String, String)>,
}

/// Reads `rel`, a file of a directory already known to be inside the repository, unless it is
/// a symlink that leads out of it (`real_root`, the canonical root) or not a regular file.
fn read_inside(files: &FileStore, real_root: &Utf8Path, rel: &Utf8Path) -> Option<String> {
    let bytes = read_bytes_inside(files, real_root, rel)?;
    String::from_utf8(bytes.as_ref().clone()).ok()
}

/// [`read_inside`]'s bytes, before any UTF-8 check (the store's, not copied).
fn read_bytes_inside(files: &FileStore, real_root: &Utf8Path, rel: &Utf8Path) -> Option<Bytes> {
    // A regular file first: one look-up in the store for nearly every file.
    if let Some(contents) = files.contents(rel) {
        return contents.ok();
    }
    if files.kind(rel).ok()? == Kind::Link {
        let real = crate::root::disk::canonicalize(files.root().join(rel)).ok()?;
        return real
            .starts_with(real_root)
            .then(|| crate::root::disk::read(&real).ok().map(Arc::new))?;
    }
    None
}

/// `a/b/../c` → `a/c`; None when it climbs above its start.
fn normalise(path: &Utf8Path) -> Option<Utf8PathBuf> {
    let mut out = Utf8PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(n) => out.push(n),
            _ => return None,
        }
    }
    Some(out)
}

/// Block types that declare something an expression can read.
const DECLARING: &[&str] = &["variable", "locals", "resource", "data", "module", "output"];
/// Where `locals` is in [`DECLARING`].
const LOCALS: usize = 1;

/// Whether only blanks come before `at` on its line.
fn starts_line(text: &str, at: usize) -> bool {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text[start..at].trim_start().is_empty()
}

/// The hashes of the word starting each line after its blanks, sorted: a word runs up to the
/// first ASCII character that cannot be in an HCL identifier (a local's name is followed by a
/// blank or `=`; a non-ASCII character is kept in the word, so no name is cut short). Hashes,
/// not words: two words of one hash only make a file parsed that need not be, and a name is
/// found without copying or sorting text. Byte by byte (a file unique to its cell pays for
/// this once per cell), the line's blanks as `str::trim_start` takes them.
fn line_words(text: &str) -> Vec<u64> {
    let bytes = text.as_bytes();
    let mut words = Vec::new();
    // One search over the text for every line's end, not one per line.
    let ends = memchr::memchr_iter(b'\n', bytes).chain([bytes.len()]);
    let mut start = 0;
    for end in ends {
        let mut at = start;
        while at < end && matches!(bytes[at], b' ' | b'\t' | b'\r' | 0x0b | 0x0c) {
            at += 1;
        }
        if at < end && !bytes[at].is_ascii() {
            // Perhaps a Unicode blank: as the text's own trim says.
            at = end - text[at..end].trim_start().len();
        }
        let word = at;
        while at < end && in_line_word(bytes[at]) {
            at += 1;
        }
        if at > word {
            words.push(word_hash(&bytes[word..at]));
        }
        start = end + 1;
    }
    words.sort_unstable();
    words.dedup();
    words
}

/// Whether a byte continues a line's first word: what an HCL identifier holds, or any byte of
/// a non-ASCII character.
fn in_line_word(b: u8) -> bool {
    !b.is_ascii() || b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

fn word_hash(word: &[u8]) -> u64 {
    foldhash::fast::FixedState::default().hash_one(word)
}

/// Where `word` starts a line as a block's type (blanks before it; a blank, a quote or a brace
/// after it): the rest of each such line, which holds the block's labels.
fn header_rests(text: &str, word: &str) -> Vec<std::ops::Range<usize>> {
    memchr::memmem::find_iter(text.as_bytes(), word.as_bytes())
        .filter(|&at| starts_line(text, at))
        .map(|at| {
            let rest = at + word.len();
            rest..text[rest..].find('\n').map_or(text.len(), |i| rest + i)
        })
        .filter(|r| text[r.clone()].starts_with([' ', '\t', '"', '{']))
        .collect()
}

/// Loads the `.tf` files of `rel`; `shown_under` is what their names are shown relative to (the
/// stack's own files read as `main.tf:3` next to the finding in its cell-metadata.tf).
fn load_dir(
    files: &FileStore,
    real_root: &Utf8Path,
    rel: &Utf8Path,
    shown_under: &Utf8Path,
    share: bool,
) -> Option<Dir> {
    // The directory itself (or a symlink on its way) must not lead out of the repository.
    if !files.dir_inside(rel) {
        return None;
    }
    let listing = files.list(rel);
    if !listing.opened {
        return None;
    }
    let mut names: Vec<String> = listing
        .names()
        // A name that is not UTF-8 cannot be read by name here; `markers` reports it
        // (not-utf8-name), so the check fails rather than missing the file silently.
        .filter_map(|n| n.to_str().map(str::to_string))
        .filter(|n| n.ends_with(".tf"))
        .collect();
    names.sort();
    // Once per directory, not per file.
    let shown_dir = rel.strip_prefix(shown_under).unwrap_or(rel);
    let files = names
        .into_iter()
        .filter_map(|name| {
            let bytes = read_bytes_inside(files, real_root, &crate::paths::join(rel, &name))?;
            let shown = crate::paths::join(shown_dir, &name).into_string();
            let file = File::new(files.memos(), shown, &bytes, share)?;
            // Without these words a file declares nothing a value can be read from (versions.tf,
            // backend.tf): skip parsing it.
            (file.content.words != 0).then_some(file)
        })
        .collect();
    Some(Dir { files })
}

fn literal_string(expr: &Expression) -> Option<&str> {
    match expr {
        Expression::String(s) => Some(s.as_str()),
        _ => None,
    }
}

impl World {
    /// The stack `stack` and the local modules it calls; `share`: files' contents shared by
    /// text across cells and calls ([`File::new`]).
    pub(super) fn load(files: &FileStore, stack: &Utf8Path, share: bool) -> Option<World> {
        let real_root = files.canonical_root()?;
        let mut world = World {
            dirs: vec![load_dir(files, real_root, stack, stack, share)?],
            ctxs: vec![Ctx {
                dir: 0,
                call: None,
                children: HashMap::new(),
            }],
            tfvars: read_tfvars(files, real_root, stack),
        };
        let mut dir_of: HashMap<Utf8PathBuf, usize> = HashMap::from([(stack.to_path_buf(), 0)]);
        let mut paths = vec![stack.to_path_buf()];
        let mut next = 0;
        while next < world.ctxs.len() && world.ctxs.len() < MAX_CONTEXTS {
            let dir = world.ctxs[next].dir;
            let calls: Vec<(String, String)> = world.dirs[dir]
                .files
                .iter()
                .flat_map(|f| f.content.local_calls().iter().cloned())
                .collect();
            for (name, source) in calls {
                if world.ctxs.len() >= MAX_CONTEXTS {
                    break;
                }
                // A module outside the repository is not read (nor traced).
                let Some(rel) = normalise(&paths[dir].join(&source)) else {
                    continue;
                };
                let child_dir = match dir_of.get(&rel) {
                    Some(d) => *d,
                    None => {
                        let Some(loaded) =
                            load_dir(files, real_root, &rel, Utf8Path::new(""), share)
                        else {
                            continue;
                        };
                        world.dirs.push(loaded);
                        paths.push(rel.clone());
                        dir_of.insert(rel, world.dirs.len() - 1);
                        world.dirs.len() - 1
                    }
                };
                world.ctxs.push(Ctx {
                    dir: child_dir,
                    call: Some((next, name.clone())),
                    children: HashMap::new(),
                });
                let child = world.ctxs.len() - 1;
                world.ctxs[next].children.insert(name, child);
            }
            next += 1;
        }
        Some(world)
    }
}

/// String values of the stack's terraform.tfvars and *.auto.tfvars (what Terraform loads itself).
fn read_tfvars(
    files: &FileStore,
    real_root: &Utf8Path,
    stack: &Utf8Path,
) -> HashMap<String, (String, String)> {
    let mut names: Vec<String> = files
        .list(stack)
        .names()
        // Not UTF-8: reported by `markers` (not-utf8-name), as above.
        .filter_map(|n| n.to_str().map(str::to_string))
        .filter(|n| n == crate::model::repo::TFVARS_FILE || n.ends_with(".auto.tfvars"))
        .collect();
    names.sort();
    let mut values = HashMap::new();
    for name in names {
        let Some(text) = read_inside(files, real_root, &stack.join(&name)) else {
            continue;
        };
        let Some(attributes) = tfvars_attributes(files.memos(), &text) else {
            continue;
        };
        for attr in attributes {
            if let Some(value) = attr.string {
                values.insert(attr.key, (format!("{name}:{}", attr.line), value));
            }
        }
    }
    values
}

#[cfg(test)]
#[path = "stack/tests.rs"]
mod tests;
