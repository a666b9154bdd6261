//! Coordination between sessions: advisory locks and LISTEN / NOTIFY, as PostgreSQL has them.
//!
//! Neither touches streams or queries; drivers and applications use them to coordinate
//! (asyncpg's pool resets a connection with `SELECT pg_advisory_unlock_all()` and
//! `UNLISTEN *`, job runners elect a leader with `pg_try_advisory_lock`).
//!
//! - [`Locks`]: the server's advisory lock table. A lock is named by one `bigint` key or by
//!   two `integer` keys (two separate key spaces, as in PostgreSQL), held exclusively or
//!   shared, and counted per holder (a session may take the same lock several times and
//!   must release it as many times). Waiting for a lock is a future, so a client's cancel
//!   request ends the wait with 57014 like any other statement.
//! - [`Inbox`]: the notifications waiting for one session. Each session has one, bounded by
//!   [`INBOX_NOTIFICATIONS_MAX`]; [`Notifier`] is the channel registry NOTIFY delivers
//!   through. Delivery is the server's business: between statements, and when the client
//!   is idle (see `server`).
//!
//! Design decision: the lock table is one mutex-protected map with a single wake-up signal
//! for all waiters. Advisory locks are taken a few times per connection, not per tuple, so
//! a waiter that retries after every release costs nothing that matters, and the code stays
//! obviously free of lost wake-ups.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::error::{Error, Result};

/// Notifications one session's inbox holds before NOTIFY to it fails with 54000.
pub(crate) const INBOX_NOTIFICATIONS_MAX: usize = 10_000;

/// Channels one session may listen on, and NOTIFYs one transaction may queue: past
/// either the statement fails with 54000, so no session grows the registry without bound.
pub(crate) const SESSION_CHANNELS_MAX: usize = 10_000;

/// Advisory locks (distinct session-level keys plus transaction-level holds) one session
/// may hold; past it taking another fails with 54000.
pub(crate) const SESSION_LOCKS_MAX: usize = 10_000;

/// Longest NOTIFY payload in bytes, as PostgreSQL's (8000 bytes, exclusive).
pub(crate) const PAYLOAD_BYTES_MAX: usize = 7999;

/// An advisory lock's name: `pg_advisory_lock(bigint)` and `pg_advisory_lock(int, int)`
/// are two key spaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum LockKey {
    /// One `bigint` key.
    One(i64),
    /// Two `integer` keys.
    Two(i32, i32),
}

/// Exclusive or shared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum LockMode {
    /// Conflicts with every other session's hold.
    Exclusive,
    /// Conflicts only with other sessions' exclusive holds.
    Shared,
}

#[derive(Default)]
struct Holders {
    exclusive: HashMap<i32, u32>,
    shared: HashMap<i32, u32>,
}

impl Holders {
    fn free_for(&self, pid: i32, mode: LockMode) -> bool {
        let others = |m: &HashMap<i32, u32>| m.keys().any(|&p| p != pid);
        match mode {
            LockMode::Exclusive => !others(&self.exclusive) && !others(&self.shared),
            LockMode::Shared => !others(&self.exclusive),
        }
    }

    fn of(&mut self, mode: LockMode) -> &mut HashMap<i32, u32> {
        match mode {
            LockMode::Exclusive => &mut self.exclusive,
            LockMode::Shared => &mut self.shared,
        }
    }
}

/// The server's advisory lock table.
#[derive(Default)]
pub(crate) struct Locks {
    table: Mutex<HashMap<LockKey, Holders>>,
    released: tokio::sync::Notify,
}

impl Locks {
    /// Take the lock for `pid` if no other session's hold conflicts; true if taken.
    pub(crate) fn try_lock(&self, pid: i32, key: LockKey, mode: LockMode) -> bool {
        let mut table = self.table.lock();
        let holders = table.entry(key).or_default();
        if !holders.free_for(pid, mode) {
            if holders.exclusive.is_empty() && holders.shared.is_empty() {
                table.remove(&key);
            }
            return false;
        }
        let held = holders.of(mode).entry(pid).or_insert(0);
        *held = held.saturating_add(1);
        true
    }

