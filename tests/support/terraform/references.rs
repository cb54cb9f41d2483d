//! References and function calls: `module.X.Y` names an output of X's release,
//! `TYPE.NAME.attr` and `data.TYPE.NAME.attr` an attribute or block of the type's schema, and
//! every function exists in the installed Terraform and gets as many arguments as it takes.

use std::ops::Range;

use hcl_edit::Span;
use hcl_edit::expr::{Expression, TraversalOperator};
use hcl_edit::visit::{Visit, visit_expr};

use super::facts::Provider;
use super::types::did_you_mean;
use super::{File, Stack, functions};

impl Stack<'_> {
    /// `module.X.Y`, `TYPE.NAME.attr` and `data.TYPE.NAME.attr` against the outputs and schemas.
    pub(super) fn check_references(&mut self, file: &File, problems: &mut Vec<String>) {
        let mut collector = Traversals::default();
        collector.visit_body(&file.body);
        let known = functions::functions();
        for (name, args, expands, span) in &collector.calls {
            let at = file.at(span.clone());
            match known.get(name) {
                None if name.starts_with("provider::") => {} // provider-defined: not vendored
                None => problems.push(format!(
                    "{at}: `{name}` is not a Terraform function{}",
                    did_you_mean(name, known.keys())
                )),
                Some(&(fixed, variadic)) => {
                    let ok = if *expands {
                        variadic || *args <= fixed
                    } else if variadic {
                        *args >= fixed
                    } else {
                        *args == fixed
                    };
                    if !ok {
                        problems.push(format!(
                            "{at}: `{name}` takes {}{fixed} argument{}, not {args}",
                            if variadic { "at least " } else { "" },
                            if fixed == 1 { "" } else { "s" }
                        ));
                    }
                }
            }
        }
        for (root, ops, span) in collector.found {
            let attrs: Vec<&str> = ops.iter().filter_map(|o| o.as_deref()).collect();
            let at = file.at(span);
            match root.as_str() {
                "module" => {
                    // module.X[...].Y: the first attribute after the name is the output
                    let (Some(Some(module)), Some(output)) =
                        (ops.first(), ops.iter().skip(1).flatten().next())
                    else {
                        continue;
                    };
                    if let Some(Some((release, dir, facts))) = self.modules.get(module)
                        && !facts.outputs.contains(output)
                    {
                        problems.push(format!(
                            "{at}: `module.{module}.{output}`: {} {}{} has no output `{output}`{}",
                            release.source,
                            release.version,
                            if dir.is_empty() {
                                String::new()
                            } else {
                                format!(" ({dir})")
                            },
                            did_you_mean(output, facts.outputs.iter())
                        ));
                    }
                }
                "data" if attrs.len() >= 3 && ops[0].is_some() && ops[1].is_some() => {
                    let (ty, name) = (attrs[0], attrs[1]);
                    if !self.data.contains(&(ty.to_string(), name.to_string())) {
                        continue;
                    }
                    let local = ty.split('_').next().unwrap_or(ty).to_string();
                    let attr = ops.iter().skip(2).flatten().next().unwrap();
                    if let Some(p) = self.provider(&local)
                        && let Some(schema) = p.data_sources.get(ty)
                    {
                        check_attribute_ref(
                            schema,
                            &format!("data.{ty}.{name}"),
                            attr,
                            p,
                            &at,
                            problems,
                        );
                    }
                }
                ty => {
                    let Some(Some(name)) = ops.first() else {
                        continue;
                    };
                    if !self.resources.contains(&(ty.to_string(), name.clone())) {
                        continue;
                    }
                    let Some(attr) = ops.iter().skip(1).flatten().next() else {
                        continue;
                    };
                    let local = ty.split('_').next().unwrap_or(ty).to_string();
                    if let Some(p) = self.provider(&local)
                        && let Some(schema) = p.resources.get(ty)
                    {
                        check_attribute_ref(
                            schema,
                            &format!("{ty}.{name}"),
                            attr,
                            p,
                            &at,
                            problems,
                        );
                    }
                }
            }
        }
    }
}

fn check_attribute_ref(
    schema: &serde_json::Value,
    what: &str,
    attr: &str,
    provider: &Provider,
    at: &str,
    problems: &mut Vec<String>,
) {
    let attrs = schema["attributes"].as_object();
    let blocks = schema["block_types"].as_object();
    let known =
        attrs.is_some_and(|a| a.contains_key(attr)) || blocks.is_some_and(|b| b.contains_key(attr));
    if !known {
        let names: Vec<String> = attrs
            .into_iter()
            .chain(blocks)
            .flat_map(|m| m.keys().cloned())
            .collect();
        problems.push(format!(
            "{at}: `{what}.{attr}`: {} {} has no attribute `{attr}`{}",
            provider.source,
            provider.version,
            did_you_mean(attr, names.iter())
        ));
    }
}

/// A traversal rooted at a name: the root, its operators as `Some(attribute)` or `None` for an
/// index or splat, and its span.
type Found = (String, Vec<Option<String>>, Option<Range<usize>>);

/// A function call: its name, how many arguments, whether the last is expanded (`f(xs...)`),
/// and its span.
type Call = (String, usize, bool, Option<Range<usize>>);

/// Every traversal rooted at a name and every function call of a body.
#[derive(Default)]
struct Traversals {
    found: Vec<Found>,
    calls: Vec<Call>,
}

impl Visit for Traversals {
    fn visit_expr(&mut self, expr: &Expression) {
        if let Expression::FuncCall(call) = expr {
            let name = call
                .name
                .namespace
                .iter()
                .map(|n| format!("{}::", n.as_str()))
                .chain([call.name.name.as_str().to_string()])
                .collect::<String>();
            self.calls
                .push((name, call.args.len(), call.args.expand_final(), expr.span()));
        }
        if let Expression::Traversal(t) = expr
            && let Expression::Variable(root) = &t.expr
        {
            let ops = t
                .operators
                .iter()
                .map(|op| match op.value() {
                    TraversalOperator::GetAttr(ident) => Some(ident.as_str().to_string()),
                    _ => None,
                })
                .collect();
            self.found
                .push((root.as_str().to_string(), ops, expr.span()));
        }
        visit_expr(self, expr);
    }
}
