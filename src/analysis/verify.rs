//! `cellgen verify`: the cell-metadata a cluster really has, against the contract. The input is
//! the ConfigMap as `kubectl get configmap cell-metadata -n flux-system -o yaml` prints it, or
//! Terraform's `terraform show -json` (of the state, or of a saved plan), where the ConfigMap is
//! `kubernetes_config_map_v1.cell_metadata` in the root module or a child module. Findings are
//! `check`'s: keys missing or extra, the schema number, values that are no identifier, and every
//! layer of the cell rendered in strict mode with the real values.

use camino::{Utf8Path, Utf8PathBuf};
use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;

use crate::analysis::findings::{Finding, Report};
use crate::analysis::layer_check::{self, Context};
use crate::analysis::locate::SourceFiles;
use crate::analysis::render::{BuildCache, load_cell, render_layers};
use crate::analysis::{contract, secrets};
use crate::error::CellgenError;
use crate::model::catalog::Catalog;
use crate::model::config::{Config, SCHEMA_KEY};

/// Where the real data came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    ConfigMap,
    /// `terraform show -json`: `values` (state) or `planned_values` (plan).
    Terraform,
}

/// The real cell-metadata data, and where each key is written in the input file.
#[derive(Debug, Clone)]
pub struct RealMetadata {
    pub input: Input,
    pub file: Utf8PathBuf,
    pub data: BTreeMap<String, String>,
    /// Line of each key in the file (ConfigMap YAML only).
    pub lines: BTreeMap<String, usize>,
}

impl RealMetadata {
    pub fn cell_name(&self) -> Option<&str> {
        self.data.get("cell_name").map(String::as_str)
    }

    fn line(&self, key: &str) -> Option<usize> {
        self.lines.get(key).copied()
    }
}

const ADDRESS: &str = "kubernetes_config_map_v1.cell_metadata";

fn invalid(file: &Utf8Path, message: impl Into<String>) -> CellgenError {
    CellgenError::InvalidFile {
        path: file.to_path_buf(),
        message: message.into(),
    }
}

