//! Decommissioning. `remove-cell` takes a cell's Git side out in one change (its directory and
//! record, then the shared components and the contract keys no remaining cell uses, the
//! contract's number moving once) and keeps its Terraform stack until `terraform destroy` has
//! run, since that stack's state is the only record of what the cell owns in AWS. It also says,
//! in order, how to tear the cell down; `remove-component` says the same for one component that
//! owns cloud resources. Steps are data; the commands print them.

use camino::{Utf8Path, Utf8PathBuf};
use std::collections::BTreeSet;

use crate::error::CellgenError;
use crate::model::catalog::{Catalog, Component};
use crate::model::cell::CellName;
use crate::model::cells::{cell_components, planned_config};
use crate::model::config::Config;
use crate::model::contract;
use crate::model::names::FLUX_SYSTEM;
use crate::model::repo::{cell_flux_dir, cell_terraform_dir, list_dirs};
use crate::model::state;
use crate::ops::components;
use crate::ports::edit::yaml::{self, Field};
use crate::ports::shell;
use crate::ports::templates::Templates;
use crate::writer::plan::Plan;

/// One step of a tear-down: what and why, then the exact commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub title: String,
    pub commands: Vec<String>,
}

/// A Flux Kustomization of the cell (a layer), as its deletion needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    pub name: String,
    pub namespace: String,
    /// `spec.timeout`, e.g. `10m`.
    pub timeout: Option<String>,
    depends_on: Vec<String>,
}

/// What happens to the cell's Terraform stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stack {
    /// Kept: `--terraform-destroyed` was not given.
    Kept,
    /// Removed from the plan (nothing in it held Terraform state).
    Removed,
    /// There is none (any more).
    Absent,
}

/// What `remove_cell` planned.
#[derive(Debug)]
pub struct Removal {
    /// The cell's Flux Kustomizations, in the order a tear-down deletes them.
    pub layers: Vec<Layer>,
    /// Components no remaining cell runs: their shared files left with this cell.
    pub components: Vec<String>,
    /// Keys that left the contract.
    pub keys: Vec<String>,
    pub schema: Option<(u32, u32)>,
    pub stack: Stack,
    /// The cell was removed before (Git history has it, the working tree not): what to say.
    pub nothing: Option<String>,
}

/// The newest Git commit (short hash) that changed any of `paths` (repository-relative), when the
/// repository is a Git work tree with history and `git` runs: the evidence that a cell absent
/// from the working tree was removed rather than never created.
fn removed_in_history(root: &Utf8Path, paths: &[&Utf8Path]) -> Option<String> {
    let mut args = vec!["log", "-1", "--format=%h", "--"];
    args.extend(paths.iter().map(|p| p.as_str()));
    crate::root::git::answer(root, &args)
}

/// Regular files under `dir` (repository-relative), recursively, skipping `skip` directories.
fn files_under(
    root: &Utf8Path,
    dir: &Utf8Path,
    skip: &[&str],
) -> Result<Vec<Utf8PathBuf>, CellgenError> {
    crate::model::repo::files_under(root, dir, true, &|name, is_dir| {
        is_dir && skip.contains(&name)
    })
}

