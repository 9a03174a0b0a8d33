//! How often one peer may start something costly (an MCP session): a
//! token bucket per peer address, refilled at a steady rate up to a burst.
//!
//! Each `initialize` costs the MCP fixture a session (a worker, its
//! channels, and the eviction of an older one at the cap): a client that
//! sends them back to back spends the server's time on sessions nobody
//! uses. A deployment starts a handful per trial, so a budget of a few
//! dozen at once, refilled at a few dozen a second, is never felt by one,
//! while a flood is answered `429` before any work is done.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Peers remembered at most; past it, those whose budget is whole again
/// (they have not asked for a while) are forgotten.
const PEERS: usize = 1024;

/// A budget per peer: `burst` at once, refilled at `per_second`.
#[derive(Debug)]
pub(crate) struct RateLimit {
    per_second: f64,
    burst: f64,
    peers: Mutex<HashMap<IpAddr, Bucket>>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl RateLimit {
    /// `burst` at once per peer, refilled at `per_second`.
    pub(crate) fn new(per_second: u32, burst: u32) -> Self {
        Self {
            per_second: f64::from(per_second.max(1)),
            burst: f64::from(burst.max(1)),
            peers: Mutex::new(HashMap::new()),
        }
    }

    /// Whether `peer` may start one more now (and, if so, takes one from
    /// its budget); when not, how long until it may.
    pub(crate) fn take(&self, peer: IpAddr) -> Result<(), Duration> {
        self.take_at(peer, Instant::now())
    }

    pub(crate) fn take_at(&self, peer: IpAddr, now: Instant) -> Result<(), Duration> {
        let mut peers = self.peers.lock().unwrap_or_else(PoisonError::into_inner);
        if peers.len() >= PEERS && !peers.contains_key(&peer) {
            let (rate, burst) = (self.per_second, self.burst);
            peers.retain(|_, b| refilled(*b, now, rate, burst) < burst);
        }
        let bucket = peers.entry(peer).or_insert(Bucket {
            tokens: self.burst,
            at: now,
        });
        bucket.tokens = refilled(*bucket, now, self.per_second, self.burst);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64(
                (1.0 - bucket.tokens) / self.per_second,
            ))
        }
    }
}

fn refilled(bucket: Bucket, now: Instant, per_second: f64, burst: f64) -> f64 {
    let elapsed = now.saturating_duration_since(bucket.at).as_secs_f64();
    (bucket.tokens + elapsed * per_second).min(burst)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 1));
    const B: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 2));

    #[test]
    fn a_peer_spends_its_burst_then_waits_for_the_refill_and_others_are_untouched() {
        let limit = RateLimit::new(10, 3);
        let start = Instant::now();
        for _ in 0..3 {
            assert_eq!(limit.take_at(A, start), Ok(()));
        }
        let wait = limit.take_at(A, start).expect_err("the burst is spent");
        assert!(wait > Duration::from_millis(90) && wait <= Duration::from_millis(100));
        // Another peer has a budget of its own.
        assert_eq!(limit.take_at(B, start), Ok(()));
        // A tenth of a second refills one, never more than the burst.
        assert_eq!(limit.take_at(A, start + Duration::from_millis(100)), Ok(()));
        assert!(limit
            .take_at(A, start + Duration::from_millis(100))
            .is_err());
        let later = start + Duration::from_secs(60);
        for _ in 0..3 {
            assert_eq!(limit.take_at(A, later), Ok(()));
        }
        assert!(limit.take_at(A, later).is_err());
    }

    #[test]
    fn the_peers_remembered_stay_bounded() {
        let limit = RateLimit::new(1, 2);
        let start = Instant::now();
        for n in 0..(PEERS as u32 * 4) {
            let peer = IpAddr::V4(std::net::Ipv4Addr::from(0x7f00_0000 + n));
            let at = start + Duration::from_secs(u64::from(n) * 10);
            assert_eq!(limit.take_at(peer, at), Ok(()));
        }
        assert!(limit.peers.lock().unwrap().len() <= PEERS);
    }
}
