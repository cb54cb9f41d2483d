//! A port of fluxcd/pkg `envsubst/parse` (scan.go, parse.go, node.go), itself forked from
//! drone/envsubst. The scanner is reproduced quirk for quirk (escape handling that deletes bytes
//! from the buffer, `width` bookkeeping on unread, NUL read as end of input) because Flux's
//! behaviour on odd input follows from those quirks, not from any grammar.

/// Go's `eof` rune: a NUL byte in the input reads as end of input too, as in Go.
const EOF: char = '\0';

const SCAN_IDENT: u8 = 1;
const SCAN_LBRACK: u8 = 2;
const SCAN_RBRACK: u8 = 4;
const SCAN_ESCAPE: u8 = 8;

const ESC_DOLLAR: u8 = 1;
const ESC_BACKSLASH: u8 = 2;
const ESC_ALL: u8 = ESC_DOLLAR | ESC_BACKSLASH;

/// Deepest `${` nesting accepted. Go grows its stack; we refuse absurd nesting instead of
/// overflowing ours.
const MAX_DEPTH: usize = 128;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Illegal,
    Eof,
    Ident,
    Lbrack,
    Rbrack,
}

/// The scanner's `accept` functions (scan.go), as data.
#[derive(Debug, Clone, Copy)]
enum Accept {
    Rune,
    Ident,
    Colon,
    OneHash,
    NotClosing,
    HashFunc,
    PercentFunc,
    DefaultFunc,
    ReplaceFunc,
    OneEqual,
    OneColon,
    RejectColonClose,
    Slash,
    NotSlash,
    CasingFunc,
}

impl Accept {
    fn accepts(self, r: char, i: usize) -> bool {
        match self {
            Accept::Rune => true,
            Accept::Ident => is_go_letter(r) || is_go_digit(r) || r == '_',
            Accept::Colon => r == ':',
            Accept::OneHash => r == '#' && i == 1,
            Accept::NotClosing => r != '}',
            Accept::HashFunc => r == '#' && i < 3,
            Accept::PercentFunc => r == '%' && i < 3,
            Accept::DefaultFunc => {
                (i == 1 && r == ':') || (i == 2 && matches!(r, '=' | '-' | '?' | '+'))
            }
            Accept::ReplaceFunc => (i == 1 && r == '/') || (i == 2 && matches!(r, '/' | '#' | '%')),
            Accept::OneEqual => i == 1 && r == '=',
            Accept::OneColon => i == 1 && r == ':',
            Accept::RejectColonClose => r != ':' && r != '}',
            Accept::Slash => r == '/',
            Accept::NotSlash => r != '/',
            Accept::CasingFunc => (r == ',' || r == '^') && i < 3,
        }
    }
}

/// Go's `unicode.IsLetter`. Exact for ASCII; for other characters Rust's `is_alphabetic`
/// (which also admits a few combining marks) is the closest std predicate.
fn is_go_letter(r: char) -> bool {
    if r.is_ascii() {
        r.is_ascii_alphabetic()
    } else {
        r.is_alphabetic()
    }
}

/// Go's `unicode.IsDigit` (category Nd). Non-ASCII approximated by `is_numeric`.
fn is_go_digit(r: char) -> bool {
    if r.is_ascii() {
        r.is_ascii_digit()
    } else {
        r.is_numeric()
    }
}

pub(crate) use crate::ports::golang::decode_rune;

/// The Go scanner over a buffer that escape handling shrinks. Positions are "Go positions" in
/// the shrunk buffer; `dels` (sorted source offsets of deleted bytes) maps them back to the
/// source so errors and references carry real byte offsets.
struct Scanner<'a> {
    src: &'a [u8],
    dels: Vec<usize>,
    pos: usize,
    start: usize,
    width: usize,
    mode: u8,
    escape_chars: u8,
    accept: Accept,
}

impl<'a> Scanner<'a> {
    fn new(src: &'a str) -> Self {
        Scanner {
            src: src.as_bytes(),
            dels: Vec::new(),
            pos: 0,
            start: 0,
            width: 0,
            mode: 0,
            escape_chars: 0,
            accept: Accept::Rune,
        }
    }

    fn len(&self) -> usize {
        self.src.len() - self.dels.len()
    }

