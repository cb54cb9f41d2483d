//! `replacements` (and replacement files), as kustomize's ReplacementTransformer and
//! api/filters/replacement do them: a value read from one object (kyaml PathGetter) is
//! copied into fields of others (kyaml PathMatcher), keeping each target scalar's type.

use camino::{Utf8Path, Utf8PathBuf};

use serde_json::Value;

use super::BuildError;
use super::Caches;
use super::fsroot::Fs;
use super::kustomization::{Options, Replacement, ReplacementField, Selector};
use super::resid::{Res, effective_namespace, split_api_version};
use crate::ports::yaml::resolve::{self, Resolved};

fn err(file: &Utf8Path, message: String) -> BuildError {
    BuildError::Invalid {
        file: file.to_path_buf(),
        message,
    }
}

fn unsupported(file: &Utf8Path, field: String) -> BuildError {
    BuildError::Unsupported {
        file: file.to_path_buf(),
        field,
    }
}

/// The replacements of a kustomization: inline ones, and files named by `path`.
fn load(
    b: &Fs,
    dir: &Utf8Path,
    file: &Utf8Path,
    fields: &[ReplacementField],
) -> Result<Vec<(Replacement, Utf8PathBuf)>, BuildError> {
    let mut out = Vec::new();
    for f in fields {
        match &f.path {
            Some(p) if !p.is_empty() => {
                if f.inline.source.is_some()
                    || f.inline.targets.as_ref().is_some_and(|t| !t.is_empty())
                {
                    return Err(err(
                        file,
                        "cannot specify both path and inline replacement".into(),
                    ));
                }
                let abs = b.resolve(dir, p, file)?;
                let rel = b.rel(&abs);
                let text = b.read_listed(&abs, file, p)?;
                let v = super::load::parse_kustomization(b.caches(), &rel, &text)?;
                let decode = |v: Value| {
                    serde_json::from_value::<Replacement>(v)
                        .map_err(|e| err(&rel, format!("invalid replacement: {e}")))
                };
                match v {
                    Value::Array(items) => {
                        for item in items {
                            out.push((decode(item)?, rel.clone()));
                        }
                    }
                    Value::Object(_) => out.push((decode(v)?, rel.clone())),
                    _ => {
                        return Err(err(
                            &rel,
                            "unsupported replacement type encountered within replacement path"
                                .into(),
                        ));
                    }
                }
            }
            _ => out.push((f.inline.clone(), file.to_path_buf())),
        }
    }
    Ok(out)
}

/// kyaml's SmarterPathSplitter: `.`-separated, `\.` escaped, `[a.b]` kept whole (brackets
/// dropped unless it is an `[x=y]` element selector).
pub fn split_field_path(path: &str) -> Vec<String> {
    let split = super::fieldspec::split_path_on(path, '.');
    let mut result = Vec::new();
    let mut i = 0;
    while i < split.len() {
        let elem = &split[i];
        if elem.starts_with('[') && !elem.ends_with(']') {
            let mut parts = vec![elem.clone()];
            while i < split.len() - 1 {
                i += 1;
                parts.push(split[i].clone());
                if split[i].ends_with(']') {
                    break;
                }
            }
            let joined = parts.join(".");
            if joined.contains('=') {
                result.push(joined);
            } else {
                result.push(joined.trim_matches(|c| c == '[' || c == ']').to_string());
            }
        } else {
            result.push(elem.clone());
        }
        i += 1;
    }
    result
}

/// ResId.IsSelectedBy with the replacement selector's exact (not regular-expression) fields,
/// against the current id and every previous one.
fn selected_by(
    r: &Res,
    group: &str,
    version: &str,
    kind: &str,
    name: &str,
    namespace: &str,
) -> bool {
    let (g, v) = split_api_version(r.api_version());
    let av = r.api_version();
    let cur = r.cur_id();
    std::iter::once(&cur).chain(&r.history).any(|id| {
        (name.is_empty() || name == id.name)
            && (namespace.is_empty()
                || effective_namespace(av, &id.kind, namespace)
                    == effective_namespace(av, &id.kind, &id.namespace))
            && (group.is_empty() || group == g)
            && (version.is_empty() || version == v)
            && (kind.is_empty() || kind == id.kind)
    })
}

