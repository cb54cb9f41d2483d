//! A `kustomize.toolkit.fluxcd.io/v1` Kustomization as cellgen renders it: every field that
//! changes what kustomize-controller applies, and the fields cellgen cannot apply.

use camino::Utf8PathBuf;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use crate::ports::kustomize::{FluxFields, FluxImage, FluxPatch};

/// The API group of Flux Kustomizations.
pub const KUSTOMIZE_GROUP: &str = "kustomize.toolkit.fluxcd.io";
/// Name and namespace of the GitRepository and Kustomization that sync a cell: the FluxInstance
/// names them after its namespace (flux-operator `internal/builder/templates.go`), as `flux
/// bootstrap` did.
pub const BOOTSTRAP: &str = crate::model::names::FLUX_SYSTEM;

/// A Flux Kustomization of a cell.
#[derive(Debug, Clone)]
pub struct FluxLayer {
    pub name: String,
    /// `metadata.namespace` (empty when the object has none).
    pub namespace: String,
    /// Repository-relative file that declares it.
    pub file: Utf8PathBuf,
    /// The object as the cell's directory renders it (shared with the build).
    pub object: Arc<Value>,
    /// `spec.path` as written.
    pub path: String,
    pub source_ref: Option<ObjectRef>,
    pub depends_on: Vec<ObjectRef>,
    /// What kustomize-controller writes into the kustomization at `spec.path`.
    pub flux: FluxFields,
    /// `spec.commonMetadata`, set on every object after substitution.
    pub common_labels: BTreeMap<String, String>,
    pub common_annotations: BTreeMap<String, String>,
    /// `spec.postBuild`; `None` when the object has none (Flux then substitutes nothing).
    pub post_build: Option<PostBuildSpec>,
    /// Fields that change what Flux applies and that cellgen cannot reproduce.
    pub unsupported: Vec<Unsupported>,
}

/// A reference to another object by kind, name and namespace (defaulted to the referrer's).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectRef {
    pub kind: String,
    pub name: String,
    pub namespace: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PostBuildSpec {
    pub substitute: BTreeMap<String, String>,
    pub substitute_from: Vec<SubstituteRef>,
    /// `substituteStrategy: Always`.
    pub strategy_always: bool,
}

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct SubstituteRef {
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub optional: bool,
}

impl SubstituteRef {
    /// Whether this is the `cell-metadata` ConfigMap Terraform writes.
    pub fn is_cell_metadata(&self) -> bool {
        self.kind == "ConfigMap" && self.name == crate::model::names::METADATA_CONFIGMAP
    }
}