    /// Source offset of Go position `g`.
    fn orig(&self, g: usize) -> usize {
        // dels[i] - i is the Go position right after deletion i; it never decreases, so the
        // number of deletions at or before `g` is found by binary search.
        let (mut lo, mut hi) = (0usize, self.dels.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.dels[mid] - mid <= g {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        g + lo
    }

    fn byte_at(&self, g: usize) -> Option<u8> {
        self.src.get(self.orig(g)).copied()
    }

    fn read(&mut self) -> char {
        if self.pos >= self.len() {
            self.width = 0;
            return EOF;
        }
        let mut buf = [0u8; 4];
        let mut n = 0;
        while n < 4 {
            match self.byte_at(self.pos + n) {
                Some(b) if self.pos + n < self.len() => buf[n] = b,
                _ => break,
            }
            n += 1;
        }
        let (r, w) = decode_rune(&buf[..n]);
        self.width = w;
        self.pos += w;
        r
    }

    fn unread(&mut self) {
        self.pos = self.pos.saturating_sub(self.width);
    }

    /// Go's `skip`: drop the byte just read (the escape character).
    fn skip(&mut self) {
        let Some(g) = self.pos.checked_sub(1) else {
            return;
        };
        let o = self.orig(g);
        let at = self.dels.partition_point(|&d| d < o);
        self.dels.insert(at, o);
    }

    fn peek(&mut self) -> char {
        let r = self.read();
        self.unread();
        r
    }

    fn string(&self) -> Vec<u8> {
        (self.start..self.pos.max(self.start))
            .filter_map(|g| self.byte_at(g))
            .collect()
    }

    fn scan(&mut self) -> Token {
        self.start = self.pos;
        let r = self.read();
        if r == EOF {
            Token::Eof
        } else if self.scan_lbrack(r) {
            Token::Lbrack
        } else if self.scan_rbrack(r) {
            Token::Rbrack
        } else if self.scan_ident(r) {
            Token::Ident
        } else {
            Token::Illegal
        }
    }

    fn scan_ident(&mut self, r: char) -> bool {
        if self.mode & SCAN_IDENT == 0 {
            return false;
        }
        if self.scan_escaped(r) {
            self.skip();
        } else if !self.accept.accepts(r, self.pos - self.start) {
            return false;
        }
        loop {
            let r = self.read();
            if r == EOF {
                self.unread();
                break;
            }
            if self.scan_lbrack(r) {
                self.unread();
                self.unread();
                break;
            }
            if self.scan_escaped(r) {
                self.skip();
                continue;
            }
            if !self.accept.accepts(r, self.pos - self.start) {
                self.unread();
                break;
            }
        }
        true
    }

    fn scan_lbrack(&mut self, r: char) -> bool {
        if self.mode & SCAN_LBRACK == 0 {
            return false;
        }
        if r == '$' {
            if self.read() == '{' {
                return true;
            }
            self.unread();
        }
        false
    }

    fn scan_rbrack(&self, r: char) -> bool {
        self.mode & SCAN_RBRACK != 0 && r == '}'
    }

    fn scan_escaped(&mut self, r: char) -> bool {
        if self.mode & SCAN_ESCAPE == 0 {
            return false;
        }
        if r == '$' && self.escape_chars & ESC_DOLLAR != 0 && self.peek() == '$' {
            return true;
        }
        if r == '\\' && self.escape_chars & ESC_BACKSLASH != 0 {
            return matches!(self.peek(), '/' | '\\');
        }
        false
    }
}

/// Parse errors, with Flux's messages (parse.go).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParseErrorKind {
    BadSubstitution,
    MissingClosingBrace,
    ParseVariableName,
    ParseFuncSubstitution,
    ParseDefaultFunction,
    TooDeep,
}

impl ParseErrorKind {
    pub(crate) fn message(self) -> &'static str {
        match self {
            ParseErrorKind::BadSubstitution => "bad substitution",
            ParseErrorKind::MissingClosingBrace => "missing closing brace",
            ParseErrorKind::ParseVariableName => "unable to parse variable name",
            ParseErrorKind::ParseFuncSubstitution => "unable to parse substitution within function",
            ParseErrorKind::ParseDefaultFunction => "unable to parse default function",
            ParseErrorKind::TooDeep => "expressions nested too deeply",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ParseError {
    pub kind: ParseErrorKind,
    /// Source offset of the innermost `${` being parsed.
    pub offset: usize,
}

/// A parse-tree node (node.go). `Text` holds bytes: Go strings are byte strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Node {
    Text(Vec<u8>),
    Func(Func),
    List(Vec<Node>),
}

/// A `${...}` expression: `param` is the variable, `name` the operator (`""`, `:-`, `#`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Func {
    pub param: String,
    pub name: String,
    pub args: Vec<Node>,
    /// Source byte range of the whole `${...}`.
    pub start: usize,
    pub end: usize,
}

/// Result of a parse: the tree (on success), every expression completed before any error, and
/// the error.
pub(crate) struct Parsed {
    pub root: Result<Node, ParseError>,
    pub funcs: Vec<FuncInfo>,
}

/// A completed expression, recorded as soon as it parses (so it survives a later error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FuncInfo {
    pub param: String,
    pub name: String,
    pub start: usize,
    pub end: usize,
}

