//! What `cellgen list` says about each cell, read from its files: the Kubernetes version
//! (terraform.tfvars), the egress gateway (egress.tf), the VPC block, the ConfigMap's schema
//! number, and the components with the chart version each runs (`crate::model::versions`).

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::error::CellgenError;
use crate::model::catalog::Catalog;
use crate::model::cells::cell_components;
use crate::model::config::{Config, SCHEMA_KEY};
use crate::model::names::METADATA_FILE;
use crate::model::repo::cell_terraform_dir;
use crate::model::versions::{self, Chart};
use crate::ports::edit::hcl;
use crate::writer::plan::Plan;

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct CellFacts {
    pub cell: String,
    pub region: String,
    pub environment: String,
    pub kubernetes_version: Option<String>,
    pub egress_gateway: bool,
    pub vpc_cidr: Option<String>,
    /// `schema` of the cell's cell-metadata.tf.
    pub schema: Option<u32>,
    pub components: Vec<String>,
    /// The chart version (or OCI tag) of each component that has one.
    pub versions: BTreeMap<String, ComponentVersion>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ComponentVersion {
    /// None when it cannot be told (see `problem`).
    pub version: Option<String>,
    /// Set for this cell (its `spec.patches`), rather than by the shared definition.
    pub own: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// Every cell's facts, in name order. Charts are located once per component.
pub fn cells(
    plan: &Plan,
    config: &Config,
    catalog: &Catalog,
    names: &[String],
) -> Result<Vec<CellFacts>, CellgenError> {
    let mut charts: HashMap<String, Option<Result<Chart, String>>> = HashMap::new();
    names
        .iter()
        .map(|cell| facts(plan, config, catalog, cell, &mut charts))
        .collect()
}

fn facts(
    plan: &Plan,
    config: &Config,
    catalog: &Catalog,
    cell: &str,
    charts: &mut HashMap<String, Option<Result<Chart, String>>>,
) -> Result<CellFacts, CellgenError> {
    let (region, environment) = cell
        .rsplit_once('-')
        .map(|(r, e)| (r.to_string(), e.to_string()))
        .unwrap_or_default();
    let inputs = crate::model::inputs::existing_inputs(plan, cell)?;
    let vpc_cidr = crate::model::cell_cidr::recorded_for(plan.root(), cell).map(|c| match c.cidr {
        Ok(block) => block.to_string(),
        Err(_) => "?".to_string(),
    });
    let schema = plan
        .read(cell_terraform_dir(cell).join(METADATA_FILE))
        .ok()
        .flatten()
        .and_then(|text| hcl::read(&text).ok())
        .and_then(|meta| meta.get(SCHEMA_KEY).and_then(|e| e.literal.clone()))
        .and_then(|n| n.parse().ok());
    let components: Vec<String> = cell_components(plan, config, cell)?.into_iter().collect();
    let mut versions = BTreeMap::new();
    for name in &components {
        // A component without a chart has no version; one whose manifests do not parse says so.
        let chart = charts.entry(name.clone()).or_insert_with(|| {
            match versions::locate(plan, catalog.get(name).ok()?) {
                Ok(chart) => Some(Ok(chart)),
                Err(e @ CellgenError::Yaml { .. }) => Some(Err(e.to_string())),
                Err(_) => None,
            }
        });
        let version = match chart {
            None => continue,
            Some(Err(problem)) => ComponentVersion {
                version: None,
                own: false,
                problem: Some(problem.clone()),
            },
            Some(Ok(chart)) => match versions::cell_version(plan, cell, chart) {
                Ok(v) => ComponentVersion {
                    version: Some(v.version),
                    own: v.own,
                    problem: None,
                },
                Err(e) => ComponentVersion {
                    version: None,
                    own: false,
                    problem: Some(e.to_string()),
                },
            },
        };
        versions.insert(name.clone(), version);
    }
    Ok(CellFacts {
        cell: cell.to_string(),
        region,
        environment,
        kubernetes_version: inputs.kubernetes_version,
        egress_gateway: inputs.egress_gateway.unwrap_or(false),
        vpc_cidr,
        schema,
        components,
        versions,
    })
}
