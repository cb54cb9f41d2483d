//! The component catalog: add-ons embedded in cellgen plus those a repository defines in
//! `components/<name>/component.yaml`. A repository's definition wins over an embedded one.
//!
//! A repository component is checked before anything uses it (`rules`), its name may be
//! neither a file nor an address of the cell's stack ([`crate::model::stack`]), and the Terraform
//! generated for it is read back: it declares exactly its four blocks.

// schemars makes the doc comments the JSON Schema descriptions editors show, where `<name>` is literal (not HTML).
#![allow(rustdoc::invalid_html_tags)]

mod rules;

use camino::{Utf8Path, Utf8PathBuf};
use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::CellgenError;
use crate::model::cell::CellName;
use crate::model::config::is_dns_label;
use crate::model::scaffold::Files;
use crate::model::stack::StackFacts;
use crate::ports::edit::hcl::{self, syntax};
use crate::ports::templates::{self, Templates};
use crate::suggest;
use crate::writer::plan::Plan;

pub use rules::{HCL_KEYWORDS, is_dns_subdomain, is_policy_arn};

pub use crate::model::names::{COMPONENTS_DIR, SPEC_FILE};
const EMBEDDED_PREFIX: &str = "components/";
const GENERIC_TEMPLATE: &str = "component-generic/terraform.tf";

/// components/<name>/component.yaml: an optional add-on a cell can run.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "component.yaml")]
pub struct ComponentSpec {
    /// One line: what the component does.
    pub description: String,
    /// Other components that must run in the same cell.
    #[serde(default)]
    #[schemars(inner(pattern(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")))]
    pub requires: Vec<String>,
    /// Layers (from cellgen.yaml) the component adds to: one Kustomize Component directory each, components/<name>/<layer>/.
    #[schemars(
        length(min = 1),
        inner(pattern(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"))
    )]
    pub layers: Vec<String>,
    /// ConfigMap keys the component's manifests use beyond the base keys, by name (a Flux variable name; not `schema` nor an HCL keyword).
    #[serde(default)]
    #[schemars(extend("propertyNames" = {
        "pattern": "^[_a-zA-Z][_a-zA-Z0-9]*$",
        "not": { "enum": ["schema", "true", "false", "null", "for", "in", "if", "endif", "endfor"] }
    }))]
    pub keys: crate::model::config::KeyMap<ComponentKey>,
    /// The AWS identity (EKS Pod Identity) of the component; omit it when it needs no AWS permissions.
    #[serde(default)]
    pub identity: Option<Identity>,
    /// What kubernetes_config_map_v1.cell_metadata must wait for (the identity's Terraform addresses): TYPE.NAME, data.TYPE.NAME or module.NAME.
    #[serde(default)]
    #[schemars(inner(pattern(
        r"^(module\.[a-zA-Z_][a-zA-Z0-9_-]*|data\.[a-zA-Z_][a-zA-Z0-9_-]*\.[a-zA-Z_][a-zA-Z0-9_-]*|(?!var\.|local\.)[a-zA-Z_][a-zA-Z0-9_-]*\.[a-zA-Z_][a-zA-Z0-9_-]*)$"
    )))]
    pub depends_on: Vec<String>,
    /// What must happen in a running cell before the component leaves it, when it owns cloud
    /// resources only its controller removes (nodes, load balancers, volumes): printed, in order,
    /// by `remove-component`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub teardown: Option<Teardown>,
}

/// Steps that remove what a component created in the cloud, while it still runs.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Teardown {
    /// Why, in one sentence (what would be left behind otherwise).
    pub description: String,
    /// Commands to run against the cell's cluster, in order (kubectl), while the component runs.
    #[schemars(length(min = 1))]
    pub commands: Vec<String>,
}

/// A ConfigMap key a component brings into the contract.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ComponentKey {
    /// What the key identifies.
    pub description: String,
    /// Sample value `cellgen check` uses wherever Terraform computes the key.
    pub example: String,
    /// Expression written into cell-metadata.tf's data: exactly one Terraform expression.
    #[schemars(pattern(r"^\S(?:[\s\S]*\S)?$"))]
    pub terraform: String,
}

