//! Cells are routed to each other, so no two cells' VPC blocks may overlap. Each cell records its
//! block as `vpc_cidr` in `terraform/cells/<cell>/terraform.tfvars` (see `cidr`).

use std::collections::HashSet;

use crate::analysis::findings::Finding;
use crate::model::cidr::{self, CellCidr};

/// Findings for the `checked` cells, compared with every cell of the repository (`all`), read
/// through `files`.
pub fn check(
    files: &crate::root::filestore::FileStore,
    all: &[String],
    checked: &[String],
    findings: &mut Vec<Finding>,
) {
    let recorded = cidr::recorded_in(files, all);
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
            if other.cell != this.cell {
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

fn location(recorded: &CellCidr) -> String {
    match recorded.line {
        Some(line) => format!("{}:{line}", recorded.file),
        None => recorded.file.to_string(),
    }
}
