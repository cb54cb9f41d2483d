//! Checks of one rendered layer: the Flux Kustomization's own fields (what cellgen cannot apply,
//! where it substitutes from), its build, and every object's substitution, each at the source
//! line a person has to edit.

use camino::Utf8Path;
use std::collections::BTreeSet;

use super::findings::Finding;
use super::locate::SourceFiles;
use crate::analysis::locate::Step;
use crate::analysis::render::{BuildCache, FluxLayer, RenderedLayer, Source};
use crate::model::names::METADATA_CONFIGMAP;
use crate::ports::envsubst::{Prepared, SubstError, Vars};
use crate::ports::kustomize::{BuildError, FluxFields, Resource};
use crate::suggest;

/// A field path from dotted keys and indices: `steps(&["spec", "patches"])`.
pub fn steps(keys: &[&str]) -> Vec<Step> {
    keys.iter()
        .map(|k| match k.parse::<usize>() {
            Ok(n) => Step::Index(n),
            Err(_) => Step::Key((*k).to_string()),
        })
        .collect()
}

/// What the layer checks share across layers and cells.
pub struct Context<'a> {
    pub root: &'a Utf8Path,
    pub cache: &'a BuildCache,
    pub sources: &'a mut SourceFiles,
    /// Keys some manifest asks for.
    pub used: &'a mut BTreeSet<String>,
}

/// Checks one layer; false when its objects could not all be rendered.
pub fn check_layer(
    cx: &mut Context,
    rendered: &RenderedLayer,
    findings: &mut Vec<Finding>,
) -> bool {
    let layer = &rendered.layer;
    let file = layer.file.clone();
    let at = |cx: &mut Context, path: &[&str], value: Option<&str>| {
        cx.sources
            .locate_field(
                std::slice::from_ref(&file),
                "Kustomization",
                &layer.name,
                &steps(path),
                value,
            )
            .1
    };
    let mut complete = true;
    for unsupported in &layer.unsupported {
        let path: Vec<&str> = unsupported.field.split('.').collect();
        findings.push(Finding::error(
            "unsupported-field",
            &file,
            at(cx, &path, None),
            format!(
                "`{}` of Flux Kustomization `{}`: {}. cellgen does not check this layer as Flux applies it",
                unsupported.field, layer.name, unsupported.reason
            ),
        ));
        complete = false;
    }
    if layer
        .unsupported
        .iter()
        .any(|u| u.field == "spec.sourceRef")
    {
        return false; // spec.path is not in this repository.
    }

    let from = layer.substitute_from();
    if !from.iter().any(|s| s.is_cell_metadata()) {
        let line = at(cx, &["spec", "postBuild"], None);
        findings.push(Finding::error(
            "no-substitute-from",
            &file,
            line,
            format!("Flux Kustomization `{}` does not substitute from the {METADATA_CONFIGMAP} ConfigMap: add `postBuild.substituteFrom: [{{kind: ConfigMap, name: {METADATA_CONFIGMAP}}}]`", layer.name),
        ));
    }
    for (i, reference) in from.iter().enumerate() {
        let entry = i.to_string();
        match &rendered.sources[i] {
            Source::CellMetadata => {
                if layer.namespace != crate::analysis::render::BOOTSTRAP {
                    findings.push(Finding::error(
                        "substitute-namespace",
                        &file,
                        at(cx, &["spec", "postBuild", "substituteFrom", &entry], None),
                        format!(
                            "Flux Kustomization `{}` is in namespace `{}`, but substituteFrom reads ConfigMaps from the Kustomization's own namespace and {METADATA_CONFIGMAP} is in `flux-system`: Flux fails with \"substitute from 'ConfigMap/{METADATA_CONFIGMAP}' error: not found\". Put the Kustomization in flux-system (spec.targetNamespace decides where its objects go)",
                            layer.name,
                            if layer.namespace.is_empty() { "default" } else { &layer.namespace }
                        ),
                    ));
                }
                if reference.optional {
                    findings.push(Finding::error(
                        "optional-cell-metadata",
                        &file,
                        at(cx, &["spec", "postBuild", "substituteFrom", &entry, "optional"], None),
                        format!(
                            "Flux Kustomization `{}` marks {METADATA_CONFIGMAP} `optional: true`: when Terraform has not written it yet, Flux substitutes nothing and applies every `${{...}}` literally instead of waiting. Remove `optional: true`",
                            layer.name
                        ),
                    ));
                }
            }
            Source::Unseen => findings.push(Finding::warning(
                "unseen-source",
                &file,
                at(cx, &["spec", "postBuild", "substituteFrom", &entry, "name"], None),
                format!(
                    "`{}` also substitutes from {} {} in `{}`, which no layer of the cell renders and cellgen cannot see: its keys count as missing (mark it `optional: true` or give its keys with --values)",
                    layer.name, reference.kind, reference.name, layer.namespace
                ),
            )),
            Source::Rendered { .. } | Source::SkippedOptional => {}
        }
    }

    let mut components_ok = true;
    for (i, component) in layer.flux.components.iter().enumerate() {
        let missing_ok = layer.flux.ignore_missing_components;
        if let Err(e) = cx
            .cache
            .check_component(&layer.build_path(), component, missing_ok, &file)
        {
            components_ok = false;
            // Where the component entry is written, unless the problem is in a file of the
            // component (its kustomization does not parse, is a link, ...).
            let inside = match e.as_ref() {
                BuildError::MissingComponent { .. } | BuildError::NotAComponent { .. } => None,
                other => {
                    crate::analysis::render::build_error_location_in(cx.sources.files(), other)
                        .filter(|(f, _)| *f != file && !crate::root::disk::is_dir(cx.root.join(f)))
                }
            };
            let (at_file, line) = match inside {
                Some(at) => at,
                None => (
                    file.clone(),
                    at(cx, &["spec", "components", &i.to_string()], None),
                ),
            };
            findings.push(Finding::error(
                "bad-component",
                at_file,
                line,
                format!(
                    "component `{component}` of `{}`: {}",
                    layer.name,
                    component_message(&e)
                ),
            ));
        }
    }
    if !components_ok {
        return false;
    }

    if let Err(e) = rendered.build.as_ref() {
        findings.push(build_failed(cx, layer, e));
        return false;
    }

    let vars = &rendered.vars;
    if let Some(bad) = vars
        .map()
        .keys()
        .find(|k| !crate::model::keys::is_valid_key_name(k))
    {
        let line = at(cx, &["spec", "postBuild", "substitute", bad], None);
        findings.push(Finding::error(
            "invalid-key-name",
            &file,
            line,
            SubstError::InvalidVarName { name: bad.clone() }.flux_message(),
        ));
        return false;
    }
    if !rendered.substitutes {
        return complete; // Flux does not substitute at all then.
    }
    for (i, (resource, result)) in rendered.pairs().enumerate() {
        check_object(cx, resource, rendered.prepared(i), result, vars, findings);
    }
    complete
}

