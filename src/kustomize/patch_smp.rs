//! Strategic merge patches, as kustomize's kyaml merge applies them.
//!
//! Built-in Kubernetes types merge lists of objects by their schema's merge key
//! (containers by name, volumeMounts by mountPath, ...); custom resources have no
//! schema, so their lists are replaced. Merged lists keep the patch's elements
//! first, then the untouched originals, which is the order kustomize prints.

use serde_json::{Map, Value};

/// Errors are plain messages; the caller adds the patch file.
pub type SmpResult<T> = Result<T, String>;

/// API groups whose types carry strategic-merge metadata in kustomize's schema.
fn is_builtin_group(group: &str) -> bool {
    const GROUPS: &[&str] = &[
        "",
        "apps",
        "batch",
        "policy",
        "autoscaling",
        "networking.k8s.io",
        "rbac.authorization.k8s.io",
        "storage.k8s.io",
        "scheduling.k8s.io",
        "node.k8s.io",
        "apiextensions.k8s.io",
        "admissionregistration.k8s.io",
        "apiregistration.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "certificates.k8s.io",
        "events.k8s.io",
        "flowcontrol.apiserver.k8s.io",
        "resource.k8s.io",
    ];
    GROUPS.contains(&group)
}

/// Merge key for a list field of a built-in type, or None to replace the list.
fn merge_key(kind: &str, field: &str, parent_path: &[String]) -> Option<&'static str> {
    Some(match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "volumes"
        | "env"
        | "imagePullSecrets"
        | "resourceClaims"
        | "webhooks" => "name",
        "volumeMounts" => "mountPath",
        "volumeDevices" => "devicePath",
        "hostAliases" => "ip",
        "topologySpreadConstraints" => "topologyKey",
        "conditions" => "type",
        "ownerReferences" => "uid",
        "ports" if kind == "Service" && parent_path.len() == 1 => "port",
        "ports"
            if parent_path
                .last()
                .is_some_and(|p| p == "containers" || p == "initContainers") =>
        {
            "containerPort"
        }
        _ => return None,
    })
}

struct Ctx<'a> {
    kind: &'a str,
    builtin: bool,
}

/// Applies `patch` to `obj`. Returns Ok(false) when the patch deletes the object.
pub fn apply(obj: &mut Value, patch: &Value, group: &str, kind: &str) -> SmpResult<bool> {
    let ctx = Ctx {
        kind,
        builtin: is_builtin_group(group),
    };
    let Value::Object(p) = patch else {
        return Err("strategic merge patch is not a mapping".into());
    };
    if directive(p) == Some("delete") {
        return Ok(false);
    }
    let mut p = p.clone();
    // The target is chosen by selector or by the patch's own id; the patch never renames it.
    p.remove("apiVersion");
    p.remove("kind");
    if let Some(Value::Object(meta)) = p.get_mut("metadata") {
        meta.remove("name");
        meta.remove("namespace");
    }
    let mut path = Vec::new();
    merge_value(obj, &Value::Object(p), &ctx, &mut path)?;
    Ok(true)
}

fn directive(m: &Map<String, Value>) -> Option<&str> {
    m.get("$patch").and_then(Value::as_str)
}

fn check_directives(m: &Map<String, Value>) -> SmpResult<()> {
    if let Some(k) = m.keys().find(|k| k.starts_with('$') && *k != "$patch") {
        return Err(format!(
            "strategic merge directive `{k}` is not supported by the native builder"
        ));
    }
    match directive(m) {
        None | Some("delete") | Some("replace") | Some("merge") => Ok(()),
        Some(other) => Err(format!(
            "unknown strategic merge directive `$patch: {other}`"
        )),
    }
}

fn merge_value(
    orig: &mut Value,
    patch: &Value,
    ctx: &Ctx,
    path: &mut Vec<String>,
) -> SmpResult<()> {
    match (orig, patch) {
        (Value::Object(o), Value::Object(p)) => merge_map(o, p, ctx, path),
        (o, Value::Object(p)) => {
            check_directives(p)?;
            *o = Value::Object(clean(p)?);
            Ok(())
        }
        (o, p) => {
            *o = clean_value(p)?;
            Ok(())
        }
    }
}

