//! The canonical form of a model request, which is what a cassette keys on:
//! the method, the path and the JSON body with its keys sorted, the
//! volatile fields removed, credentials scrubbed and the MCP fixture's
//! nonces masked. Two requests that
//! differ only in key order, a volatile field or a secret are the same
//! request.

use serde_json::{Map, Value};

use super::scrub::Scrubber;
use crate::redact::sha256_hex;

/// A request reduced to what it asks.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CanonicalRequest {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) body: Value,
    /// Full sha-256 (hex) of method, path and the canonical body.
    pub(crate) key: String,
}

impl CanonicalRequest {
    /// Canonicalises a parsed body.
    pub(crate) fn new(
        method: &str,
        path: &str,
        mut body: Value,
        volatile: &[VolatilePath],
        scrubber: &Scrubber,
    ) -> Self {
        for field in volatile {
            field.remove(&mut body);
        }
        scrubber.value(&mut body);
        crate::mcp::mask_nonces(&mut body);
        let body = sorted(body);
        let key = request_key(method, path, &body);
        Self {
            method: method.to_owned(),
            path: path.to_owned(),
            body,
            key,
        }
    }

    /// `sha256:` and twelve hex digits of the key, as messages print it.
    pub(crate) fn short(&self) -> String {
        format!("sha256:{}", &self.key[..12])
    }
}

/// The key of an already canonical body.
pub(crate) fn request_key(method: &str, path: &str, body: &Value) -> String {
    let mut text = String::with_capacity(64);
    text.push_str(method);
    text.push(' ');
    text.push_str(path);
    text.push('\n');
    text.push_str(&body.to_string());
    sha256_hex(text.as_bytes())
}

/// `value` with every object's keys in sorted order, recursively.
pub(crate) fn sorted(value: Value) -> Value {
    match value {
        Value::Object(fields) => {
            let mut entries: Vec<(String, Value)> = fields.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, sorted(v)))
                    .collect::<Map<String, Value>>(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// A volatile field: a dotted path in which `*` matches any key or index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VolatilePath {
    segments: Vec<String>,
}

impl VolatilePath {
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let segments: Vec<String> = text.split('.').map(str::to_owned).collect();
        segments
            .iter()
            .all(|s| !s.is_empty())
            .then_some(Self { segments })
    }

    pub(crate) fn remove(&self, value: &mut Value) {
        remove_at(value, &self.segments);
    }
}

fn remove_at(value: &mut Value, segments: &[String]) {
    let Some((first, rest)) = segments.split_first() else {
        return;
    };
    match value {
        Value::Object(fields) => {
            if rest.is_empty() {
                if first == "*" {
                    fields.clear();
                } else {
                    fields.remove(first.as_str());
                }
            } else if first == "*" {
                fields.values_mut().for_each(|v| remove_at(v, rest));
            } else if let Some(v) = fields.get_mut(first.as_str()) {
                remove_at(v, rest);
            }
        }
        Value::Array(items) => {
            if first == "*" {
                if rest.is_empty() {
                    items.clear();
                } else {
                    items.iter_mut().for_each(|v| remove_at(v, rest));
                }
            } else if let Ok(index) = first.parse::<usize>() {
                if rest.is_empty() {
                    if index < items.len() {
                        items.remove(index);
                    }
                } else if let Some(v) = items.get_mut(index) {
                    remove_at(v, rest);
                }
            }
        }
        _ => {}
    }
}

/// Parses every volatile field, skipping malformed ones (an empty segment).
pub(crate) fn volatile_paths(fields: &[String]) -> Vec<VolatilePath> {
    fields
        .iter()
        .filter_map(|f| VolatilePath::parse(f))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn canon(body: Value, volatile: &[&str]) -> CanonicalRequest {
        let fields: Vec<String> = volatile.iter().map(|s| (*s).to_owned()).collect();
        CanonicalRequest::new(
            "POST",
            "/v1/chat/completions",
            body,
            &volatile_paths(&fields),
            &Scrubber::default(),
        )
    }

    #[test]
    fn key_order_does_not_change_the_key() {
        let a = canon(
            json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
            &[],
        );
        let b = canon(
            json!({"messages": [{"content": "hi", "role": "user"}], "model": "m"}),
            &[],
        );
        assert_eq!(a.key, b.key);
        assert_eq!(
            a.body.to_string(),
            r#"{"messages":[{"content":"hi","role":"user"}],"model":"m"}"#
        );
    }

    #[test]
    fn volatile_fields_are_ignored_and_others_are_not() {
        let a = canon(
            json!({"model": "m", "user": "u1", "metadata": {"user_id": "x", "k": 1}}),
            &["user", "metadata.user_id"],
        );
        let b = canon(
            json!({"model": "m", "user": "u2", "metadata": {"user_id": "y", "k": 1}}),
            &["user", "metadata.user_id"],
        );
        assert_eq!(a.key, b.key);
        let c = canon(
            json!({"model": "m", "user": "u2", "metadata": {"user_id": "y", "k": 2}}),
            &["user", "metadata.user_id"],
        );
        assert_ne!(a.key, c.key);
        let d = canon(
            json!({"model": "m2", "user": "u1", "metadata": {"user_id": "x", "k": 1}}),
            &["user", "metadata.user_id"],
        );
        assert_ne!(a.key, d.key);
    }

    #[test]
    fn wildcards_reach_into_arrays_and_objects() {
        let a = canon(
            json!({"messages": [{"id": 1, "c": "x"}, {"id": 2, "c": "y"}]}),
            &["messages.*.id"],
        );
        assert_eq!(a.body, json!({"messages": [{"c": "x"}, {"c": "y"}]}));
        assert!(VolatilePath::parse("a..b").is_none());
    }

    #[test]
    fn method_and_path_are_part_of_the_key() {
        let body = json!({"model": "m"});
        let chat = request_key("POST", "/v1/chat/completions", &body);
        assert_ne!(chat, request_key("POST", "/v1/responses", &body));
        assert_ne!(chat, request_key("PUT", "/v1/chat/completions", &body));
    }
}