fn sel_fields(s: &Selector) -> [&str; 5] {
    [
        s.group.as_deref().unwrap_or(""),
        s.version.as_deref().unwrap_or(""),
        s.kind.as_deref().unwrap_or(""),
        s.name.as_deref().unwrap_or(""),
        s.namespace.as_deref().unwrap_or(""),
    ]
}

fn is_missing(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        _ => false,
    }
}

/// kyaml's PathGetter (no creation): the node at `path`, if any.
fn get<'v>(v: &'v Value, path: &[String]) -> Result<Option<&'v Value>, String> {
    let Some((part, rest)) = path.split_first() else {
        return Ok(Some(v));
    };
    let next = if let Ok(idx) = part.parse::<i64>() {
        let Value::Array(items) = v else {
            return Err(format!("`{part}` indexes something that is not a list"));
        };
        if idx < 0 {
            return Err(format!("array index {idx} cannot be negative"));
        }
        items.get(idx as usize)
    } else if part == "-" {
        let Value::Array(items) = v else {
            return Err("`-` indexes something that is not a list".into());
        };
        Some(items.last().ok_or("`-` on an empty list")?)
    } else if part == "*" {
        return Err("wildcard is not supported in PathGetter".into());
    } else if part.starts_with('[') && part.ends_with(']') {
        let (k, want) = part[1..part.len() - 1]
            .split_once('=')
            .ok_or("list path element must contain fieldName=fieldValue for element to match")?;
        let Value::Array(items) = v else {
            return Err(format!("`{part}` selects in something that is not a list"));
        };
        if k.is_empty() {
            items
                .iter()
                .find(|e| scalar_text(e).as_deref() == Some(want))
        } else {
            items
                .iter()
                .filter(|e| e.is_object())
                .find(|e| e.get(k).and_then(scalar_text).as_deref() == Some(want))
        }
    } else {
        match v {
            Value::Null => None,
            Value::Object(m) => m.get(part.as_str()),
            _ => {
                return Err(format!(
                    "`{part}` looked up in something that is not a mapping"
                ));
            }
        }
    };
    match next {
        None | Some(Value::Null) if !rest.is_empty() => Ok(None),
        None => Ok(None),
        Some(n) => get(n, rest),
    }
}

/// A scalar's text as kyaml compares it (strings only are unambiguous).
fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// What kind of node `create` makes at the end of a target path.
#[derive(Clone, Copy, PartialEq)]
enum Make {
    Nothing,
    Scalar,
    Map,
    Seq,
}

fn kind_of(v: &Value) -> Make {
    match v {
        Value::Object(_) => Make::Map,
        Value::Array(_) => Make::Seq,
        _ => Make::Scalar,
    }
}

fn new_node(next: Option<&String>, create: Make) -> Value {
    match next {
        Some(p) if p.starts_with('[') && p.ends_with(']') => Value::Array(Vec::new()),
        Some(p) if p.parse::<i64>().is_ok_and(|i| i >= 0) => Value::Array(Vec::new()),
        None => match create {
            Make::Map => Value::Object(Default::default()),
            Make::Seq => Value::Array(Vec::new()),
            _ => Value::Null,
        },
        Some(_) => Value::Object(Default::default()),
    }
}

/// Where a matched target lives and whether it was just created.
struct Hit<'v> {
    node: &'v mut Value,
    created: bool,
}

