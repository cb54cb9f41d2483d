use anyhow::Result;
use serde::Serialize;

use super::Session;
use crate::analysis::inventory;
use crate::cli::{ListArgs, ListFormat, ListTarget};
use crate::model::catalog::Catalog;
use crate::model::repo::Repo;
use crate::ports::templates::Templates;
use crate::writer::plan::Plan;

pub fn run(session: &mut Session, args: ListArgs) -> Result<()> {
    match args.what {
        ListTarget::Cells => {
            let repo = Repo::discover(&session.start)?;
            let plan = Plan::new(&repo.root, crate::model::repo::read_by_flux);
            let catalog = Catalog::load(&Templates::new(), &plan)?;
            let rows = inventory::cells(&plan, &repo.config, &catalog, &repo.cells()?)?;
            match args.format {
                ListFormat::Json => crate::outln!("{}", serde_json::to_string_pretty(&rows)?)?,
                ListFormat::Table if rows.is_empty() => crate::outln!(
                    "No cells yet: create one with `cellgen new <region>-<environment>`."
                )?,
                ListFormat::Table => {
                    let mut own = false;
                    let mut problems = Vec::new();
                    let table: Vec<Vec<String>> = rows
                        .iter()
                        .map(|r| {
                            let components: Vec<String> = r
                                .components
                                .iter()
                                .map(|name| match r.versions.get(name) {
                                    Some(v) => {
                                        own |= v.own;
                                        if let Some(p) = &v.problem {
                                            problems.push(p.clone());
                                        }
                                        format!(
                                            "{name} {}{}",
                                            v.version.as_deref().unwrap_or("?"),
                                            if v.own { "*" } else { "" }
                                        )
                                    }
                                    None => name.clone(),
                                })
                                .collect();
                            vec![
                                r.cell.clone(),
                                r.region.clone(),
                                r.environment.clone(),
                                r.kubernetes_version.clone().unwrap_or_else(|| "?".into()),
                                if r.egress_gateway { "yes" } else { "no" }.into(),
                                r.vpc_cidr.clone().unwrap_or_else(|| "?".into()),
                                r.schema.map_or("?".into(), |n| n.to_string()),
                                if components.is_empty() {
                                    "-".into()
                                } else {
                                    components.join(", ")
                                },
                            ]
                        })
                        .collect();
                    print_table(
                        &[
                            "CELL",
                            "REGION",
                            "ENVIRONMENT",
                            "KUBERNETES",
                            "EGRESS",
                            "VPC",
                            "SCHEMA",
                            "COMPONENTS",
                        ],
                        table,
                        None,
                    )?;
                    if own {
                        crate::outln!(
                            "\n* the cell's own version (`cellgen set-version`, spec.patches of its layer file); the others are the shared definition's."
                        )?;
                    }
                    for problem in problems {
                        crate::errln!("note: {problem}");
                    }
                }
            }
        }
        ListTarget::Components => {
            // The catalog is embedded: outside a repository it is listed alone; inside one, with
            // the repository's own components.
            let templates = Templates::new();
            let catalog = match Repo::find_root(&session.start) {
                Some(root) => Catalog::load(
                    &templates,
                    &Plan::new(root, crate::model::repo::read_by_flux),
                )?,
                None => Catalog::embedded(&templates)?,
            };
            match args.format {
                ListFormat::Json => {
                    #[derive(Serialize)]
                    struct Row<'a> {
                        name: &'a str,
                        origin: crate::model::catalog::Origin,
                        #[serde(flatten)]
                        spec: &'a crate::model::catalog::ComponentSpec,
                    }
                    let rows: Vec<Row> = catalog
                        .components
                        .values()
                        .map(|c| Row {
                            name: &c.name,
                            origin: c.origin,
                            spec: &c.spec,
                        })
                        .collect();
                    crate::outln!("{}", serde_json::to_string_pretty(&rows)?)?;
                }
                ListFormat::Table => {
                    // Narrow enough for a terminal: the version each cell starts from and what a
                    // component needs; layers, keys and identity are in `--format json`.
                    let plan = Repo::find_root(&session.start)
                        .map(|root| Plan::new(root, crate::model::repo::read_by_flux));
                    let version = |c: &crate::model::catalog::Component| {
                        plan.as_ref()
                            .and_then(|p| crate::model::versions::locate(p, c).ok())
                            .map(|chart| chart.version)
                            .or_else(|| {
                                let files = c.shared_files(&templates);
                                crate::model::versions::version_in(
                                    files.values().map(String::as_str),
                                )
                            })
                            .unwrap_or_else(|| "-".into())
                    };
                    let width = console::Term::stdout()
                        .size_checked()
                        .map(|(_, columns)| usize::from(columns));
                    let rows: Vec<Vec<String>> = catalog
                        .components
                        .values()
                        .map(|c| {
                            vec![
                                c.name.clone(),
                                version(c),
                                if c.spec.requires.is_empty() {
                                    "-".into()
                                } else {
                                    c.spec.requires.join(", ")
                                },
                                c.spec.description.clone(),
                            ]
                        })
                        .collect();
                    print_table(
                        &["COMPONENT", "VERSION", "REQUIRES", "DESCRIPTION"],
                        rows,
                        width,
                    )?;
                }
            }
        }
    }
    Ok(())
}

/// A table with columns padded to their widest cell; on a terminal (`width`), the last column is
/// cut to fit, with `…`.
fn print_table(
    headers: &[&str],
    rows: Vec<Vec<String>>,
    width: Option<usize>,
) -> Result<(), crate::error::CellgenError> {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        let last = cells.len() - 1;
        let text: Vec<String> = cells
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                if i == last {
                    let used: usize = widths[..last].iter().map(|w| w + 2).sum();
                    match width.map(|w| w.saturating_sub(used).max(20)) {
                        Some(room) if c.chars().count() > room => {
                            let cut: String = c.chars().take(room - 1).collect();
                            format!("{cut}…")
                        }
                        _ => c,
                    }
                } else {
                    format!("{c:<w$}", w = widths[i])
                }
            })
            .collect();
        crate::outln!("{}", text.join("  "))
    };
    line(headers.iter().map(|h| h.to_string()).collect())?;
    for row in rows {
        line(row)?;
    }
    Ok(())
}
