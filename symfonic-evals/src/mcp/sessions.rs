//! The fixture's MCP sessions, bounded: at most [`MAX_SESSIONS`] live at
//! once, a session never used past its `initialize` and then the least
//! recently used closed to make room for a new one, and each closed after
//! [`SESSION_IDLE`] without a request.
//!
//! Every `initialize` makes a session, and a session holds a worker, its
//! channels and its caches until it is closed; unbounded, 2,000
//! `initialize` requests grew the fixture from 12 MB to 133 MB for the
//! rest of the trial. A deployment needs a handful (one per client, one
//! more per restart), so the cap is far above honest use and the eviction
//! only ever reaches sessions nobody is using.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

/// Sessions live at once, unless [`MAX_SESSIONS_ENV`] says otherwise.
pub const MAX_SESSIONS: usize = 64;
/// Overrides [`MAX_SESSIONS`].
pub const MAX_SESSIONS_ENV: &str = "SYMFONIC_EVALS_MCP_MAX_SESSIONS";
/// How long a session lives without a request, unless
/// [`SESSION_IDLE_ENV`] says otherwise.
pub const SESSION_IDLE: Duration = Duration::from_secs(300);
/// Overrides [`SESSION_IDLE`], in milliseconds.
pub const SESSION_IDLE_ENV: &str = "SYMFONIC_EVALS_MCP_SESSION_IDLE_MS";
/// Sessions and event streams one peer may open at once, unless
/// [`OPEN_BURST_ENV`] says otherwise.
pub const OPEN_BURST: u32 = 32;
/// Overrides [`OPEN_BURST`].
pub const OPEN_BURST_ENV: &str = "SYMFONIC_EVALS_MCP_OPEN_BURST";
/// Sessions and event streams per second one peer's budget regains, unless
/// [`OPEN_PER_SECOND_ENV`] says otherwise.
pub const OPEN_PER_SECOND: u32 = 16;
/// Overrides [`OPEN_PER_SECOND`].
pub const OPEN_PER_SECOND_ENV: &str = "SYMFONIC_EVALS_MCP_OPEN_PER_SECOND";

/// How many MCP sessions the fixture keeps, for how long unused, and how
/// fast one peer may open sessions and event streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    /// Sessions live at once; the least recently used is closed to make
    /// room for a new one.
    pub max_sessions: usize,
    /// How long a session lives without a request.
    pub idle: Duration,
    /// Sessions (a `POST` without a session: an `initialize`) and event
    /// streams (a `GET`) one peer address may open at once; past it, and
    /// until its budget refills, it is answered `429` before any work is
    /// done. Each costs the fixture a session worker's time (a stream is
    /// set up by its session's worker, the one that answers its calls), and
    /// a deployment opens a handful per trial.
    pub open_burst: u32,
    /// Sessions and event streams per second one peer's budget regains.
    pub open_per_second: u32,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            max_sessions: MAX_SESSIONS,
            idle: SESSION_IDLE,
            open_burst: OPEN_BURST,
            open_per_second: OPEN_PER_SECOND,
        }
    }
}

impl SessionLimits {
    /// The defaults, each overridden by its variable when that holds a
    /// positive number.
    pub fn from_env() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// As [`Self::from_env`], with `env` standing for the environment.
    pub fn from_lookup(env: impl Fn(&str) -> Option<String>) -> Self {
        let number = |name: &str| {
            env(name)
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|n| *n > 0)
        };
        let small = |name: &str, default: u32| {
            number(name).map_or(default, |n| u32::try_from(n).unwrap_or(u32::MAX))
        };
        let defaults = Self::default();
        Self {
            max_sessions: number(MAX_SESSIONS_ENV).map_or(defaults.max_sessions, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            }),
            idle: number(SESSION_IDLE_ENV).map_or(defaults.idle, Duration::from_millis),
            open_burst: small(OPEN_BURST_ENV, defaults.open_burst),
            open_per_second: small(OPEN_PER_SECOND_ENV, defaults.open_per_second),
        }
    }
}

/// When a session was last used, and whether for more than `initialize`.
#[derive(Debug, Clone, Copy)]
struct Use {
    at: Instant,
    beyond_initialize: bool,
}

/// The SDK's session manager, with a cap and least-recently-used eviction.
pub(crate) struct BoundedSessions {
    inner: LocalSessionManager,
    cap: usize,
    /// When each live session was last used, and whether it was ever
    /// used past its `initialize`.
    used: Mutex<HashMap<SessionId, Use>>,
}

