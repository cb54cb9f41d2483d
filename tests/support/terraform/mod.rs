//! A generated Terraform stack checked against the vendored facts of the module releases,
//! providers and backend it pins (schemas/terraform), the way `terraform init && terraform
//! validate` would, without the registry:
//!
//! - module calls: the source names a vendored release (root or submodule), its version
//!   constraint admits that release, every argument is a variable of it, required variables are
//!   given, literal values fit the variable's type (object attribute names included);
//! - `module.X.Y` names an output of X's release; `TYPE.NAME.attr` and `data.TYPE.NAME.attr` name
//!   an attribute or block of the type's schema;
//! - resource, data source and provider bodies: every argument and block exists and is written
//!   as an argument or as a block exactly as the schema says, required arguments are given, block
//!   counts fit, literal values fit (see [`blocks`]);
//! - the `terraform` block: backend arguments exist, required_providers sources have vendored
//!   facts and their constraints admit the vendored release, and so do the modules' own
//!   constraints;
//! - every function call names a function of the installed Terraform, with as many arguments as
//!   it takes; `count` and `for_each` are not both set;
//! - no two blocks share an address;
//! - `removed` and `import` blocks (see [`refactor`]); ephemeral values only where Terraform
//!   takes them (see [`ephemeral`]).
//!
//! Reference resolution (every `var.`, `local.`, `module.`, resource and data reference is
//! declared) is [`super::check_terraform_references`]'s job; run both.

pub mod blocks;
mod calls;
mod ephemeral;
pub mod facts;
pub mod functions;
mod refactor;
mod references;
pub mod types;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::ops::Range;
use std::path::Path;

use hcl_edit::Span;
use hcl_edit::expr::Expression;
use hcl_edit::structure::{Attribute, Block, Body, Structure};

use blocks::{DATA_META, PROVIDER_META, RESOURCE_META, check_body};
use facts::{Facts, ModuleDir, ModuleRelease, Provider, facts, lower_bound};
use types::did_you_mean;

/// One `.tf` file of a stack.
struct File {
    name: String,
    text: String,
    body: Body,
}

impl File {
    fn at(&self, span: Option<Range<usize>>) -> String {
        match span {
            Some(s) => format!("{}:{}", self.name, line_of(&self.text, s.start)),
            None => self.name.clone(),
        }
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Every `.tf` file of `dir` checked; one line per problem (`file:line: what`), empty when the
/// stack is valid.
pub fn check_stack(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tf"))
        .collect();
    names.sort();
    let files: Vec<(String, String)> = names
        .into_iter()
        .map(|n| {
            let text = fs::read_to_string(dir.join(&n))
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.join(&n).display()));
            (n, text)
        })
        .collect();
    check_files(&files)
}

/// [`check_stack`] on files given as (name, text).
pub fn check_files(files: &[(String, String)]) -> Vec<String> {
    check_files_with(facts(), files)
}

