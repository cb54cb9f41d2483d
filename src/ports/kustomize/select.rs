//! Patch (and replacement) target selectors, as kustomize's resWrangler.Select matches them:
//! group, version, kind, name and namespace are anchored Go regular expressions; name and
//! namespace match the original or the current value (namespaces as kustomize's effective
//! namespace); label and annotation selectors are Kubernetes label selectors.

use serde_json::{Map, Value};

use super::Caches;
use super::kustomization::Selector;
use super::resid::Res;

/// A Go (RE2) regular expression compiled with Rust's `regex`, refusing the syntax the two
/// read differently: Perl classes are rewritten to Go's ASCII meaning, and constructs only
/// one of them accepts (class set operations, nested classes, `\<`, `\Q`, flags beyond
/// `imsU`, counts over 1000) are reported.
pub fn go_regex(caches: &Caches, pattern: &str) -> Result<regex::Regex, String> {
    // Builds use the same few patterns over and over (image names, patch targets): compiled
    // once per command.
    caches.regex(pattern, compile_go_regex)
}

fn compile_go_regex(pattern: &str) -> Result<regex::Regex, String> {
    let mut out = String::with_capacity(pattern.len() + 8);
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    let mut in_class = false;
    let mut class_start = 0;
    let perl = |c: char, neg_ok: bool| -> Option<&'static str> {
        Some(match (c, neg_ok) {
            ('d', _) => "0-9",
            ('w', _) => "0-9A-Za-z_",
            ('s', _) => "\\t\\n\\f\\r ",
            _ => return None,
        })
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                let Some(&n) = chars.get(i + 1) else {
                    return Err("a trailing backslash".into());
                };
                match n {
                    'd' | 'w' | 's' => {
                        let set = perl(n, true).expect("perl class");
                        if in_class {
                            out.push_str(set);
                        } else {
                            out.push('[');
                            out.push_str(set);
                            out.push(']');
                        }
                    }
                    'D' | 'W' | 'S' => {
                        if in_class {
                            return Err(format!("`\\{n}` inside a character class"));
                        }
                        out.push_str("[^");
                        out.push_str(perl(n.to_ascii_lowercase(), true).expect("perl class"));
                        out.push(']');
                    }
                    'b' | 'B' | '<' | '>' | 'Q' | 'E' | 'C' | 'Z' => {
                        return Err(format!("`\\{n}`"));
                    }
                    '0'..='9' => return Err(format!("`\\{n}`")),
                    _ => {
                        out.push('\\');
                        out.push(n);
                    }
                }
                i += 2;
                continue;
            }
            '[' if in_class => {
                if chars.get(i + 1) == Some(&':') {
                    // A POSIX class such as [:alpha:]: copy it whole.
                    let end = (i + 2..chars.len().saturating_sub(1))
                        .find(|&j| chars[j] == ':' && chars[j + 1] == ']')
                        .ok_or("an unterminated POSIX class")?;
                    out.extend(&chars[i..=end + 1]);
                    i = end + 2;
                    continue;
                }
                return Err("`[` inside a character class".into());
            }
            '[' => {
                in_class = true;
                class_start = i;
                out.push('[');
                i += 1;
                // A leading `^` and a leading `]` are part of the class syntax.
                if chars.get(i) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                if chars.get(i) == Some(&']') {
                    out.push_str("\\]");
                    i += 1;
                }
                continue;
            }
            ']' if in_class => {
                in_class = false;
                let _ = class_start;
                out.push(']');
            }
            '&' | '-' | '~' if in_class && chars.get(i + 1) == Some(&c) => {
                return Err(format!("`{c}{c}` inside a character class"));
            }
            '(' if !in_class && chars.get(i + 1) == Some(&'?') => {
                // Flags: Go knows i, m, s and U.
                let mut j = i + 2;
                while j < chars.len() && !matches!(chars[j], ':' | ')' | 'P' | '<') {
                    if !matches!(chars[j], 'i' | 'm' | 's' | 'U' | '-') {
                        return Err(format!("the flag `{}`", chars[j]));
                    }
                    j += 1;
                }
                out.push('(');
            }
            '{' if !in_class => {
                let end = chars[i..].iter().position(|&x| x == '}').map(|e| i + e);
                if let Some(end) = end {
                    let body: String = chars[i + 1..end].iter().collect();
                    let counts: Vec<&str> = body.split(',').collect();
                    let numeric = counts.len() <= 2
                        && counts.iter().all(|n| n.chars().all(|d| d.is_ascii_digit()))
                        && !counts[0].is_empty();
                    if numeric
                        && counts
                            .iter()
                            .any(|n| n.parse::<u32>().is_ok_and(|v| v > 1000))
                    {
                        return Err("a repetition count over 1000".into());
                    }
                }
                out.push('{');
            }
            _ => out.push(c),
        }
        i += 1;
    }
    regex::Regex::new(&out).map_err(|e| format!("not a regular expression here: {e}"))
}

