//! configMapGenerator / secretGenerator and kustomize's name-hash suffix.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::BuildError;
use super::kustomization::{Generator, GeneratorOptions};
use super::load;
use super::resid::Res;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum GenKind {
    ConfigMap,
    Secret,
}

/// Where a generator's inputs live, for reading files and naming errors.
pub struct GenCtx<'a> {
    pub root: &'a Path,
    pub dir: &'a Path,
    pub file: &'a Path,
}

impl GenCtx<'_> {
    fn invalid(&self, message: String) -> BuildError {
        BuildError::Invalid {
            file: self.file.to_path_buf(),
            message,
        }
    }
}

fn strip_quotes(v: &str) -> &str {
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return &v[1..v.len() - 1];
        }
    }
    v
}

/// KEY=VALUE lines; kustomize trims leading space, skips blanks and `#` comments,
/// and keeps values verbatim (quotes included).
fn parse_env(ctx: &GenCtx, text: &str, out: &mut Vec<(String, Vec<u8>)>) -> Result<(), BuildError> {
    for (i, line) in text.trim_start_matches('\u{feff}').lines().enumerate() {
        let line = line.trim_start();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match line.split_once('=') {
            Some((k, v)) => out.push((k.to_string(), v.as_bytes().to_vec())),
            // kustomize would read the variable from its own environment, which
            // makes the output machine-dependent; refuse instead.
            None => {
                return Err(BuildError::Unsupported {
                    file: ctx.file.to_path_buf(),
                    field: format!(
                        "env file line {} without `=` (value from environment)",
                        i + 1
                    ),
                });
            }
        }
    }
    Ok(())
}

fn collect(ctx: &GenCtx, g: &Generator) -> Result<Vec<(String, Vec<u8>)>, BuildError> {
    let mut kv = Vec::new();
    for envs in g.envs.iter().chain(g.env.iter()) {
        let abs = load::normalize(&ctx.dir.join(envs));
        parse_env(ctx, &load::read_to_string(ctx.root, &abs)?, &mut kv)?;
    }
    for lit in &g.literals {
        let (k, v) = lit
            .split_once('=')
            .ok_or_else(|| ctx.invalid(format!("literal `{lit}` is not of the form key=value")))?;
        kv.push((k.to_string(), strip_quotes(v).as_bytes().to_vec()));
    }
    for f in &g.files {
        let (key, p) = match f.split_once('=') {
            Some((k, p)) => (k.to_string(), p),
            None => {
                let base = Path::new(f)
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or(f);
                (base.to_string(), f.as_str())
            }
        };
        let abs = load::normalize(&ctx.dir.join(p));
        kv.push((key, load::read_bytes(ctx.root, &abs)?));
    }
    Ok(kv)
}

fn merged_options(
    local: &Option<GeneratorOptions>,
    global: &Option<GeneratorOptions>,
) -> GeneratorOptions {
    let mut o = local.clone().unwrap_or_default();
    if let Some(g) = global {
        for (k, v) in &g.labels {
            o.labels.entry(k.clone()).or_insert_with(|| v.clone());
        }
        for (k, v) in &g.annotations {
            o.annotations.entry(k.clone()).or_insert_with(|| v.clone());
        }
        if g.disable_name_suffix_hash == Some(true) {
            o.disable_name_suffix_hash = Some(true);
        }
        if g.immutable == Some(true) {
            o.immutable = Some(true);
        }
    }
    o
}

