//! When a call counts as served: once its whole answer was written to the
//! client's connection and the client's end acknowledged it.
//!
//! The fixture's nonces prove the model saw *this* call's result. That
//! proof is only as good as the rule for what was served: a call counted
//! when it *arrived* lets a deployment send calls, close the connection
//! unread, and still be credited. So every connection the fixture serves
//! (HTTP and the stdio bridge's line protocol alike) is wrapped in
//! [`Delivering`], which watches the bytes the server writes for nonces.
//! A nonce written is *pending* on its connection; when the server next
//! flushes, the wrapper holds the flush until the client's end has
//! acknowledged every byte (on Linux, the socket's send queue is empty and
//! the connection was not reset), and only then settles the call as
//! [`Delivery::Delivered`]. A connection that fails, is reset by a client
//! that closed it, or ends or stalls past [`ACK_TIMEOUT`] with an answer
//! unacknowledged settles its pending calls as [`Delivery::Lost`].
//!
//! An answer sitting unread in the client's receive buffer is delivered
//! (the client can read it whenever it likes); an answer the client never
//! let in is not. Other platforms than Linux count an answer delivered once
//! it is flushed to the kernel on a connection without a pending error.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::log::{Delivery, FixtureLog, NONCE_DIGITS, NONCE_PREFIX};

/// How long a flush carrying an answer waits for the client's end to
/// acknowledge it before the answer counts as lost and the connection
/// ends. Loopback acknowledges at once; only a client that lets its
/// receive window fill (it reads nothing) waits this long.
pub const ACK_TIMEOUT: Duration = Duration::from_secs(5);

/// How often a held flush looks at the socket again.
const ACK_POLL: Duration = Duration::from_millis(1);

/// What the client's end of a connection has done with the bytes written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Peer {
    /// Every byte written was acknowledged on a live connection.
    Acknowledged,
    /// Some bytes still wait for an acknowledgement.
    Waiting,
    /// The connection failed or was reset: nothing more arrives.
    Gone,
}

/// A connection whose end can say whether the bytes written were taken.
pub(crate) trait Acknowledging {
    /// What the client's end has done with the bytes written so far.
    fn peer(&self) -> Peer;
}

impl Acknowledging for tokio::net::TcpStream {
    fn peer(&self) -> Peer {
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            socket_peer(self.as_raw_fd())
        }
        #[cfg(not(unix))]
        {
            match self.take_error() {
                Ok(None) => Peer::Acknowledged,
                _ => Peer::Gone,
            }
        }
    }
}

impl<S: Acknowledging> Acknowledging for crate::server_policy::watch::Guarded<S> {
    fn peer(&self) -> Peer {
        self.get_ref().peer()
    }
}

/// The socket's state, from the kernel: its pending error, and on Linux
/// its TCP state and the bytes not yet acknowledged.
#[cfg(unix)]
fn socket_peer(fd: std::os::fd::RawFd) -> Peer {
    let mut error: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `fd` is an open socket borrowed from its stream; the option
    // is written into a c_int of the length given.
    let got = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_ERROR,
            std::ptr::from_mut(&mut error).cast(),
            &mut len,
        )
    };
    if got != 0 || error != 0 {
        return Peer::Gone;
    }
    #[cfg(target_os = "linux")]
    {
        // SAFETY: as above; tcp_info is plain data the kernel fills up to
        // the length given.
        let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
        let got = unsafe {
            libc::getsockopt(
                fd,
                libc::IPPROTO_TCP,
                libc::TCP_INFO,
                std::ptr::from_mut(&mut info).cast(),
                &mut len,
            )
        };
        // ESTABLISHED, or CLOSE_WAIT (the client shut down its sending
        // side and may still read).
        const ESTABLISHED: u8 = 1;
        const CLOSE_WAIT: u8 = 8;
        if got != 0 || !matches!(info.tcpi_state, ESTABLISHED | CLOSE_WAIT) {
            return Peer::Gone;
        }
        let mut queued: libc::c_int = 0;
        // SAFETY: TIOCOUTQ (SIOCOUTQ) writes one c_int: the bytes in the
        // send queue, sent or not, that the peer has not acknowledged.
        let got = unsafe { libc::ioctl(fd, libc::TIOCOUTQ, &mut queued) };
        if got != 0 {
            return Peer::Gone;
        }
        if queued > 0 {
            return Peer::Waiting;
        }
    }
    Peer::Acknowledged
}

/// Finds nonces in a stream of written bytes, across write boundaries.
#[derive(Debug, Default)]
pub(crate) struct NonceScanner {
    /// The tail of what was written that could begin a nonce not yet
    /// complete (shorter than a whole nonce, so none is found twice).
    carry: Vec<u8>,
}

