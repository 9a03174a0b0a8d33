//! The MCP fixture as a client meets it: the tool listed with its schema,
//! each call answered with a nonce of its own and recorded as received, a
//! scripted error, and bad input (malformed JSON-RPC, an unknown tool, no
//! initialize) refused without blocking anything; dropped, it stops.
#![cfg(feature = "mcp")]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientConfig};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use symfonic_evals::mcp::{FixtureRefusal, FixtureTool, McpFixture};

fn fixture() -> McpFixture {
    McpFixture::start(FixtureTool::new(
        "track",
        None,
        Some(&json!({ "order": 7 })),
        Some(&json!({ "status": "in transit" })),
    ))
    .expect("starts")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn connect(
    runtime: &tokio::runtime::Runtime,
    url: &str,
) -> RunningService<RoleClient, ClientConfig> {
    runtime.block_on(async {
        let transport = StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(url.to_owned()),
        );
        ClientConfig::default()
            .serve(transport)
            .await
            .expect("initializes")
    })
}

fn call(arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new("track")
        .with_arguments(arguments.as_object().cloned().unwrap_or_default())
}

#[test]
fn each_call_is_recorded_as_received_and_answered_with_its_own_nonce() {
    let fixture = fixture();
    let runtime = runtime();
    let client = connect(&runtime, fixture.url());
    let listed = runtime
        .block_on(client.list_tools(Default::default()))
        .expect("lists");
    assert_eq!(listed.tools.len(), 1);
    assert_eq!(listed.tools[0].name, "track");
    assert_eq!(
        Value::Object((*listed.tools[0].input_schema).clone()),
        json!({ "type": "object", "properties": { "order": { "type": "integer" } } })
    );
    let first = runtime
        .block_on(client.call_tool(call(json!({ "order": 7 }))))
        .expect("answered");
    fixture.log().fail_calls(true);
    let failed = runtime
        .block_on(client.call_tool(call(json!({ "order": 8 }))))
        .expect("answered");
    fixture.log().fail_calls(false);
    let second = runtime
        .block_on(client.call_tool(call(json!({}))))
        .expect("answered");
    assert_eq!(fixture.log().settle(Duration::from_secs(10)), 0);
    let calls = fixture.log().calls();
    assert_eq!(calls.len(), 3);
    assert!(
        calls.iter().all(|call| call.delivered),
        "every answer the client read was delivered"
    );
    assert_eq!(calls[0].arguments, json!({ "order": 7 }));
    assert_eq!(calls[1].arguments, json!({ "order": 8 }));
    assert_eq!(calls[2].arguments, json!({}));
    assert_eq!(
        first.structured_content,
        Some(json!({ "status": "in transit", "nonce": calls[0].nonce }))
    );
    assert_eq!(failed.is_error, Some(true));
    assert!(calls[1].failed);
    assert_eq!(
        second
            .structured_content
            .as_ref()
            .and_then(|r| r.get("nonce")),
        Some(&json!(calls[2].nonce))
    );
    assert_ne!(calls[0].nonce, calls[2].nonce);
    assert_eq!(fixture.log().listings(), 1);
}

#[test]
fn an_unknown_tool_is_refused_and_recorded_by_digest() {
    let fixture = fixture();
    let runtime = runtime();
    let client = connect(&runtime, fixture.url());
    let refused = runtime.block_on(client.call_tool(CallToolRequestParams::new("secret-tool")));
    assert!(refused.is_err(), "{refused:?}");
    assert!(fixture.log().calls().is_empty());
    let refusals = fixture.log().refusals();
    assert!(matches!(
        refusals.as_slice(),
        [FixtureRefusal::UnknownTool(_)]
    ));
    assert!(!refusals[0].to_string().contains("secret-tool"));
}

/// One raw HTTP exchange, as a broken client would make it.
fn raw(url: &str, request: &str) -> String {
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let mut stream = TcpStream::connect(address).expect("connects");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    stream.write_all(request.as_bytes()).expect("sends");
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response
}

