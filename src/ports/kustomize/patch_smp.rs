//! Strategic merge patches, as kustomize's kyaml merge applies them.
//!
//! Built-in Kubernetes types merge lists of objects by their schema's merge key
//! (containers by name, volumeMounts by mountPath, ...); custom resources have no
//! schema, so their lists are replaced. Merged lists keep the patch's elements
//! first, then the untouched originals, which is the order kustomize prints.

use serde_json::{Map, Value};

/// Why a patch could not be applied; the caller adds the patch file.
#[derive(Debug)]
pub enum SmpError {
    Invalid(String),
    /// Valid for kustomize, but not reproduced faithfully here.
    Unsupported(String),
}

pub type SmpResult<T> = Result<T, SmpError>;

use super::smp_schema::{self, Cursor};
use crate::ports::yaml::{JsonPath, Seg};

/// How a list field merges.
enum ListMerge {
    /// Objects matched by these key fields (the schema's list-map keys or merge key).
    Keys(&'static [&'static str]),
    /// Scalars unioned, patch values first (e.g. finalizers).
    Union,
}

/// kyaml's merge walks the object it patches (every mapping field, and the elements of
/// lists its schema merges) and drops fields whose value is a null written without text
/// (`key:`); a `null` or `~` it keeps. `paths` are where the object had such nulls when read.
pub fn drop_empty_nulls(obj: &mut Value, paths: &[JsonPath], api_version: &str, kind: &str) {
    let root = smp_schema::root(api_version, kind);
    'paths: for path in paths {
        let Some((Seg::Key(last), parents)) = path.split_last() else {
            continue;
        };
        // Only fields reached through mappings and merged lists are walked.
        let mut cursor = root;
        let mut list_merges = false;
        let mut cur = &mut *obj;
        for seg in parents {
            match (seg, cur) {
                (Seg::Key(k), Value::Object(m)) => {
                    let f = smp_schema::field(cursor, k);
                    cursor = f.map_or(Cursor::None, |f| f.target);
                    list_merges = f.is_some_and(|f| f.merge_keys.is_some());
                    let Some(next) = m.get_mut(k) else {
                        continue 'paths;
                    };
                    cur = next;
                }
                (Seg::Index(i), Value::Array(items)) if list_merges => {
                    list_merges = false;
                    let Some(next) = items.get_mut(*i) else {
                        continue 'paths;
                    };
                    cur = next;
                }
                _ => continue 'paths,
            }
        }
        if let Value::Object(m) = cur
            && m.get(last).is_some_and(Value::is_null)
        {
            m.remove(last);
        }
    }
}

/// Applies `patch` to `obj`. Returns Ok(false) when the patch deletes the object.
pub fn apply(obj: &mut Value, patch: &Value, api_version: &str, kind: &str) -> SmpResult<bool> {
    let cursor = smp_schema::root(api_version, kind);
    let Value::Object(p) = patch else {
        return Err(SmpError::Invalid(
            "strategic merge patch is not a mapping".into(),
        ));
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
    merge_value(obj, &Value::Object(p), cursor)?;
    Ok(true)
}

fn directive(m: &Map<String, Value>) -> Option<&str> {
    m.get("$patch").and_then(Value::as_str)
}

fn check_directives(m: &Map<String, Value>) -> SmpResult<()> {
    if let Some(k) = m.keys().find(|k| k.starts_with('$') && *k != "$patch") {
        return Err(SmpError::Unsupported(format!(
            "strategic merge directive {k}"
        )));
    }
    match directive(m) {
        None | Some("delete") | Some("replace") | Some("merge") => Ok(()),
        Some(other) => Err(SmpError::Invalid(format!(
            "unknown strategic merge directive `$patch: {other}`"
        ))),
    }
}

fn merge_value(orig: &mut Value, patch: &Value, cursor: Cursor) -> SmpResult<()> {
    match (orig, patch) {
        (Value::Object(o), Value::Object(p)) => merge_map(o, p, cursor),
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

fn merge_map(o: &mut Map<String, Value>, p: &Map<String, Value>, cursor: Cursor) -> SmpResult<()> {
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
                let field = smp_schema::field(cursor, k);
                let child = field.map_or(Cursor::None, |f| f.target);
                match (ov, pv) {
                    (Value::Array(oa), Value::Array(pa)) => merge_list(oa, pa, k, field)?,
                    (ov, pv) => merge_value(ov, pv, child)?,
                }
            }
        }
    }
    Ok(())
}

