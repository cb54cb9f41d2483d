//! Flux post-build variable substitution, reproduced offline.
//!
//! * [`envsubst`] is fluxcd/pkg `envsubst.Eval` (ported from its Go source: parse/scan.go,
//!   parse/parse.go, template.go, funcs.go), strict or not.
//! * [`references`] / [`analyze`] list the `${...}` expressions of a text with byte offsets,
//!   tolerating syntax errors, so callers can point at source lines and collect used keys.
//! * [`flux`] applies substitution to one object the way kustomize-controller does
//!   (`SubstituteVariables` in fluxcd/pkg `kustomize/kustomize_varsub.go`), including the
//!   re-serialisation to YAML by sigs.k8s.io/yaml ([`to_flux_yaml`]).
//!
//! Everything here is pure: no I/O, and no panics on any input.

mod eval;
pub mod flux;
mod goyaml;
mod memo;
mod parse;
mod resolve;

pub use flux::{PostBuild, SubstituteOptions, Vars, substitute_object};
pub use goyaml::to_flux_yaml;
pub use memo::Prepared;

/// The regular expression Flux validates variable names with (`varsubRegex`).
pub const VAR_NAME_REGEX: &str = "^[_[:alpha:]][_[:alpha:][:digit:]]*$";

/// Errors of substitution. Messages match Flux's text where Flux has one; Flux wraps them
/// (see [`SubstError::flux_message`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubstError {
    /// Strict mode: the variable is absent (an empty value is present).
    #[error("variable not set (strict mode): {name:?}")]
    VariableNotSet {
        /// Variable name.
        name: String,
        /// Byte offset of the `${` in the evaluated text.
        offset: usize,
    },
    /// The text does not parse; `message` is Flux's (`missing closing brace`, `bad
    /// substitution`, ...).
    #[error("{message}")]
    Syntax {
        /// Flux's error text.
        message: String,
        /// Byte offset of the innermost `${` being parsed.
        offset: usize,
    },
    /// `${v:pos:len}` whose slice is out of range (e.g. a negative length): the Go code this
    /// mirrors panics, taking kustomize-controller's reconciliation down with it.
    #[error(
        "substring out of range in ${{{name}:...}}: kustomize-controller panics on this expression"
    )]
    SubstringOutOfRange {
        /// Variable name.
        name: String,
        /// Byte offset of the `${`.
        offset: usize,
    },
    /// A variable name that does not match [`VAR_NAME_REGEX`].
    #[error("'{name}' var name is invalid, must match '{regex}'", regex = VAR_NAME_REGEX)]
    InvalidVarName {
        /// The offending key.
        name: String,
    },
    /// The substituted text is not valid YAML any more.
    #[error("YAMLToJSON: {message}")]
    Yaml {
        /// Parser message.
        message: String,
    },
}

impl SubstError {
    /// Byte offset into the evaluated text, where there is one.
    pub fn offset(&self) -> Option<usize> {
        match self {
            SubstError::VariableNotSet { offset, .. }
            | SubstError::Syntax { offset, .. }
            | SubstError::SubstringOutOfRange { offset, .. } => Some(*offset),
            _ => None,
        }
    }

    /// The message as kustomize-controller reports it for a post-build failure, e.g.
    /// `envsubst error: variable substitution failed: variable not set (strict mode): "x"`.
    pub fn flux_message(&self) -> String {
        match self {
            SubstError::InvalidVarName { .. } | SubstError::Yaml { .. } => {
                format!("envsubst error: {self}")
            }
            _ => format!("envsubst error: variable substitution failed: {self}"),
        }
    }
}

/// Substitute `${...}` expressions in `input` exactly like Flux's `envsubst.Eval`.
///
/// `lookup` returns a variable's value, `None` when absent. With `strict == false` an absent
/// variable reads as empty (Flux without `StrictPostBuildSubstitutions`); with `strict == true`
/// it is an error unless the operator supplies a default (`-`, `=`, `?`, `+`, with or without
/// `:`). On error nothing is returned: Flux applies nothing either.
pub fn envsubst(
    input: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
    strict: bool,
) -> Result<String, SubstError> {
    Compiled::new(input).eval(lookup, strict)
}