/// A failed build, blamed on the Flux Kustomization's own fields when the layer builds without
/// them (a patch whose target or path does not exist, say).
fn build_failed(cx: &mut Context, layer: &FluxLayer, error: &BuildError) -> Finding {
    let message = format!("building `{}` ({}) failed: {error}", layer.name, layer.path);
    let base = FluxFields {
        components: layer.flux.components.clone(),
        ignore_missing_components: layer.flux.ignore_missing_components,
        ..FluxFields::flux()
    };
    let path = layer.build_path();
    if layer.flux != base && cx.cache.build(&path, &base).is_ok() {
        // The first patch that breaks the build, else the other fields.
        let mut fields = base.clone();
        let mut blame = vec!["spec".to_string()];
        for (i, patch) in layer.flux.patches.iter().enumerate() {
            fields.patches.push(patch.clone());
            if cx.cache.build(&path, &fields).is_err() {
                blame = vec!["spec".into(), "patches".into(), i.to_string()];
                break;
            }
        }
        if blame.len() == 1 {
            for (field, set) in [
                ("targetNamespace", layer.flux.target_namespace.is_some()),
                ("namePrefix", layer.flux.name_prefix.is_some()),
                ("nameSuffix", layer.flux.name_suffix.is_some()),
                ("images", !layer.flux.images.is_empty()),
                ("buildMetadata", !layer.flux.build_metadata.is_empty()),
            ] {
                if set {
                    blame.push(field.into());
                    break;
                }
            }
        }
        let path: Vec<&str> = blame.iter().map(String::as_str).collect();
        let (_, line) = cx.sources.locate_field(
            std::slice::from_ref(&layer.file),
            "Kustomization",
            &layer.name,
            &steps(&path),
            None,
        );
        return Finding::error(
            "build-failed",
            &layer.file,
            line,
            format!("{message} (it builds without `{}`)", path.join(".")),
        );
    }
    let (file, line) = crate::analysis::render::build_error_location_in(cx.sources.files(), error)
        .unwrap_or_else(|| (layer.file.clone(), None));
    Finding::error("build-failed", file, line, message)
}

