//! The declarations of one Terraform file's text, indexed once per distinct text: shared by the
//! stack's file contents (which keep the index) and the taint trace (which looks names up in it).

use hcl_edit::structure::Body;

use super::sensitive::Kind;

/// The declarations of one file's text, the first of each name winning: positions in its body
/// (block `i` is `body.get(i)`, a local `(i, j)` attribute `j` of block `i`), so one index
/// serves every file of that text, whatever the cell ([`super::stack::Content`]).
#[derive(Default)]
pub(super) struct Decls {
    pub(super) vars: foldhash::HashMap<String, usize>,
    pub(super) locals: foldhash::HashMap<String, (usize, usize)>,
    /// By name: (kind, type, position), the first of each (kind, type, name).
    pub(super) blocks: foldhash::HashMap<String, Vec<(Kind, String, usize)>>,
    pub(super) modules: foldhash::HashMap<String, usize>,
    pub(super) outputs: foldhash::HashMap<String, usize>,
}

impl Decls {
    pub(super) fn of(body: Option<&Body>) -> Decls {
        let mut index = Decls::default();
        let Some(body) = body else {
            return index;
        };
        let first = |map: &mut foldhash::HashMap<String, usize>, name: &str, i: usize| {
            if !map.contains_key(name) {
                map.insert(name.to_string(), i);
            }
        };
        for (i, structure) in body.iter().enumerate() {
            let Some(block) = structure.as_block() else {
                continue;
            };
            let labels: Vec<&str> = block.labels.iter().map(|l| l.as_str()).collect();
            match (block.ident.as_str(), labels.as_slice()) {
                ("variable", [name]) => first(&mut index.vars, name, i),
                ("output", [name]) => first(&mut index.outputs, name, i),
                ("module", [name]) => first(&mut index.modules, name, i),
                ("resource" | "data", [ty, name]) => {
                    let kind = if block.ident.as_str() == "data" {
                        Kind::Data
                    } else {
                        Kind::Resource
                    };
                    let same = index.blocks.entry(name.to_string()).or_default();
                    if !same.iter().any(|(k, t, _)| *k == kind && t == ty) {
                        same.push((kind, ty.to_string(), i));
                    }
                }
                ("locals", []) => {
                    for (j, attr) in block.body.iter().enumerate() {
                        if let Some(attr) = attr.as_attribute()
                            && !index.locals.contains_key(attr.key.as_str())
                        {
                            index.locals.insert(attr.key.as_str().to_string(), (i, j));
                        }
                    }
                }
                _ => {}
            }
        }
        index
    }
}
