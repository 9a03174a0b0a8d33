//! Whether one pause token can be told from another: the
//! token-predictable probe's reading of the tokens a deployment issued.
//!
//! A forged token is refused by any deployment that looks tokens up, so
//! the forged-token probe cannot see a token numbered one after another:
//! what makes such a token unsafe is that whoever holds one can work out
//! the next. The harness does what that person would. It lays two tokens
//! side by side, names of conversations blanked (a token may spell its
//! conversation), and finds the one stretch where they differ. When that
//! stretch is a number (decimal or hex) in both and the later number is the
//! earlier one moved on by a little (a counter, a timestamp), the later
//! token is predictable. "A little" scales with the stretch's width: at
//! most the square root of the numbers it can hold, so a counter moved on
//! by one, a millisecond clock moved on by minutes or a nanosecond clock by
//! seconds are caught, while two random numbers of the same width, which
//! differ by about the width itself, are not. Random ids with a time prefix
//! (UUIDv7, ULID, KSUID) and signed tokens differ in their random part or
//! signature as well, so the stretch spans more than one number and the
//! later token is never predicted from the earlier.

/// How the later token follows from the earlier one, in words that carry
/// no token: where the moved number sits and by how much it moved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Prediction {
    /// Characters from the token's start to the number that moved.
    pub offset: usize,
    /// How the number is written.
    pub radix: u32,
    /// How far it moved on.
    pub step: u128,
}

impl std::fmt::Display for Prediction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let radix = if self.radix == 16 { "hex" } else { "decimal" };
        write!(
            f,
            "the earlier token with its {radix} number at character {} moved on by {}",
            self.offset, self.step
        )
    }
}

/// Stands in for a conversation's name inside a token: no token holds it.
const BLANK: char = '\u{0}';

/// `token` with every conversation name in `conversations` (of three
/// characters or more, longest first) blanked.
fn blanked(token: &str, conversations: &[&str]) -> String {
    let mut names: Vec<&str> = conversations
        .iter()
        .copied()
        .filter(|name| name.chars().count() >= 3)
        .collect();
    names.sort_by_key(|name| std::cmp::Reverse(name.len()));
    let mut out = token.to_owned();
    for name in names {
        out = out.replace(name, &BLANK.to_string());
    }
    out
}

/// How `later` follows from `earlier` when it does: they differ in one
/// number alone, and the later number is the earlier moved on by at most
/// the square root of what a number of that width can hold (and by at
/// least one). `conversations` are blanked in both first.
pub(crate) fn predicts(earlier: &str, later: &str, conversations: &[&str]) -> Option<Prediction> {
    let (earlier, later) = (
        blanked(earlier, conversations),
        blanked(later, conversations),
    );
    let (a, b): (Vec<char>, Vec<char>) = (earlier.chars().collect(), later.chars().collect());
    if a == b {
        return None;
    }
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let room = a.len().min(b.len()) - prefix;
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(room)
        .take_while(|(x, y)| x == y)
        .count();
    // Widen the differing stretch to the whole run of hex digits around
    // it: `…19` against `…20` differs in two digits of one number.
    let is_digit = |c: &char| c.is_ascii_hexdigit();
    let start = prefix - a[..prefix].iter().rev().take_while(|c| is_digit(c)).count();
    let tail = a[a.len() - suffix..]
        .iter()
        .take_while(|c| is_digit(c))
        .count();
    let run_a: String = a[start..a.len() - suffix + tail].iter().collect();
    let run_b: String = b[start..b.len() - suffix + tail].iter().collect();
    if run_a.is_empty()
        || run_b.is_empty()
        || !run_a.chars().chain(run_b.chars()).all(|c| is_digit(&c))
    {
        return None;
    }
    let radix = if run_a
        .chars()
        .chain(run_b.chars())
        .all(|c| c.is_ascii_digit())
    {
        10
    } else {
        16
    };
    let width = run_a.len().max(run_b.len());
    let (from, to) = (
        u128::from_str_radix(&run_a, radix).ok()?,
        u128::from_str_radix(&run_b, radix).ok()?,
    );
    let step = to.checked_sub(from).filter(|step| *step > 0)?;
    (step <= reach(radix, width)).then_some(Prediction {
        offset: start,
        radix,
        step,
    })
}

/// How far a number `width` digits wide in `radix` may move and still be
/// a guess: the square root of the numbers it can hold, and never less
/// than 16, so a one-digit counter is a guess too.
fn reach(radix: u32, width: usize) -> u128 {
    let bits = f64::from(radix).log2() * width as f64;
    let half = (bits / 2.0).min(126.0);
    (2f64.powf(half) as u128).max(16)
}

