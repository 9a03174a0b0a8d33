//! Scripted upstreams: OpenAI-compatible servers on loopback that answer
//! as the desks' scripted models would, for recording cassettes without a
//! real model. Each response carries a sample number (in its `id`), so
//! recordings of several trials are distinguishable samples, as a real
//! model's would be.
//!
//! - [`rust_desk`]: Chat Completions answered by [`ScriptedModel`] from the
//!   rendered input the Rust desk sends.
//! - [`python_desk`]: the Python desk's model mode (`openai_desk.py`, the
//!   official OpenAI SDK), answered as `model.py`'s `ScriptedModel` would:
//!   the plan as tool calls, then the streamed answer from the calls'
//!   outcomes (tool messages) or from a resume's model input.
//! - [`framework_desk`]: the LangGraph and OpenAI Agents SDK desks, whose
//!   frameworks send the conversation as messages: the request's tool call,
//!   then an answer quoting the tool's result.

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

fn tool_calls(sample: u64, calls: &[(&str, Value)]) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(n, (tool, arguments))| {
            json!({
                "id": format!("call_{sample}_{n}"),
                "type": "function",
                "function": { "name": tool, "arguments": arguments.to_string() },
            })
        })
        .collect();
    json!({ "role": "assistant", "content": null, "tool_calls": calls })
}

