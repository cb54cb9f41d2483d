//! Adding and removing a component in a cell: one change on both sides of the bridge. Works on a
//! `Plan`, so `new --components` and `add-component` share every step, and nothing is written
//! until the whole change has been built.

use camino::{Utf8Component as PathPart, Utf8Path, Utf8PathBuf};

use crate::error::CellgenError;
use crate::model::catalog::{COMPONENTS_DIR, Catalog, Component, Origin};
use crate::model::cell::CellName;
use crate::model::cells::{all_cells, cell_components, planned_config};
use crate::model::config::{Config, KeySpec};
use crate::model::contract;
use crate::model::names::METADATA_FILE;
use crate::model::repo::{cell_flux_dir, cell_terraform_dir};
use crate::ports::edit::{hcl, yaml};
use crate::ports::templates::Templates;
use crate::writer::plan::Plan;

pub mod files;

/// What an add or remove did, for the command to report.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Components added or removed, requirements first.
    pub changed: Vec<String>,
    /// Components that were already in the requested state.
    pub unchanged: Vec<String>,
    /// The contract's schema number before and after, when it moved.
    pub schema: Option<(u32, u32)>,
}

/// `spec.components` entry for a component layer, relative to the layer's `spec.path`.
pub fn component_ref(layer_path: &str, component: &str, layer: &str) -> String {
    let depth = Utf8Path::new(layer_path.trim_start_matches("./"))
        .components()
        .filter(|c| matches!(c, PathPart::Normal(_)))
        .count();
    format!(
        "{}{COMPONENTS_DIR}/{component}/{layer}",
        "../".repeat(depth)
    )
}

