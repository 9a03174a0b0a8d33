//! Scrubbing a recorded event stream.
//!
//! A streamed answer carries its JSON inside `data:` lines, and tool-call
//! arguments inside that JSON as a JSON *string*, escaped twice over and
//! usually cut into fragments across events (`{"pass`, `word": "hun`...).
//! Scrubbing the raw event text finds none of that. So each `data:` payload
//! is parsed and scrubbed as a value, and the argument fragments of each
//! tool call are put back together and scrubbed whole: when the whole
//! changes, its first fragment carries the scrubbed arguments and the
//! others are emptied, so a client replaying the stream assembles the same
//! scrubbed arguments.
//!
//! Fragments are found where the three streaming APIs put them: Chat
//! Completions (`choices[].delta.tool_calls[].function.arguments`),
//! Responses (`response.function_call_arguments.delta` events), and
//! Anthropic Messages (`input_json_delta.partial_json`).

use std::collections::BTreeMap;

use serde_json::Value;

use super::scrub::Scrubber;

/// One `data:` line of one event, parsed.
struct DataLine {
    event: usize,
    line: usize,
    value: Value,
}

/// Where one fragment sits inside a parsed `data:` line.
#[derive(Clone)]
enum Slot {
    Chat { choice: usize, call: usize },
    Responses,
    Anthropic,
}

impl Slot {
    fn pointer(&self) -> String {
        match self {
            Self::Chat { choice, call } => {
                format!("/choices/{choice}/delta/tool_calls/{call}/function/arguments")
            }
            Self::Responses => "/delta".to_owned(),
            Self::Anthropic => "/delta/partial_json".to_owned(),
        }
    }

    fn get<'a>(&self, value: &'a Value) -> Option<&'a str> {
        value.pointer(&self.pointer())?.as_str()
    }

    fn get_mut<'a>(&self, value: &'a mut Value) -> Option<&'a mut Value> {
        value.pointer_mut(&self.pointer())
    }
}

/// Every argument fragment in `value`, with the key of the call it belongs
/// to.
fn fragments(value: &Value) -> Vec<(String, Slot)> {
    let mut found = Vec::new();
    if let Some(choices) = value.get("choices").and_then(Value::as_array) {
        for (choice, c) in choices.iter().enumerate() {
            let calls = c.pointer("/delta/tool_calls").and_then(Value::as_array);
            for (call, t) in calls.into_iter().flatten().enumerate() {
                if t.pointer("/function/arguments")
                    .is_some_and(Value::is_string)
                {
                    let c_index = c
                        .get("index")
                        .map_or(choice as u64, |i| i.as_u64().unwrap_or(0));
                    let t_index = t
                        .get("index")
                        .map_or(call as u64, |i| i.as_u64().unwrap_or(0));
                    found.push((
                        format!("chat/{c_index}/{t_index}"),
                        Slot::Chat { choice, call },
                    ));
                }
            }
        }
    }
    match value.get("type").and_then(Value::as_str) {
        Some("response.function_call_arguments.delta")
            if value.get("delta").is_some_and(Value::is_string) =>
        {
            let item = value
                .get("item_id")
                .or_else(|| value.get("output_index"))
                .map(Value::to_string)
                .unwrap_or_default();
            found.push((format!("responses/{item}"), Slot::Responses));
        }
        Some("content_block_delta")
            if value
                .pointer("/delta/partial_json")
                .is_some_and(Value::is_string) =>
        {
            let index = value.get("index").map(Value::to_string).unwrap_or_default();
            found.push((format!("anthropic/{index}"), Slot::Anthropic));
        }
        _ => {}
    }
    found
}

/// The payload of a `data:` line, if `line` is one.
fn data_payload(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("data:")?;
    Some(rest.strip_prefix(' ').unwrap_or(rest))
}

/// `events` scrubbed: every JSON payload as a value, every tool call's
/// arguments as a whole, every other line as text.
pub(crate) fn scrub_events(scrubber: &Scrubber, events: Vec<String>) -> Vec<String> {
    let mut lines: Vec<Vec<String>> = events
        .iter()
        .map(|e| e.split('\n').map(str::to_owned).collect())
        .collect();
    let mut data = Vec::new();
    for (event, event_lines) in lines.iter_mut().enumerate() {
        for (line, text) in event_lines.iter_mut().enumerate() {
            match data_payload(text).map(serde_json::from_str::<Value>) {
                Some(Ok(mut value)) => {
                    scrubber.value(&mut value);
                    data.push(DataLine { event, line, value });
                }
                _ => *text = scrubber.text(text).0,
            }
        }
    }
    scrub_fragments(scrubber, &mut data);
    for d in data {
        let text = serde_json::to_string(&d.value).unwrap_or_default();
        lines[d.event][d.line] = format!("data: {text}");
    }
    // Lines untouched by scrubbing keep their exact bytes.
    lines
        .into_iter()
        .zip(events)
        .map(|(scrubbed, original)| {
            let scrubbed = scrubbed.join("\n");
            if same_json_lines(&scrubbed, &original) {
                original
            } else {
                scrubbed
            }
        })
        .collect()
}