/// kyaml's PathMatcher: every node at `path`, creating missing ones when asked.
fn matches<'v>(
    caches: &Caches,
    v: &'v mut Value,
    path: &[String],
    create: Make,
    created: bool,
    out: &mut Vec<Hit<'v>>,
) -> Result<(), String> {
    let Some((part, rest)) = path.split_first() else {
        out.push(Hit { node: v, created });
        return Ok(());
    };
    let can_create = create != Make::Nothing;
    if let Ok(idx) = part.parse::<usize>() {
        let Value::Array(items) = v else {
            return Err(format!("`{part}` indexes something that is not a list"));
        };
        if items.len() == idx && can_create {
            items.push(new_node(rest.first(), create));
            let n = items.last_mut().expect("just pushed");
            return matches(caches, n, rest, create, true, out);
        }
        let len = items.len();
        let n = items
            .get_mut(idx)
            .ok_or_else(|| format!("index {idx} specified but only {len} elements found"))?;
        return matches(caches, n, rest, create, created, out);
    }
    if part.starts_with('[') && part.ends_with(']') {
        let (k, pattern) = part[1..part.len() - 1]
            .split_once('=')
            .ok_or("list path element must contain fieldName=fieldValue for element to match")?;
        // kyaml matches the element's value with an unanchored Go regular expression.
        let re = super::select::go_regex(caches, pattern).map_err(|e| format!("`{part}`: {e}"))?;
        let Value::Array(items) = v else {
            return Err(format!("`{part}` selects in something that is not a list"));
        };
        let text = |e: &Value| -> Option<String> {
            let field = if k.is_empty() { Some(e) } else { e.get(k) };
            field.and_then(scalar_text)
        };
        let hits: Vec<usize> = (0..items.len())
            .filter(|&i| text(&items[i]).is_some_and(|t| re.is_match(&t)))
            .collect();
        if hits.is_empty() && can_create {
            let elem = if k.is_empty() {
                Value::String(pattern.to_string())
            } else {
                serde_json::json!({ k: pattern })
            };
            items.push(elem);
            let n = items.last_mut().expect("just pushed");
            return matches(caches, n, rest, create, true, out);
        }
        let mut rest_items: Vec<&'v mut Value> = items.iter_mut().collect();
        for i in hits.into_iter().rev() {
            let n = rest_items.swap_remove(i);
            matches(caches, n, rest, create, created, out)?;
        }
        return Ok(());
    }
    if part == "*" {
        let Value::Array(items) = v else {
            return Err("`*` in something that is not a list".into());
        };
        for n in items.iter_mut() {
            matches(caches, n, rest, create, created, out)?;
        }
        return Ok(());
    }
    let Value::Object(m) = v else {
        if v.is_null() {
            return Ok(());
        }
        return Err(format!(
            "`{part}` looked up in something that is not a mapping"
        ));
    };
    let mut made = created;
    if !m.contains_key(part.as_str()) {
        if !can_create {
            return Ok(());
        }
        m.insert(part.clone(), new_node(rest.first(), create));
        made = true;
    }
    let n = m.get_mut(part.as_str()).expect("present or just inserted");
    if n.is_null() && !rest.is_empty() {
        return Ok(());
    }
    matches(caches, n, rest, create, made, out)
}

/// The text kyaml copies from a source scalar. Only a string's is known exactly; other
/// scalars print canonically here, which is right where the target keeps its own type.
fn source_text(v: &Value) -> (String, bool) {
    match v {
        Value::String(s) => (s.clone(), true),
        Value::Null => ("null".into(), false),
        other => (other.to_string(), false),
    }
}

fn looks_like_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 11 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' && b[10] == b'T'
}

