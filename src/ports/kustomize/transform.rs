//! The simple builtin transformers, as kustomize v5.5 runs them (api/internal/builtins and
//! api/filters): namespace, name prefix/suffix, labels, annotations, replicas and images.

use camino::Utf8Path;

use serde_json::Value;

use super::BuildError;
use super::fieldspec::{self, CreateKind, FieldSpec};
use super::kustomization::{Image, Kustomization, Replica};
use super::resid::Res;

fn invalid(file: &Utf8Path, r: &Res, message: String) -> BuildError {
    BuildError::Invalid {
        file: file.to_path_buf(),
        message: format!("{} {}: {message}", r.kind(), r.name()),
    }
}

/// Sets a scalar field kustomize treats as a string.
fn set_scalar(v: &mut Value, s: &str) -> Result<(), String> {
    match v {
        Value::Object(_) | Value::Array(_) => {
            Err("namespace field specs must target scalar nodes".into())
        }
        other => {
            *other = Value::String(s.to_string());
            Ok(())
        }
    }
}

/// NamespaceTransformer (defaultOnly role binding subjects).
pub fn namespace(resources: &mut [Res], ns: &str, file: &Utf8Path) -> Result<(), BuildError> {
    let specs = fieldspec::section("namespace");
    for i in 0..resources.len() {
        let r = &mut resources[i];
        if r.obj.as_object().is_none_or(|m| m.is_empty()) {
            continue;
        }
        r.store_previous_id();
        let (av, kind) = (r.api_version().to_string(), r.kind().to_string());
        if !r.is_cluster_scoped() {
            r.set_id(Some(ns), None);
        }
        if kind == "RoleBinding" || kind == "ClusterRoleBinding" {
            let subjects = r.obj.get_mut("subjects");
            match subjects {
                None | Some(Value::Null) => {}
                Some(Value::Array(items)) => {
                    for s in items.iter_mut() {
                        let Value::Object(m) = s else {
                            return Err(BuildError::Invalid {
                                file: file.to_path_buf(),
                                message: format!("{kind}: a subject is not a mapping"),
                            });
                        };
                        if m.get("name").and_then(Value::as_str) == Some("default") {
                            m.insert("namespace".into(), Value::String(ns.into()));
                        }
                    }
                }
                Some(_) => {
                    return Err(BuildError::Invalid {
                        file: file.to_path_buf(),
                        message: format!("{kind}: subjects is not a list"),
                    });
                }
            }
        }
        let r = &mut resources[i];
        for spec in specs {
            let is_name = spec.path == ["metadata", "name"];
            if is_name && av != "v1" || !spec.applies_to(r) {
                continue;
            }
            let res = spec.apply(&mut r.obj, CreateKind::Scalar, &mut |v| set_scalar(v, ns));
            res.map_err(|m| invalid(file, r, m))?;
        }
        let key = r.id_key();
        if resources.iter().filter(|o| o.id_key() == key).count() > 1 {
            return Err(BuildError::Invalid {
                file: file.to_path_buf(),
                message: format!(
                    "namespace transformation produces ID conflict for {}",
                    resources[i].id_string()
                ),
            });
        }
    }
    Ok(())
}

/// Kinds whose names kustomize never prefixes or suffixes (selected by the original id).
fn skips_prefix(r: &Res) -> bool {
    let org = r.org_id();
    org.kind == "CustomResourceDefinition"
        || org.kind == "Namespace"
        || (org.kind == "APIService" && r.group() == "apiregistration.k8s.io")
}

/// PrefixTransformer or SuffixTransformer.
pub fn prefix_suffix(
    resources: &mut [Res],
    affix: &str,
    prefix: bool,
    file: &Utf8Path,
) -> Result<(), BuildError> {
    let specs = fieldspec::section(if prefix { "namePrefix" } else { "nameSuffix" });
    for r in resources.iter_mut() {
        if skips_prefix(r) {
            continue;
        }
        for spec in specs {
            let org = r.org_id();
            if !(spec.kind.is_empty() || spec.kind == org.kind)
                || !(spec.group.is_empty() || spec.group == r.group())
                || !(spec.version.is_empty() || spec.version == r.version())
            {
                continue;
            }
            if spec.path == ["metadata", "name"] {
                if prefix {
                    r.prefixes.push(affix.to_string());
                } else {
                    r.suffixes.push(affix.to_string());
                }
                r.store_previous_id();
            }
            if !spec.applies_to(r) {
                continue;
            }
            let res = spec.apply(&mut r.obj, CreateKind::Scalar, &mut |v| {
                let cur = match &*v {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    Value::Object(_) | Value::Array(_) => {
                        return Err("name prefix/suffix field is not a scalar".into());
                    }
                    _ => return Err("a name that is not a string".into()),
                };
                *v = Value::String(if prefix {
                    format!("{affix}{cur}")
                } else {
                    format!("{cur}{affix}")
                });
                Ok(())
            });
            res.map_err(|m| invalid(file, r, m))?;
        }
    }
    Ok(())
}

