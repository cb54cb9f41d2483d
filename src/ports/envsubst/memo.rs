//! Substitution of one built object, shared by every cell whose layer builds it.
//!
//! Flux serialises each object ([`to_flux_yaml`]), substitutes the text and parses it back
//! ([`substitute_object`](super::substitute_object)). The text depends on the object only, and the result only on the
//! text and on the answers to the variable look-ups the evaluation makes: a [`Prepared`]
//! object emits its text once, and remembers each result with the look-ups that produced it.
//! A later call whose variables answer those same look-ups the same way gets that result: the
//! evaluation is a pure function of those answers, so it would take the same path to the same
//! text. An object with no `${...}` makes no look-up, so all cells share one result.

use std::cell::RefCell;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use super::flux::{read_back, substitution_disabled};
use super::parse::Node;
use super::{
    Analysis, Compiled, SubstError, SubstituteOptions, Vars, analyze, eval, lossy, to_flux_yaml,
};
use crate::ports::yaml::holes::{Hole, fill, with_holes};

/// Results kept per object. Cells differ in a few values (their name, region, ...): enough
/// room for the values cells share, bounded so a value unique to each cell costs no memory.
const KEPT: usize = 32;

/// One result and the look-ups (name, answer) its evaluation made, in order.
struct Memo {
    strict: bool,
    lookups: Vec<(String, Option<String>)>,
    /// [`names_hash`] and [`answers_hash`] of `lookups`: a caller whose variables answer these
    /// names with another hash is passed over without comparing strings (an object unique to
    /// each cell is asked about every remembered result, and answered by none).
    names_hash: u64,
    answers_hash: u64,
    /// Shared with every caller it answers: cells hold it, not a copy.
    result: Result<Arc<Value>, SubstError>,
}

/// A built object ready to be substituted any number of times.
pub struct Prepared {
    disabled: bool,
    text: OnceLock<String>,
    analysis: OnceLock<Analysis>,
    /// The text parsed for evaluation, once for every cell (only the evaluation depends on
    /// the variables).
    compiled: OnceLock<Compiled>,
    memos: Mutex<Vec<Memo>>,
    /// Results computed (not remembered ones): the template is made at the second.
    computed: AtomicUsize,
    template: OnceLock<Option<Template>>,
}

impl Prepared {
    pub fn new(object: &Value) -> Prepared {
        Prepared {
            disabled: substitution_disabled(object),
            text: OnceLock::new(),
            analysis: OnceLock::new(),
            compiled: OnceLock::new(),
            memos: Mutex::new(Vec::new()),
            computed: AtomicUsize::new(0),
            template: OnceLock::new(),
        }
    }

    /// Whether the object opts out of substitution (see [`substitution_disabled`]).
    pub fn disabled(&self) -> bool {
        self.disabled
    }

    /// The object as Flux serialises it before substituting ([`to_flux_yaml`]); `object` is
    /// the one this was prepared from.
    pub fn text(&self, object: &Value) -> &str {
        self.text.get_or_init(|| to_flux_yaml(object))
    }

    /// The `${...}` expressions and syntax errors of [`Prepared::text`] ([`analyze`]).
    pub fn analysis(&self, object: &Value) -> &Analysis {
        self.analysis.get_or_init(|| analyze(self.text(object)))
    }

    /// Exactly [`substitute_object`](super::substitute_object)`(object, vars, opts)`; `object` is the one this was
    /// prepared from.
    pub fn substitute(
        &self,
        object: &Value,
        vars: &Vars,
        opts: &SubstituteOptions,
    ) -> Result<Value, SubstError> {
        self.substitute_shared(object, vars, opts)
            .map(Arc::unwrap_or_clone)
    }

