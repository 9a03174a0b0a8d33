//! One connection as the policy sees it: what it is doing (waiting for a
//! head, reading a body, being answered), when its bytes last moved, and
//! the watchdog that ends it when a deadline passes or it is shed.
//!
//! Deadlines live here rather than in hyper's per-read timers because the
//! attacks that matter stretch a per-read timer forever (a body byte every
//! few seconds never trips a per-frame timeout); a watchdog that compares
//! each phase's start with the clock cannot be stretched.

use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::OnceLock;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;

use super::ServerPolicy;

/// How long an answer's write may wait on its client, or an event stream
/// carry nothing, before the connection may be shed to make room for a
/// new one (its own deadline, the write or idle timeout, is longer: this
/// only decides who goes first when a slot is wanted).
pub(crate) const STALL: Duration = Duration::from_millis(200);

/// How long a connection just accepted, nothing of its request read yet,
/// is kept from being shed. A client writes its request right after the
/// handshake, but a busy client can be descheduled between the two, and
/// a first read that found the kernel empty says nothing yet; shed then,
/// its request would be lost in flight. Short, so an idle flood still
/// frees slots many times a second.
pub(crate) const FRESH: Duration = Duration::from_millis(50);

/// What a connection is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Phase {
    /// Waiting for a request's head: a new connection, or a keep-alive
    /// one between requests. The server owes it nothing.
    Head = 0,
    /// Reading a request's body. The server waits on the client.
    Body = 1,
    /// The request is read; the server is working on the answer.
    Working = 2,
    /// The answer is being written (an event stream stays here).
    Answering = 3,
}

impl Phase {
    fn of(value: u8) -> Self {
        match value {
            0 => Self::Head,
            1 => Self::Body,
            2 => Self::Working,
            _ => Self::Answering,
        }
    }
}

/// Microseconds since the process's first connection, plus one (zero
/// stands for "never").
pub(crate) fn now() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    let since = EPOCH.get_or_init(Instant::now).elapsed();
    u64::try_from(since.as_micros())
        .unwrap_or(u64::MAX - 1)
        .saturating_add(1)
}

fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

/// One open connection's state, shared by its I/O, its HTTP glue, its
/// watchdog and the admission that may shed it.
#[derive(Debug)]
pub(crate) struct Connection {
    pub(crate) id: u64,
    pub(crate) peer: IpAddr,
    phase: AtomicU8,
    phase_since: AtomicU64,
    /// When the first byte of the awaited head arrived (zero: none yet).
    head_from: AtomicU64,
    last_traffic: AtomicU64,
    /// Since when a write has been waiting for the client (zero: none is).
    write_blocked: AtomicU64,
    /// Whether it has been answered at least once (a keep-alive
    /// connection between requests).
    answered: AtomicBool,
    /// Whether the end of its last answer may still sit in the server's
    /// buffers (set when the answer ends, cleared by the next flush): a
    /// connection shed then would lose it.
    unflushed: AtomicBool,
    /// Whether its answer is an event stream the client only listens to.
    listening: AtomicBool,
    /// Whether its socket has been read from at least once (before, its
    /// first request may wait in the kernel, unread).
    observed: AtomicBool,
    shed: AtomicBool,
    wake: Notify,
}

impl Connection {
    pub(crate) fn new(id: u64, peer: IpAddr) -> Self {
        let at = now();
        Self {
            id,
            peer,
            phase: AtomicU8::new(Phase::Head as u8),
            phase_since: AtomicU64::new(at),
            head_from: AtomicU64::new(0),
            last_traffic: AtomicU64::new(at),
            write_blocked: AtomicU64::new(0),
            answered: AtomicBool::new(false),
            observed: AtomicBool::new(false),
            unflushed: AtomicBool::new(false),
            listening: AtomicBool::new(false),
            shed: AtomicBool::new(false),
            wake: Notify::new(),
        }
    }

