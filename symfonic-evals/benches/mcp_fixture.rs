//! What the MCP fixture costs: starting (and stopping) one trial's server,
//! a client's connection to it (initialize and `tools/list`), and one
//! `tools/call` round trip over Streamable HTTP on a kept session, as the
//! official SDK's client makes them; and one round trip over stdio through
//! the bridge a deployment launches (built beside this example:
//! `cargo build --release -p symfonic-evals --bin symfonic-evals-mcp-stdio`).
//!
//! `cargo bench -p symfonic-evals --bench mcp_fixture`

use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ClientConfig};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use serde_json::json;
use symfonic_evals::mcp::{FixtureTool, McpFixture};

const STARTS: usize = 200;
const CONNECTS: usize = 50;
// Under the fixture's per-trial call limit.
const CALLS: usize = 200;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn tool() -> FixtureTool {
    FixtureTool::new(
        "track_shipment",
        None,
        Some(&json!({ "order": 7, "include_eta": true })),
        Some(&json!({ "status": "in transit" })),
    )
}

fn main() {
    let mut starts = Vec::with_capacity(STARTS);
    for _ in 0..STARTS {
        let began = Instant::now();
        let fixture = McpFixture::start(tool()).expect("fixture starts");
        drop(fixture);
        starts.push(began.elapsed());
    }
    let fixture = McpFixture::start(tool()).expect("fixture starts");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let connect = || {
        runtime.block_on(async {
            let transport = StreamableHttpClientTransport::from_config(
                StreamableHttpClientTransportConfig::with_uri(fixture.url().to_owned()),
            );
            let client = ClientConfig::default()
                .serve(transport)
                .await
                .expect("connects");
            client.list_tools(Default::default()).await.expect("lists");
            client
        })
    };
    let mut connects = Vec::with_capacity(CONNECTS);
    for _ in 0..CONNECTS {
        let began = Instant::now();
        let client = connect();
        connects.push(began.elapsed());
        runtime.block_on(async { drop(client.cancel().await) });
    }
    let client = connect();
    let arguments = json!({ "order": 7, "include_eta": true })
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut calls = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let params = CallToolRequestParams::new("track_shipment").with_arguments(arguments.clone());
        let began = Instant::now();
        let result = runtime
            .block_on(client.call_tool(params))
            .expect("the call is answered");
        calls.push(began.elapsed());
        assert_ne!(result.is_error, Some(true));
    }
    assert_eq!(fixture.log().call_count(), CALLS);
    let stdio = stdio_round_trips();
    println!("MCP fixture, Streamable HTTP on loopback (median):");
    println!(
        "  start and stop, per trial:     {:>8.1} µs ({STARTS} runs)",
        median(starts).as_secs_f64() * 1e6
    );
    println!(
        "  connect (initialize + list):   {:>8.1} µs ({CONNECTS} runs)",
        median(connects).as_secs_f64() * 1e6
    );
    println!(
        "  tools/call round trip:         {:>8.1} µs ({CALLS} calls)",
        median(calls).as_secs_f64() * 1e6
    );
    match stdio {
        Some(stdio) => println!(
            "  tools/call over stdio (bridge): {:>8.1} µs ({CALLS} calls)",
            median(stdio).as_secs_f64() * 1e6
        ),
        None => println!("  stdio: skipped (build the symfonic-evals-mcp-stdio binary first)"),
    }
}

/// `tools/call` round trips through the stdio bridge, as raw JSON-RPC
/// lines; `None` when the bridge is not built.
fn stdio_round_trips() -> Option<Vec<Duration>> {
    use std::io::{BufRead, BufReader, Write};
    let bridge = symfonic_evals::mcp::stdio_bridge()?;
    let fixture = McpFixture::start(tool()).expect("fixture starts");
    let mut child = std::process::Command::new(bridge)
        .arg(fixture.stdio_locator())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let mut stdout = BufReader::new(child.stdout.take()?);
    let mut send = |line: serde_json::Value, answered: bool| {
        writeln!(stdin, "{line}").expect("writes");
        if answered {
            let mut reply = String::new();
            stdout.read_line(&mut reply).expect("reads");
        }
    };
    send(
        json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": { "name": "bench", "version": "1" } } }),
        true,
    );
    send(
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        false,
    );
    let mut samples = Vec::with_capacity(CALLS);
    for id in 1..=CALLS {
        let began = Instant::now();
        send(
            json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": "track_shipment", "arguments": { "order": 7, "include_eta": true } } }),
            true,
        );
        samples.push(began.elapsed());
    }
    drop(stdin);
    let _ = child.wait();
    assert_eq!(fixture.log().call_count(), CALLS);
    Some(samples)
}
