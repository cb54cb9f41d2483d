//! Which lists a strategic merge patch merges, and by which keys: the facts kustomize reads
//! from its built-in Kubernetes 1.21.2 OpenAPI schema (smp_schema.txt). A field missing
//! from the schema, and every field of a type the schema does not know (custom
//! resources, newer built-in kinds), has its lists replaced.

use std::collections::HashMap;
use std::sync::OnceLock;

/// Where a value sits in the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cursor {
    /// A mapping of this definition.
    Def(&'static str),
    /// A mapping whose values all have this definition (additionalProperties).
    MapOf(&'static str),
    None,
}

/// A field of a definition.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The schema of the field's value (for a list, of its items).
    pub target: Cursor,
    /// Merge keys when the list merges (empty for a primitive list that merges).
    pub merge_keys: Option<&'static [&'static str]>,
}

struct Schema {
    kinds: HashMap<(&'static str, &'static str), &'static str>,
    fields: HashMap<(&'static str, &'static str), Field>,
}

fn schema() -> &'static Schema {
    static S: OnceLock<Schema> = OnceLock::new();
    S.get_or_init(|| {
        let mut s = Schema {
            kinds: HashMap::new(),
            fields: HashMap::new(),
        };
        for line in include_str!("smp_schema.txt").lines() {
            let w: Vec<&'static str> = line.split_whitespace().collect();
            match w.as_slice() {
                ["kind", av, kind, def] => {
                    s.kinds.insert((av, kind), def);
                }
                ["field", def, name, how, target, rest @ ..] => {
                    let target = match (*how, *target) {
                        (_, "-") => Cursor::None,
                        ("values", t) => Cursor::MapOf(t),
                        (_, t) => Cursor::Def(t),
                    };
                    let merge_keys: Option<&'static [&'static str]> = match rest {
                        [strategy, keys] if strategy.split(',').any(|x| x == "merge") => {
                            let keys: Vec<&'static str> = if *keys == "-" {
                                Vec::new()
                            } else {
                                keys.split(',').collect()
                            };
                            // Built once per process (OnceLock).
                            Some(Box::leak(keys.into_boxed_slice()))
                        }
                        _ => None,
                    };
                    s.fields.insert((def, name), Field { target, merge_keys });
                }
                _ => {}
            }
        }
        s
    })
}

/// The schema of a resource type, if kustomize knows it.
pub fn root(api_version: &str, kind: &str) -> Cursor {
    schema()
        .kinds
        .get(&(api_version, kind))
        .map_or(Cursor::None, |d| Cursor::Def(d))
}

/// The schema of field `name` of a mapping at `cursor`.
pub fn field(cursor: Cursor, name: &str) -> Option<Field> {
    match cursor {
        Cursor::Def(d) => schema().fields.get(&(d, name)).copied(),
        Cursor::MapOf(d) => Some(Field {
            target: Cursor::Def(d),
            merge_keys: None,
        }),
        Cursor::None => None,
    }
}
