//! Templates embedded in the binary (include_dir) and rendered with minijinja in strict mode: a
//! template that names a value the context lacks is an error, never an empty string.

use include_dir::{Dir, include_dir};
use minijinja::{Environment, UndefinedBehavior, Value};
use serde::Serialize;

use crate::error::CellgenError;

static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/templates");

pub struct Templates {
    env: Environment<'static>,
}

impl Default for Templates {
    fn default() -> Self {
        Self::new()
    }
}

impl Templates {
    pub fn new() -> Templates {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_keep_trailing_newline(true);
        env.add_filter("pad", pad);
        env.add_filter("tf_shell_quote", tf_shell_quote);
        for file in all_files(&TEMPLATES) {
            let name = path_of(file);
            if let (Some(name), Some(source)) = (name.strip_suffix(".j2"), file.contents_utf8()) {
                env.add_template_owned(name.to_string(), source)
                    .unwrap_or_else(|err| panic!("embedded template {name} does not parse: {err}"));
            }
        }
        Templates { env }
    }

    /// Renders `name` (its path under templates/, without `.j2`).
    pub fn render(&self, name: &str, context: impl Serialize) -> Result<String, CellgenError> {
        let template = self
            .env
            .get_template(name)
            .map_err(|err| CellgenError::Template {
                name: name.to_string(),
                message: err.to_string(),
            })?;
        template
            .render(context)
            .map_err(|err| CellgenError::Template {
                name: name.to_string(),
                message: format!("{err:#}"),
            })
    }

    /// Names of every template and plain file under `prefix` (template names without `.j2`).
    pub fn names_under(&self, prefix: &str) -> Vec<String> {
        names_under(prefix)
    }

    /// A file copied as it is, or rendered if it is a template.
    pub fn produce(&self, name: &str, context: impl Serialize) -> Result<String, CellgenError> {
        match raw(name) {
            Some(text) => Ok(text.to_string()),
            None => self.render(name, context),
        }
    }
}

/// Names of every embedded template and plain file under `prefix` (template names without
/// `.j2`), sorted; no environment needed.
pub fn names_under(prefix: &str) -> Vec<String> {
    let mut names: Vec<String> = all_files(&TEMPLATES)
        .map(|f| path_of(f).to_string())
        .filter(|p| p.starts_with(prefix))
        .map(|p| p.strip_suffix(".j2").map(str::to_string).unwrap_or(p))
        .collect();
    names.sort();
    names
}

/// A non-template embedded file, as it is.
pub fn raw(name: &str) -> Option<&'static str> {
    TEMPLATES.get_file(name).and_then(|f| f.contents_utf8())
}

/// Every embedded file with its path under templates/, for tests that render them all.
pub fn all_template_names() -> Vec<String> {
    all_files(&TEMPLATES)
        .filter_map(|f| path_of(f).strip_suffix(".j2").map(str::to_string))
        .collect()
}

fn all_files(
    dir: &'static Dir<'static>,
) -> Box<dyn Iterator<Item = &'static include_dir::File<'static>>> {
    Box::new(dir.files().chain(dir.dirs().flat_map(all_files)))
}

/// `{{ key | pad(width) }}`: left-aligns like `terraform fmt` aligns `=` in a block.
fn pad(value: Value, width: usize) -> String {
    let text = value.to_string();
    format!("{text:width$}")
}

/// `{{ text | tf_shell_quote }}`, for a shell script in a Terraform heredoc: one POSIX shell word
/// that is `text` exactly, in single quotes (a `'` inside becomes `'\''`), with `${` and `%{`
/// escaped as `$${` and `%%{`, which Terraform turns back into `${` and `%{` rather than
/// interpolating.
fn tf_shell_quote(value: Value) -> String {
    let text = value.to_string();
    format!("'{}'", text.replace('\'', "'\\''"))
        .replace("${", "$${")
        .replace("%{", "%%{")
}

/// An embedded file's path under templates/: cellgen's own names, UTF-8 (ASCII) by construction.
fn path_of(file: &'static include_dir::File<'static>) -> &'static str {
    file.path()
        .to_str()
        .expect("the embedded templates have UTF-8 paths")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_word_in_a_terraform_heredoc() {
        let quote = |s: &str| tf_shell_quote(Value::from(s));
        assert_eq!(quote("apps, then configs"), "'apps, then configs'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(
            quote("$(rm -rf /) `x` ${a} %{b}"),
            "'$(rm -rf /) `x` $${a} %%{b}'"
        );
    }
}