    /// Wait until the lock can be taken, then take it. Dropping the future gives up the wait.
    pub(crate) async fn lock(&self, pid: i32, key: LockKey, mode: LockMode) {
        loop {
            let released = self.released.notified();
            tokio::pin!(released);
            // Registered before the attempt, so a release between the two is not missed.
            released.as_mut().enable();
            if self.try_lock(pid, key, mode) {
                return;
            }
            released.await;
        }
    }

    /// Release one hold of `pid`; false if it held none.
    pub(crate) fn unlock(&self, pid: i32, key: LockKey, mode: LockMode) -> bool {
        let mut table = self.table.lock();
        let Some(holders) = table.get_mut(&key) else {
            return false;
        };
        let map = holders.of(mode);
        let Some(count) = map.get_mut(&pid) else {
            return false;
        };
        *count -= 1;
        if *count == 0 {
            map.remove(&pid);
        }
        if holders.exclusive.is_empty() && holders.shared.is_empty() {
            table.remove(&key);
        }
        drop(table);
        self.released.notify_waiters();
        true
    }

    #[cfg(test)]
    /// Number of holds of `key` by `pid` in `mode` (for tests and `pg_locks`-like views).
    pub(crate) fn holds(&self, pid: i32, key: LockKey, mode: LockMode) -> u32 {
        let mut table = self.table.lock();
        table
            .get_mut(&key)
            .and_then(|h| h.of(mode).get(&pid).copied())
            .unwrap_or(0)
    }
}

/// One notification: who sent it, on which channel, with what payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Notification {
    /// Backend id of the sending session.
    pub(crate) pid: i32,
    /// Channel name.
    pub(crate) channel: String,
    /// Payload (`""` when none was given).
    pub(crate) payload: String,
}

/// The notifications waiting for one session, bounded by [`INBOX_NOTIFICATIONS_MAX`].
#[derive(Default)]
pub(crate) struct Inbox {
    queue: Mutex<VecDeque<Notification>>,
    ready: tokio::sync::Notify,
    closed: AtomicBool,
}

impl Inbox {
    /// Take every waiting notification, oldest first.
    pub(crate) fn take_all(&self) -> Vec<Notification> {
        self.queue.lock().drain(..).collect()
    }

    /// True if notifications are waiting.
    pub(crate) fn has_pending(&self) -> bool {
        !self.queue.lock().is_empty()
    }

    /// Wait until a notification arrives or the session ends; false once it has ended.
    pub(crate) async fn wait(&self) -> bool {
        if self.closed.load(Ordering::Acquire) {
            return false;
        }
        self.ready.notified().await;
        !self.closed.load(Ordering::Acquire)
    }

    fn push(&self, n: Notification) {
        self.queue.lock().push_back(n);
        self.ready.notify_one();
    }

    fn room(&self) -> usize {
        INBOX_NOTIFICATIONS_MAX.saturating_sub(self.queue.lock().len())
    }

    /// Mark the session ended: its waiter wakes and stops.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.ready.notify_one();
    }
}

/// The channel registry: which sessions listen on which channel.
#[derive(Default)]
pub(crate) struct Notifier {
    channels: Mutex<HashMap<String, HashMap<i32, Arc<Inbox>>>>,
}

impl Notifier {
    /// Start delivering `channel` to `inbox` (session `pid`).
    pub(crate) fn listen(&self, pid: i32, channel: &str, inbox: &Arc<Inbox>) {
        self.channels
            .lock()
            .entry(channel.to_string())
            .or_default()
            .insert(pid, inbox.clone());
    }

    /// Stop delivering `channel` to session `pid`.
    pub(crate) fn unlisten(&self, pid: i32, channel: &str) {
        let mut channels = self.channels.lock();
        if let Some(listeners) = channels.get_mut(channel) {
            listeners.remove(&pid);
            if listeners.is_empty() {
                channels.remove(channel);
            }
        }
    }

