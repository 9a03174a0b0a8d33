//! A minimal HTTP/1.1 server on `std::net`, bound to 127.0.0.1 only: what
//! model SDKs need and no more. Requests with `Content-Length` or chunked
//! bodies, keep-alive, `Expect: 100-continue`; responses with a length, or
//! chunked for event streams (one chunk per event, flushed as written).
//!
//! One thread accepts; each connection is served on a thread of its own.
//! Dropping the server stops accepting, shuts every open connection down
//! and joins the acceptor, so nothing outlives the trial that started it.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

/// The longest request head accepted.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// The largest request body accepted.
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// One parsed request.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) method: String,
    pub(crate) target: String,
    /// Names lowercased.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
    /// An HTTP/1.0 request (closed after its response unless it asks).
    pub(crate) http10: bool,
}

impl Request {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The target without its query string.
    pub(crate) fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }
}

/// Serves one request.
pub(crate) trait Handler: Send + Sync + 'static {
    fn handle(&self, request: &Request, respond: &mut Responder<'_>) -> io::Result<()>;
}

/// Writes one response on a connection.
pub(crate) struct Responder<'a> {
    stream: &'a mut TcpStream,
    keep_alive: bool,
    buffer: Vec<u8>,
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

impl Responder<'_> {
    fn head(&mut self, status: u16, content_type: &str, extra: &[(&str, &str)]) {
        self.buffer.clear();
        let connection = if self.keep_alive {
            "keep-alive"
        } else {
            "close"
        };
        self.buffer.extend_from_slice(
            format!(
                "HTTP/1.1 {status} {}\r\ncontent-type: {content_type}\r\nconnection: {connection}\r\n",
                reason(status)
            )
            .as_bytes(),
        );
        for (name, value) in extra {
            self.buffer
                .extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
    }

    /// A complete response with a `Content-Length`, written in one go.
    pub(crate) fn full(
        &mut self,
        status: u16,
        content_type: &str,
        extra: &[(&str, &str)],
        body: &[u8],
    ) -> io::Result<()> {
        self.head(status, content_type, extra);
        self.buffer
            .extend_from_slice(format!("content-length: {}\r\n\r\n", body.len()).as_bytes());
        self.buffer.extend_from_slice(body);
        self.stream.write_all(&self.buffer)
    }

    /// Starts a chunked response; follow with [`Self::chunk`] and
    /// [`Self::end`].
    pub(crate) fn start_chunked(&mut self, status: u16, content_type: &str) -> io::Result<()> {
        self.head(
            status,
            content_type,
            &[
                ("cache-control", "no-cache"),
                ("transfer-encoding", "chunked"),
            ],
        );
        self.buffer.extend_from_slice(b"\r\n");
        self.stream.write_all(&self.buffer)
    }

    /// One chunk, written and flushed on its own so the client sees the
    /// same boundaries.
    pub(crate) fn chunk(&mut self, bytes: &[u8]) -> io::Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        self.buffer.clear();
        self.buffer
            .extend_from_slice(format!("{:x}\r\n", bytes.len()).as_bytes());
        self.buffer.extend_from_slice(bytes);
        self.buffer.extend_from_slice(b"\r\n");
        self.stream.write_all(&self.buffer)?;
        self.stream.flush()
    }

    /// Ends a chunked response.
    pub(crate) fn end(&mut self) -> io::Result<()> {
        self.stream.write_all(b"0\r\n\r\n")?;
        self.stream.flush()
    }
}

/// A running loopback server.
pub(crate) struct HttpServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    live: Arc<Mutex<Vec<(u64, TcpStream)>>>,
    acceptor: Option<JoinHandle<()>>,
}

impl HttpServer {
    /// Binds 127.0.0.1 on a free port and starts serving with `handler`.
    pub(crate) fn start(handler: Arc<dyn Handler>, name: &str) -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let live: Arc<Mutex<Vec<(u64, TcpStream)>>> = Arc::new(Mutex::new(Vec::new()));
        let acceptor = {
            let (stop, live) = (Arc::clone(&stop), Arc::clone(&live));
            let name = name.to_owned();
            std::thread::Builder::new()
                .name(format!("{name}-accept"))
                .spawn(move || accept_loop(&listener, &stop, &live, &handler, &name))?
        };
        Ok(Self {
            addr,
            stop,
            live,
            acceptor: Some(acceptor),
        })
    }

    /// `http://127.0.0.1:<port>`.
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the acceptor out of `accept`.
        let _ = TcpStream::connect(self.addr);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
        for (_, stream) in self
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain(..)
        {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

fn accept_loop(
    listener: &TcpListener,
    stop: &AtomicBool,
    live: &Arc<Mutex<Vec<(u64, TcpStream)>>>,
    handler: &Arc<dyn Handler>,
    name: &str,
) {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    for stream in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let _ = stream.set_nodelay(true);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        if let Ok(clone) = stream.try_clone() {
            live.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((id, clone));
        }
        let (handler, live) = (Arc::clone(handler), Arc::clone(live));
        let spawned = std::thread::Builder::new()
            .name(format!("{name}-conn"))
            .spawn(move || {
                serve_connection(stream, &*handler);
                live.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .retain(|(i, _)| *i != id);
            });
        drop(spawned);
    }
}

