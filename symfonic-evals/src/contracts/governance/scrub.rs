//! The credential scrubber: redacts secrets from whatever a rung carries.
//!
//! It leads every rung because secrets travel in tool arguments and tool
//! results at least as often as in the query. Detection is deliberately
//! simple and explicit (no pattern engine): well-known token prefixes,
//! bearer tokens, `key=value` assignments naming a secret, and JSON fields
//! whose key names a secret.

use serde_json::Value;

use super::rulebook::{FailureMode, Phase, CREDENTIAL_SCRUB_STAGE};
use super::stage::{GovernanceStage, Payload, StageError, StageVerdict, Subject};

/// What a redacted secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// Token prefixes issued by common providers, with the least number of token
/// characters that must follow for the match to count as a credential.
const TOKEN_PREFIXES: &[(&str, usize)] = &[
    ("sk-", 16),
    ("sk_live_", 16),
    ("sk_test_", 16),
    ("rk_live_", 16),
    ("ghp_", 20),
    ("gho_", 20),
    ("ghs_", 20),
    ("github_pat_", 20),
    ("xoxb-", 10),
    ("xoxp-", 10),
    ("AKIA", 16),
    ("AIza", 30),
];

/// Names that, written as `name=value` or `name: value`, introduce a secret.
const ASSIGNMENT_KEYS: &[&str] = &[
    "api_key",
    "api-key",
    "apikey",
    "access_token",
    "auth_token",
    "refresh_token",
    "client_secret",
    "secret",
    "password",
    "passwd",
    "token",
];

/// JSON field names (lowercased, `_` and `-` removed) whose value is a secret.
const SECRET_FIELDS: &[&str] = &[
    "apikey",
    "xapikey",
    "accesstoken",
    "authtoken",
    "refreshtoken",
    "sessiontoken",
    "token",
    "secret",
    "clientsecret",
    "password",
    "passwd",
    "authorization",
    "privatekey",
    "credential",
    "credentials",
];

/// Redacts every credential found in `text`; returns the scrubbed text and
/// how many secrets were removed. Running it twice changes nothing more.
///
/// ```
/// use symfonic_evals::contracts::redact_text;
///
/// let (clean, n) = redact_text("use api_key=abc123 and Bearer eyJhbGciOi.x.y");
/// assert_eq!(clean, "use api_key=[REDACTED] and Bearer [REDACTED]");
/// assert_eq!(n, 2);
/// assert_eq!(redact_text(&clean), (clean.clone(), 0));
/// ```
pub fn redact_text(text: &str) -> (String, usize) {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    for start in 0..bytes.len() {
        let boundary = start == 0 || !bytes[start - 1].is_ascii_alphanumeric();
        if !boundary {
            continue;
        }
        spans.extend(prefixed_token(bytes, start));
        spans.extend(bearer_token(bytes, start));
        spans.extend(assigned_secret(bytes, start));
    }
    spans.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    for &(start, end) in &merged {
        out.push_str(&text[cursor..start]);
        out.push_str(REDACTED);
        cursor = end;
    }
    out.push_str(&text[cursor..]);
    (out, merged.len())
}