/// Reads `text` (from `file`): a ConfigMap, or `terraform show -json` output.
pub fn read(text: &str, file: &Utf8Path) -> Result<RealMetadata, CellgenError> {
    crate::ports::yaml::guard(text).map_err(CellgenError::yaml(file))?;
    let value: Value = crate::ports::yaml::from_str(text).map_err(|e| {
        invalid(
            file,
            format!(
                "{}neither YAML nor JSON: {e}",
                e.line().map(|l| format!("line {l}: ")).unwrap_or_default()
            ),
        )
    })?;
    if value.get("kind").and_then(Value::as_str) == Some("ConfigMap") {
        let name = value.pointer("/metadata/name").and_then(Value::as_str);
        if name != Some(crate::model::names::METADATA_CONFIGMAP) {
            return Err(invalid(
                file,
                format!(
                    "this is ConfigMap `{}`, not `{}`: give the output of `kubectl get configmap {} -n flux-system -o yaml`",
                    name.unwrap_or(""),
                    crate::model::names::METADATA_CONFIGMAP,
                    crate::model::names::METADATA_CONFIGMAP
                ),
            ));
        }
        let data = strings(value.get("data"), file)?;
        let at = data_key_lines(text);
        let lines = data
            .keys()
            .filter_map(|k| at.get(k.as_str()).map(|l| (k.clone(), *l)))
            .collect();
        return Ok(RealMetadata {
            input: Input::ConfigMap,
            file: file.to_path_buf(),
            data,
            lines,
        });
    }
    let root = value
        .pointer("/values/root_module")
        .or_else(|| value.pointer("/planned_values/root_module"))
        .ok_or_else(|| {
            invalid(
                file,
                "neither a ConfigMap (kind: ConfigMap) nor `terraform show -json` output (values.root_module or planned_values.root_module)",
            )
        })?;
    let mut found = Vec::new();
    find_resources(root, &mut found);
    match found.as_slice() {
        [] => Err(invalid(
            file,
            format!(
                "Terraform's output has no {ADDRESS} in any module: is this the cell's stack (terraform/cells/<cell>), and applied?"
            ),
        )),
        [resource] => {
            let data = resource.pointer("/values/data").ok_or_else(|| {
                invalid(
                    file,
                    format!(
                        "{} has no data (not known until apply?)",
                        str_of(resource, "address")
                    ),
                )
            })?;
            Ok(RealMetadata {
                input: Input::Terraform,
                file: file.to_path_buf(),
                data: strings(Some(data), file)?,
                lines: BTreeMap::new(),
            })
        }
        many => Err(invalid(
            file,
            format!(
                "Terraform's output has {} resources {ADDRESS} ({}): one stack writes one",
                many.len(),
                many.iter()
                    .map(|r| str_of(r, "address"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// The line of each key written directly under the top-level `data:`, as kubectl lays a
/// ConfigMap out, in one pass over the text (a lookup per key was quadratic in the key count).
/// A key written twice keeps its first line.
fn data_key_lines(text: &str) -> HashMap<&str, usize> {
    let mut out = HashMap::new();
    let mut in_data = false;
    let mut indent = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let depth = line.len() - trimmed.len();
        if depth == 0 {
            in_data = trimmed.strip_prefix("data:").is_some_and(|rest| {
                let rest = rest.trim_start();
                rest.is_empty() || rest.starts_with('#')
            });
            indent = None;
            continue;
        }
        if !in_data || *indent.get_or_insert(depth) != depth {
            continue;
        }
        // ConfigMap keys hold no `:` (`[-._a-zA-Z0-9]+`), quoted or not.
        if let Some((key, _)) = trimmed.split_once(':') {
            let key = key.trim_end();
            let key = ['"', '\'']
                .iter()
                .find_map(|q| key.strip_prefix(*q).and_then(|k| k.strip_suffix(*q)))
                .unwrap_or(key);
            out.entry(key).or_insert(i + 1);
        }
    }
    out
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `kubernetes_config_map_v1.cell_metadata` resources of `module` and its child modules.
fn find_resources<'a>(module: &'a Value, out: &mut Vec<&'a Value>) {
    for r in module
        .get("resources")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if str_of(r, "mode") != "data"
            && str_of(r, "type") == "kubernetes_config_map_v1"
            && str_of(r, "name") == "cell_metadata"
        {
            out.push(r);
        }
    }
    for child in module
        .get("child_modules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        find_resources(child, out);
    }
}

/// A string map (a ConfigMap's data holds strings only).
fn strings(
    data: Option<&Value>,
    file: &Utf8Path,
) -> Result<BTreeMap<String, String>, CellgenError> {
    let Some(data) = data else {
        return Ok(BTreeMap::new());
    };
    if data.is_null() {
        return Ok(BTreeMap::new());
    }
    let map = data
        .as_object()
        .ok_or_else(|| invalid(file, "`data` is not a map"))?;
    map.iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k.clone(), s.clone())),
            other => Err(invalid(
                file,
                format!("data.{k} is {other}, not a string: a ConfigMap's data holds strings"),
            )),
        })
        .collect()
}

/// Checks `real` against the contract for `cell`, then renders every layer of the cell with it.
pub fn verify(
    root: &Utf8Path,
    config: &Config,
    catalog: &Catalog,
    cell: &str,
    real: &RealMetadata,
    cache: &mut BuildCache,
) -> Report {
    let mut findings = Vec::new();
    let file = &real.file;
    let loaded = load_cell(root, cell, cache);
    let components: BTreeSet<String> = match &loaded {
        Ok(l) => l.components(),
        Err(_) => BTreeSet::new(),
    };
    let source = match real.input {
        Input::ConfigMap => "the cluster's ConfigMap",
        Input::Terraform => "the ConfigMap in Terraform's output",
    };
    if let Some(name) = real.cell_name()
        && name != cell
    {
        findings.push(Finding::error(
            "cell-mismatch",
            file,
            real.line("cell_name"),
            format!("cell_name is `{name}` in {source}, but it is verified as cell {cell}: is it from the right cluster?"),
        ));
    }
    let expected = contract::expected_keys(config, catalog, cell, &components);
    // The cell's number: the newest `since` among the keys the contract gives it.
    let number = crate::model::contract::cell_number(config, expected.keys().map(String::as_str));
    match real.data.get(SCHEMA_KEY).map(|s| s.parse::<u32>()) {
        Some(Ok(n)) if n == number => {}
        Some(_) => findings.push(Finding::error(
            "schema-mismatch",
            file,
            real.line(SCHEMA_KEY),
            format!(
                "schema is `{}` in {source} but the contract gives cell {cell} number {number} (the newest `since` among its keys in cellgen.yaml): apply the cell's Terraform (terraform/cells/{cell}) so the key set and its number match the manifests",
                real.data[SCHEMA_KEY]
            ),
        )),
        None => findings.push(Finding::error(
            "schema-mismatch",
            file,
            None,
            format!(
                "{source} has no `schema` key; the contract gives cell {cell} number {number}: apply the cell's Terraform"
            ),
        )),
    }
    for (key, why) in &expected {
        if !real.data.contains_key(key) {
            findings.push(Finding::error(
                "missing-key",
                file,
                None,
                format!(
                    "the contract has `{key}` ({why}) but {source} lacks it: every layer using ${{{key}}} fails to reconcile; apply the cell's Terraform (terraform/cells/{cell}/cell-metadata.tf writes it)"
                ),
            ));
        }
    }
    for (key, value) in &real.data {
        if key != SCHEMA_KEY && !expected.contains_key(key) {
            findings.push(Finding::error(
                "uncontracted-key",
                file,
                real.line(key),
                format!(
                    "{source} has `{key}`, which the contract for cell {cell} lacks: add it to cellgen.yaml's keys (and bump schema), or stop writing it.{}",
                    crate::suggest::hint(key, expected.keys().map(String::as_str))
                ),
            ));
        }
        if let Some(reason) = secrets::secret_reason(key, Some(value)) {
            findings.push(Finding::error(
                "secret-value",
                file,
                real.line(key),
                format!(
                    "`{key}` looks like a secret ({reason}); cell-metadata holds identifiers only: deliver secrets through External Secrets or Pod Identity"
                ),
            ));
        } else if value.contains(['\n', '\r']) {
            findings.push(Finding::error(
                "not-identifier",
                file,
                real.line(key),
                format!("`{key}` spans several lines; cell-metadata holds identifiers only"),
            ));
        }
    }
    match loaded {
        Err(e) => findings.push(Finding::error("invalid-cell", e.file, e.line, e.message)),
        Ok(loaded) => {
            let rendered = render_layers(loaded, &real.data, cache);
            let mut sources = SourceFiles::new(root);
            let mut used = BTreeSet::new();
            let mut cx = Context {
                root,
                cache,
                sources: &mut sources,
                used: &mut used,
            };
            for l in &rendered.layers {
                let mut layer_findings = Vec::new();
                layer_check::check_layer(&mut cx, l, &mut layer_findings);
                findings.extend(
                    layer_findings
                        .into_iter()
                        .map(|f| f.in_cell(cell).in_layer(&l.layer.name)),
                );
            }
        }
    }
    let mut report = Report {
        cells: vec![cell.to_string()],
        findings: findings
            .into_iter()
            .map(|f| {
                if f.places.is_empty() {
                    f.in_cell(cell)
                } else {
                    f
                }
            })
            .collect(),
    };
    report.normalise();
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_keys_are_found_under_data_only() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cell-metadata\ndata:\n  # note\n  name: x\n  \"quoted\": y\n  nested:\n    deeper: z\n  vpc_id: v\n";
        let at = data_key_lines(text);
        // `name` of metadata (line 4) is not the data key's line.
        assert_eq!(at.get("name"), Some(&7));
        assert_eq!(at.get("quoted"), Some(&8));
        assert_eq!(at.get("vpc_id"), Some(&11));
        assert_eq!(at.get("deeper"), None);
    }
}
