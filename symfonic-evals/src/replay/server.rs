//! The loopback HTTP/1.1 server under the model endpoint and the scripted
//! upstream: hyper on a tokio runtime of its own, bound to 127.0.0.1 only.
//!
//! Hyper does the protocol (request parsing, chunked bodies, keep-alive,
//! `Expect: 100-continue`, chunked event streams); the crate's
//! [`server_policy`](crate::server_policy) holds every connection to its
//! deadlines and limits (head, whole body, idle, write, connections in
//! total and per peer, body size), as it does the MCP fixture's. This
//! module adds the cap on body bytes buffered across every connection of
//! the process.
//!
//! Handlers stay synchronous (record mode blocks on the upstream): each
//! request runs on the runtime's blocking pool and answers through a
//! [`Responder`] whose bytes travel to hyper over a channel, so an event
//! stream reaches the client event by event. When the client goes away,
//! [`Responder::gone`] says so and long work can stop.
//!
//! Dropping the server stops accepting and drops every connection, so
//! nothing outlives the trial that started it.

use std::convert::Infallible;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::thread::JoinHandle;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use hyper::header::{HeaderValue, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::StatusCode;
use tokio::sync::{mpsc, oneshot};

use crate::server_policy::http::{BodyError, PolicedBody};
use crate::server_policy::watch::Guarded;
use crate::server_policy::{Admission, ServerPolicy};

/// The largest request body accepted.
pub(crate) const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;
/// The most request-body bytes buffered at once by every server of the
/// process together.
pub(crate) const MAX_BUFFERED_BYTES: usize = 256 * 1024 * 1024;

static BUFFERED: AtomicUsize = AtomicUsize::new(0);

/// Body bytes counted against [`MAX_BUFFERED_BYTES`] until dropped.
struct Buffered(usize);

impl Buffered {
    fn grow(&mut self, more: usize) -> bool {
        let claimed = BUFFERED.fetch_update(Ordering::AcqRel, Ordering::Acquire, |now| {
            now.checked_add(more)
                .filter(|total| *total <= MAX_BUFFERED_BYTES)
        });
        if claimed.is_ok() {
            self.0 += more;
        }
        claimed.is_ok()
    }
}

impl Drop for Buffered {
    fn drop(&mut self) {
        BUFFERED.fetch_sub(self.0, Ordering::AcqRel);
    }
}

/// One request, its body read whole.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) method: String,
    /// The request target as sent (origin form for anything answered).
    pub(crate) target: String,
    /// Names lowercased.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Request {
    /// The target without its query string.
    pub(crate) fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }
}

/// Serves one request.
pub(crate) trait Handler: Send + Sync + 'static {
    fn handle(&self, request: &Request, respond: &mut Responder) -> io::Result<()>;
}

/// A response body: whole, or a stream of chunks from the handler.
pub(crate) enum ResponseBody {
    Whole(Option<Bytes>),
    Stream(mpsc::Receiver<Bytes>),
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Self::Whole(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Self::Stream(chunks) => chunks.poll_recv(cx).map(|c| c.map(|b| Ok(Frame::data(b)))),
        }
    }

    /// A whole body is over once its one frame is taken: hyper stops at
    /// the declared length without polling again, and the server policy
    /// reads the end of the answer from here.
    fn is_end_stream(&self) -> bool {
        matches!(self, Self::Whole(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Self::Whole(Some(bytes)) => SizeHint::with_exact(bytes.len() as u64),
            Self::Whole(None) => SizeHint::with_exact(0),
            Self::Stream(_) => SizeHint::default(),
        }
    }
}

type Response = hyper::Response<ResponseBody>;

fn gone() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the client went away")
}

/// Writes one response: whole with [`Self::full`], or as a stream with
/// [`Self::start_chunked`], [`Self::chunk`] and [`Self::end`].
pub(crate) struct Responder {
    head: Option<oneshot::Sender<Response>>,
    chunks: Option<mpsc::Sender<Bytes>>,
}

fn response(
    status: u16,
    content_type: &str,
    extra: &[(&str, &str)],
    body: ResponseBody,
) -> Response {
    let mut response = hyper::Response::new(body);
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(content_type) {
        headers.insert(CONTENT_TYPE, value);
    }
    for (name, value) in extra {
        if let (Ok(name), Ok(value)) = (
            hyper::header::HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            headers.append(name, value);
        }
    }
    response
}

impl Responder {
    fn send_head(&mut self, head: Response) -> io::Result<()> {
        self.head
            .take()
            .ok_or_else(gone)?
            .send(head)
            .map_err(|_| gone())
    }

    /// A complete response with a `Content-Length`.
    pub(crate) fn full(
        &mut self,
        status: u16,
        content_type: &str,
        extra: &[(&str, &str)],
        body: &[u8],
    ) -> io::Result<()> {
        let body = ResponseBody::Whole(Some(Bytes::copy_from_slice(body)));
        self.send_head(response(status, content_type, extra, body))
    }

