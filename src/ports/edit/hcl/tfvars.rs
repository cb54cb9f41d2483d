//! The top-level attributes of a `terraform.tfvars`, as `check` reads them (the contract's
//! sample values, the secret trace's tfvars values, the VPC block). Every cell's terraform.tfvars
//! is its own text, so each would be parsed whole; a file of plain `key = "literal"` lines
//! (what `cellgen new` writes) is read line by line instead, to the same answer hcl-edit's parse
//! gives (property-tested), and anything else is left to the parse.

use hcl_edit::Span;
use hcl_edit::expr::Expression;
use hcl_edit::structure::Body;

use crate::ports::edit::text::line_number;

/// One top-level attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopAttribute {
    pub key: String,
    /// Its value, when that is a literal string.
    pub string: Option<String>,
    /// The line of the attribute (1-based).
    pub line: usize,
    /// The line its value starts on.
    pub value_line: Option<usize>,
}

/// Words that read as something other than a name in some places: a line using one as a key
/// is left to the parse.
const KEYWORDS: &[&str] = &[
    "true", "false", "null", "for", "in", "if", "else", "endif", "endfor",
];

/// The attributes of `text` when every line is blank or `key = "literal"` (an ASCII name, the
/// literal printable ASCII without `"`, `\`, `$` or `%`, so no escape or template), each key
/// once and the text ending in a newline; None otherwise, the text then to be parsed.
pub fn simple_attributes(text: &str) -> Option<Vec<TopAttribute>> {
    if !text.is_empty() && !text.ends_with('\n') {
        return None;
    }
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    let mut out: Vec<TopAttribute> = Vec::new();
    for (i, line) in text.split_terminator('\n').enumerate() {
        let bytes = line.as_bytes();
        let mut at = bytes.iter().take_while(|b| blank(b)).count();
        if at == bytes.len() {
            continue;
        }
        let key_start = at;
        if !bytes[at].is_ascii_alphabetic() {
            return None;
        }
        at += bytes[at..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_' || **b == b'-')
            .count();
        let key = &line[key_start..at];
        at += bytes[at..].iter().take_while(|b| blank(b)).count();
        if bytes.get(at) != Some(&b'=') {
            return None;
        }
        at += 1;
        at += bytes[at..].iter().take_while(|b| blank(b)).count();
        if bytes.get(at) != Some(&b'"') {
            return None;
        }
        at += 1;
        let value_start = at;
        at += bytes[at..]
            .iter()
            .take_while(|b| (b' '..=b'~').contains(*b) && !b"\"\\$%".contains(b))
            .count();
        if bytes.get(at) != Some(&b'"') || !bytes[at + 1..].iter().all(blank) {
            return None;
        }
        if KEYWORDS.contains(&key) || out.iter().any(|a| a.key == key) {
            return None;
        }
        out.push(TopAttribute {
            key: key.to_string(),
            string: Some(line[value_start..at].to_string()),
            line: i + 1,
            value_line: Some(i + 1),
        });
    }
    Some(out)
}

/// The attributes of `body`, parsed from `text`, in order.
pub fn attributes_of(text: &str, body: &Body) -> Vec<TopAttribute> {
    body.attributes()
        .map(|a| TopAttribute {
            key: a.key.as_str().to_string(),
            string: match &a.value {
                Expression::String(s) => Some(s.as_str().to_string()),
                _ => None,
            },
            line: line_number(text, a.span().map_or(0, |s| s.start)),
            value_line: a.value.span().map(|s| line_number(text, s.start)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parsed(text: &str) -> Option<Vec<TopAttribute>> {
        let body = hcl_edit::parser::parse_body(text).ok()?;
        Some(attributes_of(text, &body))
    }

    /// Lines near the simple form and just past it.
    fn line() -> impl Strategy<Value = String> {
        let key = prop_oneof![
            Just("name".to_string()),
            Just("vpc_cidr".to_string()),
            Just("true".to_string()),
            Just("_x".to_string()),
            Just("9a".to_string()),
            Just("é".to_string()),
            "[a-z][a-z0-9_-]{0,6}",
        ];
        let value = "[ -~]{0,12}|[a-z0-9./:#{}-]{0,12}";
        let blank = "[ \t]{0,2}";
        prop_oneof![
            4 => (blank, key.clone(), blank, blank, value, blank).prop_map(|(a, k, b, c, v, d)| {
                format!("{a}{k}{b}={c}\"{v}\"{d}")
            }),
            1 => Just(String::new()),
            1 => Just("  \t".to_string()),
            1 => Just("# a comment".to_string()),
            1 => Just("x = 1".to_string()),
            1 => Just("x = \"a\" # note".to_string()),
            1 => Just("x == \"a\"".to_string()),
            1 => Just("block {\n}".to_string()),
            1 => Just("x = \"\\u0041\"".to_string()),
            1 => Just("x = \"a\"\r".to_string()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        // Whatever the line reading accepts, the parse accepts and reads alike.
        #[test]
        fn simple_attributes_are_the_parse(lines in prop::collection::vec(line(), 0..6), end in any::<bool>()) {
            let mut text = lines.join("\n");
            if end {
                text.push('\n');
            }
            if let Some(simple) = simple_attributes(&text) {
                prop_assert_eq!(Some(simple), parsed(&text), "{:?}", text);
            }
        }
    }

    #[test]
    fn a_generated_tfvars_is_simple_and_others_are_parsed() {
        let tfvars = "name               = \"eu-west-1-prod\"\nregion             = \"eu-west-1\"\n\nvpc_cidr           = \"10.22.128.0/20\"\n";
        let simple = simple_attributes(tfvars).unwrap();
        assert_eq!(Some(simple.clone()), parsed(tfvars));
        assert_eq!(simple.len(), 3);
        assert_eq!(simple[2].line, 4);
        for other in [
            "a = \"x\"\na = \"y\"\n",
            "a = \"${b}\"\n",
            "a = \"x\"",
            "# c\na = \"x\"\n",
            "a = [\"x\"]\n",
        ] {
            assert_eq!(simple_attributes(other), None, "{other:?}");
        }
    }
}
