//! `cellgen set-version cilium VERSION [--env ENV]`: Cilium is installed by Terraform (cni.tf),
//! not by Flux, so its version is not a patch in a layer file but a line per environment in
//! cellgen.yaml (`cilium.version`), which every cell of the environment reads at its next plan.
//! A roll-out is the same as a component's: dev, staging, prod, one reviewed change each.

use camino::Utf8Path;

use crate::error::CellgenError;
use crate::model::config::{CONFIG_FILE, Config};
use crate::model::platform::cilium_version;
use crate::ports::edit::yaml::patches::set_scalar;
use crate::writer::plan::Plan;

/// What `set-version cilium` is called with.
pub const NAME: &str = "cilium";

/// One environment's move: (environment, from, to).
pub type Moved = (String, String, String);

/// Sets `cilium.version` of `environments` (every environment when empty) to `version` in the
/// planned cellgen.yaml; returns the environments that move. Refuses a version that is no Cilium
/// release, and a step Cilium does not support: more than one minor version up.
pub fn set(
    plan: &mut Plan,
    config: &Config,
    environments: &[String],
    version: &str,
) -> Result<Vec<Moved>, CellgenError> {
    let Some(new) = cilium_version(version) else {
        return Err(CellgenError::InvalidFlag {
            flag: "VERSION".into(),
            reason: format!(
                "`{version}` is not a Cilium release: use major.minor.patch, e.g. {}",
                crate::model::platform::CILIUM_VERSION
            ),
        });
    };
    let Some(cilium) = &config.cilium else {
        return Err(CellgenError::InvalidFile {
            path: CONFIG_FILE.into(),
            message: "cellgen.yaml has no `cilium:` section (cilium.version per environment, which every cell's cni.tf reads): run `cellgen upgrade`, which adds it with the version the cells install".into(),
        });
    };
    let selected: Vec<&String> = if environments.is_empty() {
        config.environments.iter().collect()
    } else {
        environments.iter().collect()
    };
    let text = plan.read(CONFIG_FILE)?.unwrap_or_default();
    let mut edited = text.clone();
    let mut moved = Vec::new();
    for env in selected {
        let Some(current) = cilium.version.get(env.as_str()) else {
            return Err(CellgenError::InvalidFile {
                path: CONFIG_FILE.into(),
                message: format!("cilium.version has no entry for environment `{env}`: add one"),
            });
        };
        if current == version {
            continue;
        }
        if let Some(old) = cilium_version(current)
            && new.0 == old.0
            && new.1 > old.1 + 1
        {
            return Err(CellgenError::InvalidFlag {
                flag: "VERSION".into(),
                reason: format!(
                    "{env} runs Cilium {current}, and Cilium upgrades one minor version at a time (its upgrade guide, docs.cilium.io, operations/upgrade): take the newest {}.{}.x release first, apply it in every {env} cell, then {version}",
                    old.0,
                    old.1 + 1
                ),
            });
        }
        edited = set_scalar(&edited, &["cilium", "version", env], version).map_err(|e| {
            CellgenError::InvalidFile {
                path: CONFIG_FILE.into(),
                message: format!("cannot set cilium.version.{env}: {e}"),
            }
        })?;
        moved.push((env.clone(), current.clone(), version.to_string()));
    }
    if edited != text {
        // What was written must read back as settings cellgen accepts.
        Config::parse(&edited, Utf8Path::new(CONFIG_FILE))?;
        plan.write(CONFIG_FILE, edited)?;
    }
    Ok(moved)
}
