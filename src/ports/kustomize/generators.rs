//! configMapGenerator / secretGenerator and kustomize's name-hash suffix.

use camino::Utf8Path;
use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::BuildError;
use super::fsroot::{Entry, Fs};
use super::kustomization::{Generator, GeneratorOptions};
use super::resid::Res;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum GenKind {
    ConfigMap,
    Secret,
}

/// Where a generator's inputs live, for reading files and naming errors.
pub struct GenCtx<'a> {
    pub fs: &'a Fs,
    pub dir: &'a Utf8Path,
    pub file: &'a Utf8Path,
}

impl GenCtx<'_> {
    fn invalid(&self, message: String) -> BuildError {
        BuildError::Invalid {
            file: self.file.to_path_buf(),
            message,
        }
    }

    fn expect_file(&self, abs: &Utf8Path, entry: &str) -> Result<(), BuildError> {
        match self.fs.entry(abs, self.file, entry)? {
            Entry::File => Ok(()),
            Entry::Dir => Err(self.invalid(format!("`{entry}` is a directory, not a file"))),
            Entry::Missing => Err(BuildError::MissingResource {
                file: self.file.to_path_buf(),
                entry: entry.to_string(),
            }),
        }
    }
}

/// kv.removeQuotes: strips one pair of matching surrounding quotes.
fn remove_quotes(v: &str) -> &str {
    let b = v.as_bytes();
    if b.len() < 2 || b[0] != b[b.len() - 1] {
        return v;
    }
    if b[0] == b'"' || b[0] == b'\'' {
        return &v[1..v.len() - 1];
    }
    v
}

/// kv.keyValuesFromLines: KEY=VALUE lines (bufio.Scanner lines, a trailing CR dropped);
/// leading white space trimmed, blanks and `#` comments skipped, a line without `=` is a
/// key with an empty value, values kept verbatim.
fn parse_env(
    ctx: &GenCtx,
    text: &[u8],
    out: &mut Vec<(String, Vec<u8>)>,
) -> Result<(), BuildError> {
    let mut lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    for (i, line) in lines.into_iter().enumerate() {
        // bufio.Scanner stops silently at a line over 64 KiB; kustomize does not check.
        if line.len() >= 64 * 1024 {
            return Err(BuildError::Unsupported {
                file: ctx.file.to_path_buf(),
                field: format!("env file line {} longer than 64 KiB", i + 1),
            });
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Ok(mut line) = std::str::from_utf8(line) else {
            return Err(ctx.invalid(format!("env file line {} has invalid utf8 bytes", i + 1)));
        };
        if i == 0 {
            line = line.trim_start_matches('\u{feff}');
        }
        let line = line.trim_start();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (k, v) = line.split_once('=').unwrap_or((line, ""));
        out.push((k.to_string(), v.as_bytes().to_vec()));
    }
    Ok(())
}

/// generators.ParseFileSource: `path` (key = its base name) or `key=path`.
fn parse_file_source<'a>(ctx: &GenCtx, source: &'a str) -> Result<(String, &'a str), BuildError> {
    match source.matches('=').count() {
        0 => {
            let trimmed = source.trim_end_matches('/');
            let base = match trimmed.rsplit_once('/') {
                Some((_, b)) => b,
                None if trimmed.is_empty() && !source.is_empty() => "/",
                None => trimmed,
            };
            let base = if base.is_empty() { "." } else { base };
            Ok((base.to_string(), source))
        }
        1 if source.starts_with('=') => Err(ctx.invalid(format!(
            "missing key name for file path {:?} in source {source:?}",
            &source[1..]
        ))),
        1 if source.ends_with('=') => Err(ctx.invalid(format!(
            "missing file path for key name {:?} in source {source:?}",
            &source[..source.len() - 1]
        ))),
        1 => {
            let (k, p) = source.split_once('=').expect("one =");
            Ok((k.to_string(), p))
        }
        _ => Err(ctx.invalid(format!(
            "source {source:?} key name or file path contains '='"
        ))),
    }
}