#[test]
fn malformed_json_rpc_and_a_call_without_initialize_get_protocol_errors() {
    let fixture = fixture();
    let post = |body: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nConnection: close\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    let malformed = raw(fixture.url(), &post("{\"jsonrpc\": \"2.0\", \"method\""));
    assert!(malformed.starts_with("HTTP/1.1 4"), "{malformed}");
    let uninitialized = raw(
        fixture.url(),
        &post(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"track"}}"#),
    );
    assert!(uninitialized.starts_with("HTTP/1.1 4"), "{uninitialized}");
    assert!(fixture.log().calls().is_empty());
    // The fixture still serves a well-behaved client.
    let runtime = runtime();
    let client = connect(&runtime, fixture.url());
    runtime
        .block_on(client.call_tool(call(json!({ "order": 7 }))))
        .expect("answered");
    assert_eq!(fixture.log().call_count(), 1);
}

#[test]
fn a_dropped_fixture_stops_serving_even_with_a_session_open() {
    let fixture = fixture();
    let url = fixture.url().to_owned();
    let runtime = runtime();
    let _client = connect(&runtime, &url);
    drop(fixture);
    let address = url.trim_start_matches("http://").trim_end_matches("/mcp");
    assert!(TcpStream::connect(address).is_err(), "still listening");
}

/// The stdio bridge, launched as a deployment launches a stdio MCP server.
fn bridge(fixture: &McpFixture) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_symfonic-evals-mcp-stdio"))
        .arg(fixture.stdio_locator())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the bridge starts")
}

#[test]
fn over_stdio_the_bridge_carries_a_session_to_the_fixture() {
    use std::io::BufRead;
    let fixture = fixture();
    let mut child = bridge(&fixture);
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut exchange = |line: Value, answered: bool| -> Option<Value> {
        writeln!(stdin, "{line}").expect("writes");
        stdin.flush().expect("flushes");
        answered.then(|| {
            let mut reply = String::new();
            stdout.read_line(&mut reply).expect("reads");
            serde_json::from_str(&reply).expect("a JSON-RPC line")
        })
    };
    let init = exchange(
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": { "name": "desk", "version": "1" } } }),
        true,
    )
    .expect("initialized");
    assert!(init.get("result").is_some(), "{init}");
    exchange(
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        false,
    );
    let listed = exchange(
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {} }),
        true,
    )
    .expect("listed");
    assert_eq!(listed["result"]["tools"][0]["name"], "track", "{listed}");
    let called = exchange(
        json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": { "name": "track", "arguments": { "order": 7 } } }),
        true,
    )
    .expect("called");
    let calls = fixture.log().calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].arguments, json!({ "order": 7 }));
    assert_eq!(
        called["result"]["structuredContent"]["nonce"],
        json!(calls[0].nonce),
        "{called}"
    );
    // Garbage ends the session, not the fixture.
    exchange(json!("not a request"), false);
    drop(stdin);
    let _ = child.wait();
    let runtime = runtime();
    let client = connect(&runtime, fixture.url());
    runtime
        .block_on(client.call_tool(call(json!({ "order": 8 }))))
        .expect("answered over HTTP");
    assert_eq!(fixture.log().call_count(), 2);
    assert_eq!(fixture.log().listings(), 1);
}

/// What a hand-written client reads from a POST (the extension tool page
/// documents it): an event stream whose first event primes reconnection
/// with an event id and empty `data`, as the MCP specification's Streamable
/// HTTP transport (2025-11-25) asks, then the JSON-RPC answer as `data`.
#[test]
fn a_post_answers_with_a_priming_event_then_the_answer() {
    let fixture = fixture();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"by-hand","version":"1"}}}"#;
    let response = raw(
        fixture.url(),
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nConnection: close\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    );
    let (head, stream) = response.split_once("\r\n\r\n").expect("a head and a body");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/event-stream"),
        "{head}"
    );
    // Chunked transfer: keep the lines of the event stream, not the sizes.
    let lines: Vec<&str> = stream
        .split("\r\n")
        .flat_map(|chunk| chunk.split('\n'))
        .filter(|l| l.is_empty() || l.contains(':'))
        .collect();
    let events: Vec<Vec<&str>> = lines
        .split(|l| l.is_empty())
        .filter(|e| !e.is_empty())
        .map(<[&str]>::to_vec)
        .collect();
    let data = |event: &[&str]| -> String {
        event
            .iter()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim_start)
            .collect()
    };
    let first = &events[0];
    assert!(first.iter().any(|l| l.starts_with("id:")), "{events:?}");
    assert!(first.iter().any(|l| l.starts_with("data:")), "{events:?}");
    assert_eq!(data(first), "", "the priming event carries no data");
    let answer: Value = serde_json::from_str(&data(&events[1])).expect("JSON-RPC as data");
    assert_eq!(answer["id"], 1, "{answer}");
    assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
}