/// Redacts credentials inside a JSON value in place: whole values of fields
/// named like a secret, and secrets inside every string. Returns how many
/// were removed.
///
/// ```
/// use serde_json::json;
/// use symfonic_evals::contracts::redact_value;
///
/// let mut args = json!({"order": 7, "headers": {"Authorization": "Bearer abcdefgh12345"}, "api_key": "k"});
/// assert_eq!(redact_value(&mut args), 2);
/// assert_eq!(args, json!({"order": 7, "headers": {"Authorization": "[REDACTED]"}, "api_key": "[REDACTED]"}));
/// ```
pub fn redact_value(value: &mut Value) -> usize {
    match value {
        Value::String(text) => {
            let (clean, n) = redact_text(text);
            if n > 0 {
                *text = clean;
            }
            n
        }
        Value::Array(items) => items.iter_mut().map(redact_value).sum(),
        Value::Object(fields) => fields
            .iter_mut()
            .map(|(key, field)| {
                if is_secret_field(key) && holds_secret(field) {
                    *field = Value::String(REDACTED.to_owned());
                    1
                } else {
                    redact_value(field)
                }
            })
            .sum(),
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}

fn is_secret_field(key: &str) -> bool {
    let normalized: String = key
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect();
    SECRET_FIELDS.contains(&normalized.as_str())
}

fn holds_secret(value: &Value) -> bool {
    match value {
        Value::String(text) => !text.is_empty() && text != REDACTED,
        Value::Number(_) => true,
        Value::Array(items) => !items.is_empty(),
        Value::Object(fields) => !fields.is_empty(),
        Value::Null | Value::Bool(_) => false,
    }
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

fn run_length(bytes: &[u8], from: usize, accept: impl Fn(u8) -> bool) -> usize {
    bytes[from.min(bytes.len())..]
        .iter()
        .take_while(|b| accept(**b))
        .count()
}

fn starts_with_ignore_case(bytes: &[u8], at: usize, word: &str) -> bool {
    bytes
        .get(at..at + word.len())
        .is_some_and(|slice| slice.eq_ignore_ascii_case(word.as_bytes()))
}

fn prefixed_token(bytes: &[u8], start: usize) -> Option<(usize, usize)> {
    if start > 0 && is_token_byte(bytes[start - 1]) {
        return None;
    }
    TOKEN_PREFIXES.iter().find_map(|(prefix, least)| {
        if !bytes[start..].starts_with(prefix.as_bytes()) {
            return None;
        }
        let body = run_length(bytes, start + prefix.len(), is_token_byte);
        (body >= *least).then_some((start, start + prefix.len() + body))
    })
}

fn bearer_token(bytes: &[u8], start: usize) -> Option<(usize, usize)> {
    const WORD: &str = "bearer";
    if !starts_with_ignore_case(bytes, start, WORD) {
        return None;
    }
    let after = start + WORD.len();
    let spaces = run_length(bytes, after, |b| b == b' ' || b == b'\t');
    if spaces == 0 {
        return None;
    }
    let token_start = after + spaces;
    let token = run_length(bytes, token_start, |b| {
        b.is_ascii_alphanumeric() || b"-._~+/=_".contains(&b)
    });
    (token >= 8).then_some((token_start, token_start + token))
}

fn assigned_secret(bytes: &[u8], start: usize) -> Option<(usize, usize)> {
    let key = ASSIGNMENT_KEYS
        .iter()
        .find(|key| starts_with_ignore_case(bytes, start, key))?;
    let mut at = start + key.len();
    if bytes
        .get(at)
        .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
    {
        return None;
    }
    at += run_length(bytes, at, |b| b == b'"' || b == b'\'');
    at += run_length(bytes, at, |b| b == b' ' || b == b'\t');
    if !matches!(bytes.get(at), Some(b'=' | b':')) {
        return None;
    }
    at += 1;
    at += run_length(bytes, at, |b| b == b' ' || b == b'\t');
    at += run_length(bytes, at, |b| b == b'"' || b == b'\'');
    if bytes[at..].starts_with(REDACTED.as_bytes()) {
        return None;
    }
    let value = run_length(bytes, at, |b| {
        !(b.is_ascii_whitespace() || b"\"'&,;)]}<>".contains(&b))
    });
    (value > 0).then_some((at, at + value))
}

/// The stage that redacts credentials from the query, tool arguments, tool
/// results and the draft answer, before any later stage sees them. It always
/// passes, and reports how many secrets it removed as `redacted`.
///
/// ```
/// use serde_json::json;
/// use symfonic_evals::contracts::{CredentialScrubber, GovernanceStage, Payload, Subject};
///
/// let mut call = Subject::tool_call("http_get", json!({"url": "https://x.test/?api_key=s3cr3t"}));
/// let verdict = CredentialScrubber::new().judge(&mut call).unwrap();
/// assert_eq!(verdict.counts["redacted"], 1);
/// let Payload::ToolCall { arguments, .. } = &call.payload else { unreachable!() };
/// assert_eq!(arguments["url"], "https://x.test/?api_key=[REDACTED]");
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct CredentialScrubber;

impl CredentialScrubber {
    /// The scrubber.
    pub fn new() -> Self {
        Self
    }
}

impl GovernanceStage for CredentialScrubber {
    fn name(&self) -> &str {
        CREDENTIAL_SCRUB_STAGE
    }

    fn phase(&self) -> Phase {
        Phase::Query
    }

    fn failure_mode(&self) -> FailureMode {
        FailureMode::FailClosed
    }

    fn judge(&self, subject: &mut Subject) -> Result<StageVerdict, StageError> {
        let redacted = match &mut subject.payload {
            Payload::Query { text } | Payload::Draft { answer: text } => {
                let (clean, n) = redact_text(text);
                *text = clean;
                n
            }
            Payload::ToolCall { arguments, .. } => redact_value(arguments),
            Payload::ToolResult { result, .. } => redact_value(result),
        };
        Ok(StageVerdict::pass().count("redacted", redacted as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clean(text: &str) -> String {
        redact_text(text).0
    }

    #[test]
    fn provider_prefixes_need_a_real_token_body() {
        assert_eq!(
            clean("key sk-abcdefghijklmnop1234 end"),
            "key [REDACTED] end"
        );
        assert_eq!(clean("AKIAIOSFODNN7EXAMPLE"), "[REDACTED]");
        assert_eq!(clean("we use sk-learn here"), "we use sk-learn here");
        assert_eq!(
            clean("task-abcdefghijklmnopqrst"),
            "task-abcdefghijklmnopqrst"
        );
    }

    #[test]
    fn assignments_keep_the_name_and_drop_the_value() {
        assert_eq!(clean("password: hunter2, ok"), "password: [REDACTED], ok");
        assert_eq!(clean(r#"{"token": "abc"}"#), r#"{"token": "[REDACTED]"}"#);
        assert_eq!(clean("OPENAI_API_KEY=xyz"), "OPENAI_API_KEY=[REDACTED]");
        assert_eq!(
            clean("a?x=1&access_token=t0k&y=2"),
            "a?x=1&access_token=[REDACTED]&y=2"
        );
        assert_eq!(
            clean("max_tokens=5 tokenizer: bpe"),
            "max_tokens=5 tokenizer: bpe"
        );
    }

    #[test]
    fn bearer_tokens_are_redacted_but_the_word_kept() {
        assert_eq!(
            clean("Authorization: Bearer abc.def-ghi_jk"),
            "Authorization: Bearer [REDACTED]"
        );
        assert_eq!(clean("bearer short"), "bearer short");
    }

    #[test]
    fn text_without_secrets_is_untouched_including_non_ascii() {
        let text = "Rückerstattung für Bestellung 3 — token счёт";
        assert_eq!(redact_text(text), (text.to_owned(), 0));
    }

    #[test]
    fn secret_fields_are_replaced_whole() {
        let mut value = serde_json::json!({"Client-Secret": 42, "password": "", "note": "fine"});
        assert_eq!(redact_value(&mut value), 1);
        assert_eq!(
            value,
            serde_json::json!({"Client-Secret": REDACTED, "password": "", "note": "fine"})
        );
        assert_eq!(redact_value(&mut value), 0);
    }
}