/// A patch fragment with nothing to merge into: directives are dropped, nulls removed.
fn clean(p: &Map<String, Value>) -> SmpResult<Map<String, Value>> {
    check_directives(p)?;
    let mut out = Map::new();
    for (k, v) in p.iter().filter(|(k, _)| !k.starts_with('$')) {
        if !v.is_null() {
            out.insert(k.clone(), clean_value(v)?);
        }
    }
    Ok(out)
}

fn clean_value(v: &Value) -> SmpResult<Value> {
    Ok(match v {
        Value::Object(m) => Value::Object(clean(m)?),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .filter(|i| {
                    !i.as_object()
                        .is_some_and(|m| directive(m).is_some() && m.len() == 1)
                })
                .map(clean_value)
                .collect::<SmpResult<_>>()?,
        ),
        other => other.clone(),
    })
}

fn merge_map(
    o: &mut Map<String, Value>,
    p: &Map<String, Value>,
    ctx: &Ctx,
    path: &mut Vec<String>,
) -> SmpResult<()> {
    check_directives(p)?;
    if directive(p) == Some("replace") {
        *o = clean(p)?;
        return Ok(());
    }
    for (k, pv) in p.iter().filter(|(k, _)| !k.starts_with('$')) {
        if pv.is_null() {
            o.remove(k);
            continue;
        }
        if let Value::Object(pm) = pv
            && directive(pm) == Some("delete")
        {
            o.remove(k);
            continue;
        }
        match o.get_mut(k) {
            None => {
                o.insert(k.clone(), clean_value(pv)?);
            }
            Some(ov) => {
                path.push(k.clone());
                let res = match (ov, pv) {
                    (Value::Array(oa), Value::Array(pa)) => merge_list(oa, pa, ctx, path),
                    (ov, pv) => merge_value(ov, pv, ctx, path),
                };
                path.pop();
                res?;
            }
        }
    }
    Ok(())
}

fn merge_list(o: &mut Vec<Value>, p: &[Value], ctx: &Ctx, path: &mut Vec<String>) -> SmpResult<()> {
    let field = path.last().cloned().unwrap_or_default();
    let parent = &path[..path.len().saturating_sub(1)];
    let replace_all = p.iter().any(|i| {
        i.as_object()
            .is_some_and(|m| directive(m) == Some("replace"))
    });
    let key = if ctx.builtin {
        merge_key(ctx.kind, &field, parent)
    } else {
        None
    };
    let Some(key) = key.filter(|_| !replace_all) else {
        *o = clean_value(&Value::Array(p.to_vec()))?
            .as_array()
            .cloned()
            .unwrap_or_default();
        return Ok(());
    };
    let key_of = |v: &Value| v.get(key).cloned();
    let mut remaining: Vec<Option<Value>> = o.drain(..).map(Some).collect();
    let mut out = Vec::new();
    for item in p {
        let Value::Object(pm) = item else {
            return Err(format!(
                "list `{field}` is merged by `{key}` but an element is not a mapping"
            ));
        };
        check_directives(pm)?;
        let k = key_of(item);
        let found = k.as_ref().and_then(|k| {
            remaining
                .iter()
                .position(|r| r.as_ref().is_some_and(|r| key_of(r).as_ref() == Some(k)))
        });
        let original = found.and_then(|i| remaining[i].take());
        if directive(pm) == Some("delete") {
            continue;
        }
        match original {
            Some(mut ov) => {
                merge_value(&mut ov, item, ctx, path)?;
                out.push(ov);
            }
            None => out.push(Value::Object(clean(pm)?)),
        }
    }
    out.extend(remaining.into_iter().flatten());
    *o = out;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merges_containers_by_name_patch_first() {
        let mut o = json!({"spec": {"containers": [{"name": "a"}, {"name": "c", "image": "x"}]}});
        let p = json!({"spec": {"containers": [{"name": "c", "image": "y"}]}});
        assert!(apply(&mut o, &p, "", "Pod").unwrap());
        assert_eq!(
            o,
            json!({"spec": {"containers": [{"name": "c", "image": "y"}, {"name": "a"}]}})
        );
    }

    #[test]
    fn replaces_lists_of_custom_resources() {
        let mut o = json!({"spec": {"containers": [{"name": "a"}]}});
        let p = json!({"spec": {"containers": [{"name": "b"}]}});
        apply(&mut o, &p, "example.com", "Foo").unwrap();
        assert_eq!(o, json!({"spec": {"containers": [{"name": "b"}]}}));
    }
}
