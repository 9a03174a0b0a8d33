//! Forgeries of retained values: a token (or question id) derived from the
//! genuine one that means something else, so a deployment that never checks
//! what it is handed is caught by the harness's own input.
//!
//! "Means something else" is stricter than "is another string". A token is
//! often an encoding (base64url above all: every JWT, and what most token
//! generators return), and the last character of such a token may carry bits
//! the decoding drops: change only those and the forgery decodes to the
//! genuine bytes, so a correct deployment that decodes before it compares
//! accepts it and would be failed for it. Every forgery here is checked
//! against each reading a deployment may give a token (the text itself, hex,
//! base64 and base64url with or without padding, dot-separated base64url
//! segments) and is never the same as the genuine one under any of them.

use crate::scenario::step::Forgery;

const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// `genuine` forged the way `how` says; never a token that reads the same
/// as `genuine` (see the module's account).
pub(crate) fn forged(genuine: &str, how: Forgery) -> String {
    if genuine.is_empty() {
        return "x".to_owned();
    }
    let candidate = match how {
        Forgery::Value => Some(value(genuine)),
        Forgery::LetterCase => letter_case(genuine),
        Forgery::Truncated => truncated(genuine),
        Forgery::Extended => Some(extended(genuine)),
    };
    match candidate {
        Some(candidate) if !same_meaning(genuine, &candidate) => candidate,
        _ => fallback(genuine),
    }
}

/// One decoded byte flipped and encoded again, where the token reads as an
/// encoding; otherwise the last letter or digit moved on in its class.
fn value(genuine: &str) -> String {
    if let Some((head, signature)) = genuine.rsplit_once('.') {
        if let Some(flipped) = flip_base64(signature, URL_SAFE) {
            return format!("{head}.{flipped}");
        }
    }
    if decode_hex(genuine).is_some() {
        // A hex digit is four whole bits: flipping the first one's lowest
        // bit flips a decoded byte, and keeps the digit's class and case.
        let mut bytes = genuine.as_bytes().to_vec();
        if let Some(digit) = bytes.iter_mut().find(|b| b.is_ascii_hexdigit()) {
            *digit = next_hex(*digit);
        }
        return String::from_utf8(bytes).unwrap_or_default();
    }
    if let Some(flipped) = flip_base64(genuine, URL_SAFE).or_else(|| flip_base64(genuine, STANDARD))
    {
        return flipped;
    }
    let mut chars: Vec<char> = genuine.chars().collect();
    match chars.iter().rposition(char::is_ascii_alphanumeric) {
        Some(at) => chars[at] = next_in_class(chars[at]),
        None => chars[0] = if chars[0] == 'x' { 'y' } else { 'x' },
    }
    chars.into_iter().collect()
}

/// The last letter whose case change changes the token's meaning, flipped.
fn letter_case(genuine: &str) -> Option<String> {
    let chars: Vec<char> = genuine.chars().collect();
    (0..chars.len()).rev().find_map(|at| {
        let c = chars[at];
        if !c.is_ascii_alphabetic() {
            return None;
        }
        let mut forged = chars.clone();
        forged[at] = if c.is_ascii_lowercase() {
            c.to_ascii_uppercase()
        } else {
            c.to_ascii_lowercase()
        };
        let forged: String = forged.into_iter().collect();
        (!same_meaning(genuine, &forged)).then_some(forged)
    })
}

/// The longest proper prefix that reads differently from `genuine`.
fn truncated(genuine: &str) -> Option<String> {
    let ends: Vec<usize> = genuine.char_indices().map(|(at, _)| at).collect();
    ends.into_iter()
        .rev()
        .map(|end| &genuine[..end])
        .find(|prefix| !same_meaning(genuine, prefix))
        .map(str::to_owned)
}

/// `genuine` with a character of its own alphabet appended (more than one
/// only if one would read the same).
fn extended(genuine: &str) -> String {
    let extra = if decode_hex(genuine).is_some() {
        '0'
    } else if decode_base64(genuine, URL_SAFE).is_some()
        || decode_base64(genuine, STANDARD).is_some()
    {
        'A'
    } else {
        genuine
            .chars()
            .rev()
            .find(char::is_ascii_alphanumeric)
            .unwrap_or('x')
    };
    let mut forged = genuine.to_owned();
    for _ in 0..4 {
        forged.push(extra);
        if !same_meaning(genuine, &forged) {
            break;
        }
    }
    forged
}

