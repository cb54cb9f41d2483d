//! `cellgen key add|rename|remove`: a key changes on both sides of the bridge in one change
//! (cellgen.yaml's contract, the cells' cell-metadata.tf, the manifests reading `${key}`), and
//! the contract's number moves once (see the module doc of `crate::model::contract`).

use camino::{Utf8Path, Utf8PathBuf};

use crate::error::CellgenError;
use crate::model::catalog::{COMPONENTS_DIR, Catalog, HCL_KEYWORDS, Origin, SPEC_FILE};
use crate::model::cell::CellName;
use crate::model::config::{CONFIG_FILE, Config, KeySpec, SCHEMA_KEY, line_of};
use crate::model::contract::{
    change_number, edit_contract, refs, renumber_cell, undoes_last_change,
};
use crate::model::repo::cell_terraform_dir;
use crate::ops::components::{METADATA_FILE, all_cells, planned_config};
use crate::ports::edit::hcl::{self, syntax};
use crate::ports::edit::yaml::{self, Field};
use crate::ports::templates::Templates;
use crate::writer::plan::Plan;

/// What a key command did, for the command to report.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct KeyOutcome {
    /// The contract's number before and after, when it moved.
    pub schema: Option<(u32, u32)>,
    /// Cells whose cell-metadata.tf changed.
    pub cells: Vec<String>,
    /// Manifests whose `${key}` changed (rename).
    pub manifests: Vec<Utf8PathBuf>,
    /// Things the user should know that did not stop the command.
    pub warnings: Vec<String>,
    /// Why nothing was to be done (e.g. the key is gone already), with a did-you-mean.
    pub nothing: Option<String>,
}

/// A key `key add` brings into the contract.
#[derive(Debug, Clone)]
pub struct NewKey {
    pub name: String,
    pub terraform: String,
    pub example: String,
    pub description: String,
    /// Cells that write it (with `environments`); neither: every cell.
    pub cells: Vec<String>,
    pub environments: Vec<String>,
}

fn invalid(path: impl Into<Utf8PathBuf>, e: impl std::fmt::Display) -> CellgenError {
    CellgenError::InvalidFile {
        path: path.into(),
        message: e.to_string(),
    }
}

fn edit(
    plan: &mut Plan,
    path: &Utf8Path,
    f: impl FnOnce(&str) -> Result<String, CellgenError>,
) -> Result<bool, CellgenError> {
    let Some(text) = plan.read(path)? else {
        return Ok(false);
    };
    let edited = f(&text)?;
    if edited == text {
        return Ok(false);
    }
    plan.write(path.to_path_buf(), edited)?;
    Ok(true)
}

fn unknown_key(config: &Config, name: &str) -> CellgenError {
    CellgenError::UnknownKey {
        name: name.to_string(),
        hint: crate::suggest::hint(name, config.keys.keys().map(String::as_str)),
        known: config.keys.keys().cloned().collect(),
    }
}

/// A name a key may take: a Flux variable name, not reserved, not in the contract, not a key a
/// component of the catalog brings (adding that component later would write it twice).
fn check_new_name(
    (config, text): (&Config, &str),
    catalog: &Catalog,
    name: &str,
    flag: &str,
) -> Result<(), CellgenError> {
    let refuse = |reason: String| CellgenError::InvalidFlag {
        flag: flag.into(),
        reason,
    };
    if !crate::model::keys::is_valid_key_name(name) {
        return Err(refuse(format!(
            "`{name}` is not a Flux variable name (letters, digits and underscores, not starting with a digit; e.g. `{}`)",
            name.replace(['-', '.'], "_")
        )));
    }
    if name == SCHEMA_KEY || HCL_KEYWORDS.contains(&name) {
        return Err(refuse(format!(
            "`{name}` is reserved (cellgen's schema number, or an HCL keyword)"
        )));
    }
    if config.keys.contains_key(name) {
        return Err(refuse(format!(
            "the contract has a key `{name}` already ({CONFIG_FILE}:{})",
            line_of(text, &format!("{name}:")).unwrap_or(1)
        )));
    }
    if let Some(c) = catalog
        .components
        .values()
        .find(|c| c.spec.keys.contains_key(name))
    {
        return Err(refuse(format!(
            "`{name}` is a key of component `{}` ({}), which brings it into the contract when a cell runs it",
            c.name,
            spec_path(&c.name)
        )));
    }
    Ok(())
}

