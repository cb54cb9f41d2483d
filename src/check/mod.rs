//! `cellgen check`: every layer of every cell rendered offline with a sample cell-metadata
//! ConfigMap in strict mode, plus the contract between Terraform and Flux. Returns findings; the
//! command prints them.

pub mod contract;
pub mod findings;
pub mod markers;
pub mod network;
pub mod secrets;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::catalog::Catalog;
use crate::components::{cell_components, resolve_ref};
use crate::config::{CONFIG_FILE, line_of};
use crate::error::CellgenError;
use crate::kustomize::{BuildError, Mode, Resource};
use crate::plan::Plan;
use crate::render::{BuildCache, FluxLayer, SubstituteRef, cell_layers};
use crate::repo::Repo;
use crate::substitute::flux::substitution_disabled;
use crate::substitute::{SubstError, Vars, analyze, to_flux_yaml};
use crate::suggest;
pub use findings::{Finding, Report, Severity};

/// Name of the ConfigMap Terraform writes and every layer substitutes from.
pub const METADATA_CONFIGMAP: &str = "cell-metadata";

pub struct CheckOptions {
    /// Cells to check; empty means all.
    pub cells: Vec<String>,
    /// Values that replace the sample's (from `--values`).
    pub overrides: BTreeMap<String, String>,
    pub mode: Mode,
}

pub fn run(repo: &Repo, catalog: &Catalog, options: &CheckOptions) -> Result<Report, CellgenError> {
    run_observed(repo, catalog, options, &mut |_, _, _| {})
}

/// `run`, telling `on_cell(done, total, cell)` before each cell is checked (for a progress bar).
pub fn run_observed(
    repo: &Repo,
    catalog: &Catalog,
    options: &CheckOptions,
    on_cell: &mut dyn FnMut(usize, usize, &str),
) -> Result<Report, CellgenError> {
    let all = repo.cells()?;
    for name in &options.cells {
        if !all.contains(name) {
            return Err(CellgenError::UnknownCell {
                name: name.clone(),
                hint: suggest::hint(name, all.iter().map(String::as_str)),
                cells: all,
            });
        }
    }
    let cells = if options.cells.is_empty() {
        all.clone()
    } else {
        options.cells.clone()
    };
    let mut report = Report {
        cells: cells.clone(),
        findings: Vec::new(),
    };
    let mut cache = BuildCache::new(&repo.root, options.mode);
    let mut sources = SourceFiles::new(&repo.root);
    let mut used: BTreeSet<String> = BTreeSet::new();
    let plan = Plan::new(&repo.root);
    // Whether every layer of every cell was rendered; otherwise a key may look unused only
    // because the layer that uses it was not.
    let mut complete = true;
    for (done, cell) in cells.iter().enumerate() {
        on_cell(done, cells.len(), cell);
        let components = cell_components(&plan, &repo.config, cell).unwrap_or_default();
        let sample = contract::check_cell(
            &repo.root,
            &repo.config,
            catalog,
            cell,
            &components,
            &options.overrides,
            &mut report.findings,
        );
        let layers = match cell_layers(&repo.root, cell) {
            Ok(layers) => layers,
            Err(e) => {
                report
                    .findings
                    .push(Finding::error("invalid-cell", e.file, e.line, e.message).in_cell(cell));
                complete = false;
                continue;
            }
        };
        // Key names Flux rejects are reported on their line in cell-metadata.tf by the contract
        // check; rendering with them would repeat that once per layer, at no line, and hide the
        // layers' own findings. (An invalid name from --values is still reported per layer.)
        let mut data = sample.data;
        data.retain(|k, _| crate::keys::is_valid_key_name(k) || options.overrides.contains_key(k));
        for layer in &layers {
            let mut findings = Vec::new();
            complete &= check_layer(
                &repo.root,
                layer,
                &data,
                &mut cache,
                &mut sources,
                &mut used,
                &mut findings,
            );
            report.findings.extend(
                findings
                    .into_iter()
                    .map(|f| f.in_cell(cell).in_layer(&layer.name)),
            );
        }
    }
    network::check(&repo.root, &all, &cells, &mut report.findings);
    markers::check(&repo.root, &repo.config, &cells, &mut report.findings);
    if options.cells.is_empty() && !cells.is_empty() && complete {
        let config_text = std::fs::read_to_string(repo.root.join(CONFIG_FILE)).unwrap_or_default();
        for key in repo.config.keys.keys().filter(|k| !used.contains(*k)) {
            report.findings.push(Finding::warning(
                "unused-key",
                CONFIG_FILE,
                line_of(&config_text, &format!("{key}:")),
                format!("no manifest of any cell uses `${{{key}}}`: drop it from the contract (and the cells' ConfigMaps) if nothing needs it"),
            ));
        }
    }
    report.normalise();
    Ok(report)
}

