//! cellgen: scaffold and check EKS cells that bridge Terraform and Flux through one ConfigMap.
//!
//! The modules are layers, bottom to top; each imports only its own layer and those below
//! (CONTRIBUTING.md, enforced by tests/layers.rs).

pub mod error;
pub mod paths;
pub mod suggest;

pub mod ports;

pub mod root;

pub mod writer;

pub mod model;

pub mod analysis;

pub mod ops;

pub mod cli;
pub mod commands;