fn invalid(path: &Utf8Path, e: impl std::fmt::Display) -> CellgenError {
    CellgenError::InvalidFile {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

fn edit(
    plan: &mut Plan,
    path: &Utf8Path,
    f: impl FnOnce(&str) -> Result<String, CellgenError>,
) -> Result<(), CellgenError> {
    let text = plan.read(path)?.ok_or_else(|| CellgenError::InvalidFile {
        path: path.to_path_buf(),
        message: "missing: cellgen needs this file of the cell (regenerate it with `cellgen new <cell> --force`)".into(),
    })?;
    let edited = f(&text)?;
    if edited != text {
        plan.write(path.to_path_buf(), edited)?;
    }
    Ok(())
}

/// Adds `name` (and, with `with_requirements`, what it requires) to `cell`.
pub fn add(
    plan: &mut Plan,
    templates: &Templates,
    catalog: &Catalog,
    cell: &CellName,
    name: &str,
    with_requirements: bool,
) -> Result<Outcome, CellgenError> {
    let mut adding = Adding {
        templates,
        catalog,
        cell,
        with_requirements,
        outcome: Outcome::default(),
        stack: Vec::new(),
    };
    adding.add(plan, name)?;
    Ok(adding.outcome)
}

/// One `add` call: requirements are added first, depth-first, and a cycle is an error.
struct Adding<'a> {
    templates: &'a Templates,
    catalog: &'a Catalog,
    cell: &'a CellName,
    with_requirements: bool,
    outcome: Outcome,
    stack: Vec<String>,
}

impl Adding<'_> {
    fn add(&mut self, plan: &mut Plan, name: &str) -> Result<(), CellgenError> {
        let (templates, catalog, cell) = (self.templates, self.catalog, self.cell);
        let component = catalog.get(name)?;
        check_requires(catalog, component)?;
        let (mut config, _) = planned_config(plan)?;
        let present = cell_components(plan, &config, &cell.name)?;
        if present.contains(name) {
            self.outcome.unchanged.push(name.to_string());
            return Ok(());
        }
        self.stack.push(name.to_string());
        let missing: Vec<String> = component
            .spec
            .requires
            .iter()
            .filter(|r| !present.contains(*r))
            .cloned()
            .collect();
        if !missing.is_empty() {
            if !self.with_requirements {
                return Err(CellgenError::MissingRequirement {
                    name: name.into(),
                    cell: cell.name.clone(),
                    missing,
                });
            }
            for requirement in missing {
                if self.stack.contains(&requirement) {
                    return Err(invalid(
                        Utf8Path::new(COMPONENTS_DIR).join(name).as_path(),
                        format!(
                            "requirements form a cycle: {} -> {requirement}",
                            self.stack.join(" -> ")
                        ),
                    ));
                }
                self.add(plan, &requirement)?;
            }
            // The requirements changed the contract (keys, schema): work from the planned one.
            (config, _) = planned_config(plan)?;
        }
        validate_component(plan, &config, component)?;

        // Flux side: materialise the shared component once (with the contract's renames),
        // then list it in the cell's layers.
        let renames = crate::model::provenance::renames(plan)?;
        for (path, contents) in component.shared_files(templates) {
            if !plan.exists(&path) {
                let contents = crate::model::provenance::renamed(&renames, &path, contents);
                plan.write(path, contents)?;
            }
        }
        for layer_name in &component.spec.layers {
            let layer = config.layer(layer_name).expect("validated above");
            let reference = component_ref(&layer.path, name, layer_name);
            let path = cell_flux_dir(&cell.name).join(format!("{layer_name}.yaml"));
            edit(plan, &path, |text| {
                crate::ports::yaml::guard(text).map_err(CellgenError::yaml(&path))?;
                yaml::add_flux_component(text, &reference).map_err(|e| invalid(&path, e))
            })?;
        }

        // Terraform side: the identity, then the keys that appear only once it exists.
        if let Some(tf) = component.terraform(templates, cell)? {
            files::check_settings(plan, component, cell, &tf)?;
            let path = cell_terraform_dir(&cell.name).join(format!("{name}.tf"));
            files::check_replace(plan, &cell.name, &path, &tf)?;
            plan.write(path, tf)?;
        }
        let metadata = cell_terraform_dir(&cell.name).join(METADATA_FILE);
        let entries: Vec<(String, String)> = component
            .spec
            .keys
            .iter()
            .map(|(key, spec)| (key.clone(), spec.terraform.clone()))
            .collect();
        edit(plan, &metadata, |text| {
            hcl::add(text, &entries, &component.depends_on()).map_err(|e| invalid(&metadata, e))
        })?;
        // Each key's expression refers only to what the planned stack declares (its own .tf,
        // its requirements', the cell's).
        for (key, spec) in &component.spec.keys {
            let missing =
                crate::model::stack::undeclared_references(plan, &cell.name, &spec.terraform)?;
            if !missing.is_empty() {
                let path = spec_path(component);
                let line = plan
                    .read(&path)?
                    .and_then(|t| crate::model::config::line_of(&t, &spec.terraform))
                    .map(|l| format!("line {l}: "))
                    .unwrap_or_default();
                return Err(invalid(
                    &path,
                    format!(
                        "{line}keys.{key}.terraform `{}` refers to what cell {} would not have: {} Declare it in the component's Terraform template ({}.tf) or in a component it requires",
                        spec.terraform,
                        cell.name,
                        missing.join(" "),
                        component.name
                    ),
                ));
            }
        }

        // The contract: keys new to the repository join it, and the contract's number moves
        // (once per command); the cell's ConfigMap carries the number of its newest key.
        let new_keys: Vec<(&String, &crate::model::catalog::ComponentKey)> = component
            .spec
            .keys
            .iter()
            .filter(|(k, _)| !config.keys.contains_key(*k))
            .collect();
        if !new_keys.is_empty() {
            let schema = contract::change_number(plan, &config, false)?;
            let entries: Vec<(String, Vec<(&str, yaml::Field)>)> = new_keys
                .iter()
                .map(|(key, spec)| {
                    let fields = vec![
                        ("description", yaml::Field::Str(spec.description.clone())),
                        ("example", yaml::Field::Str(spec.example.clone())),
                        ("terraform", yaml::Field::Str(spec.terraform.clone())),
                        ("component", yaml::Field::Str(name.to_string())),
                        ("since", yaml::Field::Int(schema)),
                    ];
                    ((*key).clone(), fields)
                })
                .collect();
            contract::edit_contract(plan, schema, |text| yaml::append_keys(text, &entries))?;
            record_schema(&mut self.outcome, config.schema, schema);
        }
        contract::renumber_cell(plan, &cell.name)?;
        self.stack.pop();
        self.outcome.changed.push(name.to_string());
        validate_edits(plan, &cell.name)?;
        // The component's blocks joined the stack: no address may now be declared twice.
        crate::model::stack::check_addresses(plan, &cell.name)
    }
}