fn check_object(
    cx: &mut Context,
    resource: &Resource,
    prepared: &Prepared,
    result: Result<&serde_json::Value, &SubstError>,
    vars: &Vars,
    findings: &mut Vec<Finding>,
) {
    if prepared.disabled() {
        return;
    }
    // The text Flux substitutes and its expressions, made once for all cells.
    let text = prepared.text(&resource.object);
    let analysis = prepared.analysis(&resource.object);
    // Only a finding names the object.
    let object = || object_name(&resource.object);
    for r in &analysis.refs {
        cx.used.insert(r.name.clone());
        if r.has_default || vars.get(&r.name).is_some() {
            continue;
        }
        let (file, line) = cx.sources.locate(resource, &format!("${{{}", r.name));
        let hint = suggest::hint(&r.name, vars.map().keys().map(String::as_str));
        let shell = if is_shell_style(&r.name) {
            format!(
                " If `{}` is for a shell or the application rather than Flux, write `$${{{}}}`: Flux turns `$${{...}}` into `${{...}}` and leaves it.",
                r.text, r.name
            )
        } else {
            String::new()
        };
        findings.push(Finding::error(
            "missing-key",
            file,
            line,
            format!("`{}` in {object} asks for `{}`, which cell-metadata does not have (strict mode fails the reconciliation).{hint}{shell}", r.text, r.name, object = object()),
        ));
    }
    for error in &analysis.errors {
        let offset = error.offset().unwrap_or(0);
        let snippet: String = text
            .get(offset..)
            .unwrap_or("")
            .chars()
            .take_while(|c| *c != '\n')
            .take(40)
            .collect();
        let (file, line) = cx
            .sources
            .locate(resource, snippet.split('}').next().unwrap_or(&snippet));
        findings.push(Finding::error(
            "bad-substitution",
            file,
            line,
            format!("{} in {}: `{snippet}`", error.flux_message(), object()),
        ));
    }
    if analysis.errors.is_empty()
        && let Err(error) = result
        && !matches!(
            error,
            SubstError::VariableNotSet { .. } | SubstError::Syntax { .. }
        )
    {
        let (file, line) = cx.sources.locate(resource, "${");
        findings.push(Finding::error(
            "bad-substitution",
            file,
            line,
            format!("{} in {}", error.flux_message(), object()),
        ));
    }
}

/// `${HOME}`, `${PATH}`: upper case, as shells and scripts write their variables.
fn is_shell_style(name: &str) -> bool {
    name.bytes().any(|b| b.is_ascii_uppercase()) && !name.bytes().any(|b| b.is_ascii_lowercase())
}

/// `Kind namespace/name` of an object, for messages.
pub fn object_name(object: &serde_json::Value) -> String {
    let get = |p: &str| crate::analysis::render::str_at(object, p);
    let namespace = get("/metadata/namespace");
    format!(
        "{} {}{}",
        get("/kind"),
        if namespace.is_empty() {
            String::new()
        } else {
            format!("{namespace}/")
        },
        get("/metadata/name")
    )
}

/// Why a component cannot be built, in the words of a `spec.components` entry.
fn component_message(error: &BuildError) -> String {
    match error {
        BuildError::MissingComponent { path } => format!(
            "{} does not exist (paths are relative to the layer's spec.path; `ignoreMissingComponents: true` would skip it)",
            path
        ),
        BuildError::NotAComponent { path, kind } => {
            format!("{} is not a Kustomize Component (kind: {kind})", path)
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_style_names() {
        assert!(is_shell_style("HOME") && is_shell_style("MY_VAR2"));
        assert!(
            !is_shell_style("cluster_name") && !is_shell_style("Cluster") && !is_shell_style("_1")
        );
    }

    #[test]
    fn paths_from_keys() {
        assert_eq!(
            steps(&["spec", "patches", "2"]),
            [
                Step::Key("spec".into()),
                Step::Key("patches".into()),
                Step::Index(2)
            ]
        );
    }
}
