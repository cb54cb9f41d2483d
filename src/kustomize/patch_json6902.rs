//! RFC 6902 JSON patches (add, remove, replace, move, copy, test).

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
    let path = field(op, "path")?;
    let value = || {
        op.get("value")
            .cloned()
            .ok_or_else(|| "missing `value`".to_string())
    };
    match field(op, "op")? {
        "add" => add(doc, path, value()?),
        "remove" => remove(doc, path).map(drop),
        "replace" => {
            let target = get_mut(doc, path)?;
            *target = value()?;
            Ok(())
        }
        "move" => {
            let from = field(op, "from")?;
            let v = remove(doc, from)?;
            add(doc, path, v)
        }
        "copy" => {
            let from = field(op, "from")?;
            let v = get_mut(doc, from)?.clone();
            add(doc, path, v)
        }
        "test" => {
            if *get_mut(doc, path)? == value()? {
                Ok(())
            } else {
                Err(format!("test failed at `{path}`"))
            }
        }
        other => Err(format!("unknown op `{other}`")),
    }
}

fn tokens(path: &str) -> Result<Vec<String>, String> {
    if path.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Err(format!("path `{path}` does not start with `/`"));
    };
    Ok(rest
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn index(len: usize, tok: &str, path: &str) -> Result<usize, String> {
    tok.parse::<usize>()
        .ok()
        .filter(|i| *i < len)
        .ok_or_else(|| format!("index `{tok}` out of range in `{path}`"))
}

fn step<'a>(v: &'a mut Value, tok: &str, path: &str) -> Result<&'a mut Value, String> {
    match v {
        Value::Object(m) => m
            .get_mut(tok)
            .ok_or_else(|| format!("path `{path}` does not exist")),
        Value::Array(a) => {
            let i = index(a.len(), tok, path)?;
            Ok(&mut a[i])
        }
        _ => Err(format!("path `{path}` does not exist")),
    }
}

fn get_mut<'a>(doc: &'a mut Value, path: &str) -> Result<&'a mut Value, String> {
    let mut cur = doc;
    for t in tokens(path)? {
        cur = step(cur, &t, path)?;
    }
    Ok(cur)
}

fn parent<'a>(doc: &'a mut Value, path: &str) -> Result<(&'a mut Value, String), String> {
    let mut toks = tokens(path)?;
    let last = toks
        .pop()
        .ok_or_else(|| "cannot operate on the whole document".to_string())?;
    let mut cur = doc;
    for t in &toks {
        cur = step(cur, t, path)?;
    }
    Ok((cur, last))
}

fn add(doc: &mut Value, path: &str, v: Value) -> Result<(), String> {
    if path.is_empty() {
        *doc = v;
        return Ok(());
    }
    let (p, last) = parent(doc, path)?;
    match p {
        Value::Object(m) => {
            m.insert(last, v);
            Ok(())
        }
        Value::Array(a) => {
            if last == "-" {
                a.push(v);
            } else {
                let i = last
                    .parse::<usize>()
                    .ok()
                    .filter(|i| *i <= a.len())
                    .ok_or_else(|| format!("index `{last}` out of range in `{path}`"))?;
                a.insert(i, v);
            }
            Ok(())
        }
        _ => Err(format!("path `{path}` does not exist")),
    }
}

fn remove(doc: &mut Value, path: &str) -> Result<Value, String> {
    let (p, last) = parent(doc, path)?;
    match p {
        Value::Object(m) => m
            .remove(&last)
            .ok_or_else(|| format!("path `{path}` does not exist")),
        Value::Array(a) => {
            let i = index(a.len(), &last, path)?;
            Ok(a.remove(i))
        }
        _ => Err(format!("path `{path}` does not exist")),
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
}
