//! What may go into generated Terraform: quoted strings that stay strings, expressions that are
//! exactly one expression, references that are only references; and the addresses a file
//! declares, to find two blocks with one address.

use hcl_edit::Span;
use hcl_edit::expr::Expression;
use hcl_edit::structure::{Body, Structure};

use crate::ports::edit::text::LineIndex;

/// Deepest bracket nesting accepted in an expression (hcl-edit's own limit is lower still; this
/// gives the clear message).
const MAX_EXPRESSION_DEPTH: usize = 32;

/// `value` as an HCL quoted string literal: escapes make quotes, backslashes, line breaks and
/// template sequences (`${`, `%{`) plain characters of the string.
pub fn string_literal(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '$' | '%' if chars.peek() == Some(&'{') => {
                out.push(c);
                out.push(c);
            }
            // Line separators too: nothing cellgen writes looks like two lines to any reader.
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A description as text for one `#` comment line: line breaks and other control characters
/// become spaces, so nothing after them can leave the comment.
pub fn comment_text(value: &str) -> String {
    let folded: String = value
        .chars()
        .map(|c| {
            if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
                ' '
            } else {
                c
            }
        })
        .collect();
    folded.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Why `value`, given on one line (a flag, a component.yaml field), is not one line: a line
/// break or another control character. HCL's heredocs and comments end at line breaks, and
/// parsers differ on where (an empty heredoc is one), so nothing cellgen pastes may hold one.
pub fn check_one_line(value: &str) -> Result<(), String> {
    match value
        .chars()
        .find(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}'))
    {
        Some('\n' | '\r' | '\u{2028}' | '\u{2029}' | '\u{85}') => {
            Err("spans more than one line".into())
        }
        Some(c) => Err(format!("holds the control character {:?}", c)),
        None => Ok(()),
    }
}

/// Finds a heredoc (`<<EOT`) anywhere in an expression.
struct Heredocs(bool);

impl hcl_edit::visit::Visit for Heredocs {
    fn visit_heredoc_template(&mut self, _: &hcl_edit::template::HeredocTemplate) {
        self.0 = true;
    }
}

/// Checks that `source` is exactly one HCL expression on one line, nothing before or after it
/// (no second attribute, no block, no comment that could swallow what follows it on a line),
/// and no heredoc: HashiCorp's parser and hcl-edit disagree on where an empty heredoc ends,
/// which let a value close the ConfigMap and open a `provisioner` (issue 18).
pub fn check_expression(source: &str) -> Result<(), String> {
    // Spaces pasted around a flag are trimmed by the command; a line break never is.
    check_one_line(source)?;
    if source.trim() != source || source.is_empty() {
        return Err("has leading or trailing whitespace, or is empty".into());
    }
    let mut depth = 0usize;
    for b in source.bytes() {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_EXPRESSION_DEPTH {
                    return Err(format!(
                        "nests brackets more than {MAX_EXPRESSION_DEPTH} deep"
                    ));
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let expr = hcl_edit::parser::parse_expr(source)
        .map_err(|e| format!("is not one HCL expression ({})", e.message()))?;
    match expr.span() {
        Some(span) if span == (0..source.len()) => {}
        _ => {
            return Err(
                "is more than one HCL expression (a comment or something else follows it)".into(),
            );
        }
    }
    let mut heredocs = Heredocs(false);
    hcl_edit::visit::Visit::visit_expr(&mut heredocs, &expr);
    if heredocs.0 {
        return Err("holds a heredoc: give a one-line expression or a quoted string".into());
    }
    Ok(())
}

/// Roots Terraform provides itself, and the names a `for` binds: never declarations.
const BUILTIN_ROOTS: &[&str] = &["each", "count", "path", "self", "terraform"];

/// The names `for` expressions and `%{ for }` directives bind, anywhere in the expression.
#[derive(Default)]
struct Bound(Vec<String>);

impl hcl_edit::visit::Visit for Bound {
    fn visit_for_intro(&mut self, node: &hcl_edit::expr::ForIntro) {
        self.0
            .extend(node.key_var.iter().map(|k| k.as_str().to_string()));
        self.0.push(node.value_var.as_str().to_string());
        hcl_edit::visit::visit_for_intro(self, node);
    }
    fn visit_for_template_expr(&mut self, node: &hcl_edit::template::ForTemplateExpr) {
        self.0
            .extend(node.key_var.iter().map(|k| k.as_str().to_string()));
        self.0.push(node.value_var.as_str().to_string());
        hcl_edit::visit::visit_for_template_expr(self, node);
    }
}

/// The addresses an expression refers to.
struct Refs<'a> {
    bound: &'a [String],
    out: Vec<String>,
}

impl Refs<'_> {
    fn root(&mut self, root: &str, attrs: &[&str]) {
        if BUILTIN_ROOTS.contains(&root) || self.bound.iter().any(|b| b == root) {
            return;
        }
        let parts = match root {
            "data" | "ephemeral" => 2,
            _ => 1,
        };
        let address = std::iter::once(root)
            .chain(attrs.iter().copied().take(parts))
            .collect::<Vec<_>>()
            .join(".");
        if !self.out.contains(&address) {
            self.out.push(address);
        }
    }
}

impl hcl_edit::visit::Visit for Refs<'_> {
    fn visit_expr(&mut self, node: &Expression) {
        match node {
            Expression::Variable(root) => self.root(root.as_str(), &[]),
            Expression::Traversal(t) => match &t.expr {
                Expression::Variable(root) => {
                    let attrs: Vec<&str> = t
                        .operators
                        .iter()
                        .map_while(|op| match op.value() {
                            hcl_edit::expr::TraversalOperator::GetAttr(a) => Some(a.as_str()),
                            _ => None,
                        })
                        .collect();
                    self.root(root.as_str(), &attrs);
                    for op in &t.operators {
                        self.visit_traversal_operator(op);
                    }
                }
                _ => hcl_edit::visit::visit_traversal(self, t),
            },
            _ => hcl_edit::visit::visit_expr(self, node),
        }
    }
    // hcl-edit's default walk skips the collection of a `%{ for }` directive.
    fn visit_for_template_expr(&mut self, node: &hcl_edit::template::ForTemplateExpr) {
        self.visit_expr(&node.collection_expr);
        hcl_edit::visit::visit_for_template_expr(self, node);
    }
}

