//! The request parsers at the servers' boundaries, fed whatever a client
//! may send: the model endpoint's and the MCP fixture's HTTP framing (head,
//! body, chunks), the JSON-RPC envelope, `Origin` and `Host`, and the
//! stdio bridge's handshake and lines. Shared by the property test
//! (`tests/parser_boundaries.rs`) and the fuzz target (`fuzz/`), so both
//! drive the same doors and hold the servers to the same rule: any input
//! is answered with a well-formed refusal or answer, or the connection is
//! closed, and the server goes on serving the next client.
#![allow(dead_code)] // each user drives its own subset

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use symfonic_evals::mcp::{FixtureTool, McpFixture, SessionLimits};
use symfonic_evals::replay::{
    ModelEndpoint, ReplayConfig, ReplayMode, ReplaySession, ReplaySettings,
};
use symfonic_evals::server_policy::ServerPolicy;

/// How long a probe waits for the server to answer or close.
const WAIT: Duration = Duration::from_secs(20);

/// Where the bytes go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Door {
    /// The model endpoint's HTTP side.
    EndpointHttp,
    /// The MCP fixture's HTTP side.
    McpHttp,
    /// The fixture's line side, as a stranger (no secret).
    McpLines,
    /// The fixture's line side, after the bridge's secret line.
    McpLinesAfterSecret,
}

impl Door {
    /// Every door, for a selector byte.
    pub const ALL: [Door; 4] = [
        Door::EndpointHttp,
        Door::McpHttp,
        Door::McpLines,
        Door::McpLinesAfterSecret,
    ];
}

/// The servers under test, started once.
pub struct Servers {
    endpoint: ModelEndpoint,
    _session: Arc<ReplaySession>,
    fixture: McpFixture,
    _dir: tempfile::TempDir,
}

impl Servers {
    /// An endpoint replaying an empty cassette and a fixture whose session
    /// budget never runs out (the probes open many).
    pub fn start() -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let cassette = dir.path().join("empty.jsonl");
        std::fs::write(&cassette, "").expect("the cassette");
        let settings = ReplaySettings::resolve_with(
            "probe",
            &ReplayConfig::mode(ReplayMode::Replay).with_cassette(&cassette),
            |_| None,
        )
        .expect("settings");
        let session = Arc::new(ReplaySession::with_settings(settings).expect("loads"));
        let endpoint = session.start("probe", 0).expect("an endpoint");
        let fixture = McpFixture::start_with(
            FixtureTool::new("track", None, None, Some(&json!({"status": "ok"}))),
            ServerPolicy::defaults(1 << 20),
            SessionLimits {
                open_burst: u32::MAX,
                open_per_second: u32::MAX,
                ..SessionLimits::default()
            },
        )
        .expect("a fixture");
        Self {
            endpoint,
            _session: session,
            fixture,
            _dir: dir,
        }
    }

    fn http_address(&self, door: Door) -> String {
        let url = match door {
            Door::EndpointHttp => self.endpoint.url(),
            _ => self.fixture.url(),
        };
        url.trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap_or_default()
            .to_owned()
    }

    /// Sends `bytes` through `door`, written in pieces cut at `splits`,
    /// then checks the rule: a well-formed answer or a close, and the
    /// server still serving. `Err` says what broke it.
    pub fn probe(&self, door: Door, bytes: &[u8], splits: &[usize]) -> Result<(), String> {
        match door {
            Door::EndpointHttp | Door::McpHttp => {
                let answer = exchange(&self.http_address(door), &[], bytes, splits)?;
                well_formed_http(door, &answer)?;
            }
            Door::McpLines => {
                let answer = exchange(
                    &self.fixture.stdio_address().to_string(),
                    &[],
                    bytes,
                    splits,
                )?;
                let secret = self.fixture.stdio_locator();
                let secret = secret.rsplit('/').next().unwrap_or_default();
                let knows = bytes.starts_with(format!("{secret}\n").as_bytes());
                if !knows && !answer.is_empty() {
                    return Err(format!(
                        "a stranger on the line side was answered: {}",
                        String::from_utf8_lossy(&answer)
                    ));
                }
            }
            Door::McpLinesAfterSecret => {
                let locator = self.fixture.stdio_locator();
                let secret = format!("{}\n", locator.rsplit('/').next().unwrap_or_default());
                let address = self.fixture.stdio_address().to_string();
                let answer = exchange(&address, secret.as_bytes(), bytes, splits)?;
                for line in answer.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                    serde_json::from_slice::<Value>(line).map_err(|_| {
                        format!(
                            "a line answered that is not JSON: {}",
                            String::from_utf8_lossy(line)
                        )
                    })?;
                }
            }
        }
        self.still_serving()
    }

    /// Both servers answer a well-formed request.
    pub fn still_serving(&self) -> Result<(), String> {
        let request = b"GET /v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n";
        let answer = exchange(&self.http_address(Door::EndpointHttp), &[], request, &[])?;
        if !answer.starts_with(b"HTTP/1.1 405") {
            return Err(format!(
                "the endpoint stopped answering: {}",
                String::from_utf8_lossy(&answer)
            ));
        }
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"0"}}}"#;
        let request = format!(
            "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        let answer = exchange(
            &self.http_address(Door::McpHttp),
            &[],
            request.as_bytes(),
            &[],
        )?;
        if !answer.starts_with(b"HTTP/1.1 200") {
            return Err(format!(
                "the fixture stopped answering: {}",
                String::from_utf8_lossy(&answer)
            ));
        }
        let mut bridge = self.fixture.stdio_client().map_err(|e| e.to_string())?;
        bridge
            .set_read_timeout(Some(WAIT))
            .map_err(|e| e.to_string())?;
        writeln!(
            bridge,
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"probe","version":"0"}}}}}}"#
        )
        .map_err(|e| e.to_string())?;
        let mut line = String::new();
        BufReader::new(bridge)
            .read_line(&mut line)
            .map_err(|e| format!("the line side stopped answering: {e}"))?;
        if !line.contains("\"result\"") {
            return Err(format!("the line side stopped answering: {line}"));
        }
        Ok(())
    }
}

