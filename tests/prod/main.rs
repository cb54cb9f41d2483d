//! A cell that applies, reconciles and tears down in production (issue 8): the facts of the
//! generated Terraform stack, read with HashiCorp's HCL parser, and what `new` and `check` do
//! with them. One module per subject: Cilium's operator identity, the state backend, cluster
//! access, one VPC block per cell, the egress gateway, no secret in state, the tear-down path
//! and Karpenter's pinned AMI.

#[path = "../support/mod.rs"]
mod support;

mod access;
mod admission;
mod backend;
mod cilium;
mod egress;
mod flux;
mod karpenter;
mod network;
mod nodes;
mod privilege;
mod repo;
mod state;
mod teardown;
mod versions;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use support::*;

pub const PROD: &str = "eu-west-2-prod";
pub const STAGING: &str = "us-east-1-staging";
pub const DEV: &str = "us-east-1-dev";
pub const ADMIN: &str = "arn:aws:iam::123456789012:role/platform-admin";
pub const CI_ROLE: &str = "arn:aws:iam::123456789012:role/ci/terraform";

/// The EC2 privileges Cilium's docs require of the operator in ENI mode ("IPAM ENI", section
/// "Required Privileges", docs.cilium.io/en/stable/network/concepts/ipam/eni/), unconditional ones.
/// The conditional ones are for features the cell does not use (see cni.tf).
pub const CILIUM_ENI_PRIVILEGES: &[&str] = &[
    "DeleteNetworkInterface",
    "DescribeInstanceTypes",
    "DescribeNetworkInterfaces",
    "DescribeSubnets",
    "DescribeVpcs",
    "DescribeRouteTables",
    "DescribeSecurityGroups",
    "CreateNetworkInterface",
    "AttachNetworkInterface",
    "ModifyNetworkInterfaceAttribute",
    "AssignPrivateIpAddresses",
    "CreateTags",
    "DescribeManagedPrefixLists",
    "GetManagedPrefixListEntries",
];

pub fn run(dir: &Path, args: &[&str]) -> Output {
    cellgen()
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("cannot run cellgen")
}

/// Every component of the embedded catalog.
pub fn catalog_names() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/components");
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

pub fn stack_dir(root: &Path, cell: &str) -> PathBuf {
    root.join("terraform/cells").join(cell)
}

/// The single block `kind.type.name` of a parsed file (hcl2json wraps blocks in arrays).
pub fn block<'a>(parsed: &'a Value, file: &str, path: &[&str]) -> &'a Value {
    let mut value = &parsed[file];
    for key in path {
        value = &value[*key];
        if let Value::Array(items) = value {
            value = &items[0];
        }
    }
    assert!(
        !value.is_null(),
        "{file} has no {} (parsed: {})",
        path.join("."),
        parsed[file]
    );
    value
}

pub fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {value}"))
        .iter()
        .map(|v| {
            v.as_str()
                .unwrap_or_else(|| panic!("not a string: {v}"))
                .to_string()
        })
        .collect()
}

/// The VPC block a cell records in its terraform.tfvars.
pub fn tfvars_cidr(root: &Path, cell: &str) -> String {
    let parsed = hcl_parse_dir(&stack_dir(root, cell));
    parsed["terraform.tfvars"]["vpc_cidr"]
        .as_str()
        .unwrap()
        .to_string()
}