/// What an expression refers to in its stack, as declared addresses: `var.NAME`,
/// `local.NAME`, `module.NAME`, `data.TYPE.NAME`, `TYPE.NAME`; a bare name stays as it is (and
/// is declared nowhere). `each`, `count`, `path`, `self`, `terraform` and names a `for` binds
/// are not references. Empty when the expression does not parse.
pub fn references(source: &str) -> Vec<String> {
    let Ok(expr) = hcl_edit::parser::parse_expr(source) else {
        return Vec::new();
    };
    let mut bound = Bound::default();
    hcl_edit::visit::Visit::visit_expr(&mut bound, &expr);
    let mut refs = Refs {
        bound: &bound.0,
        out: Vec::new(),
    };
    hcl_edit::visit::Visit::visit_expr(&mut refs, &expr);
    refs.out
}

fn is_ident(s: &str) -> bool {
    let mut bytes = s.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Checks that `reference` is what `depends_on` takes: `module.NAME`, `TYPE.NAME` or
/// `data.TYPE.NAME`.
pub fn check_reference(reference: &str) -> Result<(), String> {
    let parts: Vec<&str> = reference.split('.').collect();
    let ok = match parts.as_slice() {
        ["module", name] => is_ident(name),
        ["data", ty, name] => is_ident(ty) && is_ident(name),
        [ty, name] => *ty != "var" && *ty != "local" && is_ident(ty) && is_ident(name),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err("is not a resource, data source or module reference (`TYPE.NAME`, `data.TYPE.NAME`, `module.NAME`)".into())
    }
}

/// One declaration of a Terraform file: its address and line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    pub address: String,
    pub line: usize,
}