/// Checks one layer of a cell; false when its objects could not be rendered.
fn check_layer(
    root: &Path,
    layer: &FluxLayer,
    sample: &BTreeMap<String, String>,
    cache: &mut BuildCache,
    sources: &mut SourceFiles,
    used: &mut BTreeSet<String>,
    findings: &mut Vec<Finding>,
) -> bool {
    let file = layer.file.clone();
    let line = |needle: &str| line_of(&layer.text, needle);
    if !layer
        .substitute_from
        .iter()
        .any(SubstituteRef::is_cell_metadata)
    {
        findings.push(Finding::error(
            "no-substitute-from",
            &file,
            line("postBuild").or(line("spec:")),
            format!("Flux Kustomization `{}` does not substitute from the {METADATA_CONFIGMAP} ConfigMap: add `postBuild.substituteFrom: [{{kind: ConfigMap, name: {METADATA_CONFIGMAP}}}]`", layer.name),
        ));
    }
    let mut components_ok = true;
    for component in &layer.components {
        if let Some(problem) = component_problem(root, &layer.build_path(), component) {
            components_ok = false;
            findings.push(Finding::error(
                "bad-component",
                &file,
                line(component),
                format!("component `{component}` of `{}`: {problem}", layer.name),
            ));
        }
    }
    if !components_ok {
        return false;
    }

    let built = cache.build(layer);
    let resources = match built.as_ref() {
        Ok(resources) => resources,
        Err(e) => {
            let (at, at_line) = build_error_location(e, &file);
            findings.push(Finding::error(
                "build-failed",
                at,
                at_line,
                format!("building `{}` ({}) failed: {e}", layer.name, layer.path),
            ));
            return false;
        }
    };

    let unknown_sources: Vec<String> = layer
        .substitute_from
        .iter()
        .filter(|s| !s.optional && !s.is_cell_metadata())
        .map(|s| format!("{} {}", s.kind, s.name))
        .collect();
    let post_build = layer.post_build(&|s| s.is_cell_metadata().then(|| sample.clone()));
    for source in unknown_sources {
        findings.push(Finding::warning(
            "unknown-source",
            &file,
            line("substituteFrom"),
            format!("`{}` also substitutes from {source}, which cellgen cannot see: its keys count as missing (mark it `optional: true` or give its keys with --values)", layer.name),
        ));
    }
    let vars = post_build.vars();
    if let Some(bad) = vars.0.keys().find(|k| !crate::keys::is_valid_key_name(k)) {
        findings.push(Finding::error(
            "invalid-key-name",
            &file,
            line(bad),
            SubstError::InvalidVarName { name: bad.clone() }.flux_message(),
        ));
        return false;
    }
    if vars.is_empty() && !post_build.strategy_always {
        return true; // Flux does not substitute at all then.
    }
    for resource in resources {
        check_object(resource, &vars, sources, used, findings);
    }
    true
}

fn check_object(
    resource: &Resource,
    vars: &Vars,
    sources: &mut SourceFiles,
    used: &mut BTreeSet<String>,
    findings: &mut Vec<Finding>,
) {
    if substitution_disabled(&resource.object) {
        return;
    }
    let text = to_flux_yaml(&resource.object);
    let analysis = analyze(&text);
    let object = object_name(&resource.object);
    for r in &analysis.refs {
        used.insert(r.name.clone());
        if r.has_default || vars.get(&r.name).is_some() {
            continue;
        }
        let (file, line) = sources.locate(resource, &format!("${{{}", r.name));
        let hint = suggest::hint(&r.name, vars.0.keys().map(String::as_str));
        findings.push(Finding::error(
            "missing-key",
            file,
            line,
            format!("`{}` in {object} asks for `{}`, which cell-metadata does not have (strict mode fails the reconciliation).{hint}", r.text, r.name),
        ));
    }
    for error in &analysis.errors {
        let offset = error.offset().unwrap_or(0);
        let snippet: String = text
            .get(offset..)
            .unwrap_or("")
            .chars()
            .take_while(|c| *c != '\n')
            .take(40)
            .collect();
        let (file, line) = sources.locate(resource, snippet.split('}').next().unwrap_or(&snippet));
        findings.push(Finding::error(
            "bad-substitution",
            file,
            line,
            format!("{} in {object}: `{snippet}`", error.flux_message()),
        ));
    }
    if analysis.errors.is_empty()
        && let Err(error) = crate::substitute::substitute_object(
            &resource.object,
            vars,
            &crate::substitute::SubstituteOptions {
                strict: true,
                strategy_always: true,
            },
        )
        && !matches!(
            error,
            SubstError::VariableNotSet { .. } | SubstError::Syntax { .. }
        )
    {
        let (file, line) = sources.locate(resource, "${");
        findings.push(Finding::error(
            "bad-substitution",
            file,
            line,
            format!("{} in {object}", error.flux_message()),
        ));
    }
}

