//! The vendored facts of schemas/terraform (see its README for the format): module releases,
//! provider schemas and backend argument names, loaded once, plus version constraint matching.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::sync::OnceLock;

use serde_json::Value;

/// One input variable of a module directory.
#[derive(Debug, Clone)]
pub struct Variable {
    /// cty's JSON type form: `"string"`, `["list","string"]`, `["object",{..},[optional]]`, `"dynamic"`.
    pub ty: Value,
    pub required: bool,
    /// `nullable = false` in the module: a null argument is an error.
    pub non_nullable: bool,
}

/// The root or a submodule of a module release.
#[derive(Debug, Clone)]
pub struct ModuleDir {
    pub variables: BTreeMap<String, Variable>,
    pub outputs: BTreeSet<String>,
    pub required_version: Option<String>,
    /// local name → (source, version constraint)
    pub required_providers: BTreeMap<String, (String, Option<String>)>,
}

#[derive(Debug, Clone)]
pub struct ModuleRelease {
    /// Registry address, e.g. `terraform-aws-modules/eks/aws`.
    pub source: String,
    pub version: String,
    pub file: String,
    /// `""` for the root, `modules/karpenter` for a submodule.
    pub dirs: BTreeMap<String, ModuleDir>,
}

#[derive(Debug, Clone)]
pub struct Provider {
    /// e.g. `hashicorp/helm`
    pub source: String,
    pub version: String,
    pub file: String,
    /// The provider configuration block's schema.
    pub config: Value,
    pub resources: BTreeMap<String, Value>,
    pub data_sources: BTreeMap<String, Value>,
    /// Every type the provider has, extracted or not.
    pub resource_types: BTreeSet<String>,
    pub data_source_types: BTreeSet<String>,
}

#[derive(Debug, Clone)]
pub struct Backend {
    pub name: String,
    pub terraform_version: String,
    pub arguments: BTreeSet<String>,
}

#[derive(Debug, Clone)]
pub struct Facts {
    pub modules: Vec<ModuleRelease>,
    /// By source address (`hashicorp/aws`).
    pub providers: BTreeMap<String, Provider>,
    pub backends: BTreeMap<String, Backend>,
}

impl Facts {
    /// The module release and directory a `source` argument names
    /// (`terraform-aws-modules/eks/aws//modules/karpenter`).
    pub fn module(&self, source: &str) -> Option<(&ModuleRelease, &str, &ModuleDir)> {
        let (address, dir) = source.split_once("//").unwrap_or((source, ""));
        let release = self.modules.iter().find(|m| m.source == address)?;
        let (dir, facts) = release.dirs.get_key_value(dir.trim_end_matches('/'))?;
        Some((release, dir.as_str(), facts))
    }
}

/// The facts in `schemas/terraform`, read once per test binary.
pub fn facts() -> &'static Facts {
    static FACTS: OnceLock<Facts> = OnceLock::new();
    FACTS.get_or_init(|| load(&super::super::terraform_schema_dir()))
}

fn read_json(path: &Path) -> Value {
    let text =
        fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()))
}

fn json_files(dir: &Path) -> Vec<(String, Value)> {
    let mut paths: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                read_json(&p),
            )
        })
        .collect()
}

fn str_of<'a>(v: &'a Value, key: &str, file: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{file}: `{key}` is not a string"))
}