/// Adds string entries to the mapping at each applicable spec (filtersutil.SetEntry).
fn add_pairs(
    r: &mut Res,
    specs: &[FieldSpec],
    pairs: &[(String, String)],
    file: &Utf8Path,
) -> Result<(), BuildError> {
    let applicable: Vec<&FieldSpec> = specs.iter().filter(|s| s.applies_to(r)).collect();
    for spec in applicable {
        let res = spec.apply(&mut r.obj, CreateKind::Map, &mut |v| match v {
            Value::Object(m) => {
                for (k, val) in pairs {
                    m.insert(k.clone(), Value::String(val.clone()));
                }
                Ok(())
            }
            Value::Null => Ok(()),
            _ => Err("wrong node kind: expected a mapping".into()),
        });
        res.map_err(|m| invalid(file, r, m))?;
    }
    Ok(())
}

/// LabelTransformer: each `labels` entry, then commonLabels.
pub fn labels(resources: &mut [Res], k: &Kustomization, file: &Utf8Path) -> Result<(), BuildError> {
    if k.labels.is_empty() && k.common_labels.is_empty() {
        return Ok(());
    }
    let to_pairs = |m: &std::collections::BTreeMap<String, String>| -> Vec<(String, String)> {
        m.iter().map(|(a, b)| (a.clone(), b.clone())).collect()
    };
    for l in &k.labels {
        let metadata_only;
        let specs: &[FieldSpec] = if l.include_selectors {
            fieldspec::section("commonLabels")
        } else if l.include_templates {
            fieldspec::section("templateLabels")
        } else {
            metadata_only = [FieldSpec {
                group: String::new(),
                version: String::new(),
                kind: String::new(),
                path: vec!["metadata".into(), "labels".into()],
                create: true,
            }];
            &metadata_only
        };
        let pairs = to_pairs(&l.pairs);
        for r in resources.iter_mut() {
            add_pairs(r, specs, &pairs, file)?;
        }
    }
    let specs = fieldspec::section("commonLabels");
    let pairs = to_pairs(&k.common_labels);
    for r in resources.iter_mut() {
        add_pairs(r, specs, &pairs, file)?;
    }
    Ok(())
}

pub fn annotations(
    resources: &mut [Res],
    k: &Kustomization,
    file: &Utf8Path,
) -> Result<(), BuildError> {
    if k.common_annotations.is_empty() {
        return Ok(());
    }
    let pairs: Vec<_> = k
        .common_annotations
        .iter()
        .map(|(a, b)| (a.clone(), b.clone()))
        .collect();
    let specs = fieldspec::section("commonAnnotations");
    for r in resources.iter_mut() {
        add_pairs(r, specs, &pairs, file)?;
    }
    Ok(())
}

/// ReplicaCountTransformer: resources named (now or before) `name` of a configured kind.
pub fn replicas(
    resources: &mut [Res],
    replicas: &[Replica],
    file: &Utf8Path,
) -> Result<(), BuildError> {
    let specs = fieldspec::section("replicas");
    for rep in replicas {
        let mut found = false;
        for spec in specs {
            for r in resources.iter_mut() {
                let cur = r.cur_id();
                let named = std::iter::once(&cur).chain(&r.history).any(|id| {
                    id.name == rep.name && (spec.kind.is_empty() || id.kind == spec.kind)
                });
                if !named {
                    continue;
                }
                found = true;
                if !spec.applies_to(r) {
                    continue;
                }
                let count = rep.count;
                let res = spec.apply(&mut r.obj, CreateKind::Scalar, &mut |v| match v {
                    Value::Object(_) | Value::Array(_) => Err("replicas is not a scalar".into()),
                    other => {
                        *other = Value::from(count);
                        Ok(())
                    }
                });
                res.map_err(|m| invalid(file, r, m))?;
            }
        }
        if !found {
            return Err(BuildError::Invalid {
                file: file.to_path_buf(),
                message: format!(
                    "resource with name {} does not match a config with the following GVK [~G_~V_Deployment ~G_~V_ReplicationController ~G_~V_ReplicaSet ~G_~V_StatefulSet]",
                    rep.name
                ),
            });
        }
    }
    Ok(())
}

/// kustomize's image.Split: name, tag, digest (a domain's port is not a tag).
fn split_image(image: &str) -> (&str, &str, &str) {
    let slash = image.find('/').filter(|&i| i > 0).unwrap_or(0);
    let search = &image[slash..];
    let id = search.find('@').map(|i| i + slash);
    let ic = search.find(':').map(|i| i + slash);
    match (ic, id) {
        (None, None) => (image, "", ""),
        (None, Some(d)) => (&image[..d], "", &image[d + 1..]),
        (Some(c), Some(d)) if d < c => (&image[..d], "", &image[d + 1..]),
        (Some(c), Some(d)) => (&image[..c], &image[c + 1..d], &image[d + 1..]),
        (Some(c), None) => (&image[..c], &image[c + 1..], ""),
    }
}