type PResult<T> = Result<T, (ParseErrorKind, Option<usize>)>;

struct Tree<'a> {
    s: Scanner<'a>,
    depth: usize,
    funcs: Vec<FuncInfo>,
}

/// Parse `input` the way Flux's `parse.Parse` does.
pub(crate) fn parse(input: &str) -> Parsed {
    let mut t = Tree {
        s: Scanner::new(input),
        depth: 0,
        funcs: Vec::new(),
    };
    let root = t.parse_any().map_err(|(kind, off)| ParseError {
        kind,
        offset: off.unwrap_or(0),
    });
    Parsed {
        root,
        funcs: t.funcs,
    }
}

fn lossy(b: Vec<u8>) -> String {
    String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

impl Tree<'_> {
    /// parseAny, iterative: Go recurses once per token, which would overflow on long input.
    fn parse_any(&mut self) -> PResult<Node> {
        let mut nodes = Vec::new();
        loop {
            self.s.accept = Accept::Rune;
            self.s.mode = SCAN_IDENT | SCAN_LBRACK | SCAN_ESCAPE;
            self.s.escape_chars = ESC_DOLLAR;
            match self.s.scan() {
                Token::Ident => nodes.push(Node::Text(self.s.string())),
                Token::Eof => break,
                Token::Lbrack => {
                    let start = self.s.orig(self.s.start);
                    nodes.push(self.parse_func(start)?);
                }
                _ => return Err((ParseErrorKind::BadSubstitution, None)),
            }
        }
        Ok(match nodes.len() {
            0 => Node::Text(Vec::new()),
            1 => nodes.pop().unwrap_or(Node::Text(Vec::new())),
            _ => Node::List(nodes),
        })
    }

    /// Parse the body of a `${` whose `$` sits at source offset `start`.
    fn parse_func(&mut self, start: usize) -> PResult<Node> {
        if self.depth >= MAX_DEPTH {
            return Err((ParseErrorKind::TooDeep, Some(start)));
        }
        self.depth += 1;
        let res = self.parse_func_inner(start);
        self.depth -= 1;
        match res {
            Ok(mut f) => {
                f.start = start;
                f.end = self.s.orig(self.s.pos);
                self.funcs.push(FuncInfo {
                    param: f.param.clone(),
                    name: f.name.clone(),
                    start: f.start,
                    end: f.end,
                });
                Ok(Node::Func(f))
            }
            Err((kind, off)) => Err((kind, Some(off.unwrap_or(start)))),
        }
    }

    fn func(param: String) -> Func {
        Func {
            param,
            name: String::new(),
            args: Vec::new(),
            start: 0,
            end: 0,
        }
    }

    fn parse_func_inner(&mut self, _start: usize) -> PResult<Func> {
        self.s.escape_chars = ESC_ALL;
        if self.s.peek() == '#' {
            return self.parse_len_func();
        }
        self.s.accept = Accept::Ident;
        self.s.mode = SCAN_IDENT;
        let name = match self.s.scan() {
            Token::Ident => lossy(self.s.string()),
            _ => return Err((ParseErrorKind::ParseVariableName, None)),
        };
        match self.s.peek() {
            ':' => return self.parse_default_or_substr(name),
            '=' => return self.parse_default_func(name),
            ',' | '^' => return self.parse_casing_func(name),
            '/' => return self.parse_replace_func(name),
            '#' => return self.parse_remove_func(name, Accept::HashFunc),
            '%' => return self.parse_remove_func(name, Accept::PercentFunc),
            _ => {}
        }
        self.s.accept = Accept::Ident;
        self.s.mode = SCAN_RBRACK;
        match self.s.scan() {
            Token::Rbrack => Ok(Self::func(name)),
            _ => Err((ParseErrorKind::MissingClosingBrace, None)),
        }
    }

    fn parse_param(&mut self, accept: Accept, mode: u8) -> PResult<Node> {
        self.s.accept = accept;
        self.s.mode = mode | SCAN_LBRACK;
        match self.s.scan() {
            Token::Lbrack => {
                let start = self.s.orig(self.s.start);
                self.parse_func(start)
            }
            Token::Ident | Token::Rbrack => Ok(Node::Text(self.s.string())),
            _ => Err((ParseErrorKind::ParseFuncSubstitution, None)),
        }
    }

    fn parse_default_or_substr(&mut self, name: String) -> PResult<Func> {
        self.s.read();
        let r = self.s.peek();
        // Go unreads with the width of the *peeked* rune here; kept for fidelity.
        self.s.unread();
        match r {
            '=' | '-' | '?' | '+' => self.parse_default_func(name),
            _ => self.parse_substr_func(name),
        }
    }

    fn scan_op(&mut self, accept: Accept, kind: ParseErrorKind) -> PResult<String> {
        self.s.accept = accept;
        self.s.mode = SCAN_IDENT;
        match self.s.scan() {
            Token::Ident => Ok(lossy(self.s.string())),
            _ => Err((kind, None)),
        }
    }

    fn parse_substr_func(&mut self, param: String) -> PResult<Func> {
        let mut node = Self::func(param);
        node.name = self.scan_op(Accept::OneColon, ParseErrorKind::BadSubstitution)?;
        node.args
            .push(self.parse_param(Accept::RejectColonClose, SCAN_IDENT)?);
        self.s.accept = Accept::Colon;
        self.s.mode = SCAN_IDENT | SCAN_RBRACK;
        match self.s.scan() {
            Token::Rbrack => return Ok(node),
            Token::Ident => {}
            _ => return Err((ParseErrorKind::BadSubstitution, None)),
        }
        node.args
            .push(self.parse_param(Accept::NotClosing, SCAN_IDENT)?);
        self.consume_rbrack()?;
        Ok(node)
    }

    fn parse_remove_func(&mut self, param: String, accept: Accept) -> PResult<Func> {
        let mut node = Self::func(param);
        node.name = self.scan_op(accept, ParseErrorKind::BadSubstitution)?;
        node.args
            .push(self.parse_param(Accept::NotClosing, SCAN_IDENT)?);
        self.consume_rbrack()?;
        Ok(node)
    }

    fn parse_replace_func(&mut self, param: String) -> PResult<Func> {
        let mut node = Self::func(param);
        node.name = self.scan_op(Accept::ReplaceFunc, ParseErrorKind::BadSubstitution)?;
        if self.s.peek() == '/' {
            // Empty pattern, e.g. ${v/#/prefix}.
            node.args.push(Node::Text(Vec::new()));
        } else {
            node.args
                .push(self.parse_param(Accept::NotSlash, SCAN_IDENT | SCAN_ESCAPE)?);
        }
        self.scan_op(Accept::Slash, ParseErrorKind::BadSubstitution)?;
        if self.s.peek() == '}' {
            self.consume_rbrack()?;
            return Ok(node);
        }
        node.args
            .push(self.parse_param(Accept::NotClosing, SCAN_IDENT | SCAN_ESCAPE)?);
        self.consume_rbrack()?;
        Ok(node)
    }

    fn parse_default_func(&mut self, param: String) -> PResult<Func> {
        let mut node = Self::func(param);
        let accept = if self.s.peek() == '=' {
            Accept::OneEqual
        } else {
            Accept::DefaultFunc
        };
        node.name = self.scan_op(accept, ParseErrorKind::ParseDefaultFunction)?;
        loop {
            if self.s.peek() == '}' {
                self.consume_rbrack()?;
                return Ok(node);
            }
            node.args
                .push(self.parse_param(Accept::NotClosing, SCAN_IDENT)?);
        }
    }

    fn parse_casing_func(&mut self, param: String) -> PResult<Func> {
        let mut node = Self::func(param);
        node.name = self.scan_op(Accept::CasingFunc, ParseErrorKind::BadSubstitution)?;
        self.consume_rbrack()?;
        Ok(node)
    }

    fn parse_len_func(&mut self) -> PResult<Func> {
        let mut node = Self::func(String::new());
        node.name = self.scan_op(Accept::OneHash, ParseErrorKind::BadSubstitution)?;
        node.param = self.scan_op(Accept::Ident, ParseErrorKind::BadSubstitution)?;
        self.consume_rbrack()?;
        Ok(node)
    }

    fn consume_rbrack(&mut self) -> PResult<()> {
        self.s.mode = SCAN_RBRACK;
        if self.s.scan() != Token::Rbrack {
            return Err((ParseErrorKind::BadSubstitution, None));
        }
        Ok(())
    }
}