/// `schema` is cellgen's: no key command removes or renames it; a seed key is never removed.
fn refuse_reserved(
    templates: &Templates,
    name: &str,
    flag: &str,
    removing: bool,
) -> Result<(), CellgenError> {
    match crate::model::scaffold::reserved_key(templates, name, removing)? {
        Some(why) => Err(CellgenError::InvalidFlag {
            flag: flag.into(),
            reason: format!("{why}. Nothing was changed"),
        }),
        None => Ok(()),
    }
}

fn spec_path(component: &str) -> Utf8PathBuf {
    Utf8Path::new(COMPONENTS_DIR)
        .join(component)
        .join(SPEC_FILE)
}

/// The repository's cells with their names parsed (environment known).
fn cells(plan: &Plan, config: &Config) -> Result<Vec<CellName>, CellgenError> {
    all_cells(plan, "")?
        .iter()
        .map(|c| CellName::parse(c, &config.environments))
        .collect()
}

fn metadata(cell: &str) -> Utf8PathBuf {
    cell_terraform_dir(cell).join(METADATA_FILE)
}

/// Adds a key to the contract and to the cells it selects (all without `cells`/`environments`).
/// A cell that already writes the key with the same expression is left as it is; a second run
/// changes nothing.
pub fn add(plan: &mut Plan, catalog: &Catalog, key: &NewKey) -> Result<KeyOutcome, CellgenError> {
    let (config, text) = planned_config(plan)?;
    let mut outcome = KeyOutcome::default();
    syntax::check_expression(&key.terraform).map_err(|why| CellgenError::InvalidFlag {
        flag: "--terraform".into(),
        reason: format!(
            "`{}` {why}: write one Terraform expression on one line, e.g. `aws_sqs_queue.jobs.url` or `module.x.y` (no heredoc). Nothing was changed",
            key.terraform.escape_debug()
        ),
    })?;
    for (flag, value) in [
        ("--description", &key.description),
        ("--example", &key.example),
    ] {
        syntax::check_one_line(value).map_err(|why| CellgenError::InvalidFlag {
            flag: flag.into(),
            reason: format!(
                "`{}` {why}: give it on one line (it is written into {CONFIG_FILE} as one line). Nothing was changed",
                value.escape_debug()
            ),
        })?;
    }
    config.check_env_flags(&key.environments)?;
    let all = cells(plan, &config)?;
    for cell in &key.cells {
        if !all.iter().any(|c| &c.name == cell) {
            let names: Vec<String> = all.iter().map(|c| c.name.clone()).collect();
            return Err(CellgenError::UnknownCell {
                name: cell.clone(),
                hint: crate::suggest::hint(cell, names.iter().map(String::as_str)),
                cells: names,
            });
        }
    }
    let mut cells_sorted = key.cells.clone();
    cells_sorted.sort();
    cells_sorted.dedup();
    let mut envs = key.environments.clone();
    envs.dedup();
    let wanted = KeySpec {
        description: key.description.clone(),
        example: key.example.clone(),
        terraform: Some(key.terraform.clone()),
        component: None,
        since: None,
        renamed_from: None,
        cells: cells_sorted.clone(),
        environments: envs.clone(),
    };
    match config.keys.get(&key.name) {
        Some(existing) => {
            let line = line_of(&text, &format!("{}:", key.name)).unwrap_or(1);
            let same_definition = existing.component.is_none()
                && existing.description == wanted.description
                && existing.example == wanted.example
                && existing.terraform == wanted.terraform;
            if !same_definition {
                return Err(CellgenError::InvalidFlag {
                    flag: "NAME".into(),
                    reason: format!(
                        "the contract has a key `{}` already ({CONFIG_FILE}:{line}), with other settings: change it there, or `cellgen key remove`/`key rename` it first",
                        key.name
                    ),
                });
            }
            widen(plan, &config, existing, &wanted, &key.name, line)?;
        }
        None => {
            check_new_name((&config, &text), catalog, &key.name, "NAME")?;
            let number = change_number(plan, &config, false)?;
            let mut fields = vec![
                ("description", Field::Str(key.description.clone())),
                ("example", Field::Str(key.example.clone())),
                ("terraform", Field::Str(key.terraform.clone())),
            ];
            if !cells_sorted.is_empty() {
                fields.push(("cells", Field::List(cells_sorted.clone())));
            }
            if !envs.is_empty() {
                fields.push(("environments", Field::List(envs.clone())));
            }
            fields.push(("since", Field::Int(number)));
            edit_contract(plan, number, |text| {
                yaml::append_keys(text, &[(key.name.clone(), fields)])
            })?;
            outcome.schema = Some((config.schema, number)).filter(|(a, b)| a != b);
        }
    }
    for cell in all
        .iter()
        .filter(|c| wanted.selects(&c.name, &c.environment))
    {
        let path = metadata(&cell.name);
        let Some(text) = plan.read(&path)? else {
            continue;
        };
        let meta = hcl::read(&text).map_err(|e| invalid(&path, e))?;
        if let Some(entry) = meta.get(&key.name) {
            if entry.value != key.terraform {
                return Err(invalid(
                    &path,
                    format!(
                        "line {}: the cell writes `{} = {}` already; cellgen will not replace it with `{}`: remove the line, or pass --terraform '{}'",
                        entry.line, key.name, entry.value, key.terraform, entry.value
                    ),
                ));
            }
        } else {
            let missing =
                crate::model::stack::undeclared_references(plan, &cell.name, &key.terraform)?;
            if !missing.is_empty() {
                return Err(CellgenError::InvalidFlag {
                    flag: "--terraform".into(),
                    reason: format!(
                        "`{}` refers to what cell {} does not have: {} Declare it in a .tf file of that stack first (or add the component that does), or give an expression over what the stack declares. Nothing was changed",
                        key.terraform,
                        cell.name,
                        missing.join(" ")
                    ),
                });
            }
            let edited = hcl::add(&text, &[(key.name.clone(), key.terraform.clone())], &[])
                .map_err(|e| invalid(&path, e))?;
            plan.write(path.clone(), edited)?;
        }
        renumber_cell(plan, &cell.name)?;
        if plan.changed().any(|(p, _)| p == path) {
            outcome.cells.push(cell.name.clone());
        }
    }
    Ok(outcome)
}