/// The cell's Flux Kustomizations (its layer files), in deletion order: nothing still depends
/// on a layer when it goes (apps, then configs, then controllers for cellgen's layers).
pub fn cell_layers(plan: &Plan, config: &Config, cell: &str) -> Result<Vec<Layer>, CellgenError> {
    let mut layers: Vec<Layer> = Vec::new();
    for file in files_under(plan.root(), &cell_flux_dir(cell), &[FLUX_SYSTEM])? {
        let Ok(Some(text)) = plan.read(&file) else {
            continue;
        };
        // A YAML file that does not parse fails, naming it: its tear-down cannot be known.
        // Other files (a README) are no manifests Flux applies.
        let docs: Vec<yaml_serde::Value> = match crate::ports::yaml::documents(&text) {
            Ok(docs) => docs,
            Err(e) if matches!(file.extension(), Some("yaml" | "yml")) => {
                return Err(CellgenError::yaml(&file)(e));
            }
            Err(_) => continue,
        };
        for value in docs {
            let s = |v: &yaml_serde::Value, k: &str| {
                v.get(k).and_then(|x| x.as_str()).map(str::to_string)
            };
            let is_flux = value.get("kind").and_then(|k| k.as_str()) == Some("Kustomization")
                && s(&value, "apiVersion")
                    .is_some_and(|a| a.starts_with("kustomize.toolkit.fluxcd.io/"));
            let Some(meta) = value.get("metadata").filter(|_| is_flux) else {
                continue;
            };
            let spec = value.get("spec").cloned().unwrap_or_default();
            let depends_on = spec
                .get("dependsOn")
                .and_then(|d| d.as_sequence())
                .map(|d| d.iter().filter_map(|e| s(e, "name")).collect())
                .unwrap_or_default();
            layers.push(Layer {
                name: s(meta, "name").unwrap_or_default(),
                namespace: s(meta, "namespace").unwrap_or_else(|| FLUX_SYSTEM.into()),
                timeout: s(&spec, "timeout"),
                depends_on,
            });
        }
    }
    // Its Git side already gone (a second run): the cluster still runs cellgen.yaml's layers
    // until the tear-down is done, so the steps still name them.
    if layers.is_empty() && !crate::root::disk::exists(plan.root().join(cell_flux_dir(cell))) {
        layers = config
            .layers
            .iter()
            .map(|l| Layer {
                name: l.name.clone(),
                namespace: FLUX_SYSTEM.into(),
                timeout: None,
                depends_on: l.depends_on.clone(),
            })
            .collect();
    }
    // cellgen.yaml's order first, then the rest by name; then dependents before what they need.
    let rank = |l: &Layer| {
        config
            .layers
            .iter()
            .position(|c| c.name == l.name)
            .unwrap_or(usize::MAX)
    };
    layers.sort_by(|a, b| rank(a).cmp(&rank(b)).then(a.name.cmp(&b.name)));
    let mut ordered = Vec::new();
    while !layers.is_empty() {
        let free = layers
            .iter()
            .rposition(|l| !layers.iter().any(|o| o.depends_on.contains(&l.name)))
            .unwrap_or(layers.len() - 1);
        ordered.push(layers.remove(free));
    }
    Ok(ordered)
}

/// Plans the removal of `cell`'s Git side (see the module doc).
pub fn remove_cell(
    plan: &mut Plan,
    templates: &Templates,
    catalog: &Catalog,
    cell: &str,
    terraform_destroyed: bool,
) -> Result<Removal, CellgenError> {
    let (config, _) = planned_config(plan)?;
    let flux_dir = cell_flux_dir(cell);
    let tf_dir = cell_terraform_dir(cell);
    let record = state::record_path(cell);
    let mut removal = Removal {
        layers: cell_layers(plan, &config, cell)?,
        components: Vec::new(),
        keys: Vec::new(),
        schema: None,
        stack: Stack::Absent,
        nothing: None,
    };
    let root = plan.root().to_path_buf();
    let exists = |p: &Utf8Path| crate::root::disk::exists(root.join(p));
    if !exists(&flux_dir) && !exists(&tf_dir) && !plan.exists(&record) {
        let mut names = list_dirs(&plan.root().join(crate::model::repo::CELLS_DIR))?;
        names.extend(list_dirs(
            &plan.root().join(crate::model::repo::TERRAFORM_CELLS_DIR),
        )?);
        let looked = format!("nothing under {flux_dir}, {tf_dir} or {record}");
        // A cell removed before (committed or not) is what a re-run meets: nothing to do. A name
        // the repository never had is a mistake the user should hear about.
        if let Some(commit) = removed_in_history(plan.root(), &[&flux_dir, &tf_dir, &record]) {
            removal.nothing = Some(format!(
                "Cell `{cell}` was already removed: Git history has it (last in commit {commit}), the working tree has {looked}. Nothing to change."
            ));
            return Ok(removal);
        }
        names.sort();
        names.dedup();
        return Err(CellgenError::NoSuchCell {
            name: cell.to_string(),
            looked,
            hint: crate::suggest::hint(cell, names.iter().map(String::as_str)),
        });
    }
    let running = cell_components(plan, &config, cell)?;
    for file in files_under(plan.root(), &flux_dir, &[])? {
        plan.delete(file)?;
    }
    if plan.exists(&record) {
        state::plain_record(plan, &record)?;
        plan.delete(record)?;
    }
    let remaining: Vec<String> = crate::model::cells::all_cells(plan, "")?
        .into_iter()
        .filter(|c| c != cell)
        .collect();
    let mut used_elsewhere: BTreeSet<String> = BTreeSet::new();
    for other in &remaining {
        used_elsewhere.extend(cell_components(plan, &config, other)?);
    }
    let mut leaving: Vec<String> = Vec::new();
    for name in running.iter().filter(|n| !used_elsewhere.contains(*n)) {
        if let Ok(component) = catalog.get(name) {
            components::files::drop_shared(plan, templates, component)?;
        }
        removal.components.push(name.clone());
        leaving.extend(
            config
                .keys
                .iter()
                .filter(|(_, s)| s.component.as_deref() == Some(name.as_str()))
                .map(|(k, _)| k.clone()),
        );
    }
    // Keys written for named cells only: this cell leaves their lists, and a key no cell or
    // environment selects any more leaves the contract.
    let mut trimmed: Vec<(String, Vec<String>)> = Vec::new();
    for (key, spec) in &config.keys {
        if spec.cells.iter().any(|c| c == cell) {
            let rest: Vec<String> = spec.cells.iter().filter(|c| *c != cell).cloned().collect();
            if rest.is_empty() && spec.environments.is_empty() {
                leaving.push(key.clone());
            } else {
                trimmed.push((key.clone(), rest));
            }
        }
    }
    if !leaving.is_empty() || !trimmed.is_empty() {
        let number = if leaving.is_empty() {
            config.schema
        } else {
            let undoes = contract::undoes_last_change(&config, &leaving);
            contract::change_number(plan, &config, undoes)?
        };
        contract::edit_contract(plan, number, |text| {
            let mut text = yaml::remove_keys(text, &leaving)?;
            for (key, rest) in &trimmed {
                text = yaml::set_key_fields(&text, key, &[("cells", Field::List(rest.clone()))])?;
            }
            Ok(text)
        })?;
        if number != config.schema {
            removal.schema = Some((config.schema, number));
        }
        removal.keys = leaving;
    }
    removal.stack = if !exists(&tf_dir) {
        Stack::Absent
    } else if !terraform_destroyed {
        Stack::Kept
    } else {
        let found = state_left(plan, &tf_dir)?;
        if !found.is_empty() {
            return Err(CellgenError::StateInStack { dir: tf_dir, found });
        }
        for file in files_under(plan.root(), &tf_dir, &[])? {
            plan.delete(file)?;
        }
        Stack::Removed
    };
    Ok(removal)
}

