//! Digests in place of turn content.
//!
//! Reports and failure messages name what a deployment returned only by a
//! short sha2 digest: a secret put in turn state must not travel into a CI
//! log. An adopter debugging locally can set `SYMFONIC_EVALS_SHOW_VALUES=1`
//! to see observed values in full.

use std::fmt::Write as _;
use std::sync::OnceLock;

use sha2::{Digest, Sha256};

/// The environment variable that opts in to plain observed values.
pub const SHOW_VALUES_ENV: &str = "SYMFONIC_EVALS_SHOW_VALUES";

/// `sha256:` and the first twelve hex digits of the digest of `bytes`.
pub fn short_digest(bytes: &[u8]) -> String {
    let mut hex = sha256_hex(bytes);
    hex.truncate(12);
    format!("sha256:{hex}")
}

/// The full sha-256 of `bytes` as lowercase hex; every digest the crate
/// publishes (identities, fingerprints, report digests) is cut from it.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(64);
    for byte in Sha256::digest(bytes) {
        let _ = write!(out, "{byte:02x}");
    }
    out
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
    fn digest_is_stable_and_short() {
        let a = short_digest(b"secret");
        assert_eq!(a, short_digest(b"secret"));
        assert_ne!(a, short_digest(b"secreT"));
        assert!(a.starts_with("sha256:") && a.len() == 19);
        assert!(!a.contains("secret"));
    }
}
