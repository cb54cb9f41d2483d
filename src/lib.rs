//! cellgen: scaffold and check EKS cells that bridge Terraform and Flux through one ConfigMap.

pub mod catalog;
pub mod cell;
pub mod check;
pub mod cli;
pub mod color;
pub mod commands;
pub mod components;
pub mod config;
pub mod edit;
pub mod error;
pub mod keys;
pub mod kustomize;
pub mod plan;
pub mod progress;
pub mod prompt;
pub mod render;
pub mod repo;
pub mod scaffold;
pub mod schema;
pub mod stack;
pub mod state;
pub mod substitute;
pub mod suggest;
pub mod templates;
