//! Scripted upstreams: OpenAI-compatible servers on loopback that answer
//! as the desks' scripted models would, for recording cassettes without a
//! real model. Each response carries a sample number (in its `id`), so
//! recordings of several trials are distinguishable samples, as a real
//! model's would be.
//!
//! - [`rust_desk`]: Chat Completions answered by [`ScriptedModel`] from the
//!   rendered input the Rust desk sends.
//! - [`python_desk`]: the Python desk's model mode (official OpenAI SDK):
//!   the first call routes the request to one tool, the streamed second
//!   call words the answer from the tool's draft.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use symfonic_evals::replay::{ScriptedUpstream, UpstreamReply, UpstreamRequest};

use crate::model::{Model, ModelStep, ScriptedModel};

fn completion(sample: u64, model: &Value, message: Value, finish: &str) -> Value {
    json!({
        "id": format!("chatcmpl-scripted-{sample}"),
        "object": "chat.completion",
        "created": 1_700_000_000 + sample,
        "model": model,
        "choices": [{ "index": 0, "message": message, "finish_reason": finish, "logprobs": null }],
        "usage": { "prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2 },
    })
}

fn tool_call(sample: u64, tool: &str, arguments: &Value) -> Value {
    json!({
        "role": "assistant",
        "content": null,
        "tool_calls": [{
            "id": format!("call_{sample}"),
            "type": "function",
            "function": { "name": tool, "arguments": arguments.to_string() },
        }],
    })
}

fn message_reply(sample: u64, model: &Value, step: ModelStep) -> UpstreamReply {
    let (message, finish) = match step {
        ModelStep::Call { tool, arguments } => (tool_call(sample, &tool, &arguments), "tool_calls"),
        ModelStep::Answer(text) => (json!({ "role": "assistant", "content": text }), "stop"),
    };
    UpstreamReply::json(completion(sample, model, message, finish))
}

fn bad_request(what: &str) -> UpstreamReply {
    UpstreamReply::Json {
        status: 400,
        body: json!({ "error": { "type": "invalid_request_error", "message": what } }),
        headers: Vec::new(),
    }
}

fn last_message(request: &UpstreamRequest) -> Option<&Value> {
    request.body.get("messages")?.as_array()?.last()
}

/// What the Rust desk's model would answer to `request`, as sample `sample`.
pub fn rust_desk_reply(request: &UpstreamRequest, sample: u64) -> UpstreamReply {
    let Some(shown) = last_message(request)
        .and_then(|m| m.get("content"))
        .and_then(Value::as_str)
    else {
        return bad_request("expected a user message with the rendered input");
    };
    let model = request.body.get("model").cloned().unwrap_or(Value::Null);
    message_reply(sample, &model, ScriptedModel::default().next_step(shown))
}

/// Starts the Rust desk's scripted upstream.
///
/// # Errors
///
/// When no loopback port can be opened.
pub fn rust_desk() -> std::io::Result<ScriptedUpstream> {
    let samples = Arc::new(AtomicU64::new(0));
    ScriptedUpstream::start(move |request| {
        rust_desk_reply(request, samples.fetch_add(1, Ordering::Relaxed))
    })
}

fn number_after<'a>(text: &'a str, words: &str) -> Option<(u64, &'a str)> {
    let at = text.find(words)? + words.len();
    let rest = &text[at..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    Some((digits.parse().ok()?, &rest[digits.len()..]))
}

/// The Python desk's routing, as its model mode asks for it: which tool the
/// user's request needs, with what arguments; `None` for small talk.
pub fn python_route(user: &str) -> Option<(&'static str, Value)> {
    if let Some(rest) = user.strip_prefix("walk me through refunding order ") {
        let (_, lesson) = rest.split_once(": ")?;
        return Some(("record_lesson", json!({ "lesson": lesson })));
    }
    if user.starts_with("approve") {
        if let Some(at) = user.find("governs ") {
            let mut words = user[at + "governs ".len()..].splitn(5, ' ');
            let tool = words.next()?;
            let when = words.next()?;
            let (path, op) = (words.next()?, words.next()?);
            let value = words.next().unwrap_or("");
            if when == "when" {
                return Some((
                    "approve_procedure",
                    json!({ "tool": tool, "path": path, "op": op, "value": value }),
                ));
            }
        }
    }
    if let Some((order, _)) = number_after(user, "refund order ") {
        return Some(("issue_refund", json!({ "order": order })));
    }
    if let Some((ticket, _)) = number_after(user, "escalate ticket ") {
        return Some(("ask_user", json!({ "ticket": ticket })));
    }
    if let Some(at) = user.find("weather in ") {
        let city: String = user[at + "weather in ".len()..]
            .chars()
            .take_while(char::is_ascii_alphabetic)
            .collect();
        if !city.is_empty() {
            return Some(("weather_lookup", json!({ "city": city })));
        }
    }
    None
}

/// The streamed wording of a draft answer: one chunk per word, then the
/// finish chunk and `[DONE]`, as Chat Completions streams.
fn streamed_words(sample: u64, model: &Value, text: &str) -> UpstreamReply {
    let chunk = |delta: Value, finish: Value| {
        let event = json!({
            "id": format!("chatcmpl-scripted-{sample}"),
            "object": "chat.completion.chunk",
            "created": 1_700_000_000 + sample,
            "model": model,
            "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
        });
        format!("data: {event}")
    };
    let mut events = vec![chunk(
        json!({ "role": "assistant", "content": "" }),
        Value::Null,
    )];
    let words: Vec<&str> = text.split_inclusive(' ').collect();
    for word in words {
        events.push(chunk(json!({ "content": word }), Value::Null));
    }
    events.push(chunk(json!({}), json!("stop")));
    events.push("data: [DONE]".to_owned());
    UpstreamReply::Events(events)
}

/// What the Python desk's model would answer to `request`, as sample `sample`.
pub fn python_desk_reply(request: &UpstreamRequest, sample: u64) -> UpstreamReply {
    let model = request.body.get("model").cloned().unwrap_or(Value::Null);
    let Some(last) = last_message(request) else {
        return bad_request("expected messages");
    };
    let content = last.get("content").and_then(Value::as_str).unwrap_or("");
    if last.get("role").and_then(Value::as_str) == Some("tool") {
        let draft: Value = serde_json::from_str(content).unwrap_or(Value::Null);
        let text = draft.get("draft").and_then(Value::as_str).unwrap_or("");
        return if request.body.get("stream") == Some(&Value::Bool(true)) {
            streamed_words(sample, &model, text)
        } else {
            message_reply(sample, &model, ModelStep::Answer(text.to_owned()))
        };
    }
    let user = content
        .lines()
        .find_map(|l| l.strip_prefix("user: "))
        .unwrap_or(content);
    let step = match python_route(user) {
        Some((tool, arguments)) => ModelStep::Call {
            tool: tool.to_owned(),
            arguments,
        },
        None => ModelStep::Answer("how can I help?".into()),
    };
    message_reply(sample, &model, step)
}

/// Starts the Python desk's scripted upstream.
///
/// # Errors
///
/// When no loopback port can be opened.
pub fn python_desk() -> std::io::Result<ScriptedUpstream> {
    let samples = Arc::new(AtomicU64::new(0));
    ScriptedUpstream::start(move |request| {
        python_desk_reply(request, samples.fetch_add(1, Ordering::Relaxed))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_routes_match_the_desk_prompts() {
        assert_eq!(
            python_route("walk me through refunding order 1: verify the account region, then issue the refund"),
            Some(("record_lesson", json!({"lesson": "verify the account region, then issue the refund"})))
        );
        assert_eq!(
            python_route("approve the refund procedure: governs issue_refund when region eq US"),
            Some((
                "approve_procedure",
                json!({"tool": "issue_refund", "path": "region", "op": "eq", "value": "US"})
            ))
        );
        assert_eq!(
            python_route("refund order 4"),
            Some(("issue_refund", json!({"order": 4})))
        );
        assert_eq!(
            python_route("escalate ticket 7 to a supervisor"),
            Some(("ask_user", json!({"ticket": 7})))
        );
        assert_eq!(
            python_route("what is the weather in Lisbon"),
            Some(("weather_lookup", json!({"city": "Lisbon"})))
        );
        assert_eq!(python_route("hello"), None);
    }

    #[test]
    fn a_draft_is_streamed_word_by_word() {
        let request = UpstreamRequest {
            method: "POST".into(),
            path: "/v1/chat/completions".into(),
            headers: Vec::new(),
            body: json!({"model": "m", "stream": true, "messages": [{"role": "tool", "content": "{\"draft\": \"Lisbon: sunny\"}"}]}),
        };
        let UpstreamReply::Events(events) = python_desk_reply(&request, 3) else {
            panic!("expected a stream");
        };
        assert_eq!(events.len(), 5);
        assert!(events[1].contains("\"content\":\"Lisbon: \""));
        assert_eq!(events[4], "data: [DONE]");
    }
}
