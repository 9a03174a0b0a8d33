//! Who gets a slot: every open connection of one server, counted in total
//! and per peer address; at a limit, the connection that has kept the
//! server waiting longest is shed before a new one is refused.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::watch::Connection;
use super::ServerPolicy;

/// The open connections of one server.
#[derive(Debug)]
pub(crate) struct Admission {
    policy: ServerPolicy,
    open: Mutex<HashMap<u64, Arc<Connection>>>,
    next: AtomicU64,
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
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.admission.lock().remove(&self.connection.id);
    }
}

impl Admission {
    pub(crate) fn new(policy: ServerPolicy) -> Arc<Self> {
        Arc::new(Self {
            policy: policy.clamped(),
            open: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Connection>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many connections hold a slot.
    #[cfg(test)]
    pub(crate) fn open(&self) -> usize {
        self.lock().len()
    }

    /// A slot for a new connection from `peer`: free, or made by shedding
    /// the connection (of the same peer, when the peer is at its limit)
    /// that has waited on its client longest. `None` when every candidate
    /// is being answered: the new connection is refused.
    pub(crate) fn admit(self: &Arc<Self>, peer: IpAddr) -> Option<Admitted> {
        let mut open = self.lock();
        let from_peer = open.values().filter(|c| c.peer == peer).count();
        if from_peer >= self.policy.max_per_peer {
            shed_longest_waiting(&mut open, Some(peer))?;
        } else if open.len() >= self.policy.max_connections {
            shed_longest_waiting(&mut open, None)?;
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let connection = Arc::new(Connection::new(id, peer));
        open.insert(id, Arc::clone(&connection));
        Some(Admitted {
            connection,
            admission: Arc::clone(self),
        })
    }
}

/// Sheds the connection (of `peer`, if given) waiting on its client
/// longest (a kept-alive one lingering after its answer first), freeing
/// its slot now; `None` when there is none.
fn shed_longest_waiting(
    open: &mut HashMap<u64, Arc<Connection>>,
    peer: Option<IpAddr>,
) -> Option<()> {
    let (id, _) = open
        .iter()
        .filter(|(_, c)| peer.is_none_or(|p| c.peer == p))
        .filter_map(|(id, c)| c.waiting_since().map(|since| (*id, since)))
        .min_by_key(|(id, rank)| (*rank, *id))?;
    let connection = open.remove(&id)?;
    connection.shed();
    Some(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::watch::Phase;
    use super::*;

    fn admission(total: usize, per_peer: usize) -> Arc<Admission> {
        Admission::new(ServerPolicy {
            max_connections: total,
            max_per_peer: per_peer,
            ..ServerPolicy::defaults(1024)
        })
    }

    const A: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 1));
    const B: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 2));

    #[test]
    fn at_the_total_the_longest_waiting_is_shed_and_an_answered_one_never() {
        let admission = admission(3, 3);
        let oldest = admission.admit(A).unwrap();
        std::thread::sleep(Duration::from_millis(2));
        let answered = admission.admit(B).unwrap();
        answered.connection().enter(Phase::Answering);
        let newer = admission.admit(B).unwrap();
        // Full: the newcomer takes the slot of the one waiting longest.
        let newcomer = admission.admit(B).unwrap();
        assert_eq!(admission.open(), 3);
        assert!(
            !admission.lock().contains_key(&oldest.connection().id),
            "the longest waiting lost its slot"
        );
        assert!(admission.lock().contains_key(&answered.connection().id));
        // Now every slot is answered: the next is refused, none is shed.
        newer.connection().enter(Phase::Working);
        newcomer.connection().enter(Phase::Answering);
        assert!(admission.admit(A).is_none());
        assert_eq!(admission.open(), 3);
        // A slot given back is free again.
        drop(newer);
        assert!(admission.admit(A).is_some());
    }

    #[test]
    fn one_peer_is_held_below_the_total_and_sheds_its_own() {
        let admission = admission(4, 2);
        let first = admission.admit(A).unwrap();
        std::thread::sleep(Duration::from_millis(2));
        let _second = admission.admit(A).unwrap();
        let _other = admission.admit(B).unwrap();
        // A at its limit: its own longest waiting goes, B's stays.
        let _third = admission.admit(A).unwrap();
        let open: Vec<IpAddr> = admission.lock().values().map(|c| c.peer).collect();
        assert_eq!(open.iter().filter(|p| **p == A).count(), 2);
        assert_eq!(open.iter().filter(|p| **p == B).count(), 1);
        assert!(!admission.lock().contains_key(&first.connection().id));
    }
}
