//! Where manifests use a key: every `${key}` Flux would substitute in the files layers build
//! from. Found with the port of Flux's own envsubst parser (`crate::ports::envsubst`), so `$${key}`
//! (a literal), `${key_longer}` (another variable) and text outside `${...}` never count, and
//! every operator form does (`${key:-x}`, `${key:=x}`, `${#key}`, nested defaults).

use camino::{Utf8Path, Utf8PathBuf};

use crate::error::CellgenError;
use crate::model::catalog::COMPONENTS_DIR;
use crate::model::config::Config;
use crate::model::repo::{CELLS_DIR, list_dirs};
use crate::ports::edit::text::LineIndex;
use crate::writer::plan::Plan;

/// One `${key...}` in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Use {
    pub file: Utf8PathBuf,
    pub line: usize,
    /// The whole expression, e.g. `${region:-eu-west-1}`.
    pub text: String,
}

impl std::fmt::Display for Use {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{} ({})", self.file, self.line, self.text)
    }
}

/// Files whose objects Flux substitutes: everything under the layers' paths (cellgen.yaml's, and
/// any other `spec.path` a cell's Flux Kustomizations build), `components/`, and the cells'
/// directories (a layer's `spec.patches` is built, then substituted). Flux's own manifests
/// (`cells/<cell>/flux-system`) are not substituted and are left out. Sorted, each once.
pub fn manifest_files(plan: &Plan, config: &Config) -> Result<Vec<Utf8PathBuf>, CellgenError> {
    let mut dirs: Vec<Utf8PathBuf> = config
        .layers
        .iter()
        .map(|l| Utf8PathBuf::from(l.path.trim_start_matches("./")))
        .collect();
    dirs.push(Utf8PathBuf::from(COMPONENTS_DIR));
    dirs.push(Utf8PathBuf::from(CELLS_DIR));
    for cell in list_dirs(&plan.root().join(CELLS_DIR))? {
        for file in files_under(plan.root(), &Utf8Path::new(CELLS_DIR).join(&cell), false)? {
            if let Some(path) = plan
                .read(&file)
                .ok()
                .flatten()
                .and_then(|text| layer_path(&text))
            {
                dirs.push(path);
            }
        }
    }
    let mut files = Vec::new();
    for dir in dirs {
        files.extend(files_under(plan.root(), &dir, true)?);
    }
    files.sort();
    files.dedup();
    Ok(files)
}

/// `spec.path` of a Flux Kustomization file, repository-relative, when it stays inside.
fn layer_path(text: &str) -> Option<Utf8PathBuf> {
    let value: yaml_serde::Value = crate::ports::yaml::from_str(text).ok()?;
    if value.get("kind")?.as_str()? != "Kustomization" {
        return None;
    }
    let path = value.get("spec")?.get("path")?.as_str()?;
    let path = path.trim_start_matches("./");
    crate::paths::is_clean_relative(path).then(|| Utf8PathBuf::from(path))
}

/// Regular files under `dir` (repository-relative), recursively when `deep`; symbolic links to
/// directories are not followed, `flux-system` directories and hidden entries are skipped.
fn files_under(
    root: &Utf8Path,
    dir: &Utf8Path,
    deep: bool,
) -> Result<Vec<Utf8PathBuf>, CellgenError> {
    crate::model::repo::files_under(root, dir, deep, &|name, _| {
        name.starts_with('.') || name == crate::model::names::FLUX_SYSTEM
    })
}