/// The edited files must still read back: cellgen.yaml as a contract, the ConfigMap as HCL.
fn validate_edits(plan: &Plan, cell: &str) -> Result<(), CellgenError> {
    planned_config(plan)?;
    let metadata = cell_terraform_dir(cell).join(METADATA_FILE);
    if let Some(text) = plan.read(&metadata)? {
        hcl::read(&text).map_err(|e| invalid(&metadata, e))?;
    }
    Ok(())
}

/// What a component requires must be components (a typo is not a missing requirement).
fn check_requires(catalog: &Catalog, component: &Component) -> Result<(), CellgenError> {
    for required in &component.spec.requires {
        if !catalog.components.contains_key(required) {
            return Err(invalid(
                &spec_path(component),
                format!(
                    "`requires` lists `{required}`, which is not a component.{}",
                    crate::suggest::hint(required, catalog.components.keys().map(String::as_str))
                ),
            ));
        }
    }
    Ok(())
}

/// A component's keys are its own: a key the contract has for the base or for another
/// component would be written twice, and removed with the wrong owner.
fn check_key_owners(config: &Config, component: &Component) -> Result<(), CellgenError> {
    for key in component.spec.keys.keys() {
        let Some(spec) = config.keys.get(key) else {
            continue;
        };
        if spec.component.as_deref() == Some(component.name.as_str()) {
            continue;
        }
        let owner = match &spec.component {
            Some(other) => format!("component `{other}`"),
            None => "the base contract".to_string(),
        };
        return Err(invalid(
            &spec_path(component),
            format!(
                "key `{key}` is already in cellgen.yaml for {owner}; a component brings keys of its own: rename it (e.g. `{}_{key}`)",
                component.ident()
            ),
        ));
    }
    Ok(())
}

fn spec_path(component: &Component) -> Utf8PathBuf {
    Utf8Path::new(COMPONENTS_DIR)
        .join(&component.name)
        .join(crate::model::catalog::SPEC_FILE)
}

/// Removes `name` from `cell`: the exact inverse of `add`.
pub fn remove(
    plan: &mut Plan,
    templates: &Templates,
    catalog: &Catalog,
    cell: &CellName,
    name: &str,
) -> Result<Outcome, CellgenError> {
    let mut outcome = Outcome::default();
    let component = catalog.get(name)?;
    let (config, _) = planned_config(plan)?;
    let present = cell_components(plan, &config, &cell.name)?;
    if !present.contains(name) {
        outcome.unchanged.push(name.to_string());
        return Ok(outcome);
    }
    let dependents: Vec<String> = present
        .iter()
        .filter(|other| {
            catalog
                .components
                .get(*other)
                .is_some_and(|c| c.spec.requires.iter().any(|r| r == name))
        })
        .cloned()
        .collect();
    if !dependents.is_empty() {
        return Err(CellgenError::RequiredBy {
            name: name.into(),
            cell: cell.name.clone(),
            dependents,
        });
    }

    // A version of the cell's own (`set-version`) leaves with the component: otherwise adding
    // it again would bring the old pin back. A component without one chart has none.
    if let Ok(chart) = crate::model::versions::locate(plan, component) {
        let path = cell_flux_dir(&cell.name).join(format!("{}.yaml", chart.layer));
        if plan.exists(&path) {
            edit(plan, &path, |text| {
                yaml::patches::remove_version_patch(text, &chart.target)
                    .map_err(|e| invalid(&path, e))
            })?;
        }
    }
    for layer_name in &component.spec.layers {
        let Some(layer) = config.layer(layer_name) else {
            continue;
        };
        let reference = component_ref(&layer.path, name, layer_name);
        let path = cell_flux_dir(&cell.name).join(format!("{layer_name}.yaml"));
        edit(plan, &path, |text| {
            crate::ports::yaml::guard(text).map_err(CellgenError::yaml(&path))?;
            yaml::remove_flux_component(text, &reference).map_err(|e| invalid(&path, e))
        })?;
    }
    let tf = cell_terraform_dir(&cell.name).join(format!("{name}.tf"));
    if plan.exists(&tf) {
        files::check_delete(plan, templates, component, cell, &tf)?;
        plan.delete(tf)?;
    }
    let metadata = cell_terraform_dir(&cell.name).join(METADATA_FILE);
    let keys: Vec<String> = component.spec.keys.keys().cloned().collect();
    edit(plan, &metadata, |text| {
        hcl::remove(text, &keys, &component.depends_on()).map_err(|e| invalid(&metadata, e))
    })?;

    // The shared component and its keys stay while any other cell runs it.
    let still_used = all_cells(plan, &cell.name)?
        .iter()
        .filter(|c| **c != cell.name)
        .map(|c| cell_components(plan, &config, c).map(|set| set.contains(name)))
        .collect::<Result<Vec<bool>, _>>()?
        .into_iter()
        .any(|used| used);
    if !still_used {
        files::drop_shared(plan, templates, component)?;
        let owned: Vec<(String, KeySpec)> = config
            .keys
            .iter()
            .filter(|(_, s)| s.component.as_deref() == Some(name))
            .map(|(k, s)| (k.clone(), s.clone()))
            .collect();
        if !owned.is_empty() {
            let keys: Vec<String> = owned.into_iter().map(|(k, _)| k).collect();
            let undoes = contract::undoes_last_change(&config, &keys);
            let schema = contract::change_number(plan, &config, undoes)?;
            contract::edit_contract(plan, schema, |text| yaml::remove_keys(text, &keys))?;
            record_schema(&mut outcome, config.schema, schema);
        }
    }
    contract::renumber_cell(plan, &cell.name)?;
    outcome.changed.push(name.to_string());
    validate_edits(plan, &cell.name)?;
    Ok(outcome)
}