/// Addresses a file declares: `TYPE.NAME` for resources, `data.TYPE.NAME`, `module.NAME`,
/// `var.NAME`, `output.NAME`, `local.NAME`, `provider.NAME[.ALIAS]`, `check.NAME`, and the
/// `terraform` block's `backend`/`cloud`. Two of these in one stack are a Terraform error.
pub fn declared(text: &str, body: &Body) -> Vec<Declared> {
    let mut out = Vec::new();
    let lines = LineIndex::new(text);
    let line = |s: Option<std::ops::Range<usize>>| lines.line(s.map_or(0, |s| s.start));
    for structure in body.iter() {
        let Structure::Block(block) = structure else {
            continue;
        };
        let labels: Vec<&str> = block.labels.iter().map(|l| l.as_str()).collect();
        let at = line(block.span());
        let mut push = |address: String| out.push(Declared { address, line: at });
        match (block.ident.as_str(), labels.as_slice()) {
            ("resource", [ty, name]) => push(format!("{ty}.{name}")),
            ("data", [ty, name]) => push(format!("data.{ty}.{name}")),
            ("ephemeral", [ty, name]) => push(format!("ephemeral.{ty}.{name}")),
            ("module", [name]) => push(format!("module.{name}")),
            ("variable", [name]) => push(format!("var.{name}")),
            ("output", [name]) => push(format!("output.{name}")),
            ("check", [name]) => push(format!("check.{name}")),
            ("provider", [name]) => {
                let alias = match block.body.get_attribute("alias").map(|a| &a.value) {
                    Some(Expression::String(s)) => format!(".{}", s.as_str()),
                    _ => String::new(),
                };
                push(format!("provider.{name}{alias}"));
            }
            ("locals", []) => {
                for attr in block.body.attributes() {
                    out.push(Declared {
                        address: format!("local.{}", attr.key.as_str()),
                        line: line(attr.span()),
                    });
                }
            }
            ("terraform", []) => {
                for inner in block.body.blocks() {
                    if matches!(inner.ident.as_str(), "backend" | "cloud") {
                        out.push(Declared {
                            address: "terraform.backend".into(),
                            line: line(inner.span()),
                        });
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn expressions_must_be_exactly_one() {
        for ok in [
            "module.karpenter.queue_name",
            "aws_iam_role.x.arn",
            "var.environment == \"dev\" ? \"Audit\" : \"Deny\"",
            "\"literal\"",
            "format(\"%s-x\", var.name)",
        ] {
            assert_eq!(check_expression(ok), Ok(()), "{ok}");
        }
        for bad in [
            "module.x.y }\nresource \"aws_iam_user\" \"evil\" {\n  name = \"x\"",
            "module.x.y # }",
            "module.x.y\nz = 1",
            " module.x.y",
            "",
            "a = b",
            "\"unterminated",
            "<<EOT\nEOT\n}\nprovisioner \"local-exec\" {\n  command = <<EOT\ntouch /tmp/PWNED\nEOT",
            "<<EOT\nx\nEOT",
            "<<-EOT\n  x\n  EOT",
            "module.x.y\r",
            "a\u{2028}",
            "\"a\tb\"",
            &format!("{}1{}", "(".repeat(40), ")".repeat(40)),
        ] {
            assert!(check_expression(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn references_of_expressions() {
        for (source, want) in [
            ("aws_sqs_queue.jobs.url", &["aws_sqs_queue.jobs"][..]),
            ("var.x", &["var.x"]),
            ("local.y[0]", &["local.y"]),
            (
                "data.aws_caller_identity.this.account_id",
                &["data.aws_caller_identity.this"],
            ),
            ("module.eks.cluster_name", &["module.eks"]),
            ("format(\"%s-x\", var.name)", &["var.name"]),
            (
                "\"${var.a}-%{ for v in local.l }${v}%{ endfor }\"",
                &["var.a", "local.l"],
            ),
            ("[for k, v in var.m : \"${k}=${v}\"]", &["var.m"]),
            ("aws_iam_role.r[var.i].arn", &["aws_iam_role.r", "var.i"]),
            ("path.module", &[]),
            ("EOT", &["EOT"]),
            ("\"literal\"", &[]),
        ] {
            assert_eq!(references(source), want, "{source}");
        }
    }

    #[test]
    fn references_are_only_references() {
        for ok in [
            "module.karpenter",
            "aws_iam_role.x",
            "data.aws_iam_policy_document.y",
        ] {
            assert_eq!(check_reference(ok), Ok(()));
        }
        for bad in [
            "module.x]\nresource",
            "var.x",
            "a",
            "a.b.c",
            "module.x.y",
            "aws_iam_role.x[0]",
        ] {
            assert!(check_reference(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn comments_fold_to_one_line() {
        assert_eq!(
            comment_text("a\nresource \"x\" \"y\" {}\r\n b"),
            "a resource \"x\" \"y\" {} b"
        );
    }

    #[test]
    fn declared_addresses() {
        let text = "resource \"a_b\" \"c\" {}\ndata \"a_d\" \"e\" {}\nmodule \"m\" {}\nlocals {\n  x = 1\n}\nprovider \"aws\" {\n  alias = \"east\"\n}\nterraform {\n  backend \"s3\" {}\n}\n";
        let body = hcl_edit::parser::parse_body(text).unwrap();
        let got: Vec<(String, usize)> = declared(text, &body)
            .into_iter()
            .map(|d| (d.address, d.line))
            .collect();
        assert_eq!(
            got,
            [
                ("a_b.c".to_string(), 1),
                ("data.a_d.e".into(), 2),
                ("module.m".into(), 3),
                ("local.x".into(), 5),
                ("provider.aws.east".into(), 7),
                ("terraform.backend".into(), 11),
            ]
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// Whatever the string, its literal is one string expression holding exactly it.
        #[test]
        fn string_literals_stay_strings(value in "\\PC*|[\\x00-\\x7f]{0,16}|[\"\\\\${}%\n]{0,12}") {
            let literal = string_literal(&value);
            prop_assert_eq!(check_expression(&literal), Ok(()));
            let body = hcl_edit::parser::parse_body(&format!("x = {literal}\n")).unwrap();
            match &body.get_attribute("x").unwrap().value {
                Expression::String(s) => prop_assert_eq!(s.as_str(), value.as_str()),
                other => prop_assert!(false, "{literal} parsed as {other:?}"),
            }
        }
    }
}
