//! A safe event stream over libyaml (the C library go-yaml is a port of), transpiled to Rust
//! by `libyaml-rs`. Only what the loader needs: scalars with their style and tag, collection
//! starts with anchors, aliases, and line numbers.

use std::ffi::CStr;
use std::mem::MaybeUninit;

use libyaml_rs as sys;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarStyle {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
}

#[derive(Debug)]
pub enum Event {
    StreamStart,
    StreamEnd,
    DocumentStart,
    DocumentEnd,
    Alias(String),
    Scalar {
        anchor: Option<String>,
        tag: Option<String>,
        value: String,
        style: ScalarStyle,
    },
    SequenceStart {
        anchor: Option<String>,
        tag: Option<String>,
    },
    SequenceEnd,
    MappingStart {
        anchor: Option<String>,
        tag: Option<String>,
    },
    MappingEnd,
}

/// A libyaml parse error: what, and where (1-based line).
#[derive(Debug)]
pub struct ParseError {
    pub message: String,
    pub line: usize,
}

/// The parser state lives in a Box: libyaml keeps pointers into it and into the input.
struct Pinned<'a> {
    sys: sys::yaml_parser_t,
    input: &'a [u8],
}

pub struct Parser<'a> {
    pin: Box<MaybeUninit<Pinned<'a>>>,
    done: bool,
}

impl<'a> Parser<'a> {
    pub fn new(input: &'a str) -> Parser<'a> {
        let mut pin: Box<MaybeUninit<Pinned<'a>>> = Box::new(MaybeUninit::uninit());
        // SAFETY: the parser is initialised in place inside the Box (which never moves its
        // contents) and given an input slice that outlives it ('a).
        unsafe {
            let p = pin.as_mut_ptr();
            let parser = &raw mut (*p).sys;
            if sys::yaml_parser_initialize(parser).fail {
                panic!("libyaml could not allocate a parser");
            }
            sys::yaml_parser_set_encoding(parser, sys::YAML_UTF8_ENCODING);
            (&raw mut (*p).input).write(input.as_bytes());
            sys::yaml_parser_set_input_string(parser, input.as_ptr(), input.len() as u64);
        }
        Parser { pin, done: false }
    }

    fn error(&self) -> ParseError {
        // SAFETY: the parser was initialised in `new`; problem/context are NUL-terminated
        // static strings or null.
        unsafe {
            let p = &(*self.pin.as_ptr()).sys;
            let text = |ptr: *const i8| {
                (!ptr.is_null()).then(|| CStr::from_ptr(ptr.cast()).to_string_lossy().into_owned())
            };
            let problem = text(p.problem.cast()).unwrap_or_else(|| "invalid YAML".into());
            let mark = p.problem_mark;
            let message = match text(p.context.cast()) {
                Some(ctx) => format!("{ctx}: {problem}"),
                None => problem,
            };
            ParseError {
                message,
                line: mark.line as usize + 1,
            }
        }
    }

    /// The next event and the 1-based line it starts on.
    pub fn next_event(&mut self) -> Result<(Event, usize), ParseError> {
        if self.done {
            return Ok((Event::StreamEnd, 0));
        }
        let mut ev = MaybeUninit::<sys::yaml_event_t>::uninit();
        // SAFETY: parser initialised; the event is deleted after it has been copied out.
        unsafe {
            let parser = &raw mut (*self.pin.as_mut_ptr()).sys;
            if (&*parser).error != sys::YAML_NO_ERROR
                || sys::yaml_parser_parse(parser, ev.as_mut_ptr()).fail
            {
                return Err(self.error());
            }
            let ev = ev.as_mut_ptr();
            let line = (*ev).start_mark.line as usize + 1;
            let out = convert(&*ev);
            sys::yaml_event_delete(ev);
            if matches!(out, Event::StreamEnd) {
                self.done = true;
            }
            Ok((out, line))
        }
    }
}

unsafe fn opt_string(ptr: *const u8) -> Option<String> {
    // SAFETY: libyaml anchors and tags are NUL-terminated UTF-8 (input is UTF-8).
    (!ptr.is_null()).then(|| {
        unsafe { CStr::from_ptr(ptr.cast()) }
            .to_string_lossy()
            .into_owned()
    })
}

unsafe fn convert(ev: &sys::yaml_event_t) -> Event {
    // SAFETY: the union member read matches the event type.
    unsafe {
        match ev.type_ {
            sys::YAML_STREAM_START_EVENT => Event::StreamStart,
            sys::YAML_STREAM_END_EVENT => Event::StreamEnd,
            sys::YAML_DOCUMENT_START_EVENT => Event::DocumentStart,
            sys::YAML_DOCUMENT_END_EVENT => Event::DocumentEnd,
            sys::YAML_ALIAS_EVENT => {
                Event::Alias(opt_string(ev.data.alias.anchor).unwrap_or_default())
            }
            sys::YAML_SCALAR_EVENT => {
                let s = &ev.data.scalar;
                let bytes = std::slice::from_raw_parts(s.value, s.length as usize);
                Event::Scalar {
                    anchor: opt_string(s.anchor),
                    tag: opt_string(s.tag),
                    value: String::from_utf8_lossy(bytes).into_owned(),
                    style: match s.style {
                        sys::YAML_SINGLE_QUOTED_SCALAR_STYLE => ScalarStyle::SingleQuoted,
                        sys::YAML_DOUBLE_QUOTED_SCALAR_STYLE => ScalarStyle::DoubleQuoted,
                        sys::YAML_LITERAL_SCALAR_STYLE => ScalarStyle::Literal,
                        sys::YAML_FOLDED_SCALAR_STYLE => ScalarStyle::Folded,
                        _ => ScalarStyle::Plain,
                    },
                }
            }
            sys::YAML_SEQUENCE_START_EVENT => {
                let s = &ev.data.sequence_start;
                Event::SequenceStart {
                    anchor: opt_string(s.anchor),
                    tag: opt_string(s.tag),
                }
            }
            sys::YAML_SEQUENCE_END_EVENT => Event::SequenceEnd,
            sys::YAML_MAPPING_START_EVENT => {
                let m = &ev.data.mapping_start;
                Event::MappingStart {
                    anchor: opt_string(m.anchor),
                    tag: opt_string(m.tag),
                }
            }
            _ => Event::MappingEnd,
        }
    }
}

impl Drop for Parser<'_> {
    fn drop(&mut self) {
        // SAFETY: initialised in `new`, deleted once.
        unsafe { sys::yaml_parser_delete(&raw mut (*self.pin.as_mut_ptr()).sys) }
    }
}