/// A file's text, or `None` when it is not text cellgen reads (not UTF-8): Flux substitutes
/// YAML, which is UTF-8.
fn text_of(plan: &Plan, file: &Utf8Path) -> Result<Option<String>, CellgenError> {
    match plan.read(file) {
        Ok(text) => Ok(text),
        Err(CellgenError::NotUtf8 { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Byte ranges of the documents of `text` in which Flux substitutes nothing (labelled or
/// annotated `kustomize.toolkit.fluxcd.io/substitute: disabled`).
fn disabled_documents(text: &str) -> Vec<std::ops::Range<usize>> {
    let marker =
        regex::Regex::new(r#"kustomize\.toolkit\.fluxcd\.io/substitute["']?\s*:\s*["']?disabled"#)
            .expect("a valid regex");
    let mut out = Vec::new();
    let mut start = 0;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_end() == "---" || line.starts_with("--- ") {
            out.push(start..offset);
            start = offset + line.len();
        }
        offset += line.len();
    }
    out.push(start..text.len());
    out.retain(|r| marker.is_match(&text[r.clone()]));
    out
}

/// The byte ranges of the name `key` in every `${...}` of `text` that reads it.
fn key_spans(text: &str, key: &str) -> Vec<(std::ops::Range<usize>, String)> {
    let disabled = disabled_documents(text);
    crate::ports::envsubst::references(text)
        .into_iter()
        .filter(|r| r.name == key && !disabled.iter().any(|d| d.contains(&r.offset)))
        .filter_map(|r| {
            let after = r.offset + 2;
            // `${#key}` is the length of the variable: the name follows the `#`.
            let start = if text[after..].starts_with('#') {
                after + 1
            } else {
                after
            };
            (text.get(start..start + key.len()) == Some(key))
                .then(|| (start..start + key.len(), r.text))
        })
        .collect()
}

/// Every use of `key` in the repository's manifests, in file and line order.
pub fn uses(plan: &Plan, config: &Config, key: &str) -> Result<Vec<Use>, CellgenError> {
    let mut out = Vec::new();
    for file in manifest_files(plan, config)? {
        let Some(text) = text_of(plan, &file)? else {
            continue;
        };
        if !text.contains(key) {
            continue;
        }
        let lines = LineIndex::new(&text);
        for (span, expression) in key_spans(&text, key) {
            out.push(Use {
                file: file.clone(),
                line: lines.line(span.start),
                text: expression,
            });
        }
    }
    Ok(out)
}

/// `text` with every `${old...}` reading `new` instead; `None` when nothing changes.
pub fn rename_in(text: &str, old: &str, new: &str) -> Option<String> {
    if !text.contains(old) {
        return None;
    }
    let spans = key_spans(text, old);
    if spans.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (span, _) in spans {
        out.push_str(&text[at..span.start]);
        out.push_str(new);
        at = span.end;
    }
    out.push_str(&text[at..]);
    Some(out)
}

/// Renames `old` to `new` in every manifest; returns the files changed.
pub fn rename_everywhere(
    plan: &mut Plan,
    config: &Config,
    old: &str,
    new: &str,
) -> Result<Vec<Utf8PathBuf>, CellgenError> {
    let mut changed = Vec::new();
    for file in manifest_files(plan, config)? {
        let Some(text) = text_of(plan, &file)? else {
            continue;
        };
        if let Some(renamed) = rename_in(&text, old, new) {
            plan.write(file.clone(), renamed)?;
            changed.push(file);
        }
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_real_references_are_renamed() {
        let text = "a: ${vpc}\nb: $${vpc}\nc: ${vpc_id}\nd: ${vpc:-x}\ne: ${x:=${vpc}}\nf: ${#vpc}\ng: $$${vpc}\nh: vpc\n";
        let renamed = rename_in(text, "vpc", "network").unwrap();
        assert_eq!(
            renamed,
            "a: ${network}\nb: $${vpc}\nc: ${vpc_id}\nd: ${network:-x}\ne: ${x:=${network}}\nf: ${#network}\ng: $$${network}\nh: vpc\n"
        );
        assert_eq!(rename_in("x: $${vpc}\n", "vpc", "n"), None);
    }

    #[test]
    fn documents_with_substitution_disabled_keep_their_text() {
        let text = "a: ${k}\n---\nmetadata:\n  annotations:\n    kustomize.toolkit.fluxcd.io/substitute: disabled\nb: ${k}\n---\nc: ${k}\n";
        let renamed = rename_in(text, "k", "n").unwrap();
        assert_eq!(
            renamed,
            "a: ${n}\n---\nmetadata:\n  annotations:\n    kustomize.toolkit.fluxcd.io/substitute: disabled\nb: ${k}\n---\nc: ${n}\n"
        );
    }
}
