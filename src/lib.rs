//! cellgen: scaffold and check EKS cells that bridge Terraform and Flux through one ConfigMap.
pub mod kustomize;
