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
use symfonic_evals::mcp::{FixtureTool, McpFixture};
use symfonic_evals::server_policy::ServerPolicy;

fn fixture() -> McpFixture {
    let policy = ServerPolicy {
        head_timeout: Duration::from_secs(30),
        body_timeout: Duration::from_secs(30),
        idle_timeout: Duration::from_secs(30),
        write_timeout: Duration::from_secs(30),
        max_connections: 4,
        max_per_peer: 4,
        max_body_bytes: 1 << 20,
    };
    McpFixture::start_with(
        FixtureTool::new("track", None, None, Some(&json!({ "status": "ok" }))),
        policy,
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
