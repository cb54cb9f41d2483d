//! `cellgen schema <file>`: the JSON Schema of cellgen.yaml or component.yaml on stdout.

use std::io::Write;

use anyhow::{Context, Result};

use crate::cli::{SchemaArgs, SchemaTarget};
use crate::model::schema::SchemaFile;

pub fn run(args: SchemaArgs) -> Result<()> {
    let file = match args.file {
        SchemaTarget::CellgenYaml => SchemaFile::Config,
        SchemaTarget::ComponentYaml => SchemaFile::Component,
    };
    std::io::stdout()
        .write_all(file.json().as_bytes())
        .context("cannot write the schema to stdout")
}
