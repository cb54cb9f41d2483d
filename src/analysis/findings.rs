//! What `cellgen check` reports. A finding is one mistake at one place (file and line): the
//! cells and layers it breaks are listed on it, so a typo in a layer shared by 200 cells is one
//! finding, not 200. The output formats are in `format.rs`.

use camino::Utf8PathBuf;
use std::collections::BTreeMap;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// A cell, and the layer (Flux Kustomization) of it, that a finding breaks.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Place {
    pub cell: String,
    /// `None` for what is not about one layer (the cell's ConfigMap, its directory).
    pub layer: Option<String>,
}

/// Every finding code `check` reports, with its severity: the one list the README's table of what
/// `check` catches is tested against. A code not listed here fails any test that reports it.
pub const CODES: &[(&str, Severity)] = &[
    ("missing-key", Severity::Error),
    ("bad-substitution", Severity::Error),
    ("flux-schema", Severity::Error),
    ("unknown-dependency", Severity::Error),
    ("dependency-cycle", Severity::Error),
    ("missing-source", Severity::Error),
    ("missing-namespace", Severity::Error),
    ("substitute-namespace", Severity::Error),
    ("optional-cell-metadata", Severity::Error),
    ("unsupported-field", Severity::Error),
    ("uncontracted-key", Severity::Error),
    ("schema-mismatch", Severity::Error),
    ("invalid-key-name", Severity::Error),
    ("secret-value", Severity::Error),
    ("undeclared-reference", Severity::Error),
    ("bad-component", Severity::Error),
    ("build-failed", Severity::Error),
    ("invalid-cell", Severity::Error),
    ("missing-metadata", Severity::Error),
    ("invalid-metadata", Severity::Error),
    ("no-substitute-from", Severity::Error),
    ("overlapping-vpc-cidr", Severity::Error),
    ("invalid-vpc-cidr", Severity::Error),
    ("unknown-acknowledged-cell", Severity::Error),
    ("unpinned-node-image", Severity::Error),
    ("conflict-marker", Severity::Error),
    ("no-cells", Severity::Error),
    ("not-utf8-name", Severity::Error),
    ("unseen-source", Severity::Warning),
    ("not-rendered", Severity::Warning),
    ("unused-key", Severity::Warning),
    ("acknowledged-vpc-overlap", Severity::Warning),
    ("leftover-bootstrap", Severity::Warning),
    // `verify` only: a real ConfigMap against the contract.
    ("cell-mismatch", Severity::Error),
    ("not-identifier", Severity::Error),
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub severity: Severity,
    /// Stable identifier of the rule, e.g. `missing-key`.
    pub code: &'static str,
    /// Repository-relative file the finding points at.
    pub file: camino::Utf8PathBuf,
    pub line: Option<usize>,
    pub message: String,
    /// Sorted, without duplicates; empty for findings about the repository as a whole.
    pub places: Vec<Place>,
}

impl Serialize for Finding {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Json<'a> {
            severity: Severity,
            code: &'a str,
            file: &'a camino::Utf8PathBuf,
            line: Option<usize>,
            message: &'a str,
            cells: Vec<&'a str>,
            layers: Vec<&'a str>,
            places: &'a [Place],
        }
        Json {
            severity: self.severity,
            code: self.code,
            file: &self.file,
            line: self.line,
            message: &self.message,
            cells: self.cells(),
            layers: self.layers(),
            places: &self.places,
        }
        .serialize(s)
    }
}

impl Finding {
    pub fn error(
        code: &'static str,
        file: impl Into<Utf8PathBuf>,
        line: Option<usize>,
        message: impl Into<String>,
    ) -> Finding {
        Finding::new(Severity::Error, code, file, line, message)
    }

    fn new(
        severity: Severity,
        code: &'static str,
        file: impl Into<Utf8PathBuf>,
        line: Option<usize>,
        message: impl Into<String>,
    ) -> Finding {
        debug_assert!(
            CODES.contains(&(code, severity)),
            "finding code `{code}` ({severity:?}) is not in check::findings::CODES (and the README)"
        );
        Finding {
            severity,
            code,
            file: file.into(),
            line,
            message: message.into(),
            places: Vec::new(),
        }
    }

    pub fn warning(
        code: &'static str,
        file: impl Into<Utf8PathBuf>,
        line: Option<usize>,
        message: impl Into<String>,
    ) -> Finding {
        Finding::new(Severity::Warning, code, file, line, message)
    }

    /// The finding in `cell` (replacing any place it had).
    pub fn in_cell(mut self, cell: &str) -> Finding {
        self.places = vec![Place {
            cell: cell.to_string(),
            layer: None,
        }];
        self
    }

    /// The finding in `layer` of the cell(s) it is in.
    pub fn in_layer(mut self, layer: &str) -> Finding {
        for place in &mut self.places {
            place.layer = Some(layer.to_string());
        }
        self
    }

    /// The cells it breaks, sorted.
    pub fn cells(&self) -> Vec<&str> {
        let mut cells: Vec<&str> = self.places.iter().map(|p| p.cell.as_str()).collect();
        cells.dedup();
        cells
    }