    /// Starts a streamed (chunked) response; follow with [`Self::chunk`]
    /// and [`Self::end`].
    pub(crate) fn start_chunked(&mut self, status: u16, content_type: &str) -> io::Result<()> {
        let (sender, receiver) = mpsc::channel(16);
        self.chunks = Some(sender);
        let extra = [("cache-control", "no-cache")];
        self.send_head(response(
            status,
            content_type,
            &extra,
            ResponseBody::Stream(receiver),
        ))
    }

    /// One chunk, handed to the connection on its own so the client sees
    /// the same boundaries.
    pub(crate) fn chunk(&mut self, bytes: &[u8]) -> io::Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        let chunks = self.chunks.as_ref().ok_or_else(gone)?;
        chunks
            .blocking_send(Bytes::copy_from_slice(bytes))
            .map_err(|_| gone())
    }

    /// Ends a streamed response.
    pub(crate) fn end(&mut self) -> io::Result<()> {
        self.chunks = None;
        Ok(())
    }

    /// Whether the client has gone away (or the server was dropped): work
    /// for this request can stop.
    pub(crate) fn gone(&self) -> bool {
        match (&self.head, &self.chunks) {
            (Some(head), _) => head.is_closed(),
            (None, Some(chunks)) => chunks.is_closed(),
            (None, None) => true,
        }
    }
}

/// A running loopback server.
pub(crate) struct HttpServer {
    addr: SocketAddr,
    /// Its connections, for tests that watch the policy act.
    #[cfg_attr(not(test), expect(dead_code))]
    admission: Arc<Admission>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl HttpServer {
    /// Binds 127.0.0.1 on a free port and starts serving with `handler`,
    /// under the server policy the environment gives.
    pub(crate) fn start(handler: Arc<dyn Handler>, name: &str) -> io::Result<Self> {
        Self::start_with(handler, name, ServerPolicy::from_env(MAX_BODY_BYTES))
    }

    /// As [`Self::start`], with `policy`.
    pub(crate) fn start_with(
        handler: Arc<dyn Handler>,
        name: &str,
        policy: ServerPolicy,
    ) -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        crate::server_policy::deepen_backlog(&listener);
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .max_blocking_threads(policy.max_connections.max(1))
            .thread_name(format!("{name}-work"))
            .build()?;
        let (stop, stopped) = oneshot::channel();
        let admission = Admission::new(policy);
        let admitting = Arc::clone(&admission);
        let thread = std::thread::Builder::new()
            .name(format!("{name}-http"))
            .spawn(move || {
                let served = runtime.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener)?;
                    accept_loop(listener, handler, admitting, policy, stopped).await;
                    io::Result::Ok(())
                });
                drop(served);
                // Connections end with the runtime; a handler still blocked
                // on an upstream finishes on its own and finds its client
                // gone.
                runtime.shutdown_background();
            })?;
        Ok(Self {
            addr,
            admission,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// How many connections hold a slot.
    #[cfg(test)]
    pub(crate) fn open_connections(&self) -> usize {
        self.admission.open()
    }

    /// `http://127.0.0.1:<port>`.
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn accept_loop(
    listener: tokio::net::TcpListener,
    handler: Arc<dyn Handler>,
    admission: Arc<Admission>,
    policy: ServerPolicy,
    mut stopped: oneshot::Receiver<()>,
) {
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(_) => continue,
            },
        };
        let admitted = tokio::select! {
            _ = &mut stopped => return,
            admitted = admission.admit_waiting(peer.ip()) => admitted,
        };
        let Some(admitted) = admitted else {
            crate::server_policy::http::refuse(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let handler = Arc::clone(&handler);
        let stream = Guarded::new(stream, Arc::clone(admitted.connection()));
        tokio::spawn(crate::server_policy::http::serve(
            stream,
            admitted,
            policy,
            move |request| serve(Arc::clone(&handler), policy, request),
        ));
    }
}

fn plain(status: StatusCode, text: &'static str) -> Response {
    response(
        status.as_u16(),
        "text/plain",
        &[("connection", "close")],
        ResponseBody::Whole(Some(Bytes::from_static(text.as_bytes()))),
    )
}

async fn serve(
    handler: Arc<dyn Handler>,
    policy: ServerPolicy,
    request: hyper::Request<PolicedBody>,
) -> Result<Response, Infallible> {
    let (parts, body) = request.into_parts();
    let declared = parts
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > policy.max_body_bytes as u64) {
        return Ok(plain(
            StatusCode::PAYLOAD_TOO_LARGE,
            "request body too large",
        ));
    }
    let (body, buffered) = match read_body(body).await {
        Ok(read) => read,
        Err(refusal) => return Ok(refusal),
    };
    // Absolute and authority forms keep their scheme and host here, so the
    // handler's origin-form check refuses them.
    let target = if parts.uri.scheme().is_some() || parts.uri.authority().is_some() {
        parts.uri.to_string()
    } else {
        parts
            .uri
            .path_and_query()
            .map_or_else(|| parts.uri.to_string(), ToString::to_string)
    };
    let request = Request {
        method: parts.method.as_str().to_owned(),
        target,
        headers: parts
            .headers
            .iter()
            .map(|(name, value)| {
                let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                (name.as_str().to_owned(), value)
            })
            .collect(),
        body,
    };
    let (head, answer) = oneshot::channel();
    tokio::task::spawn_blocking(move || {
        let mut respond = Responder {
            head: Some(head),
            chunks: None,
        };
        let _ = handler.handle(&request, &mut respond);
        drop(buffered);
    });
    Ok(answer.await.unwrap_or_else(|_| {
        plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the handler gave no answer",
        )
    }))
}

