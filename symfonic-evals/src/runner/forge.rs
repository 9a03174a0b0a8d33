//! Forgeries of retained values: a token (or question id) of the genuine
//! one's shape with a different value, so a deployment that never checks
//! what it is handed is caught by the harness's own input.

/// `genuine` with its last letter or digit moved to the next one of its
/// class (`9` to `0`, `z` to `a`): same length, same character classes, a
/// different value. A token compared only by a prefix, or not at all,
/// accepts it; a token looked up exactly refuses it.
pub(crate) fn forged(genuine: &str) -> String {
    let mut chars: Vec<char> = genuine.chars().collect();
    let next = |c: char| match c {
        '0'..='8' | 'a'..='y' | 'A'..='Y' => char::from_u32(c as u32 + 1),
        '9' => Some('0'),
        'z' => Some('a'),
        'Z' => Some('A'),
        _ => None,
    };
    match chars.iter().rposition(|c| c.is_ascii_alphanumeric()) {
        Some(at) => chars[at] = next(chars[at]).unwrap_or('x'),
        None if chars.is_empty() => return "x".to_owned(),
        None => chars[0] = if chars[0] == 'x' { 'y' } else { 'x' },
    }
    chars.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::forged;

    #[test]
    fn a_forgery_keeps_the_shape_and_changes_the_value() {
        for (genuine, fake) in [
            ("tok-0a9f", "tok-0a9g"),
            ("1239", "1230"),
            ("ABCZ", "ABCA"),
            ("t_z", "t_a"),
            ("--", "x-"),
            ("", "x"),
        ] {
            assert_eq!(forged(genuine), fake, "{genuine}");
        }
    }
}
