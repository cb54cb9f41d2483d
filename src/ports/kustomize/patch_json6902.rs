//! JSON patches as kustomize applies them: gopkg.in/evanphx/json-patch.v4 (v4.12.0), with
//! its departures from RFC 6902 kept: `replace` of a missing object key adds it, negative
//! list indices count from the end, and a path's first segment is ignored (the empty one
//! before its leading `/`).

use serde_json::Value;

/// Errors are plain messages; the caller adds the patch file.
pub fn apply(doc: &mut Value, ops: &Value) -> Result<(), String> {
    let Value::Array(ops) = ops else {
        return Err("JSON 6902 patch is not a list of operations".into());
    };
    for (i, op) in ops.iter().enumerate() {
        apply_op(doc, op).map_err(|e| format!("operation {i}: {e}"))?;
    }
    Ok(())
}

fn field<'a>(op: &'a Value, name: &str) -> Result<&'a str, String> {
    op.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("missing `{name}`"))
}

fn apply_op(doc: &mut Value, op: &Value) -> Result<(), String> {
    // A missing value is JSON null to json-patch.
    let value = || op.get("value").cloned().unwrap_or(Value::Null);
    match op.get("op").and_then(Value::as_str).unwrap_or("") {
        "add" => {
            let path = field(op, "path")?;
            let (con, key) = find(doc, path).ok_or_else(|| {
                format!("add operation does not apply: doc is missing path: \"{path}\"")
            })?;
            add(con, &key, value())
        }
        "remove" => {
            let path = field(op, "path")?;
            let (con, key) = find(doc, path).ok_or_else(|| {
                format!("remove operation does not apply: doc is missing path: \"{path}\"")
            })?;
            remove(con, &key).map(drop)
        }
        "replace" => {
            let path = field(op, "path")?;
            if path.is_empty() {
                let v = value();
                if !(v.is_object() || v.is_array()) {
                    return Err("replace operation value must be object or array".into());
                }
                *doc = v;
                return Ok(());
            }
            let (con, key) = find(doc, path).ok_or_else(|| {
                format!("replace operation does not apply: doc is missing path: {path}")
            })?;
            match con {
                // get() of a missing key is not an error there: the key is added.
                Value::Object(m) => {
                    m.insert(key, value());
                    Ok(())
                }
                Value::Array(a) => {
                    let i = index(a.len(), &key, false)?;
                    a[i] = value();
                    Ok(())
                }
                _ => Err(format!(
                    "replace operation does not apply: doc is missing key: {path}"
                )),
            }
        }
        "move" => {
            let from = field(op, "from")?;
            let (con, key) = find(doc, from).ok_or_else(|| {
                format!("move operation does not apply: doc is missing from path: {from}")
            })?;
            let v = remove(con, &key)?;
            let path = field(op, "path")?;
            let (con, key) = find(doc, path).ok_or_else(|| {
                format!("move operation does not apply: doc is missing destination path: {path}")
            })?;
            add(con, &key, v)
        }
        "copy" => {
            let from = field(op, "from")?;
            let (con, key) = find(doc, from).ok_or_else(|| {
                format!("copy operation does not apply: doc is missing from path: {from}")
            })?;
            let v = get(con, &key)?.cloned().unwrap_or(Value::Null);
            let path = field(op, "path")?;
            let (con, key) = find(doc, path).ok_or_else(|| {
                format!("copy operation does not apply: doc is missing destination path: {path}")
            })?;
            add(con, &key, v)
        }
        "test" => {
            let path = field(op, "path")?;
            let want = op.get("value");
            let got: Option<&Value> = if path.is_empty() {
                Some(doc)
            } else {
                let (con, key) = find(doc, path).ok_or_else(|| {
                    format!("test operation does not apply: is missing path: {path}")
                })?;
                get(con, &key)?
            };
            let same = match (got, want) {
                (None, None) => true,
                (Some(g), Some(w)) => g == w,
                _ => false,
            };
            if same {
                Ok(())
            } else {
                Err(format!("testing value {path} failed"))
            }
        }
        other => Err(format!("Unexpected kind: {other}")),
    }
}

