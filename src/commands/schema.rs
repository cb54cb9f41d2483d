//! `cellgen schema <file>`: the JSON Schema of cellgen.yaml or component.yaml on stdout.

use anyhow::Result;

use crate::cli::{SchemaArgs, SchemaTarget};
use crate::schema::SchemaFile;

pub fn run(args: SchemaArgs) -> Result<()> {
    let file = match args.file {
        SchemaTarget::CellgenYaml => SchemaFile::Config,
        SchemaTarget::ComponentYaml => SchemaFile::Component,
    };
    print!("{}", file.json());
    Ok(())
}
