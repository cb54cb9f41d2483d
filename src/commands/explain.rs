//! `cellgen explain KEY`: one key of the graph, in a few lines.

use anyhow::Result;

use super::Session;
use crate::analysis::snapshot::Snapshot;
use crate::cli::ExplainArgs;
use crate::error::CellgenError;
use crate::model::repo::Repo;
use crate::ports::kustomize::Mode;

pub fn run(session: &mut Session, args: ExplainArgs) -> Result<()> {
    let repo = Repo::discover(&session.start)?;
    // `${key}`, `$key` and `key` all name the key.
    let key = args
        .key
        .trim()
        .trim_start_matches('$')
        .trim_start_matches('{')
        .trim_end_matches('}');
    let snapshot = Snapshot::working(&repo)?;
    let mut cache = snapshot.build_cache(Mode::Auto);
    let graph = crate::analysis::graph::build(&snapshot, &[], &mut cache);
    let Some(node) = graph.key(key) else {
        let known: Vec<&str> = graph.keys.iter().map(|k| k.key.as_str()).collect();
        return Err(CellgenError::InvalidFlag {
            flag: "KEY".into(),
            reason: format!(
                "no cell writes `{key}`, no manifest uses it and cellgen.yaml's contract has no such key.{} Keys: {}",
                crate::suggest::hint(key, known.iter().copied()),
                known.join(", ")
            ),
        }
        .into());
    };
    for (cell, why) in &graph.incomplete {
        eprintln!(
            "note: cell {cell}: some manifests could not be read, so their uses are missing: {why}"
        );
    }
    print!("{}", node.to_text(graph.cells.len()));
    Ok(())
}
