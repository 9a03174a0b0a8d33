//! The fixture's server: the official MCP SDK's Streamable HTTP service on
//! a loopback port, on a runtime of its own, for one trial.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::delivery::Delivering;
use super::log::{FixtureLog, FixtureRefusal, FixtureTool};
use super::sessions::{BoundedSessions, SessionLimits};
use crate::server_policy::http::refuse;
use crate::server_policy::rate::RateLimit;
use crate::server_policy::watch::{Guarded, Phase};
use crate::server_policy::{Admission, ServerPolicy};

/// The largest request body the fixture reads (the server policy's
/// default for the fixture; see [`crate::server_policy`]).
const BODY_LIMIT: usize = 1 << 20;

/// The browser origins the HTTP side answers: loopback pages only.
const LOCAL_ORIGINS: [&str; 3] = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"];

/// One `ServerHandler` per MCP session, all writing to the trial's log.
#[derive(Clone)]
struct Handler {
    tool: Arc<FixtureTool>,
    log: FixtureLog,
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.log.listed();
        let schema: Map<String, Value> = match &self.tool.input_schema {
            Value::Object(schema) => schema.clone(),
            _ => Map::new(),
        };
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            self.tool.name.clone(),
            "the extension's tool, served by the harness",
            Arc::new(schema),
        )]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != self.tool.name {
            let refusal =
                FixtureRefusal::UnknownTool(crate::redact::short_digest(request.name.as_bytes()));
            self.log.refuse(refusal);
            return Err(ErrorData::invalid_params("no such tool", None));
        }
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let call = self
            .log
            .call(&self.tool.name, arguments)
            .map_err(|refusal| ErrorData::invalid_request(refusal.to_string(), None))?;
        let result = if call.failed {
            CallToolResult::error(vec![ContentBlock::text(format!(
                "upstream unavailable ({})",
                call.nonce
            ))])
        } else {
            let result = self.tool.result(&call.nonce);
            let mut success = CallToolResult::success(vec![ContentBlock::text(result.to_string())]);
            success.structured_content = Some(result);
            success
        };
        Ok(result.into())
    }
}

/// The MCP server of one trial: serves [`FixtureTool`] over Streamable
/// HTTP on `127.0.0.1`, and as line-delimited JSON-RPC on a second loopback
/// port that the stdio bridge (`symfonic-evals-mcp-stdio`) connects a
/// launched command to; records into its [`FixtureLog`], and stops when
/// dropped (open sessions and connections included).
pub struct McpFixture {
    url: String,
    stdio_address: SocketAddr,
    /// The per-trial secret the bridge's first line must carry.
    stdio_secret: Arc<str>,
    log: FixtureLog,
    sessions: Arc<BoundedSessions>,
    cancel: CancellationToken,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for McpFixture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpFixture")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl McpFixture {
    /// Starts a fixture serving `tool` on a fresh loopback port.
    ///
    /// # Errors
    ///
    /// When the port cannot be bound or the runtime cannot start.
    pub fn start(tool: FixtureTool) -> io::Result<Self> {
        Self::start_with(
            tool,
            ServerPolicy::from_env(BODY_LIMIT),
            SessionLimits::from_env(),
        )
    }

    /// As [`Self::start`], with the server policy `policy` on both sides
    /// (HTTP and the bridge's lines) and the session limits `sessions` in
    /// place of the environment's.
    ///
    /// # Errors
    ///
    /// As [`Self::start`].
    pub fn start_with(
        tool: FixtureTool,
        policy: ServerPolicy,
        sessions: SessionLimits,
    ) -> io::Result<Self> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        crate::server_policy::deepen_backlog(&listener);
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        let lines = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        crate::server_policy::deepen_backlog(&lines);
        lines.set_nonblocking(true)?;
        let stdio_address = lines.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let log = FixtureLog::new();
        let stdio_secret: Arc<str> = super::log::fresh_secret().into();
        let secret = Arc::clone(&stdio_secret);
        let cancel = CancellationToken::new();
        let handler = Handler {
            tool: Arc::new(tool),
            log: log.clone(),
        };
        let token = cancel.clone();
        let budget = RateLimit::new(sessions.open_per_second, sessions.open_burst);
        let sessions = Arc::new(BoundedSessions::new(sessions));
        let serving = Arc::clone(&sessions);
        let thread = std::thread::Builder::new()
            .name("symfonic-evals-mcp".into())
            .spawn(move || {
                runtime.block_on(async {
                    let lines = tokio::spawn(serve_lines(
                        lines,
                        handler.clone(),
                        policy,
                        secret,
                        token.clone(),
                    ));
                    serve(listener, handler, policy, (serving, budget), token).await;
                    lines.abort();
                });
                runtime.shutdown_timeout(Duration::from_millis(200));
            })?;
        Ok(Self {
            url: url(address),
            stdio_address,
            stdio_secret,
            log,
            sessions,
            cancel,
            thread: Some(thread),
        })
    }

    /// The Streamable HTTP endpoint (`http://127.0.0.1:<port>/mcp`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The loopback address of the fixture's line side (see
    /// [`Self::stdio_locator`] for what the bridge is given).
    pub fn stdio_address(&self) -> SocketAddr {
        self.stdio_address
    }

    /// What the stdio bridge is given to reach the fixture,
    /// `<host:port>/<secret>`: the line side's address and the trial's
    /// secret, which the bridge sends as its first line. The line side
    /// serves only a connection that does, and drops any other at its
    /// first wrong byte (see
    /// [`TargetContext::mcp_command`](crate::TargetContext::mcp_command)).
    pub fn stdio_locator(&self) -> String {
        format!("{}/{}", self.stdio_address, self.stdio_secret)
    }

    /// A connection to the fixture's line side, opened as the stdio bridge
    /// opens it: the secret line sent, then each line a JSON-RPC message.
    ///
    /// # Errors
    ///
    /// When the connection cannot be made.
    pub fn stdio_client(&self) -> io::Result<std::net::TcpStream> {
        let mut stream = std::net::TcpStream::connect(self.stdio_address)?;
        std::io::Write::write_all(&mut stream, format!("{}\n", self.stdio_secret).as_bytes())?;
        Ok(stream)
    }

    /// The trial's record, shared with the server.
    pub fn log(&self) -> &FixtureLog {
        &self.log
    }

    /// How many MCP sessions are live on the HTTP side: never more than
    /// the cap of its [`SessionLimits`], however many `initialize`
    /// requests arrive.
    pub fn live_sessions(&self) -> usize {
        self.sessions.live()
    }
}

