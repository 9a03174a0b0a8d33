//! The limits both of the harness's servers hold a client to: the model
//! endpoint (`replay`) and the MCP fixture (`mcp`), HTTP and line sides.
//!
//! Either server is reachable by any process on the machine, and a stuck
//! deployment looks, to a server, like the cheapest attack there is: a
//! client that opens connections and then sends nothing, or sends a byte
//! at a time, or never reads its answer. One policy, in one place, keeps
//! every such client from holding a slot for longer than a deadline it
//! cannot stretch, and makes room for a new client by shedding the client
//! that has kept the server waiting longest:
//!
//! | limit | default | override (variable, or the field) |
//! |---|---|---|
//! | request head, whole, once its first byte arrived | 10 s | `SYMFONIC_EVALS_SERVER_HEAD_TIMEOUT_MS`, [`ServerPolicy::head_timeout`] |
//! | request body, whole (not per frame) | 30 s | `SYMFONIC_EVALS_SERVER_BODY_TIMEOUT_MS`, [`ServerPolicy::body_timeout`] |
//! | idle: a keep-alive connection between requests, an event stream without traffic | 30 s | `SYMFONIC_EVALS_SERVER_IDLE_TIMEOUT_MS`, [`ServerPolicy::idle_timeout`] |
//! | a write the client does not take in | 5 s | `SYMFONIC_EVALS_SERVER_WRITE_TIMEOUT_MS`, [`ServerPolicy::write_timeout`] |
//! | connections open at once | 512 | `SYMFONIC_EVALS_SERVER_MAX_CONNECTIONS`, [`ServerPolicy::max_connections`] |
//! | connections open at once from one peer address | 384 | `SYMFONIC_EVALS_SERVER_MAX_PER_PEER`, [`ServerPolicy::max_per_peer`] |
//! | a newcomer's wait for a slot when none can be made | 2 s | `SYMFONIC_EVALS_SERVER_ADMISSION_WAIT_MS`, [`ServerPolicy::admission_wait`] |
//! | request body size | 64 MiB (model endpoint), 1 MiB (MCP fixture) | `SYMFONIC_EVALS_SERVER_MAX_BODY_BYTES`, [`ServerPolicy::max_body_bytes`] |
//!
//! When a connection arrives and its peer or the server is at its limit,
//! a slot is made by shedding, in this order: a kept-alive connection
//! lingering after its answer; an idle one (nothing of a request read,
//! once its socket has been looked at and 50 ms have passed since it was
//! accepted: a connection just accepted may have its request in the
//! kernel, unread, or still in flight); a stalled one (a head or body still
//! arriving, or an answer whose write has waited on its client for 200 ms),
//! the one stalled longest first; an event stream that has carried nothing
//! for 200 ms. A connection being worked on, or taking its answer in, is
//! never shed: a client that sends its request whole and reads its answer
//! cannot be pushed out by any number of clients that do not. When no
//! connection can be shed, the newcomer waits (the accept loop with it,
//! the kernel's queue holding the others in order) up to the admission
//! wait for a slot; past it, it is refused (HTTP: `503` and close), and so
//! is every newcomer at once until a slot is given back. While slots are
//! wanted (the table or the peer full, or a newcomer waiting), every answer
//! says `connection: close`: a kept-alive client's next request queues for
//! a slot like a newcomer's, and a client that pipelines requests without
//! reading the answers gets one answer per connection, not a slot for
//! good.
//!
//! A peer is an IP address: on loopback every local process is the same
//! peer (and a local process can pick any `127.x.y.z` source), so the
//! per-peer limit only keeps one remote-looking address from taking every
//! slot; the shedding order is what keeps a local client from starving
//! the others.
//!
//! A request that starts something costly is also held to a budget per
//! peer (the `rate` module): the MCP fixture answers a new session past
//! its budget with `429` before any work (see the `mcp` module's
//! `SessionLimits` for the figures and their variables).
//!
//! Every deadline is watched by the connection's own watchdog (the `watch`
//! module), which ends the connection; the HTTP glue (the `http` module)
//! tells the watchdog what the connection is doing.

