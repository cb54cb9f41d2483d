//! A base no record holds and no Git history has, rebuilt: copier re-renders the old template
//! with the answers it recorded, and so does upgrade. A cell's file is rendered from the cell's
//! recorded inputs (else those its files give) with the templates of the version that generated
//! it: this cellgen's own when it is this version, the ones stored here for older versions
//! (`v0_1_0/cell/`, cellgen 0.1.0's, from commit bc62cf4). The text is a base only if it hashes
//! to what the record says cellgen wrote; otherwise upgrade says it could not rebuild it, rather
//! than guess. (0.1.0 recorded a cell's files after `new --components` had added its components
//! to them: those files are rebuilt only where no component changed them.)

use camino::Utf8Path;
use include_dir::{Dir, include_dir};
use minijinja::{Environment, UndefinedBehavior, Value};
use serde::Serialize;

use crate::model::cell::CellName;
use crate::model::config::{Config, SCHEMA_KEY};
use crate::model::repo::{cell_flux_dir, cell_terraform_dir};
use crate::model::scaffold::{self, CellInputs, Files};
use crate::model::state::sha256;
use crate::ports::templates::Templates;

static V0_1_0: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/src/ops/upgrade/v0_1_0/cell");

/// Every file of `cell` as cellgen `version` generated it from `inputs`, or why it cannot tell.
pub fn cell_files(
    templates: &Templates,
    config: &Config,
    cell: &CellName,
    inputs: &CellInputs,
    version: &str,
) -> Result<Files, String> {
    if version == scaffold::VERSION {
        return scaffold::cell_files(templates, config, cell, inputs).map_err(|e| e.to_string());
    }
    match version {
        "0.1.0" => v0_1_0(config, cell, inputs),
        _ => Err(format!(
            "this cellgen does not have cellgen {version}'s templates to rebuild it"
        )),
    }
}

/// The rebuilt text of `path`, if it is the one the record's hash names.
pub fn base(
    files: &Result<Files, String>,
    path: &Utf8Path,
    hash: &str,
    version: &str,
) -> Result<String, String> {
    let files = files.as_ref().map_err(Clone::clone)?;
    match files.get(path) {
        Some(text) if sha256(text) == hash => Ok(text.clone()),
        Some(_) => Err(format!(
            "cellgen {version}'s template, rendered from the cell's inputs, is not the text it recorded (a component or a setting changed it since)"
        )),
        None => Err(format!(
            "cellgen {version} generated no such file from the cell's inputs"
        )),
    }
}

#[derive(Serialize)]
struct Layer<'a> {
    name: &'a str,
    path: &'a str,
    interval: &'a str,
    wait: bool,
    depends_on: &'a [String],
}

#[derive(Serialize)]
struct Entry {
    name: String,
    value: String,
}

/// cellgen 0.1.0's `scaffold::cell_files`, with its templates and context.
fn v0_1_0(config: &Config, cell: &CellName, inputs: &CellInputs) -> Result<Files, String> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_keep_trailing_newline(true);
    env.add_filter("pad", |value: Value, width: usize| {
        let text = value.to_string();
        format!("{text:width$}")
    });
    let mut data = vec![Entry {
        name: SCHEMA_KEY.into(),
        value: format!("\"{}\"", config.schema),
    }];
    for (key, spec) in config.keys.iter().filter(|(_, s)| s.component.is_none()) {
        let value = spec
            .terraform
            .clone()
            .ok_or_else(|| format!("key `{key}` has no `terraform` expression"))?;
        crate::ports::edit::hcl::syntax::check_expression(&value)
            .map_err(|why| format!("keys.{key}.terraform `{}` {why}", value.escape_debug()))?;
        data.push(Entry {
            name: key.clone(),
            value,
        });
    }
    let layers: Vec<Layer> = config
        .layers
        .iter()
        .map(|l| Layer {
            name: &l.name,
            path: l.path.trim_start_matches("./"),
            interval: &l.interval,
            wait: l.wait,
            depends_on: &l.depends_on,
        })
        .collect();
    let context = minijinja::context! {
        cell => &cell.name,
        region => &cell.region,
        environment => &cell.environment,
        environments => &config.environments,
        kubernetes_version => &inputs.kubernetes_version,
        egress_gateway => inputs.egress_gateway,
        git_url => &config.git.url,
        git_branch => &config.git.branch,
        state_bucket => config.terraform.state_bucket.as_deref(),
        state_region => config.terraform.state_region.as_deref().unwrap_or(&cell.region),
        data_width => data.iter().map(|d| d.name.len()).max().unwrap_or(0),
        data => &data,
        depends_on => ["flux_bootstrap_git.this", "aws_eks_pod_identity_association.app"],
        layers => &layers,
        cellgen_version => "0.1.0",
    };
    let render = |name: &str, context: &Value| -> Result<String, String> {
        let source = V0_1_0
            .get_file(format!("{name}.j2"))
            .and_then(|f| f.contents_utf8())
            .ok_or_else(|| format!("cellgen 0.1.0's template {name} is missing"))?;
        env.render_str(source, context)
            .map_err(|e| format!("cellgen 0.1.0's template {name}: {e:#}"))
    };
    let mut files = Files::new();
    let flux = cell_flux_dir(&cell.name);
    files.insert(
        flux.join("kustomization.yaml"),
        render("flux/kustomization.yaml", &context)?,
    );
    for layer in &layers {
        let only = minijinja::context! { layer => layer };
        files.insert(
            flux.join(format!("{}.yaml", layer.name)),
            render("flux/layer.yaml", &only)?,
        );
    }
    let tf = cell_terraform_dir(&cell.name);
    let terraform = V0_1_0
        .get_dir("terraform")
        .map(|d| d.files().collect::<Vec<_>>())
        .unwrap_or_default();
    for file in terraform {
        let Some(name) = file
            .path()
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".j2"))
        else {
            continue;
        };
        if name == "egress.tf" && !inputs.egress_gateway {
            continue;
        }
        files.insert(
            tf.join(name),
            render(&format!("terraform/{name}"), &context)?,
        );
    }
    Ok(files)
}
