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
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

use super::flux::{read_back, substitution_disabled};
use super::{
    Analysis, SubstError, SubstituteOptions, Vars, analyze, envsubst, is_valid_var_name,
    to_flux_yaml,
};

/// Results kept per object. Cells differ in a few values (their name, region, ...): enough
/// room for the values cells share, bounded so a value unique to each cell costs no memory.
const KEPT: usize = 32;

/// One result and the look-ups (name, answer) its evaluation made, in order.
struct Memo {
    strict: bool,
    lookups: Vec<(String, Option<String>)>,
    result: Result<Value, SubstError>,
}

/// A built object ready to be substituted any number of times.
pub struct Prepared {
    disabled: bool,
    text: OnceLock<String>,
    analysis: OnceLock<Analysis>,
    memos: Mutex<Vec<Memo>>,
}

impl Prepared {
    pub fn new(object: &Value) -> Prepared {
        Prepared {
            disabled: substitution_disabled(object),
            text: OnceLock::new(),
            analysis: OnceLock::new(),
            memos: Mutex::new(Vec::new()),
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
        // The same steps, in the same order, as substitute_object.
        if self.disabled || (vars.is_empty() && !opts.strategy_always) {
            return Ok(object.clone());
        }
        if let Some(bad) = vars.0.keys().find(|k| !is_valid_var_name(k)) {
            return Err(SubstError::InvalidVarName { name: bad.clone() });
        }
        let answers_match = |m: &Memo| {
            m.strict == opts.strict
                && m.lookups
                    .iter()
                    .all(|(name, answer)| vars.get(name) == answer.as_deref())
        };
        if let Some(m) = self.lock().iter().find(|m| answers_match(m)) {
            return m.result.clone();
        }
        let lookups = RefCell::new(Vec::new());
        let lookup = |name: &str| {
            let answer = vars.get(name).map(str::to_owned);
            lookups.borrow_mut().push((name.to_owned(), answer.clone()));
            answer
        };
        let result = envsubst(self.text(object), &lookup, opts.strict).and_then(|t| read_back(&t));
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
