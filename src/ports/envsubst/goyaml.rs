//! JSON → YAML exactly as kustomize's `res.AsYAML()` does it: sigs.k8s.io/yaml `JSONToYAML`,
//! i.e. go-yaml v2 (`yaml.Unmarshal` of the JSON, then `yaml.Marshal`). Ported from go-yaml
//! v2's encode.go (`stringv`), resolve.go, sorter.go and emitterc.go (scalar analysis, style
//! selection, the plain/quoted/literal writers with their 80-column folding).
//!
//! Where the quoting rules matter: a string go-yaml would read back as something else
//! (`"true"`, `"1"`, `"null"`, `"yes"`, `"2024-01-02"`, `""`) is double-quoted; anything
//! else that plain style cannot carry is single-quoted; multi-line strings use `|`.

use serde_json::{Map, Number, Value};

use super::resolve::{is_base60_float, resolves_to_str};

const BEST_INDENT: usize = 2;
const BEST_WIDTH: usize = 80;

/// Serialise `value` as Flux sees an object before substitution (sorted keys, go-yaml v2
/// layout: 2-space indent, sequences not indented under their key, go-yaml's quoting).
pub fn to_flux_yaml(value: &Value) -> String {
    let mut e = Emitter {
        out: String::new(),
        column: 0,
        whitespace: true,
        indention: true,
    };
    match value {
        Value::Object(m) if !m.is_empty() => e.mapping(m, 0),
        Value::Array(a) if !a.is_empty() => e.sequence(a, 0),
        other => e.scalar_or_empty(other, BEST_INDENT, false),
    }
    if !e.out.ends_with('\n') {
        e.out.push('\n');
    }
    e.out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

struct Emitter {
    out: String,
    column: usize,
    whitespace: bool,
    indention: bool,
}

impl Emitter {
    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    fn write_indicator(&mut self, ind: &str, need_ws: bool, is_ws: bool, is_indention: bool) {
        if need_ws && !self.whitespace {
            self.put(' ');
        }
        for c in ind.chars() {
            self.put(c);
        }
        self.whitespace = is_ws;
        self.indention = self.indention && is_indention;
    }

    fn write_indent(&mut self, indent: usize) {
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    /// A block mapping whose keys sit at column `indent`.
    fn mapping(&mut self, m: &Map<String, Value>, indent: usize) {
        let mut keys: Vec<&String> = m.keys().collect();
        keys.sort_by(|a, b| key_order(a, b));
        for k in keys {
            self.write_indent(indent);
            self.string(k, indent + BEST_INDENT, true);
            self.write_indicator(":", false, false, false);
            let v = &m[k.as_str()];
            match v {
                Value::Object(o) if !o.is_empty() => self.mapping(o, indent + BEST_INDENT),
                // go-yaml v2 does not indent a sequence under a mapping key.
                Value::Array(a) if !a.is_empty() => self.sequence(a, indent),
                other => self.scalar_or_empty(other, indent + BEST_INDENT, false),
            }
        }
    }

    /// A block sequence whose dashes sit at column `indent`.
    fn sequence(&mut self, a: &[Value], indent: usize) {
        for v in a {
            self.write_indent(indent);
            self.write_indicator("-", true, false, true);
            match v {
                Value::Object(o) if !o.is_empty() => self.mapping(o, indent + BEST_INDENT),
                Value::Array(inner) if !inner.is_empty() => {
                    self.sequence(inner, indent + BEST_INDENT)
                }
                other => self.scalar_or_empty(other, indent + BEST_INDENT, false),
            }
        }
    }

    /// A scalar, or an empty collection (go-yaml writes those in flow style).
    fn scalar_or_empty(&mut self, v: &Value, indent: usize, simple_key: bool) {
        match v {
            Value::Object(_) => {
                self.write_indicator("{", true, true, false);
                self.write_indicator("}", false, false, false);
            }
            Value::Array(_) => {
                self.write_indicator("[", true, true, false);
                self.write_indicator("]", false, false, false);
            }
            Value::Null => self.plain("null", indent, !simple_key),
            Value::Bool(b) => self.plain(if *b { "true" } else { "false" }, indent, !simple_key),
            Value::Number(n) => self.plain(&number_text(n), indent, !simple_key),
            Value::String(s) => self.string(s, indent, simple_key),
        }
    }

    /// go-yaml `stringv` + `yaml_emitter_select_scalar_style`.
    fn string(&mut self, s: &str, indent: usize, simple_key: bool) {
        let can_plain = resolves_to_str(s) && !is_base60_float(s);
        let mut style = if s.contains('\n') {
            Style::Literal
        } else if can_plain {
            Style::Plain
        } else {
            Style::Double
        };
        let a = analyze(s);
        if simple_key && a.multiline {
            style = Style::Double;
        }
        if style == Style::Plain && (!a.block_plain_allowed || (s.is_empty() && simple_key)) {
            style = Style::Single;
        }
        if style == Style::Single && !a.single_quoted_allowed {
            style = Style::Double;
        }
        if style == Style::Literal && (!a.block_allowed || simple_key) {
            style = Style::Double;
        }
        let allow_breaks = !simple_key;
        match style {
            Style::Plain => self.plain(s, indent, allow_breaks),
            Style::Single => self.single_quoted(s, indent, allow_breaks),
            Style::Double => self.double_quoted(s, indent, allow_breaks),
            Style::Literal => self.literal(s, indent),
        }
    }

    fn plain(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        if !self.whitespace {
            self.put(' ');
        }
        let chars: Vec<char> = s.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && chars.get(i + 1) != Some(&' ')
                {
                    self.write_indent(indent);
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    fn single_quoted(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        self.write_indicator("'", true, false, false);
        let chars: Vec<char> = s.chars().collect();
        let mut spaces = false;
        let mut breaks = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i > 0
                    && i + 1 < chars.len()
                    && chars.get(i + 1) != Some(&' ')
                {
                    self.write_indent(indent);
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.put_break();
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent(indent);
                }
                if c == '\'' {
                    self.put('\'');
                }
                self.put(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.write_indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn double_quoted(&mut self, s: &str, indent: usize, allow_breaks: bool) {
        self.write_indicator("\"", true, false, false);
        let chars: Vec<char> = s.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if !is_printable(c) || c == '\u{FEFF}' || is_break(c) || c == '"' || c == '\\' {
                self.put('\\');
                match c {
                    '\0' => self.put('0'),
                    '\u{7}' => self.put('a'),
                    '\u{8}' => self.put('b'),
                    '\t' => self.put('t'),
                    '\n' => self.put('n'),
                    '\u{b}' => self.put('v'),
                    '\u{c}' => self.put('f'),
                    '\r' => self.put('r'),
                    '\u{1b}' => self.put('e'),
                    '"' => self.put('"'),
                    '\\' => self.put('\\'),
                    '\u{85}' => self.put('N'),
                    '\u{a0}' => self.put('_'),
                    '\u{2028}' => self.put('L'),
                    '\u{2029}' => self.put('P'),
                    _ => {
                        let v = u32::from(c);
                        let (prefix, width) = match v {
                            0..=0xFF => ('x', 2),
                            0x100..=0xFFFF => ('u', 4),
                            _ => ('U', 8),
                        };
                        self.put(prefix);
                        for d in format!("{v:0width$X}").chars() {
                            self.put(d);
                        }
                    }
                }
                spaces = false;
            } else if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i != 0
                    && i + 1 != chars.len()
                {
                    self.write_indent(indent);
                    if chars.get(i + 1) == Some(&' ') {
                        self.put('\\');
                    }
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
        }
        self.write_indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn literal(&mut self, s: &str, indent: usize) {
        self.write_indicator("|", true, false, false);
        if s.starts_with([' ', '\n', '\r', '\u{85}', '\u{2028}', '\u{2029}']) {
            self.write_indicator(&BEST_INDENT.to_string(), false, false, false);
        }
        let mut rev = s.chars().rev();
        let chomp = match (rev.next(), rev.next()) {
            (None, _) => Some("-"),
            (Some(last), _) if !is_break(last) => Some("-"),
            (Some(_), None) => Some("+"),
            (Some(_), Some(prev)) if is_break(prev) => Some("+"),
            _ => None,
        };
        if let Some(ch) = chomp {
            self.write_indicator(ch, false, false, false);
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for c in s.chars() {
            if is_break(c) {
                self.put_break();
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent(indent);
                }
                self.put(c);
                self.indention = false;
                breaks = false;
            }
        }
    }
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// go-yaml's `is_printable` (with `unicode` output on): tab, CR and characters beyond the
/// BMP are not "printable" and force double quotes.
fn is_printable(c: char) -> bool {
    match c {
        '\n' => true,
        '\u{20}'..='\u{7E}' => true,
        '\u{A0}'..='\u{D7FF}' => true,
        '\u{E000}'..='\u{FFFD}' => c != '\u{FEFF}',
        _ => false,
    }
}

#[derive(Debug, Default)]
struct Analysis {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

/// go-yaml `yaml_emitter_analyze_scalar`, for block context (flow context never occurs here).
fn analyze(s: &str) -> Analysis {
    if s.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let chars: Vec<char> = s.chars().collect();
    let mut block_indicators = s.starts_with("---") || s.starts_with("...");
    let (mut line_breaks, mut special) = (false, false);
    let (mut leading_space, mut leading_break) = (false, false);
    let (mut trailing_space, mut trailing_break) = (false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut prev_space, mut prev_break) = (false, false);
    let mut preceded_by_ws = true;
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        let followed_by_ws = matches!(next, None | Some(' ') | Some('\t'));
        let last = i + 1 == chars.len();
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => block_indicators = true,
                '?' | ':' if followed_by_ws => block_indicators = true,
                '-' if followed_by_ws => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_ws => block_indicators = true,
                '#' if preceded_by_ws => block_indicators = true,
                _ => {}
            }
        }
        if !is_printable(c) {
            special = true;
        }
        if c == ' ' {
            leading_space |= i == 0;
            trailing_space |= last;
            break_space |= prev_break;
            prev_space = true;
            prev_break = false;
        } else if is_break(c) {
            line_breaks = true;
            leading_break |= i == 0;
            trailing_break |= last;
            space_break |= prev_space;
            prev_space = false;
            prev_break = true;
        } else {
            prev_space = false;
            prev_break = false;
        }
        preceded_by_ws = matches!(c, ' ' | '\t' | '\0') || is_break(c);
    }
    let mut a = Analysis {
        multiline: line_breaks,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.block_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
        a.block_allowed = false;
    }
    if line_breaks || block_indicators {
        a.block_plain_allowed = false;
    }
    a
}

/// A JSON number as go-yaml prints it after the JSON round trip: integers stay integers
/// (integral floats print as integers, as Go's JSON encoder writes them), other floats use
/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`.
pub(crate) fn number_text(n: &Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    if f.fract() == 0.0 && f.abs() < 1e21 {
        if f >= i64::MIN as f64 && f < i64::MAX as f64 {
            return (f as i64).to_string();
        }
        if f >= 0.0 && f < u64::MAX as f64 {
            return (f as u64).to_string();
        }
    }
    go_format_g(f)
}

fn go_format_g(f: f64) -> String {
    let sci = format!("{f:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let sign = if neg { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        let (d0, rest) = digits.split_at(1);
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{d0}{frac}e{esign}{:02}", exp.unsigned_abs());
    }
    let dp = exp + 1;
    let nd = digits.len() as i32;
    let body = if dp <= 0 {
        format!("0.{}{digits}", "0".repeat(dp.unsigned_abs() as usize))
    } else if dp >= nd {
        format!("{digits}{}", "0".repeat((dp - nd) as usize))
    } else {
        let (a, b) = digits.split_at(dp as usize);
        format!("{a}.{b}")
    };
    format!("{sign}{body}")
}

/// go-yaml v2 `keyList.Less` for string keys: letters sort before other characters and digit
/// runs compare numerically ("a2" < "a10").
fn key_order(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let less = |x: bool| if x { Ordering::Less } else { Ordering::Greater };
    let mut i = 0;
    while i < ar.len() && i < br.len() {
        if ar[i] == br[i] {
            i += 1;
            continue;
        }
        let al = ar[i].is_alphabetic();
        let bl = br[i].is_alphabetic();
        if al && bl {
            return ar[i].cmp(&br[i]);
        }
        if al || bl {
            return less(bl);
        }
        let (mut an, mut bn) = (0i64, 0i64);
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && ar[j - 1].is_ascii_digit() {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && ar[ai].is_ascii_digit() {
            an = an
                .wrapping_mul(10)
                .wrapping_add(i64::from(ar[ai] as u8 - b'0'));
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && br[bi].is_ascii_digit() {
            bn = bn
                .wrapping_mul(10)
                .wrapping_add(i64::from(br[bi] as u8 - b'0'));
            bi += 1;
        }
        if an != bn {
            return less(an < bn);
        }
        if ai != bi {
            return less(ai < bi);
        }
        return ar[i].cmp(&br[i]);
    }
    ar.len().cmp(&br.len())
}