fn message_reply(sample: u64, model: &Value, step: ModelStep) -> UpstreamReply {
    let (message, finish) = match step {
        ModelStep::Call { tool, arguments } => {
            (tool_calls(sample, &[(&tool, arguments)]), "tool_calls")
        }
        ModelStep::Several(calls) => {
            let calls: Vec<(&str, Value)> = calls
                .iter()
                .map(|(tool, arguments)| (tool.as_str(), arguments.clone()))
                .collect();
            (tool_calls(sample, &calls), "tool_calls")
        }
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

/// The first number right after `words` in `text`, as the Python desk's
/// `words(?P<n>\d+)` patterns find it.
fn number_after(text: &str, words: &str) -> Option<u64> {
    text.match_indices(words).find_map(|(at, _)| {
        let rest = &text[at + words.len()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    })
}

/// The orders of "refund orders 6 and 7" (or "6, 7 and 8"), as
/// `refund orders (\d+(?:(?:, | and |, and )\d+)+)` finds them.
fn orders_after(text: &str) -> Vec<u64> {
    let Some((_, rest)) = text.split_once("refund orders ") else {
        return Vec::new();
    };
    let mut orders = Vec::new();
    let mut rest = rest;
    loop {
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let Ok(order) = digits.parse() else { break };
        orders.push(order);
        rest = &rest[digits.len()..];
        let Some(next) = [", and ", " and ", ", "]
            .iter()
            .find_map(|sep| rest.strip_prefix(sep))
        else {
            break;
        };
        rest = next;
    }
    orders
}

/// The city right after "weather in ", as `weather in (?P<city>[A-Z][a-z]+)`
/// finds it.
fn city_after(text: &str) -> Option<&str> {
    text.match_indices("weather in ").find_map(|(at, words)| {
        let rest = &text[at + words.len()..];
        let lower = rest
            .get(1..)?
            .find(|c: char| !c.is_ascii_lowercase())
            .unwrap_or(rest.len() - 1);
        (rest.starts_with(|c: char| c.is_ascii_uppercase()) && lower > 0).then(|| &rest[..=lower])
    })
}

/// The lesson of a demonstration, as `^walk me through [^:]+: (.+)$` reads it.
fn lesson_of(prompt: &str) -> Option<&str> {
    let (task, rest) = prompt.strip_prefix("walk me through ")?.split_once(':')?;
    let lesson = rest.strip_prefix(' ')?;
    let lesson = lesson.strip_suffix('\n').unwrap_or(lesson);
    (!task.is_empty() && !lesson.is_empty() && !lesson.contains('\n')).then_some(lesson)
}

/// What the Python desk's `ScriptedModel.plan` (`model.py`) makes of a
/// user's prompt, as the tool calls its model mode reads back: a lesson is
/// a `record_lesson` call; no calls at all is small talk.
pub fn python_plan(prompt: &str) -> Vec<(&'static str, Value)> {
    if let Some(lesson) = lesson_of(prompt) {
        return vec![("record_lesson", json!({ "lesson": lesson }))];
    }
    let orders = orders_after(prompt);
    if orders.len() > 1 {
        return orders
            .into_iter()
            .map(|order| ("issue_refund", json!({ "order": order })))
            .collect();
    }
    if let Some(order) = number_after(prompt, "refund order ") {
        // The whole order, which the desk holds for a manager.
        if prompt.to_lowercase().contains("in full") {
            return vec![("issue_refund", json!({ "order": order, "full": true }))];
        }
        return vec![("issue_refund", json!({ "order": order }))];
    }
    if let Some(ticket) = number_after(prompt, "escalate ticket ") {
        return vec![
            (
                "ask_user",
                json!({ "question": format!("may I escalate ticket {ticket}?") }),
            ),
            ("escalate_ticket", json!({ "ticket": ticket })),
        ];
    }
    if let Some(city) = city_after(prompt) {
        return vec![("weather_lookup", json!({ "city": city }))];
    }
    Vec::new()
}

/// How one call ended, as the Python desk's model reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct PythonOutcome {
    /// The tool.
    pub name: String,
    /// `succeeded`, `failed`, `refused` or `pending`.
    pub status: String,
    /// A success's result.
    pub result: Value,
}

fn field(result: &Value, key: &str) -> String {
    match result.get(key) {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// `ScriptedModel.reply` for a plan without a lesson: the answer written
/// from how the calls ended.
pub fn python_reply(outcomes: &[PythonOutcome]) -> String {
    let Some(last) = outcomes.last() else {
        return "how can I help?".into();
    };
    match (last.status.as_str(), last.name.as_str()) {
        ("pending", _) => "waiting for a supervisor".into(),
        ("refused", _) => "I cannot do that here".into(),
        ("failed", name) => format!("{name} did not work"),
        (_, "issue_refund") => format!(
            "refund for order {} issued",
            field(&last.result, "refunded")
        ),
        (_, "escalate_ticket") => format!("ticket {} escalated", field(&last.result, "escalated")),
        (_, "weather_lookup") => format!(
            "{}: {}",
            field(&last.result, "city"),
            field(&last.result, "forecast")
        ),
        _ => "done".into(),
    }
}

/// The answer to the tool messages after the last assistant message's tool
/// calls: a noted lesson, or [`python_reply`] over the calls that ran.
fn python_words_reply(messages: &[Value]) -> String {
    let Some(asked) = messages
        .iter()
        .rposition(|m| m.get("tool_calls").is_some_and(Value::is_array))
    else {
        return python_reply(&[]);
    };
    let calls = messages[asked]["tool_calls"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let name_of = |id: &Value| {
        calls
            .iter()
            .find(|c| c.get("id") == Some(id))
            .and_then(|c| c.pointer("/function/name"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    if calls
        .iter()
        .any(|c| c.pointer("/function/name").and_then(Value::as_str) == Some("record_lesson"))
    {
        return "noted how this is done".into();
    }
    let outcomes: Vec<PythonOutcome> = messages[asked + 1..]
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("tool"))
        .filter_map(|m| {
            let content = m.get("content").and_then(Value::as_str)?;
            let content: Value = serde_json::from_str(content).ok()?;
            let status = content.get("status")?.as_str()?;
            (status != "not_run").then(|| PythonOutcome {
                name: name_of(m.get("tool_call_id").unwrap_or(&Value::Null)),
                status: status.to_owned(),
                result: content.get("result").cloned().unwrap_or(Value::Null),
            })
        })
        .collect();
    python_reply(&outcomes)
}

/// `ScriptedModel.resumed`, reading the resume's model input: the person's
/// decision line and the desk's `tool ...` lines for the calls that ran.
pub fn python_resumed(shown: &str) -> String {
    if shown.lines().any(|l| l == "decision: declined") {
        return "left as it was".into();
    }
    let outcomes: Vec<PythonOutcome> = shown
        .lines()
        .filter_map(|l| l.strip_prefix("tool "))
        .filter_map(|rest| {
            let (name, rest) = rest.split_once(' ')?;
            let (status, result) = if let Some(json) = rest.strip_prefix("-> ") {
                (
                    "succeeded",
                    serde_json::from_str(json).unwrap_or(Value::Null),
                )
            } else if rest.starts_with("refused by ") {
                ("refused", Value::Null)
            } else if rest.starts_with("failed: ") {
                ("failed", Value::Null)
            } else {
                ("pending", Value::Null)
            };
            Some(PythonOutcome {
                name: name.to_owned(),
                status: status.to_owned(),
                result,
            })
        })
        .collect();
    if outcomes.is_empty() {
        "carried on".into()
    } else {
        python_reply(&outcomes)
    }
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

/// `answer` as the reply to `request`: streamed word by word when it asked
/// for a stream, else one message.
fn worded(request: &UpstreamRequest, sample: u64, model: &Value, answer: String) -> UpstreamReply {
    if request.body.get("stream") == Some(&Value::Bool(true)) {
        streamed_words(sample, model, &answer)
    } else {
        message_reply(sample, model, ModelStep::Answer(answer))
    }
}

/// What the Python desk's model would answer to `request`, as sample
/// `sample`: its plan as tool calls (or small talk's answer), or, streamed
/// when asked, the answer after the calls or after a resume.
pub fn python_desk_reply(request: &UpstreamRequest, sample: u64) -> UpstreamReply {
    let model = request.body.get("model").cloned().unwrap_or(Value::Null);
    let Some(messages) = request.body.get("messages").and_then(Value::as_array) else {
        return bad_request("expected messages");
    };
    let Some(last) = messages.last() else {
        return bad_request("expected messages");
    };
    let content = last.get("content").and_then(Value::as_str).unwrap_or("");
    let answer = if last.get("role").and_then(Value::as_str) == Some("tool") {
        python_words_reply(messages)
    } else if content
        .lines()
        .last()
        .is_some_and(|l| l.starts_with("decision: "))
    {
        python_resumed(content)
    } else {
        let prompt = content
            .lines()
            .find_map(|l| l.strip_prefix("user: "))
            .unwrap_or(content);
        let calls = python_plan(prompt);
        if !calls.is_empty() {
            let message = tool_calls(sample, &calls);
            return UpstreamReply::json(completion(sample, &model, message, "tool_calls"));
        }
        python_reply(&[])
    };
    worded(request, sample, &model, answer)
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

/// The text of a message's `content`: a string, or the text parts of a
/// list of parts.
fn text_of(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

/// Whether `request` offers the model a tool named `name` (Chat
/// Completions' `{"type": "function", "function": {"name": ..}}`, or a
/// bare `{"name": ..}`).
fn offers(request: &UpstreamRequest, name: &str) -> bool {
    let Some(tools) = request.body.get("tools").and_then(Value::as_array) else {
        return false;
    };
    tools.iter().any(|tool| {
        let named = tool.pointer("/function/name").or_else(|| tool.get("name"));
        named.and_then(Value::as_str) == Some(name)
    })
}

/// What the framework desks' model (`examples/langgraph-desk`,
/// `examples/openai-agents-desk`, ...) answers to `request`, as sample
/// `sample`: a user's request becomes the tool call it names, as
/// [`python_plan`] reads it (the approval is the framework's, so no
/// `ask_user`; a walk-through's lesson only to a desk that offers
/// `record_lesson`, as the LangGraph procedural desk does); after a tool's
/// result, the answer quotes it, as a model that read it would.
pub fn framework_desk_reply(request: &UpstreamRequest, sample: u64) -> UpstreamReply {
    let model = request.body.get("model").cloned().unwrap_or(Value::Null);
    let Some(last) = last_message(request) else {
        return bad_request("expected messages");
    };
    let answer = if last.get("role").and_then(Value::as_str) == Some("tool") {
        format!("the tool answered: {}", text_of(last))
    } else {
        let calls: Vec<_> = python_plan(&text_of(last))
            .into_iter()
            .filter(|(tool, _)| match *tool {
                "ask_user" => false,
                "record_lesson" => offers(request, tool),
                _ => true,
            })
            .collect();
        if !calls.is_empty() {
            let message = tool_calls(sample, &calls);
            return UpstreamReply::json(completion(sample, &model, message, "tool_calls"));
        }
        python_reply(&[])
    };
    worded(request, sample, &model, answer)
}

/// Starts the framework desks' scripted upstream.
///
/// # Errors
///
/// When no loopback port can be opened.
pub fn framework_desk() -> std::io::Result<ScriptedUpstream> {
    let samples = Arc::new(AtomicU64::new(0));
    ScriptedUpstream::start(move |request| {
        framework_desk_reply(request, samples.fetch_add(1, Ordering::Relaxed))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_plans_match_the_scripted_model() {
        assert_eq!(
            python_plan("walk me through refunding order 1: verify the account region, then issue the refund"),
            [("record_lesson", json!({"lesson": "verify the account region, then issue the refund"}))]
        );
        assert_eq!(python_plan("walk me through: nothing"), []);
        assert_eq!(
            python_plan("please refund order x, no: refund order 4"),
            [("issue_refund", json!({"order": 4}))]
        );
        assert_eq!(
            python_plan("refund order 8 in full"),
            [("issue_refund", json!({"order": 8, "full": true}))]
        );
        assert_eq!(
            python_plan("escalate ticket 7 to a supervisor"),
            [
                ("ask_user", json!({"question": "may I escalate ticket 7?"})),
                ("escalate_ticket", json!({"ticket": 7}))
            ]
        );
        assert_eq!(
            python_plan("what is the weather in Lisbon?"),
            [("weather_lookup", json!({"city": "Lisbon"}))]
        );
        assert_eq!(python_plan("weather in L or in Oslo"), []);
        assert_eq!(python_plan("thanks, that is all for today"), []);
    }

    #[test]
    fn python_replies_match_the_scripted_model() {
        let outcome = |name: &str, status: &str, result: Value| PythonOutcome {
            name: name.into(),
            status: status.into(),
            result,
        };
        assert_eq!(python_reply(&[]), "how can I help?");
        assert_eq!(
            python_reply(&[outcome("issue_refund", "succeeded", json!({"refunded": 4}))]),
            "refund for order 4 issued"
        );
        assert_eq!(
            python_reply(&[outcome("issue_refund", "refused", Value::Null)]),
            "I cannot do that here"
        );
        assert_eq!(
            python_reply(&[outcome("ask_user", "pending", Value::Null)]),
            "waiting for a supervisor"
        );
        assert_eq!(
            python_resumed("resume: ask_user answered {}\ndecision: declined"),
            "left as it was"
        );
        assert_eq!(
            python_resumed(
                "resume: ask_user answered {}\ntool escalate_ticket -> {\"escalated\": 7}\ndecision: approved"
            ),
            "ticket 7 escalated"
        );
        assert_eq!(
            python_resumed("resume: ask_user answered {}\ndecision: approved"),
            "carried on"
        );
    }

    #[test]
    fn tool_messages_are_worded_from_the_calls_that_ran() {
        let request = UpstreamRequest {
            method: "POST".into(),
            path: "/v1/chat/completions".into(),
            headers: Vec::new(),
            body: json!({"model": "m", "messages": [
                {"role": "user", "content": "user: escalate ticket 7"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "a", "type": "function", "function": {"name": "ask_user", "arguments": "{}"}},
                    {"id": "b", "type": "function", "function": {"name": "escalate_ticket", "arguments": "{}"}},
                ]},
                {"role": "tool", "tool_call_id": "a", "content": "{\"status\": \"pending\", \"result\": null}"},
                {"role": "tool", "tool_call_id": "b", "content": "{\"status\": \"not_run\"}"},
            ]}),
        };
        let reply = python_desk_reply(&request, 0);
        let UpstreamReply::Json { body, .. } = reply else {
            panic!("expected JSON");
        };
        assert_eq!(
            body["choices"][0]["message"]["content"],
            "waiting for a supervisor"
        );
    }

    #[test]
    fn the_framework_desks_model_calls_the_named_tool_then_quotes_its_result() {
        let request = |messages: Value| UpstreamRequest {
            method: "POST".into(),
            path: "/v1/chat/completions".into(),
            headers: Vec::new(),
            body: json!({"model": "m", "messages": messages}),
        };
        let ask = request(json!([
            {"role": "system", "content": "You are the help desk agent."},
            {"role": "user", "content": "escalate ticket 7 to a supervisor"},
        ]));
        let UpstreamReply::Json { body, .. } = framework_desk_reply(&ask, 2) else {
            panic!("expected JSON");
        };
        let calls = &body["choices"][0]["message"]["tool_calls"];
        assert_eq!(
            calls.as_array().map(Vec::len),
            Some(1),
            "no ask_user: {calls}"
        );
        assert_eq!(calls[0]["function"]["name"], "escalate_ticket");
        assert_eq!(calls[0]["function"]["arguments"], "{\"ticket\":7}");
        // The Agents SDK sends content as a list of parts.
        let answered = request(json!([
            {"role": "user", "content": [{"type": "text", "text": "what is the weather in Lisbon"}]},
            {"role": "assistant", "tool_calls": [{"id": "w", "function": {"name": "weather_lookup"}}]},
            {"role": "tool", "tool_call_id": "w", "content": "{\"city\": \"Lisbon\", \"forecast\": \"sunny\"}"},
        ]));
        let UpstreamReply::Json { body, .. } = framework_desk_reply(&answered, 3) else {
            panic!("expected JSON");
        };
        assert_eq!(
            body["choices"][0]["message"]["content"],
            "the tool answered: {\"city\": \"Lisbon\", \"forecast\": \"sunny\"}"
        );
        let small_talk = request(json!([{"role": "user", "content": "thanks"}]));
        let UpstreamReply::Json { body, .. } = framework_desk_reply(&small_talk, 4) else {
            panic!("expected JSON");
        };
        assert_eq!(body["choices"][0]["message"]["content"], "how can I help?");
    }

    #[test]
    fn a_lesson_is_recorded_only_by_a_desk_that_offers_record_lesson() {
        let walk = "walk me through refunding order 1: verify the account region";
        let request = |tools: Value| UpstreamRequest {
            method: "POST".into(),
            path: "/v1/chat/completions".into(),
            headers: Vec::new(),
            body: json!({"model": "m", "tools": tools, "messages": [{"role": "user", "content": walk}]}),
        };
        let offered = request(json!([
            {"type": "function", "function": {"name": "issue_refund"}},
            {"type": "function", "function": {"name": "record_lesson"}},
        ]));
        let UpstreamReply::Json { body, .. } = framework_desk_reply(&offered, 1) else {
            panic!("expected JSON");
        };
        let calls = &body["choices"][0]["message"]["tool_calls"];
        assert_eq!(calls[0]["function"]["name"], "record_lesson", "{calls}");
        assert_eq!(
            calls[0]["function"]["arguments"],
            "{\"lesson\":\"verify the account region\"}"
        );
        let not_offered =
            request(json!([{"type": "function", "function": {"name": "issue_refund"}}]));
        let UpstreamReply::Json { body, .. } = framework_desk_reply(&not_offered, 2) else {
            panic!("expected JSON");
        };
        assert_eq!(body["choices"][0]["message"]["content"], "how can I help?");
    }

    #[test]
    fn a_draft_is_streamed_word_by_word() {
        let request = UpstreamRequest {
            method: "POST".into(),
            path: "/v1/chat/completions".into(),
            headers: Vec::new(),
            body: json!({"model": "m", "stream": true, "messages": [
                {"role": "assistant", "tool_calls": [{"id": "w", "function": {"name": "weather_lookup"}}]},
                {"role": "tool", "tool_call_id": "w", "content": "{\"status\": \"succeeded\", \"result\": {\"city\": \"Lisbon\", \"forecast\": \"sunny\"}}"},
            ]}),
        };
        let UpstreamReply::Events(events) = python_desk_reply(&request, 3) else {
            panic!("expected a stream");
        };
        assert_eq!(events.len(), 5);
        assert!(events[1].contains("\"content\":\"Lisbon: \""));
        assert_eq!(events[4], "data: [DONE]");
    }
}
