//! Pause tokens as JSON Web Tokens: `header.payload.signature`, each part
//! base64url without padding, signed with HMAC-SHA256 under a secret the
//! desk keeps in its durable directory (so a restarted desk verifies the
//! tokens it issued before). The `jwt-pause-tokens` variant's.

use std::path::Path;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// The file in the durable directory holding the signing secret (hex).
pub const SECRET_FILE: &str = "pause-token.key";

const HEADER: &str = r#"{"alg":"HS256","typ":"JWT"}"#;
const BLOCK: usize = 64;

/// A signing key.
#[derive(Clone)]
pub struct Signer {
    secret: Vec<u8>,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Signer(..)")
    }
}

/// HMAC-SHA256 (RFC 2104) of `message` under `key`.
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|b| b ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Base64url without padding.
pub fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
        }
    }
    out
}

/// Decodes base64url without padding; `None` on any other character, a
/// length no encoding has, or unused bits that are not zero (so every byte
/// string has exactly one spelling).
pub fn decode(text: &str) -> Option<Vec<u8>> {
    if text.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for chunk in text.as_bytes().chunks(4) {
        let mut n = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            let value = ALPHABET.iter().position(|a| a == c)?;
            n |= (value as u32) << (18 - 6 * i);
        }
        let bytes = chunk.len() - 1;
        let unused = n & ((1u32 << (24 - 8 * bytes)) - 1);
        if unused != 0 {
            return None;
        }
        out.extend((0..bytes).map(|i| (n >> (16 - 8 * i)) as u8));
    }
    Some(out)
}

impl Signer {
    /// The desk's signer: the secret in `dir`, created on first use.
    ///
    /// # Errors
    ///
    /// When the secret file can be neither read nor created.
    pub fn in_dir(dir: &Path) -> std::io::Result<Self> {
        let path = dir.join(SECRET_FILE);
        let fresh: String = super::random_words(4)
            .iter()
            .map(|w| format!("{w:016x}"))
            .collect();
        // Created once: a desk that loses the race reads the winner's.
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut file) => std::io::Write::write_all(&mut file, fresh.as_bytes())?,
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(error) => return Err(error),
        }
        let mut secret = std::fs::read(&path)?;
        if secret.is_empty() {
            // A writer that has not finished yet; its secret is the one.
            std::thread::sleep(std::time::Duration::from_millis(20));
            secret = std::fs::read(&path)?;
        }
        Ok(Self { secret })
    }

    /// A signed token carrying `claims`.
    pub fn issue(&self, claims: &Value) -> String {
        let signed = format!(
            "{}.{}",
            encode(HEADER.as_bytes()),
            encode(claims.to_string().as_bytes())
        );
        let signature = hmac_sha256(&self.secret, signed.as_bytes());
        format!("{signed}.{}", encode(&signature))
    }

    /// The claims of `token` when it is a well-formed HS256 token this
    /// signer signed; `None` otherwise.
    pub fn verify(&self, token: &str) -> Option<Value> {
        let mut parts = token.split('.');
        let (header, payload, signature) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        let expected = hmac_sha256(&self.secret, format!("{header}.{payload}").as_bytes());
        let given = decode(signature)?;
        // Compared in full whatever differs first.
        let differs = given.len() != expected.len()
            || given
                .iter()
                .zip(expected)
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                != 0;
        if differs {
            return None;
        }
        let header: Value = serde_json::from_slice(&decode(header)?).ok()?;
        if header.get("alg") != Some(&json!("HS256")) {
            return None;
        }
        serde_json::from_slice(&decode(payload)?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2 of RFC 4231.
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        assert_eq!(
            hex(&mac),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn base64url_round_trips_and_has_one_spelling() {
        for len in 0..40u8 {
            let bytes: Vec<u8> = (0..len).map(|i| i.wrapping_mul(37) ^ 0xa5).collect();
            assert_eq!(decode(&encode(&bytes)).as_deref(), Some(&bytes[..]));
        }
        assert_eq!(encode(b"\xfb\xff"), "-_8");
        // "-_9" spells the same two bytes with a nonzero unused bit.
        assert_eq!(decode("-_9"), None);
        assert_eq!(decode("a"), None);
        assert_eq!(decode("ab+c"), None);
    }

    #[test]
    fn a_token_verifies_only_as_signed_and_only_under_its_secret() {
        let ctx = symfonic_evals::TargetContext::fresh(0).unwrap();
        let signer = Signer::in_dir(ctx.durable_dir()).unwrap();
        let claims = json!({ "sub": "c", "jti": "x" });
        let token = signer.issue(&claims);
        assert_eq!(token.split('.').count(), 3);
        assert_eq!(signer.verify(&token), Some(claims));
        // The same directory, after a restart, verifies it.
        assert!(Signer::in_dir(ctx.durable_dir())
            .unwrap()
            .verify(&token)
            .is_some());
        let (signed, signature) = token.rsplit_once('.').unwrap();
        let mut bytes = decode(signature).unwrap();
        bytes[3] ^= 1;
        assert_eq!(signer.verify(&format!("{signed}.{}", encode(&bytes))), None);
        assert_eq!(signer.verify(&token[..token.len() - 1]), None);
        assert_eq!(signer.verify(&format!("{token}A")), None);
        assert_eq!(signer.verify(&token.to_uppercase()), None);
        let other = symfonic_evals::TargetContext::fresh(1).unwrap();
        assert_eq!(
            Signer::in_dir(other.durable_dir()).unwrap().verify(&token),
            None
        );
    }
}