/// What under a stack holds, or may hold, Terraform state, each with what it says: every
/// `*.tfstate*` file (the local state, its backup, `errored.tfstate`, a workspace's under
/// `terraform.tfstate.d/`) whether it reads or not, and Terraform's working directory
/// `.terraform/` (backend settings, the selected workspace, a legacy state cache). That state is
/// the only record of what the cell owns in AWS, so cellgen deletes none of it, even one that
/// lists nothing: the user removes it, knowing what it was. A saved plan (`plan.out`, any other
/// file) is the stack's to delete.
fn state_left(plan: &Plan, dir: &Utf8Path) -> Result<Vec<String>, CellgenError> {
    let is_state = |name: &str| name.contains(".tfstate");
    let mut found = Vec::new();
    let mut working_dirs: BTreeSet<Utf8PathBuf> = BTreeSet::new();
    for file in files_under(plan.root(), dir, &[])? {
        let inside = file.strip_prefix(dir).unwrap_or(&file);
        let parts: Vec<&str> = inside.iter().collect();
        if let Some(at) = parts.iter().position(|p| *p == ".terraform") {
            working_dirs.insert(parts[..=at].iter().collect());
        } else if parts.iter().any(|p| is_state(p)) {
            found.push(format!("{file}: {}", describe_state(plan, &file)));
        }
    }
    // Empty, they are still Terraform's.
    if plan.exists(dir.join(".terraform")) {
        working_dirs.insert(".terraform".into());
    }
    let workspaces = "terraform.tfstate.d";
    let workspaces = dir.join(workspaces);
    if plan.exists(&workspaces) && !found.iter().any(|f| f.starts_with(workspaces.as_str())) {
        found.push(format!(
            "{workspaces}/: Terraform's workspace states (empty)"
        ));
    }
    for working in working_dirs.iter().map(|w| dir.join(w)) {
        found.push(format!(
            "{working}/: Terraform's working directory (backend settings, the selected workspace, maybe a state cache)"
        ));
    }
    Ok(found)
}