fn string_map(m: &BTreeMap<String, String>) -> Value {
    Value::Object(
        m.iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

/// Builds the generated object (without hash) for one generator entry.
pub fn generate(
    ctx: &GenCtx,
    kind: GenKind,
    g: &Generator,
    global: &Option<GeneratorOptions>,
) -> Result<Res, BuildError> {
    if g.name.is_empty() {
        return Err(ctx.invalid("generator without a name".into()));
    }
    let opts = merged_options(&g.options, global);
    let mut data = Map::new();
    let mut binary = Map::new();
    for (k, bytes) in collect(ctx, g)? {
        if data.contains_key(&k) || binary.contains_key(&k) {
            return Err(ctx.invalid(format!("generator `{}` has duplicate key `{k}`", g.name)));
        }
        match (kind, String::from_utf8(bytes)) {
            (GenKind::ConfigMap, Ok(s)) => data.insert(k, Value::String(s)),
            (GenKind::ConfigMap, Err(e)) => binary.insert(k, Value::String(base64(e.as_bytes()))),
            (GenKind::Secret, Ok(s)) => data.insert(k, Value::String(base64(s.as_bytes()))),
            (GenKind::Secret, Err(e)) => data.insert(k, Value::String(base64(e.as_bytes()))),
        };
    }
    let mut meta = Map::new();
    meta.insert("name".into(), Value::String(g.name.clone()));
    if let Some(ns) = &g.namespace {
        meta.insert("namespace".into(), Value::String(ns.clone()));
    }
    if !opts.labels.is_empty() {
        meta.insert("labels".into(), string_map(&opts.labels));
    }
    if !opts.annotations.is_empty() {
        meta.insert("annotations".into(), string_map(&opts.annotations));
    }
    let mut obj = match kind {
        GenKind::ConfigMap => json!({"apiVersion": "v1", "kind": "ConfigMap"}),
        GenKind::Secret => json!({"apiVersion": "v1", "kind": "Secret",
            "type": g.type_.clone().unwrap_or_else(|| "Opaque".into())}),
    };
    let m = obj.as_object_mut().expect("literal object");
    m.insert("metadata".into(), Value::Object(meta));
    if !data.is_empty() {
        m.insert("data".into(), Value::Object(data));
    }
    if !binary.is_empty() {
        m.insert("binaryData".into(), Value::Object(binary));
    }
    if opts.immutable == Some(true) {
        m.insert("immutable".into(), Value::Bool(true));
    }
    let mut r = Res::new(obj, ctx.file.to_path_buf());
    r.needs_hash = opts.disable_name_suffix_hash != Some(true);
    Ok(r)
}

/// `behavior: merge` / `replace`: folds a generated object into an existing one.
pub fn merge_into(existing: &mut Res, new: Res, replace: bool) {
    let (eo, no) = (&mut existing.obj, new.obj);
    for field in ["data", "binaryData"] {
        let incoming = no.get(field).cloned();
        let Some(em) = eo.as_object_mut() else { return };
        if replace {
            em.remove(field);
        }
        if let Some(Value::Object(nm)) = incoming {
            let target = em.entry(field).or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(tm) = target {
                tm.extend(nm);
            }
        }
    }
    for field in ["labels", "annotations"] {
        if let Some(Value::Object(nm)) = no.get("metadata").and_then(|m| m.get(field)) {
            let meta = super::resid::metadata_mut(eo);
            let target = meta
                .entry(field)
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(tm) = target {
                tm.extend(nm.clone());
            }
        }
    }
    existing.needs_hash = new.needs_hash;
    existing.origin = new.origin;
}

/// Mirrors Go's json.Marshal escaping so the hash input is byte-identical.
fn go_json(v: &Value) -> String {
    let s = serde_json::to_string(v).unwrap_or_default();
    s.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// kustomize's content hash of a ConfigMap or Secret (see api/hasher).
pub fn hash(obj: &Value) -> String {
    let get = |k: &str| {
        obj.get(k)
            .filter(|v| !v.is_null())
            .cloned()
            .unwrap_or(json!(""))
    };
    let mut m = Map::new();
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    m.insert("kind".into(), json!(kind));
    // kustomize looks the name up with a single "metadata/name" key, which never
    // matches, so the name is always hashed as "".
    m.insert("name".into(), json!(""));
    m.insert("data".into(), get("data"));
    let (extra, with_type) = if kind == "Secret" {
        ("stringData", true)
    } else {
        ("binaryData", false)
    };
    if with_type {
        m.insert("type".into(), get("type"));
    }
    if let Some(v @ Value::Object(_)) = obj.get(extra) {
        m.insert(extra.into(), v.clone());
    }
    let digest = Sha256::digest(go_json(&Value::Object(m)).as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    hex[..10]
        .chars()
        .map(|c| match c {
            '0' => 'g',
            '1' => 'h',
            '3' => 'k',
            'a' => 'm',
            'e' => 't',
            c => c,
        })
        .collect()
}

pub fn base64(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(T[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_matches_kustomize() {
        // Observed with kustomize v5.5.0: prefix p-, suffix -s, literal a=b.
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "p-cm-s", "namespace": "prod", "labels": {"app": "x"}}, "data": {"a": "b"}});
        assert_eq!(hash(&cm), "4h2mbtbbt6");
    }

    #[test]
    fn base64_pads() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foob"), "Zm9vYg==");
    }
}
