//! What model replay costs: the median latency of one replayed model call
//! (non-streaming and streaming, on a kept-alive loopback connection, as an
//! SDK makes them) and the endpoint's start-up cost per trial.
//!
//! `cargo bench -p symfonic-evals --bench replay_latency`
//!
//! The goal is under 1 ms per replayed call.

use std::sync::Arc;
use std::time::Instant;

use serde_json::json;

#[path = "support/http_client.rs"]
mod http_client;
use http_client::{median, p99, Connection};
use symfonic_evals::replay::{
    Exchange, RecordedRequest, RecordedResponse, ReplayConfig, ReplayMode, ReplaySession,
    ReplaySettings,
};

const CALLS: usize = 2000;
const STARTS: usize = 500;
const EVENTS: usize = 20;

fn request_body(i: usize, stream: bool) -> serde_json::Value {
    json!({
        "model": "bench",
        "stream": stream,
        "messages": [
            { "role": "system", "content": "You are a help desk agent. ".repeat(20) },
            { "role": "user", "content": format!("request number {i}: where is my parcel?") },
        ],
    })
}

fn exchange(i: usize, stream: bool) -> Exchange {
    let response = if stream {
        RecordedResponse {
            status: 200,
            content_type: "text/event-stream".into(),
            body: None,
            text: None,
            events: Some(
                (0..EVENTS)
                    .map(|n| {
                        format!(
                            "data: {}",
                            json!({"choices": [{"delta": {"content": format!("word{n} ")}}]})
                        )
                    })
                    .chain(["data: [DONE]".to_owned()])
                    .collect(),
            ),
        }
    } else {
        RecordedResponse {
            status: 200,
            content_type: "application/json".into(),
            body: Some(json!({
                "id": format!("chatcmpl-{i}"),
                "choices": [{ "index": 0, "message": { "role": "assistant", "content": "Your parcel is in transit. ".repeat(8) }, "finish_reason": "stop" }],
            })),
            text: None,
            events: None,
        }
    };
    Exchange {
        scenario: "bench".into(),
        trial: 0,
        ordinal: 0,
        request: RecordedRequest {
            method: "POST".into(),
            path: "/v1/chat/completions".into(),
            body: request_body(i, stream),
        },
        response,
        recorded: None,
    }
}

fn main() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let cassette = dir.path().join("bench.jsonl");
    let mut text = String::new();
    for i in 0..CALLS {
        for stream in [false, true] {
            text.push_str(&serde_json::to_string(&exchange(i, stream)).expect("json"));
            text.push('\n');
        }
    }
    std::fs::write(&cassette, text).expect("write the cassette");
    let load_started = Instant::now();
    let settings = ReplaySettings::resolve_with(
        "bench",
        &ReplayConfig::mode(ReplayMode::Replay).with_cassette(&cassette),
        |_| None,
    )
    .expect("settings");
    let session = Arc::new(ReplaySession::with_settings(settings).expect("the cassette loads"));
    let load = load_started.elapsed();

    let endpoint = session.start("bench", 0).expect("an endpoint");
    let mut connection = Connection::open(endpoint.url());
    let bodies: Vec<(Vec<u8>, Vec<u8>)> = (0..CALLS)
        .map(|i| {
            (
                request_body(i, false).to_string().into_bytes(),
                request_body(i, true).to_string().into_bytes(),
            )
        })
        .collect();
    let mut plain = Vec::with_capacity(CALLS);
    let mut streamed = Vec::with_capacity(CALLS);
    for (body, stream_body) in &bodies {
        let started = Instant::now();
        let reply = connection.post("/v1/chat/completions", body);
        assert_eq!(reply.status, 200, "a replayed call");
        plain.push(started.elapsed());
        let started = Instant::now();
        let chunks = connection.post("/v1/chat/completions", stream_body).chunks;
        streamed.push(started.elapsed());
        assert_eq!(chunks, EVENTS + 1, "every event replayed as its own chunk");
    }
    assert!(endpoint.take_failures().is_empty(), "every call was a hit");
    drop(connection);
    drop(endpoint);

    let mut starts = Vec::with_capacity(STARTS);
    let mut lifetimes = Vec::with_capacity(STARTS);
    for trial in 0..STARTS {
        let started = Instant::now();
        let endpoint = session
            .start("bench", u32::try_from(trial).unwrap_or(0))
            .expect("an endpoint");
        starts.push(started.elapsed());
        drop(endpoint);
        lifetimes.push(started.elapsed());
    }

    println!(
        "model replay, {CALLS} calls each, {} exchanges in the cassette (loaded in {:.1} ms)",
        CALLS * 2,
        load.as_secs_f64() * 1e3
    );
    println!(
        "  replayed call, non-streaming:        median {:>7.1} us   p99 {:>7.1} us",
        median(plain.clone()).as_secs_f64() * 1e6,
        p99(plain).as_secs_f64() * 1e6
    );
    println!(
        "  replayed call, streaming ({EVENTS} events): median {:>7.1} us   p99 {:>7.1} us",
        median(streamed.clone()).as_secs_f64() * 1e6,
        p99(streamed).as_secs_f64() * 1e6
    );
    println!(
        "  endpoint start-up per trial:          median {:>7.1} us   (start and stop: {:.1} us)",
        median(starts).as_secs_f64() * 1e6,
        median(lifetimes).as_secs_f64() * 1e6
    );
}
