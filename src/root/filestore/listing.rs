//! A directory's listing as the store keeps it, and how a planned change alters one.

use camino::Utf8Path;
use std::ffi::OsString;
use std::io;

use super::{Failure, Kind, Planned};

/// A directory's entries as `std::fs::read_dir` gives them: each name with its kind (or why
/// it could not be told), and the error that ended the listing early, if one did.
#[derive(Debug)]
pub struct Listing {
    /// Whether the directory could be opened (`std::fs::read_dir` succeeded).
    pub opened: bool,
    pub(super) entries: Vec<(OsString, Result<Kind, Failure>)>,
    pub(super) error: Option<Failure>,
    /// The names of a long listing and where each is in `entries`, to find one without a
    /// scan (`cells/` lists every cell); a short one is scanned.
    pub(super) long:
        Option<std::collections::HashMap<OsString, usize, foldhash::fast::RandomState>>,
}

impl Listing {
    /// Where `name` is in `entries`.
    pub(super) fn position(&self, name: &str) -> Option<usize> {
        match &self.long {
            Some(names) => names.get(std::ffi::OsStr::new(name)).copied(),
            None => self.names().position(|n| n == name),
        }
    }
}

impl Listing {
    /// The names listed (before an error that ended the listing, as iterating `read_dir` and
    /// dropping its errors gives them).
    pub fn names(&self) -> impl Iterator<Item = &OsString> {
        self.entries.iter().map(|(name, _)| name)
    }

    /// Each name listed with its kind (or why it could not be told), in the listing's order.
    pub fn entries(&self) -> impl Iterator<Item = (&OsString, io::Result<Kind>)> {
        self.entries
            .iter()
            .map(|(name, kind)| (name, kind.clone().map_err(|f| f.error())))
    }

    /// Why the directory could not be opened (when not `opened`), or the error that ended the
    /// listing after its `entries`.
    pub fn error(&self) -> Option<io::Error> {
        self.error.as_ref().map(Failure::error)
    }

    /// Each entry with its kind, or the first error met (`read_dir`, then each entry's
    /// `file_type`, in order).
    pub fn kinds(&self) -> io::Result<Vec<(OsString, Kind)>> {
        let mut out = Vec::with_capacity(self.entries.len());
        for (name, kind) in &self.entries {
            out.push((name.clone(), kind.clone().map_err(|f| f.error())?));
        }
        match &self.error {
            Some(f) => Err(f.error()),
            None => Ok(out),
        }
    }
}

impl Planned {
    /// `listing` of directory `rel` with the planned files and directories in it, and without
    /// the deleted ones.
    pub(super) fn relist(&self, rel: &Utf8Path, listing: &mut Listing) {
        let child = |path: &str| -> Option<String> {
            let parent = Utf8Path::new(path).parent()?;
            (parent == rel).then(|| Utf8Path::new(path).file_name().unwrap_or("").to_string())
        };
        let mut add: Vec<(OsString, Kind)> = Vec::new();
        for (path, text) in &self.files {
            let Some(name) = child(path) else { continue };
            listing
                .entries
                .retain(|(n, _)| n.to_str() != Some(name.as_str()));
            if text.is_some() {
                add.push((OsString::from(name), Kind::File));
            }
        }
        for dir in &self.dirs {
            let Some(name) = child(dir).filter(|n| !n.is_empty()) else {
                continue;
            };
            if !listing
                .entries
                .iter()
                .any(|(n, _)| n.to_str() == Some(name.as_str()))
            {
                add.push((OsString::from(name), Kind::Dir));
            }
        }
        if add.is_empty() && listing.long.is_none() {
            return;
        }
        let made = !add.is_empty() || self.dirs.contains(rel.as_str());
        listing
            .entries
            .extend(add.into_iter().map(|(n, k)| (n, Ok(k))));
        if made && !listing.opened {
            listing.opened = true;
            listing.error = None;
        }
        listing.long = (listing.entries.len() > 32).then(|| {
            listing
                .names()
                .enumerate()
                .map(|(i, name)| (name.clone(), i))
                .collect()
        });
    }
}

pub(super) fn list(dir: &Utf8Path) -> Listing {
    let mut listing = Listing {
        opened: false,
        long: None,
        entries: Vec::new(),
        error: None,
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            listing.error = Some(Failure::of(&e));
            return listing;
        }
    };
    listing.opened = true;
    for entry in entries {
        match entry {
            Ok(entry) => {
                let kind = entry
                    .file_type()
                    .map(crate::root::disk::kind_of)
                    .map_err(|e| Failure::of(&e));
                listing.entries.push((entry.file_name(), kind));
            }
            Err(e) => {
                listing.error = Some(Failure::of(&e));
                break;
            }
        }
    }
    if listing.entries.len() > 32 {
        listing.long = Some(
            listing
                .names()
                .enumerate()
                .map(|(i, name)| (name.clone(), i))
                .collect(),
        );
    }
    listing
}
