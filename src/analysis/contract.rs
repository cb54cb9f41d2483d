//! The key contract, per cell: what `cell-metadata.tf` writes against what `cellgen.yaml`
//! promises, and the sample ConfigMap `check` renders with.

use camino::{Utf8Path, Utf8PathBuf};
use std::collections::{BTreeMap, BTreeSet};
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};

use super::findings::Finding;
use super::secrets;
use crate::model::catalog::Catalog;
use crate::model::config::{CONFIG_FILE, Config, SCHEMA_KEY, line_of};
use crate::model::keys::is_valid_key_name;
use crate::model::names::METADATA_FILE;
use crate::model::repo::cell_terraform_dir;
use crate::ports::edit::hcl;
use crate::root::filestore::FileStore;
use crate::root::memos::Memos;

/// The cell-metadata ConfigMap as `check` assumes it: literals as written, expressions replaced by
/// the contract's example.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    pub data: BTreeMap<String, String>,
}

pub fn metadata_path(cell: &str) -> Utf8PathBuf {
    cell_terraform_dir(cell).join(METADATA_FILE)
}

/// What the contract says `cell`, running `components`, must write (key, and why: "every cell must write it",
/// "this cell's name or environment selects it", "a key of component c"), the schema key aside: the keys that select it
/// (every cell, or its name or environment), and the keys of its components.
pub fn expected_keys(
    config: &Config,
    catalog: &Catalog,
    cell: &str,
    components: &BTreeSet<String>,
) -> BTreeMap<String, String> {
    let environment = cell.rsplit_once('-').map_or("", |(_, env)| env);
    let mut expected = BTreeMap::new();
    for (key, spec) in &config.keys {
        match &spec.component {
            None if spec.selects(cell, environment) => {
                let why = if spec.cells.is_empty() && spec.environments.is_empty() {
                    "every cell must write it".to_string()
                } else {
                    "this cell's name or environment selects it".to_string()
                };
                expected.insert(key.clone(), why);
            }
            None => {}
            Some(c) if components.contains(c) => {
                expected.insert(key.clone(), format!("a key of component {c}"));
            }
            Some(_) => {}
        }
    }
    for name in components {
        if let Some(component) = catalog.components.get(name) {
            for key in component.spec.keys.keys() {
                expected
                    .entry(key.clone())
                    .or_insert_with(|| format!("a key of component {name}"));
            }
        }
    }
    expected
}

/// Checks one cell's ConfigMap against the contract and returns the sample data to render with
/// (the files read through `files`, the command's store).
pub fn check_cell(
    files: &FileStore,
    config: &Config,
    catalog: &Catalog,
    cell: &str,
    components: &BTreeSet<String>,
    overrides: &BTreeMap<String, String>,
    findings: &mut Vec<Finding>,
) -> Sample {
    let read = |rel: &Utf8Path| files.read_to_string(rel).ok();
    // Secret values, traced through every .tf file of the stack.
    let trace = || secrets::trace_all(files, &cell_terraform_dir(cell));
    check_cell_from(
        files.memos(),
        &read,
        &trace,
        config,
        catalog,
        cell,
        components,
        overrides,
        findings,
    )
}

