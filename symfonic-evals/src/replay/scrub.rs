//! What never reaches a cassette: credentials (known key prefixes, bearer
//! tokens, secret-named JSON fields, via the contracts' scrubber), the
//! upstream key itself, and the adopter's own patterns.
//!
//! Headers are not scrubbed here because none are stored: a cassette keeps
//! a request's method, path and body, and a response's status, content type
//! and body. `Authorization`, `x-api-key`, `Cookie` and `Set-Cookie` cannot
//! be written by construction.

use serde_json::Value;

use crate::contracts::{redact_text, redact_value, REDACTED};

/// The scrubber for one pack run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scrubber {
    patterns: Vec<Pattern>,
    literals: Vec<String>,
}

/// Literal pieces separated by `*` (a run of token characters).
#[derive(Debug, Clone)]
struct Pattern {
    pieces: Vec<String>,
}

fn is_token_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-')
}

impl Pattern {
    fn parse(text: &str) -> Option<Self> {
        let pieces: Vec<String> = text.split('*').map(str::to_owned).collect();
        // A pattern of wildcards alone would scrub every word.
        pieces
            .iter()
            .any(|p| !p.is_empty())
            .then_some(Self { pieces })
    }

    /// The end of a match starting at `start`, if any (longest runs).
    fn match_at(&self, bytes: &[u8], start: usize) -> Option<usize> {
        let mut at = start;
        for (i, piece) in self.pieces.iter().enumerate() {
            if i > 0 {
                // The `*` before this piece: a non-empty run of token characters,
                // stopping where the next piece begins (or at the run's end).
                let run = bytes[at..]
                    .iter()
                    .take_while(|b| is_token_char(**b))
                    .count();
                if run == 0 {
                    return None;
                }
                if piece.is_empty() {
                    at += run;
                    continue;
                }
                let found = (1..=run).find(|n| bytes[at + n..].starts_with(piece.as_bytes()))?;
                at += found;
            }
            if !bytes[at..].starts_with(piece.as_bytes()) {
                return None;
            }
            at += piece.len();
        }
        (at > start).then_some(at)
    }
}

impl Scrubber {
    /// A scrubber for `patterns` that also removes each of `literals` (the
    /// upstream key) wherever it appears.
    pub(crate) fn new(patterns: &[String], literals: &[String]) -> Self {
        Self {
            patterns: patterns.iter().filter_map(|p| Pattern::parse(p)).collect(),
            literals: literals.iter().filter(|l| l.len() >= 4).cloned().collect(),
        }
    }

    /// `text` with every credential and pattern replaced by `[REDACTED]`;
    /// whether anything was.
    pub(crate) fn text(&self, text: &str) -> (String, bool) {
        let (mut out, n) = redact_text(text);
        let mut changed = n > 0;
        for literal in &self.literals {
            if out.contains(literal.as_str()) {
                out = out.replace(literal.as_str(), REDACTED);
                changed = true;
            }
        }
        if !self.patterns.is_empty() {
            let replaced = self.patterns_in(&out);
            if replaced != out {
                out = replaced;
                changed = true;
            }
        }
        (out, changed)
    }

    fn patterns_in(&self, text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let mut cursor = 0;
        let mut i = 0;
        while i < bytes.len() {
            // Only at character boundaries, so slicing stays valid.
            if text.is_char_boundary(i) {
                let end = self
                    .patterns
                    .iter()
                    .filter_map(|p| p.match_at(bytes, i))
                    .max();
                if let Some(end) = end.filter(|e| text.is_char_boundary(*e)) {
                    out.push_str(&text[cursor..i]);
                    out.push_str(REDACTED);
                    cursor = end;
                    i = end;
                    continue;
                }
            }
            i += 1;
        }
        out.push_str(&text[cursor..]);
        out
    }

    /// Scrubs `value` in place: secret-named fields and secrets in strings.
    pub(crate) fn value(&self, value: &mut Value) {
        redact_value(value);
        if self.patterns.is_empty() && self.literals.is_empty() {
            return;
        }
        match value {
            Value::String(text) => {
                let (clean, changed) = self.text(text);
                if changed {
                    *text = clean;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.value(v)),
            Value::Object(fields) => fields.values_mut().for_each(|v| self.value(v)),
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn credentials_keys_and_patterns_are_scrubbed() {
        let s = Scrubber::new(
            &["acct-*".into(), "int.example".into()],
            &["k3y-literal".into()],
        );
        let (out, changed) =
            s.text("use sk-abcdefghijklmnopqrstu for acct-93x, via int.example, key k3y-literal");
        assert!(changed);
        assert_eq!(
            out,
            "use [REDACTED] for [REDACTED], via [REDACTED], key [REDACTED]"
        );
        let mut v = json!({"api_key": "x", "note": "acct-7 paid", "n": 1});
        s.value(&mut v);
        assert_eq!(
            v,
            json!({"api_key": "[REDACTED]", "note": "[REDACTED] paid", "n": 1})
        );
    }

    #[test]
    fn plain_text_is_left_alone() {
        let s = Scrubber::new(&["acct-*".into(), "*".into()], &[]);
        let (out, changed) = s.text("the helpdesk-py account acct- is fine");
        assert!(!changed, "{out}");
    }

    #[test]
    fn a_wildcard_between_pieces_matches_a_token_run() {
        let s = Scrubber::new(&["id=*;".into()], &[]);
        assert_eq!(s.text("a id=x-9; b").0, "a [REDACTED] b");
        assert!(!s.text("a id=; b").1);
    }
}
