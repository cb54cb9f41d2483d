//! Where each value of the cell-metadata ConfigMap comes from: every reference of its expression
//! followed through the stack's `.tf` files (locals, variables and their `terraform.tfvars`
//! values, resource and data source arguments, `for_each`, outputs of local modules and the
//! arguments their variables are fed from), through templates, functions, conditionals and
//! `for` expressions, to a secret source:
//!
//! - an attribute a provider schema marks sensitive ([`super::sensitive`]), or one whose name
//!   says it is a secret when no schema cellgen knows covers its type;
//! - a variable or local-module output declared `sensitive = true`;
//! - `sensitive(...)`, `nonsensitive(...)` (only ever applied to a secret), `rsadecrypt(...)`;
//! - a literal (or a terraform.tfvars value) that looks like a key or token.
//!
//! Each key's shortest chain is found breadth-first, without recursion; every node is expanded at
//! most once per key, so the work is linear in the size of the stack. Files that do not parse
//! are skipped: Terraform cannot apply such a stack, so no ConfigMap is written from it.

use camino::Utf8Path;
use std::collections::BTreeMap;

use hcl_edit::Span;
use hcl_edit::expr::{Expression, ForExpr, ObjectKey, TraversalOperator};
use hcl_edit::structure::{Block, Body};
use hcl_edit::visit::{Visit, visit_expr};

use super::decls::Decls;
use super::sensitive::{Kind, lookup};
use super::stack::{File, World};
use super::{attribute_names_secret, secret_literal};
use crate::ports::edit::hcl::{CONFIG_MAP_NAME, CONFIG_MAP_TYPE};
use crate::root::filestore::FileStore;
use index::{Decl, Index};

/// How a ConfigMap value is built from a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taint {
    /// The key, then each reference followed, ending at the source, e.g. `db_password`,
    /// `local.pw (main.tf:4)`, `random_password.db.result (main.tf:1)`.
    pub chain: Vec<String>,
    /// Why the last link is a secret.
    pub reason: String,
}

/// Links of a chain shown in full; longer ones show their first and last halves.
const SHOWN_LINKS: usize = 12;
/// Nodes expanded at most per key; a stack this large is traced that far and no further.
const MAX_NODES: usize = 200_000;

/// What following the ConfigMap's values through the stack found, by data key.
#[derive(Debug, Default)]
pub struct Traced {
    /// Keys built from a secret, each with its chain.
    pub taints: BTreeMap<String, Taint>,
    /// Keys whose value refers to something the stack declares nowhere.
    pub undeclared: BTreeMap<String, Vec<Undeclared>>,
}

/// Every data key of `kubernetes_config_map_v1.cell_metadata` in the stack `stack` (relative to
/// the root of `files`) that is built from a secret, with its chain.
pub fn trace(files: &FileStore, stack: &Utf8Path) -> BTreeMap<String, Taint> {
    trace_all(files, stack).taints
}

/// [`trace`], and the references of each value that the stack declares nowhere.
pub fn trace_all(files: &FileStore, stack: &Utf8Path) -> Traced {
    trace_loaded(files, stack, true)
}

/// [`trace_all`], with files' contents shared by text (`share`) or computed per file.
fn trace_loaded(files: &FileStore, stack: &Utf8Path, share: bool) -> Traced {
    let Some(world) = World::load(files, stack, share) else {
        return Traced::default();
    };
    let tracer = Tracer::new(&world);
    tracer.trace_config_map()
}

fn is_true(body: &Body, key: &str) -> bool {
    matches!(body.get_attribute(key).map(|a| &a.value), Some(Expression::Bool(b)) if *b.value())
}

// ---------------------------------------------------------------------------------------------
// Tracing
// ---------------------------------------------------------------------------------------------