/// The first single-character change that reads differently, for a way of
/// forging that found none of its own (a letter-case flip of a hex token).
fn fallback(genuine: &str) -> String {
    let value = value(genuine);
    if !same_meaning(genuine, &value) {
        return value;
    }
    let chars: Vec<char> = genuine.chars().collect();
    (0..chars.len())
        .map(|at| {
            let mut forged = chars.clone();
            forged[at] = next_in_class(chars[at]);
            forged.into_iter().collect::<String>()
        })
        .find(|forged| !same_meaning(genuine, forged))
        .unwrap_or_else(|| format!("{genuine}x"))
}

/// The next character of `c`'s class (`9` to `0`, `z` to `a`), or `x`.
fn next_in_class(c: char) -> char {
    match c {
        '0'..='8' | 'a'..='y' | 'A'..='Y' => char::from_u32(c as u32 + 1).unwrap_or('x'),
        '9' => '0',
        'z' => 'a',
        'Z' => 'A',
        _ => 'x',
    }
}

/// A hex digit with its lowest bit flipped, in the same case.
fn next_hex(digit: u8) -> u8 {
    match digit {
        b'0'..=b'9' => b'0' + ((digit - b'0') ^ 1),
        b'a'..=b'f' => b'a' + ((digit - b'a') ^ 1),
        b'A'..=b'F' => b'A' + ((digit - b'A') ^ 1),
        other => other,
    }
}

/// Whether a deployment could read `a` and `b` as the same token: equal
/// text, or equal bytes under one of the encodings both are valid in.
pub(crate) fn same_meaning(a: &str, b: &str) -> bool {
    fn both<T: PartialEq>(read: impl Fn(&str) -> Option<T>, a: &str, b: &str) -> bool {
        matches!((read(a), read(b)), (Some(x), Some(y)) if x == y)
    }
    a == b
        || both(decode_hex, a, b)
        || both(|s| decode_base64(s, URL_SAFE), a, b)
        || both(|s| decode_base64(s, STANDARD), a, b)
        || both(decode_segments, a, b)
}

/// The bytes of a hex token (either case, `-` separators as in a UUID
/// ignored); `None` when it is not one.
fn decode_hex(token: &str) -> Option<Vec<u8>> {
    let digits: Vec<u8> = token.bytes().filter(|&b| b != b'-').collect();
    if digits.is_empty() || digits.len() % 2 == 1 || token.starts_with('-') {
        return None;
    }
    let nibble = |d: u8| char::from(d).to_digit(16).map(|n| n as u8);
    digits
        .chunks(2)
        .map(|pair| Some(nibble(pair[0])? << 4 | nibble(pair[1])?))
        .collect()
}

/// The bytes of a base64 token in `alphabet`, padding optional, the unused
/// bits of its last character ignored (as decoders do); `None` when it is
/// not one.
pub(crate) fn decode_base64(token: &str, alphabet: &[u8; 64]) -> Option<Vec<u8>> {
    let body = token.trim_end_matches('=');
    if body.is_empty() || body.len() % 4 == 1 || token.len() - body.len() > 2 {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let (mut acc, mut bits) = (0_u32, 0_u32);
    for c in body.bytes() {
        let sextet = alphabet.iter().position(|&a| a == c)?;
        acc = (acc << 6) | sextet as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// `bytes` in base64 of `alphabet`, padded to a multiple of four or not.
pub(crate) fn encode_base64(bytes: &[u8], alphabet: &[u8; 64], padded: bool) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0_u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(alphabet[(n >> (18 - 6 * i) & 63) as usize]));
        }
        if padded {
            out.extend(std::iter::repeat_n('=', 3 - chunk.len()));
        }
    }
    out
}

/// The segments of a dotted token (a JWT's header, payload and signature),
/// each read as base64url; `None` unless it has a dot and every segment
/// reads.
fn decode_segments(token: &str) -> Option<Vec<Vec<u8>>> {
    if !token.contains('.') {
        return None;
    }
    token
        .split('.')
        .map(|segment| match segment {
            "" => Some(Vec::new()),
            _ => decode_base64(segment, URL_SAFE),
        })
        .collect()
}

/// `segment` read as base64 in `alphabet`, its first byte flipped, and
/// encoded again as it was (padded or not).
fn flip_base64(segment: &str, alphabet: &[u8; 64]) -> Option<String> {
    let mut bytes = decode_base64(segment, alphabet)?;
    // Bit 2 of the first byte is the lowest bit of the first character, so
    // the forgery differs from the genuine token in that one place.
    *bytes.first_mut()? ^= 0x04;
    Some(encode_base64(&bytes, alphabet, segment.ends_with('=')))
}

#[cfg(test)]
mod tests;
