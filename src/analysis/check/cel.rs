//! The part of CEL the vendored Flux CRDs use in `x-kubernetes-validations`: `has(self.a.b)`,
//! `self.a == 'x'` / `!=`, a boolean field `self.a`, `!`, `&&`, `||`, parentheses and
//! `true`/`false`. A rule outside this subset does not parse, and a test keeps every vendored
//! rule inside it. A transition rule (one that reads `oldSelf`) only runs on an update, which
//! cellgen never checks: [`is_transition`].

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Bool(bool),
    Has(Vec<String>),
    Compare {
        path: Vec<String>,
        equal: bool,
        literal: String,
    },
    /// A boolean field, `self.a`.
    Field(Vec<String>),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    Str(String),
    Dot,
    LParen,
    RParen,
    Not,
    And,
    Or,
    Eq,
    Ne,
}

fn tokens(src: &str) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let chars: Vec<char> = src.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
        match c {
            _ if c.is_whitespace() => i += 1,
            '.' => {
                out.push(Token::Dot);
                i += 1;
            }
            '(' => {
                out.push(Token::LParen);
                i += 1;
            }
            ')' => {
                out.push(Token::RParen);
                i += 1;
            }
            _ if two == "&&" || two == "||" || two == "==" || two == "!=" => {
                out.push(match two.as_str() {
                    "&&" => Token::And,
                    "||" => Token::Or,
                    "==" => Token::Eq,
                    _ => Token::Ne,
                });
                i += 2;
            }
            '!' => {
                out.push(Token::Not);
                i += 1;
            }
            '\'' | '"' => {
                let end = chars[i + 1..]
                    .iter()
                    .position(|d| *d == c)
                    .ok_or("unterminated string")?;
                let s: String = chars[i + 1..i + 1 + end].iter().collect();
                if s.contains('\\') {
                    return Err("escapes in strings are not supported".into());
                }
                out.push(Token::Str(s));
                i += end + 2;
            }
            _ if c.is_ascii_alphabetic() || c == '_' => {
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                out.push(Token::Ident(chars[start..i].iter().collect()));
            }
            _ => return Err(format!("unexpected `{c}`")),
        }
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn expect(&mut self, token: Token) -> Result<(), String> {
        match self.next() {
            Some(t) if t == token => Ok(()),
            other => Err(format!("expected {token:?}, found {other:?}")),
        }
    }

    fn or(&mut self) -> Result<Expr, String> {
        let mut left = self.and()?;
        while self.peek() == Some(&Token::Or) {
            self.at += 1;
            left = Expr::Or(Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, String> {
        let mut left = self.unary()?;
        while self.peek() == Some(&Token::And) {
            self.at += 1;
            left = Expr::And(Box::new(left), Box::new(self.unary()?));
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.peek() == Some(&Token::Not) {
            self.at += 1;
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, String> {
        match self.next() {
            Some(Token::LParen) => {
                let e = self.or()?;
                self.expect(Token::RParen)?;
                Ok(e)
            }
            Some(Token::Ident(id)) if id == "true" || id == "false" => Ok(Expr::Bool(id == "true")),
            Some(Token::Ident(id)) if id == "has" => {
                self.expect(Token::LParen)?;
                let path = self.path()?;
                if path.is_empty() {
                    return Err("has() needs a field".into());
                }
                self.expect(Token::RParen)?;
                Ok(Expr::Has(path))
            }
            Some(Token::Ident(id)) if id == "self" => {
                self.at -= 1;
                let path = self.path()?;
                let equal = match self.peek() {
                    Some(Token::Eq) => true,
                    Some(Token::Ne) => false,
                    _ if !path.is_empty() => return Ok(Expr::Field(path)),
                    other => return Err(format!("expected == or !=, found {other:?}")),
                };
                self.at += 1;
                match self.next() {
                    Some(Token::Str(literal)) => Ok(Expr::Compare {
                        path,
                        equal,
                        literal,
                    }),
                    other => Err(format!("expected a string, found {other:?}")),
                }
            }
            other => Err(format!("unexpected {other:?}")),
        }
    }

    /// `self(.field)*`, returned without `self`.
    fn path(&mut self) -> Result<Vec<String>, String> {
        match self.next() {
            Some(Token::Ident(id)) if id == "self" => {}
            other => return Err(format!("expected self, found {other:?}")),
        }
        let mut path = Vec::new();
        while self.peek() == Some(&Token::Dot) {
            self.at += 1;
            match self.next() {
                Some(Token::Ident(id)) => path.push(id),
                other => return Err(format!("expected a field name, found {other:?}")),
            }
        }
        Ok(path)
    }
}

/// Whether `rule` compares with the object's previous version (`oldSelf`): the API server runs
/// such a rule on updates only, never when an object is created.
pub fn is_transition(rule: &str) -> bool {
    rule.contains("oldSelf")
}

/// Parses a rule of the supported subset.
pub fn parse(rule: &str) -> Result<Expr, String> {
    let mut p = Parser {
        tokens: tokens(rule)?,
        at: 0,
    };
    let e = p.or()?;
    if p.at != p.tokens.len() {
        return Err(format!("unexpected {:?}", p.peek()));
    }
    Ok(e)
}

fn field<'a>(value: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter()
        .try_fold(value, |v, k| v.get(k))
        .filter(|v| !v.is_null())
}

/// Evaluates `expr` with `self` bound to `value`; an error is CEL's (e.g. a missing field read).
pub fn eval(expr: &Expr, value: &Value) -> Result<bool, String> {
    Ok(match expr {
        Expr::Bool(b) => *b,
        Expr::Has(path) => field(value, path).is_some(),
        Expr::Compare {
            path,
            equal,
            literal,
        } => {
            let v = field(value, path).ok_or_else(|| format!("no such key: {}", path.join(".")))?;
            let same = v.as_str() == Some(literal.as_str());
            same == *equal
        }
        Expr::Field(path) => field(value, path)
            .ok_or_else(|| format!("no such key: {}", path.join(".")))?
            .as_bool()
            .ok_or_else(|| format!("{} is not a boolean", path.join(".")))?,
        Expr::Not(e) => !eval(e, value)?,
        // CEL's && and || are commutative about errors; the vendored rules never need that.
        Expr::And(a, b) => eval(a, value)? && eval(b, value)?,
        Expr::Or(a, b) => eval(a, value)? || eval(b, value)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_vendored_rule_shapes_evaluate() {
        let one_of = parse(
            "(has(self.chart) && !has(self.chartRef)) || (!has(self.chart) && has(self.chartRef))",
        )
        .unwrap();
        assert!(eval(&one_of, &json!({"chart": {}})).unwrap());
        assert!(eval(&one_of, &json!({"chartRef": {}})).unwrap());
        assert!(!eval(&one_of, &json!({"chart": {}, "chartRef": {}})).unwrap());
        assert!(!eval(&one_of, &json!({})).unwrap());

        let provider = parse(
            "!has(self.serviceAccountName) || (has(self.provider) && (self.provider == 'azure' || self.provider == 'aws'))",
        )
        .unwrap();
        assert!(eval(&provider, &json!({})).unwrap());
        assert!(
            eval(
                &provider,
                &json!({"serviceAccountName": "a", "provider": "aws"})
            )
            .unwrap()
        );
        assert!(
            !eval(
                &provider,
                &json!({"serviceAccountName": "a", "provider": "gcp"})
            )
            .unwrap()
        );
        assert!(!eval(&provider, &json!({"serviceAccountName": "a"})).unwrap());

        let ne = parse("!has(self.retryInterval) || self.name != 'RemediateOnFailure'").unwrap();
        assert!(
            !eval(
                &ne,
                &json!({"retryInterval": "1m", "name": "RemediateOnFailure"})
            )
            .unwrap()
        );
        assert!(eval(&ne, &json!({"retryInterval": "1m", "name": "x"})).unwrap());
        assert!(eval(&parse("self.a == \"b\"").unwrap(), &json!({"a": "b"})).unwrap());

        // flux-operator's FluxInstance: spec.cluster.
        let identity = parse(
            "(has(self.objectLevelWorkloadIdentity) && self.objectLevelWorkloadIdentity) || !has(self.multitenantWorkloadIdentity) || !self.multitenantWorkloadIdentity",
        )
        .unwrap();
        assert!(eval(&identity, &json!({"multitenant": false})).unwrap());
        assert!(eval(&identity, &json!({"multitenantWorkloadIdentity": false})).unwrap());
        assert!(!eval(&identity, &json!({"multitenantWorkloadIdentity": true})).unwrap());
        assert!(
            eval(
                &identity,
                &json!({"multitenantWorkloadIdentity": true, "objectLevelWorkloadIdentity": true})
            )
            .unwrap()
        );
        assert!(eval(&parse("self.a").unwrap(), &json!({"a": "yes"})).is_err());
        assert!(is_transition("self == oldSelf") && !is_transition("self.a == 'b'"));
        assert!(eval(&parse("self.a == 'b'").unwrap(), &json!({})).is_err());
    }

    #[test]
    fn anything_else_does_not_parse() {
        for rule in [
            "self.size() > 1",
            "has(self)",
            "self",
            "self.a == 1",
            "self.a in ['x']",
            "has(self.a",
            "'x'",
            "self.a == 'x' extra",
        ] {
            assert!(parse(rule).is_err(), "{rule}");
        }
    }
}