/// Something a value can come from, within one context.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Node {
    Var(usize, String),
    Local(usize, String),
    /// A resource or data source, and the attribute names referenced after `TYPE.NAME`.
    Attr(usize, Kind, String, String, Vec<String>),
    /// `module.NAME.OUTPUT` (all outputs when None).
    Output(usize, String, Option<String>),
    /// `each.*` inside a resource or data block: its `for_each`.
    Each(usize, Kind, String, String),
    /// `each.*` inside a module call: its `for_each`.
    EachModule(usize, String),
}

/// What an expression refers to: another node to follow, or a secret source.
#[derive(Debug, Clone)]
enum Step {
    Node(Node),
    Source {
        label: Option<String>,
        reason: String,
    },
}

struct Tracer<'w> {
    world: &'w World,
    indexes: Vec<Index<'w>>,
}

/// Meta-arguments of a block, which are not attributes a reference can read.
const META: &[&str] = &["count", "for_each", "depends_on", "provider", "providers"];

impl<'w> Tracer<'w> {
    fn new(world: &'w World) -> Tracer<'w> {
        Tracer {
            world,
            indexes: world.dirs.iter().map(Index::of).collect(),
        }
    }

    fn index(&self, ctx: usize) -> &Index<'w> {
        &self.indexes[self.world.ctxs[ctx].dir]
    }

    fn trace_config_map(&self) -> Traced {
        let mut out = Traced::default();
        let Some((file, block)) =
            self.index(0)
                .block(Kind::Resource, CONFIG_MAP_TYPE, CONFIG_MAP_NAME)
        else {
            return out;
        };
        let Some(Expression::Object(data)) = block.body.get_attribute("data").map(|a| &a.value)
        else {
            return out;
        };
        let each = Node::Each(
            0,
            Kind::Resource,
            CONFIG_MAP_TYPE.to_string(),
            CONFIG_MAP_NAME.to_string(),
        );
        // Whether every stack file parses is asked only once a reference is not found: it
        // parses every file, where the look-ups parse only those that may declare the name.
        let mut parses: Option<bool> = None;
        for (key, value) in data.iter() {
            let name = match key {
                ObjectKey::Ident(ident) => ident.as_str().to_string(),
                ObjectKey::Expression(Expression::String(s)) => s.as_str().to_string(),
                ObjectKey::Expression(_) => continue,
            };
            let steps = self.refs(0, file, value.expr(), Some(&each));
            let undeclared = self.undeclared(&steps);
            if !undeclared.is_empty() && *parses.get_or_insert_with(|| self.stack_parses()) {
                out.undeclared.insert(name.clone(), undeclared);
            }
            if let Some(taint) = self.search(&name, steps) {
                out.taints.insert(name, taint);
            }
        }
        out
    }

    /// Breadth-first from a key's references to the nearest secret source.
    fn search(&self, key: &str, first: Vec<Step>) -> Option<Taint> {
        // Every node reached, with the index of the node it was reached from.
        let mut arena: Vec<(Node, Option<usize>)> = Vec::new();
        let mut seen: foldhash::HashSet<Node> = foldhash::HashSet::default();
        let mut next = 0;
        let mut pending: (Vec<Step>, Option<usize>) = (first, None);
        loop {
            let (steps, parent) = pending;
            for step in steps {
                match step {
                    Step::Source { label, reason } => {
                        let mut nodes = Vec::new();
                        let mut at = parent;
                        while let Some(i) = at {
                            nodes.push(&arena[i].0);
                            at = arena[i].1;
                        }
                        nodes.reverse();
                        // Labels are built only for the chain found (they count lines), and a
                        // very long chain is shown by its ends.
                        let mut links = vec![key.to_string()];
                        if nodes.len() > SHOWN_LINKS {
                            let tail = nodes.split_off(nodes.len() - SHOWN_LINKS / 2);
                            let hidden = nodes.len() - SHOWN_LINKS / 2;
                            nodes.truncate(SHOWN_LINKS / 2);
                            links.extend(nodes.iter().map(|n| self.label(n)));
                            links.push(format!("... {hidden} more ..."));
                            links.extend(tail.iter().map(|n| self.label(n)));
                        } else {
                            links.extend(nodes.iter().map(|n| self.label(n)));
                        }
                        links.extend(label);
                        return Some(Taint {
                            chain: links,
                            reason,
                        });
                    }
                    Step::Node(node) => {
                        if seen.len() < MAX_NODES && seen.insert(node.clone()) {
                            arena.push((node, parent));
                        }
                    }
                }
            }
            let node = &arena.get(next)?.0;
            pending = (self.expand(node), Some(next));
            next += 1;
        }
    }

