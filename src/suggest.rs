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

/// The existing name `input` most likely misspells: at most two edits away (a swap of two
/// letters is one), so a long shared prefix alone (`eu-west-2-dve` and `eu-west-2-prod`) is no
/// match, as it is for [`did_you_mean`].
pub fn misspelt<'a>(input: &str, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    names
        .into_iter()
        .map(|n| (strsim::damerau_levenshtein(input, n), n))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_name_is_a_few_edits_away_not_a_shared_prefix() {
        let cells = ["ap-southeast-2-dev", "eu-west-2-prod"];
        assert_eq!(
            misspelt("ap-southeast-2-dve", cells),
            Some("ap-southeast-2-dev")
        );
        assert_eq!(misspelt("eu-west-2-dve", cells), None);
    }
}