/// The guess a holder of `token` makes at the next one: its last number
/// moved on by one and written as wide as it was. The number is the last
/// run of hex digits holding a decimal digit (a word such as `cafe` is
/// not a number), read as decimal when every digit is, else as hex.
/// `None` when the token holds no number.
pub(crate) fn next_guess(token: &str) -> Option<String> {
    let chars: Vec<char> = token.chars().collect();
    let mut end = chars.len();
    while end > 0 {
        if !chars[end - 1].is_ascii_hexdigit() {
            end -= 1;
            continue;
        }
        let start = end
            - chars[..end]
                .iter()
                .rev()
                .take_while(|c| c.is_ascii_hexdigit())
                .count();
        let run: String = chars[start..end].iter().collect();
        if run.chars().any(|c| c.is_ascii_digit()) {
            let decimal = run.chars().all(|c| c.is_ascii_digit());
            let next = u128::from_str_radix(&run, if decimal { 10 } else { 16 })
                .ok()?
                .checked_add(1)?;
            let width = run.len();
            let written = if decimal {
                format!("{next:0width$}")
            } else if run.chars().any(|c| c.is_ascii_uppercase()) {
                format!("{next:0width$X}")
            } else {
                format!("{next:0width$x}")
            };
            let before: String = chars[..start].iter().collect();
            let after: String = chars[end..].iter().collect();
            return Some(format!("{before}{written}{after}"));
        }
        end = start;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn predicted(earlier: &str, later: &str) -> bool {
        predicts(earlier, later, &["approval-t1", "approval-t2"]).is_some()
    }

    #[test]
    fn counters_and_clocks_are_predicted() {
        assert!(predicted("pt_000007", "pt_000008"));
        assert!(predicted("tok-9", "tok-10"), "a counter that grows a digit");
        assert!(predicted("pause-00af", "pause-00b0"), "a hex counter");
        assert!(predicted("PAUSE-00AF", "PAUSE-00B4"), "upper-case hex");
        assert!(
            predicted("t1701600000123", "t1701600004567"),
            "a millisecond clock"
        );
        assert!(
            predicted("n1701600000123456789", "n1701600002123456789"),
            "a nanosecond clock two seconds on"
        );
        assert!(
            predicted("approval-t1:17", "approval-t2:18"),
            "the conversation's name spelled in the token"
        );
        let how = predicts("pt_000007", "pt_000009", &[]).unwrap();
        assert_eq!((how.offset, how.radix, how.step), (3, 10, 2));
        assert!(how.to_string().contains("moved on by 2"));
    }

    #[test]
    fn random_and_time_prefixed_ids_are_not() {
        for (earlier, later) in [
            // Random (UUIDv4, hex and base64url from a CSPRNG).
            (
                "3b241101-e2bb-4255-8caf-4136c566a962",
                "b7f2c1a9-0d4e-4a51-9c3e-2f6b8d1e7a40",
            ),
            ("pt_9f86d081884c7d659a2feaa0c55ad015", "pt_2c26b46b68ffc68ff99b453c1d304134"),
            ("Xq2v_9LkT0aZ-mB3", "h7R-pQ4wZc1_Yx8e"),
            // UUIDv7: a millisecond prefix, then random bits.
            (
                "018c2b5e-8f21-7a3c-9d4e-5f6a7b8c9d0e",
                "018c2b5e-8f24-7e91-b2c3-d4e5f6a7b8c9",
            ),
            // ULID and KSUID: time, then randomness, in base 32 and 62.
            ("01HGW2Q8XK3M7V9ZB4T6N5R2PD", "01HGW2Q8XN8F2J6WQ1C3Y7H4KE"),
            ("2ZSgjbYNcyRAz4hYrMf1R2lGtvA", "2ZSgjeHmW3q6TfUQpKx1vD9bNnC"),
            // A signed token: the claims and the signature both differ.
            (
                "eyJhbGciOiJIUzI1NiJ9.eyJpYXQiOjE3MDE2MDAwMDB9.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
                "eyJhbGciOiJIUzI1NiJ9.eyJpYXQiOjE3MDE2MDAwMDF9.Kx3q0p_9M7vLw2cT1nZrY8aB4hU6sD5eF0gJ3kQ2iXo",
            ),
        ] {
            assert!(!predicted(earlier, later), "{earlier} -> {later}");
        }
    }

    #[test]
    fn a_counter_that_goes_back_or_stands_still_is_not_a_prediction() {
        assert!(!predicted("pt_000008", "pt_000007"));
        assert!(!predicted("pt_000008", "pt_000008"));
        assert!(!predicted("", "pt_1"));
    }

    #[test]
    fn short_random_numbers_are_rarely_within_reach() {
        // Two random 32-bit numbers land within 2^16 of each other, the
        // later above, about once in 130,000 pairs.
        assert!(!predicted("r-8f3a21c0", "r-2b9e7d14"));
        assert_eq!(reach(16, 8), 1 << 16);
        assert_eq!(reach(10, 1), 16);
    }

    #[test]
    fn the_next_guess_moves_the_last_number_on() {
        assert_eq!(next_guess("pt_000007").as_deref(), Some("pt_000008"));
        assert_eq!(next_guess("tok-9").as_deref(), Some("tok-10"));
        assert_eq!(next_guess("a-7-b").as_deref(), Some("a-8-b"));
        assert_eq!(next_guess("pause-00AF").as_deref(), Some("pause-00B0"));
        assert_eq!(next_guess("no digits"), None);
    }
}