/// The component's EKS Pod Identity: cellgen writes its IAM role, policy attachments and association.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    /// Namespace of the component's service account (a DNS-1123 label).
    #[schemars(length(max = 63), pattern(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"))]
    pub namespace: String,
    /// Service account the role is associated with (a DNS-1123 subdomain).
    #[schemars(
        length(max = 253),
        pattern(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$")
    )]
    pub service_account: String,
    /// ARNs of managed IAM policies attached to the role: arn:<partition>:iam::<account-id or aws>:policy/[path/]name.
    #[serde(default)]
    #[schemars(inner(
        length(max = 2048),
        pattern(r"^arn:aws(-[a-z]+)*:iam::([0-9]{12}|aws):policy/([A-Za-z0-9+=,.@_-]+/)*[A-Za-z0-9+=,.@_-]{1,128}$")
    ))]
    pub policy_arns: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    Embedded,
    Repository,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Component {
    pub name: String,
    pub spec: ComponentSpec,
    pub origin: Origin,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalog {
    pub components: BTreeMap<String, Component>,
}

impl Catalog {
    /// Embedded components, then the repository's (read through the plan, so planned files count).
    pub fn load(templates: &Templates, plan: &Plan) -> Result<Catalog, CellgenError> {
        let dirs = crate::model::repo::list_dirs(&plan.root().join(COMPONENTS_DIR))?;
        Catalog::load_from(templates, dirs, &|path| plan.read(path))
    }

    /// The catalog of a repository whose `components/` holds `dirs`, its files read by `read`
    /// (the working tree, or a commit's tree for `cellgen diff`).
    pub fn load_from(
        templates: &Templates,
        dirs: Vec<String>,
        read: &dyn Fn(&Utf8Path) -> Result<Option<String>, CellgenError>,
    ) -> Result<Catalog, CellgenError> {
        let Catalog { mut components } = Catalog::embedded(templates)?;
        let mut stack: Option<StackFacts> = None;
        for dir in dirs {
            let path = Utf8Path::new(COMPONENTS_DIR).join(&dir).join(SPEC_FILE);
            if let Some(text) = read(&path)? {
                validate_name(&dir, &path)?;
                let spec = parse_spec(&text, &path)?;
                if stack.is_none() {
                    stack = Some(StackFacts::from_templates(templates)?);
                }
                let facts = stack.as_ref().expect("just computed");
                if let Some(why) = reserved(templates, facts, &dir)? {
                    return Err(CellgenError::InvalidFile {
                        path,
                        message: format!(
                            "component name `{dir}` is reserved: {why}. Rename the directory components/{dir} (e.g. `team-{dir}`)"
                        ),
                    });
                }
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
            let spec = parse_spec(text, Utf8Path::new(&name))?;
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
        self.components.get(name).ok_or_else(|| {
            let candidates = self.components.keys().map(String::as_str);
            let mut hint = suggest::hint(&name.to_lowercase(), candidates);
            if !is_dns_label(name) {
                hint.insert_str(
                    0,
                    " A component name is lowercase letters, digits and dashes.",
                );
            }
            CellgenError::UnknownComponent {
                name: name.to_string(),
                hint,
                known: self.components.keys().cloned().collect(),
            }
        })
    }

    pub fn names(&self) -> Vec<String> {
        self.components.keys().cloned().collect()
    }
}

fn parse_spec(text: &str, path: &Utf8Path) -> Result<ComponentSpec, CellgenError> {
    let spec: ComponentSpec = crate::ports::yaml::from_str(text).map_err(|e| match e {
        crate::ports::yaml::YamlError::Invalid(_) => CellgenError::InvalidFile {
            path: path.to_path_buf(),
            message: format!(
                "{}not a valid component.yaml: {e}. It declares description, layers, keys (description, example, terraform), identity (namespace, service_account, policy_arns) and depends_on",
                e.line().map(|l| format!("line {l}: ")).unwrap_or_default()
            ),
        },
        refused => CellgenError::yaml(path)(refused),
    })?;
    rules::validate(&spec, path, text)?;
    Ok(spec)
}

/// Why a repository component may not be called `name`: its Terraform file would be a file of
/// the stack, or the blocks generated for it would declare an address the stack declares.
fn reserved(
    templates: &Templates,
    stack: &StackFacts,
    name: &str,
) -> Result<Option<String>, CellgenError> {
    if stack.files.contains(name) {
        return Ok(Some(format!(
            "terraform/cells/<cell>/{name}.tf is a file of the cell's stack"
        )));
    }
    let sample = Component {
        name: name.to_string(),
        spec: ComponentSpec {
            description: String::new(),
            requires: Vec::new(),
            layers: Vec::new(),
            keys: Default::default(),
            identity: Some(Identity {
                namespace: "sample".into(),
                service_account: "sample".into(),
                policy_arns: Vec::new(),
            }),
            depends_on: Vec::new(),
            teardown: None,
        },
        origin: Origin::Repository,
    };
    let cell = CellName::parse(
        "eu-west-2-prod",
        &crate::model::config::default_environments(),
    )?;
    let text = sample.terraform(templates, &cell)?.unwrap_or_default();
    let body = hcl::parse_body(&text).map_err(|e| CellgenError::Template {
        name: GENERIC_TEMPLATE.into(),
        message: e.to_string(),
    })?;
    Ok(syntax::declared(&text, &body).into_iter().find_map(|d| {
        stack.addresses.get(&d.address).map(|file| {
            format!(
                "its Terraform would declare `{}`, which the stack's {file} declares",
                d.address
            )
        })
    }))
}

fn validate_name(name: &str, path: &Utf8Path) -> Result<(), CellgenError> {
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

    pub fn layer_dir(&self, layer: &str) -> Utf8PathBuf {
        Utf8Path::new(COMPONENTS_DIR).join(&self.name).join(layer)
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
                    Utf8Path::new(COMPONENTS_DIR).join(&self.name).join(&rel),
                    templates::raw(&name)?.to_string(),
                ))
            })
            .collect()
    }

    /// What `kubernetes_config_map_v1.cell_metadata` must wait for: for a repository component
    /// with an identity, the role's association and its policy attachments (a key must not
    /// appear before the permissions it stands for), then what the component lists.
    pub fn depends_on(&self) -> Vec<String> {
        let mut deps = Vec::new();
        if self.origin == Origin::Repository && self.spec.identity.is_some() {
            deps.push(format!("aws_eks_pod_identity_association.{}", self.ident()));
            deps.push(format!("aws_iam_role_policy_attachment.{}", self.ident()));
        }
        for dep in &self.spec.depends_on {
            if !deps.contains(dep) {
                deps.push(dep.clone());
            }
        }
        deps
    }

    /// The addresses the generic Terraform of a repository component declares.
    fn generic_addresses(&self) -> BTreeSet<String> {
        let ident = self.ident();
        [
            format!("data.aws_iam_policy_document.{ident}_trust"),
            format!("aws_iam_role.{ident}"),
            format!("aws_iam_role_policy_attachment.{ident}"),
            format!("aws_eks_pod_identity_association.{ident}"),
        ]
        .into()
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
        // Every value from component.yaml arrives validated (rules.rs) and is still escaped
        // here: strings as HCL string literals, the description folded onto one comment line.
        #[derive(Serialize)]
        struct Context<'a> {
            cell: &'a str,
            region: &'a str,
            environment: &'a str,
            component: &'a str,
            ident: String,
            description: String,
            namespace: String,
            service_account: String,
            policy_arns: Vec<String>,
        }
        let context = Context {
            cell: &cell.name,
            region: &cell.region,
            environment: &cell.environment,
            component: &self.name,
            ident: self.ident(),
            description: syntax::comment_text(&self.spec.description),
            namespace: syntax::string_literal(&identity.namespace),
            service_account: syntax::string_literal(&identity.service_account),
            policy_arns: identity
                .policy_arns
                .iter()
                .map(|a| syntax::string_literal(a))
                .collect(),
        };
        let template = match self.origin {
            Origin::Embedded => format!("{EMBEDDED_PREFIX}{}/terraform.tf", self.name),
            Origin::Repository => GENERIC_TEMPLATE.to_string(),
        };
        let text = templates.render(&template, context)?;
        // Read back: it parses, and a repository component declares its four blocks, no more.
        let body = hcl::parse_body(&text).map_err(|e| CellgenError::Template {
            name: template.clone(),
            message: format!("component `{}`: {e}", self.name),
        })?;
        if self.origin == Origin::Repository {
            let declared: BTreeSet<String> = syntax::declared(&text, &body)
                .into_iter()
                .map(|d| d.address)
                .collect();
            if declared != self.generic_addresses() {
                return Err(CellgenError::Template {
                    name: template,
                    message: format!(
                        "component `{}`: the generated Terraform declares {declared:?}, not the role, attachment and association alone",
                        self.name
                    ),
                });
            }
        }
        Ok(Some(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_embedded_component_takes_a_stack_name_and_the_issue_names_are_reserved() {
        let templates = Templates::new();
        let stack = StackFacts::from_templates(&templates).unwrap();
        for name in Catalog::embedded(&templates).unwrap().names() {
            assert_eq!(reserved(&templates, &stack, &name).unwrap(), None, "{name}");
        }
        for name in [
            "app",
            "app-abac",
            "app-role",
            "flux",
            "cni",
            "cluster",
            "network",
            "variables",
            "versions",
            "outputs",
            "providers",
            "backend",
            "egress",
            "cell-metadata",
        ] {
            assert!(
                reserved(&templates, &stack, name).unwrap().is_some(),
                "{name}"
            );
        }
        assert_eq!(reserved(&templates, &stack, "billing").unwrap(), None);
    }

    #[test]
    fn a_repository_component_waits_for_its_attachments() {
        let component = Component {
            name: "team-agent".into(),
            spec: ComponentSpec {
                description: "x".into(),
                requires: Vec::new(),
                layers: vec!["apps".into()],
                keys: Default::default(),
                identity: Some(Identity {
                    namespace: "team".into(),
                    service_account: "agent".into(),
                    policy_arns: Vec::new(),
                }),
                depends_on: vec!["module.extra".into()],
                teardown: None,
            },
            origin: Origin::Repository,
        };
        assert_eq!(
            component.depends_on(),
            [
                "aws_eks_pod_identity_association.team_agent",
                "aws_iam_role_policy_attachment.team_agent",
                "module.extra"
            ]
        );
    }
}
