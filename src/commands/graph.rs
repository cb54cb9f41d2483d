//! `cellgen graph [CELL] [--format mermaid|dot|text]`.

use anyhow::Result;

use super::Session;
use crate::analysis::snapshot::Snapshot;
use crate::cli::{GraphArgs, GraphFormat};
use crate::model::repo::Repo;
use crate::ports::kustomize::Mode;

pub fn run(session: &mut Session, args: GraphArgs) -> Result<()> {
    let repo = Repo::discover(&session.start)?;
    let cells = match &args.cell {
        Some(name) => vec![super::resolve_cell(session, &repo, Some(name))?.name],
        None => Vec::new(),
    };
    let snapshot = Snapshot::working(&repo)?;
    let mut cache = snapshot.build_cache(Mode::Auto);
    let graph = crate::analysis::graph::build(&snapshot, &cells, &mut cache);
    for (cell, why) in &graph.incomplete {
        eprintln!(
            "note: cell {cell}: some manifests could not be read, so their uses are missing: {why}"
        );
    }
    let output = match args.format {
        GraphFormat::Mermaid => graph.to_mermaid(),
        GraphFormat::Dot => graph.to_dot(),
        GraphFormat::Text => graph.to_text(),
    };
    print!("{output}");
    Ok(())
}
