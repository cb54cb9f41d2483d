//! Per-object substitution as kustomize-controller runs it: fluxcd/pkg
//! `kustomize/kustomize_varsub.go` (`SubstituteVariables`, `LoadVariables`, `varSubstitution`).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::Value;

use super::{SubstError, envsubst, is_valid_var_name, to_flux_yaml};

/// The label/annotation that opts an object out of substitution when set to `disabled`.
pub const SUBSTITUTE_ANNOTATION: &str = "kustomize.toolkit.fluxcd.io/substitute";

/// A Flux Kustomization's `spec.postBuild`, with `substituteFrom` already resolved to the
/// `.data` maps it names (in list order; an absent `optional: true` source is simply left out).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PostBuild {
    /// `spec.postBuild.substitute` (inline; wins over every `substituteFrom` entry).
    pub substitute: BTreeMap<String, String>,
    /// The `.data` of each `substituteFrom` ConfigMap/Secret, in list order (later wins).
    pub substitute_from: Vec<BTreeMap<String, String>>,
    /// `spec.postBuild.substituteStrategy: Always`.
    pub strategy_always: bool,
    /// Whether the controller runs with `StrictPostBuildSubstitutions`.
    pub strict: bool,
}

/// The merged variable map (`LoadVariables` + the inline overrides).
#[derive(Clone, Default)]
pub struct Vars {
    map: BTreeMap<String, String>,
    /// The first name Flux refuses ([`is_valid_var_name`]), found at the first substitution:
    /// a layer's objects all ask the same variables.
    first_invalid: OnceLock<Option<String>>,
}

impl std::fmt::Debug for Vars {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Vars").field(&self.map).finish()
    }
}

impl PartialEq for Vars {
    fn eq(&self, other: &Vars) -> bool {
        self.map == other.map
    }
}

impl Eq for Vars {}

impl Vars {
    pub fn new(map: BTreeMap<String, String>) -> Vars {
        Vars {
            map,
            first_invalid: OnceLock::new(),
        }
    }

    /// The variables, by name.
    pub fn map(&self) -> &BTreeMap<String, String> {
        &self.map
    }

    /// A variable's value, if present.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.map.get(name).map(String::as_str)
    }

    /// The first variable name (in name order) Flux refuses to substitute.
    pub fn first_invalid_name(&self) -> Option<&str> {
        self.first_invalid
            .get_or_init(|| self.map.keys().find(|k| !is_valid_var_name(k)).cloned())
            .as_deref()
    }

    /// Whether no variable at all is defined.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// How to run [`substitute_object`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SubstituteOptions {
    /// `StrictPostBuildSubstitutions`: a missing variable without default is an error.
    pub strict: bool,
    /// `substituteStrategy: Always`: substitute even when no variable is defined.
    pub strategy_always: bool,
}

impl PostBuild {
    /// Merge the variables as Flux does: `substituteFrom` entries in order, later ones win,
    /// inline `substitute` wins over all; every `\n` (only `\n`, not `\r`) is removed from
    /// values. Names are not validated here: Flux validates them when substituting.
    pub fn vars(&self) -> Vars {
        self.clone().into_vars()
    }

    /// [`PostBuild::vars`], taking the maps' strings instead of copying them.
    pub fn into_vars(self) -> Vars {
        let without_newlines = |v: String| {
            if v.contains('\n') {
                v.replace('\n', "")
            } else {
                v
            }
        };
        // The first source taken whole (most layers read one, cell-metadata), later ones over it.
        let mut sources = self.substitute_from.into_iter();
        let mut vars = sources.next().unwrap_or_default();
        for v in vars.values_mut().filter(|v| v.contains('\n')) {
            *v = v.replace('\n', "");
        }
        for data in sources {
            for (k, v) in data {
                vars.insert(k, without_newlines(v));
            }
        }
        for (k, v) in self.substitute {
            vars.insert(k, without_newlines(v));
        }
        Vars::new(vars)
    }

    /// The options this post-build implies.
    pub fn options(&self) -> SubstituteOptions {
        SubstituteOptions {
            strict: self.strict,
            strategy_always: self.strategy_always,
        }
    }
}

/// Whether `obj` carries `kustomize.toolkit.fluxcd.io/substitute: disabled` as a label or an
/// annotation.
pub fn substitution_disabled(obj: &Value) -> bool {
    ["labels", "annotations"].iter().any(|field| {
        obj.pointer(&format!("/metadata/{field}"))
            .and_then(|m| m.get(SUBSTITUTE_ANNOTATION))
            .and_then(Value::as_str)
            == Some("disabled")
    })
}

/// Substitute variables in one object the way kustomize-controller does.
///
/// Steps, in Flux's order:
/// 1. an object with the `disabled` label/annotation is returned unchanged;
/// 2. when the variable map is empty and the strategy is not `Always`, the object is returned
///    unchanged. Flux's condition is `len(vars) > 0`: it is about variables being *defined*,
///    not about any of them being referenced, and with it strict mode never fires;
/// 3. every key must match [`super::VAR_NAME_REGEX`], else [`SubstError::InvalidVarName`]
///    (the first invalid key in sorted order; Go reports a random one);
/// 4. the object is serialised with [`to_flux_yaml`], run through [`envsubst`] (error offsets
///    index into that YAML text), and parsed back as YAML, so types can change: a
///    `"${replicas}"` string becomes an integer once substituted.
pub fn substitute_object(
    obj: &Value,
    vars: &Vars,
    opts: &SubstituteOptions,
) -> Result<Value, SubstError> {
    if substitution_disabled(obj) || (vars.is_empty() && !opts.strategy_always) {
        return Ok(obj.clone());
    }
    if let Some(bad) = vars.first_invalid_name() {
        return Err(SubstError::InvalidVarName {
            name: bad.to_string(),
        });
    }
    let yaml = to_flux_yaml(obj);
    let lookup = |name: &str| vars.get(name).map(str::to_owned);
    let out = envsubst(&yaml, &lookup, opts.strict)?;
    read_back(&out)
}

/// The substituted text as kustomize-controller reads it back: sigs.k8s.io/yaml's
/// `YAMLToJSON` (go-yaml v2, YAML 1.1: `yes` is true, `0775` is 509, `1e3` is 1000, `~` is
/// null; integral floats come back as integers through Go's JSON encoder), the first document
/// only. What that reading does that cellgen does not reproduce is an error naming it.
pub(super) fn read_back(text: &str) -> Result<Value, SubstError> {
    use crate::ports::yaml::{LoadError, yaml_to_json};
    match yaml_to_json(text) {
        Ok(Some(value)) => Ok(value),
        Ok(None) => Ok(Value::Null),
        Err(LoadError::Yaml { line, message }) => Err(SubstError::Yaml {
            message: format!("yaml: line {line}: {message}"),
        }),
        Err(LoadError::Fails(message)) => Err(SubstError::Yaml { message }),
        Err(LoadError::Refused { line, message }) => Err(SubstError::Yaml {
            message: format!("line {line} of the substituted object: {message}"),
        }),
        Err(LoadError::Unsupported(what)) => Err(SubstError::Yaml {
            message: format!(
                "cellgen cannot read the substituted object back as Flux does ({what}); check it with `kubectl` and Flux"
            ),
        }),
    }
}
