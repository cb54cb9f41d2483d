//! Layer 5 (CONTRIBUTING.md), the repository model: what a cellgen repository is and holds — `cellgen.yaml`, the
//! catalog, cells and their names, the key contract, records, stacks, what `init` and `new`
//! generate, chart versions, JSON Schemas — read (and planned) through the layers below.

pub mod catalog;
pub mod cell;
pub mod cell_cidr;
pub mod cells;
pub mod cidr;
pub mod config;
pub mod contract;
pub mod flux_settings;
pub mod generated;
pub mod ignore;
pub mod inputs;
pub mod keys;
pub mod names;
pub mod parsed_hcl;
pub mod platform;
pub mod provenance;
pub mod repo;
pub mod scaffold;
pub mod schema;
pub mod stack;
pub mod state;
pub mod versions;
