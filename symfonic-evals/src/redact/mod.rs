//! Digests in place of turn content.
//!
//! Reports and failure messages name what a deployment returned only by a
//! short sha2 digest: a secret put in turn state must not travel into a CI
//! log. Three things are shown anyway: booleans and null (a digest of `false`
//! hides nothing), values equal to one in the pack's own arguments (public
//! already), and the shape of JSON (paths, types). An adopter debugging
//! locally sets `SYMFONIC_EVALS_SHOW_VALUES=evidence` to see evidence values
//! (attributes, tool arguments) in full while answers and model input stay
//! digested, or `SYMFONIC_EVALS_SHOW_VALUES=1` to see everything.

mod json;

use std::sync::OnceLock;

use sha2::{Digest, Sha256};

pub use json::PublicValues;
pub(crate) use json::{expected_vs_found, json_diff, json_diff_bounded, render_path, shape};

/// The environment variable that opts in to plain observed values.
pub const SHOW_VALUES_ENV: &str = "SYMFONIC_EVALS_SHOW_VALUES";

/// How much of what a deployment reported a report shows in clear.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Shown {
    /// Digests only (the default, and what CI should run with).
    Digests,
    /// Evidence values (attributes, tool arguments and results) in full;
    /// free text (answers, model input, messages) still digested.
    Evidence,
    /// Everything.
    Everything,
}

/// What `SYMFONIC_EVALS_SHOW_VALUES` asks for: unset, empty, `0` or `false`
/// digests everything; `evidence` (or `attributes`) shows evidence values;
/// anything else shows everything.
pub fn shown() -> Shown {
    static SHOWN: OnceLock<Shown> = OnceLock::new();
    *SHOWN.get_or_init(|| match std::env::var(SHOW_VALUES_ENV).as_deref() {
        Err(_) | Ok("" | "0" | "false") => Shown::Digests,
        Ok("evidence" | "attributes") => Shown::Evidence,
        Ok(_) => Shown::Everything,
    })
}

/// The line a failing account ends with: how to see what it digested.
pub fn how_to_see_values() -> String {
    format!(
        "values are shown as digests; to see them locally, run with {SHOW_VALUES_ENV}=evidence \
         (attributes and tool arguments) or {SHOW_VALUES_ENV}=1 (answers and model input too)"
    )
}

/// `sha256:` and the first twelve hex digits of the digest of `bytes`.
pub fn short_digest(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(19);
    out.push_str("sha256:");
    push_hex(&mut out, &Sha256::digest(bytes)[..6]);
    out
}

/// The full sha-256 of `bytes` as lowercase hex; every digest the crate
/// publishes (identities, fingerprints, report digests) is cut from it.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(64);
    push_hex(&mut out, &Sha256::digest(bytes));
    out
}

/// Appends `bytes` as lowercase hex (a report digest is made on every step,
/// so this stays allocation-free).
fn push_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
}

/// Whether the adopter opted in to seeing every observed value.
pub fn show_values() -> bool {
    shown() == Shown::Everything
}

/// Free text the deployment reported (an answer, model input, a message),
/// rendered as a digest unless the adopter opted in to everything.
pub fn sensitive(text: &str) -> String {
    if show_values() {
        text.to_owned()
    } else {
        short_digest(text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_sha256_in_lowercase_hex() {
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(sha256_hex(b"abc"), abc);
        assert_eq!(short_digest(b"abc"), format!("sha256:{}", &abc[..12]));
    }

    #[test]
    fn digest_is_stable_and_short() {
        let a = short_digest(b"secret");
        assert_eq!(a, short_digest(b"secret"));
        assert_ne!(a, short_digest(b"secreT"));
        assert!(a.starts_with("sha256:") && a.len() == 19);
        assert!(!a.contains("secret"));
    }
}
