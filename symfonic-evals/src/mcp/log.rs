//! What the fixture serves and what it saw: the tool's definition, and the
//! trial's calls in order, each with the nonce its result carried.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

/// The tool the fixture serves: its name, its input schema, and the fixed
/// content every result carries beside its nonce.
#[derive(Debug, Clone, PartialEq)]
pub struct FixtureTool {
    /// The tool's name, as the pack gives it.
    pub name: String,
    /// The JSON Schema of its arguments (an object schema).
    pub input_schema: Value,
    /// Fields every result carries beside `nonce` (an object).
    pub content: Map<String, Value>,
}

impl FixtureTool {
    /// A tool named `name` whose schema is `schema`, or else derived from
    /// `arguments` (each argument typed by its value, none required, so a
    /// client that validates arguments before sending accepts the call),
    /// with `content` in every result.
    pub fn new(
        name: &str,
        schema: Option<&Value>,
        arguments: Option<&Value>,
        content: Option<&Value>,
    ) -> Self {
        let input_schema = match schema {
            Some(schema) => schema.clone(),
            None => derived_schema(arguments),
        };
        Self {
            name: name.to_owned(),
            input_schema,
            content: content
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        }
    }

    /// The result of one call: the fixed content with `nonce` beside it.
    pub fn result(&self, nonce: &str) -> Value {
        let mut result = self.content.clone();
        result.insert("nonce".into(), Value::String(nonce.to_owned()));
        Value::Object(result)
    }
}

/// An object schema with one property per argument, typed by its value.
fn derived_schema(arguments: Option<&Value>) -> Value {
    let properties: Map<String, Value> = arguments
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(name, value)| {
            let kind = match value {
                Value::Bool(_) => "boolean",
                Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
                Value::Number(_) => "number",
                Value::String(_) => "string",
                Value::Array(_) => "array",
                Value::Object(_) => "object",
                Value::Null => "null",
            };
            (name.clone(), json!({ "type": kind }))
        })
        .collect();
    json!({ "type": "object", "properties": properties })
}

/// One `tools/call` the fixture answered.
#[derive(Debug, Clone, PartialEq)]
pub struct FixtureCall {
    /// Its place among the trial's calls (from 1).
    pub seq: u64,
    /// The tool it named.
    pub tool: String,
    /// The arguments as received (`{}` when the call carried none).
    pub arguments: Value,
    /// The nonce its result carried (or the error it returned).
    pub nonce: String,
    /// Whether the fixture answered it with a tool error, as the step
    /// asked.
    pub failed: bool,
}

/// A request the fixture refused: what it was, never what it carried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FixtureRefusal {
    /// A call of a tool the fixture does not serve (its name's digest).
    UnknownTool(String),
    /// A call past [`CALL_LIMIT`](super::CALL_LIMIT).
    Flooded,
}

impl std::fmt::Display for FixtureRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::UnknownTool(digest) => write!(f, "a call of an unknown tool <{digest}>"),
            Self::Flooded => write!(f, "more than {} calls in one trial", super::CALL_LIMIT),
        }
    }
}

#[derive(Debug, Default)]
struct Events {
    calls: Vec<FixtureCall>,
    listings: u64,
    refusals: Vec<FixtureRefusal>,
}

/// The fixture's record of a trial, shared between the server and the
/// harness: calls, listings and refusals in order, and whether the next
/// calls must fail.
#[derive(Debug, Clone, Default)]
pub struct FixtureLog {
    events: Arc<Mutex<Events>>,
    failing: Arc<std::sync::atomic::AtomicBool>,
    salt: Arc<String>,
}

static NONCES: AtomicU64 = AtomicU64::new(0);

/// How every nonce begins; sixteen hex digits follow.
pub(crate) const NONCE_PREFIX: &str = "mcp-nonce-";
const NONCE_DIGITS: usize = 16;
const MASK: &str = "mcp-nonce-<fresh>";

/// `value` with every fixture nonce in its strings replaced by one
/// placeholder: a model request that shows a fixed result is the same
/// request whichever nonce the trial drew, so a replay cassette keys on it.
pub(crate) fn mask_nonces(value: &mut Value) {
    match value {
        Value::String(text) if text.contains(NONCE_PREFIX) => *text = masked(text),
        Value::Array(items) => items.iter_mut().for_each(mask_nonces),
        Value::Object(fields) => fields.values_mut().for_each(mask_nonces),
        _ => {}
    }
}

