//! The model endpoint and the MCP fixture under slow and hostile clients,
//! on loopback only: each attack runs a bounded number of attackers for a
//! bounded time against a fresh server in a child process, every attacker
//! reconnecting as soon as it is closed, while one legitimate client calls
//! at a steady pace. Per attack it prints the legitimate calls answered
//! (within 5 s each), their p50 and p99 latency, why the others were lost
//! (connection refused or not made, `503`, closed before an answer, too
//! slow, wrong answer), and the server process's resident memory before
//! the attack, at its end and at its peak, beside the same client with no
//! attack.
//!
//! `cargo bench -p symfonic-evals --bench server_attacks [-- ATTACKERS SECONDS [ATTACK | SERVER]]`
//! (defaults: 1000 attackers per attack, 10 s per attack, every attack on
//! both servers; Linux, for the memory figures).
//!
//! The attacks: `slow-body` (a head, then a body byte a second),
//! `slow-head` (a head byte a second), `idle` (connects, sends nothing),
//! `stream-hog` (the fixture: an initialized session's event stream, held;
//! the endpoint: a kept-alive connection, held after one answer),
//! `unread-response` (requests pipelined on one connection, no answer
//! read), `session-flood` (the fixture: `initialize` after `initialize`;
//! the endpoint: requests on fresh connections), `reconnecting` (connects
//! and closes at once). With `BENCH_DEBUG` set, each legitimate call that
//! was answered wrongly prints the start of its answer.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const CALL_TIMEOUT: Duration = Duration::from_secs(5);
const LEGIT_CALLS: usize = 100;
const ATTACKS: [&str; 8] = [
    "none",
    "slow-body",
    "slow-head",
    "idle",
    "stream-hog",
    "unread-response",
    "session-flood",
    "reconnecting",
];

const CHAT: &str =
    r#"{"model":"bench","messages":[{"role":"user","content":"where is my parcel?"}]}"#;
const ATTACK: &str = r#"{"model":"bench","messages":[{"role":"user","content":"anything"}]}"#;
const BIG: &str = r#"{"model":"bench","messages":[{"role":"user","content":"the big one"}]}"#;
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const CALL: &str =
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"track","arguments":{}}}"#;
const LIST: &str = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#;

// ---- the server, in a child process ----

fn serve(kind: &str) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut lines = Vec::new();
    let _keep: Box<dyn std::any::Any> = if kind == "endpoint" {
        use symfonic_evals::replay::{ReplayConfig, ReplayMode, ReplaySession, ReplaySettings};
        let cassette = dir.path().join("bench.jsonl");
        let exchange = |ordinal: u32, body: &str, answer: serde_json::Value| {
            json!({"scenario": "bench", "trial": 0, "ordinal": ordinal,
                "request": {"method": "POST", "path": "/v1/chat/completions",
                    "body": serde_json::from_str::<serde_json::Value>(body).unwrap()},
                "response": {"status": 200, "content_type": "application/json", "body": answer}})
            .to_string()
        };
        // The legitimate request answered every time it is repeated; the
        // big one (2 MiB) sixteen times, then a miss like any other
        // request of an attacker's.
        let text: Vec<String> = (0..LEGIT_CALLS as u32 + 50)
            .map(|n| exchange(n, CHAT, json!({"answer": "in transit"})))
            .chain((0..16).map(|n| exchange(n, BIG, json!({"answer": "x".repeat(2 << 20)}))))
            .collect();
        let text = text.join("\n");
        std::fs::write(&cassette, text + "\n").expect("the cassette");
        let settings = ReplaySettings::resolve_with(
            "bench",
            &ReplayConfig::mode(ReplayMode::Replay).with_cassette(&cassette),
            |_| None,
        )
        .expect("settings");
        let session = Arc::new(ReplaySession::with_settings(settings).expect("loads"));
        let endpoint = session.start("bench", 0).expect("an endpoint");
        lines.push(endpoint.url().to_owned());
        Box::new((session, endpoint))
    } else {
        use symfonic_evals::mcp::{FixtureTool, McpFixture};
        let fixture = McpFixture::start(FixtureTool::new(
            "track",
            None,
            None,
            Some(&json!({"status": "in transit"})),
        ))
        .expect("a fixture");
        lines.push(fixture.url().to_owned());
        Box::new(fixture)
    };
    println!("{}", lines.join(" "));
    let _ = std::io::stdout().flush();
    // Serve until the parent closes our input.
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
}

struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(kind: &str) -> Self {
        let mut child = Command::new(std::env::current_exe().expect("this program"))
            .args(["serve", kind])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("its output"))
            .read_line(&mut line)
            .expect("its address");
        Self {
            child,
            url: line.trim().to_owned(),
        }
    }

    fn address(&self) -> String {
        self.url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap_or_default()
            .to_owned()
    }

    /// Resident memory now and at its peak, in MiB (Linux).
    fn memory(&self) -> (f64, f64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
                .map_or(f64::NAN, |kb| kb / 1024.0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

// ---- the legitimate client ----

/// Why a legitimate call was not answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Lost {
    /// The connection could not be made.
    Connect,
    /// The server refused it with `503`.
    Refused,
    /// The connection was closed or reset before a whole answer.
    Closed,
    /// No answer within the call's time.
    Slow,
    /// An answer, but not the right one.
    Wrong,
}

impl Lost {
    fn name(self) -> &'static str {
        match self {
            Self::Connect => "connect",
            Self::Refused => "503",
            Self::Closed => "closed",
            Self::Slow => "slow",
            Self::Wrong => "wrong",
        }
    }
}

fn http(address: &str, head: &str, body: &str) -> Result<String, Lost> {
    let mut stream =
        TcpStream::connect_timeout(&address.parse().map_err(|_| Lost::Connect)?, CALL_TIMEOUT)
            .map_err(|_| Lost::Connect)?;
    stream
        .set_read_timeout(Some(CALL_TIMEOUT))
        .map_err(|_| Lost::Connect)?;
    stream
        .set_write_timeout(Some(CALL_TIMEOUT))
        .map_err(|_| Lost::Connect)?;
    let io = |error: std::io::Error| match error.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => Lost::Slow,
        _ => Lost::Closed,
    };
    write!(
        stream,
        "{head}host: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .map_err(io)?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).map_err(io)?;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    if answer.starts_with("HTTP/1.1 503") {
        return Err(Lost::Refused);
    }
    if answer.is_empty() {
        return Err(Lost::Closed);
    }
    Ok(answer)
}

fn mcp_session(address: &str) -> Result<String, Lost> {
    let answer = http(address, "POST /mcp HTTP/1.1\r\n", INITIALIZE)?;
    let id = answer
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("mcp-session-id:")
                .map(|v| v.trim().to_owned())
        })
        .ok_or(Lost::Wrong)?;
    http(
        address,
        &format!("POST /mcp HTTP/1.1\r\nmcp-session-id: {id}\r\n"),
        INITIALIZED,
    )?;
    Ok(id)
}

/// One legitimate call; its latency when answered in time. A client of
/// the fixture whose session was closed initializes a new one, as the MCP
/// specification asks, within the same call.
fn legit_call(kind: &str, address: &str, session: &mut String) -> Result<Duration, Lost> {
    let started = Instant::now();
    let answer = if kind == "endpoint" {
        http(address, "POST /v1/chat/completions HTTP/1.1\r\n", CHAT)?
    } else {
        let call = |session: &str| {
            http(
                address,
                &format!("POST /mcp HTTP/1.1\r\nmcp-session-id: {session}\r\n"),
                CALL,
            )
        };
        match call(session) {
            Ok(answer) if answer.starts_with("HTTP/1.1 404") => {
                *session = mcp_session(address)?;
                call(session)?
            }
            answer => answer?,
        }
    };
    let fine = if kind == "endpoint" {
        answer.contains("in transit")
    } else {
        answer.contains("mcp-nonce-")
    };
    let elapsed = started.elapsed();
    if !fine && std::env::var_os("BENCH_DEBUG").is_some() {
        eprintln!("{}", answer.chars().take(300).collect::<String>());
    }
    match (fine, elapsed <= CALL_TIMEOUT) {
        (false, _) => Err(Lost::Wrong),
        (true, false) => Err(Lost::Slow),
        (true, true) => Ok(elapsed),
    }
}

