//! The declarations of a stack directory, found by name: variables, locals, resources, data
//! sources, modules and outputs, each file parsed only when a look-up may find something in it.

use std::collections::HashMap;

use hcl_edit::structure::{Attribute, Block};

use crate::analysis::secrets::decls::Decls;
use crate::analysis::secrets::sensitive::Kind;
use crate::analysis::secrets::stack::{Dir, File};

pub(super) type Decl<'w, T> = (&'w File, &'w T);

/// Block `i` of a file's body.
pub(super) fn block_at(file: &File, i: usize) -> Option<Decl<'_, Block>> {
    Some((file, file.body()?.get(i)?.as_block()?))
}

/// The declarations of a directory, the first file (in name order) declaring a name winning.
/// A file is parsed and indexed only when a look-up may find something in it: its text holds
/// the block type's word and the name ([`File::may_declare`]), or it is indexed already (by
/// any cell: the index belongs to the text). A stack's files mostly declare what no ConfigMap
/// value reaches (flux.tf, versions.tf differ per cell, so the parse cache does not spare
/// them), and the answer is the same as indexing every file up front.
pub(super) struct Index<'w> {
    pub(super) dir: &'w Dir,
}

impl<'w> Index<'w> {
    pub(super) fn of(dir: &'w Dir) -> Index<'w> {
        Index { dir }
    }

    pub(super) fn decls(file: &'w File) -> &'w Decls {
        let content = &*file.content;
        content.decls.get_or_init(|| Decls::of(content.body()))
    }

    /// The first declaration of `name` (by `pick`) in a file indexed already or holding `word`
    /// and `name`.
    pub(super) fn find<T>(
        &self,
        word: &str,
        name: &str,
        pick: impl Fn(&'w File, &'w Decls) -> Option<T>,
    ) -> Option<T> {
        self.dir
            .files
            .iter()
            .filter(|f| f.content.decls.get().is_some() || f.may_declare(word, name))
            .find_map(|f| pick(f, Self::decls(f)))
    }

    pub(super) fn var(&self, name: &str) -> Option<Decl<'w, Block>> {
        self.find("variable", name, |f, d| block_at(f, *d.vars.get(name)?))
    }

    pub(super) fn local(&self, name: &str) -> Option<Decl<'w, Attribute>> {
        self.find("locals", name, |f, d| {
            let (i, j) = *d.locals.get(name)?;
            let block = f.body()?.get(i)?.as_block()?;
            Some((f, block.body.get(j)?.as_attribute()?))
        })
    }

    pub(super) fn block(&self, kind: Kind, ty: &str, name: &str) -> Option<Decl<'w, Block>> {
        let word = if kind == Kind::Data {
            "data"
        } else {
            "resource"
        };
        self.find(word, name, |f, d| {
            let (_, _, i) = d
                .blocks
                .get(name)?
                .iter()
                .find(|(k, t, _)| *k == kind && t == ty)?;
            block_at(f, *i)
        })
    }

    pub(super) fn module(&self, name: &str) -> Option<Decl<'w, Block>> {
        self.find("module", name, |f, d| block_at(f, *d.modules.get(name)?))
    }

    pub(super) fn output(&self, name: &str) -> Option<Decl<'w, Block>> {
        self.find("output", name, |f, d| block_at(f, *d.outputs.get(name)?))
    }

    /// Every output, the first declaration of each name.
    pub(super) fn outputs(&self) -> Vec<Decl<'w, Block>> {
        let mut all: HashMap<&'w str, Decl<'w, Block>> = HashMap::new();
        for file in &self.dir.files {
            for (name, i) in &Self::decls(file).outputs {
                if !all.contains_key(name.as_str())
                    && let Some(decl) = block_at(file, *i)
                {
                    all.insert(name, decl);
                }
            }
        }
        all.into_values().collect()
    }
}