/// kustomize's image updater (api/filters/imagetag/updater.go).
fn update_image(current: &str, img: &Image, re: &regex::Regex) -> Option<String> {
    if !re.is_match(current) {
        return None;
    }
    let (name, tag, digest) = split_image(current);
    let mut name = name.to_string();
    let (mut tag, mut digest) = (tag.to_string(), digest.to_string());
    if let Some(n) = img.new_name.as_deref().filter(|s| !s.is_empty()) {
        name = n.to_string();
    }
    let new_tag = img.new_tag.as_deref().unwrap_or("");
    let new_digest = img.digest.as_deref().unwrap_or("");
    match (new_tag.is_empty(), new_digest.is_empty()) {
        (false, false) => (tag, digest) = (new_tag.into(), new_digest.into()),
        (false, true) => (tag, digest) = (new_tag.into(), String::new()),
        (true, false) => (tag, digest) = (String::new(), new_digest.into()),
        (true, true) => {}
    }
    if !tag.is_empty() {
        name = format!("{name}:{tag}");
    }
    if !digest.is_empty() {
        name = format!("{name}@{digest}");
    }
    Some(name)
}

fn set_image(v: &mut Value, img: &Image, re: &regex::Regex) -> Result<(), String> {
    match v {
        Value::String(s) => {
            if let Some(new) = update_image(s, img, re) {
                *s = new;
            }
            Ok(())
        }
        Value::Null => Ok(()),
        _ => Err("an image is not a string".into()),
    }
}

/// The legacy image filter: `image` of every element of every `containers` or
/// `initContainers` list anywhere in the object (children first).
fn legacy_images(v: &mut Value, img: &Image, re: &regex::Regex) -> Result<(), String> {
    match v {
        Value::Object(m) => {
            for (k, child) in m.iter_mut() {
                legacy_images(child, img, re)?;
                if (k == "containers" || k == "initContainers")
                    && let Value::Array(items) = child
                {
                    for c in items {
                        match c {
                            Value::Object(cm) => {
                                if let Some(image) = cm.get_mut("image") {
                                    set_image(image, img, re)?;
                                }
                            }
                            Value::Null => {}
                            _ => return Err(format!("an element of `{k}` is not a mapping")),
                        }
                    }
                }
            }
            Ok(())
        }
        Value::Array(items) => items.iter_mut().try_for_each(|i| legacy_images(i, img, re)),
        _ => Ok(()),
    }
}

/// ImageTagTransformer, once per `images` entry: the legacy filter, then the field specs;
/// CustomResourceDefinitions are left alone. The image name is a regular expression, as
/// in kustomize (`^name(:tag)?(@sha256:digest)?$`).
pub fn images(
    caches: &super::Caches,
    resources: &mut [Res],
    images: &[Image],
    file: &Utf8Path,
) -> Result<(), BuildError> {
    let specs = fieldspec::section("images");
    for img in images {
        let pattern = format!(
            "^{}(:[a-zA-Z0-9_.{{}}-]*)?(@sha256:[a-zA-Z0-9_.{{}}-]*)?$",
            img.name
        );
        let re =
            super::select::go_regex(caches, &pattern).map_err(|what| BuildError::Unsupported {
                file: file.to_path_buf(),
                field: format!("images[].name `{}` ({what})", img.name),
            })?;
        for r in resources.iter_mut() {
            if r.kind() == "CustomResourceDefinition" {
                continue;
            }
            legacy_images(&mut r.obj, img, &re).map_err(|m| invalid(file, r, m))?;
            let applicable: Vec<&FieldSpec> = specs.iter().filter(|s| s.applies_to(r)).collect();
            for spec in applicable {
                let res = spec.apply(&mut r.obj, CreateKind::Nothing, &mut |v| {
                    set_image(v, img, &re)
                });
                res.map_err(|m| invalid(file, r, m))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_images_like_kustomize() {
        assert_eq!(split_image("nginx"), ("nginx", "", ""));
        assert_eq!(split_image("nginx:1.2"), ("nginx", "1.2", ""));
        assert_eq!(split_image("reg:5000/a/b:1"), ("reg:5000/a/b", "1", ""));
        assert_eq!(split_image("reg:5000/a/b"), ("reg:5000/a/b", "", ""));
        assert_eq!(split_image("a@sha256:xy"), ("a", "", "sha256:xy"));
        assert_eq!(split_image("a:1@sha256:xy"), ("a", "1", "sha256:xy"));
    }
}