    /// The layers it breaks, sorted.
    pub fn layers(&self) -> Vec<&str> {
        let mut layers: Vec<&str> = self
            .places
            .iter()
            .filter_map(|p| p.layer.as_deref())
            .collect();
        layers.sort_unstable();
        layers.dedup();
        layers
    }

    pub fn location(&self) -> String {
        match self.line {
            Some(line) => format!("{}:{line}", self.file),
            None => self.file.to_string(),
        }
    }

    /// Where it breaks, for people: `cells a, b (layer configs)`, or per cell when the layers
    /// differ: `cell a (layers apps, configs), cell b (layer configs)`.
    pub fn scope(&self) -> String {
        if self.places.is_empty() {
            return String::new();
        }
        let mut by_cell: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for p in &self.places {
            let layers = by_cell.entry(&p.cell).or_default();
            layers.extend(p.layer.as_deref());
        }
        let layers = |ls: &[&str]| match ls.len() {
            0 => String::new(),
            1 => format!(" (layer {})", ls[0]),
            _ => format!(" (layers {})", ls.join(", ")),
        };
        let first = by_cell.values().next().cloned().unwrap_or_default();
        if by_cell.values().all(|ls| *ls == first) {
            let cells: Vec<&str> = by_cell.keys().copied().collect();
            format!(
                "cell{} {}{}",
                if cells.len() == 1 { "" } else { "s" },
                cells.join(", "),
                layers(&first)
            )
        } else {
            by_cell
                .iter()
                .map(|(cell, ls)| format!("cell {cell}{}", layers(ls)))
                .collect::<Vec<_>>()
                .join(", ")
        }
    }

    fn key(
        &self,
    ) -> (
        Severity,
        &camino::Utf8PathBuf,
        Option<usize>,
        &'static str,
        &str,
    ) {
        (
            self.severity,
            &self.file,
            self.line,
            self.code,
            &self.message,
        )
    }
}

#[derive(Debug, Default, Serialize)]
pub struct Report {
    pub cells: Vec<String>,
    pub findings: Vec<Finding>,
}

impl Report {
    pub fn errors(&self) -> usize {
        self.count(Severity::Error)
    }

    pub fn warnings(&self) -> usize {
        self.count(Severity::Warning)
    }

    fn count(&self, severity: Severity) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == severity)
            .count()
    }

    /// One finding per (severity, file, line, code, message), with the places of all the
    /// findings it stands for; sorted by severity, file and line.
    pub fn normalise(&mut self) {
        let mut merged: BTreeMap<_, Finding> = BTreeMap::new();
        for f in std::mem::take(&mut self.findings) {
            let key = (
                f.severity,
                f.file.clone(),
                f.line,
                f.code,
                f.message.clone(),
            );
            match merged.get_mut(&key) {
                Some(existing) => existing.places.extend(f.places),
                None => {
                    merged.insert(key, f);
                }
            }
        }
        self.findings = merged
            .into_values()
            .map(|mut f| {
                f.places.sort();
                f.places.dedup();
                f
            })
            .collect();
        debug_assert!(self.findings.windows(2).all(|w| w[0].key() < w[1].key()));
    }
}

pub fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(cell: &str, layer: Option<&str>) -> Place {
        Place {
            cell: cell.into(),
            layer: layer.map(String::from),
        }
    }

    #[test]
    fn one_finding_per_place_lists_every_cell_and_layer() {
        let f = |cell: &str, layer: &str| {
            Finding::error("missing-key", "a.yaml", Some(3), "m")
                .in_cell(cell)
                .in_layer(layer)
        };
        let mut report = Report {
            cells: vec!["a".into(), "b".into()],
            findings: vec![
                f("b", "configs"),
                f("a", "configs"),
                f("a", "configs"),
                Finding::warning("unused-key", "cellgen.yaml", Some(9), "w"),
                Finding::error("missing-key", "a.yaml", Some(2), "m").in_cell("a"),
            ],
        };
        report.normalise();
        assert_eq!(report.findings.len(), 3);
        assert_eq!(report.findings[0].line, Some(2));
        let shared = &report.findings[1];
        assert_eq!(
            shared.places,
            [place("a", Some("configs")), place("b", Some("configs"))]
        );
        assert_eq!(shared.cells(), ["a", "b"]);
        assert_eq!(shared.scope(), "cells a, b (layer configs)");
        assert_eq!(report.errors(), 2);
        assert_eq!(report.warnings(), 1);
    }

    #[test]
    fn scope_per_cell_when_layers_differ() {
        let mut f = Finding::error("missing-key", "f", None, "m");
        f.places = vec![
            place("a", Some("apps")),
            place("a", Some("configs")),
            place("b", Some("configs")),
        ];
        assert_eq!(
            f.scope(),
            "cell a (layers apps, configs), cell b (layer configs)"
        );
        f.places = vec![place("a", None)];
        assert_eq!(f.scope(), "cell a");
    }

    #[test]
    fn plurals() {
        assert_eq!(plural(1, "cell"), "1 cell");
        assert_eq!(plural(0, "error"), "0 errors");
        assert_eq!(plural(2, "warning"), "2 warnings");
    }
}