/// What a state file says: how many resources it lists (and a few of them), or that it does
/// not read as a state at all (truncated, damaged, not text), so what it records is unknown.
fn describe_state(plan: &Plan, file: &Utf8Path) -> String {
    let state: Option<serde_json::Value> = plan
        .read(file)
        .ok()
        .flatten()
        .and_then(|text| serde_json::from_str(&text).ok());
    let resources = state
        .as_ref()
        .and_then(|s| s.get("resources"))
        .and_then(|r| r.as_array());
    let Some(resources) = resources else {
        return "not a state Terraform can read (truncated, damaged or not JSON), so what it records is unknown".into();
    };
    let names: Vec<String> = resources
        .iter()
        .take(3)
        .map(|r| {
            let get = |k: &str| r.get(k).and_then(|v| v.as_str()).unwrap_or("?");
            match r.get("module").and_then(|m| m.as_str()) {
                Some(module) => format!("{module}.{}.{}", get("type"), get("name")),
                None => format!("{}.{}", get("type"), get("name")),
            }
        })
        .collect();
    match resources.len() {
        0 => "a state that lists no resources".into(),
        n => format!(
            "lists {n} resource(s) ({}{})",
            names.join(", "),
            if n > names.len() { ", ..." } else { "" }
        ),
    }
}

/// `kubectl --timeout` for deleting a layer: its own `spec.timeout` plus five minutes (the
/// deletion waits up to that timeout for what it applied), 15m when it has none.
fn delete_timeout(layer: &Layer) -> String {
    let seconds = layer.timeout.as_deref().and_then(go_duration_seconds);
    match seconds {
        Some(s) => format!("{}m", s.div_ceil(60) + 5),
        None => "15m".into(),
    }
}

/// Seconds of a Go duration made of h, m and s parts (`1h30m`, `10m`, `90s`).
fn go_duration_seconds(text: &str) -> Option<u64> {
    let mut total = 0u64;
    let mut number = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let n: u64 = number.parse().ok()?;
        number.clear();
        total += n * match c {
            'h' => 3600,
            'm' => 60,
            's' => 1,
            _ => return None,
        };
    }
    number.is_empty().then_some(total)
}

/// Every word of a printed command goes through one quoting function: a layer's name and
/// namespace come from files, and must reach kubectl as one argument each, whatever they hold.
fn suspend(layer: &str, namespace: &str, on: bool) -> String {
    shell::command(&[
        "kubectl",
        "--namespace",
        namespace,
        "patch",
        "kustomization",
        layer,
        "--type",
        "merge",
        "--patch",
        &format!("{{\"spec\":{{\"suspend\":{on}}}}}"),
    ])
}

