//! Which files a component change may write or delete: cellgen replaces or deletes only what it
//! generated and the user has not changed since (the cell's record says so, or the file already
//! is what cellgen would write); anything else is the user's, and the command stops naming it.
//! And the repository settings a component's Terraform reads, checked before it is written.

use camino::{Utf8Path, Utf8PathBuf};

use crate::error::CellgenError;
use crate::model::catalog::{Component, Origin};
use crate::model::cell::CellName;
use crate::model::config::CONFIG_FILE;
use crate::model::provenance;
use crate::model::state::{self, sha256};
use crate::ports::templates::Templates;
use crate::writer::plan::Plan;

/// Whether `text`, at `path` in `cell`, is as cellgen last wrote it (the record's hash).
fn recorded_as_generated(
    plan: &Plan,
    cell: &str,
    path: &Utf8Path,
    text: &str,
) -> Result<bool, CellgenError> {
    let record = state::load(plan, cell)?.unwrap_or_default();
    Ok(record
        .files
        .get(path.as_str())
        .is_some_and(|f| f.sha256 == sha256(text)))
}

/// Before writing a component's `.tf` into a cell: a file already there must be cellgen's and
/// unchanged, or already what cellgen writes now.
pub fn check_replace(
    plan: &Plan,
    cell: &str,
    path: &Utf8Path,
    new: &str,
) -> Result<(), CellgenError> {
    let Some(existing) = plan.read(path)? else {
        return Ok(());
    };
    if existing == new || recorded_as_generated(plan, cell, path, &existing)? {
        return Ok(());
    }
    Err(CellgenError::InvalidFile {
        path: path.to_path_buf(),
        message: format!(
            "exists, and is not a file cellgen generated and you left unchanged ({} does not list it as such), so cellgen will not replace it. Move it out of the stack (keep what you need in a file of another name) and run again",
            state::record_path(cell)
        ),
    })
}

/// Before deleting a component's `.tf` from a cell: it must be cellgen's and unchanged, or what
/// cellgen would write for it now.
pub fn check_delete(
    plan: &Plan,
    templates: &Templates,
    component: &Component,
    cell: &CellName,
    path: &Utf8Path,
) -> Result<(), CellgenError> {
    let Some(existing) = plan.read(path)? else {
        return Ok(());
    };
    if recorded_as_generated(plan, &cell.name, path, &existing)?
        || component.terraform(templates, cell)?.as_deref() == Some(existing.as_str())
    {
        return Ok(());
    }
    Err(CellgenError::InvalidFile {
        path: path.to_path_buf(),
        message: format!(
            "you changed it since cellgen generated it (or wrote it yourself), so cellgen will not delete it with `{}`. Delete it yourself once nothing you added to it is needed, then run again",
            component.name
        ),
    })
}

/// Deletes the component's shared files (`components/<name>/`) once no cell runs it: only an
/// embedded component's, and only those still as cellgen materialised them (a chart version
/// `set-version` moved included). A repository component's definition, and files the user
/// changed, stay. Returns the deleted paths.
pub fn drop_shared(
    plan: &mut Plan,
    templates: &Templates,
    component: &Component,
) -> Result<Vec<Utf8PathBuf>, CellgenError> {
    let mut deleted = Vec::new();
    if component.origin != Origin::Embedded {
        return Ok(deleted);
    }
    let renames = provenance::renames(plan)?;
    for (path, contents) in component.shared_files(templates) {
        let contents = provenance::renamed(&renames, &path, contents);
        if let Some(text) = plan.read(&path)?
            && crate::model::versions::same_but_version(&text, &contents)
        {
            plan.delete(path.clone())?;
            deleted.push(path);
        }
    }
    Ok(deleted)
}

/// The settings of cellgen.yaml a component's Terraform reads at plan time
/// (`local.settings.<path>`, by environment with `[var.environment]`) must be there for the
/// cell's environment: otherwise `terraform plan` fails, much later.
pub fn check_settings(
    plan: &Plan,
    component: &Component,
    cell: &CellName,
    terraform: &str,
) -> Result<(), CellgenError> {
    let reference = regex::Regex::new(
        r"local\.settings((?:\.[A-Za-z_][A-Za-z0-9_-]*)+)(\[var\.environment\])?",
    )
    .expect("a valid regex");
    let text = plan.read(CONFIG_FILE)?.unwrap_or_default();
    let settings: yaml_serde::Value = crate::ports::yaml::from_str(&text).unwrap_or_default();
    for found in reference.captures_iter(terraform) {
        let path: Vec<&str> = found[1].trim_start_matches('.').split('.').collect();
        let by_environment = found.get(2).is_some();
        let mut at = Some(&settings);
        for key in &path {
            at = at.and_then(|v| v.get(*key));
        }
        let present = match at {
            Some(value) if by_environment => value.get(cell.environment.as_str()).is_some(),
            Some(value) => !value.is_null(),
            None => false,
        };
        if present {
            continue;
        }
        let setting = if by_environment {
            format!("{}.{}", path.join("."), cell.environment)
        } else {
            path.join(".")
        };
        let example = match (path.as_slice(), by_environment) {
            (["karpenter", "ami_alias"], true) => format!(
                " (a `karpenter:` section with `ami_alias:` and one entry per environment, e.g. `{}: {}`; the AMI releases are at https://github.com/awslabs/amazon-eks-ami/releases)",
                cell.environment,
                crate::model::scaffold::default_ami_alias(&cell.environment)
            ),
            (["karpenter", "node_pool"], true) => format!(
                " (under `karpenter:`, `node_pool:` with one entry per environment, e.g. `{}: {{architectures: [amd64], capacity_types: [on-demand], consolidate_after: 10m, disruption_budgets: [{{nodes: \"10%\"}}]}}`)",
                cell.environment
            ),
            (["dns", "zones"], true) => format!(
                " (the Route53 hosted zones, by name, that {} cells may change: a `dns:` section with `zones:` and one entry per environment, e.g. `{}: [example.com]`; `[\"*\"]` allows every zone)",
                cell.environment, cell.environment
            ),
            _ => String::new(),
        };
        return Err(CellgenError::InvalidFile {
            path: Utf8PathBuf::from(CONFIG_FILE),
            message: format!(
                "component `{}` needs the setting `{setting}`, which its Terraform reads for cell {} (local.settings, from settings.tf), and cellgen.yaml lacks it: add it{example}",
                component.name, cell.name
            ),
        });
    }
    Ok(())
}
