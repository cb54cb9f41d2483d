//! Which version of a component's chart each cell runs, and `set-version`'s change.
//!
//! A component's chart is its HelmRelease's `spec.chart.spec.version`, or, for a HelmRelease
//! whose `chartRef` names an OCIRepository, that repository's `spec.ref.tag`; the shared
//! definition in `components/<name>/<layer>/` says it once for every cell. A cell that runs
//! another version says so in its own Flux Kustomization of that layer: one `spec.patches`
//! entry replacing that field (Flux applies `spec.patches` to what the layer builds, components
//! included). When every cell running the component is on one version, that version goes into
//! the shared definition and no cell keeps an entry: the repository converges back to a single
//! definition.

use camino::{Utf8Path, Utf8PathBuf};
use std::collections::BTreeMap;

use crate::error::CellgenError;
use crate::model::catalog::{COMPONENTS_DIR, Component};
use crate::model::config::line_of;
use crate::model::repo::cell_flux_dir;
use crate::ports::edit::yaml::patches::{self, PatchTarget};
use crate::writer::plan::Plan;

type Value = yaml_serde::Value;

const HELM_GROUP: &str = "helm.toolkit.fluxcd.io";
const SOURCE_GROUP: &str = "source.toolkit.fluxcd.io";
const CHART_VERSION: &[&str] = &["spec", "chart", "spec", "version"];
const OCI_TAG: &[&str] = &["spec", "ref", "tag"];

/// Where a component's chart version is.
#[derive(Debug, Clone)]
pub struct Chart {
    pub component: String,
    /// The layer of the component (and of the cells' Flux Kustomization file) holding it.
    pub layer: String,
    /// The shared file, e.g. components/cert-manager/controllers/helmrelease.yaml.
    pub file: Utf8PathBuf,
    pub line: Option<usize>,
    /// The object and field a cell's patch replaces.
    pub target: PatchTarget,
    /// The version of the shared definition.
    pub version: String,
}

impl Chart {
    /// Whether the version is an OCI tag (else a Helm chart version).
    pub fn is_oci_tag(&self) -> bool {
        self.target.kind == "OCIRepository"
    }

    fn field(&self) -> &'static [&'static str] {
        if self.is_oci_tag() {
            OCI_TAG
        } else {
            CHART_VERSION
        }
    }

    pub fn location(&self) -> String {
        match self.line {
            Some(line) => format!("{}:{line}", self.file),
            None => self.file.to_string(),
        }
    }
}

fn invalid(path: impl Into<Utf8PathBuf>, message: impl Into<String>) -> CellgenError {
    CellgenError::InvalidFile {
        path: path.into(),
        message: message.into(),
    }
}

fn str_at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter()
        .try_fold(value, |v, k| v.get(*k))
        .and_then(Value::as_str)
}

/// The YAML documents of a file, empty ones left out.
fn documents(text: &str) -> Result<Vec<Value>, crate::ports::yaml::YamlError> {
    let mut docs: Vec<Value> = crate::ports::yaml::documents(text)?;
    docs.retain(|v| !v.is_null());
    Ok(docs)
}

/// Whether version `to` is older than `from`, both semver-like (`v1.21.0`, `1.19.1`); None
/// when either is no such version (a tag like `latest`), which nothing can tell.
pub fn is_older(to: &str, from: &str) -> Option<bool> {
    let parse = |v: &str| -> Option<Vec<u64>> {
        let core = v.trim_start_matches('v').split(['-', '+']).next()?;
        core.split('.').map(|n| n.parse().ok()).collect()
    };
    let (to, from) = (parse(to)?, parse(from)?);
    Some(to < from)
}

/// The chart version (or OCI tag) a component's files say, as `list components` shows it: the
/// HelmRelease's `spec.chart.spec.version`, else an OCIRepository's `spec.ref.tag`.
pub fn version_in<'a>(texts: impl IntoIterator<Item = &'a str>) -> Option<String> {
    // A file that does not parse shows no version here; `check` names it.
    let docs: Vec<Value> = texts
        .into_iter()
        .filter_map(|t| documents(t).ok())
        .flatten()
        .collect();
    let kind = |d: &Value, k: &str| d.get("kind").and_then(Value::as_str) == Some(k);
    docs.iter()
        .filter(|d| kind(d, "HelmRelease"))
        .find_map(|d| str_at(d, CHART_VERSION))
        .or_else(|| {
            docs.iter()
                .filter(|d| kind(d, "OCIRepository"))
                .find_map(|d| str_at(d, OCI_TAG))
        })
        .map(str::to_string)
}