    /// The connection enters `phase` now.
    pub(crate) fn enter(&self, phase: Phase) {
        if phase == Phase::Head && self.phase() != Phase::Head {
            self.answered.store(true, Ordering::Release);
            self.unflushed.store(true, Ordering::Release);
            self.listening.store(false, Ordering::Release);
        }
        self.phase.store(phase as u8, Ordering::Release);
        self.phase_since.store(now(), Ordering::Release);
        if phase == Phase::Head {
            self.head_from.store(0, Ordering::Release);
        }
    }

    /// The phase it is in.
    pub(crate) fn phase(&self) -> Phase {
        Phase::of(self.phase.load(Ordering::Acquire))
    }

    /// Where it stands in line to be shed when a slot is wanted, if it can
    /// be shed at all: the lower the rank, the sooner; within a rank, the
    /// earlier the moment, the sooner. Only a connection the server owes
    /// nothing, or whose client has stopped its side of the exchange, can
    /// be shed; one being worked on, or taking its answer in, never is.
    ///
    /// 0. kept alive after its answer (flushed whole), nothing of a next
    ///    request read;
    /// 1. waiting on its client, by when the wait began: for a request
    ///    (once its socket has been looked at and [`FRESH`] has passed: a
    ///    connection just accepted may have its request in the kernel,
    ///    unread, or still in flight), for the rest of a
    ///    head or a body, or for the client to take in an answer whose
    ///    write has waited [`STALL`]. A client that sends its request whole
    ///    and reads its answer is never behind one that trickles;
    /// 2. an event stream the client listens to (no request of its pending)
    ///    that has carried nothing for [`STALL`], by its last traffic.
    pub(crate) fn shed_rank(&self, at: u64) -> Option<(u8, u64)> {
        let load = |field: &AtomicU64| field.load(Ordering::Acquire);
        let stalled = |since: u64| since != 0 && at.saturating_sub(since) >= micros(STALL);
        match self.phase() {
            Phase::Working => None,
            Phase::Head if !self.observed.load(Ordering::Acquire) => None,
            Phase::Head if self.unflushed.load(Ordering::Acquire) => None,
            Phase::Head
                if !self.answered.load(Ordering::Acquire)
                    && load(&self.head_from) == 0
                    && at.saturating_sub(load(&self.phase_since)) < micros(FRESH) =>
            {
                None
            }
            Phase::Head if self.answered.load(Ordering::Acquire) && load(&self.head_from) == 0 => {
                Some((0, load(&self.phase_since)))
            }
            Phase::Head | Phase::Body => Some((1, load(&self.phase_since))),
            Phase::Answering => {
                let blocked = load(&self.write_blocked);
                let quiet = load(&self.last_traffic).max(load(&self.phase_since));
                if stalled(blocked) {
                    Some((1, blocked))
                } else if blocked == 0 && self.listening.load(Ordering::Acquire) && stalled(quiet) {
                    Some((2, quiet))
                } else {
                    None
                }
            }
        }
    }

    /// Its answer is an event stream the client listens to, with no
    /// request of its pending (an MCP `GET` stream): quiet, it costs the
    /// client nothing to be closed and to come back.
    pub(crate) fn listening(&self) {
        self.listening.store(true, Ordering::Release);
    }

    /// Asks the connection to end at once (its slot is wanted).
    pub(crate) fn shed(&self) {
        self.shed.store(true, Ordering::Release);
        self.wake.notify_one();
    }

    fn unblocked(&self) {
        if self.write_blocked.load(Ordering::Relaxed) != 0 {
            self.write_blocked.store(0, Ordering::Release);
        }
    }

    fn flushed(&self) {
        if self.unflushed.load(Ordering::Relaxed) {
            self.unflushed.store(false, Ordering::Release);
        }
    }

    /// Its socket was read from (whatever it gave).
    pub(crate) fn looked(&self) {
        if !self.observed.load(Ordering::Relaxed) {
            self.observed.store(true, Ordering::Release);
        }
    }

    fn read_some(&self) {
        let at = now();
        self.last_traffic.store(at, Ordering::Release);
        if self.phase() == Phase::Head {
            let _ = self
                .head_from
                .compare_exchange(0, at, Ordering::AcqRel, Ordering::Acquire);
        }
    }

