//! Who gets a slot: every open connection of one server, counted in total
//! and per peer address. At a limit, a connection the server owes nothing
//! (or whose client stalled) is shed to make room; when none can be, the
//! newcomer waits a moment for a slot, then is refused.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;

use super::watch::{now, Connection};
use super::ServerPolicy;

/// The open connections of one server.
#[derive(Debug)]
pub(crate) struct Admission {
    policy: ServerPolicy,
    open: Mutex<Open>,
    next: AtomicU64,
    /// Signalled whenever a slot is given back.
    freed: Notify,
    /// How many newcomers wait for a slot.
    waiting: AtomicUsize,
    /// Set when a newcomer waited [`ServerPolicy::admission_wait`] in
    /// vain: until a slot is given back, newcomers are refused at once
    /// (one wait at a time, not one per newcomer).
    saturated: AtomicBool,
}

#[derive(Debug, Default)]
struct Open {
    connections: HashMap<u64, Arc<Connection>>,
    per_peer: HashMap<IpAddr, usize>,
}

impl Open {
    fn remove(&mut self, id: u64) -> Option<Arc<Connection>> {
        let connection = self.connections.remove(&id)?;
        if let Some(count) = self.per_peer.get_mut(&connection.peer) {
            *count -= 1;
            if *count == 0 {
                self.per_peer.remove(&connection.peer);
            }
        }
        Some(connection)
    }
}

/// A connection's slot, given back when dropped.
#[derive(Debug)]
pub(crate) struct Admitted {
    connection: Arc<Connection>,
    admission: Arc<Admission>,
}

impl Admitted {
    /// The connection this slot holds.
    pub(crate) fn connection(&self) -> &Arc<Connection> {
        &self.connection
    }

    /// Whether slots are wanted: the table (or this connection's peer) is
    /// full, or a newcomer waits. A connection answered then is closed
    /// after its answer rather than kept for its client's next request,
    /// which then queues for a slot like everyone else's.
    pub(crate) fn pressed(&self) -> bool {
        let admission = &self.admission;
        if admission.waiting.load(Ordering::Acquire) > 0
            || admission.saturated.load(Ordering::Acquire)
        {
            return true;
        }
        let open = admission.lock();
        open.connections.len() >= admission.policy.max_connections
            || open
                .per_peer
                .get(&self.connection.peer)
                .copied()
                .unwrap_or(0)
                >= admission.policy.max_per_peer
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.admission.lock().remove(self.connection.id);
        self.admission.saturated.store(false, Ordering::Release);
        self.admission.freed.notify_one();
    }
}

/// How often a newcomer waiting for a slot looks again (connections also
/// become sheddable by the clock: a write stalls, a stream goes quiet).
const RETRY: Duration = Duration::from_millis(5);

