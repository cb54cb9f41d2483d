//! Checks of everything a cell applies, across its layers: Flux objects against the Flux CRDs,
//! `dependsOn` targets and cycles, source references, the namespaces objects go to, and Secrets
//! committed in plain text. Each finding points at the source line to edit.

mod graph;
mod namespaces;

use camino::Utf8PathBuf;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::schema::{Schemas, Validations};
use crate::analysis::findings::Finding;
use crate::analysis::layer_check::{object_name, steps};
use crate::analysis::locate::SourceFiles;
use crate::analysis::locate::Step;
use crate::analysis::render::{BOOTSTRAP, RenderedCell, str_at, value_at};
use crate::model::names::METADATA_CONFIGMAP;
use crate::ports::kustomize::Resource;
pub use namespaces::{BUILT_IN_NAMESPACES, namespaced};

/// One object as Flux applies it, with where it came from.
struct Applied<'a> {
    object: &'a Value,
    kind: &'a str,
    name: &'a str,
    namespace: &'a str,
    /// API group (empty for core).
    group: &'a str,
    resource: &'a Resource,
    /// Index of its layer; `None` for the cell's directory.
    layer: Option<usize>,
    /// False when its substitution fails (reported as such): `object` is then the object as
    /// built, good to know what exists (a Namespace, a source) but not checked itself.
    checked: bool,
    /// The layer a finding about it breaks: its layer, or the layer it is (for the cell's
    /// directory's Flux Kustomizations).
    owner: Option<usize>,
    /// The substitution result `object` is, shared with other cells (see
    /// `Validations::validate_shared`).
    shared: Option<&'a Arc<Value>>,
}

impl<'a> Applied<'a> {
    fn new(
        object: &'a Value,
        resource: &'a Resource,
        layer: Option<usize>,
        checked: bool,
        owner: Option<usize>,
    ) -> Applied<'a> {
        let metadata = object.get("metadata");
        let meta = |k: &str| {
            metadata
                .and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .unwrap_or("")
        };
        let top = |k: &str| object.get(k).and_then(Value::as_str).unwrap_or("");
        Applied {
            object,
            kind: top("kind"),
            name: meta("name"),
            namespace: meta("namespace"),
            group: top("apiVersion").rsplit_once('/').map_or("", |(g, _)| g),
            resource,
            layer,
            checked,
            owner,
            shared: None,
        }
    }
    fn kind(&self) -> &'a str {
        self.kind
    }
    fn name(&self) -> &'a str {
        self.name
    }
    fn namespace(&self) -> &'a str {
        self.namespace
    }
    fn group(&self) -> &'a str {
        self.group
    }
    fn is(&self, group: &str, kind: &str) -> bool {
        self.group == group && self.kind == kind
    }
}

const KUSTOMIZE: &str = "kustomize.toolkit.fluxcd.io";
const HELM: &str = "helm.toolkit.fluxcd.io";
const SOURCE: &str = "source.toolkit.fluxcd.io";

/// Checks everything `cell` applies; findings get the cell and (where there is one) the layer.
/// `validations`: the command's, shared by its cells.
pub fn check_cell(
    rendered: &RenderedCell,
    cell: &str,
    sources: &mut SourceFiles,
    validations: &Validations,
    findings: &mut Vec<Finding>,
) {
    let mut applied = Vec::new();
    for resource in rendered.cell_resources() {
        let mut a = Applied::new(&resource.object, resource, None, true, None);
        if crate::analysis::render::layer::is_flux_kustomization(&resource.object) {
            a.owner = rendered
                .layers
                .iter()
                .position(|l| l.layer.name == a.name && l.layer.namespace == a.namespace);
        }
        applied.push(a);
    }
    for (i, layer) in rendered.layers.iter().enumerate() {
        for (resource, result) in layer.resources().iter().zip(layer.objects.iter()) {
            let shared = result.as_ref().ok();
            applied.push(Applied {
                shared,
                ..Applied::new(
                    shared.map_or(&resource.object, |o| &**o),
                    resource,
                    Some(i),
                    shared.is_some(),
                    Some(i),
                )
            });
        }
    }
    let mut checker = Checker {
        rendered,
        sources,
        validations,
        out: Vec::new(),
        namespaceless: BTreeMap::new(),
    };
    checker.schemas(&applied);
    checker.dependencies(&applied, KUSTOMIZE, "Kustomization");
    checker.dependencies(&applied, HELM, "HelmRelease");
    checker.source_refs(&applied);
    checker.cell_metadata_refs(&applied);
    checker.nested_kustomizations(&applied);
    checker.namespaces(&applied);
    checker.flush_namespaces();
    checker.plain_secrets(&applied);
    for (layer, finding) in checker.out {
        let finding = finding.in_cell(cell);
        findings.push(match layer {
            Some(i) => finding.in_layer(&rendered.layers[i].layer.name),
            None => finding,
        });
    }
}

/// Where objects go to a namespace that does not exist: (owner layer, file, line, namespace,
/// verb, fix) → the objects.
type Namespaceless = BTreeMap<
    (
        Option<usize>,
        Utf8PathBuf,
        Option<usize>,
        String,
        &'static str,
        String,
    ),
    Vec<String>,
>;

struct Checker<'a> {
    rendered: &'a RenderedCell,
    sources: &'a mut SourceFiles,
    validations: &'a Validations,
    out: Vec<(Option<usize>, Finding)>,
    namespaceless: Namespaceless,
}

