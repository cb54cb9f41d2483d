//! kustomize's name-reference fix-up (api/internal/accumulator/namereferencetransformer.go
//! and api/filters/nameref): after prefixes, suffixes, namespaces and generator hashes
//! changed names, every field that refers to an object by name follows it. The fields are
//! kustomize's built-in `nameReference` configuration plus the kustomizations'
//! `configurations`; the choice of the referred object is kustomize's, step by step.

use camino::Utf8Path;

use serde_json::{Map, Value};

use super::BuildError;
use super::fieldspec::{CreateKind, FieldSpec, NameBackRef};
use super::resid::{NOT_NAMESPACED, PrevId, Res};

/// What the fix-up needs to know about each object (names do not change during it).
struct Cand {
    group: String,
    version: String,
    kind: String,
    name: String,
    /// metadata.namespace as written ("" when absent).
    namespace: String,
    effective_ns: String,
    org_effective_ns: String,
    prev: Vec<PrevId>,
    prefixes: Vec<String>,
    suffixes: Vec<String>,
    cluster: bool,
}

fn gvk_selects(group: &str, version: &str, kind: &str, g: &str, v: &str, k: &str) -> bool {
    (g.is_empty() || g == group) && (v.is_empty() || v == version) && (k.is_empty() || k == kind)
}

impl Cand {
    fn of(r: &Res) -> Cand {
        Cand {
            group: r.group().to_string(),
            version: r.version().to_string(),
            kind: r.kind().to_string(),
            name: r.name().to_string(),
            namespace: r.namespace().to_string(),
            effective_ns: r.effective_namespace().to_string(),
            org_effective_ns: org_effective_ns(r),
            prev: r.history.clone(),
            prefixes: r.prefixes.clone(),
            suffixes: r.suffixes.clone(),
            cluster: r.is_cluster_scoped(),
        }
    }

    fn prev_selected_by(&self, g: &str, v: &str, k: &str) -> bool {
        self.prev
            .iter()
            .any(|id| gvk_selects(&self.group, &self.version, &id.kind, g, v, k))
    }
}

/// The effective namespace of the original id (kustomize recomputes it from the stored one).
fn org_effective_ns(r: &Res) -> String {
    match r.history.first() {
        None => r.effective_namespace().to_string(),
        Some(id) => {
            if super::resid::is_cluster_scoped(r.api_version(), &id.kind) {
                NOT_NAMESPACED.to_string()
            } else if id.namespace.is_empty() {
                "default".to_string()
            } else {
                id.namespace.clone()
            }
        }
    }
}

/// utils.SameEndingSubSlice.
fn same_ending(a: &[String], b: &[String]) -> bool {
    let (short, long) = if a.len() > b.len() { (b, a) } else { (a, b) };
    let diff = long.len() - short.len();
    if short.is_empty() {
        return diff == 0;
    }
    (0..short.len()).all(|i| long[i + diff] == short[i])
}

fn prefix_suffix_equals(c: &Cand, o: &Cand, allow_empty: bool) -> bool {
    if allow_empty {
        (c.prefixes.is_empty() || o.prefixes.is_empty() || same_ending(&c.prefixes, &o.prefixes))
            && (c.suffixes.is_empty()
                || o.suffixes.is_empty()
                || same_ending(&c.suffixes, &o.suffixes))
    } else {
        same_ending(&c.prefixes, &o.prefixes) && same_ending(&c.suffixes, &o.suffixes)
    }
}

struct Ctx<'a> {
    cands: &'a [Cand],
    referrer: &'a Cand,
    /// The referrer's roleRef group and kind, for `roleRef/name` fields.
    role_ref: Option<(String, String)>,
    target: &'a NameBackRef,
    path_is_role_ref: bool,
}

