//! What the fixture serves and what it saw: the tool's definition, and the
//! trial's calls in order, each with the nonce its result carried and
//! whether that result was delivered.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

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

/// One `tools/call` the fixture received, and whether its answer reached
/// the client.
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
    /// Whether the whole answer was written to the client's connection and
    /// acknowledged by the client's end (see [`Delivery`]). Only a
    /// delivered call counts as served: a connection closed before the
    /// answer arrived, or a client that never read it, leaves it `false`.
    pub delivered: bool,
}

/// Where a call's answer stands on its way to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Received and answered; the answer is not yet known to have arrived.
    InFlight,
    /// The whole answer was written to the client's connection and, where
    /// the platform tells (Linux), acknowledged by the client's TCP stack
    /// on a connection it had not closed.
    Delivered,
    /// The connection ended, failed or timed out before the answer was
    /// delivered.
    Lost,
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
    /// Each call's delivery, by index into `calls`.
    delivery: Vec<Delivery>,
    listings: u64,
    refusals: Vec<FixtureRefusal>,
}

/// The fixture's record of a trial, shared between the server and the
/// harness: calls, listings and refusals in order, whether each call's
/// answer was delivered, and whether the next calls must fail.
#[derive(Debug, Clone, Default)]
pub struct FixtureLog {
    events: Arc<Mutex<Events>>,
    /// Signalled whenever a call's delivery is settled.
    settled: Arc<Condvar>,
    failing: Arc<std::sync::atomic::AtomicBool>,
}

/// How every nonce begins; [`NONCE_DIGITS`] hex digits follow.
pub(crate) const NONCE_PREFIX: &str = "mcp-nonce-";
/// A nonce's hex digits: 128 bits from the operating system's CSPRNG.
pub(crate) const NONCE_DIGITS: usize = 32;
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

/// A fresh nonce: 128 bits from the operating system's CSPRNG.
///
/// A nonce proves the model saw *this* call's result, so a deployment must
/// not be able to compute it without reading the answer. An earlier
/// scheme hashed the process id, the start time and a counter; from one
/// observed nonce a deployment in the same process recovered those inputs
/// and predicted every later nonce. Nothing here derives from state a
/// deployment can see: each nonce is drawn from the kernel (`getrandom`),
/// so earlier nonces say nothing about the next.
fn fresh_nonce() -> String {
    let mut bytes = [0u8; NONCE_DIGITS / 2];
    // The kernel's generator does not fail once the system is up; if it
    // ever did, a predictable nonce would silently weaken every probe, so
    // the fixture stops instead.
    getrandom::fill(&mut bytes).expect("the operating system's random source is unavailable");
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{NONCE_PREFIX}{hex}")
}

/// A fresh per-trial secret for the stdio bridge's handshake: 128 bits
/// from the operating system's CSPRNG, as hex.
pub(crate) fn fresh_secret() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random source is unavailable");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// How long [`FixtureLog::settle`] waits for answers still on their way
/// when the harness reads a step's evidence. A client that read its answer
/// has acknowledged it long before; only an answer nobody reads waits this
/// long, and then counts as not delivered.
pub const SETTLE_TIMEOUT: Duration = Duration::from_secs(1);

impl FixtureLog {
    /// An empty record. Its nonces come from the operating system's
    /// CSPRNG, so no record, in this process or another, repeats or
    /// predicts them.
    pub fn new() -> Self {
        Self::default()
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
        let call = FixtureCall {
            seq: events.calls.len() as u64 + 1,
            tool: tool.to_owned(),
            arguments,
            nonce: fresh_nonce(),
            failed: self.failing.load(Ordering::SeqCst),
            delivered: false,
        };
        events.calls.push(call.clone());
        events.delivery.push(Delivery::InFlight);
        Ok(call)
    }

    /// Settles the delivery of the call whose answer carried `nonce`: the
    /// connection that carried it says whether the whole answer arrived.
    /// A call settles once; a nonce the log never issued is ignored.
    pub(crate) fn settle_delivery(&self, nonce: &str, delivery: Delivery) {
        let mut events = self.lock();
        let Some(index) = events.calls.iter().position(|call| call.nonce == nonce) else {
            return;
        };
        if events.delivery[index] != Delivery::InFlight || delivery == Delivery::InFlight {
            return;
        }
        events.delivery[index] = delivery;
        events.calls[index].delivered = delivery == Delivery::Delivered;
        drop(events);
        self.settled.notify_all();
    }

