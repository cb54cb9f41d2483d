//! Which paths cellgen generates, for the records that name them.
//!
//! A record (`crate::model::state`) is committed, so anyone with commit access can write one:
//! its paths are obeyed only where cellgen itself generates files, so that no record makes
//! cellgen delete or replace anything else (a Terraform state, cellgen.yaml, `.git/config`).
//! A cell's record may name the files of the cell's Flux directory that cellgen writes (its
//! `kustomization.yaml`, one `<layer>.yaml` per layer of cellgen.yaml, `egress-gateway.yaml`)
//! and those of its Terraform stack (the cell templates' files, and `<component>.tf` for a
//! component of the catalog or of the repository). The repository's record may name the
//! scaffold's files (not cellgen.yaml, which is edited in place) and the YAML files in the layer
//! directories of cellgen's own components. In both, no path leads through a symbolic link.
//! A file a later cellgen stops generating stays nameable by adding it here.

use camino::Utf8Path;
use std::collections::BTreeSet;
use std::sync::LazyLock;

use crate::model::catalog::COMPONENTS_DIR;
use crate::model::config::CONFIG_FILE;
use crate::model::repo::{cell_flux_dir, cell_terraform_dir};
use crate::ports::templates;
use crate::root::fsguard::Root;
use crate::writer::plan::Plan;

/// File names of a cell's stack in the embedded templates (immutable, derived from them).
static CELL_TERRAFORM: LazyLock<BTreeSet<String>> = LazyLock::new(|| {
    templates::names_under("cell/terraform/")
        .into_iter()
        .filter_map(|t| t.strip_prefix("cell/terraform/").map(str::to_string))
        .collect()
});

/// The scaffold's paths, relative to the repository root.
static SCAFFOLD: LazyLock<BTreeSet<String>> = LazyLock::new(|| {
    templates::names_under("repo/")
        .into_iter()
        .filter_map(|t| t.strip_prefix("repo/").map(str::to_string))
        .collect()
});

/// The embedded components' names.
static EMBEDDED: LazyLock<BTreeSet<String>> = LazyLock::new(|| {
    templates::names_under(&format!("{COMPONENTS_DIR}/"))
        .into_iter()
        .filter_map(|t| {
            let rest = t.strip_prefix(&format!("{COMPONENTS_DIR}/"))?;
            rest.split_once('/').map(|(name, _)| name.to_string())
        })
        .collect()
});

/// Whose record: a cell's, or the repository's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope<'a> {
    Cell(&'a str),
    Repository,
}

impl Scope<'_> {
    pub fn describe(&self) -> String {
        match self {
            Scope::Cell(cell) => format!("cell {cell}"),
            Scope::Repository => "the repository".into(),
        }
    }
}

/// Why cellgen does not generate `path` in `scope` (None: it does). `layers` are the layer names
/// of cellgen.yaml.
pub fn not_generated(plan: &Plan, layers: &[String], scope: Scope, path: &str) -> Option<String> {
    let plain = path
        .split('/')
        .all(|part| !part.is_empty() && part != "." && part != "..")
        && !path.contains('\\');
    if !plain {
        return Some("it is not a plain path inside the repository".into());
    }
    let p = Utf8Path::new(path);
    let named = match scope {
        Scope::Cell(cell) => cell_file(plan, layers, cell, p),
        Scope::Repository => repository_file(p),
    };
    if !named {
        return Some(format!(
            "cellgen does not generate such a file for {}",
            scope.describe()
        ));
    }
    through_link(plan, p)
}

/// The symbolic link on the way to `path` (relative to the plan's root), said as a reason.
pub fn through_link(plan: &Plan, path: &Utf8Path) -> Option<String> {
    match Root::new(plan.root()).resolve_traced(path) {
        Ok((_, None)) => None,
        Ok((_, Some((link, _)))) => Some(format!(
            "it leads through the symbolic link {link}, and cellgen writes real paths only"
        )),
        Err(outside) => Some(outside.to_string()),
    }
}

fn cell_file(plan: &Plan, layers: &[String], cell: &str, path: &Utf8Path) -> bool {
    let Some(name) = path.file_name() else {
        return false;
    };
    if path.parent() == Some(cell_flux_dir(cell).as_path()) {
        let stem = name.strip_suffix(".yaml").unwrap_or("");
        return ["kustomization", "egress-gateway"].contains(&stem)
            || layers.iter().any(|l| l == stem);
    }
    if path.parent() != Some(cell_terraform_dir(cell).as_path()) {
        return false;
    }
    if CELL_TERRAFORM.contains(name) {
        return true;
    }
    let Some(component) = name.strip_suffix(".tf") else {
        return false;
    };
    EMBEDDED.contains(component)
        || crate::model::config::is_dns_label(component)
            && plan.exists(
                Utf8Path::new(COMPONENTS_DIR)
                    .join(component)
                    .join(crate::model::catalog::SPEC_FILE),
            )
}

fn repository_file(path: &Utf8Path) -> bool {
    if path == Utf8Path::new(CONFIG_FILE) {
        return false;
    }
    if SCAFFOLD.contains(path.as_str()) {
        return true;
    }
    // components/<embedded component>/<layer>/<file>.yaml
    let parts: Vec<&str> = path.iter().collect();
    match parts.as_slice() {
        [dir, component, _layer, file] => {
            *dir == COMPONENTS_DIR && file.ends_with(".yaml") && EMBEDDED.contains(*component)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_cellgen_generates() {
        let dir = tempfile::tempdir().unwrap();
        let root = camino::Utf8Path::from_path(dir.path()).unwrap();
        let plan = Plan::new(root, crate::model::repo::read_by_flux);
        let layers = vec!["apps".to_string(), "controllers".to_string()];
        let cell = Scope::Cell("eu-west-2-prod");
        let ok = |scope, path: &str| not_generated(&plan, &layers, scope, path).is_none();
        for path in [
            "cells/eu-west-2-prod/apps.yaml",
            "cells/eu-west-2-prod/kustomization.yaml",
            "terraform/cells/eu-west-2-prod/cluster.tf",
            "terraform/cells/eu-west-2-prod/terraform.tfvars",
            "terraform/cells/eu-west-2-prod/karpenter.tf",
        ] {
            assert!(ok(cell, path), "{path}");
        }
        for path in [
            "terraform/cells/eu-west-2-prod/terraform.tfstate",
            "terraform/cells/eu-west-2-prod/alarms.tf",
            "terraform/cells/eu-west-1-dev/cluster.tf",
            "cells/eu-west-2-prod/team-settings.yaml",
            "cells/eu-west-2-prod/../x/apps.yaml",
            ".git/config",
            "cellgen.yaml",
        ] {
            assert!(!ok(cell, path), "{path}");
        }
        for path in [
            "apps/namespace.yaml",
            ".github/workflows/cellgen.yaml",
            "components/karpenter/configs/nodepool.yaml",
        ] {
            assert!(ok(Scope::Repository, path), "{path}");
        }
        for path in [
            "cellgen.yaml",
            "components/mine/controllers/x.yaml",
            "components/karpenter/component.yaml",
            ".git/config",
            "apps/team.yaml",
        ] {
            assert!(!ok(Scope::Repository, path), "{path}");
        }
    }
}
