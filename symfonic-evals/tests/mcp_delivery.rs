//! A call counts as served only once its whole answer reached the client:
//! an answer the client read is delivered, one it shut out and abandoned
//! is not. Driven over the fixture's line side, where a client is a plain
//! socket the test controls byte by byte.
#![cfg(feature = "mcp")]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use symfonic_evals::mcp::{FixtureTool, McpFixture, SETTLE_TIMEOUT};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const CALL: &str =
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"track","arguments":{}}}"#;

fn start(content: Value) -> McpFixture {
    McpFixture::start(FixtureTool::new("track", None, None, Some(&content))).expect("starts")
}

/// A line-protocol session, initialized, its call sent.
fn session(fixture: &McpFixture) -> (TcpStream, BufReader<TcpStream>) {
    let mut stream = fixture.stdio_client().expect("connects");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    writeln!(stream, "{INITIALIZE}").unwrap();
    let mut line = String::new();
    reader.read_line(&mut line).expect("initialized");
    assert!(line.contains("\"result\""), "{line}");
    writeln!(stream, "{INITIALIZED}").unwrap();
    writeln!(stream, "{CALL}").unwrap();
    (stream, reader)
}

/// Waits (boundedly) for the fixture to have received `n` calls.
fn received(fixture: &McpFixture, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while fixture.log().call_count() < n {
        assert!(Instant::now() < deadline, "the call never arrived");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn an_answer_the_client_read_is_delivered() {
    let fixture = start(json!({ "status": "in transit" }));
    let (_stream, mut reader) = session(&fixture);
    let mut answer = String::new();
    reader.read_line(&mut answer).expect("answered");
    let calls = fixture.log().calls();
    assert!(answer.contains(&calls[0].nonce));
    assert_eq!(fixture.log().settle(Duration::from_secs(10)), 0);
    assert!(fixture.log().calls()[0].delivered);
}

#[test]
fn an_answer_the_client_never_took_in_is_not_delivered() {
    // An answer far larger than any socket buffer: the client reads
    // nothing, so the answer cannot have arrived whole when it hangs up.
    let fixture = start(json!({ "status": "x".repeat(32 << 20) }));
    let (stream, reader) = session(&fixture);
    received(&fixture, 1);
    drop(reader);
    drop(stream);
    // Its nonce may never have been written: the wait ends at the
    // harness's own bound, and an answer still on its way then is not
    // delivered.
    fixture.log().settle(SETTLE_TIMEOUT);
    let calls = fixture.log().calls();
    assert_eq!(calls.len(), 1, "the call was received");
    assert!(
        !calls[0].delivered,
        "an answer never taken in is not served"
    );
}
