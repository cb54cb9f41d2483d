//! The simple builtin transformers: namespace, name prefix/suffix, labels,
//! annotations, replicas and images.

use serde_json::Value;

use super::fieldspec::{self, FieldSpec};
use super::kustomization::{Image, Kustomization, Replica};
use super::resid::{Res, is_cluster_scoped};

pub fn namespace(resources: &mut [Res], ns: &str) {
    for r in resources.iter_mut() {
        let (group, kind) = (r.group().to_string(), r.kind().to_string());
        if group.is_empty() && kind == "Namespace" {
            // kustomize renames Namespace objects to the target namespace.
            r.set_id(None, Some(ns));
            continue;
        }
        if !is_cluster_scoped(&group, &kind) {
            r.set_id(Some(ns), None);
        }
        if group == "rbac.authorization.k8s.io"
            && (kind == "RoleBinding" || kind == "ClusterRoleBinding")
        {
            // kustomize's `setRoleBindingSubjects: defaultOnly`: subjects named
            // "default" move with the namespace; others follow only through
            // name references to objects in the build (see namerefs).
            if let Some(Value::Array(subjects)) = r.obj.get_mut("subjects") {
                for s in subjects.iter_mut().filter_map(Value::as_object_mut) {
                    if s.get("name").and_then(Value::as_str) == Some("default") {
                        s.insert("namespace".into(), Value::String(ns.into()));
                    }
                }
            }
        }
        let extra = [
            FieldSpec::grouped(
                "apiregistration.k8s.io",
                "APIService",
                "spec/service/namespace",
                false,
            ),
            FieldSpec::grouped(
                "apiextensions.k8s.io",
                "CustomResourceDefinition",
                "spec/conversion/webhook/clientConfig/service/namespace",
                false,
            ),
        ];
        let applicable: Vec<&FieldSpec> = extra.iter().filter(|s| s.applies_to(r)).collect();
        for spec in applicable {
            spec.visit(&mut r.obj, &mut |parent, key| {
                if parent.contains_key(key) {
                    parent.insert(key.to_string(), Value::String(ns.into()));
                }
            });
        }
    }
}

/// Kinds whose names kustomize never prefixes/suffixes.
fn skips_prefix(r: &Res) -> bool {
    matches!(
        r.kind(),
        "CustomResourceDefinition" | "APIService" | "Namespace"
    )
}

pub fn prefix_suffix(resources: &mut [Res], prefix: &str, suffix: &str) {
    for r in resources.iter_mut().filter(|r| !skips_prefix(r)) {
        let name = format!("{prefix}{}{suffix}", r.name());
        r.set_id(None, Some(&name));
    }
}

pub fn labels(resources: &mut [Res], k: &Kustomization) {
    if !k.common_labels.is_empty() {
        let pairs: Vec<_> = k
            .common_labels
            .iter()
            .map(|(a, b)| (a.clone(), b.clone()))
            .collect();
        let specs = fieldspec::common_labels();
        for r in resources.iter_mut() {
            fieldspec::add_pairs(r, &specs, &pairs);
        }
    }
    for l in &k.labels {
        let pairs: Vec<_> = l
            .pairs
            .iter()
            .map(|(a, b)| (a.clone(), b.clone()))
            .collect();
        let specs = if l.include_selectors {
            fieldspec::common_labels()
        } else if l.include_templates {
            let mut s = fieldspec::metadata_labels();
            s.extend(fieldspec::template_labels());
            s
        } else {
            fieldspec::metadata_labels()
        };
        for r in resources.iter_mut() {
            fieldspec::add_pairs(r, &specs, &pairs);
        }
    }
}

pub fn annotations(resources: &mut [Res], k: &Kustomization) {
    if k.common_annotations.is_empty() {
        return;
    }
    let pairs: Vec<_> = k
        .common_annotations
        .iter()
        .map(|(a, b)| (a.clone(), b.clone()))
        .collect();
    let specs = fieldspec::common_annotations();
    for r in resources.iter_mut() {
        fieldspec::add_pairs(r, &specs, &pairs);
    }
}

pub fn replicas(resources: &mut [Res], replicas: &[Replica]) {
    const KINDS: [&str; 4] = [
        "Deployment",
        "ReplicationController",
        "ReplicaSet",
        "StatefulSet",
    ];
    for rep in replicas {
        for r in resources
            .iter_mut()
            .filter(|r| KINDS.contains(&r.kind()) && r.has_name(&rep.name))
        {
            if let Some(spec) = r.obj.as_object_mut().map(|o| {
                o.entry("spec")
                    .or_insert_with(|| Value::Object(Default::default()))
            }) && let Some(m) = spec.as_object_mut()
            {
                m.insert("replicas".into(), Value::from(rep.count));
            }
        }
    }
}

/// Splits an image reference into (name, tag-or-digest suffix including its separator).
fn split_image(image: &str) -> (&str, &str) {
    if let Some(i) = image.find('@') {
        return (&image[..i], &image[i..]);
    }
    let slash = image.rfind('/').map_or(0, |i| i + 1);
    match image[slash..].rfind(':') {
        Some(i) => (&image[..slash + i], &image[slash + i..]),
        None => (image, ""),
    }
}

fn rewrite_image(current: &str, images: &[Image]) -> Option<String> {
    let (name, suffix) = split_image(current);
    let img = images.iter().find(|i| i.name == name)?;
    let new_name = img.new_name.as_deref().unwrap_or(name);
    let new_suffix = if let Some(d) = &img.digest {
        format!("@{d}")
    } else if let Some(t) = &img.new_tag {
        format!(":{t}")
    } else {
        suffix.to_string()
    };
    Some(format!("{new_name}{new_suffix}"))
}

/// Like kustomize's legacy image filter: every `image` of every `containers` /
/// `initContainers` list anywhere in the object, custom resources included.
fn images_in(v: &mut Value, images: &[Image]) -> bool {
    let mut changed = false;
    match v {
        Value::Object(m) => {
            for (k, child) in m.iter_mut() {
                if (k == "containers" || k == "initContainers") && child.is_array() {
                    for c in child.as_array_mut().into_iter().flatten() {
                        if let Some(Value::String(img)) = c.get_mut("image")
                            && let Some(new) = rewrite_image(img, images)
                        {
                            *img = new;
                            changed = true;
                        }
                    }
                }
                changed |= images_in(child, images);
            }
        }
        Value::Array(items) => {
            for item in items {
                changed |= images_in(item, images);
            }
        }
        _ => {}
    }
    changed
}

pub fn images(resources: &mut [Res], images: &[Image]) {
    if images.is_empty() {
        return;
    }
    for r in resources.iter_mut() {
        images_in(&mut r.obj, images);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_images() {
        assert_eq!(split_image("nginx"), ("nginx", ""));
        assert_eq!(split_image("nginx:1.2"), ("nginx", ":1.2"));
        assert_eq!(split_image("reg:5000/a/b:1"), ("reg:5000/a/b", ":1"));
        assert_eq!(split_image("reg:5000/a/b"), ("reg:5000/a/b", ""));
        assert_eq!(split_image("a@sha256:xy"), ("a", "@sha256:xy"));
    }
}