    /// How a node reads in a chain, with where it is declared.
    fn label(&self, node: &Node) -> String {
        let with = |text: String, at: Option<String>| match at {
            Some(at) => format!("{text} ({at})"),
            None => text,
        };
        match node {
            Node::Var(ctx, name) => with(
                format!("var.{name}"),
                self.index(*ctx)
                    .var(name)
                    .map(|(f, b)| f.at(b.ident.span())),
            ),
            Node::Local(ctx, name) => with(
                format!("local.{name}"),
                self.index(*ctx)
                    .local(name)
                    .map(|(f, a)| f.at(a.key.span())),
            ),
            Node::Attr(ctx, kind, ty, name, path) => {
                let prefix = if *kind == Kind::Data { "data." } else { "" };
                let mut text = format!("{prefix}{ty}.{name}");
                for part in path {
                    text.push('.');
                    text.push_str(part);
                }
                let at = self.index(*ctx).block(*kind, ty, name).map(|(f, b)| {
                    let arg = path.first().and_then(|p| b.body.get_attribute(p));
                    match arg {
                        Some(a) => f.at(a.key.span()),
                        None => f.at(b.ident.span()),
                    }
                });
                with(text, at)
            }
            Node::Output(ctx, module, output) => {
                let text = match output {
                    Some(o) => format!("module.{module}.{o}"),
                    None => format!("module.{module}"),
                };
                with(
                    text,
                    self.index(*ctx)
                        .module(module)
                        .map(|(f, b)| f.at(b.ident.span())),
                )
            }
            Node::Each(ctx, kind, ty, name) => with(
                "each.value".into(),
                self.index(*ctx).block(*kind, ty, name).and_then(|(f, b)| {
                    b.body.get_attribute("for_each").map(|a| f.at(a.key.span()))
                }),
            ),
            Node::EachModule(ctx, module) => with(
                "each.value".into(),
                self.index(*ctx).module(module).and_then(|(f, b)| {
                    b.body.get_attribute("for_each").map(|a| f.at(a.key.span()))
                }),
            ),
        }
    }