/// The same key for more cells: its `cells:`/`environments:` gain the new ones (the key set,
/// and so the contract's number, stay). Every cell is a selection `cellgen.yaml` states by
/// having neither, which cellgen does not write over a narrower one: the user deletes them.
fn widen(
    plan: &mut Plan,
    config: &Config,
    existing: &KeySpec,
    wanted: &KeySpec,
    name: &str,
    line: usize,
) -> Result<(), CellgenError> {
    let all = |s: &KeySpec| s.cells.is_empty() && s.environments.is_empty();
    if all(existing) {
        return Ok(());
    }
    if all(wanted) {
        return Err(CellgenError::InvalidFlag {
            flag: "NAME".into(),
            reason: format!(
                "`{name}` is written for some cells only ({CONFIG_FILE}:{line}, its `cells:`/`environments:`); to write it in every cell, delete those lines there and run this again, or name the cells with --cell/--env"
            ),
        });
    }
    let mut cells = existing.cells.clone();
    cells.extend(wanted.cells.iter().cloned());
    cells.sort();
    cells.dedup();
    let mut environments = existing.environments.clone();
    for env in &wanted.environments {
        if !environments.contains(env) {
            environments.push(env.clone());
        }
    }
    let mut fields = Vec::new();
    if cells != existing.cells {
        fields.push(("cells", Field::List(cells)));
    }
    if environments != existing.environments {
        fields.push(("environments", Field::List(environments)));
    }
    if fields.is_empty() {
        return Ok(());
    }
    edit_contract(plan, config.schema, |text| {
        yaml::set_key_fields(text, name, &fields)
    })
}