impl Admission {
    pub(crate) fn new(policy: ServerPolicy) -> Arc<Self> {
        Arc::new(Self {
            policy: policy.clamped(),
            open: Mutex::new(Open::default()),
            next: AtomicU64::new(1),
            freed: Notify::new(),
            waiting: AtomicUsize::new(0),
            saturated: AtomicBool::new(false),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many connections hold a slot.
    #[cfg(test)]
    pub(crate) fn open(&self) -> usize {
        self.lock().connections.len()
    }

    /// A slot for a new connection from `peer`, now: free, or made by
    /// shedding the first in line (see [`Connection::shed_rank`]; of the
    /// same peer, when the peer is at its limit). `None` when no
    /// connection can be shed.
    pub(crate) fn admit(self: &Arc<Self>, peer: IpAddr) -> Option<Admitted> {
        let mut open = self.lock();
        let from_peer = open.per_peer.get(&peer).copied().unwrap_or(0);
        if from_peer >= self.policy.max_per_peer {
            shed_first_in_line(&mut open, Some(peer))?;
        } else if open.connections.len() >= self.policy.max_connections {
            shed_first_in_line(&mut open, None)?;
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let connection = Arc::new(Connection::new(id, peer));
        open.connections.insert(id, Arc::clone(&connection));
        *open.per_peer.entry(peer).or_default() += 1;
        Some(Admitted {
            connection,
            admission: Arc::clone(self),
        })
    }

    /// A slot for a new connection from `peer`, waiting at most
    /// [`ServerPolicy::admission_wait`] for one to be given back or become
    /// sheddable (every slot being answered); `None` then: the newcomer is
    /// refused. While one wait has run out and no slot was given back
    /// since, newcomers are refused at once, so an overloaded server
    /// refuses quickly rather than one newcomer per wait.
    pub(crate) async fn admit_waiting(self: &Arc<Self>, peer: IpAddr) -> Option<Admitted> {
        if let Some(admitted) = self.admit(peer) {
            return Some(admitted);
        }
        if self.saturated.load(Ordering::Acquire) {
            // A connection accepted a moment ago may not have been read
            // from yet; one turn of the runtime tells idle from busy.
            tokio::task::yield_now().await;
            return self.admit(peer);
        }
        let _waiting = Waiting::count(&self.waiting);
        let waited = async {
            tokio::task::yield_now().await;
            loop {
                if let Some(admitted) = self.admit(peer) {
                    return admitted;
                }
                tokio::select! {
                    () = self.freed.notified() => {}
                    () = tokio::time::sleep(RETRY) => {}
                }
            }
        };
        match tokio::time::timeout(self.policy.admission_wait, waited).await {
            Ok(admitted) => Some(admitted),
            Err(_) => {
                self.saturated.store(true, Ordering::Release);
                None
            }
        }
    }
}

/// One newcomer counted as waiting for a slot while it lives.
struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    fn count(waiting: &'a AtomicUsize) -> Self {
        waiting.fetch_add(1, Ordering::AcqRel);
        Self(waiting)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Sheds the first connection in line (of `peer`, if given), freeing its
/// slot now; `None` when none can be shed.
fn shed_first_in_line(open: &mut Open, peer: Option<IpAddr>) -> Option<()> {
    let at = now();
    let (id, _) = open
        .connections
        .iter()
        .filter(|(_, c)| peer.is_none_or(|p| c.peer == p))
        .filter_map(|(id, c)| c.shed_rank(at).map(|rank| (*id, rank)))
        .min_by_key(|(id, rank)| (*rank, *id))?;
    let connection = open.remove(id)?;
    connection.shed();
    Some(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::watch::{Phase, FRESH};
    use super::*;

    fn admission(total: usize, per_peer: usize) -> Arc<Admission> {
        Admission::new(ServerPolicy {
            max_connections: total,
            max_per_peer: per_peer,
            admission_wait: Duration::from_millis(50),
            ..ServerPolicy::defaults(1024)
        })
    }

    const A: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 1));
    const B: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 2));

    fn holds(admission: &Admission, admitted: &Admitted) -> bool {
        admission
            .lock()
            .connections
            .contains_key(&admitted.connection().id)
    }

    #[test]
    fn at_the_total_the_idle_is_shed_and_one_being_answered_never() {
        let admission = admission(3, 3);
        let idle = admission.admit(A).unwrap();
        idle.connection().looked();
        std::thread::sleep(FRESH + Duration::from_millis(2));
        let answered = admission.admit(B).unwrap();
        answered.connection().enter(Phase::Answering);
        let fresh = admission.admit(B).unwrap();
        // Full: the newcomer takes the idle one's slot; the one just
        // accepted, not yet read from, is kept (its request may be in the
        // kernel).
        let newcomer = admission.admit(B).unwrap();
        assert_eq!(admission.open(), 3);
        assert!(!holds(&admission, &idle), "the idle one lost its slot");
        assert!(holds(&admission, &answered));
        assert!(holds(&admission, &fresh));
        // Now no slot can be made: the next is refused, none is shed.
        newcomer.connection().enter(Phase::Working);
        assert!(admission.admit(A).is_none());
        assert_eq!(admission.open(), 3);
        // A slot given back is free again.
        drop(fresh);
        assert!(admission.admit(A).is_some());
    }

    #[test]
    fn the_connection_waiting_on_its_client_longest_goes_first() {
        let admission = admission(3, 3);
        let trickling = admission.admit(A).unwrap();
        trickling.connection().enter(Phase::Body);
        std::thread::sleep(Duration::from_millis(2));
        let idle = admission.admit(A).unwrap();
        idle.connection().looked();
        std::thread::sleep(FRESH + Duration::from_millis(2));
        let later = admission.admit(A).unwrap();
        later.connection().enter(Phase::Body);
        let _first = admission.admit(A).unwrap();
        assert!(!holds(&admission, &trickling), "the longest waiting first");
        let _second = admission.admit(A).unwrap();
        assert!(!holds(&admission, &idle), "then the next longest");
        assert!(holds(&admission, &later));
    }

    #[test]
    fn one_peer_is_held_below_the_total_and_sheds_its_own() {
        let admission = admission(4, 2);
        let first = admission.admit(A).unwrap();
        first.connection().looked();
        std::thread::sleep(Duration::from_millis(2));
        let second = admission.admit(A).unwrap();
        second.connection().looked();
        let other = admission.admit(B).unwrap();
        other.connection().looked();
        std::thread::sleep(FRESH);
        // A at its limit: its own first in line goes, B's stays.
        let _third = admission.admit(A).unwrap();
        let open: Vec<IpAddr> = admission
            .lock()
            .connections
            .values()
            .map(|c| c.peer)
            .collect();
        assert_eq!(open.iter().filter(|p| **p == A).count(), 2);
        assert_eq!(open.iter().filter(|p| **p == B).count(), 1);
        assert!(!holds(&admission, &first));
        assert_eq!(admission.lock().per_peer.get(&A), Some(&2));
    }

    #[test]
    fn a_newcomer_waits_for_a_slot_then_an_overloaded_server_refuses_at_once() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let admission = admission(1, 1);
            let busy = admission.admit(A).unwrap();
            busy.connection().enter(Phase::Working);
            // Given back while the newcomer waits: it gets the slot.
            let giving_back = tokio::spawn(async move {
                tokio::task::yield_now().await;
                drop(busy);
            });
            let waited = admission.admit_waiting(A).await.expect("the freed slot");
            giving_back.await.unwrap();
            waited.connection().enter(Phase::Working);
            // Nothing given back: refused after the wait, and the next at
            // once (the flag says so) until a slot is given back.
            assert!(admission.admit_waiting(A).await.is_none());
            assert!(admission.saturated.load(Ordering::Acquire));
            assert!(admission.admit_waiting(A).await.is_none());
            drop(waited);
            assert!(!admission.saturated.load(Ordering::Acquire));
            assert!(admission.admit_waiting(A).await.is_some());
        });
    }
}