/// Parsed selector; unsupported syntax is reported as the offending text.
pub struct Compiled<'a> {
    sel: &'a Selector,
    group: Option<regex::Regex>,
    version: Option<regex::Regex>,
    kind: Option<regex::Regex>,
    name: Option<regex::Regex>,
    namespace: Option<regex::Regex>,
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
    fn key(&self) -> &str {
        match self {
            Req::Eq(k, _)
            | Req::Ne(k, _)
            | Req::Exists(k)
            | Req::NotExists(k)
            | Req::In(k, _)
            | Req::NotIn(k, _) => k,
        }
    }

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

fn label_like(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
}

fn parse_reqs(s: &str) -> Result<Vec<Req>, String> {
    let mut out = Vec::new();
    for t in split_terms(s) {
        let bad = || format!("selector `{t}`");
        let set = |rest: &str| -> Result<Vec<String>, String> {
            let inner = rest
                .trim()
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'))
                .ok_or_else(bad)?;
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
        } else if label_like(t) {
            Req::Exists(t.into())
        } else {
            return Err(bad());
        };
        if !label_like(req.key()) {
            return Err(bad());
        }
        out.push(req);
    }
    Ok(out)
}

fn anchored(caches: &Caches, p: &Option<String>) -> Result<Option<regex::Regex>, String> {
    match p.as_deref() {
        None | Some("") => Ok(None),
        Some(p) => go_regex(caches, &format!("^(?:{p})$"))
            .map(Some)
            .map_err(|e| format!("pattern `{p}`: {e}")),
    }
}

impl<'a> Compiled<'a> {
    pub fn new(sel: &'a Selector, caches: &Caches) -> Result<Self, String> {
        Ok(Compiled {
            sel,
            group: anchored(caches, &sel.group)?,
            version: anchored(caches, &sel.version)?,
            kind: anchored(caches, &sel.kind)?,
            name: anchored(caches, &sel.name)?,
            namespace: anchored(caches, &sel.namespace)?,
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

    /// Whether the selector reads a label or annotation that is not a string (kustomize
    /// compares their YAML text, which JSON values no longer carry).
    pub fn unsure_about(&self, r: &Res) -> Option<String> {
        let check = |reqs: &[Req], m: Option<&Map<String, Value>>, what: &str| {
            reqs.iter().find_map(|q| {
                m.and_then(|m| m.get(q.key()))
                    .filter(|v| !v.is_string())
                    .map(|_| format!("{what} `{}` that is not a string", q.key()))
            })
        };
        check(&self.labels, r.labels(), "label")
            .or_else(|| check(&self.annotations, r.annotations(), "annotation"))
    }

    pub fn matches(&self, r: &Res) -> bool {
        let _ = self.sel;
        let is = |re: &Option<regex::Regex>, v: &str| re.as_ref().is_none_or(|re| re.is_match(v));
        let org = r.org_id();
        if !is(&self.namespace, &org.namespace) && !is(&self.namespace, r.effective_namespace()) {
            return false;
        }
        if !is(&self.name, &org.name) && !is(&self.name, r.name()) {
            return false;
        }
        if !is(&self.group, r.group())
            || !is(&self.version, r.version())
            || !is(&self.kind, r.kind())
        {
            return false;
        }
        self.labels.iter().all(|q| q.matches(r.labels()))
            && self.annotations.iter().all(|q| q.matches(r.annotations()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_regular_expressions() {
        let m = |p: &str, t: &str| {
            go_regex(&Caches::default(), &format!("^(?:{p})$"))
                .unwrap()
                .is_match(t)
        };
        assert!(m("app", "app"));
        assert!(!m("app", "app2"));
        assert!(m("app.*", "app-x"));
        assert!(m("(a|b)-\\d+", "b-12"));
        assert!(!m("\\d", "٣"));
        assert!(m("[[:alpha:]]+", "abc"));
        assert!(go_regex(&Caches::default(), "[a-z&&[^x]]").is_err());
        assert!(go_regex(&Caches::default(), "\\bx").is_err());
        assert!(go_regex(&Caches::default(), "(?x)a").is_err());
        assert!(go_regex(&Caches::default(), "a{1001}").is_err());
    }

    #[test]
    fn label_selectors() {
        let m: Map<String, Value> = serde_json::from_str(r#"{"app":"x","tier":"web"}"#).unwrap();
        let all = |s: &str| parse_reqs(s).unwrap().iter().all(|r| r.matches(Some(&m)));
        assert!(all("app=x"));
        assert!(all("app==x,tier!=db"));
        assert!(all("tier in (web, db),!missing,app"));
        assert!(!all("tier notin (web)"));
        assert!(parse_reqs("a>1").is_err());
    }
}