/// `check_cell` on files read by `read` (repository-relative paths; the working tree or a
/// commit's tree), with `trace` giving the stack's secret-derived values; parses remembered in
/// `memos` (the command's).
#[allow(clippy::too_many_arguments)]
pub fn check_cell_from(
    memos: &Memos,
    read: &dyn Fn(&Utf8Path) -> Option<String>,
    trace: &dyn Fn() -> secrets::Traced,
    config: &Config,
    catalog: &Catalog,
    cell: &str,
    components: &BTreeSet<String>,
    overrides: &BTreeMap<String, String>,
    findings: &mut Vec<Finding>,
) -> Sample {
    let path = metadata_path(cell);
    let mut report = |f: Finding| findings.push(f.in_cell(cell));
    let text = match read(&path) {
        Some(text) => text,
        None => {
            report(Finding::error(
                "missing-metadata",
                &path,
                None,
                "the cell has no cell-metadata.tf, so Flux has nothing to substitute from: regenerate it with `cellgen new <cell> --force`",
            ));
            return Sample {
                data: overrides.clone(),
            };
        }
    };
    let meta = match read_metadata(memos, &text) {
        Ok(meta) => meta,
        Err(e) => {
            report(Finding::error(
                "invalid-metadata",
                &path,
                Some(e.line),
                format!("cannot read the cell-metadata ConfigMap: {}", e.message),
            ));
            return Sample {
                data: overrides.clone(),
            };
        }
    };
    let tfvars = read_tfvars(
        memos,
        read(&cell_terraform_dir(cell).join(crate::model::repo::TFVARS_FILE)),
    );
    // The node image the cell's plan reads (cluster.tf, issue 19): without a pin it stops there.
    if let (Some(node_groups), Some(version)) =
        (&config.node_groups, tfvars.get("kubernetes_version"))
    {
        let environment = tfvars
            .get("environment")
            .map(String::as_str)
            .unwrap_or_else(|| cell.rsplit_once('-').map_or("", |(_, env)| env));
        if node_groups.pinned(environment, version).is_none() {
            let config_text = read(Utf8Path::new(CONFIG_FILE)).unwrap_or_default();
            report(Finding::error(
                "unpinned-node-image",
                CONFIG_FILE,
                line_of(&config_text, "ami_release_version:"),
                format!(
                    "cell {cell} runs Kubernetes {version} (its terraform.tfvars), and node_groups.ami_release_version pins no node image for {environment} cells on it: its `terraform plan` stops. Add `\"{version}\": <release>` under `{environment}:` ({}), or run `cellgen new {cell} --force`, which adds the release cellgen knows",
                    crate::model::platform::ami_release_version(version)
                        .map(|r| format!("e.g. {r}"))
                        .unwrap_or_else(|| "a release version from https://github.com/awslabs/amazon-eks-ami/releases".into())
                ),
            ));
        }
    }
    let traced = trace();
    let data_line = text
        .lines()
        .position(|l| l.trim_start().starts_with("data"))
        .map(|i| i + 1);

    let expected = expected_keys(config, catalog, cell, components);
    for name in components {
        if let Some(component) = catalog.components.get(name) {
            for key in component.spec.keys.keys() {
                if !config.keys.contains_key(key) {
                    report(Finding::error(
                        "uncontracted-key",
                        CONFIG_FILE,
                        line_of(
                            &read(Utf8Path::new(CONFIG_FILE)).unwrap_or_default(),
                            "keys:",
                        ),
                        format!(
                            "component {name} needs key `{key}`, which cellgen.yaml's contract lacks: add it under keys (description, example) and bump schema"
                        ),
                    ));
                }
            }
        }
    }

    let mut data = BTreeMap::new();
    // The cell's number is the newest `since` among the contract keys it writes
    // (crate::model::contract), never past the contract's.
    let number =
        crate::model::contract::cell_number(config, meta.entries.iter().map(|e| e.key.as_str()));
    let newest = meta
        .entries
        .iter()
        .filter_map(|e| config.keys.get(&e.key).map(|s| (e.key.as_str(), s.since())))
        .max_by_key(|(_, since)| *since)
        .map(|(key, since)| {
            format!("its newest key, `{key}`, has `since: {since}` in cellgen.yaml")
        })
        .unwrap_or_else(|| "it writes no key of the contract".into());
    match meta.get(SCHEMA_KEY) {
        None => report(Finding::error(
            "schema-mismatch",
            &path,
            data_line,
            format!(
                "data has no `schema` key; this cell's keys give number {number} ({newest}): add `schema = \"{number}\"`"
            ),
        )),
        Some(entry) => match entry.literal.as_deref().map(str::parse::<u32>) {
            Some(Ok(n)) if n == number => {}
            Some(Ok(n)) if n > config.schema => report(Finding::error(
                "schema-mismatch",
                &path,
                Some(entry.line),
                format!(
                    "schema is {n} here, past cellgen.yaml's {}: a cell's number is the newest `since` among its keys ({newest}); set `schema = \"{number}\"`",
                    config.schema
                ),
            )),
            Some(Ok(n)) => report(Finding::error(
                "schema-mismatch",
                &path,
                Some(entry.line),
                format!(
                    "schema is {n} here, but this cell's keys give {number} ({newest}; a cell's number is the newest `since` among the contract keys it writes, so it moves only when its own keys change): set `schema = \"{number}\"`"
                ),
            )),
            _ => report(Finding::error(
                "schema-mismatch",
                &path,
                Some(entry.line),
                format!(
                    "schema must be the literal string \"{number}\", not `{}`",
                    entry.value
                ),
            )),
        },
    }
    for entry in &meta.entries {
        if !is_valid_key_name(&entry.key) {
            report(Finding::error(
                "invalid-key-name",
                &path,
                Some(entry.line),
                format!(
                    "`{}` is not a valid Flux variable name, so no manifest could use it (letters, digits, underscores; e.g. `{}`)",
                    entry.key,
                    entry.key.replace(['-', '.'], "_")
                ),
            ));
        }
        if let Some(message) = secrets::secret_message(
            &entry.key,
            entry.literal.as_deref(),
            traced.taints.get(&entry.key),
        ) {
            report(Finding::error(
                "secret-value",
                &path,
                Some(entry.line),
                message,
            ));
        }
        for reference in traced.undeclared.get(&entry.key).into_iter().flatten() {
            report(Finding::error(
                "undeclared-reference",
                &path,
                Some(entry.line),
                format!(
                    "`{}` refers to `{}`, a {} that {} declares nowhere: `terraform plan` refuses the stack (\"{}\"). Declare it in the stack, or write the key with `cellgen key add --terraform`, which checks the reference.{}",
                    entry.key,
                    reference.address,
                    reference.kind,
                    cell_terraform_dir(cell),
                    reference.terraform_says(),
                    reference
                        .nearest
                        .as_deref()
                        .map(|n| format!(" Did you mean `{n}`?"))
                        .unwrap_or_default()
                ),
            ));
        }
        if entry.key != SCHEMA_KEY
            && !config.keys.contains_key(&entry.key)
            && !expected.contains_key(entry.key.as_str())
        {
            report(Finding::error(
                "uncontracted-key",
                &path,
                Some(entry.line),
                format!(
                    "`{}` is written by Terraform but cellgen.yaml's contract lacks it: add it under keys (description, example) and bump schema, or remove it here.{}",
                    entry.key,
                    crate::suggest::hint(&entry.key, config.keys.keys().map(String::as_str))
                ),
            ));
        }
        let value = entry
            .literal
            .clone()
            .or_else(|| {
                // `var.x` is known for this cell: terraform.tfvars sets it.
                let name = entry.value.strip_prefix("var.")?;
                tfvars.get(name).cloned()
            })
            .or_else(|| config.keys.get(&entry.key).map(|k| k.example.clone()))
            .or_else(|| {
                components
                    .iter()
                    .filter_map(|c| catalog.components.get(c))
                    .find_map(|c| c.spec.keys.get(&entry.key).map(|k| k.example.clone()))
            })
            .unwrap_or_else(|| format!("example-{}", entry.key));
        data.insert(entry.key.clone(), value);
    }
    for (key, why) in &expected {
        if meta.get(key).is_none() {
            report(Finding::error(
                "missing-key",
                &path,
                data_line,
                format!(
                    "cellgen.yaml's contract has `{key}` ({why}) but this cell's ConfigMap does not write it: add `{key} = <expression>` to data"
                ),
            ));
        }
    }
    data.extend(overrides.iter().map(|(k, v)| (k.clone(), v.clone())));
    Sample { data }
}

