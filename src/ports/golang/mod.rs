//! Go's standard library where cellgen must answer exactly as a Go tool does: one copy of each
//! port, shared by the tools' ports above it (kustomize's source-controller filter, Flux's
//! envsubst, go-yaml).

pub mod path_match;
pub mod yaml_resolve;

/// Go's `utf8.DecodeRune`: one UTF-8 sequence; invalid input is U+FFFD of width 1, empty input
/// U+FFFD of width 0.
pub fn decode_rune(b: &[u8]) -> (char, usize) {
    let Some(&b0) = b.first() else {
        return (char::REPLACEMENT_CHARACTER, 0);
    };
    let need = match b0 {
        0x00..=0x7F => return (char::from(b0), 1),
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return (char::REPLACEMENT_CHARACTER, 1),
    };
    match b.get(..need).and_then(|s| std::str::from_utf8(s).ok()) {
        Some(s) => (
            s.chars().next().unwrap_or(char::REPLACEMENT_CHARACTER),
            need,
        ),
        None => (char::REPLACEMENT_CHARACTER, 1),
    }
}