/// Reads a request body (held to its deadline and size by the policy), or
/// the response refusing it.
async fn read_body(mut body: PolicedBody) -> Result<(Vec<u8>, Buffered), Response> {
    let mut bytes = Vec::new();
    let mut buffered = Buffered(0);
    loop {
        let frame = match body.frame().await {
            None => return Ok((bytes, buffered)),
            Some(Err(BodyError::TooSlow)) => {
                return Err(plain(StatusCode::REQUEST_TIMEOUT, "request body too slow"))
            }
            Some(Err(BodyError::TooLarge)) => {
                return Err(plain(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "request body too large",
                ))
            }
            Some(Err(BodyError::Broken(_))) => {
                return Err(plain(StatusCode::BAD_REQUEST, "malformed HTTP request"))
            }
            Some(Ok(frame)) => frame,
        };
        let Ok(data) = frame.into_data() else {
            continue; // trailers
        };
        if !buffered.grow(data.len()) {
            return Err(plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many request bytes buffered; retry later",
            ));
        }
        bytes.extend_from_slice(&data);
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::time::Duration;

    use super::*;

    struct Echo;

    impl Handler for Echo {
        fn handle(&self, request: &Request, respond: &mut Responder) -> io::Result<()> {
            respond.full(200, "text/plain", &[], &request.body)
        }
    }

    fn connect(server: &HttpServer) -> TcpStream {
        let stream = TcpStream::connect(server.addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream
    }

    fn read_all(stream: &mut TcpStream) -> String {
        let mut out = Vec::new();
        let _ = stream.read_to_end(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    fn short() -> ServerPolicy {
        ServerPolicy {
            head_timeout: Duration::from_millis(300),
            body_timeout: Duration::from_millis(300),
            idle_timeout: Duration::from_millis(300),
            write_timeout: Duration::from_millis(300),
            max_connections: 4,
            max_per_peer: 4,
            admission_wait: Duration::from_millis(100),
            max_body_bytes: 1024,
        }
    }

    #[test]
    fn a_silent_or_idle_connection_is_closed_after_the_head_timeout() {
        let server = HttpServer::start_with(Arc::new(Echo), "test", short()).unwrap();
        let mut silent = connect(&server);
        let started = std::time::Instant::now();
        let _ = read_all(&mut silent);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "closed by the server"
        );
        let mut idle = connect(&server);
        idle.write_all(b"POST /a HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\nhi")
            .unwrap();
        let mut first = [0; 12];
        idle.read_exact(&mut first).unwrap();
        assert_eq!(&first, b"HTTP/1.1 200");
        let started = std::time::Instant::now();
        let _ = read_all(&mut idle);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "an idle keep-alive connection is closed too"
        );
    }

    #[test]
    fn a_slow_or_oversized_body_is_refused() {
        let server = HttpServer::start_with(Arc::new(Echo), "test", short()).unwrap();
        let mut slow = connect(&server);
        slow.write_all(b"POST /a HTTP/1.1\r\nhost: x\r\ncontent-length: 10\r\n\r\nab")
            .unwrap();
        assert!(read_all(&mut slow).starts_with("HTTP/1.1 408"));
        let mut large = connect(&server);
        large
            .write_all(b"POST /a HTTP/1.1\r\nhost: x\r\ncontent-length: 2048\r\n\r\n")
            .unwrap();
        assert!(read_all(&mut large).starts_with("HTTP/1.1 413"));
        let mut chunked = connect(&server);
        chunked
            .write_all(b"POST /a HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n")
            .unwrap();
        for _ in 0..3 {
            chunked.write_all(b"200\r\n").unwrap();
            chunked.write_all(&[b'x'; 512]).unwrap();
            chunked.write_all(b"\r\n").unwrap();
        }
        assert!(read_all(&mut chunked).starts_with("HTTP/1.1 413"));
    }

    #[test]
    fn buffered_bytes_are_capped_across_requests_and_released() {
        let mut first = Buffered(0);
        assert!(first.grow(MAX_BUFFERED_BYTES / 2));
        let mut second = Buffered(0);
        assert!(
            !second.grow(MAX_BUFFERED_BYTES),
            "over the process-wide cap"
        );
        drop(first);
        assert!(second.grow(MAX_BUFFERED_BYTES / 2));
    }

    #[test]
    fn dropping_the_server_closes_its_connections() {
        let server =
            HttpServer::start_with(Arc::new(Echo), "test", ServerPolicy::defaults(1024)).unwrap();
        let mut open = connect(&server);
        drop(server);
        let started = std::time::Instant::now();
        let _ = read_all(&mut open);
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
