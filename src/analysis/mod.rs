//! Layers 6 and 7 (CONTRIBUTING.md), analyses. The analysis library (rendering, snapshots,
//! findings and their formats, locating source lines and field paths, the contract and layer
//! checks, the secret trace, the inventory) and, on top of it, the four analyses `check`, `diff`,
//! `graph` and `verify`, which never import one another (nor the operations): what two of them
//! share belongs in the library.

pub mod contract;
pub mod findings;
pub mod format;
pub mod inventory;
pub mod layer_check;
pub mod locate;
pub mod render;
pub mod secrets;
pub mod snapshot;

pub mod check;
pub mod diff;
pub mod graph;
pub mod verify;
