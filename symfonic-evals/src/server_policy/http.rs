//! The policy on an HTTP/1.1 connection: hyper serves the protocol, and
//! this glue tells the connection's watchdog what it is doing, holds each
//! request body to its whole-body deadline and size, and refuses a
//! connection with `503` when no slot can be made for it.

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONNECTION};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};

use super::watch::{Connection, Phase};
use super::{Admitted, ServerPolicy};

/// Why a request body was cut short.
#[derive(Debug)]
pub(crate) enum BodyError {
    /// The whole body did not arrive within the body deadline.
    TooSlow,
    /// The body is larger than the limit.
    TooLarge,
    /// The connection broke or the framing was bad.
    Broken(hyper::Error),
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooSlow => f.write_str("the request body took longer than its deadline"),
            Self::TooLarge => f.write_str("the request body is larger than the limit"),
            Self::Broken(error) => write!(f, "the request body broke off: {error}"),
        }
    }
}

impl std::error::Error for BodyError {}

/// A request body held to the policy: its whole arrival within
/// `body_timeout` of the head's end, at most `max_body_bytes`. When it
/// ends, the connection is no longer waiting on its client.
pub(crate) struct PolicedBody {
    inner: Incoming,
    connection: Arc<Connection>,
    deadline: Pin<Box<tokio::time::Sleep>>,
    left: usize,
    done: bool,
}

impl PolicedBody {
    fn new(inner: Incoming, connection: Arc<Connection>, policy: &ServerPolicy) -> Self {
        let done = inner.is_end_stream();
        if done {
            connection.enter(Phase::Working);
        }
        Self {
            inner,
            connection,
            deadline: Box::pin(tokio::time::sleep(policy.body_timeout)),
            left: policy.max_body_bytes,
            done,
        }
    }

    fn finish(&mut self) {
        if !self.done {
            self.done = true;
            self.connection.enter(Phase::Working);
        }
    }
}

impl Body for PolicedBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        let frame = match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Pending => {
                return match this.deadline.as_mut().poll(cx) {
                    Poll::Ready(()) => {
                        this.finish();
                        Poll::Ready(Some(Err(BodyError::TooSlow)))
                    }
                    Poll::Pending => Poll::Pending,
                };
            }
            Poll::Ready(None) => {
                this.finish();
                return Poll::Ready(None);
            }
            Poll::Ready(Some(Err(error))) => {
                this.finish();
                return Poll::Ready(Some(Err(BodyError::Broken(error))));
            }
            Poll::Ready(Some(Ok(frame))) => frame,
        };
        if let Some(data) = frame.data_ref() {
            if data.len() > this.left {
                this.finish();
                return Poll::Ready(Some(Err(BodyError::TooLarge)));
            }
            this.left -= data.len();
        }
        if this.inner.is_end_stream() {
            this.finish();
        }
        Poll::Ready(Some(Ok(frame)))
    }

    fn is_end_stream(&self) -> bool {
        self.done || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A response body that, when it ends, puts its connection back to
/// waiting for the next request.
pub(crate) struct Answer<B> {
    inner: B,
    connection: Arc<Connection>,
}

impl<B: Body + Unpin> Body for Answer<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) || self.inner.is_end_stream() {
            self.connection.enter(Phase::Head);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Serves one admitted HTTP/1.1 connection with `service` until it ends,
/// is shed, or passes a deadline of `admitted`'s policy.
pub(crate) async fn serve<IO, S, F, B>(io: IO, admitted: Admitted, policy: ServerPolicy, service: S)
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    S: Fn(hyper::Request<PolicedBody>) -> F + Send + Sync + 'static,
    F: Future<Output = Result<hyper::Response<B>, Infallible>> + Send + 'static,
    B: Body + Unpin + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let connection = Arc::clone(admitted.connection());
    let watched = Arc::clone(&connection);
    let service = Arc::new(service);
    let admitted = Arc::new(admitted);
    let slot = Arc::clone(&admitted);
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        connection.enter(Phase::Body);
        let listens = request.method() == hyper::Method::GET;
        let request = request.map(|body| PolicedBody::new(body, Arc::clone(&connection), &policy));
        let answer = service(request);
        let connection = Arc::clone(&connection);
        let slot = Arc::clone(&slot);
        async move {
            let mut response = answer.await?;
            // Slots are wanted: this client's next request queues for one
            // like a newcomer's, rather than keep its slot (a client that
            // pipelines requests it never reads would hold it forever).
            if slot.pressed() {
                response
                    .headers_mut()
                    .insert(CONNECTION, HeaderValue::from_static("close"));
            }
            // An empty answer (a 202 to a notification) is never polled.
            connection.enter(if response.body().is_end_stream() {
                Phase::Head
            } else {
                Phase::Answering
            });
            let stream = response
                .headers()
                .get(hyper::header::CONTENT_TYPE)
                .is_some_and(|t| t.as_bytes().starts_with(b"text/event-stream"));
            if listens && stream {
                connection.listening();
            }
            Ok::<_, Infallible>(response.map(|inner| Answer { inner, connection }))
        }
    });
    let served = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        // The head deadline and the idle timeout are the watchdog's.
        .header_read_timeout(None)
        // A client that ends its side after its request still gets the
        // answer (an idle or half-sent one is closed all the same).
        .half_close(true)
        .serve_connection(TokioIo::new(io), service);
    tokio::select! {
        _ = served => {}
        _ = watched.watch(policy) => {}
    }
    drop(admitted);
}

/// Refuses a connection no slot could be made for: `503` and close,
/// without waiting on the client. (Written on the socket directly: a
/// fresh socket's send buffer is empty, while tokio's `try_write` says
/// "would block" until the reactor has seen the socket writable.)
pub(crate) fn refuse(stream: tokio::net::TcpStream) {
    if let Ok(mut stream) = stream.into_std() {
        let _ = std::io::Write::write(
            &mut stream,
            b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
        );
    }
}
