//! The files an upgrade decides, each with what tells its base: the cells' files (what cellgen
//! generates for them now, and what their records name) and the repository's own.

use camino::{Utf8Path, Utf8PathBuf};
use std::collections::{BTreeMap, BTreeSet};

use super::files::{self, Base, Decision};
use super::{bases, rebuild};
use crate::error::CellgenError;
use crate::model::catalog::{COMPONENTS_DIR, Catalog, Origin};
use crate::model::cell::CellName;
use crate::model::config::{CONFIG_FILE, Config};
use crate::model::provenance;
use crate::model::repo::cell_terraform_dir;
use crate::model::scaffold::{self, CellInputs, Files, RepoSettings};
use crate::model::state::{self, FileRecord, sha256};
use crate::ports::templates::Templates;
use crate::writer::plan::Plan;

/// One file to decide: what it is now and will be, and what tells its base.
#[derive(Debug, Clone)]
pub struct Request {
    pub path: Utf8PathBuf,
    pub ours: Option<String>,
    pub theirs: Option<String>,
    pub entry: Option<FileRecord>,
    /// Texts cellgen generates, or generated, there without having recorded them (for a file
    /// no record names).
    pub candidates: Vec<String>,
    /// A scaffold file the user deleted stays deleted.
    pub only_existing: bool,
    /// Without a record, still cellgen's: a component's files, which only cellgen writes there
    /// (a scaffold file may be one `init` found and kept).
    pub cellgen_path: bool,
    /// The base rebuilt from the recorded inputs and version (`rebuild`), or why it could not
    /// be, for a file whose record holds only a hash of it.
    pub rebuilt: Option<Result<String, String>>,
}

impl Request {
    /// The base as the record or the file itself tells it, else what Git must be asked.
    fn local_base(&self) -> Option<Base> {
        let ours = self.ours.as_deref()?;
        match &self.entry {
            Some(entry) => {
                if let Some(text) = entry.generated_text() {
                    Some(Base::Known(text.to_string()))
                } else if sha256(ours) == entry.sha256 {
                    Some(Base::Known(ours.to_string()))
                } else if let Some(Ok(text)) = &self.rebuilt {
                    Some(Base::Known(text.clone()))
                } else {
                    None
                }
            }
            None if self.candidates.iter().any(|c| c == ours) => {
                Some(Base::Known(ours.to_string()))
            }
            None if self.candidates.is_empty() => Some(Base::NotGenerated),
            None => None,
        }
    }

    pub fn needs_git(&self) -> bool {
        self.ours.is_some() && self.ours != self.theirs && self.local_base().is_none()
    }

    pub fn decide(&self, git: &bases::GitTexts, label: &str) -> Option<Decision> {
        if self.only_existing && self.ours.is_none() {
            return None;
        }
        let base = match self.local_base() {
            Some(base) => base,
            None if self.ours.is_none() || self.ours == self.theirs => Base::NotGenerated,
            None => match &self.entry {
                Some(entry) => match git.find(&self.path, &entry.sha256) {
                    Some(text) => Base::Known(text.to_string()),
                    None => {
                        let history = match &git.unavailable {
                            Some(why) => format!("no base: {why}"),
                            None => "no base: the text cellgen generated is in neither the record nor the Git history".into(),
                        };
                        Base::Unknown(match &self.rebuilt {
                            Some(Err(why)) => format!("{history}, and {why}"),
                            _ => history,
                        })
                    }
                },
                None => match git.newest_of(&self.path, &self.candidates) {
                    Some(text) => Base::Known(text.to_string()),
                    None if self.cellgen_path => Base::Unknown(match &git.unavailable {
                        Some(why) => format!("no base: no record, and {why}"),
                        None => "no base: no record, and no version in the Git history is one cellgen generated".into(),
                    }),
                    None => Base::NotGenerated,
                },
            },
        };
        Some(files::decide(
            &self.path,
            self.ours.as_deref(),
            self.theirs.as_deref(),
            base,
            self.entry.as_ref(),
            label,
        ))
    }
}