    /// What a node's value is built from.
    fn expand(&self, node: &Node) -> Vec<Step> {
        let source = |reason: String| {
            vec![Step::Source {
                label: None,
                reason,
            }]
        };
        match node {
            Node::Var(ctx, name) => {
                let decl = self.index(*ctx).var(name);
                if let Some((_, block)) = decl
                    && is_true(&block.body, "sensitive")
                {
                    return source("declared with `sensitive = true`".into());
                }
                let mut steps = Vec::new();
                match &self.world.ctxs[*ctx].call {
                    Some((parent, module)) => {
                        // A module's variable is fed by the calling block's argument.
                        if let Some((file, call)) = self.index(*parent).module(module)
                            && let Some(arg) = call.body.get_attribute(name)
                        {
                            let each = Node::EachModule(*parent, module.clone());
                            return self.refs(*parent, file, &arg.value, Some(&each));
                        }
                    }
                    None => {
                        if let Some((at, value)) = self.world.tfvars.get(name)
                            && let Some(why) = secret_literal(value)
                        {
                            steps.push(Step::Source {
                                label: Some(at.clone()),
                                reason: why,
                            });
                        }
                    }
                }
                if let Some((file, block)) = decl
                    && let Some(default) = block.body.get_attribute("default")
                {
                    steps.extend(self.refs(*ctx, file, &default.value, None));
                }
                steps
            }
            Node::Local(ctx, name) => match self.index(*ctx).local(name) {
                Some((file, attr)) => self.refs(*ctx, file, &attr.value, None),
                None => Vec::new(),
            },
            Node::Attr(ctx, kind, ty, name, path) => {
                let parts: Vec<&str> = path.iter().map(String::as_str).collect();
                if let Some(s) = lookup(*kind, ty, &parts) {
                    return source(format!(
                        "`{}` of {}{ty} is sensitive in the {} schema",
                        s.path,
                        if *kind == Kind::Data {
                            "data source "
                        } else {
                            ""
                        },
                        s.provider
                    ));
                }
                if let Some(last) = path.last()
                    && attribute_names_secret(last)
                {
                    return source(format!("its name, `{last}`, says it is a secret"));
                }
                let Some((file, block)) = self.index(*ctx).block(*kind, ty, name) else {
                    return Vec::new();
                };
                // An attribute set from a secret holds it (Terraform marks it sensitive too).
                let each = Node::Each(*ctx, *kind, ty.clone(), name.clone());
                match path.first() {
                    Some(first) => match block.body.get_attribute(first) {
                        Some(arg) if !META.contains(&first.as_str()) => {
                            self.refs(*ctx, file, &arg.value, Some(&each))
                        }
                        _ => Vec::new(),
                    },
                    None => block
                        .body
                        .attributes()
                        .filter(|a| !META.contains(&a.key.as_str()))
                        .flat_map(|a| self.refs(*ctx, file, &a.value, Some(&each)))
                        .collect(),
                }
            }
            Node::Output(ctx, module, output) => {
                if let Some(o) = output
                    && attribute_names_secret(o)
                {
                    return source(format!("its name, `{o}`, says it is a secret"));
                }
                let Some(child) = self.world.ctxs[*ctx].children.get(module) else {
                    return Vec::new(); // a registry module: its outputs are not known here
                };
                let index = self.index(*child);
                let mut chosen: Vec<Decl<'w, Block>> = match output {
                    Some(o) => index.output(o).into_iter().collect(),
                    None => index.outputs(),
                };
                chosen.sort_by_key(|(f, b)| (f.shown.clone(), b.span().map(|s| s.start)));
                let mut steps = Vec::new();
                for (file, block) in chosen {
                    if is_true(&block.body, "sensitive") {
                        steps.push(Step::Source {
                            label: Some(format!(
                                "output \"{}\" ({})",
                                block.labels.first().map_or("", |l| l.as_str()),
                                file.at(block.ident.span())
                            )),
                            reason: "declared with `sensitive = true`".into(),
                        });
                    } else if let Some(value) = block.body.get_attribute("value") {
                        steps.extend(self.refs(*child, file, &value.value, None));
                    }
                }
                steps
            }
            Node::Each(ctx, kind, ty, name) => {
                match self
                    .index(*ctx)
                    .block(*kind, ty, name)
                    .and_then(|(f, b)| Some((f, b.body.get_attribute("for_each")?)))
                {
                    Some((file, attr)) => self.refs(*ctx, file, &attr.value, None),
                    None => Vec::new(),
                }
            }
            Node::EachModule(ctx, module) => {
                match self
                    .index(*ctx)
                    .module(module)
                    .and_then(|(f, b)| Some((f, b.body.get_attribute("for_each")?)))
                {
                    Some((file, attr)) => self.refs(*ctx, file, &attr.value, None),
                    None => Vec::new(),
                }
            }
        }
    }

    /// Everything an expression reads, in source order.
    fn refs(&self, ctx: usize, file: &File, expr: &Expression, each: Option<&Node>) -> Vec<Step> {
        let mut collect = Collect {
            ctx,
            file,
            each,
            scope: Vec::new(),
            steps: Vec::new(),
        };
        collect.visit_expr(expr);
        collect.steps
    }
}

