//! The report as text, JSON, GitHub workflow commands and a Markdown job summary. Formatting
//! returns strings; the command layer prints them (and writes the summary file).

use serde::Serialize;

use super::findings::{Finding, Report, Severity, plural};

/// Annotations of one severity GitHub shows per step (actions/toolkit docs/problem-matchers.md:
/// "10 warning annotations, 10 error annotations, and 10 notice annotations per step"; a job
/// shows 50 in all, so one step's 10 + 10 + 1 notice stay within it).
pub const ANNOTATIONS_PER_STEP: usize = 10;

/// Bytes GitHub accepts in one step's summary ($GITHUB_STEP_SUMMARY "supports content up to a
/// size of 1024k").
pub const STEP_SUMMARY_LIMIT: usize = 1024 * 1024;

impl Report {
    fn totals(&self) -> String {
        format!(
            "{} checked: {}, {}",
            plural(self.cells.len(), "cell"),
            plural(self.errors(), "error"),
            plural(self.warnings(), "warning")
        )
    }

    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for f in &self.findings {
            out.push_str(&format!(
                "{}[{}]: {}\n  --> {}\n",
                f.severity.as_str(),
                f.code,
                f.message,
                f.location()
            ));
            let scope = f.scope();
            if !scope.is_empty() {
                out.push_str(&format!("   = {scope}\n"));
            }
            out.push('\n');
        }
        out.push_str(&self.totals());
        out.push('\n');
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

    /// GitHub Actions workflow commands: the first [`ANNOTATIONS_PER_STEP`] errors and warnings
    /// become annotations on their file and line; the others are printed as plain log lines, and
    /// a notice says how many were not annotated.
    pub fn to_github(&self) -> String {
        let mut out = String::new();
        let mut shown = [0usize; 2];
        let mut left = [0usize; 2];
        for f in &self.findings {
            let i = f.severity as usize;
            let scope = f.scope();
            let text = if scope.is_empty() {
                f.message.clone()
            } else {
                format!("{} [{scope}]", f.message)
            };
            if shown[i] < ANNOTATIONS_PER_STEP {
                shown[i] += 1;
                let mut props = vec![format!("file={}", escape_property(f.file.as_str()))];
                if let Some(line) = f.line {
                    props.push(format!("line={line}"));
                }
                props.push(format!(
                    "title={}",
                    escape_property(&format!("cellgen {}", f.code))
                ));
                out.push_str(&format!(
                    "::{} {}::{}\n",
                    f.severity.as_str(),
                    props.join(","),
                    escape_data(&text)
                ));
            } else {
                left[i] += 1;
                out.push_str(&format!(
                    "{}[{}] {}: {}\n",
                    f.severity.as_str(),
                    f.code,
                    f.location(),
                    text.replace(['\r', '\n'], " ")
                ));
            }
        }
        if left.iter().any(|n| *n > 0) {
            let (e, w) = (
                left[Severity::Error as usize],
                left[Severity::Warning as usize],
            );
            let what = [(e, "error"), (w, "warning")]
                .into_iter()
                .filter(|(n, _)| *n > 0)
                .map(|(n, word)| plural(n, word))
                .collect::<Vec<_>>()
                .join(" and ");
            out.push_str(&format!(
                "::notice title=cellgen check::{}\n",
                escape_data(&format!(
                    "{what} not annotated: GitHub shows {ANNOTATIONS_PER_STEP} errors and {ANNOTATIONS_PER_STEP} warnings per step. They are listed in this log and in the job summary; `cellgen check` prints them all."
                ))
            ));
        }
        out.push_str(&format!("cellgen check: {}\n", self.totals()));
        out
    }

    /// A Markdown summary for `$GITHUB_STEP_SUMMARY`, at most `budget` bytes: a table of the
    /// findings, and a line saying how many did not fit.
    pub fn to_markdown(&self, budget: usize) -> String {
        let mut out = format!("## cellgen check\n\n{}\n", self.totals());
        if self.findings.is_empty() {
            return out;
        }
        out.push_str("\n| | code | where | cells | message |\n| --- | --- | --- | --- | --- |\n");
        for (i, f) in self.findings.iter().enumerate() {
            let icon = match f.severity {
                Severity::Error => "❌",
                Severity::Warning => "⚠️",
            };
            let row = format!(
                "| {icon} | `{}` | `{}` | {} | {} |\n",
                f.code,
                cell(&f.location()),
                cell(&f.scope()),
                cell(&f.message)
            );
            let rest = self.findings.len() - i;
            let note = format!(
                "\n{} not shown: GitHub takes {STEP_SUMMARY_LIMIT} bytes of summary per step; `cellgen check` prints them all.\n",
                plural(rest, "more finding")
            );
            if out.len() + row.len() + note.len() + 200 > budget {
                out.push_str(&note);
                return out;
            }
            out.push_str(&row);
        }
        out
    }
}

/// Text safe in a Markdown table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
        .replace("\r\n", "<br>")
        .replace(['\n', '\r'], "<br>")
}

/// GitHub workflow-command escaping of a message (also used by `diff`'s annotations).
pub(crate) fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// GitHub workflow-command escaping of a property value (`file=`, `title=`).
pub(crate) fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(errors: usize, warnings: usize) -> Report {
        let mut findings = Vec::new();
        for i in 0..errors {
            findings.push(
                Finding::error("missing-key", format!("e{i:02}.yaml"), Some(1), "m").in_cell("c"),
            );
        }
        for i in 0..warnings {
            findings.push(Finding::warning(
                "unused-key",
                format!("w{i:02}.yaml"),
                None,
                "w",
            ));
        }
        let mut r = Report {
            cells: vec!["c".into()],
            findings,
        };
        r.normalise();
        r
    }

    #[test]
    fn github_output_stays_within_the_annotation_limits() {
        let out = report(13, 11).to_github();
        let count = |prefix: &str| out.lines().filter(|l| l.starts_with(prefix)).count();
        assert_eq!(count("::error "), 10);
        assert_eq!(count("::warning "), 10);
        assert_eq!(count("::notice "), 1);
        assert_eq!(count("error[missing-key] e1"), 3);
        assert_eq!(count("warning[unused-key] w10.yaml"), 1);
        assert!(
            out.contains("3 errors and 1 warning not annotated"),
            "{out}"
        );
        assert!(
            out.ends_with("cellgen check: 1 cell checked: 13 errors, 11 warnings\n"),
            "{out}"
        );
        let small = report(1, 0).to_github();
        assert!(!small.contains("::notice"));
        assert!(
            small.contains("::error file=e00.yaml,line=1,title=cellgen missing-key::m [cell c]")
        );
        assert!(
            small.ends_with("1 cell checked: 1 error, 0 warnings\n"),
            "{small}"
        );
    }

    #[test]
    fn markdown_fits_its_budget() {
        let r = report(300, 0);
        let md = r.to_markdown(4000);
        assert!(md.len() <= 4000, "{}", md.len());
        assert!(md.contains("more findings not shown"), "{md}");
        let all = r.to_markdown(STEP_SUMMARY_LIMIT);
        assert_eq!(all.matches("| ❌ |").count(), 300);
        assert!(report(0, 0).to_markdown(100).contains("0 errors"));
    }

    #[test]
    fn escapes() {
        assert_eq!(escape_data("a%b\nc"), "a%25b%0Ac");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
        assert_eq!(cell("a|b\nc"), "a\\|b<br>c");
    }
}
