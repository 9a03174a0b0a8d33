//! Property: whatever bytes a client sends, cut wherever, to the model
//! endpoint's or the MCP fixture's HTTP side or to the fixture's line side,
//! the server answers with a well-formed answer or refusal, or closes, and
//! goes on serving the next client (see `boundaries`, which the fuzz
//! target in `fuzz/` drives too).
#![cfg(feature = "mcp")]

#[path = "boundaries/mod.rs"]
mod boundaries;

use std::sync::OnceLock;

use boundaries::{Door, Servers};
use proptest::prelude::*;

fn servers() -> &'static Servers {
    static SERVERS: OnceLock<Servers> = OnceLock::new();
    SERVERS.get_or_init(Servers::start)
}

/// A request built from parts a parser must tell apart: a method, a
/// target, headers (the ones the servers read, `Origin` and `Host`
/// included, with any value), a body (often a JSON-RPC envelope, whole or
/// bent), any of it cut short.
fn request() -> impl Strategy<Value = Vec<u8>> {
    let method = prop_oneof![
        Just("POST".to_owned()),
        Just("GET".to_owned()),
        Just("DELETE".to_owned()),
        "[A-Z]{0,8}",
        ".{0,12}",
    ];
    let target = prop_oneof![
        Just("/mcp".to_owned()),
        Just("/v1/chat/completions".to_owned()),
        Just("http://127.0.0.1/mcp".to_owned()),
        "/[ -~]{0,40}",
        ".{0,40}",
    ];
    let name = prop_oneof![
        Just("host"),
        Just("origin"),
        Just("content-length"),
        Just("transfer-encoding"),
        Just("mcp-session-id"),
        Just("mcp-protocol-version"),
        Just("accept"),
        Just("content-type"),
        Just("expect"),
        Just("connection"),
        Just("x-other"),
    ];
    let value = prop_oneof![
        Just("127.0.0.1".to_owned()),
        Just("http://localhost:1".to_owned()),
        Just("http://evil.example".to_owned()),
        Just("null".to_owned()),
        Just("chunked".to_owned()),
        Just("100-continue".to_owned()),
        Just("application/json, text/event-stream".to_owned()),
        "[0-9]{1,20}",
        "[ -~]{0,60}",
        ".{0,30}",
    ];
    let header = (name, value).prop_map(|(n, v)| format!("{n}: {v}\r\n"));
    let envelope = prop_oneof![
        Just(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"p","version":"0"}}}"#.to_owned()),
        Just(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"track","arguments":{}}}"#.to_owned()),
        Just(r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#.to_owned()),
        Just(r#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#.to_owned()),
        r#"\{"jsonrpc":"[0-9.]{0,4}","id":[-0-9a-z"]{0,6},"method":"[a-z/]{0,16}","params":.{0,20}\}"#,
        ".{0,80}",
    ];
    let body = prop_oneof![
        envelope.prop_map(String::into_bytes),
        proptest::collection::vec(any::<u8>(), 0..200)
    ];
    (
        method,
        target,
        proptest::collection::vec(header, 0..8),
        body,
        any::<bool>(),
        proptest::option::of(0usize..400),
    )
        .prop_map(|(method, target, headers, body, length, cut)| {
            let mut bytes = format!("{method} {target} HTTP/1.1\r\n").into_bytes();
            for header in headers {
                bytes.extend_from_slice(header.as_bytes());
            }
            if length {
                bytes.extend_from_slice(format!("content-length: {}\r\n", body.len()).as_bytes());
            }
            bytes.extend_from_slice(b"\r\n");
            bytes.extend_from_slice(&body);
            if let Some(cut) = cut {
                bytes.truncate(cut);
            }
            bytes
        })
}

fn input() -> impl Strategy<Value = (Vec<u8>, Vec<usize>)> {
    let bytes = prop_oneof![
        3 => request(),
        1 => proptest::collection::vec(any::<u8>(), 0..600),
    ];
    (bytes, proptest::collection::vec(any::<usize>(), 0..6))
}

fn lines() -> impl Strategy<Value = (Vec<u8>, Vec<usize>)> {
    let line = prop_oneof![
        Just(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"p","version":"0"}}}"#.to_owned()),
        Just(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned()),
        Just(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#.to_owned()),
        r#"\{"jsonrpc":"[0-9.]{0,4}","id":[-0-9a-z"]{0,6},"method":"[a-z/]{0,16}".{0,20}\}"#,
        ".{0,60}",
    ];
    let bytes = prop_oneof![
        3 => proptest::collection::vec(line, 0..5).prop_map(|lines| {
            lines.iter().flat_map(|l| format!("{l}\n").into_bytes()).collect()
        }),
        1 => proptest::collection::vec(any::<u8>(), 0..400),
    ];
    (bytes, proptest::collection::vec(any::<usize>(), 0..6))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn the_endpoint_answers_or_closes_and_goes_on((bytes, splits) in input()) {
        let outcome = servers().probe(Door::EndpointHttp, &bytes, &splits);
        prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }

    #[test]
    fn the_fixture_answers_or_closes_and_goes_on((bytes, splits) in input()) {
        let outcome = servers().probe(Door::McpHttp, &bytes, &splits);
        prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }

    #[test]
    fn the_line_side_answers_only_the_bridge((bytes, splits) in input()) {
        let outcome = servers().probe(Door::McpLines, &bytes, &splits);
        prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }

    #[test]
    fn the_bridge_s_lines_are_answered_in_json_or_closed((bytes, splits) in lines()) {
        let outcome = servers().probe(Door::McpLinesAfterSecret, &bytes, &splits);
        prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
    }
}
