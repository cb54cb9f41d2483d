//! What `cellgen check` reports, and its three output formats. Formatting returns strings; the
//! command layer prints them.

use std::path::PathBuf;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Finding {
    pub severity: Severity,
    /// Stable identifier of the rule, e.g. `missing-key`.
    pub code: &'static str,
    pub cell: Option<String>,
    pub layer: Option<String>,
    /// Repository-relative file the finding points at.
    pub file: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

impl Finding {
    pub fn error(
        code: &'static str,
        file: impl Into<PathBuf>,
        line: Option<usize>,
        message: impl Into<String>,
    ) -> Finding {
        Finding {
            severity: Severity::Error,
            code,
            cell: None,
            layer: None,
            file: file.into(),
            line,
            message: message.into(),
        }
    }

    pub fn warning(
        code: &'static str,
        file: impl Into<PathBuf>,
        line: Option<usize>,
        message: impl Into<String>,
    ) -> Finding {
        Finding {
            severity: Severity::Warning,
            ..Finding::error(code, file, line, message)
        }
    }

    pub fn in_cell(mut self, cell: &str) -> Finding {
        self.cell = Some(cell.to_string());
        self
    }

    pub fn in_layer(mut self, layer: &str) -> Finding {
        self.layer = Some(layer.to_string());
        self
    }

    fn location(&self) -> String {
        match self.line {
            Some(line) => format!("{}:{line}", self.file.display()),
            None => self.file.display().to_string(),
        }
    }
}

#[derive(Debug, Default, Serialize)]
pub struct Report {
    pub cells: Vec<String>,
    pub findings: Vec<Finding>,
}

impl Report {
    pub fn errors(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count()
    }

    pub fn warnings(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Warning)
            .count()
    }

    /// Sorted, without duplicates (the same `${typo}` in a shared layer fails in every cell that
    /// renders it; each cell is reported, but once per file and line).
    pub fn normalise(&mut self) {
        self.findings.sort();
        self.findings.dedup();
    }

    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for f in &self.findings {
            let severity = match f.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            out.push_str(&format!(
                "{severity}[{}]: {}\n  --> {}\n",
                f.code,
                f.message,
                f.location()
            ));
            let scope: Vec<String> = [
                f.cell.as_ref().map(|c| format!("cell {c}")),
                f.layer.as_ref().map(|l| format!("layer {l}")),
            ]
            .into_iter()
            .flatten()
            .collect();
            if !scope.is_empty() {
                out.push_str(&format!("   = {}\n", scope.join(", ")));
            }
            out.push('\n');
        }
        out.push_str(&format!(
            "{} cell{} checked: {} error{}, {} warning{}\n",
            self.cells.len(),
            plural(self.cells.len()),
            self.errors(),
            plural(self.errors()),
            self.warnings(),
            plural(self.warnings())
        ));
        out
    }

    pub fn to_json(&self) -> String {
        #[derive(Serialize)]
        struct Json<'a> {
            cells: &'a [String],
            errors: usize,
            warnings: usize,
            findings: &'a [Finding],
        }
        let json = Json {
            cells: &self.cells,
            errors: self.errors(),
            warnings: self.warnings(),
            findings: &self.findings,
        };
        serde_json::to_string_pretty(&json).expect("a report always serialises") + "\n"
    }

    /// GitHub Actions workflow commands: each finding becomes an annotation on the file and line.
    pub fn to_github(&self) -> String {
        let mut out = String::new();
        for f in &self.findings {
            let level = match f.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            let mut props = vec![format!(
                "file={}",
                escape_property(&f.file.to_string_lossy())
            )];
            if let Some(line) = f.line {
                props.push(format!("line={line}"));
            }
            props.push(format!(
                "title={}",
                escape_property(&format!("cellgen {}", f.code))
            ));
            let scope = f
                .cell
                .as_ref()
                .map(|c| {
                    format!(
                        " [cell {c}{}]",
                        f.layer
                            .as_ref()
                            .map(|l| format!(", layer {l}"))
                            .unwrap_or_default()
                    )
                })
                .unwrap_or_default();
            out.push_str(&format!(
                "::{level} {}::{}\n",
                props.join(","),
                escape_data(&format!("{}{scope}", f.message))
            ));
        }
        out.push_str(&format!(
            "cellgen check: {} cells, {} errors, {} warnings\n",
            self.cells.len(),
            self.errors(),
            self.warnings()
        ));
        out
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}
