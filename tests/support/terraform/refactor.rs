//! `removed` and `import` blocks, as Terraform 1.11 decodes them (internal/configs/removed.go,
//! import.go): their arguments and nested blocks, the address they name, and that a removed
//! resource is no longer declared ("Removed resource still exists").

use hcl_edit::Span;
use hcl_edit::expr::{Expression, TraversalOperator};
use hcl_edit::structure::{Block, Structure};

use super::Stack;
use super::types::Report;

/// `TYPE.NAME` of a traversal with no index, or `None`.
fn resource_address(expr: &Expression) -> Option<(String, String)> {
    let Expression::Traversal(t) = expr else {
        return None;
    };
    let Expression::Variable(root) = &t.expr else {
        return None;
    };
    let [op] = t.operators.as_slice() else {
        return None;
    };
    match op.value() {
        TraversalOperator::GetAttr(name) => {
            Some((root.as_str().to_string(), name.as_str().to_string()))
        }
        _ => None,
    }
}

impl Stack<'_> {
    /// A `removed` block: `from` (required) is a resource without instance keys that the
    /// configuration no longer declares; `lifecycle` holds only `destroy` (a bool); provisioners
    /// run at destroy only. Terraform reads a forgotten resource's state with its provider, so
    /// that provider must be required (cellgen's rule: a pinned release, not whatever `init`
    /// finds for the state).
    pub(super) fn check_removed(&mut self, block: &Block, report: &mut Report) {
        let mut from = None;
        for structure in block.body.iter() {
            match structure {
                Structure::Attribute(a) if a.key.as_str() == "from" => from = Some(a),
                Structure::Attribute(a) => report(
                    a.key.span(),
                    format!("a `removed` block has no argument `{}`", a.key.as_str()),
                ),
                Structure::Block(b) => match b.ident.as_str() {
                    "lifecycle" => {
                        for s in b.body.iter() {
                            match s {
                                Structure::Attribute(a) if a.key.as_str() == "destroy" => {
                                    if !matches!(a.value, Expression::Bool(_)) {
                                        report(
                                            a.key.span(),
                                            "`removed.lifecycle.destroy` must be true or false"
                                                .into(),
                                        );
                                    }
                                }
                                other => report(
                                    other.span(),
                                    "`removed.lifecycle` takes only `destroy`".into(),
                                ),
                            }
                        }
                    }
                    "connection" => {}
                    "provisioner" => {
                        let when = b.body.get_attribute("when").map(|a| match &a.value {
                            Expression::Variable(v) => v.as_str().to_string(),
                            _ => String::new(),
                        });
                        if when.as_deref() != Some("destroy") {
                            report(
                                b.ident.span(),
                                "only destroy-time provisioners (`when = destroy`) are valid in a `removed` block".into(),
                            );
                        }
                    }
                    other => report(
                        b.ident.span(),
                        format!("a `removed` block has no block type `{other}`"),
                    ),
                },
            }
        }
        let Some(from) = from else {
            report(
                block.ident.span(),
                "a `removed` block lacks `from`, the address to remove".into(),
            );
            return;
        };
        let Some((ty, name)) = resource_address(&from.value) else {
            // A module address (module.x) is valid too; only resources are checked further.
            if !matches!(&from.value, Expression::Traversal(t) if matches!(&t.expr, Expression::Variable(v) if v.as_str() == "module"))
            {
                report(
                    from.key.span(),
                    "`removed.from` must be a resource or module address without instance keys"
                        .into(),
                );
            }
            return;
        };
        if self.resources.contains(&(ty.clone(), name.clone())) {
            report(
                from.key.span(),
                format!(
                    "`{ty}.{name}` is removed but its resource block still exists: Terraform refuses both"
                ),
            );
        }
        let local = ty.split('_').next().unwrap_or(&ty).to_string();
        if !self.provider_sources.contains_key(&local) {
            report(
                from.key.span(),
                format!(
                    "`{ty}.{name}` is removed, and Terraform reads its state with provider `{local}`, which required_providers does not pin"
                ),
            );
        } else if self.provider(&local).is_none() {
            report(
                from.key.span(),
                format!("provider `{local}` of the removed `{ty}`: no vendored schema"),
            );
        }
    }

    /// An `import` block: `to` (a resource address) and `id` are required; `provider` and
    /// `for_each` are meta-arguments.
    pub(super) fn check_import(&mut self, block: &Block, report: &mut Report) {
        for structure in block.body.iter() {
            match structure {
                Structure::Attribute(a)
                    if ["to", "id", "provider", "for_each"].contains(&a.key.as_str()) => {}
                other => report(
                    other.span(),
                    "an `import` block takes to, id, provider and for_each only (Terraform 1.11)"
                        .into(),
                ),
            }
        }
        match block.body.get_attribute("to") {
            Some(to) => {
                if let Some((ty, name)) = resource_address(&to.value)
                    && !self.resources.contains(&(ty.clone(), name.clone()))
                {
                    report(
                        to.key.span(),
                        format!("`import.to` names `{ty}.{name}`, which is not declared"),
                    );
                }
            }
            None => report(block.ident.span(), "an `import` block lacks `to`".into()),
        }
        if !block.body.has_attribute("id") {
            report(block.ident.span(), "an `import` block lacks `id`".into());
        }
    }
}