/// Renames a key on both sides. A second run (the contract has `new`, renamed from `old`)
/// finishes what is left, without a new number.
pub fn rename(
    plan: &mut Plan,
    templates: &Templates,
    catalog: &Catalog,
    old: &str,
    new: &str,
) -> Result<KeyOutcome, CellgenError> {
    refuse_reserved(templates, old, "OLD", false)?;
    let (config, text) = planned_config(plan)?;
    let mut outcome = KeyOutcome::default();
    match config.keys.get(old) {
        None => {
            let done = config
                .keys
                .get(new)
                .is_some_and(|s| s.renamed_from.as_deref() == Some(old));
            if !done {
                return Err(unknown_key(&config, old));
            }
        }
        Some(spec) => {
            check_new_name((&config, &text), catalog, new, "NEW")?;
            if let Some(name) = &spec.component {
                let component = catalog.get(name)?;
                if component.origin == Origin::Embedded {
                    return Err(CellgenError::InvalidFlag {
                        flag: "OLD".into(),
                        reason: format!(
                            "`{old}` is a key of cellgen's component `{name}`, whose manifests and Terraform are cellgen's and name it so; rename keys of the base contract or of your own components"
                        ),
                    });
                }
                let path = spec_path(name);
                edit(plan, &path, |text| {
                    yaml::rename_key(text, old, new).map_err(|e| invalid(&path, e))
                })?;
            }
            let number = change_number(plan, &config, false)?;
            edit_contract(plan, number, |text| {
                let text = yaml::rename_key(text, old, new)?;
                yaml::set_key_fields(
                    &text,
                    new,
                    &[
                        ("since", Field::Int(number)),
                        ("renamed_from", Field::Str(old.to_string())),
                    ],
                )
            })?;
            outcome.schema = Some((config.schema, number)).filter(|(a, b)| a != b);
        }
    }
    let (config, _) = planned_config(plan)?;
    for cell in all_cells(plan, "")? {
        let path = metadata(&cell);
        let Some(text) = plan.read(&path)? else {
            continue;
        };
        let meta = hcl::read(&text).map_err(|e| invalid(&path, e))?;
        if meta.get(old).is_some() {
            let edited = hcl::rename_key(&text, old, new).map_err(|e| invalid(&path, e))?;
            plan.write(path.clone(), edited)?;
        }
        renumber_cell(plan, &cell)?;
        if plan.changed().any(|(p, _)| p == path) {
            outcome.cells.push(cell);
        }
    }
    outcome.manifests = refs::rename_everywhere(plan, &config, old, new)?;
    // The records learn it in the same change: what cellgen generates from now on (a component
    // added later, the next `upgrade`) says `new` where its templates say `old`.
    crate::model::provenance::record_rename(plan, old, new)?;
    Ok(outcome)
}

/// Removes a key nothing uses any more from the contract and from every cell. A key that is
/// not in the contract and that no cell writes is already removed: nothing changes.
pub fn remove(
    plan: &mut Plan,
    templates: &Templates,
    name: &str,
) -> Result<KeyOutcome, CellgenError> {
    refuse_reserved(templates, name, "NAME", true)?;
    let (config, _) = planned_config(plan)?;
    let mut outcome = KeyOutcome::default();
    let in_contract = config.keys.get(name);
    if let Some(spec) = in_contract {
        if let Some(component) = &spec.component {
            return Err(CellgenError::InvalidFlag {
                flag: "NAME".into(),
                reason: format!(
                    "`{name}` is a key of component `{component}`: it leaves the contract with the component (`cellgen remove-component {component}` in each cell running it)"
                ),
            });
        }
        let uses = refs::uses(plan, &config, name)?;
        if !uses.is_empty() {
            return Err(CellgenError::KeyInUse {
                key: name.to_string(),
                uses: uses.iter().map(ToString::to_string).collect(),
            });
        }
    }
    let writers: Vec<String> = all_cells(plan, "")?
        .into_iter()
        .filter(|c| {
            plan.read(metadata(c))
                .ok()
                .flatten()
                .and_then(|t| hcl::read(&t).ok())
                .is_some_and(|m| m.get(name).is_some())
        })
        .collect();
    if in_contract.is_none() && writers.is_empty() {
        outcome.nothing = Some(format!(
            "`{name}` is not in the contract and no cell writes it.{}",
            crate::suggest::hint(name, config.keys.keys().map(String::as_str))
        ));
        return Ok(outcome);
    }
    if in_contract.is_some() {
        let undoes = undoes_last_change(&config, &[name.to_string()]);
        let number = change_number(plan, &config, undoes)?;
        edit_contract(plan, number, |text| {
            yaml::remove_keys(text, &[name.to_string()])
        })?;
        outcome.schema = Some((config.schema, number)).filter(|(a, b)| a != b);
    }
    for cell in writers {
        let path = metadata(&cell);
        edit(plan, &path, |text| {
            hcl::remove(text, &[name.to_string()], &[]).map_err(|e| invalid(&path, e))
        })?;
        renumber_cell(plan, &cell)?;
        outcome.cells.push(cell);
    }
    Ok(outcome)
}
