//! Cells are routed to each other, so no two cells' VPC blocks may overlap. Each cell records its
//! block as `vpc_cidr` in `terraform/cells/<cell>/terraform.tfvars` (see `cidr`). An overlap of
//! live cells that cellgen.yaml acknowledges (`network.acknowledged_overlaps`, with a reason) is
//! a warning: a VPC cannot change its block without being replaced, and a fleet made before
//! cellgen gave each cell its own block would otherwise never pass.

use std::collections::HashSet;

use crate::analysis::findings::Finding;
use crate::model::cell_cidr::CellCidr;
use crate::model::cidr;
use crate::model::config::{CONFIG_FILE, NetworkSettings, line_of};

/// Findings for the `checked` cells, compared with every cell of the repository (`all`), read
/// through `files`; `network` is cellgen.yaml's.
pub fn check(
    files: &crate::root::filestore::FileStore,
    network: &NetworkSettings,
    all: &[String],
    checked: &[String],
    findings: &mut Vec<Finding>,
) {
    unknown_acknowledged(files, network, all, findings);
    let recorded = crate::model::cell_cidr::recorded_in(files, all);
    let checked: HashSet<&str> = checked.iter().map(String::as_str).collect();
    let blocks: Vec<_> = recorded.iter().map(|r| r.cidr.clone().ok()).collect();
    let overlapping = cidr::overlapping(&blocks);
    for (i, this) in recorded
        .iter()
        .enumerate()
        .filter(|(_, r)| checked.contains(r.cell.as_str()))
    {
        let block = match &this.cidr {
            Ok(block) => block,
            Err(problem) => {
                findings.push(
                    Finding::error("invalid-vpc-cidr", &this.file, this.line, problem.clone())
                        .in_cell(&this.cell),
                );
                continue;
            }
        };
        // The others in repository order, as when every pair was compared.
        for other in overlapping[i].iter().map(|&j| &recorded[j]) {
            let Ok(theirs) = &other.cidr else { continue };
            if other.cell == this.cell {
                continue;
            }
            if let Some(ack) = network.acknowledged(&this.cell, &other.cell) {
                findings.push(
                    Finding::warning(
                        "acknowledged-vpc-overlap",
                        &this.file,
                        this.line,
                        format!(
                            "vpc_cidr {block} overlaps {theirs}, the VPC of cell `{}` ({}), acknowledged in {CONFIG_FILE} (network.acknowledged_overlaps: {}): keep the two from being routed to each other",
                            other.cell,
                            location(other),
                            ack.reason.trim()
                        ),
                    )
                    .in_cell(&this.cell),
                );
            } else {
                findings.push(
                    Finding::error(
                        "overlapping-vpc-cidr",
                        &this.file,
                        this.line,
                        format!(
                            "vpc_cidr {block} overlaps {theirs}, the VPC of cell `{}` ({}): cells are routed to each other, so give one of them a free block of network.vpc_cidr_pool (cellgen.yaml)",
                            other.cell,
                            location(other)
                        ),
                    )
                    .in_cell(&this.cell),
                );
            }
        }
    }
}

/// A cell an acknowledgement names that the repository does not have: a typo would leave the
/// overlap it meant an error, and a removed cell's entry is stale.
fn unknown_acknowledged(
    files: &crate::root::filestore::FileStore,
    network: &NetworkSettings,
    all: &[String],
    findings: &mut Vec<Finding>,
) {
    let text = files
        .read_to_string(camino::Utf8Path::new(CONFIG_FILE))
        .unwrap_or_default();
    for overlap in &network.acknowledged_overlaps {
        for cell in overlap.cells.iter().filter(|c| !all.contains(c)) {
            findings.push(Finding::error(
                "unknown-acknowledged-cell",
                CONFIG_FILE,
                line_of(&text, cell).or_else(|| line_of(&text, "acknowledged_overlaps")),
                format!(
                    "network.acknowledged_overlaps names `{cell}`, which is not a cell of this repository.{} Name the cells as `cellgen list` shows them, or drop a removed cell from the entry (an entry needs two cells)",
                    crate::suggest::hint(cell, all.iter().map(String::as_str))
                ),
            ));
        }
    }
}

fn location(recorded: &CellCidr) -> String {
    match recorded.line {
        Some(line) => format!("{}:{line}", recorded.file),
        None => recorded.file.to_string(),
    }
}
