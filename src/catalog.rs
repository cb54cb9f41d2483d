//! The component catalog: add-ons embedded in cellgen plus those a repository defines in
//! `components/<name>/component.yaml`. A repository's definition wins over an embedded one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cell::CellName;
use crate::config::is_dns_label;
use crate::error::CellgenError;
use crate::plan::Plan;
use crate::scaffold::Files;
use crate::suggest;
use crate::templates::{self, Templates};

pub const COMPONENTS_DIR: &str = "components";
pub const SPEC_FILE: &str = "component.yaml";
const EMBEDDED_PREFIX: &str = "components/";

/// components/<name>/component.yaml: an optional add-on a cell can run.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "component.yaml")]
pub struct ComponentSpec {
    /// One line: what the component does.
    pub description: String,
    /// Other components that must run in the same cell.
    #[serde(default)]
    pub requires: Vec<String>,
    /// Layers (from cellgen.yaml) the component adds to: one Kustomize Component directory each, components/<name>/<layer>/.
    #[schemars(length(min = 1))]
    pub layers: Vec<String>,
    /// ConfigMap keys the component's manifests use beyond the base keys, by name (a Flux variable name).
    #[serde(default)]
    #[schemars(extend("propertyNames" = { "pattern": "^[_a-zA-Z][_a-zA-Z0-9]*$" }))]
    pub keys: IndexMap<String, ComponentKey>,
    /// The AWS identity (EKS Pod Identity) of the component; omit it when it needs no AWS permissions.
    #[serde(default)]
    pub identity: Option<Identity>,
    /// What kubernetes_config_map_v1.cell_metadata must wait for (the identity's Terraform addresses).
    #[serde(default)]
    pub depends_on: Vec<String>,
}

/// A ConfigMap key a component brings into the contract.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ComponentKey {
    /// What the key identifies.
    pub description: String,
    /// Sample value `cellgen check` uses wherever Terraform computes the key.
    pub example: String,
    /// Expression written into cell-metadata.tf's data.
    pub terraform: String,
}

/// The component's EKS Pod Identity: cellgen writes its IAM role, policy attachments and association.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    /// Namespace of the component's service account.
    pub namespace: String,
    /// Service account the role is associated with.
    pub service_account: String,
    /// ARNs of managed IAM policies attached to the role.
    #[serde(default)]
    pub policy_arns: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    Embedded,
    Repository,
}

#[derive(Debug, Clone)]
pub struct Component {
    pub name: String,
    pub spec: ComponentSpec,
    pub origin: Origin,
}

#[derive(Debug, Clone, Default)]
pub struct Catalog {
    pub components: BTreeMap<String, Component>,
}

impl Catalog {
    /// Embedded components, then the repository's (read through the plan, so planned files count).
    pub fn load(templates: &Templates, plan: &Plan) -> Result<Catalog, CellgenError> {
        let Catalog { mut components } = Catalog::embedded(templates)?;
        for dir in crate::repo::list_dirs(&plan.root().join(COMPONENTS_DIR))? {
            let path = Path::new(COMPONENTS_DIR).join(&dir).join(SPEC_FILE);
            if let Some(text) = plan.read(&path)? {
                let spec = parse_spec(&text, &path)?;
                validate_name(&dir, &path)?;
                components.insert(
                    dir.clone(),
                    Component {
                        name: dir,
                        spec,
                        origin: Origin::Repository,
                    },
                );
            }
        }
        Ok(Catalog { components })
    }

    /// The components embedded in cellgen alone (outside any repository).
    pub fn embedded(templates: &Templates) -> Result<Catalog, CellgenError> {
        let mut components = BTreeMap::new();
        for name in templates.names_under(EMBEDDED_PREFIX) {
            let Some(component) = name
                .strip_prefix(EMBEDDED_PREFIX)
                .and_then(|rest| rest.strip_suffix(&format!("/{SPEC_FILE}")))
            else {
                continue;
            };
            let text = templates::raw(&name).unwrap_or_default();
            let spec = parse_spec(text, Path::new(&name))?;
            components.insert(
                component.to_string(),
                Component {
                    name: component.to_string(),
                    spec,
                    origin: Origin::Embedded,
                },
            );
        }
        Ok(Catalog { components })
    }