/// The manifests of the component in the repository, by layer: (layer, file, documents).
fn manifests(
    plan: &Plan,
    component: &Component,
) -> Result<Vec<(String, Utf8PathBuf, Vec<Value>)>, CellgenError> {
    let mut out = Vec::new();
    for layer in &component.spec.layers {
        let dir = Utf8Path::new(COMPONENTS_DIR)
            .join(&component.name)
            .join(layer);
        let Ok(entries) = crate::root::disk::read_dir(plan.root().join(&dir)) else {
            continue;
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| (n.ends_with(".yaml") || n.ends_with(".yml")) && n != "kustomization.yaml")
            .collect();
        names.sort();
        for name in names {
            let file = dir.join(name);
            if let Some(text) = plan.read(&file)? {
                let docs = documents(&text).map_err(CellgenError::yaml(&file))?;
                out.push((layer.clone(), file, docs));
            }
        }
    }
    Ok(out)
}

/// Finds the component's chart in the repository's copy of it.
pub fn locate(plan: &Plan, component: &Component) -> Result<Chart, CellgenError> {
    let name = &component.name;
    let files = manifests(plan, component)?;
    if files.is_empty() {
        return Err(invalid(
            Utf8Path::new(COMPONENTS_DIR).join(name),
            format!(
                "no cell runs `{name}` (the repository has no copy of it): add it to a cell first"
            ),
        ));
    }
    let is = |v: &Value, kind: &str, group: &str| {
        v.get("kind").and_then(Value::as_str) == Some(kind)
            && v.get("apiVersion")
                .and_then(Value::as_str)
                .is_some_and(|a| a.starts_with(&format!("{group}/")))
    };
    let releases: Vec<(&String, &Utf8PathBuf, &Value)> = files
        .iter()
        .flat_map(|(layer, file, docs)| docs.iter().map(move |d| (layer, file, d)))
        .filter(|(_, _, d)| is(d, "HelmRelease", HELM_GROUP))
        .collect();
    let (layer, file, release) = match releases.as_slice() {
        [one] => *one,
        [] => {
            return Err(invalid(
                Utf8Path::new(COMPONENTS_DIR).join(name),
                format!(
                    "component `{name}` has no HelmRelease: `set-version` moves a chart's version"
                ),
            ));
        }
        many => {
            let names: Vec<String> = many
                .iter()
                .map(|(_, f, d)| {
                    format!(
                        "{} ({})",
                        str_at(d, &["metadata", "name"]).unwrap_or("?"),
                        f
                    )
                })
                .collect();
            return Err(invalid(
                Utf8Path::new(COMPONENTS_DIR).join(name),
                format!(
                    "component `{name}` has {} HelmReleases ({}); `set-version` moves one chart, and cannot tell which",
                    many.len(),
                    names.join(", ")
                ),
            ));
        }
    };
    let release_name = str_at(release, &["metadata", "name"]).unwrap_or_default();
    let release_ns = str_at(release, &["metadata", "namespace"]).map(str::to_string);
    let text = plan.read(file)?.unwrap_or_default();
    if let Some(version) = str_at(release, CHART_VERSION) {
        return Ok(Chart {
            component: name.clone(),
            layer: layer.clone(),
            file: file.clone(),
            line: line_of(&text, &format!("version: {version}"))
                .or_else(|| line_of(&text, "version:")),
            target: PatchTarget {
                group: HELM_GROUP.into(),
                kind: "HelmRelease".into(),
                name: release_name.into(),
                namespace: release_ns,
                path: "/spec/chart/spec/version".into(),
            },
            version: version.into(),
        });
    }
    let reference = release.get("spec").and_then(|s| s.get("chartRef"));
    let ref_kind = reference.and_then(|r| str_at(r, &["kind"]));
    if ref_kind != Some("OCIRepository") {
        return Err(invalid(
            file,
            format!(
                "HelmRelease `{release_name}` has neither `spec.chart.spec.version` nor a `chartRef` to an OCIRepository: `set-version` moves one of those"
            ),
        ));
    }
    let oci_name = reference
        .and_then(|r| str_at(r, &["name"]))
        .unwrap_or_default();
    let oci_ns = reference
        .and_then(|r| str_at(r, &["namespace"]))
        .map(str::to_string)
        .or_else(|| str_at(release, &["metadata", "namespace"]).map(str::to_string));
    let found = files.iter().find_map(|(layer, file, docs)| {
        docs.iter()
            .find(|d| {
                is(d, "OCIRepository", SOURCE_GROUP)
                    && str_at(d, &["metadata", "name"]) == Some(oci_name)
                    && str_at(d, &["metadata", "namespace"]).map(str::to_string) == oci_ns
            })
            .map(|d| (layer, file, d))
    });
    let Some((layer, file, oci)) = found else {
        return Err(invalid(
            file,
            format!(
                "HelmRelease `{release_name}` takes its chart from OCIRepository `{oci_name}`, which component `{name}` does not define"
            ),
        ));
    };
    let Some(tag) = str_at(oci, OCI_TAG) else {
        return Err(invalid(
            file,
            format!(
                "OCIRepository `{oci_name}` does not pin `spec.ref.tag` (a semver range or a digest selects its version): `set-version` sets a tag"
            ),
        ));
    };
    let text = plan.read(file)?.unwrap_or_default();
    Ok(Chart {
        component: name.clone(),
        layer: layer.clone(),
        file: file.clone(),
        line: line_of(&text, &format!("tag: {tag}")).or_else(|| line_of(&text, "tag:")),
        target: PatchTarget {
            group: SOURCE_GROUP.into(),
            kind: "OCIRepository".into(),
            name: oci_name.into(),
            namespace: oci_ns,
            path: "/spec/ref/tag".into(),
        },
        version: tag.into(),
    })
}

