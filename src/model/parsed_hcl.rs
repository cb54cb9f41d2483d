//! The HCL texts a command parses, each distinct text once: cells repeat most of their stack
//! (cluster.tf, variables.tf, the components' files are the same text in every cell), and a
//! cell's terraform.tfvars and cell-metadata.tf are read by several checks (the contract, the
//! secret trace, the VPC blocks). Kept in the command's memos (`FileStore::memos`), dropped
//! with them: no process-wide cache.

use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};

use hcl_edit::structure::Body;

use crate::ports::edit::hcl::{HclEditError, tfvars};
use crate::root::memos::Memos;

/// Parsed bodies of the file texts seen more than once in this command. A text is kept only
/// from its second sighting (files unique to a cell cost a hash, not a copy), but for the texts
/// read by several checks ([`parse_kept`]), kept from the first. Texts are hashed once, with
/// foldhash (several times faster than SipHash on long keys); a hit is confirmed by comparing
/// the text, so two texts with one hash are parsed each, the second not kept.
#[derive(Default)]
pub struct HclParses {
    cache: Mutex<ParseCache>,
}

#[derive(Default)]
struct ParseCache {
    seen: foldhash::HashSet<u64>,
    bodies: foldhash::HashMap<u64, (String, Arc<Body>)>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Whole entries are inserted, never half-written ones.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl HclParses {
    /// `text` parsed through the cache (successes only are kept; `first`: from the first
    /// sighting, else from the second).
    pub fn parse_shared(
        &self,
        text: &str,
        first: bool,
    ) -> Result<Arc<Body>, hcl_edit::parser::Error> {
        let hash = foldhash::fast::FixedState::default().hash_one(text);
        let repeated = {
            let mut cache = lock(&self.cache);
            match cache.bodies.get(&hash) {
                Some((kept, body)) if kept == text => return Ok(body.clone()),
                Some(_) => false,
                None => !cache.seen.insert(hash) || first,
            }
        };
        let body = Arc::new(hcl_edit::parser::parse_body(text)?);
        if repeated {
            lock(&self.cache)
                .bodies
                .entry(hash)
                .or_insert_with(|| (text.to_string(), body.clone()));
        }
        Ok(body)
    }
}

/// `text` parsed, or the body of the same text in the command's parse cache, where it is kept
/// from this first parse: for a text several checks parse (a cell's terraform.tfvars and
/// cell-metadata.tf), whatever thread parses it first.
pub fn parse_kept(memos: &Memos, text: &str) -> Result<Arc<Body>, hcl_edit::parser::Error> {
    memos.get::<HclParses>().parse_shared(text, true)
}

/// `text` parsed (kept for the command, see [`parse_kept`]), or edit::hcl's error for it: a
/// cell's contract check parses its cell-metadata.tf and terraform.tfvars, then its trace
/// reads them again.
pub fn parse_checked(memos: &Memos, text: &str) -> Result<Arc<Body>, HclEditError> {
    match parse_kept(memos, text) {
        Ok(body) => Ok(body),
        // A text that does not parse is parsed again for the error in edit::hcl's words.
        Err(_) => Ok(Arc::new(crate::ports::edit::hcl::parse_body(text)?)),
    }
}

/// The top-level attributes of a tfvars `text`, None when it does not parse: read line by line
/// when it is plain `key = "literal"` lines, else from its parse (kept, see [`parse_kept`]).
pub fn tfvars_attributes(memos: &Memos, text: &str) -> Option<Vec<tfvars::TopAttribute>> {
    tfvars::simple_attributes(text)
        .or_else(|| Some(tfvars::attributes_of(text, &*parse_kept(memos, text).ok()?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_parsed_once_per_command() {
        let memos = Memos::default();
        let text = "a = 1\n";
        let first = parse_kept(&memos, text).unwrap();
        assert!(Arc::ptr_eq(&first, &parse_kept(&memos, text).unwrap()));
        // Another command (its own memos) parses afresh.
        assert!(!Arc::ptr_eq(
            &first,
            &parse_kept(&Memos::default(), text).unwrap()
        ));
        // A text seen once through parse_shared(.., false) is kept from its second sighting.
        let parses = HclParses::default();
        let a = parses.parse_shared("b = 2\n", false).unwrap();
        let b = parses.parse_shared("b = 2\n", false).unwrap();
        let c = parses.parse_shared("b = 2\n", false).unwrap();
        assert!(!Arc::ptr_eq(&a, &b) && Arc::ptr_eq(&b, &c));
    }
}