/// setFieldValue: a scalar target keeps its tag and takes the source's text; anything else
/// is replaced by the source node.
fn set_target(hit: Hit, value: &Value, options: &Option<Options>) -> Result<(), String> {
    let delimiter = options.as_ref().map(|o| o.delimiter.as_str()).unwrap_or("");
    let mut value = value.clone();
    if !delimiter.is_empty() {
        let Value::String(t) = &*hit.node else {
            return Err(
                "delimiter option can only be used with scalar nodes (string targets here)".into(),
            );
        };
        let (v, exact) = source_text(&value);
        if !exact && !value.is_number() {
            return Err("a delimited replacement of a value that is not a string".into());
        }
        let mut parts: Vec<String> = t.split(delimiter).map(String::from).collect();
        let index = options.as_ref().map_or(0, |o| o.index);
        if index < 0 {
            parts.insert(0, v);
        } else if index as usize >= parts.len() {
            parts.push(v);
        } else {
            parts[index as usize] = v;
        }
        value = Value::String(parts.join(delimiter));
    }
    let target = hit.node;
    if target.is_object() || target.is_array() {
        *target = value;
        return Ok(());
    }
    if value.is_object() || value.is_array() {
        // A scalar target takes only the value text of the node; a collection has none.
        *target = Value::String(String::new());
        return Err("a mapping or list copied into a scalar field".into());
    }
    let (text, exact) = source_text(&value);
    let tag = if hit.created {
        ""
    } else {
        match &*target {
            Value::String(s) if looks_like_timestamp(s) => {
                return Err("a target that may be a YAML timestamp".into());
            }
            Value::String(_) => "!!str",
            Value::Bool(_) => "!!bool",
            Value::Number(n) if n.is_f64() => "!!float",
            Value::Number(_) => "!!int",
            _ => "!!null",
        }
    };
    if !exact && (tag == "!!str" || (tag.is_empty() && value.is_f64())) {
        return Err(
            "a number, boolean or null copied into a string field (its YAML text is not kept)"
                .into(),
        );
    }
    let r = resolve::resolve(tag, &text, false).map_err(|e| match e {
        resolve::Unresolved::Fails(m) | resolve::Unresolved::Unsupported(m) => m,
    })?;
    *target = match r {
        Resolved::Null => Value::Null,
        Resolved::Bool(b) => Value::Bool(b),
        Resolved::Int(i) => Value::from(i),
        Resolved::Uint(u) => Value::from(u),
        Resolved::Str(s) => Value::String(s),
        Resolved::Float(f) => crate::ports::yaml::float_json(f).ok_or("json: unsupported value")?,
    };
    Ok(())
}

