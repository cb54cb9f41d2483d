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
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use super::flux::{read_back, substitution_disabled};
use super::{
    Analysis, SubstError, SubstituteOptions, Vars, analyze, envsubst, is_valid_var_name,
    to_flux_yaml,
};
use crate::kustomize::yaml::holes::{Hole, fill, with_holes};

/// Results kept per object. Cells differ in a few values (their name, region, ...): enough
/// room for the values cells share, bounded so a value unique to each cell costs no memory.
const KEPT: usize = 32;

/// One result and the look-ups (name, answer) its evaluation made, in order.
struct Memo {
    strict: bool,
    lookups: Vec<(String, Option<String>)>,
    /// Shared with every caller it answers: cells hold it, not a copy.
    result: Result<Arc<Value>, SubstError>,
}

/// A built object ready to be substituted any number of times.
pub struct Prepared {
    disabled: bool,
    text: OnceLock<String>,
    analysis: OnceLock<Analysis>,
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
        if let Some(bad) = vars.0.keys().find(|k| !is_valid_var_name(k)) {
            return Err(SubstError::InvalidVarName { name: bad.clone() });
        }
        {
            let memos = self.lock();
            // The remembered results mostly ask the same few names: each is looked up once.
            let mut answers: Vec<(&str, Option<&str>)> = Vec::new();
            let found = memos.iter().find(|m| {
                m.strict == opts.strict
                    && m.lookups.iter().all(|(name, expected)| {
                        let answer = match answers.iter().find(|(n, _)| *n == name.as_str()) {
                            Some(&(_, a)) => a,
                            None => {
                                let a = vars.get(name);
                                answers.push((name.as_str(), a));
                                a
                            }
                        };
                        answer == expected.as_deref()
                    })
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
        let template = if self.computed.fetch_add(1, Ordering::Relaxed) > 0 {
            self.template
                .get_or_init(|| Template::new(self.text(object), self.analysis(object)))
                .as_ref()
        } else {
            None
        };
        let result = envsubst(self.text(object), &lookup, opts.strict)
            .and_then(
                |t| match template.and_then(|tp| tp.read_back(&t, vars, opts.strict)) {
                    Some(value) => Ok(value),
                    None => read_back(&t),
                },
            )
            .map(Arc::new);
        let mut memos = self.lock();
        if memos.len() == KEPT {
            memos.remove(0);
        }
        memos.push(Memo {
            strict: opts.strict,
            lookups: lookups.into_inner(),
            result: result.clone(),
        });
        result
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Memo>> {
        // A panic elsewhere cannot leave a half-written entry: pushes are whole.
        self.memos.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Marks the placeholders of a [`Template`]; a text holding it gets no template.
const MARK: &str = "cgph";

fn placeholder(i: usize) -> String {
    format!("{MARK}{i}q")
}

/// The object's text read back once with a placeholder in place of each `${...}`: a result is
/// then that value with each placeholder's scalar given the expression's word and resolved as
/// go-yaml v2 resolves that scalar (`yaml::holes`), where the word cannot change how the text
/// reads: it is made of letters, digits and `_./:-`, starts with a letter, digit or `_`, does
/// not end with `:`, and the substituted text is exactly the text between the expressions (no
/// `$` in it, so envsubst leaves it alone) around the words. Anything else is read back whole.
struct Template {
    /// Text before, between and after the expressions.
    pieces: Vec<String>,
    expressions: Vec<String>,
    value: Value,
    holes: Vec<Hole>,
}

impl Template {
    fn new(text: &str, analysis: &Analysis) -> Option<Template> {
        if !analysis.errors.is_empty() || analysis.refs.is_empty() || text.contains(MARK) {
            return None;
        }
        // Outermost expressions (nested references lie inside them).
        let mut refs: Vec<(usize, usize)> = analysis
            .refs
            .iter()
            .map(|r| (r.offset, r.offset + r.len))
            .collect();
        refs.sort_by_key(|&(start, end)| (start, std::cmp::Reverse(end)));
        let mut spans: Vec<(usize, usize)> = Vec::new();
        for (start, end) in refs {
            match spans.last() {
                Some(&(_, last)) if start < last => {
                    if end > last {
                        return None;
                    }
                }
                _ => spans.push((start, end)),
            }
        }
        let mut pieces = Vec::new();
        let mut expressions = Vec::new();
        let mut with_marks = String::with_capacity(text.len());
        let mut at = 0;
        for (i, &(start, end)) in spans.iter().enumerate() {
            pieces.push(text.get(at..start)?.to_string());
            expressions.push(text.get(start..end)?.to_string());
            with_marks.push_str(&text[at..start]);
            with_marks.push_str(&placeholder(i));
            at = end;
        }
        pieces.push(text.get(at..)?.to_string());
        with_marks.push_str(&text[at..]);
        if pieces.iter().any(|p| p.contains('$')) {
            return None;
        }
        let (value, holes) = with_holes(&with_marks, &|s: &str| s.contains(MARK))?;
        // Each placeholder in exactly one scalar, once.
        for i in 0..spans.len() {
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
        Some(Template {
            pieces,
            expressions,
            value,
            holes,
        })
    }

    /// `read_back(substituted)`, when `substituted` is the text with words that fit in place of
    /// the expressions (each evaluated alone with `vars`); `None` otherwise.
    fn read_back(&self, substituted: &str, vars: &Vars, strict: bool) -> Option<Value> {
        let lookup = |name: &str| vars.get(name).map(str::to_owned);
        let mut words = Vec::with_capacity(self.expressions.len());
        let mut rebuilt = String::with_capacity(substituted.len());
        rebuilt.push_str(&self.pieces[0]);
        for (expression, after) in self.expressions.iter().zip(&self.pieces[1..]) {
            let word = envsubst(expression, &lookup, strict).ok()?;
            if !fits(&word) {
                return None;
            }
            rebuilt.push_str(&word);
            rebuilt.push_str(after);
            words.push(word);
        }
        if rebuilt != substituted {
            return None;
        }
        let mut texts = Vec::with_capacity(self.holes.len());
        for hole in &self.holes {
            let mut text = hole.value.clone();
            for (i, word) in words.iter().enumerate() {
                text = text.replace(&placeholder(i), word);
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
    let inner = |b: &u8| b.is_ascii_alphanumeric() || b"_./:-".contains(b);
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
        Vars(
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
            let full = crate::substitute::substitute_object(&obj, &v, &STRICT);
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
            crate::substitute::substitute_object(&obj, &missing, &STRICT).err()
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