/// Why `version` cannot be the chart's version: a Helm chart version is semver (with an
/// optional `v`, which Helm accepts); an OCI tag follows the distribution spec's rule.
pub fn version_problem(chart: &Chart, version: &str) -> Option<String> {
    if chart.is_oci_tag() {
        let ok = regex::Regex::new(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")
            .expect("a valid regex")
            .is_match(version);
        return (!ok).then(|| {
            format!(
                "`{version}` is not an OCI tag (letters, digits, `_`, `.`, `-`; at most 128, not starting with `.` or `-`), e.g. {}",
                chart.version
            )
        });
    }
    let semver = regex::Regex::new(
        r"^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$",
    )
    .expect("a valid regex");
    (!semver.is_match(version)).then(|| {
        format!(
            "`{version}` is not a chart version: Helm charts are versioned MAJOR.MINOR.PATCH (semver, optionally with a `v` and a pre-release), e.g. {}",
            chart.version
        )
    })
}

/// The version a cell runs, and whether it is the cell's own (a `spec.patches` entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellVersion {
    pub version: String,
    pub own: bool,
}

fn layer_file(cell: &str, chart: &Chart) -> Utf8PathBuf {
    cell_flux_dir(cell).join(format!("{}.yaml", chart.layer))
}

/// The version `cell` runs. A patch of the user's own that may change the same field makes it
/// unknowable without rendering, and is an error naming it.
pub fn cell_version(plan: &Plan, cell: &str, chart: &Chart) -> Result<CellVersion, CellgenError> {
    let path = layer_file(cell, chart);
    let Some(text) = plan.read(&path)? else {
        return Ok(CellVersion {
            version: chart.version.clone(),
            own: false,
        });
    };
    let entries = patches::spec_patches(&text).map_err(|e| invalid(&path, e.to_string()))?;
    let mut own = None;
    let field = chart.field().last().copied().unwrap_or_default();
    for (i, entry) in entries.iter().enumerate() {
        if let Some(v) = chart.target.value_of(entry) {
            own = Some(v);
            continue;
        }
        let target_kind = str_at(entry, &["target", "kind"]);
        let target_name = str_at(entry, &["target", "name"]);
        let text_of = yaml_serde::to_string(entry).unwrap_or_default();
        let may_touch = target_kind.is_none_or(|k| k == chart.target.kind)
            && target_name.is_none_or(|n| n == chart.target.name || n.contains(['*', '.', '^']))
            && text_of.contains(field);
        if may_touch {
            return Err(invalid(
                &path,
                format!(
                    "line {}: spec.patches entry {} may set {}'s `{}` too, so cellgen cannot tell which version the cell runs: move the version into cellgen's own entry (`cellgen set-version`) or drop it from yours",
                    line_of(&text, "patches:").unwrap_or(1),
                    i + 1,
                    chart.target.name,
                    chart.field().join(".")
                ),
            ));
        }
    }
    Ok(match own {
        Some(version) => CellVersion { version, own: true },
        None => CellVersion {
            version: chart.version.clone(),
            own: false,
        },
    })
}

