//! A cell's Terraform stack: the files and addresses its templates declare, so that no component
//! can overwrite one of its files or declare one of its addresses; and the check, after every
//! change, that no two blocks of the planned stack share an address.
//!
//! The facts come from rendering the stack templates themselves (with and without the egress
//! gateway), never from a hand-kept list, so they follow the templates.

use camino::Utf8PathBuf;
use std::collections::{BTreeMap, BTreeSet};

use crate::error::CellgenError;
use crate::model::cell::CellName;
use crate::model::config::default_kubernetes_version;
use crate::model::repo::cell_terraform_dir;
use crate::model::scaffold::{self, CellInputs};
use crate::ports::edit::hcl::{self, syntax};
use crate::ports::templates::Templates;
use crate::writer::plan::{ChangeKind, Plan};

const STACK_TEMPLATES: &str = "cell/terraform/";

/// What the stack templates generate in every cell.
#[derive(Debug, Clone)]
pub struct StackFacts {
    /// File names without `.tf`: `cluster`, `app-role`, ...
    pub files: BTreeSet<String>,
    /// Every declared address, and the file that declares it.
    pub addresses: BTreeMap<String, String>,
}

impl StackFacts {
    pub fn from_templates(templates: &Templates) -> Result<StackFacts, CellgenError> {
        let files = templates
            .names_under(STACK_TEMPLATES)
            .iter()
            .filter_map(|n| n.strip_prefix(STACK_TEMPLATES)?.strip_suffix(".tf"))
            .map(str::to_string)
            .collect();
        let config = scaffold::seed_config(templates)?;
        let cell = CellName::parse("eu-west-2-prod", &config.environments)?;
        let mut addresses = BTreeMap::new();
        for egress_gateway in [false, true] {
            let inputs = CellInputs {
                kubernetes_version: default_kubernetes_version(),
                egress_gateway,
                vpc_cidr: "10.0.0.0/16".into(),
                forget_flux_bootstrap: false,
            };
            for (path, text) in scaffold::cell_files(templates, &config, &cell, &inputs)? {
                if path.extension().is_none_or(|e| e != "tf") {
                    continue;
                }
                let file = path.file_name().unwrap_or_default().to_owned();
                let body = hcl::parse_body(&text).map_err(|e| CellgenError::Template {
                    name: format!("{STACK_TEMPLATES}{file}"),
                    message: e.to_string(),
                })?;
                for d in syntax::declared(&text, &body) {
                    addresses.entry(d.address).or_insert_with(|| file.clone());
                }
            }
        }
        Ok(StackFacts { files, addresses })
    }
}

/// The `.tf` files of a cell's stack as the plan will leave them, by path.
fn planned_tf_files(plan: &Plan, cell: &str) -> Result<Vec<Utf8PathBuf>, CellgenError> {
    let dir = cell_terraform_dir(cell);
    let mut files: BTreeSet<Utf8PathBuf> = BTreeSet::new();
    if let Ok(entries) = crate::root::disk::read_dir(plan.root().join(&dir)) {
        for entry in entries.flatten() {
            files.insert(dir.join(crate::paths::entry_name(&dir, &entry.file_name())?));
        }
    }
    for (kind, path) in plan.summary() {
        if kind != ChangeKind::Delete && path.parent() == Some(dir.as_path()) {
            files.insert(path.to_path_buf());
        }
    }
    Ok(files
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "tf"))
        .filter(|p| plan.exists(p))
        .collect())
}

/// No two blocks of the cell's planned stack may share an address: Terraform would refuse the
/// stack. Names both files and lines.
pub fn check_addresses(plan: &Plan, cell: &str) -> Result<(), CellgenError> {
    let mut seen: BTreeMap<String, (Utf8PathBuf, usize)> = BTreeMap::new();
    for path in planned_tf_files(plan, cell)? {
        let Some(text) = plan.read(&path)? else {
            continue;
        };
        let body = hcl::parse_body(&text).map_err(|e| CellgenError::InvalidFile {
            path: path.to_path_buf(),
            message: format!(
                "{e}; cellgen checks that no two blocks of the stack share an address, and cannot read this file"
            ),
        })?;
        for d in syntax::declared(&text, &body) {
            if let Some((first, line)) = seen.get(&d.address) {
                return Err(CellgenError::InvalidFile {
                    path: path.to_path_buf(),
                    message: format!(
                        "line {}: declares `{}`, which {}:{line} declares too; Terraform refuses two blocks with one address. Rename one of them (a component's files and addresses follow its name)",
                        d.line, d.address, first
                    ),
                });
            }
            seen.insert(d.address, (path.clone(), d.line));
        }
    }
    Ok(())
}

/// The references of `expression` that the cell's planned stack declares nowhere (issue 19: a
/// key written as `aws_sqs_queue.jobs.url` or `var.x` with nothing behind it made a green
/// `check` and a failing `terraform plan`). Each with why, and the nearest declared address.
pub fn undeclared_references(
    plan: &Plan,
    cell: &str,
    expression: &str,
) -> Result<Vec<String>, CellgenError> {
    let refs = syntax::references(expression);
    if refs.is_empty() {
        return Ok(Vec::new());
    }
    let mut declared: BTreeSet<String> = BTreeSet::new();
    for path in planned_tf_files(plan, cell)? {
        let Some(text) = plan.read(&path)? else {
            continue;
        };
        // A file that does not parse is reported by the commands and check that read it.
        if let Ok(body) = hcl::parse_body(&text) {
            declared.extend(
                syntax::declared(&text, &body)
                    .into_iter()
                    .map(|d| d.address),
            );
        }
    }
    let dir = cell_terraform_dir(cell);
    Ok(refs
        .into_iter()
        .filter(|r| !declared.contains(r))
        .map(|r| {
            if !r.contains('.') {
                return format!(
                    "`{r}` is not something Terraform can refer to (a resource is `TYPE.NAME`, a variable `var.NAME`)"
                );
            }
            let kind = match r.split('.').next() {
                Some("var") => "variable",
                Some("local") => "local value",
                Some("module") => "module",
                Some("data") => "data source",
                _ => "resource",
            };
            let hint = crate::suggest::hint(&r, declared.iter().map(String::as_str));
            format!("`{r}` is a {kind} that {dir} declares nowhere.{hint}")
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_come_from_the_templates() {
        let facts = StackFacts::from_templates(&Templates::new()).unwrap();
        for file in [
            "app-role",
            "cell-metadata",
            "cluster",
            "egress",
            "flux",
            "versions",
        ] {
            assert!(facts.files.contains(file), "{file}: {:?}", facts.files);
        }
        assert_eq!(facts.addresses["aws_iam_role.app_abac"], "app-role.tf");
        assert_eq!(facts.addresses["module.egress_node_group"], "egress.tf");
        assert_eq!(facts.addresses["var.name"], "variables.tf");
        assert_eq!(facts.addresses["terraform.backend"], "backend.tf");
    }
}