/// A field cellgen cannot apply, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    /// Field path, e.g. `spec.decryption`.
    pub field: String,
    pub reason: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawMetadata {
    name: String,
    namespace: String,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct RawSpec {
    path: String,
    source_ref: Option<RawRef>,
    depends_on: Vec<RawRef>,
    target_namespace: Option<String>,
    name_prefix: Option<String>,
    name_suffix: Option<String>,
    patches: Vec<FluxPatch>,
    components: Vec<String>,
    ignore_missing_components: bool,
    images: Vec<FluxImage>,
    build_metadata: Vec<String>,
    common_metadata: Option<RawCommonMetadata>,
    post_build: Option<RawPostBuild>,
    decryption: Option<Value>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawRef {
    kind: String,
    name: String,
    namespace: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawCommonMetadata {
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct RawPostBuild {
    substitute: BTreeMap<String, String>,
    substitute_from: Vec<SubstituteRef>,
    substitute_strategy: Option<String>,
}

/// Whether `object` is a Flux Kustomization (any version; the schema check rejects the ones the
/// CRDs do not serve).
pub fn is_flux_kustomization(object: &Value) -> bool {
    object.get("kind").and_then(Value::as_str) == Some("Kustomization")
        && object
            .get("apiVersion")
            .and_then(Value::as_str)
            .is_some_and(|v| v.starts_with(&format!("{KUSTOMIZE_GROUP}/")))
}

impl FluxLayer {
    /// Reads a Flux Kustomization object; the error names the field that does not fit.
    pub fn parse(object: &Arc<Value>, file: Utf8PathBuf) -> Result<FluxLayer, String> {
        let metadata: RawMetadata = match object.get("metadata") {
            Some(m) => RawMetadata::deserialize(m).map_err(|e| format!("metadata: {e}"))?,
            None => RawMetadata::default(),
        };
        let spec: RawSpec = match object.get("spec") {
            Some(s) => RawSpec::deserialize(s).map_err(|e| format!("spec: {e}"))?,
            None => RawSpec::default(),
        };
        let namespace = metadata.namespace;
        let reference = |r: RawRef| ObjectRef {
            kind: r.kind,
            name: r.name,
            namespace: r.namespace.unwrap_or_else(|| namespace.clone()),
        };
        let mut unsupported = Vec::new();
        if spec.decryption.is_some() {
            unsupported.push(Unsupported {
                field: "spec.decryption".into(),
                reason: "Flux decrypts SOPS-encrypted objects with keys cellgen does not have, so cellgen cannot render what it applies".into(),
            });
        }
        let source_ref = spec.source_ref.map(reference);
        if let Some(source) = &source_ref
            && !(source.kind == "GitRepository" && source.name == BOOTSTRAP)
        {
            unsupported.push(Unsupported {
                field: "spec.sourceRef".into(),
                reason: format!(
                    "it builds from {} {}, and cellgen renders only this repository (the sync GitRepository `{BOOTSTRAP}`)",
                    source.kind, source.name
                ),
            });
        }
        let post_build = spec.post_build.map(|p| PostBuildSpec {
            substitute: p.substitute,
            substitute_from: p.substitute_from,
            strategy_always: p.substitute_strategy.as_deref() == Some("Always"),
        });
        let (common_labels, common_annotations) = spec
            .common_metadata
            .map(|c| (c.labels, c.annotations))
            .unwrap_or_default();
        Ok(FluxLayer {
            name: metadata.name,
            file,
            object: object.clone(),
            path: spec.path,
            source_ref,
            depends_on: spec.depends_on.into_iter().map(reference).collect(),
            flux: FluxFields {
                target_namespace: spec.target_namespace,
                name_prefix: spec.name_prefix,
                name_suffix: spec.name_suffix,
                patches: spec.patches,
                components: spec.components,
                ignore_missing_components: spec.ignore_missing_components,
                images: spec.images,
                build_metadata: spec.build_metadata,
                round_trip: true,
            },
            common_labels,
            common_annotations,
            post_build,
            unsupported,
            namespace,
        })
    }

    /// `spec.path` without `./` or a trailing `/`, as a repository-relative path.
    pub fn build_path(&self) -> String {
        let path = self.path.trim_start_matches("./").trim_end_matches('/');
        if path.is_empty() || path == "." {
            ".".into()
        } else {
            path.to_string()
        }
    }

    pub fn substitute_from(&self) -> &[SubstituteRef] {
        self.post_build
            .as_ref()
            .map_or(&[], |p| p.substitute_from.as_slice())
    }

    /// Whether [`FluxLayer::set_common_metadata`] changes anything.
    pub fn sets_common_metadata(&self) -> bool {
        !self.common_labels.is_empty() || !self.common_annotations.is_empty()
    }

    /// Sets `spec.commonMetadata` on an object the way kustomize-controller does when it applies
    /// (fluxcd/pkg ssa `SetCommonMetadata`): after substitution, overriding existing keys.
    pub fn set_common_metadata(&self, object: &mut Value) {
        for (field, pairs) in [
            ("labels", &self.common_labels),
            ("annotations", &self.common_annotations),
        ] {
            if pairs.is_empty() {
                continue;
            }
            let Some(metadata) = object
                .as_object_mut()
                .map(|o| {
                    o.entry("metadata")
                        .or_insert_with(|| Value::Object(Default::default()))
                })
                .and_then(Value::as_object_mut)
            else {
                continue;
            };
            let map = metadata
                .entry(field)
                .or_insert_with(|| Value::Object(Default::default()));
            if !map.is_object() {
                *map = Value::Object(Default::default());
            }
            if let Some(map) = map.as_object_mut() {
                for (k, v) in pairs {
                    map.insert(k.clone(), Value::String(v.clone()));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn layer(spec: Value) -> FluxLayer {
        let object = json!({
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
            "kind": "Kustomization",
            "metadata": {"name": "apps", "namespace": "flux-system"},
            "spec": spec,
        });
        FluxLayer::parse(&Arc::new(object), "cells/c/apps.yaml".into()).unwrap()
    }

    #[test]
    fn references_default_to_the_kustomizations_namespace() {
        let l = layer(json!({
            "path": "./apps/",
            "sourceRef": {"kind": "GitRepository", "name": "flux-system"},
            "dependsOn": [{"name": "configs"}, {"name": "x", "namespace": "other"}],
        }));
        assert_eq!(l.build_path(), "apps");
        assert_eq!(l.source_ref.unwrap().namespace, "flux-system");
        assert_eq!(l.depends_on[0].namespace, "flux-system");
        assert_eq!(l.depends_on[1].namespace, "other");
        assert!(l.unsupported.is_empty());
        assert!(l.post_build.is_none());
    }

    #[test]
    fn decryption_and_foreign_sources_are_unsupported() {
        let l = layer(json!({
            "sourceRef": {"kind": "OCIRepository", "name": "podinfo"},
            "decryption": {"provider": "sops"},
        }));
        let fields: Vec<&str> = l.unsupported.iter().map(|u| u.field.as_str()).collect();
        assert_eq!(fields, ["spec.decryption", "spec.sourceRef"]);
    }

    #[test]
    fn common_metadata_overrides_and_creates() {
        let l =
            layer(json!({"commonMetadata": {"labels": {"team": "a"}, "annotations": {"x": "1"}}}));
        let mut o = json!({"metadata": {"name": "n", "labels": {"team": "b", "keep": "k"}}});
        l.set_common_metadata(&mut o);
        assert_eq!(o["metadata"]["labels"], json!({"team": "a", "keep": "k"}));
        assert_eq!(o["metadata"]["annotations"], json!({"x": "1"}));
    }

    #[test]
    fn wrong_types_name_the_field() {
        let object = json!({"kind": "Kustomization", "spec": {"components": "a"}});
        let e = FluxLayer::parse(&Arc::new(object), "f".into()).unwrap_err();
        assert!(e.starts_with("spec:"), "{e}");
    }
}
