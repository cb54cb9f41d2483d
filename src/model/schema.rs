//! JSON Schemas of the files cellgen reads, generated from the very types that read them
//! (`config::Config`, `catalog::ComponentSpec`), so an editor validates exactly what cellgen
//! accepts: doc comments become descriptions, `deny_unknown_fields` becomes
//! `additionalProperties: false`, serde defaults become `default`.
//!
//! A repository keeps them in `.cellgen/schemas/`, versioned with it and readable offline; a
//! YAML file points at its schema with a `# yaml-language-server: $schema=<relative path>` first
//! line, which yaml-language-server (VS Code, Neovim, Helix, ...) resolves from the file's own
//! directory. Draft 7: the newest draft yaml-language-server supports in full.

use camino::{Utf8Component as Component, Utf8Path, Utf8PathBuf};

use schemars::generate::SchemaSettings;

use crate::error::CellgenError;
use crate::writer::plan::Plan;

/// Where a repository keeps the schemas, relative to its root.
pub const SCHEMA_DIR: &str = ".cellgen/schemas";

/// What precedes the schema path on a file's first line.
pub const MODELINE_PREFIX: &str = "# yaml-language-server: $schema=";

/// A file cellgen publishes a schema for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaFile {
    /// `cellgen.yaml`.
    Config,
    /// `components/<name>/component.yaml`.
    Component,
}

impl SchemaFile {
    pub const ALL: [SchemaFile; 2] = [SchemaFile::Config, SchemaFile::Component];

    /// The name users know the file by (and `cellgen schema` takes).
    pub fn file_name(self) -> &'static str {
        match self {
            SchemaFile::Config => crate::model::config::CONFIG_FILE,
            SchemaFile::Component => crate::model::catalog::SPEC_FILE,
        }
    }

    /// The schema's path in a repository, relative to its root.
    pub fn path(self) -> Utf8PathBuf {
        let name = match self {
            SchemaFile::Config => "cellgen.schema.json",
            SchemaFile::Component => "component.schema.json",
        };
        Utf8Path::new(SCHEMA_DIR).join(name)
    }

    /// The schema as pretty JSON, ending with a newline.
    pub fn json(self) -> String {
        let generator = SchemaSettings::draft07().into_generator();
        let schema = match self {
            SchemaFile::Config => generator.into_root_schema_for::<crate::model::config::Config>(),
            SchemaFile::Component => {
                generator.into_root_schema_for::<crate::model::catalog::ComponentSpec>()
            }
        };
        let mut text = serde_json::to_string_pretty(&schema).expect("a schema always serialises");
        text.push('\n');
        text
    }

    /// The first line for a file of this kind at `file` (relative to the repository root).
    pub fn modeline(self, file: &Utf8Path) -> String {
        format!(
            "{MODELINE_PREFIX}{}",
            relative_to(file.parent().unwrap_or(Utf8Path::new("")), &self.path())
        )
    }
}

/// `target` as seen from directory `from` (both relative to the repository root, without `..`).
fn relative_to(from: &Utf8Path, target: &Utf8Path) -> Utf8PathBuf {
    let ups = from
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .count();
    let mut path = Utf8PathBuf::new();
    for _ in 0..ups {
        path.push("..");
    }
    path.join(target)
}

/// Plans every schema file, creating the missing ones (a new repository, `init`).
pub fn plan_all(plan: &mut Plan) -> Result<(), CellgenError> {
    for file in SchemaFile::ALL {
        write_if_changed(plan, file)?;
    }
    Ok(())
}

/// Brings the schema files a repository has up to date with this cellgen (a newer cellgen may
/// accept new fields). Missing ones stay missing: a repository opts in with `init`.
pub fn refresh(plan: &mut Plan) -> Result<(), CellgenError> {
    for file in SchemaFile::ALL {
        if plan.exists(file.path()) {
            write_if_changed(plan, file)?;
        }
    }
    Ok(())
}

fn write_if_changed(plan: &mut Plan, file: SchemaFile) -> Result<(), CellgenError> {
    let json = file.json();
    if plan.read(file.path())?.as_deref() != Some(json.as_str()) {
        plan.write(file.path(), json)?;
    }
    Ok(())
}

/// `text` with the modeline for `file` as its first line, or None when the file already names a
/// schema for yaml-language-server (the user's choice is kept).
pub fn with_modeline(text: &str, kind: SchemaFile, file: &Utf8Path) -> Option<String> {
    if text
        .lines()
        .any(|l| l.trim_start().starts_with("# yaml-language-server:") && l.contains("$schema="))
    {
        return None;
    }
    Some(format!("{}\n{text}", kind.modeline(file)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modelines_are_relative_to_the_file() {
        assert_eq!(
            SchemaFile::Config.modeline(Utf8Path::new("cellgen.yaml")),
            "# yaml-language-server: $schema=.cellgen/schemas/cellgen.schema.json"
        );
        assert_eq!(
            SchemaFile::Component.modeline(Utf8Path::new("components/billing/component.yaml")),
            "# yaml-language-server: $schema=../../.cellgen/schemas/component.schema.json"
        );
    }

    #[test]
    fn a_modeline_is_added_once() {
        let text = "schema: 1\n";
        let once = with_modeline(text, SchemaFile::Config, Utf8Path::new("cellgen.yaml")).unwrap();
        assert!(once.starts_with(MODELINE_PREFIX) && once.ends_with(text));
        assert_eq!(
            with_modeline(&once, SchemaFile::Config, Utf8Path::new("cellgen.yaml")),
            None
        );
    }

    /// Editors show a field's description on hover and in completion: every field of the types
    /// behind the schemas needs a doc comment.
    #[test]
    fn every_field_is_described() {
        fn walk(path: &str, schema: &serde_json::Value, missing: &mut Vec<String>) {
            let Some(object) = schema.as_object() else {
                return;
            };
            if let Some(serde_json::Value::Object(properties)) = object.get("properties") {
                for (name, property) in properties {
                    if property.get("description").is_none() {
                        missing.push(format!("{path}.{name}"));
                    }
                }
            }
            if let Some(serde_json::Value::Object(definitions)) = object.get("definitions") {
                for (name, definition) in definitions {
                    walk(name, definition, missing);
                }
            }
        }
        for file in SchemaFile::ALL {
            let schema: serde_json::Value = serde_json::from_str(&file.json()).unwrap();
            let mut missing = Vec::new();
            walk(file.file_name(), &schema, &mut missing);
            assert!(
                missing.is_empty(),
                "fields without a doc comment (it becomes the description editors show): {}",
                missing.join(", ")
            );
        }
    }

    #[test]
    fn schemas_are_draft_7_and_closed() {
        for file in SchemaFile::ALL {
            let schema: serde_json::Value = serde_json::from_str(&file.json()).unwrap();
            assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
            assert_eq!(schema["additionalProperties"], false, "{file:?}");
            assert_eq!(schema["title"], file.file_name());
        }
    }
}