impl BoundedSessions {
    /// Sessions within `limits`.
    pub(crate) fn new(limits: SessionLimits) -> Self {
        let mut inner = LocalSessionManager::default();
        let mut config = SessionConfig::default();
        config.keep_alive = Some(limits.idle);
        inner.session_config = config;
        Self {
            inner,
            cap: limits.max_sessions.max(1),
            used: Mutex::new(HashMap::new()),
        }
    }

    fn touch(&self, id: &SessionId) {
        let mut used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(using) = used.get_mut(id) {
            *using = Use {
                at: Instant::now(),
                beyond_initialize: true,
            };
        }
    }

    /// The sessions to close so one more fits: those never used past
    /// their `initialize` first (a flood of them must not close a session
    /// a client works in), then the least recently used.
    fn evictions(&self) -> Vec<SessionId> {
        let mut used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        let mut evicted = Vec::new();
        while used.len() >= self.cap {
            let Some(oldest) = used
                .iter()
                .min_by_key(|(_, using)| (using.beyond_initialize, using.at))
                .map(|(id, _)| id.clone())
            else {
                break;
            };
            used.remove(&oldest);
            evicted.push(oldest);
        }
        evicted
    }

    /// How many sessions are live (counted by the cap).
    pub(crate) fn live(&self) -> usize {
        self.used
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// How many sessions the SDK's manager holds (a worker and channels
    /// each), when it can tell without waiting.
    #[cfg(test)]
    pub(crate) fn held(&self) -> Option<usize> {
        self.inner.sessions.try_read().ok().map(|s| s.len())
    }
}

impl SessionManager for BoundedSessions {
    type Error = <LocalSessionManager as SessionManager>::Error;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        for id in self.evictions() {
            // An expired session is already gone; closing it again is a
            // harmless error.
            let _ = self.inner.close_session(&id).await;
        }
        let (id, transport) = self.inner.create_session().await?;
        self.used
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                id.clone(),
                Use {
                    at: Instant::now(),
                    beyond_initialize: false,
                },
            );
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        let live = self.inner.has_session(id).await?;
        if !live {
            self.used
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(id);
        }
        Ok(live)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.used
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        _id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        // A closed or evicted session stays closed: its client initializes
        // a new one.
        Ok(RestoreOutcome::NotSupported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_session_limit_has_its_default_and_its_override() {
        let defaults = SessionLimits::from_lookup(|_| None);
        assert_eq!(defaults, SessionLimits::default());
        assert_eq!(defaults.max_sessions, 64);
        assert_eq!(defaults.idle, Duration::from_secs(300));
        assert_eq!(defaults.open_burst, 32);
        assert_eq!(defaults.open_per_second, 16);
        let set = |name: &str| {
            SessionLimits::from_lookup(|asked| (asked == name).then(|| "7".to_owned()))
        };
        assert_eq!(set(MAX_SESSIONS_ENV).max_sessions, 7);
        assert_eq!(set(SESSION_IDLE_ENV).idle, Duration::from_millis(7));
        assert_eq!(set(OPEN_BURST_ENV).open_burst, 7);
        assert_eq!(set(OPEN_PER_SECOND_ENV).open_per_second, 7);
        assert_eq!(SessionLimits::from_lookup(|_| Some("0".into())), defaults);
    }

    #[test]
    fn at_the_cap_the_least_recently_used_session_is_closed() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let sessions = BoundedSessions::new(SessionLimits {
                max_sessions: 2,
                idle: Duration::from_secs(60),
                ..SessionLimits::default()
            });
            let (a, _ta) = sessions.create_session().await.unwrap();
            let (b, _tb) = sessions.create_session().await.unwrap();
            // `a` is used again: `b` is now the least recently used.
            tokio::time::sleep(Duration::from_millis(2)).await;
            sessions.touch(&a);
            let (c, _tc) = sessions.create_session().await.unwrap();
            assert_eq!(sessions.live(), 2);
            // A flood of sessions nobody uses closes its own kind first:
            // `a`, in use, outlives every one of them.
            assert!(sessions.has_session(&a).await.unwrap());
            assert!(!sessions.has_session(&b).await.unwrap(), "evicted");
            assert!(sessions.has_session(&c).await.unwrap());
            // However many are made, the cap holds.
            let mut kept = Vec::new();
            for _ in 0..50 {
                kept.push(sessions.create_session().await.unwrap());
            }
            assert_eq!(sessions.live(), 2);
            assert!(sessions.has_session(&a).await.unwrap());
        });
    }
}
