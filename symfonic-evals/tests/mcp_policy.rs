//! The server policy on the MCP fixture, at small scale: connections that
//! hold a slot and send nothing (or half a body) no longer stop a client,
//! on the HTTP side or the bridge's line side.
#![cfg(feature = "mcp")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientConfig};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use serde_json::json;
use symfonic_evals::mcp::{FixtureTool, McpFixture, SessionLimits};
use symfonic_evals::server_policy::ServerPolicy;

fn fixture() -> McpFixture {
    let policy = ServerPolicy {
        head_timeout: Duration::from_secs(30),
        body_timeout: Duration::from_secs(30),
        idle_timeout: Duration::from_secs(30),
        write_timeout: Duration::from_secs(30),
        max_connections: 4,
        max_per_peer: 4,
        admission_wait: Duration::from_millis(100),
        max_body_bytes: 1 << 20,
    };
    McpFixture::start_with(
        FixtureTool::new("track", None, None, Some(&json!({ "status": "ok" }))),
        policy,
        SessionLimits::default(),
    )
    .expect("starts")
}

fn address(fixture: &McpFixture) -> String {
    fixture
        .url()
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned()
}

#[test]
fn idle_and_half_sent_connections_do_not_stop_an_http_client() {
    let fixture = fixture();
    // Every slot taken: two silent, two in the middle of a body. Their
    // deadlines are far off; only shedding can make room.
    let mut hogs: Vec<TcpStream> = (0..2)
        .map(|_| TcpStream::connect(address(&fixture)).unwrap())
        .collect();
    for _ in 0..2 {
        let mut hog = TcpStream::connect(address(&fixture)).unwrap();
        hog.write_all(
            b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: application/json, text/event-stream\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{",
        )
        .unwrap();
        hogs.push(hog);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(async {
        let transport = StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(fixture.url().to_owned()),
        );
        let client = ClientConfig::default()
            .serve(transport)
            .await
            .expect("initializes");
        client
            .call_tool(CallToolRequestParams::new("track"))
            .await
            .expect("answered")
    });
    assert_eq!(result.is_error, Some(false));
    // The slots the client needed came from the hogs.
    let shed = hogs
        .iter_mut()
        .map(|hog| {
            hog.set_read_timeout(Some(Duration::from_millis(500)))
                .unwrap();
            let mut buf = [0; 64];
            hog.read(&mut buf)
        })
        .filter(|read| matches!(read, Ok(0)))
        .count();
    assert!(shed >= 1, "no hog was shed");
}

#[test]
fn idle_connections_do_not_stop_the_bridge() {
    let fixture = fixture();
    let _hogs: Vec<TcpStream> = (0..8)
        .map(|_| TcpStream::connect(fixture.stdio_address()).unwrap())
        .collect();
    let mut stream = fixture.stdio_client().expect("connects");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    writeln!(
        stream,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"0"}}}}}}"#
    )
    .unwrap();
    let mut line = String::new();
    reader.read_line(&mut line).expect("initialized");
    assert!(line.contains("\"result\""), "{line}");
}

/// One raw `initialize` over HTTP with `origin`; the status line.
fn initialize_from(fixture: &McpFixture, origin: &str) -> String {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let mut stream = TcpStream::connect(address(fixture)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n{origin}accept: application/json, text/event-stream\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    let _ = BufReader::new(stream).read_line(&mut answer);
    answer.trim().to_owned()
}

#[test]
fn a_page_of_another_origin_is_refused_and_local_clients_are_not() {
    let fixture = fixture();
    assert!(initialize_from(&fixture, "origin: http://attacker.example\r\n").contains("403"));
    assert!(initialize_from(&fixture, "origin: http://127.0.0.1:8080\r\n").contains("200"));
    assert!(initialize_from(&fixture, "origin: http://localhost:3000\r\n").contains("200"));
    // No Origin: not a browser page.
    assert!(initialize_from(&fixture, "").contains("200"));
}

/// Sends one request of session `session` (or of none); the status line
/// and the session id the answer gave.
fn request(fixture: &McpFixture, session: Option<&str>, body: &str) -> (String, Option<String>) {
    let mut stream = TcpStream::connect(address(fixture)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let session = session.map_or(String::new(), |id| format!("mcp-session-id: {id}\r\n"));
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n{session}accept: application/json, text/event-stream\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut status = String::new();
    let mut reader = BufReader::new(stream);
    let _ = reader.read_line(&mut status);
    let mut id = None;
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("mcp-session-id:") {
            id = Some(value.trim().to_owned());
        }
        line.clear();
    }
    (status.trim().to_owned(), id)
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
const LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn session(fixture: &McpFixture) -> String {
    let (status, id) = request(fixture, None, INITIALIZE);
    assert!(status.contains("200"), "{status}");
    let id = id.expect("a session id");
    let (status, _) = request(fixture, Some(&id), INITIALIZED);
    assert!(status.contains("202"), "{status}");
    id
}

#[test]
fn sessions_past_the_cap_close_the_least_recently_used_and_idle_ones_expire() {
    let policy = ServerPolicy::defaults(1 << 20);
    let tool = || FixtureTool::new("track", None, None, None);
    let capped = McpFixture::start_with(
        tool(),
        policy,
        SessionLimits {
            max_sessions: 2,
            idle: Duration::from_secs(600),
            ..SessionLimits::default()
        },
    )
    .unwrap();
    let first = session(&capped);
    let second = session(&capped);
    // The first is used again; a third session closes the second.
    assert!(request(&capped, Some(&first), LIST).0.contains("200"));
    let third = session(&capped);
    assert!(request(&capped, Some(&first), LIST).0.contains("200"));
    assert!(request(&capped, Some(&third), LIST).0.contains("200"));
    assert!(request(&capped, Some(&second), LIST).0.contains("404"));

    let expiring = McpFixture::start_with(
        tool(),
        policy,
        SessionLimits {
            max_sessions: 8,
            idle: Duration::from_millis(100),
            ..SessionLimits::default()
        },
    )
    .unwrap();
    let id = session(&expiring);
    // Each look is a request, which keeps the session alive: look again
    // after ever longer silences, until one outlasts the idle limit.
    let mut silence = Duration::from_millis(200);
    loop {
        std::thread::sleep(silence);
        if request(&expiring, Some(&id), LIST).0.contains("404") {
            break;
        }
        silence *= 2;
        assert!(silence < Duration::from_secs(30), "never expired");
    }
}

#[test]
fn the_line_side_drops_anything_but_the_bridge_at_once() {
    let fixture = fixture();
    // A client speaking MCP without the trial's secret is dropped at its
    // first byte, unanswered.
    let mut stranger = TcpStream::connect(fixture.stdio_address()).unwrap();
    stranger
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let _ = writeln!(
        stranger,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{}}}}"#
    );
    let mut answer = Vec::new();
    let _ = stranger.read_to_end(&mut answer);
    assert!(answer.is_empty(), "{}", String::from_utf8_lossy(&answer));
    // A wrong secret of the right shape too.
    let locator = fixture.stdio_locator();
    let (_, secret) = locator.split_once('/').unwrap();
    let mut guesser = TcpStream::connect(fixture.stdio_address()).unwrap();
    guesser
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let wrong: String = secret
        .chars()
        .map(|c| if c == '0' { '1' } else { '0' })
        .collect();
    let _ = writeln!(guesser, "{wrong}");
    let mut answer = Vec::new();
    let _ = guesser.read_to_end(&mut answer);
    assert!(answer.is_empty());
    // Each trial has its own secret.
    assert_ne!(fixture.stdio_locator(), self::fixture().stdio_locator());
}