/// [`check_files`] against other facts (the checker's own tests alter the vendored ones).
pub fn check_files_with(facts: &Facts, files: &[(String, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut parsed = Vec::new();
    for (name, text) in files {
        match hcl_edit::parser::parse_body(text) {
            Ok(body) => parsed.push(File {
                name: name.clone(),
                text: text.clone(),
                body,
            }),
            Err(e) => problems.push(format!(
                "{name}:{}: not valid HCL: {}",
                e.location().line(),
                e.message()
            )),
        }
    }
    let mut stack = Stack::new(facts, &parsed, &mut problems);
    stack.check(&parsed);
    problems.extend(stack.problems);
    problems
}

/// What the stack declares, gathered before the checks.
struct Stack<'f> {
    facts: &'f Facts,
    /// Provider local name → vendored provider (or None: no facts for its source).
    providers: BTreeMap<String, Option<&'f Provider>>,
    /// Local name → source, from required_providers.
    provider_sources: BTreeMap<String, String>,
    /// Module call name → its release and directory, when the source has vendored facts.
    modules: BTreeMap<String, Option<(&'f ModuleRelease, &'f str, &'f ModuleDir)>>,
    resources: BTreeSet<(String, String)>,
    data: BTreeSet<(String, String)>,
    /// The lowest Terraform version the stack's required_version admits.
    terraform_floor: Option<String>,
    problems: Vec<String>,
}

fn label(block: &Block, i: usize) -> Option<&str> {
    block.labels.get(i).map(|l| l.as_str())
}

fn literal_string(expr: &Expression) -> Option<&str> {
    match expr {
        Expression::String(s) => Some(s.as_str()),
        _ => None,
    }
}

impl<'f> Stack<'f> {
    fn new(facts: &'f Facts, files: &[File], problems: &mut Vec<String>) -> Stack<'f> {
        let mut stack = Stack {
            facts,
            providers: BTreeMap::new(),
            provider_sources: BTreeMap::new(),
            modules: BTreeMap::new(),
            resources: BTreeSet::new(),
            data: BTreeSet::new(),
            terraform_floor: None,
            problems: Vec::new(),
        };
        // address → where it was first declared
        let mut addresses: BTreeMap<String, String> = BTreeMap::new();
        let mut declare = |address: String, at: String, problems: &mut Vec<String>| {
            if let Some(first) = addresses.get(&address) {
                problems.push(format!(
                    "{at}: `{address}` is declared again (first at {first}); Terraform refuses duplicate addresses"
                ));
            } else {
                addresses.insert(address, at);
            }
        };
        for file in files {
            for block in file.body.blocks() {
                let at = file.at(block.ident.span());
                let (l0, l1) = (label(block, 0), label(block, 1));
                match (block.ident.as_str(), l0, l1) {
                    ("terraform", _, _) => {
                        for rp in block.body.get_blocks("required_providers") {
                            for attr in rp.body.attributes() {
                                let source = match &attr.value {
                                    Expression::Object(o) => o
                                        .iter()
                                        .find(|(k, _)| {
                                            types::key_name(k).as_deref() == Some("source")
                                        })
                                        .and_then(|(_, v)| literal_string(v.expr()))
                                        .map(String::from),
                                    _ => None,
                                };
                                let name = attr.key.as_str().to_string();
                                let source = source.unwrap_or_else(|| format!("hashicorp/{name}"));
                                stack.provider_sources.insert(name, source);
                            }
                        }
                        if let Some(rv) = block.body.get_attribute("required_version") {
                            stack.terraform_floor = literal_string(&rv.value).and_then(lower_bound);
                        }
                    }
                    ("variable", Some(n), None) => declare(format!("var.{n}"), at, problems),
                    ("output", Some(n), None) => declare(format!("output.{n}"), at, problems),
                    ("module", Some(n), None) => {
                        declare(format!("module.{n}"), at, problems);
                        let release = block
                            .body
                            .get_attribute("source")
                            .and_then(|a| literal_string(&a.value))
                            .and_then(|s| facts.module(s));
                        stack.modules.insert(n.to_string(), release);
                    }
                    ("resource", Some(t), Some(n)) => {
                        declare(format!("{t}.{n}"), at, problems);
                        stack.resources.insert((t.to_string(), n.to_string()));
                    }
                    ("data", Some(t), Some(n)) => {
                        declare(format!("data.{t}.{n}"), at, problems);
                        stack.data.insert((t.to_string(), n.to_string()));
                    }
                    ("provider", Some(n), None) => {
                        let alias = block
                            .body
                            .get_attribute("alias")
                            .and_then(|a| literal_string(&a.value))
                            .map(|a| format!(".{a}"))
                            .unwrap_or_default();
                        declare(format!("provider.{n}{alias}"), at, problems);
                    }
                    ("locals", None, None) => {
                        for attr in block.body.attributes() {
                            declare(
                                format!("local.{}", attr.key.as_str()),
                                file.at(attr.key.span()),
                                problems,
                            );
                        }
                    }
                    _ => {}
                }
            }
        }
        stack
    }

    fn provider(&mut self, local: &str) -> Option<&'f Provider> {
        let source = self
            .provider_sources
            .get(local)
            .cloned()
            .unwrap_or_else(|| format!("hashicorp/{local}"));
        let facts = self.facts;
        *self
            .providers
            .entry(local.to_string())
            .or_insert_with(|| facts.providers.get(&source))
    }

    fn check(&mut self, files: &[File]) {
        for file in files {
            let mut problems = Vec::new();
            for structure in file.body.iter() {
                match structure {
                    Structure::Attribute(attr) => problems.push(format!(
                        "{}: an argument `{}` is not expected at the top level",
                        file.at(attr.key.span()),
                        attr.key.as_str()
                    )),
                    Structure::Block(block) => self.check_block(file, block, &mut problems),
                }
            }
            self.check_references(file, &mut problems);
            self.problems.extend(problems);
        }
        self.check_ephemeral(files);
    }

    fn check_block(&mut self, file: &File, block: &Block, problems: &mut Vec<String>) {
        let mut report = |span: Option<Range<usize>>, message: String| {
            problems.push(format!("{}: {message}", file.at(span)))
        };
        let kind = block.ident.as_str();
        let labels: Vec<&str> = block.labels.iter().map(|l| l.as_str()).collect();
        let expected = match kind {
            "resource" | "data" => 2,
            "variable" | "output" | "module" | "provider" => 1,
            "terraform" | "locals" | "moved" | "import" | "removed" => 0,
            "check" => 1,
            _ => {
                report(
                    block.ident.span(),
                    format!("`{kind}` is not a Terraform block type"),
                );
                return;
            }
        };
        if labels.len() != expected {
            report(
                block.ident.span(),
                format!(
                    "a `{kind}` block takes {expected} label(s), not {}",
                    labels.len()
                ),
            );
            return;
        }
        if block.body.has_attribute("count") && block.body.has_attribute("for_each") {
            report(
                block.ident.span(),
                format!("`{kind}` block sets both `count` and `for_each`"),
            );
        }
        match kind {
            "resource" | "data" => {
                let (ty, name) = (labels[0], labels[1]);
                let local = block
                    .body
                    .get_attribute("provider")
                    .and_then(|a| match &a.value {
                        Expression::Traversal(t) => match &t.expr {
                            Expression::Variable(v) => Some(v.as_str().to_string()),
                            _ => None,
                        },
                        Expression::Variable(v) => Some(v.as_str().to_string()),
                        _ => None,
                    })
                    .unwrap_or_else(|| ty.split('_').next().unwrap_or(ty).to_string());
                let Some(provider) = self.provider(&local) else {
                    report(
                        block.ident.span(),
                        format!(
                            "{kind} `{ty}.{name}`: no vendored schema for provider `{local}` ({}); add it to schemas/terraform/providers",
                            self.provider_sources
                                .get(&local)
                                .cloned()
                                .unwrap_or_else(|| format!("hashicorp/{local}"))
                        ),
                    );
                    return;
                };
                let origin = format!("{} {}", provider.source, provider.version);
                let (schemas, all, meta, what) = if kind == "resource" {
                    (
                        &provider.resources,
                        &provider.resource_types,
                        &RESOURCE_META,
                        format!("{ty}.{name}"),
                    )
                } else {
                    (
                        &provider.data_sources,
                        &provider.data_source_types,
                        &DATA_META,
                        format!("data.{ty}.{name}"),
                    )
                };
                match schemas.get(ty) {
                    Some(schema) => {
                        check_body(&block.body, schema, &what, &origin, meta, &mut report)
                    }
                    None if all.contains(ty) => report(
                        block.ident.span(),
                        format!(
                            "{kind} type `{ty}` exists in {origin} but its schema was not extracted: add it to schemas/terraform/providers/extract-types-*.txt and regenerate"
                        ),
                    ),
                    None => report(
                        block.ident.span(),
                        format!(
                            "{origin} has no {kind} type `{ty}`{}",
                            did_you_mean(ty, all.iter())
                        ),
                    ),
                }
            }
            "provider" => {
                let name = labels[0];
                match self.provider(name) {
                    Some(provider) => {
                        let origin = format!("{} {}", provider.source, provider.version);
                        check_body(
                            &block.body,
                            &provider.config,
                            &format!("provider.{name}"),
                            &origin,
                            &PROVIDER_META,
                            &mut report,
                        )
                    }
                    None => report(
                        block.ident.span(),
                        format!(
                            "provider `{name}`: no vendored schema for its source; add it to schemas/terraform/providers"
                        ),
                    ),
                }
            }
            "module" => self.check_module(block, labels[0], &mut report),
            "removed" => self.check_removed(block, &mut report),
            "import" => self.check_import(block, &mut report),
            "terraform" => self.check_terraform(block, &mut report),
            "variable" => check_plain(
                &block.body,
                &format!("variable \"{}\"", labels[0]),
                &[
                    "type",
                    "default",
                    "description",
                    "sensitive",
                    "nullable",
                    "ephemeral",
                ],
                &["validation"],
                &[],
                &mut report,
            ),
            "output" => check_plain(
                &block.body,
                &format!("output \"{}\"", labels[0]),
                &[
                    "value",
                    "description",
                    "sensitive",
                    "depends_on",
                    "ephemeral",
                ],
                &["precondition"],
                &["value"],
                &mut report,
            ),
            _ => {}
        }
    }
}

/// A block whose arguments and nested blocks Terraform fixes (variable, output).
fn check_plain(
    body: &Body,
    what: &str,
    attrs: &[&str],
    blocks: &[&str],
    required: &[&str],
    report: &mut types::Report,
) {
    for structure in body.iter() {
        match structure {
            Structure::Attribute(Attribute { key, .. }) if !attrs.contains(&key.as_str()) => {
                report(
                    key.span(),
                    format!("{what} has no argument `{}`", key.as_str()),
                )
            }
            Structure::Block(b) if !blocks.contains(&b.ident.as_str()) => report(
                b.ident.span(),
                format!("{what} has no block type `{}`", b.ident.as_str()),
            ),
            _ => {}
        }
    }
    for name in required {
        if !body.has_attribute(name) {
            report(
                body.iter().next().and_then(|s| s.span()),
                format!("{what} lacks `{name}`"),
            );
        }
    }
}