/// Connects, writes `first` then `bytes` in pieces cut at `splits`, ends
/// its side, and reads what comes back until the server closes.
fn exchange(
    address: &str,
    first: &[u8],
    bytes: &[u8],
    splits: &[usize],
) -> Result<Vec<u8>, String> {
    let mut stream = TcpStream::connect(address).map_err(|e| format!("connect: {e}"))?;
    let _ = stream.set_nodelay(true);
    stream
        .set_read_timeout(Some(WAIT))
        .map_err(|e| e.to_string())?;
    // A server that closed early refuses the rest: that is a close, fine.
    let _ = stream.write_all(first);
    let mut cuts: Vec<usize> = splits.iter().map(|s| s % (bytes.len() + 1)).collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut from = 0;
    for cut in cuts.into_iter().chain(std::iter::once(bytes.len())) {
        if stream.write_all(&bytes[from..cut]).is_err() {
            break;
        }
        from = cut;
    }
    let _ = stream.shutdown(Shutdown::Write);
    let mut answer = Vec::new();
    match stream.read_to_end(&mut answer) {
        Ok(_) => Ok(answer),
        // Reset after a refusal: what arrived before counts.
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => Ok(answer),
        Err(e) => Err(format!(
            "no answer and no close within {WAIT:?}: {e} (got {:?})",
            String::from_utf8_lossy(&answer)
        )),
    }
}

/// An HTTP answer's first line is a status line (or nothing came: a
/// close); the endpoint never answers `500`, its sign of a handler that
/// panicked.
fn well_formed_http(door: Door, answer: &[u8]) -> Result<(), String> {
    if answer.is_empty() {
        return Ok(());
    }
    let line = answer.split(|b| *b == b'\r').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let status = line
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or_else(|| format!("not a status line: {line:?}"))?;
    if !(100..600).contains(&status) || (door == Door::EndpointHttp && status == 500) {
        return Err(format!("answered {line:?}"));
    }
    Ok(())
}