mod admission;
pub(crate) mod http;
#[cfg(feature = "mcp")]
pub(crate) mod rate;
pub(crate) mod watch;

use std::time::Duration;

pub(crate) use admission::{Admission, Admitted};

/// Overrides [`ServerPolicy::head_timeout`], in milliseconds.
pub const HEAD_TIMEOUT_ENV: &str = "SYMFONIC_EVALS_SERVER_HEAD_TIMEOUT_MS";
/// Overrides [`ServerPolicy::body_timeout`], in milliseconds.
pub const BODY_TIMEOUT_ENV: &str = "SYMFONIC_EVALS_SERVER_BODY_TIMEOUT_MS";
/// Overrides [`ServerPolicy::idle_timeout`], in milliseconds.
pub const IDLE_TIMEOUT_ENV: &str = "SYMFONIC_EVALS_SERVER_IDLE_TIMEOUT_MS";
/// Overrides [`ServerPolicy::write_timeout`], in milliseconds.
pub const WRITE_TIMEOUT_ENV: &str = "SYMFONIC_EVALS_SERVER_WRITE_TIMEOUT_MS";
/// Overrides [`ServerPolicy::max_connections`].
pub const MAX_CONNECTIONS_ENV: &str = "SYMFONIC_EVALS_SERVER_MAX_CONNECTIONS";
/// Overrides [`ServerPolicy::max_per_peer`].
pub const MAX_PER_PEER_ENV: &str = "SYMFONIC_EVALS_SERVER_MAX_PER_PEER";
/// Overrides [`ServerPolicy::admission_wait`], in milliseconds.
pub const ADMISSION_WAIT_ENV: &str = "SYMFONIC_EVALS_SERVER_ADMISSION_WAIT_MS";
/// Overrides [`ServerPolicy::max_body_bytes`].
pub const MAX_BODY_BYTES_ENV: &str = "SYMFONIC_EVALS_SERVER_MAX_BODY_BYTES";

/// The limits a server holds its clients to (see the module's table for
/// the defaults and the variables that override them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerPolicy {
    /// How long a request's head may take, from its first byte to its
    /// end.
    pub head_timeout: Duration,
    /// How long a request's whole body may take, from the end of its head.
    pub body_timeout: Duration,
    /// How long a connection may carry no byte either way while it waits
    /// for a request, or while an event stream sends nothing.
    pub idle_timeout: Duration,
    /// How long a write may wait for the client to take bytes in.
    pub write_timeout: Duration,
    /// Connections open at once.
    pub max_connections: usize,
    /// Connections open at once from one peer address (below the total,
    /// so one address never takes every slot).
    pub max_per_peer: usize,
    /// How long a new connection waits for a slot when every slot is
    /// being answered, before it is refused: long enough for a burst of
    /// work to drain, short enough that a client hears "busy" rather than
    /// nothing.
    pub admission_wait: Duration,
    /// The largest request body.
    pub max_body_bytes: usize,
}

impl ServerPolicy {
    /// The defaults, with `max_body_bytes` as the server's own.
    pub const fn defaults(max_body_bytes: usize) -> Self {
        Self {
            head_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(30),
            write_timeout: Duration::from_secs(5),
            max_connections: 512,
            max_per_peer: 384,
            admission_wait: Duration::from_secs(2),
            max_body_bytes,
        }
    }

    /// The defaults, each overridden by its variable when that holds a
    /// positive number.
    pub fn from_env(max_body_bytes: usize) -> Self {
        Self::from_lookup(max_body_bytes, |name| std::env::var(name).ok())
    }