impl NonceScanner {
    /// Every whole nonce that `written` completes, in order.
    pub(crate) fn feed(&mut self, written: &[u8]) -> Vec<String> {
        let whole = NONCE_PREFIX.len() + NONCE_DIGITS;
        let mut text = std::mem::take(&mut self.carry);
        text.extend_from_slice(written);
        let prefix = NONCE_PREFIX.as_bytes();
        let mut found = Vec::new();
        let mut at = 0;
        while at + whole <= text.len() {
            if text[at..].starts_with(prefix)
                && text[at + prefix.len()..at + whole]
                    .iter()
                    .all(u8::is_ascii_hexdigit)
            {
                found.push(String::from_utf8_lossy(&text[at..at + whole]).into_owned());
                at += whole;
            } else {
                at += 1;
            }
        }
        let keep = text.len().saturating_sub(at).min(whole - 1);
        self.carry = text.split_off(text.len() - keep);
        found
    }
}

/// A connection of the fixture's, settling each answer it carries in the
/// trial's log (see the module's documentation).
pub(crate) struct Delivering<S> {
    inner: S,
    log: FixtureLog,
    scanner: NonceScanner,
    /// Nonces written and not yet acknowledged.
    pending: Vec<String>,
    /// The held flush's next look at the socket, and how long it has held.
    wait: Option<Pin<Box<tokio::time::Sleep>>>,
    held: Duration,
}

impl<S> Delivering<S> {
    /// `inner`, settling the answers it carries in `log`.
    pub(crate) fn new(inner: S, log: FixtureLog) -> Self {
        Self {
            inner,
            log,
            scanner: NonceScanner::default(),
            pending: Vec::new(),
            wait: None,
            held: Duration::ZERO,
        }
    }

    fn settle(&mut self, delivery: Delivery) {
        for nonce in self.pending.drain(..) {
            self.log.settle_delivery(&nonce, delivery);
        }
        self.wait = None;
        self.held = Duration::ZERO;
    }
}

impl<S: Acknowledging + AsyncWrite + Unpin> Delivering<S> {
    /// Holds until every pending answer is acknowledged, or lost.
    fn poll_acknowledged(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.pending.is_empty() {
            if let Some(wait) = &mut self.wait {
                ready!(wait.as_mut().poll(cx));
                self.wait = None;
            }
            match self.inner.peer() {
                Peer::Acknowledged => self.settle(Delivery::Delivered),
                Peer::Gone => {
                    self.settle(Delivery::Lost);
                    return Poll::Ready(Err(io::ErrorKind::ConnectionReset.into()));
                }
                Peer::Waiting if self.held >= ACK_TIMEOUT => {
                    self.settle(Delivery::Lost);
                    return Poll::Ready(Err(io::ErrorKind::TimedOut.into()));
                }
                Peer::Waiting => {
                    self.held += ACK_POLL;
                    self.wait = Some(Box::pin(tokio::time::sleep(ACK_POLL)));
                }
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<S> Drop for Delivering<S> {
    fn drop(&mut self) {
        self.settle(Delivery::Lost);
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Delivering<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: Acknowledging + AsyncWrite + Unpin> AsyncWrite for Delivering<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let written = ready!(Pin::new(&mut this.inner).poll_write(cx, buf))?;
        for nonce in this.scanner.feed(&buf[..written]) {
            if !this.pending.contains(&nonce) {
                this.pending.push(nonce);
            }
        }
        Poll::Ready(Ok(written))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        ready!(Pin::new(&mut this.inner).poll_flush(cx))?;
        this.poll_acknowledged(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        ready!(Pin::new(&mut this.inner).poll_flush(cx))?;
        ready!(this.poll_acknowledged(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nonce(digit: char) -> String {
        format!("{NONCE_PREFIX}{}", digit.to_string().repeat(NONCE_DIGITS))
    }

    #[test]
    fn nonces_are_found_across_writes_once_each() {
        let one = nonce('a');
        let two = nonce('7');
        let text = format!("data: {{\"t\":\"{one}\",\"s\":\"{one}\"}}\n\n{two} mcp-nonce-short");
        for split in 0..text.len() {
            let mut scanner = NonceScanner::default();
            let mut found = scanner.feed(&text.as_bytes()[..split]);
            found.extend(scanner.feed(&text.as_bytes()[split..]));
            assert_eq!(
                found,
                [one.clone(), one.clone(), two.clone()],
                "split at {split}"
            );
        }
        // Byte by byte, too.
        let mut scanner = NonceScanner::default();
        let found: Vec<String> = text.bytes().flat_map(|b| scanner.feed(&[b])).collect();
        assert_eq!(found, [one.clone(), one, two]);
    }
}
