//! Ephemeral values (Terraform 1.10+, write-only attributes 1.11+): a reference to an ephemeral
//! variable, or to a local that holds one, is refused ("Invalid use of ephemeral value")
//! anywhere Terraform would persist it. It may appear in provider configuration, provisioner and
//! connection blocks, locals, ephemeral outputs, and a managed resource's write-only attributes
//! (`write_only` in the provider schema); not in a data source, a module argument, a plain
//! output, `count`/`for_each`, or any other resource argument.

use std::collections::BTreeSet;

use hcl_edit::Span;
use hcl_edit::expr::{Expression, TraversalOperator};
use hcl_edit::structure::{Body, Structure};
use hcl_edit::visit::{Visit, visit_expr};

use super::{File, Stack, label};

/// `var.X` and `local.Y` an expression reads.
#[derive(Default)]
struct Reads(BTreeSet<String>);

impl Visit for Reads {
    fn visit_expr(&mut self, expr: &Expression) {
        if let Expression::Traversal(t) = expr
            && let Expression::Variable(root) = &t.expr
            && matches!(root.as_str(), "var" | "local")
            && let Some(TraversalOperator::GetAttr(name)) = t.operators.first().map(|o| o.value())
        {
            self.0
                .insert(format!("{}.{}", root.as_str(), name.as_str()));
        }
        visit_expr(self, expr);
    }
}

fn reads(expr: &Expression) -> BTreeSet<String> {
    let mut r = Reads::default();
    r.visit_expr(expr);
    r.0
}

fn reads_body(body: &Body) -> BTreeSet<String> {
    let mut r = Reads::default();
    r.visit_body(body);
    r.0
}

impl Stack<'_> {
    pub(super) fn check_ephemeral(&mut self, files: &[File]) {
        let mut ephemeral: BTreeSet<String> = BTreeSet::new();
        for file in files {
            for block in file.body.get_blocks("variable") {
                if let (Some(name), Some(attr)) =
                    (label(block, 0), block.body.get_attribute("ephemeral"))
                    && matches!(&attr.value, Expression::Bool(b) if *b.value())
                {
                    ephemeral.insert(format!("var.{name}"));
                }
            }
        }
        // A local that reads an ephemeral value is ephemeral itself.
        loop {
            let before = ephemeral.len();
            for file in files {
                for block in file.body.get_blocks("locals") {
                    for attr in block.body.attributes() {
                        if reads(&attr.value).iter().any(|r| ephemeral.contains(r)) {
                            ephemeral.insert(format!("local.{}", attr.key.as_str()));
                        }
                    }
                }
            }
            if ephemeral.len() == before {
                break;
            }
        }
        if ephemeral.is_empty() {
            return;
        }
        let hit = |set: BTreeSet<String>| set.into_iter().find(|r| ephemeral.contains(r));
        for file in files {
            for block in file.body.blocks() {
                let what = block
                    .labels
                    .iter()
                    .map(|l| l.as_str())
                    .collect::<Vec<_>>()
                    .join(".");
                match block.ident.as_str() {
                    "resource" => {
                        let ty = label(block, 0).unwrap_or_default();
                        let local = ty.split('_').next().unwrap_or(ty).to_string();
                        let schema = self
                            .provider(&local)
                            .and_then(|p| p.resources.get(ty))
                            .cloned();
                        for structure in block.body.iter() {
                            match structure {
                                Structure::Attribute(a) => {
                                    let Some(value) = hit(reads(&a.value)) else {
                                        continue;
                                    };
                                    let name = a.key.as_str();
                                    let write_only = schema.as_ref().is_some_and(|s| {
                                        s["attributes"][name]["write_only"] == true
                                    });
                                    if !write_only {
                                        self.problems.push(format!(
                                            "{}: `{what}.{name}` reads the ephemeral `{value}`, but it is not a write-only attribute: Terraform refuses an ephemeral value where it would store it",
                                            file.at(a.key.span())
                                        ));
                                    }
                                }
                                Structure::Block(b)
                                    if matches!(
                                        b.ident.as_str(),
                                        "provisioner" | "connection" | "lifecycle"
                                    ) => {}
                                Structure::Block(b) => {
                                    if let Some(value) = hit(reads_body(&b.body)) {
                                        self.problems.push(format!(
                                            "{}: `{what}.{}` reads the ephemeral `{value}`: Terraform refuses an ephemeral value in a resource's block",
                                            file.at(b.ident.span()),
                                            b.ident.as_str()
                                        ));
                                    }
                                }
                            }
                        }
                    }
                    "data" | "module" => {
                        if let Some(value) = hit(reads_body(&block.body)) {
                            self.problems.push(format!(
                                "{}: {} `{what}` reads the ephemeral `{value}`: Terraform refuses it there",
                                file.at(block.ident.span()),
                                block.ident.as_str()
                            ));
                        }
                    }
                    "output" => {
                        let marked = block
                            .body
                            .get_attribute("ephemeral")
                            .is_some_and(|a| matches!(&a.value, Expression::Bool(b) if *b.value()));
                        if !marked && let Some(value) = hit(reads_body(&block.body)) {
                            self.problems.push(format!(
                                "{}: output `{what}` reads the ephemeral `{value}` and is not `ephemeral = true`",
                                file.at(block.ident.span())
                            ));
                        }
                    }
                    _ => {}
                }
            }
        }
    }
}
