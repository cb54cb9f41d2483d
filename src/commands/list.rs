use anyhow::Result;
use serde::Serialize;

use super::Session;
use crate::catalog::Catalog;
use crate::cli::{ListArgs, ListFormat, ListTarget};
use crate::components::cell_components;
use crate::plan::Plan;
use crate::repo::Repo;
use crate::templates::Templates;

#[derive(Serialize)]
struct CellRow {
    cell: String,
    region: String,
    environment: String,
    components: Vec<String>,
}

pub fn run(session: &mut Session, args: ListArgs) -> Result<()> {
    match args.what {
        ListTarget::Cells => {
            let repo = Repo::discover(&session.start)?;
            let plan = Plan::new(&repo.root);
            let mut rows = Vec::new();
            for name in repo.cells()? {
                let (region, environment) = name
                    .rsplit_once('-')
                    .map(|(r, e)| (r.to_string(), e.to_string()))
                    .unwrap_or_default();
                let components = cell_components(&plan, &repo.config, &name)?
                    .into_iter()
                    .collect();
                rows.push(CellRow {
                    cell: name,
                    region,
                    environment,
                    components,
                });
            }
            match args.format {
                ListFormat::Json => println!("{}", serde_json::to_string_pretty(&rows)?),
                ListFormat::Table if rows.is_empty() => {
                    println!("No cells yet: create one with `cellgen new <region>-<environment>`.")
                }
                ListFormat::Table => print_table(
                    &["CELL", "REGION", "ENVIRONMENT", "COMPONENTS"],
                    rows.iter()
                        .map(|r| {
                            vec![
                                r.cell.clone(),
                                r.region.clone(),
                                r.environment.clone(),
                                if r.components.is_empty() {
                                    "-".into()
                                } else {
                                    r.components.join(", ")
                                },
                            ]
                        })
                        .collect(),
                ),
            }
        }
        ListTarget::Components => {
            // The catalog is embedded: outside a repository it is listed alone; inside one, with
            // the repository's own components.
            let templates = Templates::new();
            let catalog = match Repo::find_root(&session.start) {
                Some(root) => Catalog::load(&templates, &Plan::new(root))?,
                None => Catalog::embedded(&templates)?,
            };
            match args.format {
                ListFormat::Json => {
                    #[derive(Serialize)]
                    struct Row<'a> {
                        name: &'a str,
                        origin: crate::catalog::Origin,
                        #[serde(flatten)]
                        spec: &'a crate::catalog::ComponentSpec,
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
                    println!("{}", serde_json::to_string_pretty(&rows)?);
                }
                ListFormat::Table => print_table(
                    &[
                        "COMPONENT",
                        "ORIGIN",
                        "LAYERS",
                        "KEYS",
                        "IDENTITY",
                        "REQUIRES",
                        "DESCRIPTION",
                    ],
                    catalog
                        .components
                        .values()
                        .map(|c| {
                            vec![
                                c.name.clone(),
                                format!("{:?}", c.origin).to_lowercase(),
                                c.spec.layers.join(", "),
                                if c.spec.keys.is_empty() {
                                    "-".into()
                                } else {
                                    c.spec.keys.keys().cloned().collect::<Vec<_>>().join(", ")
                                },
                                c.spec.identity.as_ref().map_or("-".into(), |i| {
                                    format!("{}/{}", i.namespace, i.service_account)
                                }),
                                if c.spec.requires.is_empty() {
                                    "-".into()
                                } else {
                                    c.spec.requires.join(", ")
                                },
                                c.spec.description.clone(),
                            ]
                        })
                        .collect(),
                ),
            }
        }
    }
    Ok(())
}

fn print_table(headers: &[&str], rows: Vec<Vec<String>>) {
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
                    c
                } else {
                    format!("{c:<w$}", w = widths[i])
                }
            })
            .collect();
        println!("{}", text.join("  "));
    };
    line(headers.iter().map(|h| h.to_string()).collect());
    for row in rows {
        line(row);
    }
}