pub fn load(dir: &Path) -> Facts {
    let mut modules = Vec::new();
    for (file, json) in json_files(&dir.join("modules")) {
        let mut dirs = BTreeMap::new();
        for (name, d) in json["dirs"].as_object().expect("module file without dirs") {
            let variables = d["variables"]
                .as_object()
                .unwrap_or_else(|| panic!("{file}: {name}: no variables"))
                .iter()
                .map(|(n, v)| {
                    (
                        n.clone(),
                        Variable {
                            ty: v["type"].clone(),
                            required: v["required"] == true,
                            non_nullable: v["nullable"] == false,
                        },
                    )
                })
                .collect();
            let outputs = d["outputs"]
                .as_array()
                .unwrap_or_else(|| panic!("{file}: {name}: no outputs"))
                .iter()
                .map(|o| o.as_str().expect("output name").to_string())
                .collect();
            let required_providers = d["required_providers"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .map(|(n, p)| {
                            (
                                n.clone(),
                                (
                                    p["source"].as_str().unwrap_or_default().to_string(),
                                    p["version"].as_str().map(String::from),
                                ),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            dirs.insert(
                name.clone(),
                ModuleDir {
                    variables,
                    outputs,
                    required_version: d["required_version"].as_str().map(String::from),
                    required_providers,
                },
            );
        }
        modules.push(ModuleRelease {
            source: str_of(&json, "source", &file).to_string(),
            version: str_of(&json, "version", &file).to_string(),
            file,
            dirs,
        });
    }
    let mut providers = BTreeMap::new();
    for (file, json) in json_files(&dir.join("providers")) {
        let names = |key: &str| -> BTreeSet<String> {
            json[key]
                .as_array()
                .unwrap_or_else(|| panic!("{file}: no {key}"))
                .iter()
                .map(|t| t.as_str().expect("type name").to_string())
                .collect()
        };
        let schemas = |key: &str| -> BTreeMap<String, Value> {
            json[key]
                .as_object()
                .unwrap_or_else(|| panic!("{file}: no {key}"))
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        let source = str_of(&json, "source", &file).to_string();
        providers.insert(
            source.clone(),
            Provider {
                source,
                version: str_of(&json, "version", &file).to_string(),
                config: json["provider"].clone(),
                resources: schemas("resource_schemas"),
                data_sources: schemas("data_source_schemas"),
                resource_types: names("resource_types"),
                data_source_types: names("data_source_types"),
                file,
            },
        );
    }
    let mut backends = BTreeMap::new();
    for (file, json) in json_files(&dir.join("backends")) {
        let name = str_of(&json, "backend", &file).to_string();
        backends.insert(
            name.clone(),
            Backend {
                name,
                terraform_version: str_of(&json, "terraform_version", &file).to_string(),
                arguments: json["attributes"]
                    .as_object()
                    .unwrap_or_else(|| panic!("{file}: no attributes"))
                    .keys()
                    .cloned()
                    .collect(),
            },
        );
    }
    assert!(
        !modules.is_empty() && !providers.is_empty() && !backends.is_empty(),
        "no Terraform facts in {}",
        dir.display()
    );
    Facts {
        modules,
        providers,
        backends,
    }
}

// ---------------------------------------------------------------------------------------------
// Version constraints (Terraform's syntax: `~> 6.0`, `>= 1.5.7, < 2.0`, `= 1.2.3`, `1.2.3`)
// ---------------------------------------------------------------------------------------------

fn parse_version(s: &str) -> Option<Vec<u64>> {
    let core = s.trim().trim_start_matches('v');
    let core = core.split(['-', '+']).next()?;
    core.split('.').map(|p| p.parse().ok()).collect()
}

fn cmp(a: &[u64], b: &[u64]) -> std::cmp::Ordering {
    let n = a.len().max(b.len());
    let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
    (0..n)
        .map(|i| at(a, i).cmp(&at(b, i)))
        .find(|o| o.is_ne())
        .unwrap_or(std::cmp::Ordering::Equal)
}

/// Whether `version` satisfies every comma-separated part of `constraint`; an unparsable
/// constraint is an error (the checker must not pass what it cannot read).
pub fn admits(constraint: &str, version: &str) -> Result<bool, String> {
    use std::cmp::Ordering::*;
    let v = parse_version(version).ok_or_else(|| format!("`{version}` is not a version"))?;
    for part in constraint.split(',') {
        let part = part.trim();
        let (op, rest) = ["~>", ">=", "<=", "!=", ">", "<", "="]
            .iter()
            .find_map(|op| part.strip_prefix(op).map(|r| (*op, r)))
            .unwrap_or(("=", part));
        let c = parse_version(rest)
            .ok_or_else(|| format!("`{part}` in `{constraint}` is not a version constraint"))?;
        let ok = match op {
            "=" => cmp(&v, &c) == Equal,
            "!=" => cmp(&v, &c) != Equal,
            ">" => cmp(&v, &c) == Greater,
            ">=" => cmp(&v, &c) != Less,
            "<" => cmp(&v, &c) == Less,
            "<=" => cmp(&v, &c) != Greater,
            // `~> 1.2` allows >= 1.2, < 2.0; `~> 1.2.3` allows >= 1.2.3, < 1.3.0; `~> 1`
            // (read as provider constraints are) >= 1, < 2.
            _ => {
                let mut upper = c[..c.len().saturating_sub(1).max(1)].to_vec();
                *upper.last_mut().unwrap() += 1;
                cmp(&v, &c) != Less && cmp(&v, &upper) == Less
            }
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The lowest version a constraint admits, when it has a lower bound (`>=`, `~>`, `=`).
pub fn lower_bound(constraint: &str) -> Option<String> {
    constraint.split(',').find_map(|part| {
        let part = part.trim();
        ["~>", ">=", "="]
            .iter()
            .find_map(|op| part.strip_prefix(op))
            .or_else(|| {
                part.starts_with(|c: char| c.is_ascii_digit())
                    .then_some(part)
            })
            .map(|v| v.trim().to_string())
    })
}
