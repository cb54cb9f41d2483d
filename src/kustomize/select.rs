//! Patch target selectors: GVK, name/namespace (anchored regular expressions,
//! matched against original or current values) and label/annotation selectors.

use serde_json::{Map, Value};

use super::kustomization::Selector;
use super::resid::Res;

/// Parsed selector; unsupported syntax is reported as the offending text.
pub struct Compiled<'a> {
    sel: &'a Selector,
    labels: Vec<Req>,
    annotations: Vec<Req>,
}

enum Req {
    Eq(String, String),
    Ne(String, String),
    Exists(String),
    NotExists(String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
}

impl Req {
    fn matches(&self, m: Option<&Map<String, Value>>) -> bool {
        let get = |k: &str| m.and_then(|m| m.get(k)).and_then(Value::as_str);
        match self {
            Req::Eq(k, v) => get(k) == Some(v.as_str()),
            Req::Ne(k, v) => get(k) != Some(v.as_str()),
            Req::Exists(k) => get(k).is_some(),
            Req::NotExists(k) => get(k).is_none(),
            Req::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Req::NotIn(k, vs) => get(k).is_none_or(|x| vs.iter().all(|v| v != x)),
        }
    }
}

fn split_terms(s: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect()
}

fn parse_reqs(s: &str) -> Result<Vec<Req>, String> {
    let mut out = Vec::new();
    for t in split_terms(s) {
        let set = |rest: &str| -> Result<Vec<String>, String> {
            let inner = rest
                .trim()
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'));
            let inner = inner.ok_or_else(|| format!("selector `{t}`"))?;
            Ok(inner.split(',').map(|v| v.trim().to_string()).collect())
        };
        let req = if let Some((k, v)) = t.split_once("!=") {
            Req::Ne(k.trim().into(), v.trim().into())
        } else if let Some((k, v)) = t.split_once("==").or_else(|| t.split_once('=')) {
            Req::Eq(k.trim().into(), v.trim().into())
        } else if let Some((k, rest)) = t.split_once(" notin ") {
            Req::NotIn(k.trim().into(), set(rest)?)
        } else if let Some((k, rest)) = t.split_once(" in ") {
            Req::In(k.trim().into(), set(rest)?)
        } else if let Some(k) = t.strip_prefix('!') {
            Req::NotExists(k.trim().into())
        } else if t.chars().all(|c| c.is_alphanumeric() || "-_./".contains(c)) {
            Req::Exists(t.into())
        } else {
            return Err(format!("selector `{t}`"));
        };
        out.push(req);
    }
    Ok(out)
}

impl<'a> Compiled<'a> {
    pub fn new(sel: &'a Selector) -> Result<Self, String> {
        for pat in [&sel.name, &sel.namespace].into_iter().flatten() {
            regex_match(pat, "")?;
        }
        Ok(Compiled {
            sel,
            labels: sel
                .label_selector
                .as_deref()
                .map(parse_reqs)
                .transpose()?
                .unwrap_or_default(),
            annotations: sel
                .annotation_selector
                .as_deref()
                .map(parse_reqs)
                .transpose()?
                .unwrap_or_default(),
        })
    }

    pub fn matches(&self, r: &Res) -> bool {
        let s = self.sel;
        let eq = |want: &Option<String>, have: &str| {
            want.as_deref().is_none_or(|w| w.is_empty() || w == have)
        };
        if !eq(&s.group, r.group()) || !eq(&s.version, r.version()) || !eq(&s.kind, r.kind()) {
            return false;
        }
        let re = |pat: &Option<String>, vals: [&str; 2]| {
            pat.as_deref().is_none_or(|p| {
                p.is_empty() || vals.iter().any(|v| regex_match(p, v).unwrap_or(false))
            })
        };
        let (org_name, org_ns) = r.original();
        if !re(&s.name, [org_name, r.name()]) || !re(&s.namespace, [org_ns, r.namespace()]) {
            return false;
        }
        self.labels.iter().all(|q| q.matches(r.labels()))
            && self.annotations.iter().all(|q| q.matches(r.annotations()))
    }
}

#[derive(Debug, Clone, Copy)]
enum Atom {
    Any,
    Lit(char),
}

/// Anchored match of the regular-expression subset names use in practice
/// (literals, `.`, `*`, `+`, `?`, `\` escapes). Other syntax is an error.
pub fn regex_match(pat: &str, text: &str) -> Result<bool, String> {
    let pat = pat.strip_prefix('^').unwrap_or(pat);
    let pat = pat
        .strip_suffix('$')
        .filter(|p| !p.ends_with('\\'))
        .unwrap_or(pat);
    let mut prog: Vec<(Atom, char)> = Vec::new();
    let mut chars = pat.chars();
    while let Some(c) = chars.next() {
        let atom = match c {
            '.' => Atom::Any,
            '\\' => Atom::Lit(chars.next().ok_or_else(|| format!("pattern `{pat}`"))?),
            '*' | '+' | '?' => {
                let last = prog.last_mut().filter(|(_, q)| *q == '1');
                let Some(last) = last else {
                    return Err(format!("pattern `{pat}`"));
                };
                last.1 = c;
                continue;
            }
            '[' | ']' | '(' | ')' | '{' | '}' | '|' | '^' | '$' => {
                return Err(format!("pattern `{pat}`"));
            }
            c => Atom::Lit(c),
        };
        prog.push((atom, '1'));
    }
    let text: Vec<char> = text.chars().collect();
    Ok(run(&prog, &text))
}

fn run(prog: &[(Atom, char)], text: &[char]) -> bool {
    let Some(((atom, q), rest)) = prog.split_first() else {
        return text.is_empty();
    };
    let ok = |c: &char| match atom {
        Atom::Any => true,
        Atom::Lit(l) => l == c,
    };
    match q {
        '1' => text.first().is_some_and(ok) && run(rest, &text[1..]),
        '?' => run(rest, text) || (text.first().is_some_and(ok) && run(rest, &text[1..])),
        _ => {
            let min = usize::from(*q == '+');
            let max = text.iter().take_while(|c| ok(c)).count();
            (min..=max).rev().any(|n| run(rest, &text[n..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regex_subset() {
        assert!(regex_match("app", "app").unwrap());
        assert!(!regex_match("app", "app2").unwrap());
        assert!(regex_match("app.*", "app-x").unwrap());
        assert!(regex_match("a.c", "abc").unwrap());
        assert!(regex_match("a\\.c", "a.c").unwrap());
        assert!(!regex_match("a\\.c", "abc").unwrap());
        assert!(regex_match("(a|b)", "a").is_err());
    }

    #[test]
    fn label_selectors() {
        let m: Map<String, Value> = serde_json::from_str(r#"{"app":"x","tier":"web"}"#).unwrap();
        let all = |s: &str| parse_reqs(s).unwrap().iter().all(|r| r.matches(Some(&m)));
        assert!(all("app=x"));
        assert!(all("app==x,tier!=db"));
        assert!(all("tier in (web, db),!missing,app"));
        assert!(!all("tier notin (web)"));
    }
}