fn merge_list(
    o: &mut Vec<Value>,
    p: &[Value],
    field: &str,
    schema: Option<smp_schema::Field>,
) -> SmpResult<()> {
    let replace_all = p.iter().any(|i| {
        i.as_object()
            .is_some_and(|m| directive(m) == Some("replace"))
    });
    let element = schema.map_or(Cursor::None, |f| f.target);
    let strategy = match schema.and_then(|f| f.merge_keys) {
        _ if replace_all => None,
        Some([]) => Some(ListMerge::Union),
        Some(keys) => Some(ListMerge::Keys(keys)),
        None => None,
    };
    let keys = match strategy {
        Some(ListMerge::Union) => {
            let mut out: Vec<Value> = p.to_vec();
            out.extend(o.drain(..).filter(|v| !p.contains(v)));
            *o = out;
            return Ok(());
        }
        Some(ListMerge::Keys(keys)) => keys,
        None => {
            *o = clean_value(&Value::Array(p.to_vec()))?
                .as_array()
                .cloned()
                .unwrap_or_default();
            return Ok(());
        }
    };
    for item in p {
        let Value::Object(pm) = item else {
            return Err(SmpError::Invalid(format!(
                "list `{field}` is merged by key but an element is not a mapping"
            )));
        };
        check_directives(pm)?;
    }
    // kustomize (kyaml) only uses secondary keys (e.g. `protocol` of ports) when
    // every element has them, and then keeps the original order; with the primary
    // key alone, patch elements come first. Mixed lists behave erratically there.
    let has = |v: &Value, k: &str| v.get(k).is_some_and(|x| !x.is_null());
    let full = |v: &Value| keys.iter().all(|k| has(v, k));
    let all = || o.iter().chain(p.iter());
    let (keys, patch_first) =
        if keys.len() == 1 || all().all(|v| !keys[1..].iter().any(|k| has(v, k))) {
            (&keys[..1], true)
        } else if all().all(full) {
            (keys, false)
        } else {
            return Err(SmpError::Unsupported(format!(
                "merging list `{field}` whose elements only partly set {}",
                keys[1..].join(", ")
            )));
        };
    let key_of = |v: &Value| -> Option<Vec<Value>> {
        keys.iter()
            .map(|k| v.get(*k).filter(|x| !x.is_null()).cloned())
            .collect()
    };
    let mut originals: Vec<Option<Value>> = o.drain(..).map(Some).collect();
    // Merged originals stay in place unless the patch order wins.
    let mut merged: Vec<Option<Value>> = vec![None; originals.len()];
    let mut deleted = vec![false; originals.len()];
    let mut from_patch = Vec::new();
    for item in p {
        let k = key_of(item);
        let found = k.as_ref().and_then(|k| {
            originals
                .iter()
                .position(|r| r.as_ref().is_some_and(|r| key_of(r).as_ref() == Some(k)))
        });
        let is_delete = item
            .as_object()
            .is_some_and(|m| directive(m) == Some("delete"));
        match found {
            Some(i) => {
                let mut ov = originals[i].take().unwrap_or(Value::Null);
                if is_delete {
                    deleted[i] = true;
                } else {
                    merge_value(&mut ov, item, element)?;
                    if patch_first {
                        from_patch.push(ov);
                    } else {
                        merged[i] = Some(ov);
                    }
                }
            }
            None if is_delete => {}
            None => from_patch.push(Value::Object(clean(
                item.as_object().expect("checked above"),
            )?)),
        }
    }
    let rest = originals
        .into_iter()
        .zip(merged)
        .zip(deleted)
        .filter(|(_, d)| !d)
        .filter_map(|((orig, m), _)| m.or(orig));
    from_patch.extend(rest);
    *o = from_patch;
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
        assert!(apply(&mut o, &p, "v1", "Pod").unwrap());
        assert_eq!(
            o,
            json!({"spec": {"containers": [{"name": "c", "image": "y"}, {"name": "a"}]}})
        );
    }

    #[test]
    fn replaces_lists_of_custom_resources() {
        let mut o = json!({"spec": {"containers": [{"name": "a"}]}});
        let p = json!({"spec": {"containers": [{"name": "b"}]}});
        apply(&mut o, &p, "example.com/v1", "Foo").unwrap();
        assert_eq!(o, json!({"spec": {"containers": [{"name": "b"}]}}));
    }

    #[test]
    fn partly_keyed_lists_are_unsupported() {
        let mut o = json!({"spec": {"ports": [{"port": 80, "protocol": "TCP"}, {"port": 81}]}});
        let p = json!({"spec": {"ports": [{"port": 81, "protocol": "TCP", "name": "b"}]}});
        assert!(matches!(
            apply(&mut o, &p, "v1", "Service"),
            Err(SmpError::Unsupported(_))
        ));
    }
}
