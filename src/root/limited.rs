//! Text cellgen reads from outside the repository (a file a flag names, stdin), with a bound: a
//! FIFO, `/dev/zero` or a huge file ends in an error naming it and the limit, never in memory
//! running out. The limit is the YAML entry point's: everything read here is parsed as YAML or
//! substituted as one text.

use std::io::Read;

use camino::Utf8Path;

use crate::error::CellgenError;

/// The most bytes read from one input (32 MiB).
pub const MAX_INPUT_BYTES: usize = crate::ports::yaml::MAX_BYTES;

/// The file at `path` as UTF-8 text; messages name it `shown` (as the user gave it).
pub fn read_file(path: &Utf8Path, shown: &Utf8Path) -> Result<String, CellgenError> {
    let file = super::disk::open(path).map_err(|source| CellgenError::Read {
        path: shown.to_path_buf(),
        source,
    })?;
    read_text(file, shown)
}

/// Everything `reader` gives, up to [`MAX_INPUT_BYTES`], as UTF-8 text; `name` is shown in
/// messages (a path, or `stdin`).
pub fn read_text(reader: impl Read, name: &Utf8Path) -> Result<String, CellgenError> {
    let mut bytes = Vec::new();
    reader
        .take(MAX_INPUT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| CellgenError::Read {
            path: name.to_path_buf(),
            source,
        })?;
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(CellgenError::TooLarge {
            path: name.to_path_buf(),
            limit: MAX_INPUT_BYTES,
        });
    }
    String::from_utf8(bytes).map_err(|_| CellgenError::Read {
        path: name.to_path_buf(),
        // What `read_to_string` says, as before this bound.
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_input_ends_at_the_limit() {
        let err = read_text(std::io::repeat(0), Utf8Path::new("stdin")).unwrap_err();
        assert!(
            matches!(err, CellgenError::TooLarge { limit, .. } if limit == MAX_INPUT_BYTES),
            "{err}"
        );
        assert!(err.to_string().starts_with("stdin: "), "{err}");
        let exact = vec![b'a'; MAX_INPUT_BYTES];
        assert_eq!(
            read_text(&exact[..], Utf8Path::new("f")).unwrap().len(),
            MAX_INPUT_BYTES
        );
    }
}
