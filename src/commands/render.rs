use anyhow::{Result, bail};

use super::Session;
use crate::catalog::Catalog;
use crate::check::contract;
use crate::cli::RenderArgs;
use crate::components::cell_components;
use crate::error::CellgenError;
use crate::plan::Plan;
use crate::render::{BuildCache, cell_layers, substitute_all, to_multi_doc};
use crate::repo::Repo;
use crate::templates::Templates;

pub fn run(session: &mut Session, args: RenderArgs) -> Result<()> {
    let repo = Repo::discover(&session.start)?;
    let cell = super::resolve_cell(session, &repo, Some(&args.cell))?;
    let overrides = match &args.render.values {
        Some(path) => super::read_values(path)?,
        None => Default::default(),
    };
    let plan = Plan::new(&repo.root);
    let catalog = Catalog::load(&Templates::new(), &plan)?;
    let components = cell_components(&plan, &repo.config, &cell.name)?;
    let mut ignored = Vec::new();
    let sample = contract::check_cell(
        &repo.root,
        &repo.config,
        &catalog,
        &cell.name,
        &components,
        &overrides,
        &mut ignored,
    );
    let layers = cell_layers(&repo.root, &cell.name).map_err(|e| CellgenError::InvalidFile {
        path: e.file.clone(),
        message: e.message.clone(),
    })?;
    if let Some(name) = &args.layer
        && !layers.iter().any(|l| &l.name == name)
    {
        let names: Vec<&str> = layers.iter().map(|l| l.name.as_str()).collect();
        return Err(CellgenError::InvalidFlag {
            flag: "--layer".into(),
            reason: format!(
                "cell {} has no layer `{name}`.{} Its layers: {}",
                cell.name,
                crate::suggest::hint(name, names.iter().copied()),
                names.join(", ")
            ),
        }
        .into());
    }
    let mut cache = BuildCache::new(&repo.root, super::kustomize_mode(args.render.kustomize));
    let mut objects = Vec::new();
    for layer in layers
        .iter()
        .filter(|l| args.layer.as_ref().is_none_or(|n| n == &l.name))
    {
        let built = cache.build(layer);
        let resources = match built.as_ref() {
            Ok(resources) => resources,
            Err(e) => bail!("layer {} ({}): {e}", layer.name, layer.path),
        };
        let post_build = layer.post_build(&|s| s.is_cell_metadata().then(|| sample.data.clone()));
        for rendered in substitute_all(resources, &post_build.vars(), &post_build.options()) {
            match rendered.result {
                Ok(object) => objects.push(object),
                Err(e) => bail!(
                    "layer {}: {} in an object from {}; `cellgen check {}` points at the line",
                    layer.name,
                    e.flux_message(),
                    rendered.resource.origin.display(),
                    cell.name
                ),
            }
        }
    }
    print!("{}", to_multi_doc(&objects));
    Ok(())
}