/// kv.Load: env files, then literals, then files.
fn collect(ctx: &GenCtx, g: &Generator) -> Result<Vec<(String, Vec<u8>)>, BuildError> {
    let mut kv = Vec::new();
    for envs in g.envs.iter().chain(g.env.iter()) {
        let abs = ctx.fs.resolve(ctx.dir, envs, ctx.file)?;
        ctx.expect_file(&abs, envs)?;
        parse_env(ctx, &ctx.fs.read_bytes(&abs)?, &mut kv)?;
    }
    for lit in &g.literals {
        let (k, v) = lit
            .split_once('=')
            .filter(|(k, _)| !k.is_empty())
            .ok_or_else(|| {
                ctx.invalid(format!("invalid literal source {lit}, expected key=value"))
            })?;
        kv.push((k.to_string(), remove_quotes(v).as_bytes().to_vec()));
    }
    for f in &g.files {
        let (key, p) = parse_file_source(ctx, f)?;
        let abs = ctx.fs.resolve(ctx.dir, p, ctx.file)?;
        ctx.expect_file(&abs, p)?;
        kv.push((key, ctx.fs.read_bytes(&abs)?));
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
        return Err(ctx.invalid(format!(
            "a {} must have a name",
            if kind == GenKind::ConfigMap {
                "configmap"
            } else {
                "secret"
            }
        )));
    }
    let opts = merged_options(&g.options, global);
    let mut data = Map::new();
    let mut binary = Map::new();
    for (k, bytes) in collect(ctx, g)? {
        if data.contains_key(&k) || binary.contains_key(&k) {
            return Err(ctx.invalid(format!(
                "configmap {} illegally repeats the key `{k}`",
                g.name
            )));
        }
        // kyaml: ConfigMap text in data, anything else base64 in binaryData; a Secret's
        // data is always base64. Base64 is wrapped at 70 columns, each line ending in \n.
        match (kind, String::from_utf8(bytes)) {
            (GenKind::ConfigMap, Ok(s)) => data.insert(k, Value::String(s)),
            (GenKind::ConfigMap, Err(e)) => {
                binary.insert(k, Value::String(base64_wrapped(e.as_bytes())))
            }
            (GenKind::Secret, Ok(s)) => data.insert(k, Value::String(base64_wrapped(s.as_bytes()))),
            (GenKind::Secret, Err(e)) => {
                data.insert(k, Value::String(base64_wrapped(e.as_bytes())))
            }
        };
    }
    let mut meta = Map::new();
    meta.insert("name".into(), Value::String(g.name.clone()));
    if let Some(ns) = g.namespace.as_deref().filter(|n| !n.is_empty()) {
        meta.insert("namespace".into(), Value::String(ns.to_string()));
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
            "type": g.type_.clone().filter(|t| !t.is_empty()).unwrap_or_else(|| "Opaque".into())}),
    };
    let m = obj.as_object_mut().expect("literal object");
    m.insert("metadata".into(), Value::Object(meta));
    // A Secret's data mapping is created even when empty (LoadMapIntoSecretData).
    if !data.is_empty() || kind == GenKind::Secret {
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
    r.behavior = Some(g.behavior.clone().unwrap_or_default());
    Ok(r)
}

/// A string map of a ConfigMap/Secret field, as kyaml's GetDataMap reads it.
fn string_entries(obj: &Value, field: &str) -> Result<Map<String, Value>, String> {
    match obj.get(field) {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => {
            if let Some((k, _)) = m.iter().find(|(_, v)| !v.is_string()) {
                return Err(format!("{field}.{k} is not a string"));
            }
            Ok(m.clone())
        }
        Some(_) => Err(format!("{field} is not a mapping")),
    }
}

fn merge_meta(old: &Value, new: &mut Value, field: &str) -> Result<(), String> {
    let mut merged = match old.get("metadata").and_then(|m| m.get(field)) {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    if let Some(Value::Object(m)) = new.get("metadata").and_then(|m| m.get(field)) {
        merged.extend(m.clone());
    }
    let meta = super::resid::metadata_mut(new);
    if merged.is_empty() {
        meta.remove(field);
    } else {
        meta.insert(field.into(), Value::Object(merged));
    }
    Ok(())
}

/// `behavior: merge` / `replace` (resWrangler.appendReplaceOrMerge): the generated object
/// takes the old one's place, with the old labels and annotations under its own, the old
/// name, namespace and build history, and for merge the old data under its own.
pub fn merge_into(existing: &mut Res, mut new: Res, replace: bool) -> Result<(), String> {
    let old = &existing.obj;
    merge_meta(old, &mut new.obj, "labels")?;
    merge_meta(old, &mut new.obj, "annotations")?;
    if !replace {
        for field in ["data", "binaryData"] {
            let mut merged = string_entries(old, field)?;
            merged.extend(string_entries(&new.obj, field)?);
            let m = new
                .obj
                .as_object_mut()
                .expect("generated objects are mappings");
            m.remove(field);
            if !merged.is_empty() {
                m.insert(field.into(), Value::Object(merged));
            }
        }
    }
    let (name, ns) = (
        existing.name().to_string(),
        existing.namespace().to_string(),
    );
    let meta = super::resid::metadata_mut(&mut new.obj);
    meta.insert("name".into(), Value::String(name));
    if ns.is_empty() {
        meta.remove("namespace");
    } else {
        meta.insert("namespace".into(), Value::String(ns));
    }
    existing.obj = new.obj;
    existing.needs_hash = new.needs_hash;
    existing.origin = new.origin;
    existing.behavior = None;
    Ok(())
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

/// kyaml's encodeBase64: standard base64, cut into 70-column lines each ending in a newline
/// once it is 70 characters or longer.
pub fn base64_wrapped(bytes: &[u8]) -> String {
    const LINE: usize = 70;
    let enc = base64(bytes);
    if enc.len() < LINE {
        return enc;
    }
    let mut out = String::with_capacity(enc.len() + enc.len() / LINE + 1);
    for chunk in enc.as_bytes().chunks(LINE) {
        out.push_str(std::str::from_utf8(chunk).expect("base64 is ASCII"));
        out.push('\n');
    }
    out
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