fn serve_connection(stream: TcpStream, handler: &dyn Handler) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    loop {
        let request = match read_request(&mut reader, &mut writer) {
            Ok(Some(request)) => request,
            Ok(None) => return,
            Err(error) => {
                let mut respond = Responder {
                    stream: &mut writer,
                    keep_alive: false,
                    buffer: Vec::new(),
                };
                let status = if error.kind() == io::ErrorKind::OutOfMemory {
                    413
                } else {
                    400
                };
                let _ = respond.full(status, "text/plain", &[], b"malformed HTTP request");
                return;
            }
        };
        let keep_alive = wants_keep_alive(&request);
        let mut respond = Responder {
            stream: &mut writer,
            keep_alive,
            buffer: Vec::with_capacity(1024),
        };
        if handler.handle(&request, &mut respond).is_err() || !keep_alive {
            let _ = writer.shutdown(Shutdown::Both);
            return;
        }
    }
}

fn wants_keep_alive(request: &Request) -> bool {
    let connection = request
        .header("connection")
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    if request.http10 {
        connection.contains("keep-alive")
    } else {
        !connection.contains("close")
    }
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_owned())
}

fn read_line(reader: &mut impl BufRead, budget: &mut usize) -> io::Result<Option<String>> {
    let mut line = Vec::new();
    let n = reader
        .by_ref()
        .take(*budget as u64 + 1)
        .read_until(b'\n', &mut line)?;
    if n == 0 {
        return Ok(None);
    }
    if n > *budget {
        return Err(invalid("request head too large"));
    }
    *budget -= n;
    while matches!(line.last(), Some(b'\n' | b'\r')) {
        line.pop();
    }
    String::from_utf8(line)
        .map(Some)
        .map_err(|_| invalid("request head is not UTF-8"))
}

/// Reads the next request; `None` at a clean end of the connection.
pub(crate) fn read_request(
    reader: &mut BufReader<TcpStream>,
    writer: &mut TcpStream,
) -> io::Result<Option<Request>> {
    let mut budget = MAX_HEAD_BYTES;
    let start = loop {
        match read_line(reader, &mut budget)? {
            None => return Ok(None),
            // Tolerate blank lines between requests.
            Some(line) if line.is_empty() => continue,
            Some(line) => break line,
        }
    };
    let mut parts = start.split(' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(invalid("bad request line"));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(invalid("not HTTP/1.x"));
    }
    let mut headers = Vec::new();
    loop {
        let line = read_line(reader, &mut budget)?.ok_or_else(|| invalid("head cut short"))?;
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').ok_or_else(|| invalid("bad header"))?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let mut request = Request {
        method: method.to_owned(),
        target: target.to_owned(),
        headers,
        body: Vec::new(),
        http10: version == "HTTP/1.0",
    };
    if request
        .header("expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    {
        writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    let chunked = request
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    if chunked {
        request.body = read_chunked(reader)?;
    } else if let Some(length) = request.header("content-length") {
        let length: usize = length.parse().map_err(|_| invalid("bad content-length"))?;
        if length > MAX_BODY_BYTES {
            return Err(io::Error::new(io::ErrorKind::OutOfMemory, "body too large"));
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        request.body = body;
    }
    Ok(Some(request))
}

fn read_chunked(reader: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut budget = 1024;
        let line = read_line(reader, &mut budget)?.ok_or_else(|| invalid("chunk cut short"))?;
        let size = line.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size, 16).map_err(|_| invalid("bad chunk size"))?;
        if size == 0 {
            // Trailers, then the blank line.
            loop {
                let mut budget = MAX_HEAD_BYTES;
                match read_line(reader, &mut budget)? {
                    Some(line) if !line.is_empty() => continue,
                    _ => return Ok(body),
                }
            }
        }
        if body.len() + size > MAX_BODY_BYTES {
            return Err(io::Error::new(io::ErrorKind::OutOfMemory, "body too large"));
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        let mut crlf = [0; 2];
        reader.read_exact(&mut crlf)?;
    }
}