/// Every file of a selected cell: what cellgen generates for it now, and what its record names.
/// `before` is cellgen.yaml as the upgrade found it and `inputs` what the cell's files say it was
/// generated from, for rebuilding a base (`rebuild`).
pub fn cell_requests(
    plan: &Plan,
    desired: &Plan,
    templates: &Templates,
    catalog: &Catalog,
    (name, before, inputs): (&CellName, &Config, &CellInputs),
) -> Result<Vec<Request>, CellgenError> {
    let cell = name.name.as_str();
    let record = state::load(plan, cell)?.unwrap_or_default();
    let renames = provenance::renames(plan)?;
    // What the cell was generated from: its record's inputs, else what its files say.
    let generated_from = match &record.inputs {
        Some(r) => CellInputs {
            kubernetes_version: r.kubernetes_version.clone(),
            egress_gateway: r.egress_gateway,
            vpc_cidr: r.vpc_cidr.clone(),
            forget_flux_bootstrap: inputs.forget_flux_bootstrap,
        },
        None => inputs.clone(),
    };
    let mut rebuilt_by_version: BTreeMap<String, Result<Files, String>> = BTreeMap::new();
    let mut paths: BTreeSet<Utf8PathBuf> = desired
        .planned()
        .filter(|(path, _)| state::in_cell(path, cell))
        .map(|(path, _)| path.to_path_buf())
        .collect();
    // Only the cell's own paths: a record naming anything else (hand-edited) is not obeyed.
    paths.extend(
        record
            .files
            .keys()
            .map(Utf8PathBuf::from)
            .filter(|p| state::in_cell(p, cell)),
    );
    let mut out = Vec::new();
    for path in paths {
        let theirs = if desired.planned().any(|(p, _)| p == path) {
            desired
                .read(&path)?
                .map(|text| provenance::renamed(&renames, &path, text))
        } else {
            None
        };
        let entry = record.files.get(path.as_str()).cloned();
        let ours = plan.read(&path)?;
        let rebuilt = match (&entry, &ours) {
            (Some(e), Some(o))
                if e.generated_text().is_none()
                    && sha256(o) != e.sha256
                    && theirs.as_deref() != Some(o.as_str()) =>
            {
                let files = rebuilt_by_version
                    .entry(e.cellgen.clone())
                    .or_insert_with(|| {
                        rebuild::cell_files(templates, before, name, &generated_from, &e.cellgen)
                    });
                Some(rebuild::base(files, &path, &e.sha256, &e.cellgen))
            }
            _ => None,
        };
        // A component's .tf was not recorded by cellgen 0.1.0: recognised by its text.
        let mut candidates = Vec::new();
        let mut cellgen_path = false;
        if entry.is_none()
            && let Some(component) = path.file_stem().and_then(|s| catalog.components.get(s))
            && path.parent() == Some(cell_terraform_dir(cell).as_path())
            && path.extension().is_some_and(|e| e == "tf")
        {
            candidates.extend(component.terraform(templates, name)?);
            candidates.extend(bases::history(&path, ""));
            cellgen_path = theirs.is_some();
        }
        out.push(Request {
            ours,
            path,
            theirs,
            entry,
            candidates,
            only_existing: false,
            cellgen_path,
            rebuilt,
        });
    }
    Ok(out)
}

/// The repository's own generated files: the scaffold files it has, and the shared files of
/// every embedded component a cell runs.
pub fn repository_requests(
    plan: &Plan,
    templates: &Templates,
    config: &Config,
    catalog: &Catalog,
    used: &BTreeSet<String>,
) -> Result<Vec<Request>, CellgenError> {
    let record = state::load_repository(plan)?.unwrap_or_default();
    let settings = RepoSettings {
        git_url: config.git.url.clone(),
        git_branch: config.git.branch.clone(),
        environments: config.environments.clone(),
        kubernetes_version: config.defaults.kubernetes_version.clone(),
        state_bucket: config.terraform.state_bucket.clone(),
        state_region: config.terraform.state_region.clone(),
        admin_role_arns: config.cluster_access.admin_role_arns.clone(),
        public_endpoint_cidrs: config.cluster_access.public_endpoint_cidrs.clone(),
        dns_zones: Vec::new(),
        git_known_hosts: crate::model::flux_settings::known_hosts_lines(
            config.git.known_hosts.as_deref().unwrap_or_default(),
        ),
    };
    let (scaffold, _) = scaffold::repo_files(templates, &settings, |_| false)?;
    let mut wanted: Vec<(Utf8PathBuf, String, bool)> = scaffold
        .into_iter()
        .filter(|(path, _)| path != Utf8Path::new(CONFIG_FILE))
        .map(|(path, text)| (path, text, true))
        .collect();
    for name in used {
        if let Some(component) = catalog.components.get(name)
            && component.origin == Origin::Embedded
        {
            wanted.extend(
                component
                    .shared_files(templates)
                    .into_iter()
                    .map(|(path, text)| (path, text, false)),
            );
        }
    }
    let mut out = Vec::new();
    let mut seen: BTreeSet<Utf8PathBuf> = BTreeSet::new();
    for (path, theirs, only_existing) in wanted {
        // What cellgen generates here is its templates' text with the contract's renames.
        let theirs = provenance::renamed(&record.renames, &path, theirs);
        let entry = record.files.get(path.as_str()).cloned();
        let mut candidates = vec![theirs.clone()];
        candidates.extend(
            bases::history(&path, &config.git.branch)
                .into_iter()
                .map(|text| provenance::renamed(&record.renames, &path, text)),
        );
        seen.insert(path.clone());
        out.push(Request {
            ours: plan.read(&path)?,
            path,
            theirs: Some(theirs),
            entry,
            candidates,
            only_existing,
            cellgen_path: !only_existing,
            rebuilt: None,
        });
    }
    // Files the record names that this cellgen no longer generates, of components still used.
    for (key, entry) in &record.files {
        let path = Utf8PathBuf::from(key);
        let in_used_component = path
            .strip_prefix(COMPONENTS_DIR)
            .ok()
            .and_then(|rest| rest.iter().next())
            .is_some_and(|c| used.contains(c));
        if seen.contains(&path) || !in_used_component || !state::in_repository(&path) {
            continue;
        }
        out.push(Request {
            ours: plan.read(&path)?,
            path,
            theirs: None,
            entry: Some(entry.clone()),
            candidates: Vec::new(),
            only_existing: true,
            cellgen_path: true,
            rebuilt: None,
        });
    }
    Ok(out)
}
