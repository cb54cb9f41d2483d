use anyhow::{Result, bail};
use std::sync::Arc;

use super::Session;
use crate::analysis::check::schema::Schemas;
use crate::analysis::contract;
use crate::analysis::layer_check::steps;
use crate::analysis::locate::SourceFiles;
use crate::analysis::render::{
    BOOTSTRAP, BuildCache, RenderedLayer, Source, load_cell, render_layers, to_multi_doc,
};
use crate::cli::RenderArgs;
use crate::error::CellgenError;
use crate::model::catalog::Catalog;
use crate::model::repo::Repo;
use crate::ports::templates::Templates;
use crate::root::filestore::FileStore;
use crate::root::source::Source as FileSource;
use crate::writer::plan::Plan;

pub fn run(session: &mut Session, args: RenderArgs) -> Result<()> {
    let repo = Repo::discover(&session.start)?;
    let cell = super::resolve_cell(session, &repo, Some(&args.cell))?;
    let overrides = match &args.render.values {
        Some(path) => super::read_values(path)?,
        None => Default::default(),
    };
    let plan = Plan::new(&repo.root, crate::model::repo::read_by_flux);
    let catalog = Catalog::load(&Templates::new(), &plan)?;
    // One store for the builds and the contract: each file read once.
    let files = Arc::new(FileStore::new(&repo.root));
    let cache = BuildCache::with_source(
        &repo.root,
        FileSource::Disk(files.clone()),
        super::kustomize_mode(args.render.kustomize),
    );
    let loaded =
        load_cell(&repo.root, &cell.name, &cache).map_err(|e| CellgenError::InvalidFile {
            path: e.file.clone(),
            message: e.message.clone(),
        })?;
    let components = loaded.components();
    let mut ignored = Vec::new();
    let sample = contract::check_cell(
        &files,
        &repo.config,
        &catalog,
        &cell.name,
        &components,
        &overrides,
        &mut ignored,
    );
    let rendered = render_layers(loaded, &sample.data, &cache);
    if let Some(invalid) = rendered.invalid.first() {
        bail!(
            "{}: Flux Kustomization `{}` cannot be read: {}",
            invalid.file,
            invalid.name,
            invalid.message
        );
    }
    let names: Vec<&str> = rendered
        .layers
        .iter()
        .map(|l| l.layer.name.as_str())
        .collect();
    if let Some(name) = &args.layer
        && !names.contains(&name.as_str())
    {
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
    let mut sources = SourceFiles::reading(files.clone());
    let mut out = String::new();
    for layer in rendered
        .layers
        .iter()
        .filter(|l| args.layer.as_ref().is_none_or(|n| n == &l.layer.name))
    {
        refuse_what_flux_refuses(layer, &mut sources, &cell.name)?;
        let mut objects = Vec::new();
        for (resource, result) in layer.pairs() {
            match result {
                Ok(object) => objects.push(object.clone()),
                Err(e) => bail!(
                    "layer {}: {} in an object from {}; `cellgen check {}` points at the line",
                    layer.layer.name,
                    e.flux_message(),
                    resource.origin.clone(),
                    cell.name
                ),
            }
        }
        // A comment line per layer, before its documents, so the output reads and splits by
        // cell and layer (`# cellgen: cell <cell>, layer <layer> (<file>)`).
        out.push_str(&format!(
            "# cellgen: cell {}, layer {} ({}, {} object{})\n",
            cell.name,
            layer.layer.name,
            layer.layer.file,
            objects.len(),
            if objects.len() == 1 { "" } else { "s" }
        ));
        out.push_str(&to_multi_doc(&objects));
    }
    crate::out!("{out}")?;
    Ok(())
}

/// Fails, naming the file, line and field, where Flux would apply nothing for `layer` or where
/// cellgen cannot reproduce what it applies.
fn refuse_what_flux_refuses(
    rendered: &RenderedLayer,
    sources: &mut SourceFiles,
    cell: &str,
) -> Result<()> {
    let layer = &rendered.layer;
    let mut at = |path: &[&str]| {
        let (file, line) = sources.locate_field(
            std::slice::from_ref(&layer.file),
            "Kustomization",
            &layer.name,
            &steps(path),
            None,
        );
        match line {
            Some(line) => format!("{}:{line}", file),
            None => file.to_string(),
        }
    };
    if let Some(u) = layer.unsupported.first() {
        let path: Vec<&str> = u.field.split('.').collect();
        bail!(
            "{}: `{}` of Flux Kustomization `{}`: {}. cellgen cannot render this layer as Flux applies it",
            at(&path),
            u.field,
            layer.name,
            u.reason
        );
    }
    if let Some(v) = Schemas::embedded()
        .validate(&layer.object)
        .and_then(|v| v.into_iter().next())
    {
        let path: Vec<String> = v
            .path
            .0
            .iter()
            .map(|s| match s {
                crate::analysis::locate::Step::Key(k) => k.clone(),
                crate::analysis::locate::Step::Index(i) => i.to_string(),
            })
            .collect();
        let path: Vec<&str> = path.iter().map(String::as_str).collect();
        bail!(
            "{}: Flux Kustomization `{}`: {} (the API server refuses it, so Flux applies nothing; `cellgen check {cell}` lists every problem)",
            at(&path),
            layer.name,
            v.message
        );
    }
    for (i, (reference, source)) in layer
        .substitute_from()
        .iter()
        .zip(&rendered.sources)
        .enumerate()
    {
        let entry = i.to_string();
        if *source == Source::CellMetadata && layer.namespace != BOOTSTRAP {
            bail!(
                "{}: Flux Kustomization `{}` is in namespace `{}`, so Flux cannot read {} {} from flux-system (substituteFrom is same-namespace) and applies nothing",
                at(&["spec", "postBuild", "substituteFrom", &entry]),
                layer.name,
                layer.namespace,
                reference.kind,
                reference.name
            );
        }
        if *source == Source::Unseen {
            crate::errln!(
                "note: layer {}: {} {} is not rendered by the cell; its keys count as missing",
                layer.name,
                reference.kind,
                reference.name
            );
        }
    }
    if let Err(e) = rendered.build.as_ref() {
        bail!("layer {} ({}): {e}", layer.name, layer.path);
    }
    Ok(())
}