/// Whether two events hold the same lines, `data:` payloads compared as
/// JSON (re-serializing may change spacing, never meaning).
fn same_json_lines(a: &str, b: &str) -> bool {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.split('\n').collect(), b.split('\n').collect());
    a.len() == b.len()
        && a.iter().zip(&b).all(|(x, y)| {
            x == y
                || match (data_payload(x), data_payload(y)) {
                    (Some(x), Some(y)) => {
                        let parse = |t: &str| serde_json::from_str::<Value>(t).ok();
                        parse(x).is_some() && parse(x) == parse(y)
                    }
                    _ => false,
                }
        })
}

fn scrub_fragments(scrubber: &Scrubber, data: &mut [DataLine]) {
    let mut calls: BTreeMap<String, Vec<(usize, Slot)>> = BTreeMap::new();
    for (i, d) in data.iter().enumerate() {
        for (key, slot) in fragments(&d.value) {
            calls.entry(key).or_default().push((i, slot));
        }
    }
    for slots in calls.values() {
        let whole: String = slots
            .iter()
            .filter_map(|(i, slot)| slot.get(&data[*i].value))
            .collect();
        let clean = scrub_arguments(scrubber, &whole);
        if clean == whole {
            continue;
        }
        for (n, (i, slot)) in slots.iter().enumerate() {
            if let Some(field) = slot.get_mut(&mut data[*i].value) {
                *field = Value::String(if n == 0 { clean.clone() } else { String::new() });
            }
        }
    }
}

/// Tool-call arguments scrubbed: as JSON when they parse, as text when not.
fn scrub_arguments(scrubber: &Scrubber, arguments: &str) -> String {
    match serde_json::from_str::<Value>(arguments) {
        Ok(mut value) => {
            let before = value.clone();
            scrubber.value(&mut value);
            if value == before {
                arguments.to_owned()
            } else {
                serde_json::to_string(&value).unwrap_or_default()
            }
        }
        Err(_) => scrubber.text(arguments).0,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn chat_delta(arguments: &str) -> String {
        let v = json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]}}]});
        format!("data: {v}")
    }

    fn assembled(events: &[String]) -> String {
        events
            .iter()
            .filter_map(|e| data_payload(e))
            .filter_map(|p| serde_json::from_str::<Value>(p).ok())
            .filter_map(|v| {
                v.pointer("/choices/0/delta/tool_calls/0/function/arguments")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .collect()
    }

    #[test]
    fn a_password_in_one_streamed_argument_string_is_scrubbed() {
        let events = vec![chat_delta(
            r#"{"user": "ann", "password": "hunter2-secret"}"#,
        )];
        let out = scrub_events(&Scrubber::default(), events);
        assert!(!out[0].contains("hunter2"), "{out:?}");
        assert!(out[0].contains("ann"));
    }

    #[test]
    fn a_password_cut_across_fragments_is_scrubbed_and_reassembles() {
        let events = vec![
            chat_delta(r#"{"user": "ann", "pass"#),
            chat_delta(r#"word": "hun"#),
            chat_delta(r#"ter2-secret"}"#),
            "data: [DONE]".to_owned(),
        ];
        let out = scrub_events(&Scrubber::default(), events);
        assert!(!out.concat().contains("hun"), "{out:?}");
        let args: Value = serde_json::from_str(&assembled(&out)).unwrap();
        assert_eq!(args, json!({"user": "ann", "password": "[REDACTED]"}));
        assert_eq!(out[3], "data: [DONE]");
    }

    #[test]
    fn responses_and_anthropic_fragments_are_scrubbed_too() {
        let responses = |d: &str| {
            format!(
                "event: response.function_call_arguments.delta\ndata: {}",
                json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": d})
            )
        };
        let anthropic = |d: &str| {
            format!(
                "data: {}",
                json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": d}})
            )
        };
        for make in [&responses as &dyn Fn(&str) -> String, &anthropic] {
            let events = vec![make(r#"{"api_key": "zz-"#), make(r#"very-secret"}"#)];
            let out = scrub_events(&Scrubber::default(), events);
            assert!(!out.concat().contains("very-secret"), "{out:?}");
        }
    }

    #[test]
    fn events_without_secrets_keep_their_exact_bytes() {
        let events = vec![
            "event: ping\ndata: {\"type\":  \"ping\"}".to_owned(),
            chat_delta(r#"{"order": 7}"#),
        ];
        assert_eq!(scrub_events(&Scrubber::default(), events.clone()), events);
    }
}