impl Ctx<'_> {
    /// kustomize's selectReferral.
    fn select(
        &self,
        old: &str,
        pool: &[usize],
        same: fn(&[&Cand]) -> bool,
    ) -> Result<Option<usize>, String> {
        let t = self.target;
        let mut c: Vec<usize> = pool
            .iter()
            .copied()
            .filter(|&i| self.cands[i].prev.iter().any(|id| id.name == old))
            .filter(|&i| self.cands[i].prev_selected_by(&t.group, &t.version, &t.kind))
            .collect();
        if self.path_is_role_ref
            && let Some((g, k)) = &self.role_ref
        {
            c.retain(|&i| self.cands[i].prev_selected_by(g, "", k));
        }
        if !self.referrer.cluster {
            c.retain(|&i| {
                let x = &self.cands[i];
                x.cluster
                    || x.kind == "ServiceAccount"
                    || x.effective_ns == self.referrer.effective_ns
            });
        }
        if c.len() == 1 {
            return Ok(Some(c[0]));
        }
        c.retain(|&i| prefix_suffix_equals(&self.cands[i], self.referrer, true));
        if c.len() > 1 {
            c.retain(|&i| prefix_suffix_equals(&self.cands[i], self.referrer, false));
        }
        match c.len() {
            0 => Ok(None),
            1 => Ok(Some(c[0])),
            _ => {
                let all: Vec<&Cand> = c.iter().map(|&i| &self.cands[i]).collect();
                if same(&all) {
                    Ok(Some(c[0]))
                } else {
                    Err(format!(
                        "found multiple possible referrals for `{old}`: {}",
                        all.iter()
                            .map(|x| format!("{} {}/{}", x.kind, x.namespace, x.name))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                }
            }
        }
    }

    fn set_scalar(&self, v: &mut Value, pool: &[usize]) -> Result<(), String> {
        let old = match v {
            Value::String(s) => s.clone(),
            Value::Null => return Ok(()),
            other => {
                let text = other.to_string();
                if self
                    .cands
                    .iter()
                    .any(|c| c.prev.iter().any(|id| id.name == text))
                {
                    return Err(format!("a name reference `{text}` that is not a string"));
                }
                return Ok(());
            }
        };
        let same_names: fn(&[&Cand]) -> bool = |all| all.iter().all(|x| x.name == all[0].name);
        if let Some(i) = self.select(&old, pool, same_names)? {
            let name = &self.cands[i].name;
            if *name != old {
                *v = Value::String(name.clone());
            }
        }
        Ok(())
    }

    fn set_mapping(&self, m: &mut Map<String, Value>, pool: &[usize]) -> Result<(), String> {
        let Some(name) = m.get("name") else {
            return Err("path config error; no 'name' field in node".into());
        };
        let old = match name {
            Value::String(s) => s.clone(),
            _ => return Err("a `name` that is not a string".into()),
        };
        let pool: Vec<usize> = match m.get("namespace") {
            None => pool.to_vec(),
            Some(ns) => {
                let ns = match ns {
                    Value::String(s) => s.as_str(),
                    Value::Null => "",
                    _ => return Err("a `namespace` that is not a string".into()),
                };
                let by_org: Vec<usize> = pool
                    .iter()
                    .copied()
                    .filter(|&i| {
                        let c = &self.cands[i];
                        c.org_effective_ns != NOT_NAMESPACED && c.org_effective_ns == ns
                    })
                    .collect();
                if !by_org.is_empty() {
                    by_org
                } else {
                    pool.iter()
                        .copied()
                        .filter(|&i| {
                            let c = &self.cands[i];
                            c.effective_ns != NOT_NAMESPACED && c.effective_ns == ns
                        })
                        .collect()
                }
            }
        };
        let same: fn(&[&Cand]) -> bool = |all| {
            all.iter()
                .all(|x| x.name == all[0].name && x.namespace == all[0].namespace)
        };
        let Some(i) = self.select(&old, &pool, same)? else {
            return Ok(());
        };
        let c = &self.cands[i];
        if c.name == old && c.namespace.is_empty() {
            return Ok(());
        }
        m.insert("name".into(), Value::String(c.name.clone()));
        if !c.namespace.is_empty() {
            m.insert("namespace".into(), Value::String(c.namespace.clone()));
        }
        Ok(())
    }

    fn set(&self, v: &mut Value, pool: &[usize]) -> Result<(), String> {
        match v {
            Value::Null => Ok(()),
            Value::Object(m) => self.set_mapping(m, pool),
            Value::Array(items) => {
                for item in items {
                    match item {
                        Value::Null => {}
                        Value::Object(m) => self.set_mapping(m, pool)?,
                        Value::Array(_) => {
                            return Err(
                                "a list element is expected to be a string or a mapping".into()
                            );
                        }
                        scalar => self.set_scalar(scalar, pool)?,
                    }
                }
                Ok(())
            }
            scalar => self.set_scalar(scalar, pool),
        }
    }
}

/// Namespaces of service-account subjects of a RoleBinding (getNamespacesForRoleBinding).
fn role_binding_namespaces(r: &Res) -> Result<Vec<String>, String> {
    if r.kind() != "RoleBinding" {
        return Ok(Vec::new());
    }
    let Some(Value::Array(subjects)) = r.obj.get("subjects") else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for s in subjects {
        let Value::Object(s) = s else {
            return Err("a subject that is not a mapping".into());
        };
        if let (Some(ns), Some(kind)) = (s.get("namespace"), s.get("kind"))
            && kind.as_str() == Some("ServiceAccount")
        {
            match ns {
                Value::String(n) => out.push(n.clone()),
                _ => return Err("a subject namespace that is not a string".into()),
            }
        }
    }
    Ok(out)
}

/// Merges `configurations` name references into the built-in ones, as kustomize's
/// TransformerConfig.Merge does (same target: field specs added, else a new entry).
pub fn merge_refs(base: &mut Vec<NameBackRef>, extra: &[NameBackRef]) {
    for e in extra {
        match base
            .iter_mut()
            .find(|b| b.group == e.group && b.version == e.version && b.kind == e.kind)
        {
            Some(b) => {
                for fs in &e.referrers {
                    if !b.referrers.contains(fs) {
                        b.referrers.push(fs.clone());
                    }
                }
            }
            None => base.push(e.clone()),
        }
    }
}

pub fn fix(
    resources: &mut [Res],
    backrefs: &[NameBackRef],
    file: &Utf8Path,
) -> Result<(), BuildError> {
    let cands: Vec<Cand> = resources.iter().map(Cand::of).collect();
    for (ri, r) in resources.iter_mut().enumerate() {
        let referrer = &cands[ri];
        let org = r.org_id();
        // The filters that apply to this referrer, in configuration order.
        let mut filters: Vec<(&NameBackRef, &FieldSpec)> = Vec::new();
        for br in backrefs {
            for fs in &br.referrers {
                if gvk_selects(
                    &referrer.group,
                    &referrer.version,
                    &org.kind,
                    &fs.group,
                    &fs.version,
                    &fs.kind,
                ) {
                    filters.push((br, fs));
                }
            }
        }
        if filters.is_empty() {
            continue;
        }
        let err = |m: String| BuildError::Invalid {
            file: file.to_path_buf(),
            message: format!(
                "{} {}: name reference: {m}",
                r_kind(&cands[ri]),
                cands[ri].name
            ),
        };
        // SubsetThatCouldBeReferencedByResource.
        let pool: Vec<usize> = if referrer.cluster {
            (0..cands.len()).collect()
        } else {
            let rb = role_binding_namespaces(r).map_err(err)?;
            (0..cands.len())
                .filter(|&i| {
                    let c = &cands[i];
                    c.cluster
                        || c.effective_ns == referrer.effective_ns
                        || rb.contains(&c.namespace)
                })
                .collect()
        };
        let role_ref = {
            let rr = r.obj.get("roleRef");
            let g = rr.and_then(|x| x.get("apiGroup")).and_then(Value::as_str);
            let k = rr.and_then(|x| x.get("kind")).and_then(Value::as_str);
            g.zip(k).map(|(g, k)| (g.to_string(), k.to_string()))
        };
        for (br, fs) in filters {
            let ctx = Ctx {
                cands: &cands,
                referrer,
                role_ref: role_ref.clone(),
                target: br,
                path_is_role_ref: fs.path.join("/").ends_with("roleRef/name"),
            };
            // The referrer's own GVK is put on the spec, so it always applies.
            let res = fs.apply(&mut r.obj, CreateKind::Nothing, &mut |v| ctx.set(v, &pool));
            res.map_err(err)?;
        }
    }
    Ok(())
}

fn r_kind(c: &Cand) -> &str {
    &c.kind
}