/// A text parsed for [`envsubst`] once, to be evaluated any number of times: the parse does
/// not depend on the variables, so `Compiled::new(t).eval(..)` is `envsubst(t, ..)`.
pub(crate) struct Compiled {
    root: Result<parse::Node, parse::ParseError>,
    len: usize,
}

impl Compiled {
    pub(crate) fn new(input: &str) -> Compiled {
        Compiled {
            root: parse::parse(input).root,
            len: input.len(),
        }
    }

    /// The parse tree, or the syntax error Flux stops at.
    pub(crate) fn root(&self) -> Result<&parse::Node, SubstError> {
        self.root.as_ref().map_err(|e| syntax_error(*e))
    }

    pub(crate) fn eval(
        &self,
        lookup: &dyn Fn(&str) -> Option<String>,
        strict: bool,
    ) -> Result<String, SubstError> {
        let root = self.root()?;
        let mut out = Vec::with_capacity(self.len);
        eval::eval(root, lookup, strict, &mut out)?;
        Ok(lossy(out))
    }
}

/// Byte-wise substrings can split a character; Go would emit the raw bytes.
fn lossy(out: Vec<u8>) -> String {
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn syntax_error(e: parse::ParseError) -> SubstError {
    SubstError::Syntax {
        message: e.kind.message().to_owned(),
        offset: e.offset,
    }
}

/// Whether `name` matches Flux's [`VAR_NAME_REGEX`] (Go POSIX classes are ASCII-only).
pub fn is_valid_var_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b) if b == b'_' || b.is_ascii_alphabetic())
        && bytes.all(|b| b == b'_' || b.is_ascii_alphanumeric())
}

/// One `${...}` expression found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarRef {
    /// The variable name (what a ConfigMap key must be called).
    pub name: String,
    /// Byte offset of the `${`.
    pub offset: usize,
    /// Byte length of the whole expression, up to and including its `}`.
    pub len: usize,
    /// Whether the operator supplies a fallback, so strict mode tolerates absence.
    pub has_default: bool,
    /// The expression's source text, e.g. `${region:-eu-west-1}`.
    pub text: String,
}

/// Every expression and every syntax error of a text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Analysis {
    /// References in source order, nested ones included (inner before outer when they
    /// start at different offsets is not guaranteed; sort by `offset` is applied).
    pub refs: Vec<VarRef>,
    /// Syntax errors, each a [`SubstError::Syntax`]. Flux stops at the first one.
    pub errors: Vec<SubstError>,
}

/// Find every variable reference in `input`, nested ones included. Parse errors do not stop
/// the scan: after an error it resumes just after the failing `${`. Escaped `$${...}` is text,
/// as in Flux.
pub fn references(input: &str) -> Vec<VarRef> {
    analyze(input).refs
}

/// [`references`] plus the syntax errors met on the way.
pub fn analyze(input: &str) -> Analysis {
    let mut analysis = Analysis::default();
    let mut base = 0usize;
    while base <= input.len() {
        let Some(rest) = input.get(base..) else { break };
        let parsed = parse::parse(rest);
        for f in parsed.funcs {
            let (offset, end) = (base + f.start, base + f.end);
            if analysis.refs.iter().any(|r| r.offset == offset) {
                continue;
            }
            analysis.refs.push(VarRef {
                has_default: eval::is_default_op(&f.name),
                name: f.param,
                offset,
                len: end - offset,
                text: input.get(offset..end).unwrap_or_default().to_owned(),
            });
        }
        match parsed.root {
            Ok(_) => break,
            Err(e) => {
                let offset = base + e.offset;
                analysis.errors.push(SubstError::Syntax {
                    message: e.kind.message().to_owned(),
                    offset,
                });
                // Resume after the `${` that failed: "${" is two ASCII bytes.
                let next = offset + 2;
                if next <= base {
                    break;
                }
                base = next;
            }
        }
    }
    analysis.refs.sort_by_key(|r| r.offset);
    analysis
}

#[cfg(test)]
mod tests;