    fn wrote(&self, blocked: bool) {
        if blocked {
            let _ =
                self.write_blocked
                    .compare_exchange(0, now(), Ordering::AcqRel, Ordering::Acquire);
        } else {
            self.write_blocked.store(0, Ordering::Release);
            self.last_traffic.store(now(), Ordering::Release);
        }
    }

    /// The deadline the connection has passed at `at`, if any.
    pub(crate) fn expired(&self, policy: &ServerPolicy, at: u64) -> Option<&'static str> {
        let since = |field: &AtomicU64| at.saturating_sub(field.load(Ordering::Acquire));
        let blocked = self.write_blocked.load(Ordering::Acquire);
        if blocked != 0 && at.saturating_sub(blocked) > micros(policy.write_timeout) {
            return Some("write timeout");
        }
        match self.phase() {
            Phase::Head => {
                let head_from = self.head_from.load(Ordering::Acquire);
                if head_from == 0 {
                    (since(&self.phase_since) > micros(policy.idle_timeout)).then_some("idle")
                } else {
                    (at.saturating_sub(head_from) > micros(policy.head_timeout))
                        .then_some("head timeout")
                }
            }
            // The body's own deadline answers 408 first; this is the
            // backstop for a service that stopped reading it.
            Phase::Body => (since(&self.phase_since) > 2 * micros(policy.body_timeout))
                .then_some("body timeout"),
            Phase::Working => None,
            Phase::Answering => {
                let quiet = since(&self.last_traffic).min(since(&self.phase_since));
                (quiet > micros(policy.idle_timeout)).then_some("idle stream")
            }
        }
    }

    /// Resolves when the connection must end: shed, or past a deadline.
    pub(crate) async fn watch(&self, policy: ServerPolicy) -> &'static str {
        let tick = policy.tick();
        loop {
            if self.shed.load(Ordering::Acquire) {
                return "shed";
            }
            if let Some(why) = self.expired(&policy, now()) {
                return why;
            }
            tokio::select! {
                () = self.wake.notified() => {}
                () = tokio::time::sleep(tick) => {}
            }
        }
    }
}

/// A connection's stream, telling its [`Connection`] when bytes move and
/// when a write waits on the client.
pub(crate) struct Guarded<S> {
    inner: S,
    connection: std::sync::Arc<Connection>,
}

impl<S> Guarded<S> {
    pub(crate) fn new(inner: S, connection: std::sync::Arc<Connection>) -> Self {
        Self { inner, connection }
    }

