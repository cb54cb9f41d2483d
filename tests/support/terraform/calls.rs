//! Module calls and the `terraform` block against the vendored module releases, provider
//! versions and backend.

use hcl_edit::Span;
use hcl_edit::structure::{Block, Structure};

use super::facts::admits;
use super::types::{self, check_value, did_you_mean, shape};
use super::{Stack, label, literal_string};

impl Stack<'_> {
    pub(super) fn check_module(&mut self, block: &Block, name: &str, report: &mut types::Report) {
        let what = format!("module.{name}");
        let Some(source_attr) = block.body.get_attribute("source") else {
            report(block.ident.span(), format!("`{what}` has no `source`"));
            return;
        };
        let Some(source) = literal_string(&source_attr.value) else {
            report(
                source_attr.value.span(),
                format!("`{what}`: `source` must be a literal string"),
            );
            return;
        };
        if source.starts_with("./") || source.starts_with("../") {
            return; // a local module: no release facts to check against
        }
        let Some((release, dir, facts)) = self.modules.get(name).copied().flatten() else {
            report(
                source_attr.value.span(),
                format!(
                    "`{what}`: no vendored facts for module source `{source}`; add the release to schemas/terraform/modules"
                ),
            );
            return;
        };
        let origin = format!(
            "{} {}{}",
            release.source,
            release.version,
            if dir.is_empty() {
                String::new()
            } else {
                format!(" ({dir})")
            }
        );
        match block
            .body
            .get_attribute("version")
            .map(|a| (a, literal_string(&a.value)))
        {
            None => report(
                block.ident.span(),
                format!(
                    "`{what}` has no `version`: it would take whatever release is newest, not the {} the facts describe",
                    release.version
                ),
            ),
            Some((attr, None)) => report(
                attr.value.span(),
                format!("`{what}`: `version` must be a literal string"),
            ),
            Some((attr, Some(constraint))) => match admits(constraint, &release.version) {
                Ok(true) => {}
                Ok(false) => report(
                    attr.value.span(),
                    format!(
                        "`{what}`: version `{constraint}` does not admit {}, the release the vendored facts describe ({})",
                        release.version, release.file
                    ),
                ),
                Err(e) => report(attr.value.span(), format!("`{what}`: {e}")),
            },
        }
        // The release's own constraints must admit the providers and Terraform the stack uses.
        for (local, (source, constraint)) in &facts.required_providers {
            let Some(constraint) = constraint else {
                continue;
            };
            let Some(provider) = self.facts.providers.get(source) else {
                continue;
            };
            if admits(constraint, &provider.version) != Ok(true) {
                report(
                    source_attr.value.span(),
                    format!(
                        "`{what}` ({origin}) requires provider {local} `{constraint}`, which {} {} does not satisfy",
                        provider.source, provider.version
                    ),
                );
            }
        }
        if let (Some(required), Some(floor)) = (&facts.required_version, &self.terraform_floor)
            && admits(required, floor) != Ok(true)
        {
            report(
                source_attr.value.span(),
                format!(
                    "`{what}` ({origin}) requires Terraform `{required}`, but the stack's required_version admits {floor}"
                ),
            );
        }
        const META: &[&str] = &[
            "source",
            "version",
            "count",
            "for_each",
            "depends_on",
            "providers",
        ];
        for structure in block.body.iter() {
            match structure {
                Structure::Block(b) => report(
                    b.ident.span(),
                    format!(
                        "`{what}`: a module call takes no `{}` block (module inputs are arguments)",
                        b.ident.as_str()
                    ),
                ),
                Structure::Attribute(attr) => {
                    let arg = attr.key.as_str();
                    if META.contains(&arg) {
                        continue;
                    }
                    match facts.variables.get(arg) {
                        None => report(
                            attr.key.span(),
                            format!(
                                "`{what}`: `{arg}` is not an input variable of {origin}{}",
                                did_you_mean(arg, facts.variables.keys())
                            ),
                        ),
                        Some(var) => {
                            if var.non_nullable && attr.value.is_null() {
                                report(
                                    attr.value.span(),
                                    format!(
                                        "`{what}.{arg}` cannot be null (nullable = false in {origin})"
                                    ),
                                );
                            }
                            check_value(&attr.value, &var.ty, &format!("{what}.{arg}"), report);
                        }
                    }
                }
            }
        }
        for (var, facts) in &facts.variables {
            if facts.required && !block.body.has_attribute(var) {
                report(
                    block.ident.span(),
                    format!("`{what}` lacks `{var}`, a required input of {origin}"),
                );
            }
        }
    }

    pub(super) fn check_terraform(&mut self, block: &Block, report: &mut types::Report) {
        for structure in block.body.iter() {
            match structure {
                Structure::Attribute(attr) => {
                    if !["required_version", "experiments"].contains(&attr.key.as_str()) {
                        report(
                            attr.key.span(),
                            format!(
                                "the terraform block has no argument `{}`",
                                attr.key.as_str()
                            ),
                        );
                    }
                }
                Structure::Block(b) => match b.ident.as_str() {
                    "required_providers" => self.check_required_providers(b, report),
                    "backend" => self.check_backend(b, report),
                    "cloud" | "provider_meta" => {}
                    other => report(
                        b.ident.span(),
                        format!("the terraform block has no block type `{other}`"),
                    ),
                },
            }
        }
    }

    fn check_required_providers(&mut self, block: &Block, report: &mut types::Report) {
        for structure in block.body.iter() {
            let Structure::Attribute(attr) = structure else {
                report(
                    structure.span(),
                    "required_providers takes `name = { source, version }` entries, not blocks"
                        .into(),
                );
                continue;
            };
            let name = attr.key.as_str();
            let types::Shape::Object(entries) = shape(&attr.value) else {
                report(
                    attr.value.span(),
                    format!(
                        "required_providers.{name} must be `{{ source = ..., version = ... }}`"
                    ),
                );
                continue;
            };
            let get = |k: &str| {
                entries
                    .iter()
                    .find(|(key, _)| key.as_deref() == Some(k))
                    .map(|(_, v)| *v)
            };
            for (key, value) in &entries {
                if !matches!(
                    key.as_deref(),
                    Some("source" | "version" | "configuration_aliases")
                ) {
                    report(
                        value.span(),
                        format!(
                            "required_providers.{name} has no attribute `{}`",
                            key.as_deref().unwrap_or("?")
                        ),
                    );
                }
            }
            let source = get("source")
                .and_then(literal_string)
                .map(String::from)
                .unwrap_or_else(|| format!("hashicorp/{name}"));
            let Some(provider) = self.facts.providers.get(&source) else {
                report(
                    attr.key.span(),
                    format!(
                        "required_providers.{name}: no vendored schema for `{source}`; add it to schemas/terraform/providers"
                    ),
                );
                continue;
            };
            match get("version").map(|v| (v, literal_string(v))) {
                None => report(
                    attr.key.span(),
                    format!(
                        "required_providers.{name} has no version constraint: it would take whatever release is newest, not the {} the facts describe",
                        provider.version
                    ),
                ),
                Some((v, None)) => report(
                    v.span(),
                    format!("required_providers.{name}: the version must be a literal string"),
                ),
                Some((v, Some(constraint))) => match admits(constraint, &provider.version) {
                    Ok(true) => {}
                    Ok(false) => report(
                        v.span(),
                        format!(
                            "required_providers.{name}: `{constraint}` does not admit {}, the release the vendored schema describes ({})",
                            provider.version, provider.file
                        ),
                    ),
                    Err(e) => report(v.span(), format!("required_providers.{name}: {e}")),
                },
            }
        }
    }

    fn check_backend(&mut self, block: &Block, report: &mut types::Report) {
        let Some(name) = label(block, 0) else {
            report(
                block.ident.span(),
                "a backend block needs its type as label".into(),
            );
            return;
        };
        let Some(backend) = self.facts.backends.get(name) else {
            report(
                block.ident.span(),
                format!(
                    "no vendored facts for backend `{name}`; add it to schemas/terraform/backends"
                ),
            );
            return;
        };
        // Required arguments are not checked: a partial configuration (`-backend-config` at
        // init) is legitimate, and `terraform validate` does not read the backend either.
        for structure in block.body.iter() {
            let (arg, span, is_block) = match structure {
                Structure::Attribute(a) => (a.key.as_str(), a.key.span(), false),
                Structure::Block(b) => (b.ident.as_str(), b.ident.span(), true),
            };
            if !backend.arguments.contains(arg) {
                report(
                    span,
                    format!(
                        "the {name} backend of Terraform {} has no argument `{arg}`{}",
                        backend.terraform_version,
                        did_you_mean(arg, backend.arguments.iter())
                    ),
                );
            } else if is_block {
                report(
                    span,
                    format!("the {name} backend's `{arg}` is an argument: write `{arg} = ...`"),
                );
            }
        }
    }
}