    /// Deliver a committed transaction's notifications to every listener, all or none:
    /// if one listener's inbox lacks room, nothing is delivered and the error is 54000.
    pub(crate) fn deliver(&self, batch: &[Notification]) -> Result<()> {
        let channels = self.channels.lock();
        let mut wanted: HashMap<i32, (usize, &Arc<Inbox>)> = HashMap::new();
        for n in batch {
            for (&pid, inbox) in channels.get(&n.channel).into_iter().flatten() {
                wanted.entry(pid).or_insert((0, inbox)).0 += 1;
            }
        }
        if wanted.values().any(|(n, inbox)| *n > inbox.room()) {
            return Err(Error::ProgramLimitExceeded(format!(
                "too many notifications in the NOTIFY queue: a listener already holds {INBOX_NOTIFICATIONS_MAX} undelivered notifications"
            )));
        }
        for n in batch {
            for inbox in channels
                .get(&n.channel)
                .into_iter()
                .flat_map(|l| l.values())
            {
                inbox.push(n.clone());
            }
        }
        Ok(())
    }
}

/// Check a channel name and payload as PostgreSQL does. Errors: 22023.
pub(crate) fn check_notify(channel: &str, payload: &str) -> Result<()> {
    if channel.is_empty() {
        return Err(Error::InvalidParameterValue(
            "channel name cannot be empty".into(),
        ));
    }
    if channel.len() >= 64 {
        return Err(Error::InvalidParameterValue("channel name too long".into()));
    }
    if payload.len() > PAYLOAD_BYTES_MAX {
        return Err(Error::InvalidParameterValue(
            "payload string too long".into(),
        ));
    }
    Ok(())
}

/// Fold a transaction's notifications as PostgreSQL does: a repeat of an earlier
/// (channel, payload) pair in the same transaction is sent once.
pub(crate) fn fold(batch: Vec<Notification>) -> Vec<Notification> {
    let mut seen = HashSet::new();
    batch
        .into_iter()
        .filter(|n| seen.insert((n.channel.clone(), n.payload.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_and_shared_conflicts() {
        let locks = Locks::default();
        let k = LockKey::One(7);
        assert!(locks.try_lock(1, k, LockMode::Exclusive));
        assert!(locks.try_lock(1, k, LockMode::Exclusive), "re-entrant");
        assert!(!locks.try_lock(2, k, LockMode::Shared));
        assert!(!locks.try_lock(2, LockKey::One(7), LockMode::Exclusive));
        assert!(
            locks.try_lock(2, LockKey::Two(0, 7), LockMode::Exclusive),
            "other space"
        );
        assert!(locks.unlock(1, k, LockMode::Exclusive));
        assert!(!locks.try_lock(2, k, LockMode::Shared), "still held once");
        assert!(locks.unlock(1, k, LockMode::Exclusive));
        assert!(
            !locks.unlock(1, k, LockMode::Exclusive),
            "not held any more"
        );
        assert!(locks.try_lock(2, k, LockMode::Shared));
        assert!(locks.try_lock(3, k, LockMode::Shared));
        assert!(!locks.try_lock(1, k, LockMode::Exclusive));
        assert_eq!(locks.holds(3, k, LockMode::Shared), 1);
    }

    #[test]
    fn delivery_is_all_or_nothing_and_folds_repeats() {
        let notifier = Notifier::default();
        let inbox = Arc::new(Inbox::default());
        notifier.listen(5, "jobs", &inbox);
        let n = |p: &str| Notification {
            pid: 9,
            channel: "jobs".into(),
            payload: p.into(),
        };
        let batch = fold(vec![n("a"), n("b"), n("a")]);
        notifier.deliver(&batch).unwrap();
        assert_eq!(inbox.take_all(), vec![n("a"), n("b")]);
        let too_many = vec![n("x"); INBOX_NOTIFICATIONS_MAX + 1];
        assert!(matches!(
            notifier.deliver(&too_many),
            Err(Error::ProgramLimitExceeded(_))
        ));
        assert!(!inbox.has_pending());
        notifier.unlisten(5, "jobs");
        notifier.deliver(&[n("z")]).unwrap();
        assert!(!inbox.has_pending());
    }
}