fn masked(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(NONCE_PREFIX) {
        let after = &rest[at + NONCE_PREFIX.len()..];
        let digits = after
            .bytes()
            .take(NONCE_DIGITS)
            .take_while(u8::is_ascii_hexdigit)
            .count();
        out.push_str(&rest[..at]);
        if digits == NONCE_DIGITS {
            out.push_str(MASK);
            rest = &after[NONCE_DIGITS..];
        } else {
            out.push_str(NONCE_PREFIX);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

impl FixtureLog {
    /// An empty record, with nonces no other record in this process (or
    /// any earlier one) will repeat.
    pub fn new() -> Self {
        let since = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Self {
            salt: Arc::new(format!("{}:{}", std::process::id(), since.as_nanos())),
            ..Self::default()
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Events> {
        self.events.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records a `tools/list`.
    pub fn listed(&self) {
        self.lock().listings += 1;
    }

    /// Records a call of `tool` with `arguments`, returning it with its
    /// nonce (and whether it must fail), or the refusal.
    pub fn call(&self, tool: &str, arguments: Value) -> Result<FixtureCall, FixtureRefusal> {
        let mut events = self.lock();
        if events.calls.len() >= super::CALL_LIMIT {
            events.refusals.push(FixtureRefusal::Flooded);
            return Err(FixtureRefusal::Flooded);
        }
        let count = NONCES.fetch_add(1, Ordering::Relaxed);
        let digest = Sha256::digest(format!("{}:{count}", self.salt).as_bytes());
        let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        let call = FixtureCall {
            seq: events.calls.len() as u64 + 1,
            tool: tool.to_owned(),
            arguments,
            nonce: format!("{NONCE_PREFIX}{hex}"),
            failed: self.failing.load(Ordering::SeqCst),
        };
        events.calls.push(call.clone());
        Ok(call)
    }

    /// Records a refused request.
    pub fn refuse(&self, refusal: FixtureRefusal) {
        self.lock().refusals.push(refusal);
    }

    /// Makes every call from now on fail with a tool error (or not).
    pub fn fail_calls(&self, failing: bool) {
        self.failing.store(failing, Ordering::SeqCst);
    }

    /// Every call so far, in order.
    pub fn calls(&self) -> Vec<FixtureCall> {
        self.lock().calls.clone()
    }

    /// How many calls so far.
    pub fn call_count(&self) -> usize {
        self.lock().calls.len()
    }

    /// How many `tools/list` requests so far.
    pub fn listings(&self) -> u64 {
        self.lock().listings
    }

    /// Every refusal so far, in order.
    pub fn refusals(&self) -> Vec<FixtureRefusal> {
        self.lock().refusals.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_call_gets_a_nonce_of_its_own_and_the_fixed_content() {
        let log = FixtureLog::new();
        let first = log.call("track", json!({ "order": 7 })).unwrap();
        let second = log.call("track", json!({ "order": 7 })).unwrap();
        assert_ne!(first.nonce, second.nonce);
        assert_eq!((first.seq, second.seq), (1, 2));
        let tool = FixtureTool::new(
            "track",
            None,
            None,
            Some(&json!({ "status": "in transit" })),
        );
        assert_eq!(
            tool.result(&first.nonce),
            json!({ "status": "in transit", "nonce": first.nonce })
        );
        // Another record never repeats a nonce.
        let other = FixtureLog::new().call("track", json!({})).unwrap();
        assert_ne!(other.nonce, first.nonce);
    }

    #[test]
    fn nonces_are_masked_wherever_a_request_quotes_them() {
        let log = FixtureLog::new();
        let nonce = log.call("t", json!({})).unwrap().nonce;
        let mut request = json!({ "messages": [
            { "content": format!("{{\"nonce\":\"{nonce}\"}} and {nonce}!") },
            { "content": "mcp-nonce-short" },
        ] });
        mask_nonces(&mut request);
        assert_eq!(
            request,
            json!({ "messages": [
                { "content": "{\"nonce\":\"mcp-nonce-<fresh>\"} and mcp-nonce-<fresh>!" },
                { "content": "mcp-nonce-short" },
            ] })
        );
    }

    #[test]
    fn a_schema_is_derived_from_the_arguments_when_none_is_given() {
        let tool = FixtureTool::new(
            "track",
            None,
            Some(&json!({ "order": 7, "include_eta": true, "note": "x", "w": 1.5 })),
            None,
        );
        assert_eq!(
            tool.input_schema,
            json!({ "type": "object", "properties": {
                "order": { "type": "integer" },
                "include_eta": { "type": "boolean" },
                "note": { "type": "string" },
                "w": { "type": "number" },
            } })
        );
    }

    #[test]
    fn calls_past_the_limit_are_refused_and_failing_calls_are_marked() {
        let log = FixtureLog::new();
        log.fail_calls(true);
        assert!(log.call("t", json!({})).unwrap().failed);
        log.fail_calls(false);
        for _ in 1..super::super::CALL_LIMIT {
            log.call("t", json!({})).unwrap();
        }
        assert_eq!(log.call("t", json!({})), Err(FixtureRefusal::Flooded));
        assert_eq!(log.refusals(), vec![FixtureRefusal::Flooded]);
    }
}
