//! Digests in place of turn content.
//!
//! Reports and failure messages name what a deployment returned only by a
//! short sha2 digest: a secret put in turn state must not travel into a CI
//! log. An adopter debugging locally can set `SYMFONIC_EVALS_SHOW_VALUES=1`
//! to see observed values in full.

use std::sync::OnceLock;

use sha2::{Digest, Sha256};

/// The environment variable that opts in to plain observed values.
pub const SHOW_VALUES_ENV: &str = "SYMFONIC_EVALS_SHOW_VALUES";

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

/// Whether the adopter opted in to seeing observed values.
pub fn show_values() -> bool {
    static SHOW: OnceLock<bool> = OnceLock::new();
    *SHOW.get_or_init(|| {
        std::env::var(SHOW_VALUES_ENV).is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
    })
}

/// A value the deployment reported, rendered as a digest unless the adopter
/// opted in to plain values.
pub fn sensitive(text: &str) -> String {
    if show_values() {
        text.to_owned()
    } else {
        short_digest(text.as_bytes())
    }
}

/// [`sensitive`] for a JSON value (digest of its compact serialization).
pub fn sensitive_json(value: &serde_json::Value) -> String {
    sensitive(&value.to_string())
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