fn decode(key: &str) -> String {
    key.replace("~1", "/").replace("~0", "~")
}

/// json-patch's findObject: the container of the path's last segment, and that segment.
fn find<'a>(doc: &'a mut Value, path: &str) -> Option<(&'a mut Value, String)> {
    let split: Vec<&str> = path.split('/').collect();
    if split.len() < 2 {
        return None;
    }
    let mut cur = doc;
    for part in &split[1..split.len() - 1] {
        let key = decode(part);
        cur = match cur {
            Value::Object(m) => m.get_mut(&key)?,
            Value::Array(a) => {
                let i = index(a.len(), &key, false).ok()?;
                &mut a[i]
            }
            _ => return None,
        };
        if !(cur.is_object() || cur.is_array()) {
            return None;
        }
    }
    Some((cur, decode(split[split.len() - 1])))
}

/// An index of a list of `len` (negative ones count from the end; `insert` allows `len`).
fn index(len: usize, key: &str, insert: bool) -> Result<usize, String> {
    let i: i64 = key
        .parse()
        .map_err(|_| format!("value was not a proper array index: '{key}'"))?;
    let size = if insert { len as i64 + 1 } else { len as i64 };
    let i = if i < 0 { i + size } else { i };
    if i < 0 || i >= size {
        return Err(format!("Unable to access invalid index: {key}"));
    }
    Ok(i as usize)
}

fn get<'a>(con: &'a Value, key: &str) -> Result<Option<&'a Value>, String> {
    match con {
        Value::Object(m) => Ok(m.get(key)),
        Value::Array(a) => Ok(Some(&a[index(a.len(), key, false)?])),
        _ => Err("not a container".into()),
    }
}

fn add(con: &mut Value, key: &str, v: Value) -> Result<(), String> {
    match con {
        Value::Object(m) => {
            m.insert(key.to_string(), v);
            Ok(())
        }
        Value::Array(a) if key == "-" => {
            a.push(v);
            Ok(())
        }
        Value::Array(a) => {
            let i = index(a.len(), key, true)?;
            a.insert(i, v);
            Ok(())
        }
        _ => Err("not a container".into()),
    }
}

fn remove(con: &mut Value, key: &str) -> Result<Value, String> {
    match con {
        Value::Object(m) => m
            .remove(key)
            .ok_or_else(|| format!("Unable to remove nonexistent key: {key}")),
        Value::Array(a) => {
            let i = index(a.len(), key, false)?;
            Ok(a.remove(i))
        }
        _ => Err("not a container".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn all_ops() {
        let mut d = json!({"a": {"b": [1, 2]}, "c": "x"});
        let ops = json!([
            {"op": "add", "path": "/a/b/-", "value": 3},
            {"op": "add", "path": "/a/b/0", "value": 0},
            {"op": "remove", "path": "/a/b/1"},
            {"op": "replace", "path": "/c", "value": "y"},
            {"op": "copy", "from": "/c", "path": "/d"},
            {"op": "move", "from": "/d", "path": "/e~1f"},
            {"op": "test", "path": "/e~1f", "value": "y"}
        ]);
        apply(&mut d, &ops).unwrap();
        assert_eq!(d, json!({"a": {"b": [0, 2, 3]}, "c": "y", "e/f": "y"}));
        assert!(apply(&mut d, &json!([{"op": "test", "path": "/c", "value": "z"}])).is_err());
    }

    #[test]
    fn json_patch_v4_departures() {
        let mut d = json!({"a": [1, 2, 3]});
        apply(
            &mut d,
            &json!([{"op": "replace", "path": "/new", "value": 1}]),
        )
        .unwrap();
        apply(&mut d, &json!([{"op": "remove", "path": "/a/-1"}])).unwrap();
        assert_eq!(d, json!({"a": [1, 2], "new": 1}));
        assert!(apply(&mut d, &json!([{"op": "remove", "path": "/missing"}])).is_err());
        assert!(
            apply(
                &mut d,
                &json!([{"op": "replace", "path": "/a/5", "value": 0}])
            )
            .is_err()
        );
    }
}
