//! `check` opens each repository file once: the builder, the contract, the secret trace, the
//! VPC check and the conflict-marker scan all ask the command's store (`filestore`), and a
//! cell's files are given back once it is checked.

use std::sync::Arc;

use camino::Utf8Path;
use cellgen::analysis::check::{self, CheckOptions};
use cellgen::model::catalog::Catalog;
use cellgen::model::repo::Repo;
use cellgen::ports::kustomize::Mode;
use cellgen::ports::templates::Templates;
use cellgen::root::filestore::FileStore;
use cellgen::writer::plan::Plan;

use super::{DEV, PROD, repo};

#[test]
fn check_opens_each_file_once() {
    let dir = repo();
    let root = Utf8Path::from_path(dir.path()).unwrap();
    let repo = Repo::discover(root).unwrap();
    let catalog = Catalog::load(
        &Templates::new(),
        &Plan::new(&repo.root, cellgen::model::repo::read_by_flux),
    )
    .unwrap();
    let options = CheckOptions {
        cells: Vec::new(),
        overrides: Default::default(),
        mode: Mode::Native,
        ends_process: false,
    };
    let files = Arc::new(FileStore::new(&repo.root));
    let report = check::run_reading(&repo, &catalog, &options, &files, None).unwrap();
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    let opened = files.paths();
    // Every file of each cell was read (the scan reads them all; the others share its reads).
    for cell in [PROD, DEV] {
        for side in ["cells", "terraform/cells"] {
            for entry in std::fs::read_dir(root.join(side).join(cell)).unwrap() {
                let name = entry.unwrap().file_name().into_string().unwrap();
                let rel = Utf8Path::new(side).join(cell).join(name);
                assert!(
                    opened.contains(&rel),
                    "{rel} was not read through the store"
                );
            }
        }
    }
    // ...and each was opened once, though four readers ask for terraform.tfvars, three for
    // cell-metadata.tf and two for every other .tf file and every cell's YAML file.
    assert_eq!(files.opens(), opened.len(), "{opened:?}");
    // Each cell gave its files back once checked (all but terraform.tfvars, which the VPC
    // check reads beside the cells), so check holds one cell per core, not the repository.
    for rel in opened
        .iter()
        .filter(|p| p.starts_with("cells") || p.starts_with("terraform/cells"))
    {
        let kept = rel.file_name() == Some(cellgen::model::repo::TFVARS_FILE);
        assert_eq!(files.holds(rel), kept, "{rel}");
    }
    assert!(files.holds(Utf8Path::new("cellgen.yaml")));
    // A second check with its own store opens the same files again, once each.
    let again = Arc::new(FileStore::new(&repo.root));
    check::run_reading(&repo, &catalog, &options, &again, None).unwrap();
    assert_eq!(again.paths(), opened);
    assert_eq!(again.opens(), opened.len());
}
