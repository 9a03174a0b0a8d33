//! "Did you mean ...?" for a misspelt argument name.

/// The known name closest to `unknown` by edit distance, if it is close
/// enough to be a plausible typo (a third of the name, at least two edits).
pub fn closest<'a>(unknown: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (unknown.chars().count() / 3).max(2);
    known
        .into_iter()
        .map(|name| (distance(unknown, name), name))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, name)| name)
}

/// Levenshtein distance over characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_edits() {
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("same", "same"), 0);
    }

    #[test]
    fn suggests_only_plausible_typos() {
        let known = ["demonstrations", "draft_prompt", "draft_state", "trials"];
        assert_eq!(closest("demonstration", known), Some("demonstrations"));
        assert_eq!(closest("draft_stat", known), Some("draft_state"));
        assert_eq!(closest("trails", known), Some("trials"));
        assert_eq!(closest("colour", known), None);
    }
}
