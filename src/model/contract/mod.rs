//! The key contract's numbers, and the commands that change its keys.
//!
//! `schema` in cellgen.yaml is the contract's number: it names a key set, and goes up by one in
//! a command that changes which keys the contract has (a key joins, leaves or is renamed), once
//! per command however many keys change. Each key records `since`, the number at which it got
//! its name. A cell's number, `schema` in its cell-metadata.tf, is the largest `since` among the
//! contract keys it writes: its ConfigMap carries every key of the cell's components and
//! selection with `since` up to that number, and none newer. So a change rewrites only the
//! ConfigMaps whose keys it changes, and `check` can tell each cell's number exactly.
//!
//! Removing exactly the keys the last change added gives the previous number back (the key set
//! is again the one it named), so adding then removing restores every byte. A rename is not an
//! addition: a renamed key records `renamed_from`, and removing it is a new number.

pub mod refs;

use camino::{Utf8Path, Utf8PathBuf};

use crate::error::CellgenError;
use crate::model::cells::planned_config;
use crate::model::config::{CONFIG_FILE, Config, FIRST_SCHEMA, SCHEMA_KEY};
use crate::model::names::METADATA_FILE;
use crate::model::repo::cell_terraform_dir;
use crate::ports::edit::{hcl, yaml};
use crate::writer::plan::Plan;

/// A cell's number: the largest `since` among the contract keys in `written` (the keys its
/// cell-metadata.tf writes); keys outside the contract do not count.
pub fn cell_number<'a>(config: &Config, written: impl IntoIterator<Item = &'a str>) -> u32 {
    written
        .into_iter()
        .filter_map(|key| config.keys.get(key))
        .map(|spec| spec.since())
        .max()
        .unwrap_or(FIRST_SCHEMA)
}

/// The contract's number as the command found it: on disk, or the first number for a contract
/// the command creates.
pub fn start_number(plan: &Plan) -> Result<u32, CellgenError> {
    match plan.read_on_disk(CONFIG_FILE)? {
        Some(text) => Ok(Config::parse(&text, Utf8Path::new(CONFIG_FILE))?.schema),
        None => Ok(FIRST_SCHEMA),
    }
}

/// Whether taking `leaving` out of `config` undoes the contract's last change: they are
/// exactly the keys that joined at its number (none of them by a rename).
pub fn undoes_last_change(config: &Config, leaving: &[String]) -> bool {
    let n = config.schema;
    !leaving.is_empty()
        && n > FIRST_SCHEMA
        && leaving.iter().all(|k| {
            config
                .keys
                .get(k)
                .is_some_and(|s| s.since == Some(n) && s.renamed_from.is_none())
        })
        && config
            .keys
            .iter()
            .all(|(k, s)| s.since() != n || leaving.contains(k))
}

/// The number a change of the key set gets in this command: the command's one bump (the one it
/// already made, if any), or the previous number when the change undoes the last one and the
/// command has changed nothing else yet. `config` is the contract as the plan has it.
pub fn change_number(plan: &Plan, config: &Config, undoes: bool) -> Result<u32, CellgenError> {
    let start = start_number(plan)?;
    Ok(if config.schema > start {
        config.schema
    } else if undoes && config.schema == start {
        start - 1
    } else {
        start + 1
    })
}

/// Edits cellgen.yaml's keys with `f` and sets its `schema` to `number`, in one step (the file
/// reads back as a contract only with both).
pub fn edit_contract(
    plan: &mut Plan,
    number: u32,
    f: impl FnOnce(&str) -> Result<String, yaml::YamlEditError>,
) -> Result<(), CellgenError> {
    let (config, text) = planned_config(plan)?;
    let mut edited = f(&text).map_err(|e| invalid(CONFIG_FILE, e))?;
    if config.schema != number {
        edited = yaml::set_schema(&edited, number).map_err(|e| invalid(CONFIG_FILE, e))?;
    }
    Config::parse(&edited, Utf8Path::new(CONFIG_FILE))?;
    if edited != text {
        plan.write(CONFIG_FILE, edited)?;
    }
    Ok(())
}

pub fn metadata_path(cell: &str) -> Utf8PathBuf {
    cell_terraform_dir(cell).join(METADATA_FILE)
}

/// Gives `cell`'s ConfigMap the number its keys say (see the module doc); a ConfigMap without a
/// `schema` entry, or without a readable file, is left for `check` to report.
pub fn renumber_cell(plan: &mut Plan, cell: &str) -> Result<(), CellgenError> {
    let path = metadata_path(cell);
    let Some(text) = plan.read(&path)? else {
        return Ok(());
    };
    let (config, _) = planned_config(plan)?;
    let meta = hcl::read(&text).map_err(|e| invalid(&path, e))?;
    let Some(entry) = meta.get(SCHEMA_KEY) else {
        return Ok(());
    };
    let number = cell_number(&config, meta.entries.iter().map(|e| e.key.as_str()));
    if entry.literal.as_deref() == Some(number.to_string().as_str()) {
        return Ok(());
    }
    let edited = hcl::set_data_value(&text, SCHEMA_KEY, &format!("\"{number}\""))
        .map_err(|e| invalid(&path, e))?;
    plan.write(path, edited)
}

fn invalid(path: impl Into<Utf8PathBuf>, e: impl std::fmt::Display) -> CellgenError {
    CellgenError::InvalidFile {
        path: path.into(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(schema: u32, keys: &[(&str, Option<u32>, Option<&str>)]) -> Config {
        let mut text = format!(
            "schema: {schema}\ngit:\n  url: ssh://git@example.com/x.git\nlayers:\n  - name: apps\n    path: apps\nkeys:\n"
        );
        for (key, since, renamed) in keys {
            text.push_str(&format!("  {key}:\n    description: d\n    example: e\n"));
            if let Some(since) = since {
                text.push_str(&format!("    since: {since}\n"));
            }
            if let Some(old) = renamed {
                text.push_str(&format!("    renamed_from: {old}\n"));
            }
        }
        Config::parse(&text, Utf8Path::new("cellgen.yaml")).unwrap()
    }

    #[test]
    fn a_cell_is_numbered_by_its_newest_key() {
        let c = config(
            4,
            &[
                ("a", None, None),
                ("b", Some(2), None),
                ("c", Some(4), None),
            ],
        );
        assert_eq!(cell_number(&c, ["a"]), 1);
        assert_eq!(cell_number(&c, ["a", "b", "stray"]), 2);
        assert_eq!(cell_number(&c, ["c", "a"]), 4);
    }

    #[test]
    fn only_the_exact_inverse_of_the_last_change_gives_its_number_back() {
        let c = config(
            3,
            &[
                ("a", None, None),
                ("b", Some(3), None),
                ("c", Some(3), None),
            ],
        );
        assert!(undoes_last_change(&c, &["b".into(), "c".into()]));
        assert!(!undoes_last_change(&c, &["b".into()]), "c joined with it");
        assert!(!undoes_last_change(&c, &["a".into()]));
        let renamed = config(3, &[("a", None, None), ("b", Some(3), Some("old"))]);
        assert!(!undoes_last_change(&renamed, &["b".into()]));
    }
}