    /// [`Prepared::substitute`], the result shared with the memo (and every cell it answers).
    pub fn substitute_shared(
        &self,
        object: &Value,
        vars: &Vars,
        opts: &SubstituteOptions,
    ) -> Result<Arc<Value>, SubstError> {
        // The same steps, in the same order, as substitute_object.
        if self.disabled || (vars.is_empty() && !opts.strategy_always) {
            return Ok(Arc::new(object.clone()));
        }
        if let Some(bad) = vars.first_invalid_name() {
            return Err(SubstError::InvalidVarName {
                name: bad.to_string(),
            });
        }
        {
            let memos = self.lock();
            // The remembered results mostly ask the same names: their answers are hashed once
            // per list of names. The hash only passes over; the answers decide.
            let mut hashed: Vec<(u64, u64)> = Vec::new();
            let found = memos.iter().find(|m| {
                if m.strict != opts.strict {
                    return false;
                }
                let answers = match hashed.iter().find(|(names, _)| *names == m.names_hash) {
                    Some(&(_, answers)) => answers,
                    None => {
                        let names = m.lookups.iter().map(|(name, _)| name.as_str());
                        let answers = answers_hash(m.strict, names.map(|n| (n, vars.get(n))));
                        hashed.push((m.names_hash, answers));
                        answers
                    }
                };
                answers == m.answers_hash
                    && m.lookups
                        .iter()
                        .all(|(name, expected)| vars.get(name) == expected.as_deref())
            });
            if let Some(m) = found {
                return m.result.clone();
            }
        }
        let lookups = RefCell::new(Vec::new());
        let lookup = |name: &str| {
            let answer = vars.get(name).map(str::to_owned);
            lookups.borrow_mut().push((name.to_owned(), answer.clone()));
            answer
        };
        let compiled = self
            .compiled
            .get_or_init(|| Compiled::new(self.text(object)));
        let template = if self.computed.fetch_add(1, Ordering::Relaxed) > 0 {
            self.template
                .get_or_init(|| Template::new(self.text(object), compiled))
                .as_ref()
        } else {
            None
        };
        let result = match template {
            Some(tp) => tp.substitute(&lookup, opts.strict),
            None => compiled
                .eval(&lookup, opts.strict)
                .and_then(|t| read_back(&t)),
        }
        .map(Arc::new);
        let mut memos = self.lock();
        if memos.len() == KEPT {
            memos.remove(0);
        }
        let lookups = lookups.into_inner();
        memos.push(Memo {
            strict: opts.strict,
            names_hash: names_hash(lookups.iter().map(|(name, _)| name.as_str())),
            answers_hash: answers_hash(
                opts.strict,
                lookups
                    .iter()
                    .map(|(name, a)| (name.as_str(), a.as_deref())),
            ),
            lookups,
            result: result.clone(),
        });
        result
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Memo>> {
        // A panic elsewhere cannot leave a half-written entry: pushes are whole.
        self.memos.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A hash of the names a result looked up, in order.
fn names_hash<'a>(names: impl Iterator<Item = &'a str>) -> u64 {
    let mut hasher = foldhash::fast::FixedState::default().build_hasher();
    names.for_each(|name| name.hash(&mut hasher));
    hasher.finish()
}

/// A hash of the look-ups (name, answer) in order, and of strictness.
fn answers_hash<'a>(
    strict: bool,
    lookups: impl Iterator<Item = (&'a str, Option<&'a str>)>,
) -> u64 {
    let mut hasher = foldhash::fast::FixedState::default().build_hasher();
    strict.hash(&mut hasher);
    lookups.for_each(|lookup| lookup.hash(&mut hasher));
    hasher.finish()
}

/// Marks the placeholders of a [`Template`]; a text holding it gets no template.
const MARK: &str = "cgph";

fn placeholder(i: usize) -> String {
    format!("{MARK}{i}q")
}

/// The object's text read back once with a placeholder in place of each `${...}`: a result is
/// then that value with each placeholder's scalar given the expression's word and resolved as
/// go-yaml v2 resolves that scalar (`yaml::holes`), where the word cannot change how the text
/// reads: it is made of letters, digits and `_./:-@`, starts with a letter, digit or `_`, does
/// not end with `:`, and the text between the expressions is the parse tree's text as written
/// (no `$` in it, no escape), so the substituted text is exactly those pieces around the words.
/// Anything else is read back whole.
struct Template {
    /// Text before, between and after the expressions.
    pieces: Vec<String>,
    /// The parse tree's top-level expressions, in order (each a `Node::Func`).
    expressions: Vec<Node>,
    value: Value,
    holes: Vec<Hole>,
    /// Each hole's text cut at its placeholders: the words go in between.
    parts: Vec<Vec<Part>>,
}

/// A piece of a hole's text: as written, or the `i`th expression's word.
enum Part {
    Text(String),
    Word(usize),
}

/// `value` cut at each placeholder of the first `count` expressions; `None` unless putting
/// the placeholders back gives `value` again.
fn cut(value: &str, count: usize) -> Option<Vec<Part>> {
    let mut parts = Vec::new();
    let mut rest = value;
    while let Some(at) = rest.find(MARK) {
        let after = &rest[at + MARK.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let i: usize = after[..digits].parse().ok()?;
        if i >= count || !after[digits..].starts_with('q') {
            return None;
        }
        if at > 0 {
            parts.push(Part::Text(rest[..at].to_string()));
        }
        parts.push(Part::Word(i));
        rest = &after[digits + 1..];
    }
    if !rest.is_empty() {
        parts.push(Part::Text(rest.to_string()));
    }
    let again: String = parts
        .iter()
        .map(|p| match p {
            Part::Text(t) => t.clone(),
            Part::Word(i) => placeholder(*i),
        })
        .collect();
    (again == value).then_some(parts)
}

impl Template {
    fn new(text: &str, compiled: &Compiled) -> Option<Template> {
        let root = compiled.root().ok()?;
        if text.contains(MARK) {
            return None;
        }
        let nodes = match root {
            Node::List(nodes) => nodes.as_slice(),
            one => std::slice::from_ref(one),
        };
        // The evaluation appends each top-level text as it is and each expression's word:
        // where every text is the source between the expressions, the substituted text is
        // the pieces around the words.
        let mut pieces = Vec::new();
        let mut expressions = Vec::new();
        let mut piece: Vec<u8> = Vec::new();
        let mut at = 0;
        for node in nodes {
            match node {
                Node::Text(t) => piece.extend_from_slice(t),
                Node::Func(f) => {
                    let source = text.get(at..f.start)?;
                    if source.as_bytes() != piece.as_slice() || f.end < f.start {
                        return None;
                    }
                    pieces.push(source.to_string());
                    expressions.push(node.clone());
                    piece.clear();
                    at = f.end;
                }
                Node::List(_) => return None,
            }
        }
        let last = text.get(at..)?;
        if last.as_bytes() != piece.as_slice() {
            return None;
        }
        pieces.push(last.to_string());
        if expressions.is_empty() || pieces.iter().any(|p| p.contains('$')) {
            return None;
        }
        let mut with_marks = String::with_capacity(text.len());
        for (i, p) in pieces.iter().enumerate() {
            if i > 0 {
                with_marks.push_str(&placeholder(i - 1));
            }
            with_marks.push_str(p);
        }
        let (value, holes) = with_holes(&with_marks, &|s: &str| s.contains(MARK))?;
        // Each placeholder in exactly one scalar, once.
        for i in 0..expressions.len() {
            let mark = placeholder(i);
            if holes
                .iter()
                .map(|h| h.value.matches(&mark).count())
                .sum::<usize>()
                != 1
            {
                return None;
            }
        }
        let parts = holes
            .iter()
            .map(|h| cut(&h.value, expressions.len()))
            .collect::<Option<_>>()?;
        Some(Template {
            pieces,
            expressions,
            value,
            holes,
            parts,
        })
    }

    /// `read_back(envsubst(text))`: the expressions are evaluated in order as the whole text's
    /// evaluation does (the same look-ups, the same first error); the words fill the holes
    /// when they fit, else the substituted text is read back whole.
    fn substitute(
        &self,
        lookup: &dyn Fn(&str) -> Option<String>,
        strict: bool,
    ) -> Result<Value, SubstError> {
        let mut words = Vec::with_capacity(self.expressions.len());
        for expression in &self.expressions {
            let mut word = Vec::new();
            eval::eval(expression, lookup, strict, &mut word)?;
            words.push(word);
        }
        if let Some(value) = self.fill(&words) {
            return Ok(value);
        }
        let mut text = Vec::with_capacity(self.pieces.iter().map(String::len).sum());
        text.extend_from_slice(self.pieces[0].as_bytes());
        for (word, after) in words.iter().zip(&self.pieces[1..]) {
            text.extend_from_slice(word);
            text.extend_from_slice(after.as_bytes());
        }
        read_back(&lossy(text))
    }

    /// The template's value with `words` in the holes, when every word fits.
    fn fill(&self, words: &[Vec<u8>]) -> Option<Value> {
        let words: Vec<&str> = words
            .iter()
            .map(|w| std::str::from_utf8(w).ok().filter(|w| fits(w)))
            .collect::<Option<_>>()?;
        let mut texts = Vec::with_capacity(self.holes.len());
        for parts in &self.parts {
            let mut text = String::new();
            for part in parts {
                text.push_str(match part {
                    Part::Text(t) => t,
                    Part::Word(i) => words[*i],
                });
            }
            // libyaml bounds a simple key's length at 1024: far from it, nothing changes.
            if text.len() >= 1000 {
                return None;
            }
            texts.push(text);
        }
        fill(&self.value, &self.holes, &texts).ok()
    }
}

/// A word that reads the same wherever a placeholder stood in a scalar (see [`Template`]).
fn fits(word: &str) -> bool {
    let bytes = word.as_bytes();
    // `@` is an indicator only where a plain scalar starts, and a word does not start with it.
    let inner = |b: &u8| b.is_ascii_alphanumeric() || b"_./:-@".contains(b);
    matches!(bytes.first(), Some(b) if b.is_ascii_alphanumeric() || *b == b'_')
        && bytes.last() != Some(&b':')
        && bytes.len() <= 256
        && bytes.iter().all(inner)
        && !word.contains(MARK)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vars(pairs: &[(&str, &str)]) -> Vars {
        Vars::new(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    const STRICT: SubstituteOptions = SubstituteOptions {
        strict: true,
        strategy_always: false,
    };

    #[test]
    fn results_are_shared_when_the_look_ups_answer_alike() {
        let obj = json!({"data": {"name": "${cell}", "n": "${n:-1}"}});
        let p = Prepared::new(&obj);
        let a = p.substitute(&obj, &vars(&[("cell", "a"), ("other", "1")]), &STRICT);
        assert_eq!(a.unwrap(), json!({"data": {"name": "a", "n": 1}}));
        // A variable the object does not use changes nothing: same result, no new entry.
        let again = p.substitute(&obj, &vars(&[("cell", "a"), ("other", "2")]), &STRICT);
        assert_eq!(again.unwrap(), json!({"data": {"name": "a", "n": 1}}));
        assert_eq!(p.lock().len(), 1);
        // A used one does; so does strictness.
        let b = p.substitute(&obj, &vars(&[("cell", "b"), ("n", "2")]), &STRICT);
        assert_eq!(b.unwrap(), json!({"data": {"name": "b", "n": 2}}));
        let lax = SubstituteOptions {
            strict: false,
            ..STRICT
        };
        let c = p.substitute(&obj, &vars(&[("other", "1")]), &lax);
        // An empty value reads back as null, as in Flux.
        assert_eq!(c.unwrap(), json!({"data": {"name": null, "n": 1}}));
        assert!(
            p.substitute(&obj, &vars(&[("other", "1")]), &STRICT)
                .is_err()
        );
        assert_eq!(p.lock().len(), 4);
    }

    #[test]
    fn shared_results_are_the_memos_and_equal_the_full_path() {
        let obj = json!({"data": {"name": "${cell}", "n": "${n:-1}"}});
        let p = Prepared::new(&obj);
        let cells = [("a", "1"), ("a", "1"), ("b", "x: y"), ("a", "1")];
        let mut first = None;
        for (cell, n) in cells {
            let v = vars(&[("cell", cell), ("n", n)]);
            let shared = p.substitute_shared(&obj, &v, &STRICT);
            let full = crate::ports::envsubst::substitute_object(&obj, &v, &STRICT);
            assert_eq!(shared.as_deref().ok(), full.as_ref().ok());
            assert_eq!(shared.is_err(), full.is_err());
            // Cells whose look-ups answer alike hold one copy.
            if cell == "a" {
                let shared = shared.unwrap();
                let first = first.get_or_insert_with(|| shared.clone());
                assert!(Arc::ptr_eq(first, &shared));
            }
        }
        let missing = vars(&[("other", "1")]);
        assert_eq!(
            p.substitute_shared(&obj, &missing, &STRICT).err(),
            crate::ports::envsubst::substitute_object(&obj, &missing, &STRICT).err()
        );
    }

    #[test]
    fn an_object_without_expressions_is_substituted_once() {
        let obj = json!({"data": {"a": "1", "b": "$$x"}});
        let p = Prepared::new(&obj);
        for cell in ["a", "b", "c"] {
            let out = p
                .substitute(&obj, &vars(&[("cell", cell)]), &STRICT)
                .unwrap();
            assert_eq!(out, json!({"data": {"a": "1", "b": "$x"}}));
        }
        assert_eq!(p.lock().len(), 1);
    }

    #[test]
    fn results_kept_are_bounded() {
        let obj = json!({"data": {"name": "${cell}"}});
        let p = Prepared::new(&obj);
        for i in 0..KEPT + 5 {
            let cell = format!("c{i}");
            let out = p
                .substitute(&obj, &vars(&[("cell", &cell)]), &STRICT)
                .unwrap();
            assert_eq!(out, json!({"data": {"name": cell}}));
        }
        assert_eq!(p.lock().len(), KEPT);
    }
}