    /// As [`Self::from_env`], with `env` standing for the environment.
    pub fn from_lookup(max_body_bytes: usize, env: impl Fn(&str) -> Option<String>) -> Self {
        let number = |name: &str| -> Option<u64> {
            env(name)
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|n| *n > 0)
        };
        let millis =
            |name: &str, default: Duration| number(name).map_or(default, Duration::from_millis);
        let count = |name: &str, default: usize| {
            number(name).map_or(default, |n| usize::try_from(n).unwrap_or(usize::MAX))
        };
        let defaults = Self::defaults(max_body_bytes);
        let policy = Self {
            head_timeout: millis(HEAD_TIMEOUT_ENV, defaults.head_timeout),
            body_timeout: millis(BODY_TIMEOUT_ENV, defaults.body_timeout),
            idle_timeout: millis(IDLE_TIMEOUT_ENV, defaults.idle_timeout),
            write_timeout: millis(WRITE_TIMEOUT_ENV, defaults.write_timeout),
            max_connections: count(MAX_CONNECTIONS_ENV, defaults.max_connections),
            max_per_peer: count(MAX_PER_PEER_ENV, defaults.max_per_peer),
            admission_wait: millis(ADMISSION_WAIT_ENV, defaults.admission_wait),
            max_body_bytes: count(MAX_BODY_BYTES_ENV, defaults.max_body_bytes),
        };
        policy.clamped()
    }

    /// The per-peer limit kept at or below the total.
    pub(crate) fn clamped(mut self) -> Self {
        self.max_connections = self.max_connections.max(1);
        self.max_per_peer = self.max_per_peer.clamp(1, self.max_connections);
        self
    }

    /// How often a connection's watchdog looks at it: a quarter of the
    /// shortest deadline, between 5 ms and one second.
    pub(crate) fn tick(&self) -> Duration {
        let shortest = [
            self.head_timeout,
            self.body_timeout,
            self.idle_timeout,
            self.write_timeout,
        ]
        .into_iter()
        .min()
        .unwrap_or(Duration::from_secs(1));
        (shortest / 4).clamp(Duration::from_millis(5), Duration::from_secs(1))
    }
}

/// How many connections may wait to be accepted: more than the default
/// 128, so a burst of reconnecting clients does not make the kernel drop a
/// legitimate client's SYN (which it retries only after a second).
const BACKLOG: i32 = 4096;

/// Deepens the accept queue of a listening socket to [`BACKLOG`] (capped
/// by the system's own limit). On Linux, `listen` on a listening socket
/// resizes its queue; elsewhere this does nothing.
pub(crate) fn deepen_backlog(listener: &std::net::TcpListener) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: the descriptor is the listener's own, open and listening.
        let _ = unsafe { libc::listen(listener.as_raw_fd(), BACKLOG) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (listener, BACKLOG);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_limit_has_its_default_and_its_override() {
        let defaults = ServerPolicy::from_lookup(1024, |_| None);
        assert_eq!(defaults, ServerPolicy::defaults(1024));
        assert_eq!(defaults.head_timeout, Duration::from_secs(10));
        assert_eq!(defaults.max_per_peer, 384);
        let set = |name: &str| {
            ServerPolicy::from_lookup(1024, |asked| (asked == name).then(|| "7".to_owned()))
        };
        assert_eq!(set(HEAD_TIMEOUT_ENV).head_timeout, Duration::from_millis(7));
        assert_eq!(set(BODY_TIMEOUT_ENV).body_timeout, Duration::from_millis(7));
        assert_eq!(set(IDLE_TIMEOUT_ENV).idle_timeout, Duration::from_millis(7));
        assert_eq!(
            set(WRITE_TIMEOUT_ENV).write_timeout,
            Duration::from_millis(7)
        );
        assert_eq!(set(MAX_CONNECTIONS_ENV).max_connections, 7);
        assert_eq!(
            set(MAX_CONNECTIONS_ENV).max_per_peer,
            7,
            "never above the total"
        );
        assert_eq!(set(MAX_PER_PEER_ENV).max_per_peer, 7);
        assert_eq!(
            set(ADMISSION_WAIT_ENV).admission_wait,
            Duration::from_millis(7)
        );
        assert_eq!(defaults.write_timeout, Duration::from_secs(5));
        assert_eq!(defaults.admission_wait, Duration::from_secs(2));
        assert_eq!(set(MAX_BODY_BYTES_ENV).max_body_bytes, 7);
        // Nonsense and zero leave the default.
        let zero = ServerPolicy::from_lookup(1024, |_| Some("0".into()));
        assert_eq!(zero, defaults);
        let words = ServerPolicy::from_lookup(1024, |_| Some("soon".into()));
        assert_eq!(words, defaults);
    }
}