/// The ConfigMap read from a cell-metadata.tf `text`, or the one read from the same text
/// before: cells are generated from one template, so most write one of a few texts (keyed by
/// the whole text; successes only are kept, an error is read again).
fn read_metadata(memos: &Memos, text: &str) -> Result<Arc<hcl::CellMetadata>, hcl::HclEditError> {
    let memo = memos.get::<MetadataMemo>();
    let hash = foldhash::fast::FixedState::default().hash_one(text);
    if let Some((kept, meta)) = lock(&memo.0).get(&hash)
        && kept == text
    {
        return Ok(meta.clone());
    }
    // Parsed through the command's parse cache: the trace reads this file again.
    let meta = Arc::new(hcl::read_parsed(
        text,
        &*crate::model::parsed_hcl::parse_checked(memos, text)?,
    )?);
    lock(&memo.0)
        .entry(hash)
        .or_insert_with(|| (text.to_string(), meta.clone()));
    Ok(meta)
}

/// The ConfigMaps [`read_metadata`] read, by text: the command's (in its `Memos`).
#[derive(Default)]
struct MetadataMemo(Mutex<foldhash::HashMap<u64, (String, Arc<hcl::CellMetadata>)>>);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Whole entries are inserted, never half-written ones.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// String values of a `terraform.tfvars` (other values and unreadable files give nothing).
fn read_tfvars(memos: &Memos, text: Option<String>) -> BTreeMap<String, String> {
    let Some(attributes) =
        text.and_then(|t| crate::model::parsed_hcl::tfvars_attributes(memos, &t))
    else {
        return BTreeMap::new();
    };
    attributes
        .into_iter()
        .filter_map(|a| Some((a.key, a.string?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::read_metadata;
    use crate::ports::edit::hcl;

    /// The remembered reading is the reading: texts differing in a cell's name only, in a
    /// key's value only (same length), and texts that do not parse or hold no ConfigMap.
    #[test]
    fn remembered_metadata_is_read_as_each_text() {
        let map = |name: &str, value: &str| {
            format!(
                "# cell {name}\nresource \"kubernetes_config_map_v1\" \"cell_metadata\" {{\n  metadata {{\n    name      = \"cell-metadata\"\n    namespace = \"flux-system\"\n  }}\n  data = {{\n    schema    = \"1\"\n    cell_name = {value}\n  }}\n}}\n"
            )
        };
        let texts = [
            map("eu-west-1-prod", "var.name"),
            map("eu-west-2-prod", "var.name"),
            map("eu-west-2-prod", "var.nam2"),
            map("eu-west-2-prod", "\"abcdefgh\""),
            map("eu-west-2-prod", "var.name").replace("data = {", "data = {{"),
            "locals {}\n".to_string(),
        ];
        let memos = crate::root::memos::Memos::default();
        for _ in 0..3 {
            for text in &texts {
                let remembered = read_metadata(&memos, text).map(|m| format!("{m:?}"));
                let read = hcl::read(text).map(|m| format!("{m:?}"));
                assert_eq!(remembered, read, "{text}");
            }
        }
        assert!(read_metadata(&memos, &texts[4]).is_err());
        assert!(read_metadata(&memos, &texts[5]).is_err());
    }
}