fn record_schema(outcome: &mut Outcome, from: u32, to: u32) {
    let start = outcome.schema.map_or(from, |(start, _)| start);
    outcome.schema = Some((start, to));
}

/// A component's layers must be layers of the repository, and a repository component's layer
/// directories must hold Kustomize Components.
fn validate_component(
    plan: &Plan,
    config: &Config,
    component: &Component,
) -> Result<(), CellgenError> {
    let spec_path = spec_path(component);
    for layer in &component.spec.layers {
        if config.layer(layer).is_none() {
            return Err(invalid(
                &spec_path,
                format!(
                    "layer `{layer}` is not a layer of this repository (cellgen.yaml has: {}).{}",
                    config.layer_names().join(", "),
                    crate::suggest::hint(layer, config.layer_names())
                ),
            ));
        }
        if component.origin == Origin::Repository {
            let kustomization = component.layer_dir(layer).join("kustomization.yaml");
            let text = plan.read(&kustomization)?.ok_or_else(|| invalid(&kustomization, "missing: each layer of a component needs a kustomization.yaml with `kind: Component`"))?;
            crate::ports::yaml::guard(&text).map_err(CellgenError::yaml(&kustomization))?;
            let value: yaml_serde::Value =
                crate::ports::yaml::from_str(&text).map_err(|e| invalid(&kustomization, e))?;
            if value.get("kind").and_then(|k| k.as_str()) != Some("Component") {
                return Err(invalid(
                    &kustomization,
                    "is not a Kustomize Component: set `apiVersion: kustomize.config.k8s.io/v1alpha1` and `kind: Component`",
                ));
            }
        }
    }
    check_key_owners(config, component)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cells::resolve_ref;

    #[test]
    fn refs_are_relative_to_the_layer_path() {
        assert_eq!(
            component_ref("./infrastructure/controllers", "karpenter", "controllers"),
            "../../components/karpenter/controllers"
        );
        assert_eq!(component_ref("apps", "x", "apps"), "../components/x/apps");
        assert_eq!(
            resolve_ref(
                "./infrastructure/controllers",
                "../../components/karpenter/controllers"
            )
            .unwrap(),
            Utf8PathBuf::from("components/karpenter/controllers")
        );
        assert_eq!(resolve_ref("apps", "../../../etc"), None);
    }
}