    /// Waits, at most `timeout`, until no call's answer is still on its
    /// way; returns how many still are. The harness settles before it
    /// reads a step's calls, so an answer the client read is always seen
    /// as delivered.
    pub fn settle(&self, timeout: Duration) -> usize {
        let deadline = Instant::now() + timeout;
        let mut events = self.lock();
        loop {
            let in_flight = events
                .delivery
                .iter()
                .filter(|d| **d == Delivery::InFlight)
                .count();
            let left = deadline.saturating_duration_since(Instant::now());
            if in_flight == 0 || left.is_zero() {
                return in_flight;
            }
            events = self
                .settled
                .wait_timeout(events, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Each call's delivery so far, in call order.
    pub fn deliveries(&self) -> Vec<Delivery> {
        self.lock().delivery.clone()
    }

    /// Records a refused request.
    pub fn refuse(&self, refusal: FixtureRefusal) {
        self.lock().refusals.push(refusal);
    }

    /// Makes every call from now on fail with a tool error (or not).
    pub fn fail_calls(&self, failing: bool) {
        self.failing.store(failing, Ordering::SeqCst);
    }

    /// Every call so far, in order, each saying whether its answer was
    /// delivered (settle first to wait for answers on their way).
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

    fn nanos_now() -> u128 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    }

    /// The earlier scheme: a hash of the process id, the start time and a
    /// counter, cut to `digits` hex digits.
    fn hashed(pid: u32, start: u128, count: u64, digits: usize) -> String {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(format!("{pid}:{start}:{count}").as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        format!("{NONCE_PREFIX}{}", &hex[..digits])
    }

    /// The recovery an in-process deployment ran against that scheme: it
    /// knows its process id and roughly when the record was made, searches
    /// the start time and counter that give the nonce it saw, and computes
    /// the next one.
    fn predict_next(observed: &str, window: std::ops::RangeInclusive<u128>) -> Option<String> {
        let digits = observed.len() - NONCE_PREFIX.len();
        let pid = std::process::id();
        for start in window {
            for count in 0..8 {
                if hashed(pid, start, count, digits) == observed {
                    return Some(hashed(pid, start, count + 1, digits));
                }
            }
        }
        None
    }

    #[test]
    fn the_next_nonce_cannot_be_recovered_from_an_observed_one() {
        // The recovery works against the earlier scheme (so this test can
        // fail)...
        let before = nanos_now();
        let start = nanos_now();
        let after = nanos_now();
        let digits = NONCE_DIGITS;
        let predicted = predict_next(
            &hashed(std::process::id(), start, 0, digits),
            before..=after,
        );
        assert_eq!(
            predicted,
            Some(hashed(std::process::id(), start, 1, digits))
        );
        // ...and finds nothing in the fixture's nonces: they derive from
        // nothing a deployment can see.
        // The window the search covers is kept to 20 microseconds (retried
        // when the thread was preempted), so a miss is quick.
        let (log, first, before, after) = (0..1000)
            .map(|_| {
                let before = nanos_now();
                let log = FixtureLog::new();
                let first = log.call("t", json!({})).unwrap().nonce;
                (log, first, before, nanos_now())
            })
            .find(|(_, _, before, after)| after - before < 20_000)
            .expect("a quiet moment");
        let second = log.call("t", json!({})).unwrap().nonce;
        let predicted = predict_next(&first, before..=after);
        assert_eq!(predicted, None);
        assert_ne!(first, second);
    }

    #[test]
    fn nonces_are_128_random_bits_and_never_repeat() {
        let log = FixtureLog::new();
        let nonces: std::collections::HashSet<String> = (0..super::super::CALL_LIMIT)
            .map(|_| log.call("t", json!({})).unwrap().nonce)
            .collect();
        assert_eq!(nonces.len(), super::super::CALL_LIMIT);
        let mut ones = 0u32;
        for nonce in &nonces {
            let digits = nonce.strip_prefix(NONCE_PREFIX).unwrap();
            assert_eq!(digits.len(), 32, "{nonce}");
            let bits = u128::from_str_radix(digits, 16).unwrap();
            ones += bits.count_ones();
        }
        // Half the bits set, give or take: 256 x 128 bits, standard
        // deviation 90; a counter or a timestamp sits far off.
        let expected = 128 * 256 / 2;
        assert!(
            ones.abs_diff(expected) < 1_000,
            "{ones} bits set of {}",
            2 * expected
        );
    }

    #[test]
    fn a_call_is_delivered_only_once_its_connection_says_so() {
        let log = FixtureLog::new();
        let read = log.call("t", json!({})).unwrap();
        let lost = log.call("t", json!({})).unwrap();
        assert_eq!(log.settle(Duration::ZERO), 2);
        log.settle_delivery(&read.nonce, Delivery::Delivered);
        log.settle_delivery(&lost.nonce, Delivery::Lost);
        // Settled once: a later word does not change it.
        log.settle_delivery(&lost.nonce, Delivery::Delivered);
        assert_eq!(log.settle(Duration::ZERO), 0);
        let delivered: Vec<bool> = log.calls().iter().map(|c| c.delivered).collect();
        assert_eq!(delivered, [true, false]);
        assert_eq!(log.deliveries(), [Delivery::Delivered, Delivery::Lost]);
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
