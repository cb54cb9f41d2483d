//! Did-you-mean suggestions for names a user typed.

/// The closest candidate, if it is close enough to be a plausible typo.
pub fn did_you_mean<'a>(
    input: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(input, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// ` Did you mean `x`?` or an empty string, ready to append to a message.
pub fn hint<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    did_you_mean(input, candidates)
        .map(|s| format!(" Did you mean `{s}`?"))
        .unwrap_or_default()
}
