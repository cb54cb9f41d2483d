//! References of a ConfigMap value that the stack declares nowhere (issue 19): `terraform plan`
//! refuses such a stack ("Reference to undeclared resource"), so `check` names them on the key's
//! line instead of staying green. Only the value's own references are looked up, in the stack's
//! directory; what those declarations refer to in turn is Terraform's to validate.

use super::{Decls, Index, Kind, Node, Step, Tracer};

/// One reference nothing declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undeclared {
    /// As Terraform addresses it: `aws_sqs_queue.jobs`, `var.x`, `data.aws_vpc.this`.
    pub address: String,
    /// `resource`, `data source`, `variable`, `local value` or `module`.
    pub kind: &'static str,
    /// The declared address nearest to it, for a did-you-mean.
    pub nearest: Option<String>,
}

impl Undeclared {
    /// The summary of the error `terraform validate` and `plan` give for it.
    pub fn terraform_says(&self) -> &'static str {
        match self.kind {
            "variable" => "Reference to undeclared input variable",
            "local value" => "Reference to undeclared local value",
            "module" => "Reference to undeclared module",
            _ => "Reference to undeclared resource",
        }
    }
}

impl Tracer<'_> {
    /// Whether every file of the stack's directory parsed: when one did not, what it declares
    /// is unknown, and a reference to it must not be called undeclared.
    pub(super) fn stack_parses(&self) -> bool {
        self.world.dirs[0].files.iter().all(|f| f.body().is_some())
    }

    /// The references among `steps` (a value's first references, in the stack's context) that
    /// the stack declares nowhere, each once, in source order.
    pub(super) fn undeclared(&self, steps: &[Step]) -> Vec<Undeclared> {
        let index = self.index(0);
        let mut out: Vec<Undeclared> = Vec::new();
        for step in steps {
            let Step::Node(node) = step else { continue };
            let (address, kind, declared) = match node {
                Node::Var(0, name) => {
                    (format!("var.{name}"), "variable", index.var(name).is_some())
                }
                Node::Local(0, name) => (
                    format!("local.{name}"),
                    "local value",
                    index.local(name).is_some(),
                ),
                Node::Attr(0, Kind::Data, ty, name, _) => (
                    format!("data.{ty}.{name}"),
                    "data source",
                    index.block(Kind::Data, ty, name).is_some(),
                ),
                Node::Attr(0, Kind::Resource, ty, name, _) => (
                    format!("{ty}.{name}"),
                    "resource",
                    index.block(Kind::Resource, ty, name).is_some(),
                ),
                Node::Output(0, name, _) => (
                    format!("module.{name}"),
                    "module",
                    index.module(name).is_some(),
                ),
                _ => continue,
            };
            if declared || out.iter().any(|u| u.address == address) {
                continue;
            }
            let nearest = nearest(index, &address, kind);
            out.push(Undeclared {
                address,
                kind,
                nearest,
            });
        }
        out
    }
}

/// The declared address of the same kind in the stack's directory nearest to `address`
/// (did-you-mean), if any is near enough; compared without the kind's prefix, so `var.x` is not
/// near `var.region` for their shared `var.`. Only run for a reference found undeclared, so it
/// may index every file.
fn nearest(index: &Index<'_>, address: &str, kind: &str) -> Option<String> {
    let mut names: Vec<String> = Vec::new();
    for file in &index.dir.files {
        let decls: &Decls = Index::decls(file);
        match kind {
            "variable" => names.extend(decls.vars.keys().cloned()),
            "local value" => names.extend(decls.locals.keys().cloned()),
            "module" => names.extend(decls.modules.keys().cloned()),
            _ => {
                let wanted = if kind == "data source" {
                    Kind::Data
                } else {
                    Kind::Resource
                };
                for (name, blocks) in &decls.blocks {
                    names.extend(
                        blocks
                            .iter()
                            .filter(|(k, _, _)| *k == wanted)
                            .map(|(_, ty, _)| format!("{ty}.{name}")),
                    );
                }
            }
        }
    }
    names.sort();
    let prefix = match kind {
        "variable" => "var.",
        "local value" => "local.",
        "module" => "module.",
        "data source" => "data.",
        _ => "",
    };
    let bare = address.strip_prefix(prefix).unwrap_or(address);
    crate::suggest::did_you_mean(bare, names.iter().map(String::as_str))
        .map(|near| format!("{prefix}{near}"))
}