fn object_name(object: &serde_json::Value) -> String {
    let get = |p: &str| object.pointer(p).and_then(|v| v.as_str()).unwrap_or("");
    let namespace = get("/metadata/namespace");
    format!(
        "{} {}{}",
        get("/kind"),
        if namespace.is_empty() {
            String::new()
        } else {
            format!("{namespace}/")
        },
        get("/metadata/name")
    )
}

/// What is wrong with a `spec.components` entry, if anything.
fn component_problem(root: &Path, layer_path: &str, component: &str) -> Option<String> {
    let Some(resolved) = resolve_ref(layer_path, component) else {
        return Some("it points outside the repository".into());
    };
    let dir = root.join(&resolved);
    if !dir.is_dir() {
        return Some(format!(
            "{} does not exist (paths are relative to the layer's spec.path)",
            resolved.display()
        ));
    }
    let Some(kustomization) = ["kustomization.yaml", "kustomization.yml", "Kustomization"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
    else {
        return Some(format!("{} has no kustomization.yaml", resolved.display()));
    };
    let text = std::fs::read_to_string(&kustomization).unwrap_or_default();
    let kind = yaml_serde::from_str::<yaml_serde::Value>(&text)
        .ok()
        .and_then(|v| v.get("kind").and_then(|k| k.as_str().map(String::from)));
    (kind.as_deref() != Some("Component")).then(|| {
        format!(
            "{} is not a Kustomize Component (kind: {})",
            resolved.display(),
            kind.as_deref().unwrap_or("Kustomization")
        )
    })
}

fn build_error_location(error: &BuildError, fallback: &Path) -> (PathBuf, Option<usize>) {
    match error {
        BuildError::Unsupported { file, .. } => (file.clone(), None),
        BuildError::Yaml { file, line, .. } => (file.clone(), *line),
        _ => (fallback.to_path_buf(), None),
    }
}

/// Source texts, read once, to point a finding at the line a `${...}` was written on.
struct SourceFiles {
    root: PathBuf,
    texts: HashMap<PathBuf, String>,
}

impl SourceFiles {
    fn new(root: &Path) -> SourceFiles {
        SourceFiles {
            root: root.to_path_buf(),
            texts: HashMap::new(),
        }
    }

    fn locate(&mut self, resource: &Resource, needle: &str) -> (PathBuf, Option<usize>) {
        for file in std::iter::once(&resource.origin).chain(&resource.patched_by) {
            let root = &self.root;
            let text = self
                .texts
                .entry(file.clone())
                .or_insert_with(|| std::fs::read_to_string(root.join(file)).unwrap_or_default());
            if let Some(line) = source_line_of(text, needle) {
                return (file.clone(), Some(line));
            }
        }
        (resource.origin.clone(), None)
    }
}

/// The first line holding `needle` where it is not cut out of a longer name (`${cluster_nam`
/// must not match `${cluster_name}`), preferring lines that are not YAML comments: Flux never
/// substitutes a comment, kustomize drops them first.
fn source_line_of(text: &str, needle: &str) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let ends_in_name = needle.ends_with(is_name);
    let holds = |line: &str| {
        line.match_indices(needle)
            .any(|(at, _)| !ends_in_name || !line[at + needle.len()..].starts_with(is_name))
    };
    let lines = || text.lines().enumerate();
    lines()
        .find(|(_, l)| !l.trim_start().starts_with('#') && holds(l))
        .or_else(|| lines().find(|(_, l)| holds(l)))
        .map(|(i, _)| i + 1)
}

#[cfg(test)]
mod tests {
    use super::source_line_of;

    #[test]
    fn source_line_of_respects_name_ends_and_skips_comments() {
        let text = "# uses ${cluster_nam}\na: ${cluster_name}\nb: ${cluster_nam}\nc: ${\n";
        assert_eq!(source_line_of(text, "${cluster_nam"), Some(3));
        assert_eq!(source_line_of(text, "${cluster_name"), Some(2));
        assert_eq!(source_line_of(text, "${"), Some(2));
        assert_eq!(source_line_of("# only ${x}\n", "${x"), Some(1));
        assert_eq!(source_line_of("a: ${xy}\n", "${x"), None);
        assert_eq!(source_line_of("a\n", ""), None);
    }
}