impl Drop for McpFixture {
    fn drop(&mut self) {
        self.cancel.cancel();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn url(address: SocketAddr) -> String {
    format!("http://{address}/mcp")
}

/// Serves each connection of the stdio bridge as one MCP session of
/// line-delimited JSON-RPC, as a server launched over stdio speaks it,
/// under the server policy: a connection must initialize within the head
/// deadline (and is shed first while it has not); an initialized session
/// holds its slot until it ends.
async fn serve_lines(
    listener: std::net::TcpListener,
    handler: Handler,
    policy: ServerPolicy,
    secret: Arc<str>,
    cancel: CancellationToken,
) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    let admission = Admission::new(policy);
    loop {
        let Ok((stream, peer)) = listener.accept().await else {
            continue;
        };
        let Some(admitted) = admission.admit_waiting(peer.ip()).await else {
            continue;
        };
        let handler = handler.clone();
        let cancel = cancel.child_token();
        let secret = Arc::clone(&secret);
        tokio::spawn(async move {
            let connection = Arc::clone(admitted.connection());
            let stream = Guarded::new(stream, Arc::clone(&connection));
            let mut stream = Delivering::new(stream, handler.log.clone());
            // Only the bridge knows the secret; anything else is dropped
            // at its first wrong byte. A client that never initializes,
            // or speaks garbage, ends only its own session.
            let session = async {
                if !bridge_handshake(&mut stream, &secret).await {
                    return;
                }
                if let Ok(session) = handler.serve_with_ct(stream, cancel).await {
                    connection.enter(Phase::Working);
                    let _ = session.waiting().await;
                }
            };
            tokio::select! {
                () = session => {}
                _ = connection.watch(policy) => {}
            }
            drop(admitted);
        });
    }
}

/// Reads the bridge's first line, byte by byte (nothing of the session
/// after it is consumed): whether it is exactly the trial's secret.
async fn bridge_handshake(stream: &mut (impl tokio::io::AsyncRead + Unpin), secret: &str) -> bool {
    use tokio::io::AsyncReadExt;
    for expected in secret.bytes().chain(std::iter::once(b'\n')) {
        let mut byte = [0u8; 1];
        if stream.read_exact(&mut byte).await.is_err() || byte[0] != expected {
            return false;
        }
    }
    true
}

/// The answer to a new session or event stream past its peer's budget: `429`, with when to
/// try again.
fn too_many_opened(
    wait: Duration,
) -> hyper::Response<http_body_util::combinators::BoxBody<bytes::Bytes, std::convert::Infallible>> {
    use http_body_util::BodyExt;
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    hyper::Response::builder()
        .status(hyper::StatusCode::TOO_MANY_REQUESTS)
        .header(hyper::header::RETRY_AFTER, seconds.max(1))
        .header(hyper::header::CONTENT_TYPE, "text/plain")
        .body(
            http_body_util::Full::new(bytes::Bytes::from_static(
                b"too many MCP sessions or event streams opened from this address; retry later",
            ))
            .boxed(),
        )
        .unwrap_or_default()
}

async fn serve(
    listener: std::net::TcpListener,
    handler: Handler,
    policy: ServerPolicy,
    (sessions, budget): (Arc<BoundedSessions>, RateLimit),
    cancel: CancellationToken,
) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    // The MCP specification asks a local server to check `Origin` (a web
    // page's script must not reach it): only loopback origins pass, and a
    // request without one (any non-browser client) is not a page's.
    let config = StreamableHttpServerConfig::default()
        .with_sse_keep_alive(None)
        .with_allowed_origins(LOCAL_ORIGINS)
        .with_cancellation_token(cancel.child_token());
    let mut config = config;
    config.max_request_body_bytes = policy.max_body_bytes;
    let log = handler.log.clone();
    let budget = Arc::new(budget);
    let service: StreamableHttpService<Handler, BoundedSessions> =
        StreamableHttpService::new(move || Ok(handler.clone()), sessions, config);
    let service = hyper_util::service::TowerToHyperService::new(service);
    let admission = Admission::new(policy);
    loop {
        let (stream, peer) = tokio::select! {
            () = cancel.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(_) => continue,
            },
        };
        let admitted = tokio::select! {
            () = cancel.cancelled() => return,
            admitted = admission.admit_waiting(peer.ip()) => admitted,
        };
        let Some(admitted) = admitted else {
            refuse(stream);
            continue;
        };
        let service = service.clone();
        let cancel = cancel.clone();
        let budget = Arc::clone(&budget);
        let stream = Guarded::new(stream, Arc::clone(admitted.connection()));
        let stream = Delivering::new(stream, log.clone());
        tokio::spawn(async move {
            let served =
                crate::server_policy::http::serve(stream, admitted, policy, move |request| {
                    // A request without a session starts one, and a `GET`
                    // opens an event stream: each held to the peer's budget
                    // before the SDK does any work for it.
                    let opens = request.method() == hyper::Method::GET
                        || (request.method() == hyper::Method::POST
                            && !request.headers().contains_key("mcp-session-id"));
                    let over_budget = opens.then(|| budget.take(peer.ip()).err()).flatten();
                    let call = over_budget
                        .is_none()
                        .then(|| hyper::service::Service::call(&service, request));
                    async move {
                        match (call, over_budget) {
                            (Some(call), _) => call.await,
                            (None, wait) => Ok(too_many_opened(wait.unwrap_or_default())),
                        }
                    }
                });
            tokio::select! {
                () = cancel.cancelled() => {}
                () = served => {}
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;

    const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"0"}}}"#;

