//! Each cell's recorded VPC block: where its stack sets `vpc_cidr`, read through the file store,
//! for `new` to pick a free block, `check` to find overlaps and `upgrade` to keep the block.

use camino::{Utf8Path, Utf8PathBuf};
use hcl_edit::Span;
use hcl_edit::expr::Expression;

use crate::model::cidr::Cidr;
use crate::model::config::line_of;
use crate::model::repo::cell_terraform_dir;
use crate::root::filestore::FileStore;

/// A cell's recorded VPC block and where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellCidr {
    pub cell: String,
    /// Repository-relative file that sets it.
    pub file: Utf8PathBuf,
    pub line: Option<usize>,
    /// The block, or why the recorded value is not one.
    pub cidr: Result<Cidr, String>,
}

/// The VPC block of every cell that records one: `vpc_cidr` in its terraform.tfvars, else the
/// `default` of `variable "vpc_cidr"` (cells generated before each cell had its own block).
/// A cell whose stack sets neither is left out.
pub fn recorded(root: &Utf8Path, cells: &[String]) -> Vec<CellCidr> {
    recorded_in(&FileStore::new(root), cells)
}

/// [`recorded`], the files read through `files` (a command's store).
pub fn recorded_in(files: &FileStore, cells: &[String]) -> Vec<CellCidr> {
    // From the last cell: `check`'s cells are checked from the first on other threads, so the
    // two meet once instead of waiting on each other's reads all the way; in order.
    let mut found: Vec<CellCidr> = cells
        .iter()
        .rev()
        .filter_map(|cell| recorded_for_in(files, cell))
        .collect();
    found.reverse();
    found
}

pub fn recorded_for(root: &Utf8Path, cell: &str) -> Option<CellCidr> {
    recorded_for_in(&FileStore::new(root), cell)
}

fn recorded_for_in(files: &FileStore, cell: &str) -> Option<CellCidr> {
    let dir = cell_terraform_dir(cell);
    let tfvars = dir.join(crate::model::repo::TFVARS_FILE);
    // Read line by line when it is plain `key = "literal"` lines (`check` reads every cell's).
    if let Some(found) = read_attribute(files, &tfvars, |text| {
        let attr = crate::model::parsed_hcl::tfvars_attributes(files.memos(), text)?
            .into_iter()
            .find(|a| a.key == "vpc_cidr")?;
        Some((attr.value_line, attr.string))
    }) {
        return Some(found.into_cell(cell, tfvars));
    }
    let variables = dir.join("variables.tf");
    read_attribute(files, &variables, |text| {
        // Through the parse cache: every cell's variables.tf is the same text.
        let body = crate::model::parsed_hcl::parse_kept(files.memos(), text).ok()?;
        let value = body
            .get_blocks("variable")
            .find(|b| b.has_exact_labels(&["vpc_cidr"]))
            .and_then(|b| b.body.get_attribute("default"))
            .map(|a| &a.value)?;
        let line = value
            .span()
            .map(|s| crate::ports::edit::text::line_number(text, s.start));
        let string = match value {
            Expression::String(s) => Some(s.as_str().to_string()),
            _ => None,
        };
        Some((line, string))
    })
    .map(|found| found.into_cell(cell, variables))
}

struct Found {
    line: Option<usize>,
    cidr: Result<Cidr, String>,
}

impl Found {
    fn into_cell(self, cell: &str, file: Utf8PathBuf) -> CellCidr {
        CellCidr {
            cell: cell.to_string(),
            file,
            line: self.line,
            cidr: self.cidr,
        }
    }
}

/// `find` gives the line of the value in the file's text and the value, when a literal string.
fn read_attribute(
    files: &FileStore,
    rel: &Utf8Path,
    find: impl Fn(&str) -> Option<(Option<usize>, Option<String>)>,
) -> Option<Found> {
    let bytes = files.read(rel).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let (line, value) = find(text)?;
    let line = line.or_else(|| line_of(text, "vpc_cidr"));
    let cidr = match value {
        Some(s) => Cidr::parse(&s),
        None => Err(
            "`vpc_cidr` is not a literal string, so cellgen cannot tell which block the cell uses"
                .into(),
        ),
    };
    Some(Found { line, cidr })
}
