//! What model replay costs: the median latency of one replayed model call
//! (non-streaming and streaming, on a kept-alive loopback connection, as an
//! SDK makes them) and the endpoint's start-up cost per trial.
//!
//! `cargo run --release -p symfonic-evals --example replay_latency`
//!
//! The goal is under 1 ms per replayed call.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
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

/// One kept-alive connection; reads a whole response (length or chunked).
struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Connection {
    fn open(url: &str) -> Self {
        let stream = TcpStream::connect(url.trim_start_matches("http://")).expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        Self {
            reader: BufReader::new(stream.try_clone().expect("clone")),
            writer: stream,
        }
    }

    fn post(&mut self, body: &[u8]) -> usize {
        let head = format!(
            "POST /v1/chat/completions HTTP/1.1\r\nhost: bench\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body);
        self.writer.write_all(&bytes).expect("write");
        let mut line = String::new();
        let mut length = None;
        let mut chunked = false;
        loop {
            line.clear();
            self.reader.read_line(&mut line).expect("head");
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if l.starts_with("HTTP/1.1 ") {
                assert!(l.starts_with("HTTP/1.1 200"), "replay answered {l}");
            }
            if let Some(v) = l.strip_prefix("content-length: ") {
                length = v.parse::<usize>().ok();
            }
            chunked |= l == "transfer-encoding: chunked";
        }
        if let Some(n) = length {
            let mut body = vec![0; n];
            self.reader.read_exact(&mut body).expect("body");
            return 1;
        }
        assert!(chunked, "a length or chunks");
        let mut chunks = 0;
        loop {
            line.clear();
            self.reader.read_line(&mut line).expect("chunk size");
            let size = usize::from_str_radix(line.trim_end(), 16).expect("hex size");
            if size == 0 {
                line.clear();
                self.reader.read_line(&mut line).expect("end");
                return chunks;
            }
            let mut chunk = vec![0; size + 2];
            self.reader.read_exact(&mut chunk).expect("chunk");
            chunks += 1;
        }
    }
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn p99(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() * 99 / 100]
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
        connection.post(body);
        plain.push(started.elapsed());
        let started = Instant::now();
        let chunks = connection.post(stream_body);
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
