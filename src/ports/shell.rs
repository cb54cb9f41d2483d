//! POSIX shell words: what cellgen prints for a user to paste into a shell (a tear-down's
//! commands) names things read from files (a layer's name and namespace), which must reach the
//! program as one argument each, whatever they hold (`flux-system;id`, `$(touch x)`, spaces).

/// `word` as one argument to a POSIX shell: as it is when it holds only characters no shell
/// treats specially, else single-quoted (a `'` inside becomes `'\''`).
pub fn quote(word: &str) -> String {
    // None of these is special anywhere in a word (`~` and `#` are, at its start: not here).
    let plain = !word.is_empty()
        && word.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'-' | b'_' | b'.' | b'/' | b':' | b',' | b'@' | b'%' | b'+' | b'='
                )
        });
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A command line of `words`, each quoted as needed.
pub fn command<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| quote(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn safe_words_stay_bare() {
        assert_eq!(quote("flux-system"), "flux-system");
        assert_eq!(
            quote("terraform/cells/eu-west-2-prod"),
            "terraform/cells/eu-west-2-prod"
        );
        assert_eq!(quote("flux-system;id"), "'flux-system;id'");
        assert_eq!(quote("$(touch x)"), "'$(touch x)'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(
            command(&["kubectl", "--patch", r#"{"spec":{"suspend":true}}"#]),
            r#"kubectl --patch '{"spec":{"suspend":true}}'"#
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// /bin/sh reads every quoted word back as exactly that word.
        #[test]
        fn sh_reads_every_word_back(words in proptest::collection::vec("[^\\x00]{0,12}", 1..4)) {
            let line = command(&words);
            let out = std::process::Command::new("/bin/sh")
                .arg("-c")
                .arg(format!("printf '%s\\0' {line}"))
                .output()
                .unwrap();
            let got: Vec<String> = String::from_utf8(out.stdout)
                .unwrap()
                .split_terminator('\0')
                .map(str::to_string)
                .collect();
            prop_assert_eq!(got, words, "{}", line);
        }
    }
}