    pub fn get(&self, name: &str) -> Result<&Component, CellgenError> {
        self.components
            .get(name)
            .ok_or_else(|| CellgenError::UnknownComponent {
                name: name.to_string(),
                hint: suggest::hint(name, self.components.keys().map(String::as_str)),
                known: self.components.keys().cloned().collect(),
            })
    }

    pub fn names(&self) -> Vec<String> {
        self.components.keys().cloned().collect()
    }
}

fn parse_spec(text: &str, path: &Path) -> Result<ComponentSpec, CellgenError> {
    let spec: ComponentSpec = yaml_serde::from_str(text).map_err(|e| CellgenError::InvalidFile {
        path: path.to_path_buf(),
        message: format!(
            "{}not a valid component.yaml: {e}. It declares description, layers, keys (description, example, terraform), identity (namespace, service_account, policy_arns) and depends_on",
            e.location().map(|l| format!("line {}: ", l.line())).unwrap_or_default()
        ),
    })?;
    for key in spec.keys.keys() {
        if !crate::keys::is_valid_key_name(key) {
            return Err(CellgenError::InvalidFile {
                path: path.to_path_buf(),
                message: format!(
                    "key `{key}` is not a valid Flux variable name (letters, digits, underscores; e.g. `{}`)",
                    key.replace(['-', '.'], "_")
                ),
            });
        }
    }
    if spec.layers.is_empty() {
        return Err(CellgenError::InvalidFile {
            path: path.to_path_buf(),
            message: "`layers` is empty: a component adds at least one layer".into(),
        });
    }
    Ok(spec)
}

fn validate_name(name: &str, path: &Path) -> Result<(), CellgenError> {
    // The role name `<cell>-<component>` must fit IAM's 64 characters.
    if !is_dns_label(name) || name.len() > 31 {
        return Err(CellgenError::InvalidFile {
            path: path.to_path_buf(),
            message: format!(
                "component directory `{name}` must be a DNS label of at most 31 characters (lowercase letters, digits, dashes)"
            ),
        });
    }
    Ok(())
}

impl Component {
    /// `ident`: the name as a Terraform identifier.
    pub fn ident(&self) -> String {
        self.name.replace('-', "_")
    }

    pub fn layer_dir(&self, layer: &str) -> PathBuf {
        Path::new(COMPONENTS_DIR).join(&self.name).join(layer)
    }

    /// Files an embedded component materialises under `components/<name>/` (none for repository ones).
    pub fn shared_files(&self, templates: &Templates) -> Files {
        if self.origin != Origin::Embedded {
            return Files::new();
        }
        let prefix = format!("{EMBEDDED_PREFIX}{}/", self.name);
        templates
            .names_under(&prefix)
            .into_iter()
            .filter_map(|name| {
                let rel = name.strip_prefix(&prefix)?.to_string();
                let layer = rel.split('/').next()?;
                if !self.spec.layers.iter().any(|l| l == layer) || !rel.contains('/') {
                    return None;
                }
                Some((
                    Path::new(COMPONENTS_DIR).join(&self.name).join(&rel),
                    templates::raw(&name)?.to_string(),
                ))
            })
            .collect()
    }

    /// What `kubernetes_config_map_v1.cell_metadata` must wait for.
    pub fn depends_on(&self) -> Vec<String> {
        if !self.spec.depends_on.is_empty()
            || self.spec.identity.is_none()
            || self.origin == Origin::Embedded
        {
            return self.spec.depends_on.clone();
        }
        vec![format!("aws_eks_pod_identity_association.{}", self.ident())]
    }

    /// The cell's Terraform file for the component, if it has an identity.
    pub fn terraform(
        &self,
        templates: &Templates,
        cell: &CellName,
    ) -> Result<Option<String>, CellgenError> {
        let Some(identity) = &self.spec.identity else {
            return Ok(None);
        };
        #[derive(Serialize)]
        struct Context<'a> {
            cell: &'a str,
            region: &'a str,
            environment: &'a str,
            component: &'a str,
            ident: String,
            description: &'a str,
            identity: &'a Identity,
        }
        let context = Context {
            cell: &cell.name,
            region: &cell.region,
            environment: &cell.environment,
            component: &self.name,
            ident: self.ident(),
            description: &self.spec.description,
            identity,
        };
        let template = match self.origin {
            Origin::Embedded => format!("{EMBEDDED_PREFIX}{}/terraform.tf", self.name),
            Origin::Repository => "component-generic/terraform.tf".to_string(),
        };
        templates.render(&template, context).map(Some)
    }
}