impl Checker<'_> {
    /// The files an object's field may have been written in: its origin, the patches that
    /// changed it, and the Flux Kustomization (its `spec.patches`, `targetNamespace`, ...).
    fn files(&self, a: &Applied) -> Vec<Utf8PathBuf> {
        let mut files = vec![a.resource.origin.clone()];
        files.extend(a.resource.patched_by.iter().cloned());
        if let Some(i) = a.layer {
            files.push(self.rendered.layers[i].layer.file.clone());
        }
        files
    }

    fn at(
        &mut self,
        a: &Applied,
        path: &[Step],
        value: Option<&str>,
    ) -> (Utf8PathBuf, Option<usize>) {
        let files = self.files(a);
        self.sources
            .locate_field(&files, a.kind(), a.name(), path, value)
    }

    fn error(
        &mut self,
        a: &Applied,
        code: &'static str,
        path: &[&str],
        value: Option<&str>,
        message: String,
    ) {
        let (file, line) = self.at(a, &steps(path), value);
        self.out
            .push((a.owner, Finding::error(code, file, line, message)));
    }

    fn schemas(&mut self, applied: &[Applied]) {
        let schemas = Schemas::embedded();
        for a in applied.iter().filter(|a| a.checked) {
            if !schemas.knows_group(a.group()) {
                continue;
            }
            let violations = match a.shared {
                Some(object) => self.validations.validate_shared(schemas, object),
                None => self.validations.validate(schemas, a.object),
            };
            let Some(violations) = violations else {
                continue;
            };
            for v in violations {
                let (file, line) = self.at(a, &v.path.0, v.value.as_deref());
                let message = format!("{}: {}", object_name(a.object), v.message);
                self.out
                    .push((a.owner, Finding::error("flux-schema", file, line, message)));
            }
        }
    }

    /// Kustomizations rendered inside layers follow the same rules as the cell's own for
    /// `cell-metadata` (the layers themselves are checked with their layer).
    fn cell_metadata_refs(&mut self, applied: &[Applied]) {
        for a in applied
            .iter()
            .filter(|a| a.checked && a.layer.is_some() && a.is(KUSTOMIZE, "Kustomization"))
        {
            let refs =
                value_at(a.object, "/spec/postBuild/substituteFrom").and_then(Value::as_array);
            for (i, r) in refs.into_iter().flatten().enumerate() {
                if str_at(r, "/kind") != "ConfigMap" || str_at(r, "/name") != METADATA_CONFIGMAP {
                    continue;
                }
                let entry = i.to_string();
                if a.namespace() != BOOTSTRAP {
                    self.error(
                        a,
                        "substitute-namespace",
                        &["spec", "postBuild", "substituteFrom", &entry],
                        None,
                        format!(
                            "{} substitutes from {METADATA_CONFIGMAP}, but substituteFrom reads the Kustomization's own namespace and {METADATA_CONFIGMAP} is in `flux-system`: put the Kustomization in flux-system",
                            object_name(a.object)
                        ),
                    );
                }
                if r.get("optional") == Some(&Value::Bool(true)) {
                    self.error(
                        a,
                        "optional-cell-metadata",
                        &["spec", "postBuild", "substituteFrom", &entry, "optional"],
                        None,
                        format!(
                            "{} marks {METADATA_CONFIGMAP} `optional: true`: without it Flux applies every `${{...}}` literally. Remove `optional: true`",
                            object_name(a.object)
                        ),
                    );
                }
            }
        }
    }

    /// A Flux Kustomization a layer applies is checked as an object, but what it applies in
    /// turn is not rendered: say so rather than pass it silently.
    fn nested_kustomizations(&mut self, applied: &[Applied]) {
        for a in applied
            .iter()
            .filter(|a| a.checked && a.layer.is_some() && a.is(KUSTOMIZE, "Kustomization"))
        {
            let (file, line) = self.at(a, &steps(&["metadata", "name"]), None);
            let message = format!(
                "{} is applied by this layer: cellgen checks the object, but does not render what it applies in turn (spec.path `{}`). List it in the cell's directory to have it rendered as a layer",
                object_name(a.object),
                str_at(a.object, "/spec/path")
            );
            self.out.push((
                a.owner,
                Finding::warning("not-rendered", file, line, message),
            ));
        }
    }

    /// A `kind: Secret` with values, committed without SOPS encryption.
    fn plain_secrets(&mut self, applied: &[Applied]) {
        for a in applied {
            if a.kind() != "Secret" || !a.group().is_empty() || a.object.get("sops").is_some() {
                continue;
            }
            let keys: Vec<&str> = ["data", "stringData"]
                .iter()
                .flat_map(|f| a.object.get(*f).and_then(Value::as_object))
                .flat_map(|m| m.keys().map(String::as_str))
                .collect();
            if keys.is_empty() {
                continue;
            }
            let field = if a
                .object
                .get("data")
                .and_then(Value::as_object)
                .is_some_and(|m| !m.is_empty())
            {
                "data"
            } else {
                "stringData"
            };
            let (file, mut line) = self.at(a, &steps(&[field]), None);
            if line.is_none() {
                line = crate::model::config::line_of(self.sources.text(&file), "secretGenerator");
            }
            let message = format!(
                "{} holds values ({}) in plain text in Git, and Flux applies them as they are: cell repositories hold identifiers only. Encrypt it with SOPS (a `sops:` stanza) or deliver the values through External Secrets",
                object_name(a.object),
                keys.join(", ")
            );
            self.out
                .push((a.owner, Finding::error("secret-value", file, line, message)));
        }
    }
}