    /// The stream it wraps.
    pub(crate) fn get_ref(&self) -> &S {
        &self.inner
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Guarded<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.connection.read_some();
        }
        self.connection.looked();
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Guarded<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.connection.wrote(polled.is_pending());
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.inner).poll_flush(cx);
        // A flush moves no byte of its own (hyper flushes whenever it is
        // polled): it says only whether the client is taking bytes in.
        if polled.is_pending() {
            self.connection.wrote(true);
        } else {
            self.connection.unblocked();
        }
        if matches!(polled, Poll::Ready(Ok(()))) {
            self.connection.flushed();
        }
        polled
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> ServerPolicy {
        ServerPolicy {
            head_timeout: Duration::from_millis(10),
            body_timeout: Duration::from_millis(20),
            idle_timeout: Duration::from_millis(30),
            write_timeout: Duration::from_millis(40),
            ..ServerPolicy::defaults(1024)
        }
    }

    const MS: u64 = 1000;

    #[test]
    fn each_phase_is_held_to_its_own_deadline_from_its_start() {
        let policy = policy();
        let connection = Connection::new(1, [127, 0, 0, 1].into());
        let start = connection.phase_since.load(Ordering::Acquire);
        // Idle: no byte of a head yet.
        assert_eq!(connection.expired(&policy, start + 29 * MS), None);
        assert_eq!(connection.expired(&policy, start + 31 * MS), Some("idle"));
        // A head begun is held to the head deadline, however its bytes
        // trickle.
        connection.read_some();
        let head_from = connection.head_from.load(Ordering::Acquire);
        assert_eq!(connection.expired(&policy, head_from + 9 * MS), None);
        assert_eq!(
            connection.expired(&policy, head_from + 11 * MS),
            Some("head timeout")
        );
        // A body: the whole of it, not per frame (the backstop at twice).
        connection.enter(Phase::Body);
        let body_from = connection.phase_since.load(Ordering::Acquire);
        connection.read_some();
        assert_eq!(connection.expired(&policy, body_from + 39 * MS), None);
        connection.read_some();
        assert_eq!(
            connection.expired(&policy, body_from + 41 * MS),
            Some("body timeout")
        );
        // Working has no deadline of the policy's.
        connection.enter(Phase::Working);
        assert_eq!(connection.expired(&policy, body_from + 10_000 * MS), None);
        // An answer without traffic is idle.
        connection.enter(Phase::Answering);
        let answering = connection.phase_since.load(Ordering::Acquire);
        assert_eq!(connection.expired(&policy, answering + 29 * MS), None);
        assert_eq!(
            connection.expired(&policy, answering + 31 * MS),
            Some("idle stream")
        );
        // A write the client does not take in.
        connection.enter(Phase::Working);
        connection.wrote(true);
        let blocked = connection.write_blocked.load(Ordering::Acquire);
        assert_eq!(
            connection.expired(&policy, blocked + 41 * MS),
            Some("write timeout")
        );
        connection.wrote(false);
        assert_eq!(connection.expired(&policy, blocked + 41 * MS), None);
    }

    #[test]
    fn only_a_connection_the_server_owes_nothing_or_stalled_can_be_shed() {
        let connection = Connection::new(1, [127, 0, 0, 1].into());
        let start = connection.phase_since.load(Ordering::Acquire);
        let rank = |at: u64| connection.shed_rank(at).map(|(rank, _)| rank);
        // Just accepted, not yet read from: its request may be in the
        // kernel.
        assert_eq!(rank(start), None);
        connection.looked();
        // Looked at, found empty: its request may still be in flight.
        assert_eq!(rank(start + micros(FRESH) - 1), None, "fresh");
        let fresh = start + micros(FRESH);
        assert_eq!(connection.shed_rank(fresh), Some((1, start)), "idle");
        connection.read_some();
        assert_eq!(connection.shed_rank(start), Some((1, start)), "a head");
        connection.enter(Phase::Body);
        assert_eq!(rank(start), Some(1), "a body arriving");
        connection.enter(Phase::Working);
        assert_eq!(
            rank(start + 3600 * 1000 * MS),
            None,
            "never while worked on"
        );
        // An answer being taken in is never shed; one whose write waits
        // on the client is, once it has waited a while.
        connection.enter(Phase::Answering);
        connection.wrote(false);
        let wrote = connection.last_traffic.load(Ordering::Acquire);
        assert_eq!(rank(wrote + MS), None);
        connection.wrote(true);
        let blocked = connection.write_blocked.load(Ordering::Acquire);
        assert_eq!(rank(blocked + MS), None);
        let stall = micros(STALL);
        assert_eq!(connection.shed_rank(blocked + stall), Some((1, blocked)));
        // A quiet answer the server still owes is never shed...
        connection.wrote(false);
        let quiet = connection.last_traffic.load(Ordering::Acquire);
        assert_eq!(rank(quiet + 3600 * 1000 * MS), None);
        // ...a quiet stream the client only listens to is, last of all.
        connection.listening();
        assert_eq!(rank(quiet + MS), None);
        assert_eq!(connection.shed_rank(quiet + stall), Some((2, quiet)));
        // Answered: kept until the answer's end is flushed, then first
        // in line.
        connection.enter(Phase::Head);
        assert_eq!(rank(quiet + stall), None, "its answer's end unflushed");
        connection.flushed();
        assert_eq!(rank(quiet + stall), Some(0));
        // Once its next head begins, it waits like any other.
        connection.read_some();
        assert_eq!(rank(quiet + stall), Some(1));
    }
}