// ---- the attackers ----

async fn attacker(
    kind: &'static str,
    attack: &'static str,
    address: String,
    session: String,
    stop: Arc<AtomicBool>,
) {
    while !stop.load(Ordering::Relaxed) {
        if let Ok(stream) = tokio::net::TcpStream::connect(&address).await {
            let _ = tokio::time::timeout(
                Duration::from_secs(60),
                attack_once(kind, attack, stream, &session, &stop),
            )
            .await;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

async fn attack_once(
    kind: &str,
    attack: &str,
    mut stream: tokio::net::TcpStream,
    session: &str,
    stop: &AtomicBool,
) -> std::io::Result<()> {
    let path = if kind == "endpoint" {
        "/v1/chat/completions"
    } else {
        "/mcp"
    };
    let headers = "host: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n";
    let mut buffer = vec![0u8; 64 * 1024];
    match attack {
        "slow-body" => {
            stream
                .write_all(
                    format!("POST {path} HTTP/1.1\r\n{headers}content-length: 1000\r\n\r\n")
                        .as_bytes(),
                )
                .await?;
            while !stop.load(Ordering::Relaxed) {
                stream.write_all(b" ").await?;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
        "slow-head" => {
            let head = format!(
                "POST {path} HTTP/1.1\r\n{headers}x-padding: {}\r\n",
                "a".repeat(200)
            );
            for byte in head.bytes() {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                stream.write_all(&[byte]).await?;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
        "idle" => {
            // Until the server closes it.
            let _ = stream.read(&mut buffer).await?;
        }
        "stream-hog" => {
            if kind == "endpoint" {
                let request = format!(
                    "POST {path} HTTP/1.1\r\n{headers}content-length: {}\r\n\r\n{ATTACK}",
                    ATTACK.len()
                );
                stream.write_all(request.as_bytes()).await?;
            } else {
                // A session of its own (the fixture allows one event
                // stream per session), then its stream, held.
                let address = stream.peer_addr()?.to_string();
                let own = async_session(&address)
                    .await
                    .unwrap_or_else(|| session.to_owned());
                let request = format!("GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\nmcp-session-id: {own}\r\n\r\n");
                stream.write_all(request.as_bytes()).await?;
            }
            while stream.read(&mut buffer).await? > 0 {}
        }
        "unread-response" => {
            let body = if kind == "endpoint" { BIG } else { LIST };
            let extra = if kind == "endpoint" {
                String::new()
            } else {
                format!("mcp-session-id: {session}\r\n")
            };
            let request = format!(
                "POST {path} HTTP/1.1\r\n{headers}{extra}content-length: {}\r\n\r\n{body}",
                body.len()
            );
            for _ in 0..64 {
                stream.write_all(request.as_bytes()).await?;
            }
            // Never read; hold until closed.
            while !stop.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(200)).await;
                stream.write_all(request.as_bytes()).await?;
            }
        }
        "session-flood" => {
            let body = if kind == "endpoint" {
                ATTACK
            } else {
                INITIALIZE
            };
            let request = format!("POST {path} HTTP/1.1\r\n{headers}connection: close\r\ncontent-length: {}\r\n\r\n{body}", body.len());
            stream.write_all(request.as_bytes()).await?;
            while stream.read(&mut buffer).await? > 0 {}
        }
        "reconnecting" => {}
        _ => {}
    }
    Ok(())
}

/// An MCP session initialized over two short connections.
async fn async_session(address: &str) -> Option<String> {
    async fn exchange(address: &str, extra: &str, body: &str) -> Option<String> {
        let mut stream = tokio::net::TcpStream::connect(address).await.ok()?;
        let request = format!("POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n{extra}connection: close\r\ncontent-length: {}\r\n\r\n{body}", body.len());
        stream.write_all(request.as_bytes()).await.ok()?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.ok()?;
        Some(String::from_utf8_lossy(&answer).into_owned())
    }
    let answer = exchange(address, "", INITIALIZE).await?;
    let id = answer.lines().find_map(|l| {
        l.to_ascii_lowercase()
            .strip_prefix("mcp-session-id:")
            .map(|v| v.trim().to_owned())
    })?;
    exchange(address, &format!("mcp-session-id: {id}\r\n"), INITIALIZED).await?;
    Some(id)
}

fn percentile(samples: &mut [Duration], p: f64) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    samples.sort();
    let at = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[at].as_secs_f64() * 1e3
}

fn run(kind: &'static str, attack: &'static str, attackers: usize, seconds: u64) {
    let server = Server::start(kind);
    let address = server.address();
    let mut session = if kind == "mcp" {
        mcp_session(&address).unwrap_or_default()
    } else {
        String::new()
    };
    let (before, _) = server.memory();
    let stop = Arc::new(AtomicBool::new(false));
    let count = if attack == "none" { 0 } else { attackers };
    // The attackers run on a runtime of their own, on one thread.
    let attacking = {
        let (address, session, stop) = (address.clone(), session.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async move {
                let tasks: Vec<_> = (0..count)
                    .map(|_| {
                        tokio::spawn(attacker(
                            kind,
                            attack,
                            address.clone(),
                            session.clone(),
                            Arc::clone(&stop),
                        ))
                    })
                    .collect();
                while !stop.load(Ordering::Relaxed) {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                for task in tasks {
                    task.abort();
                }
            });
            runtime.shutdown_timeout(Duration::from_secs(2));
        })
    };
    // Let the attack take hold, then call at a steady pace.
    std::thread::sleep(Duration::from_millis(if count > 0 { 1500 } else { 0 }));
    let gap = Duration::from_secs(seconds) / LEGIT_CALLS as u32;
    let mut answered = Vec::new();
    let mut lost = std::collections::BTreeMap::<Lost, usize>::new();
    // Bounded in time too: calls not made by then count as unanswered.
    let until = Instant::now() + Duration::from_secs(seconds) + CALL_TIMEOUT;
    for _ in 0..LEGIT_CALLS {
        if Instant::now() > until {
            break;
        }
        let started = Instant::now();
        match legit_call(kind, &address, &mut session) {
            Ok(latency) => answered.push(latency),
            Err(why) => *lost.entry(why).or_default() += 1,
        }
        std::thread::sleep(gap.saturating_sub(started.elapsed()));
    }
    let (now, peak) = server.memory();
    stop.store(true, Ordering::Relaxed);
    let _ = attacking.join();
    let count_answered = answered.len();
    let unanswered = LEGIT_CALLS - count_answered - lost.values().sum::<usize>();
    let lost: Vec<String> = lost
        .iter()
        .map(|(why, n)| format!("{} {n}", why.name()))
        .chain((unanswered > 0).then(|| format!("not made {unanswered}")))
        .collect();
    println!(
        "| {kind:<8} | {attack:<15} | {count:>5} | {count_answered:>3}/{LEGIT_CALLS} | {:>8.2} | {:>8.2} | {before:>6.1} | {now:>7.1} | {peak:>7.1} | {} |",
        percentile(&mut answered, 0.5),
        percentile(&mut answered, 0.99),
        lost.join(", "),
    );
}

fn main() {
    // `cargo bench` appends `--bench` to the arguments given after `--`.
    let args: Vec<String> = std::env::args()
        .filter(|a| a != "--bench")
        .skip(1)
        .collect();
    if args.first().map(String::as_str) == Some("serve") {
        serve(args.get(1).map_or("endpoint", String::as_str));
        return;
    }
    let attackers: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let seconds: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10);
    println!("{LEGIT_CALLS} legitimate calls over {seconds} s per attack, each on a fresh connection, answered within {} s", CALL_TIMEOUT.as_secs());
    println!("| server   | attack          | attackers | answered | p50 ms | p99 ms | RSS before MiB | RSS after MiB | peak MiB | lost (why) |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---|");
    let only = args.get(2).cloned();
    for kind in ["endpoint", "mcp"] {
        for attack in ATTACKS {
            if only
                .as_deref()
                .is_some_and(|only| only != attack && only != kind)
            {
                continue;
            }
            run(kind, attack, attackers, seconds);
        }
    }
}
