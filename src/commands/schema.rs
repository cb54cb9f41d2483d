//! `cellgen schema <file>`: the JSON Schema of cellgen.yaml or component.yaml on stdout.

use anyhow::Result;

use crate::cli::{SchemaArgs, SchemaTarget};
use crate::model::schema::SchemaFile;

pub fn run(args: SchemaArgs) -> Result<()> {
    let file = match args.file {
        SchemaTarget::CellgenYaml => SchemaFile::Config,
        SchemaTarget::ComponentYaml => SchemaFile::Component,
    };
    Ok(crate::commands::ui::out::stdout_bytes(
        file.json().as_bytes(),
    )?)
}