pub fn run(
    b: &Fs,
    dir: &Utf8Path,
    file: &Utf8Path,
    fields: &[ReplacementField],
    acc: &mut [Res],
) -> Result<(), BuildError> {
    if fields.is_empty() {
        return Ok(());
    }
    for (rep, src_file) in load(b, dir, file, fields)? {
        let (Some(source), Some(targets)) = (&rep.source, &rep.targets) else {
            return Err(err(
                &src_file,
                "replacements must specify a source and at least one target".into(),
            ));
        };
        if let Some(o) = &source.options
            && !o.encoding.is_empty()
        {
            return Err(unsupported(
                &src_file,
                "replacements[].source.options.encoding".into(),
            ));
        }
        // The source: exactly one object.
        let picked: Vec<usize> = (0..acc.len())
            .filter(|&i| {
                selected_by(
                    &acc[i],
                    &source.group,
                    &source.version,
                    &source.kind,
                    &source.name,
                    &source.namespace,
                )
            })
            .collect();
        let describe = || {
            format!(
                "{}.{}.{}/{}.{}",
                source.kind, source.version, source.group, source.name, source.namespace
            )
        };
        let i = match picked.as_slice() {
            [i] => *i,
            [] => {
                return Err(err(
                    &src_file,
                    format!("replacement source: nothing selected by {}", describe()),
                ));
            }
            _ => {
                return Err(err(
                    &src_file,
                    format!(
                        "replacement source: multiple matches for selector {}",
                        describe()
                    ),
                ));
            }
        };
        let fp = if source.field_path.is_empty() {
            "metadata.name"
        } else {
            &source.field_path
        };
        let path = split_field_path(fp);
        let found = get(&acc[i].obj, &path).map_err(|m| {
            err(
                &src_file,
                format!("error looking up replacement source: {m}"),
            )
        })?;
        if is_missing(found) {
            return Err(err(
                &src_file,
                format!(
                    "fieldPath `{fp}` is missing for replacement source {}",
                    describe()
                ),
            ));
        }
        let mut value = found.cloned().unwrap_or(Value::Null);
        if let Some(o) = source.options.as_ref().filter(|o| !o.delimiter.is_empty()) {
            let Value::String(s) = &value else {
                return Err(unsupported(
                    &src_file,
                    "replacement source delimiter on a value that is not a string".into(),
                ));
            };
            let parts: Vec<&str> = s.split(o.delimiter.as_str()).collect();
            if o.index < 0 || o.index as usize >= parts.len() {
                return Err(err(
                    &src_file,
                    format!("options.index {} is out of bounds for value {s}", o.index),
                ));
            }
            value = Value::String(parts[o.index as usize].to_string());
        }
        for t in targets {
            let Some(select) = &t.select else {
                return Err(err(
                    &src_file,
                    "target must specify resources to select".into(),
                ));
            };
            if let Some(o) = &t.options
                && !o.encoding.is_empty()
            {
                return Err(unsupported(
                    &src_file,
                    "replacements[].targets[].options.encoding".into(),
                ));
            }
            let paths: Vec<String> = if t.field_paths.is_empty() {
                vec!["metadata.name".into()]
            } else {
                t.field_paths.clone()
            };
            let create = if t.options.as_ref().is_some_and(|o| o.create) {
                kind_of(&value)
            } else {
                Make::Nothing
            };
            let sel = sel_fields(select);
            for r in acc.iter_mut() {
                if !label_selected(b.caches(), r, select, &src_file)? {
                    continue;
                }
                let mut rejected = false;
                for rej in &t.reject {
                    if (rej.annotation_selector.is_some() || rej.label_selector.is_some())
                        && label_selected(b.caches(), r, rej, &src_file)?
                    {
                        rejected = true;
                    }
                    let f = sel_fields(rej);
                    if f.iter().any(|x| !x.is_empty())
                        && selected_by(r, f[0], f[1], f[2], f[3], f[4])
                    {
                        rejected = true;
                    }
                }
                if rejected || !selected_by(r, sel[0], sel[1], sel[2], sel[3], sel[4]) {
                    continue;
                }
                for fp in &paths {
                    let path = split_field_path(fp);
                    let mut hits = Vec::new();
                    let what = if create == Make::Nothing {
                        "find"
                    } else {
                        "find or create"
                    };
                    let res = matches(b.caches(), &mut r.obj, &path, create, false, &mut hits);
                    let where_ = format!("unable to {what} field \"{fp}\" in replacement target");
                    res.map_err(|m| err(&src_file, format!("{where_}: {m}")))?;
                    if hits.is_empty() {
                        return Err(err(&src_file, where_));
                    }
                    for hit in hits {
                        set_target(hit, &value, &t.options).map_err(|m| {
                            unsupported(&src_file, format!("replacement into `{fp}`: {m}"))
                        })?;
                    }
                }
                r.patched_by.push(src_file.clone());
            }
        }
    }
    Ok(())
}

fn label_selected(
    caches: &Caches,
    r: &Res,
    s: &Selector,
    file: &Utf8Path,
) -> Result<bool, BuildError> {
    let only = Selector {
        label_selector: s.label_selector.clone(),
        annotation_selector: s.annotation_selector.clone(),
        ..Default::default()
    };
    let c = super::select::Compiled::new(&only, caches)
        .map_err(|what| unsupported(file, format!("replacement selector {what}")))?;
    if let Some(what) = c.unsure_about(r) {
        return Err(unsupported(
            file,
            format!("replacement selector on a {what}"),
        ));
    }
    Ok(c.matches(r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_field_paths_like_kyaml() {
        assert_eq!(
            split_field_path("spec.template.spec.containers.[name=app].image"),
            vec![
                "spec",
                "template",
                "spec",
                "containers",
                "[name=app]",
                "image"
            ]
        );
        assert_eq!(
            split_field_path("metadata.annotations.[a.b/c]"),
            vec!["metadata", "annotations", "a.b/c"]
        );
        assert_eq!(split_field_path("data.a\\.b"), vec!["data", "a.b"]);
    }
}