    fn initialize(address: SocketAddr) -> String {
        let mut stream = std::net::TcpStream::connect(address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        write!(
            stream,
            "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{INITIALIZE}",
            INITIALIZE.len()
        )
        .unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer
    }

    fn address(fixture: &McpFixture) -> SocketAddr {
        fixture
            .url()
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .parse()
            .unwrap()
    }

    #[test]
    fn ten_thousand_initializes_leave_the_sessions_at_the_cap() {
        let limits = SessionLimits {
            // The flood is not slowed by the budget here: the cap alone
            // must hold.
            open_burst: u32::MAX,
            open_per_second: u32::MAX,
            ..SessionLimits::default()
        };
        let fixture = McpFixture::start_with(
            FixtureTool::new("track", None, None, None),
            ServerPolicy::defaults(BODY_LIMIT),
            limits,
        )
        .unwrap();
        let at = address(&fixture);
        let floods: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(move || {
                    (0..2_500)
                        .filter(|_| initialize(at).starts_with("HTTP/1.1 200"))
                        .count()
                })
            })
            .collect();
        let answered: usize = floods.into_iter().map(|f| f.join().unwrap()).sum();
        assert_eq!(answered, 10_000, "every initialize is answered");
        assert_eq!(fixture.live_sessions(), super::super::MAX_SESSIONS);
        let held = fixture.sessions.held().expect("no writer left");
        assert!(
            held <= super::super::MAX_SESSIONS,
            "the SDK holds {held} sessions"
        );
        // A session is still made and answered past the flood.
        assert!(initialize(at).contains("mcp-session-id"));
    }

    #[test]
    fn new_sessions_past_the_budget_are_answered_429_and_sessions_in_use_go_on() {
        let limits = SessionLimits {
            open_burst: 3,
            open_per_second: 1,
            ..SessionLimits::default()
        };
        let fixture = McpFixture::start_with(
            FixtureTool::new("track", None, None, None),
            ServerPolicy::defaults(BODY_LIMIT),
            limits,
        )
        .unwrap();
        let at = address(&fixture);
        let answers: Vec<String> = (0..5).map(|_| initialize(at)).collect();
        let made = answers
            .iter()
            .filter(|a| a.starts_with("HTTP/1.1 200"))
            .count();
        // The burst, and perhaps one more refilled meanwhile; never all.
        assert!((3..=4).contains(&made), "{made} sessions made");
        let refused = answers
            .iter()
            .find(|a| !a.starts_with("HTTP/1.1 200"))
            .unwrap();
        assert!(refused.starts_with("HTTP/1.1 429"), "{refused}");
        assert!(refused.to_ascii_lowercase().contains("retry-after: 1"));
        assert_eq!(fixture.live_sessions(), made);
    }
}
