//! The model endpoint under load and on misses, on loopback only, with a
//! bounded number of requests:
//!
//! - **Concurrency**: 1, 8 and 64 clients, each on its own kept-alive
//!   connection, replaying plain and streamed calls; every answer is
//!   checked to be the one recorded for that client's request (no error,
//!   no crossed answer). Median and p99 latency per call, and calls per
//!   second.
//! - **Misses**: how long a request the cassette lacks takes to be
//!   answered, against cassettes of 100, 4,000 and 20,000 exchanges on the
//!   same path, with a small request and 1 MiB ones (in one message, and
//!   in 5,000, as a long conversation sends it).
//!
//! `cargo bench -p symfonic-evals --bench replay_load`

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use symfonic_evals::replay::{ReplayConfig, ReplayMode, ReplaySession, ReplaySettings};

#[path = "support/http_client.rs"]
mod http_client;
use http_client::{median, p99, Connection};

const CALLS_PER_CLIENT: usize = 200;
const MISSES: usize = 15;

fn request(i: usize, stream: bool, filler: usize) -> Value {
    json!({
        "model": "bench",
        "stream": stream,
        "messages": [
            {"role": "system", "content": "You are a help desk agent."},
            {"role": "user", "content": format!("request {i}: where is my parcel? {}", "x".repeat(filler))},
        ],
    })
}

/// A long conversation: about 1 MiB in `turns` messages, the shape a
/// long-context agent sends.
fn conversation(i: usize, turns: usize) -> Value {
    let messages: Vec<Value> = (0..turns)
        .map(|t| json!({"role": if t % 2 == 0 { "user" } else { "assistant" }, "content": format!("turn {t} of request {i}: {}", "y".repeat(1024 * 1024 / turns))}))
        .collect();
    json!({"model": "bench", "stream": false, "messages": messages})
}

fn line(i: usize, stream: bool, filler: usize) -> String {
    let response = if stream {
        json!({"status": 200, "content_type": "text/event-stream", "events": (0..8).map(|n| format!("data: {}", json!({"i": i, "n": n}))).collect::<Vec<_>>()})
    } else {
        json!({"status": 200, "content_type": "application/json", "body": {"i": i}})
    };
    let exchange = json!({
        "scenario": "bench", "trial": 0, "ordinal": 0,
        "request": {"method": "POST", "path": "/v1/chat/completions", "body": request(i, stream, filler)},
        "response": response,
    });
    format!("{exchange}\n")
}

fn session(
    dir: &std::path::Path,
    name: &str,
    lines: impl Iterator<Item = String>,
) -> Arc<ReplaySession> {
    let cassette = dir.join(format!("{name}.jsonl"));
    std::fs::write(&cassette, lines.collect::<String>()).expect("write the cassette");
    let settings = ReplaySettings::resolve_with(
        "bench",
        &ReplayConfig::mode(ReplayMode::Replay).with_cassette(&cassette),
        |_| None,
    )
    .expect("settings");
    Arc::new(ReplaySession::with_settings(settings).expect("the cassette loads"))
}

fn concurrency(dir: &std::path::Path) {
    let requests = 64 * CALLS_PER_CLIENT;
    let session = session(
        dir,
        "load",
        (0..requests).flat_map(|i| [line(i, false, 0), line(i, true, 0)]),
    );
    println!(
        "concurrency: {CALLS_PER_CLIENT} plain + {CALLS_PER_CLIENT} streamed calls per client"
    );
    for clients in [1, 8, 64] {
        let endpoint = session.start("bench", 0).expect("an endpoint");
        let url = endpoint.url().to_owned();
        let started = Instant::now();
        let workers: Vec<_> = (0..clients)
            .map(|c| {
                let url = url.clone();
                std::thread::spawn(move || {
                    let mut connection = Connection::open(&url);
                    let mut samples = Vec::with_capacity(CALLS_PER_CLIENT * 2);
                    for k in 0..CALLS_PER_CLIENT {
                        let i = c * CALLS_PER_CLIENT + k;
                        for stream in [false, true] {
                            let body = request(i, stream, 0).to_string();
                            let t = Instant::now();
                            let reply = connection.post("/v1/chat/completions", body.as_bytes());
                            samples.push(t.elapsed());
                            assert_eq!(reply.status, 200, "client {c} call {k}");
                            let text = String::from_utf8_lossy(&reply.body);
                            assert!(text.contains(&format!("\"i\":{i}")), "a crossed answer");
                        }
                    }
                    samples
                })
            })
            .collect();
        let samples: Vec<Duration> = workers
            .into_iter()
            .flat_map(|w| w.join().expect("a client"))
            .collect();
        let wall = started.elapsed();
        assert!(endpoint.take_failures().is_empty(), "every call was a hit");
        println!(
            "  {clients:>2} clients: {:>6} calls, median {:>8.1} us, p99 {:>8.1} us, {:>7.0} calls/s, 0 errors, 0 crossed",
            samples.len(),
            median(samples.clone()).as_secs_f64() * 1e6,
            p99(samples.clone()).as_secs_f64() * 1e6,
            samples.len() as f64 / wall.as_secs_f64()
        );
    }
}

fn misses(dir: &std::path::Path) {
    println!("misses: time to answer a request the cassette lacks (median of {MISSES})");
    for size in [100, 4_000, 20_000] {
        let session = session(
            dir,
            &format!("miss{size}"),
            (0..size).map(|i| line(i, false, 200)),
        );
        let endpoint = session.start("bench", 0).expect("an endpoint");
        let mut connection = Connection::open(endpoint.url());
        let shapes: [(&str, &dyn Fn(usize) -> Value); 3] = [
            ("small", &|i| request(i, false, 200)),
            ("1 MiB in one message", &|i| request(i, false, 1024 * 1024)),
            ("1 MiB in 5,000 messages", &|i| conversation(i, 5_000)),
        ];
        for (label, make) in shapes {
            let mut samples = Vec::with_capacity(MISSES);
            for n in 0..MISSES {
                let body = make(size + n).to_string();
                let t = Instant::now();
                let reply = connection.post("/v1/chat/completions", body.as_bytes());
                samples.push(t.elapsed());
                assert_eq!(reply.status, 404, "a miss");
            }
            let _ = endpoint.take_failures();
            println!(
                "  {size:>6} exchanges, {label:>23} request: median {:>8.2} ms, max {:>8.2} ms",
                median(samples.clone()).as_secs_f64() * 1e3,
                samples
                    .iter()
                    .max()
                    .copied()
                    .unwrap_or_default()
                    .as_secs_f64()
                    * 1e3
            );
        }
    }
}

fn main() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    concurrency(dir.path());
    misses(dir.path());
}