/// The ordered tear-down of a cell that may still run.
pub fn cell_steps(config: &Config, cell: &CellName, layers: &[Layer]) -> Vec<Step> {
    let chdir = format!("-chdir=terraform/cells/{}", cell.name);
    let init = if config.terraform.state_bucket.is_some() {
        shell::command(&["terraform", &chdir, "init"])
    } else {
        // The placeholders are the user's to fill in: not a command to paste as it is.
        format!(
            "{} -backend-config=\"bucket=<state-bucket>\" -backend-config=\"region=<bucket-region>\"",
            shell::command(&["terraform", &chdir, "init"])
        )
    };
    let mut steps = vec![
        Step {
            title: "Reach the cell's cluster, as one of cluster_access.admin_role_arns".into(),
            commands: vec![shell::command(&[
                "aws",
                "eks",
                "update-kubeconfig",
                "--region",
                &cell.region,
                "--name",
                &cell.name,
            ])],
        },
        Step {
            title: "Keep Flux from applying the layers again from Git".into(),
            commands: vec![suspend(FLUX_SYSTEM, FLUX_SYSTEM, true)],
        },
    ];
    let delete = |l: &Layer| {
        shell::command(&[
            "kubectl",
            "--namespace",
            &l.namespace,
            "delete",
            "kustomization",
            &l.name,
            "--wait",
            "--timeout",
            &delete_timeout(l),
        ])
    };
    // The first layer (the last deleted) runs the controllers that delete volumes and load
    // balancers in AWS: what the layers leave of those goes before it.
    if let Some((first, others)) = layers.split_last() {
        if !others.is_empty() {
            steps.push(Step {
                title: "Delete the layers, last first; each waits until what it applied is gone (deletionPolicy: WaitForTermination), while the controllers that remove load balancers, volumes and nodes still run".into(),
                commands: others.iter().map(delete).collect(),
            });
        }
        steps.push(Step {
            title: "Delete what outlives the layers while those controllers still run: volume claims (a StatefulSet's stay after it), LoadBalancer Services and Ingresses (their load balancers keep the VPC)".into(),
            commands: vec![
                "kubectl delete persistentvolumeclaims --all --all-namespaces --wait --timeout 10m".into(),
                "kubectl get services --all-namespaces -o jsonpath='{range .items[?(@.spec.type==\"LoadBalancer\")]}{.metadata.namespace} {.metadata.name}{\"\\n\"}{end}' | while read -r ns name; do kubectl --namespace \"$ns\" delete service \"$name\" --wait --timeout 10m; done".into(),
                "kubectl delete ingresses --all --all-namespaces --wait --timeout 10m".into(),
            ],
        });
        steps.push(Step {
            title: format!("Last, the layer those controllers run in ({})", first.name),
            commands: vec![delete(first)],
        });
    }
    steps.push(Step {
        title: "Destroy the cell's AWS resources (the stack's tear-down guard refuses while a layer, a PersistentVolume, a LoadBalancer Service or an Ingress still exists)".into(),
        commands: vec![
            init,
            "export TF_VAR_flux_git_ssh_private_key=\"$(cat <path-to>/flux-read-only)\"".into(),
            shell::command(&["terraform", &chdir, "destroy"]),
        ],
    });
    // A prod cluster has EKS deletion protection (cluster.tf, issue 19): turned off by an apply
    // of its own first, or the destroy fails once everything else is gone.
    if cell.environment == "prod"
        && let Some(destroy) = steps.last_mut()
    {
        let at = destroy.commands.len().saturating_sub(1);
        destroy.commands.insert(
            at,
            shell::command(&[
                "terraform",
                &chdir,
                "apply",
                "-var",
                "deletion_protection=false",
            ]),
        );
        if let Some(command) = destroy.commands.last_mut() {
            command.push_str(" -var deletion_protection=false");
        }
    }
    steps.push(Step {
        title: "Remove the stack from Git too, then merge".into(),
        commands: vec![shell::command(&[
            "cellgen",
            "remove-cell",
            &cell.name,
            "--terraform-destroyed",
        ])],
    });
    steps
}

/// The order that removes `component` from a running cell without leaving cloud resources
/// behind, when it owns some (`teardown` in its component.yaml); `None` otherwise.
pub fn component_steps(component: &Component, cell: &str, layers: &[String]) -> Option<Vec<Step>> {
    let teardown = component.spec.teardown.as_ref()?;
    let ordered: Vec<&String> = component
        .spec
        .layers
        .iter()
        .rev()
        .filter(|l| layers.contains(l))
        .collect();
    Some(vec![
        Step {
            title: format!(
                "Before merging: keep Flux from re-creating what you delete, while {} still runs",
                component.name
            ),
            commands: ordered
                .iter()
                .map(|l| suspend(l, FLUX_SYSTEM, true))
                .collect(),
        },
        Step {
            title: teardown.description.clone(),
            commands: teardown.commands.clone(),
        },
        Step {
            title: format!(
                "Merge this change, then let Flux prune {} from the cell",
                component.name
            ),
            commands: ordered
                .iter()
                .rev()
                .map(|l| suspend(l, FLUX_SYSTEM, false))
                .collect(),
        },
        Step {
            title: "Last, its identity and keys (nothing reads them any more)".into(),
            commands: vec![shell::command(&[
                "terraform",
                &format!("-chdir=terraform/cells/{cell}"),
                "apply",
            ])],
        },
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(go_duration_seconds("10m"), Some(600));
        assert_eq!(go_duration_seconds("1h30m"), Some(5400));
        assert_eq!(go_duration_seconds("90s"), Some(90));
        assert_eq!(go_duration_seconds("10"), None);
        assert_eq!(go_duration_seconds("1d"), None);
        let layer = |t: Option<&str>| Layer {
            name: "x".into(),
            namespace: FLUX_SYSTEM.into(),
            timeout: t.map(str::to_string),
            depends_on: Vec::new(),
        };
        assert_eq!(delete_timeout(&layer(Some("10m"))), "15m");
        assert_eq!(delete_timeout(&layer(Some("90s"))), "7m");
        assert_eq!(delete_timeout(&layer(None)), "15m");
    }
}