/// Functions whose result is a secret whatever their argument looks like.
const SECRET_FUNCTIONS: &[(&str, &str)] = &[
    ("sensitive", "marked sensitive()"),
    (
        "nonsensitive",
        "nonsensitive() strips the sensitivity of a secret",
    ),
    ("rsadecrypt", "rsadecrypt() returns a decrypted secret"),
];

struct Collect<'a> {
    ctx: usize,
    file: &'a File,
    each: Option<&'a Node>,
    /// Names bound by the enclosing `for` expressions.
    scope: Vec<String>,
    steps: Vec<Step>,
}

impl Collect<'_> {
    fn traversal(&self, root: &str, ops: &[Option<String>]) -> Option<Node> {
        if self.scope.iter().any(|s| s == root) {
            return None;
        }
        let attr = |i: usize| ops.get(i).cloned().flatten();
        // Attribute names after position `from`, indexes and splats skipped.
        let rest =
            |from: usize| -> Vec<String> { ops.iter().skip(from).flatten().cloned().collect() };
        let ctx = self.ctx;
        match root {
            "var" => Some(Node::Var(ctx, attr(0)?)),
            "local" => Some(Node::Local(ctx, attr(0)?)),
            "module" => Some(Node::Output(ctx, attr(0)?, rest(1).into_iter().next())),
            "data" => Some(Node::Attr(ctx, Kind::Data, attr(0)?, attr(1)?, rest(2))),
            "each" => self.each.cloned(),
            "count" | "path" | "terraform" | "self" => None,
            ty => Some(Node::Attr(
                ctx,
                Kind::Resource,
                ty.to_string(),
                attr(0)?,
                rest(1),
            )),
        }
    }
}

impl Visit for Collect<'_> {
    fn visit_expr(&mut self, expr: &Expression) {
        match expr {
            Expression::FuncCall(call) if call.name.namespace.is_empty() => {
                let name = call.name.name.as_str();
                if let Some((_, reason)) = SECRET_FUNCTIONS.iter().find(|(f, _)| *f == name) {
                    self.steps.push(Step::Source {
                        label: Some(format!("{name}(...) ({})", self.file.at(expr.span()))),
                        reason: reason.to_string(),
                    });
                }
                visit_expr(self, expr);
            }
            Expression::String(s) => {
                if let Some(why) = secret_literal(s.as_str()) {
                    self.steps.push(Step::Source {
                        label: Some(format!("a literal ({})", self.file.at(expr.span()))),
                        reason: why,
                    });
                }
            }
            Expression::Traversal(t) => {
                if let Expression::Variable(root) = &t.expr {
                    let ops: Vec<Option<String>> = t
                        .operators
                        .iter()
                        .map(|op| match op.value() {
                            TraversalOperator::GetAttr(ident) => Some(ident.as_str().to_string()),
                            _ => None,
                        })
                        .collect();
                    if let Some(node) = self.traversal(root.as_str(), &ops) {
                        self.steps.push(Step::Node(node));
                    }
                } else {
                    self.visit_expr(&t.expr);
                }
                // Index keys are read too: a value picked by a secret key is sensitive.
                for op in &t.operators {
                    if let TraversalOperator::Index(index) = op.value() {
                        self.visit_expr(index);
                    }
                }
            }
            _ => visit_expr(self, expr),
        }
    }

    fn visit_for_expr(&mut self, node: &ForExpr) {
        self.visit_expr(&node.intro.collection_expr);
        let bound = node.intro.key_var.iter().chain([&node.intro.value_var]);
        let names: Vec<String> = bound.map(|v| v.as_str().to_string()).collect();
        let depth = self.scope.len();
        self.scope.extend(names);
        if let Some(key) = &node.key_expr {
            self.visit_expr(key);
        }
        self.visit_expr(&node.value_expr);
        if let Some(cond) = &node.cond {
            self.visit_expr(&cond.expr);
        }
        self.scope.truncate(depth);
    }
}

mod index;
#[cfg(test)]
mod tests;
mod undeclared;

pub use undeclared::Undeclared;