/// What `set_version` changed.
#[derive(Debug, Default)]
pub struct SetOutcome {
    /// (cell, from, to) for each cell whose version moved.
    pub moved: Vec<(String, String, String)>,
    /// The shared definition's version before and after, when it moved.
    pub shared: Option<(String, String)>,
    /// Cells that run their own version after the change.
    pub own: Vec<String>,
}

/// Moves `selected` (cells running the component) to `version`; `running` is every cell that
/// runs it. One change: cells' entries, and the shared definition when all agree.
pub fn set_version(
    plan: &mut Plan,
    chart: &Chart,
    running: &[String],
    selected: &[String],
    version: &str,
) -> Result<SetOutcome, CellgenError> {
    let mut current: BTreeMap<&str, CellVersion> = BTreeMap::new();
    for cell in running {
        current.insert(cell, cell_version(plan, cell, chart)?);
    }
    let desired: BTreeMap<&str, String> = current
        .iter()
        .map(|(cell, v)| {
            let to = if selected.iter().any(|s| s == cell) {
                version.to_string()
            } else {
                v.version.clone()
            };
            (*cell, to)
        })
        .collect();
    let mut outcome = SetOutcome::default();
    let mut agreed: Vec<&String> = desired.values().collect();
    agreed.dedup();
    let shared = match agreed.as_slice() {
        [one] => (*one).clone(),
        _ => chart.version.clone(),
    };
    if shared != chart.version {
        let text = plan.read(&chart.file)?.unwrap_or_default();
        let docs = documents(&text).map_err(CellgenError::yaml(&chart.file))?;
        if docs.len() != 1 {
            return Err(invalid(
                &chart.file,
                format!(
                    "holds more than one document; cellgen edits {}'s version in a file of its own: move it to one",
                    chart.target.name
                ),
            ));
        }
        let edited = patches::set_scalar(&text, chart.field(), &shared)
            .map_err(|e| invalid(&chart.file, e.to_string()))?;
        plan.write(chart.file.clone(), edited)?;
        outcome.shared = Some((chart.version.clone(), shared.clone()));
    }
    for (cell, to) in &desired {
        let path = layer_file(cell, chart);
        let Some(text) = plan.read(&path)? else {
            continue;
        };
        let edited = if *to == shared {
            patches::remove_version_patch(&text, &chart.target)
        } else {
            outcome.own.push(cell.to_string());
            patches::set_version_patch(&text, &chart.target, to)
        }
        .map_err(|e| invalid(&path, e.to_string()))?;
        if edited != text {
            plan.write(path, edited)?;
        }
        let from = &current[cell].version;
        if from != to {
            outcome
                .moved
                .push((cell.to_string(), from.clone(), to.clone()));
        }
    }
    Ok(outcome)
}

/// Whether `text` is `original` (a file cellgen materialised) with at most its chart version
/// changed, as `set-version` changes it: such a file is still cellgen's.
pub fn same_but_version(text: &str, original: &str) -> bool {
    if text == original {
        return true;
    }
    let Ok(docs) = documents(original) else {
        return false;
    };
    let [doc] = docs.as_slice() else {
        return false;
    };
    let Ok(now) = crate::ports::yaml::from_str::<Value>(text) else {
        return false;
    };
    [CHART_VERSION, OCI_TAG].iter().any(|field| {
        str_at(doc, field).is_some()
            && str_at(&now, field).is_some_and(|v| {
                patches::set_scalar(original, field, v).is_ok_and(|edited| edited == text)
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_whose_version_moved_is_still_cellgens() {
        let original =
            "kind: HelmRelease\nspec:\n  chart:\n    spec:\n      version: v1.20.2 # pinned\n";
        assert!(same_but_version(original, original));
        assert!(same_but_version(
            &original.replace("v1.20.2", "v1.21.0"),
            original
        ));
        assert!(!same_but_version(
            &original.replace("pinned", "mine"),
            original
        ));
        assert!(!same_but_version(
            &original
                .replace("v1.20.2", "v1.21.0")
                .replace("pinned", "x"),
            original
        ));
    }
}
