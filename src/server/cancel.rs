//! CancelRequests, throttled per peer address.
//!
//! A CancelRequest carries only a backend pid and its secret key (32 bits under protocol
//! 3.0), and PostgreSQL never answers one: the connection simply closes. So a client that
//! may send cancel requests as fast as it likes can guess keys blind. Each peer IP address
//! therefore has a token bucket of [`BURST`] attempts, refilled at [`REFILL_PER_SECOND`];
//! every request takes a token before its key is looked at, and a request whose key was
//! right gives it back. A request that finds its bucket empty is dropped unchecked, so
//! even a right key from that address does nothing until a token has come back. In every
//! case the connection closes without a reply, so a request never tells whether the pid
//! exists, whether the key was right, or whether it was throttled.
//!
//! Design decision: buckets are kept for at most [`PEERS_MAX`] addresses; when the table is
//! full, buckets that have refilled are forgotten, and if none has, a request from a new
//! address is dropped (cancellation from new addresses pauses while that many addresses
//! are each guessing, rather than memory growing without bound).

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Instant;

use parking_lot::Mutex;

/// Cancel requests a peer address may make at once before it is throttled.
pub(crate) const BURST: f64 = 10.0;
/// Tokens a peer address gets back per second, up to [`BURST`].
pub(crate) const REFILL_PER_SECOND: f64 = 1.0;
/// Peer addresses whose buckets are remembered at once.
pub(crate) const PEERS_MAX: usize = 10_000;

/// One address's attempts: `tokens` left as of `at`.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    /// Tokens at `now`, refilled since `at`.
    fn level(&self, now: Instant) -> f64 {
        let refill = now.saturating_duration_since(self.at).as_secs_f64() * REFILL_PER_SECOND;
        (self.tokens + refill).min(BURST)
    }
}

/// Per-address token buckets for CancelRequests (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct CancelThrottle {
    buckets: Mutex<HashMap<IpAddr, Bucket>>,
}

impl CancelThrottle {
    /// Take one attempt for `peer` at `now`; false when its bucket is empty (or the table
    /// is full of addresses still throttled), and the request must be dropped unchecked.
    pub(crate) fn take(&self, peer: IpAddr, now: Instant) -> bool {
        let mut buckets = self.buckets.lock();
        if !buckets.contains_key(&peer) && buckets.len() >= PEERS_MAX {
            buckets.retain(|_, b| b.level(now) < BURST);
            if buckets.len() >= PEERS_MAX {
                return false;
            }
        }
        let bucket = buckets.entry(peer).or_insert(Bucket {
            tokens: BURST,
            at: now,
        });
        let level = bucket.level(now);
        *bucket = Bucket {
            tokens: if level >= 1.0 { level - 1.0 } else { level },
            at: now,
        };
        level >= 1.0
    }

    /// Give back the attempt `peer` took for a request whose key was right.
    pub(crate) fn refund(&self, peer: IpAddr) {
        if let Some(b) = self.buckets.lock().get_mut(&peer) {
            b.tokens = (b.tokens + 1.0).min(BURST);
        }
    }

    /// How long until `peer` has an attempt again (zero if it has one now).
    #[cfg(test)]
    fn wait(&self, peer: IpAddr, now: Instant) -> std::time::Duration {
        let level = self
            .buckets
            .lock()
            .get(&peer)
            .map_or(BURST, |b| b.level(now));
        std::time::Duration::from_secs_f64(((1.0 - level) / REFILL_PER_SECOND).max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_burst_is_allowed_then_one_attempt_per_second() {
        let t = CancelThrottle::default();
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let now = Instant::now();
        for _ in 0..10 {
            assert!(t.take(a, now));
        }
        assert!(!t.take(a, now));
        assert!(!t.take(a, now + Duration::from_millis(500)));
        let half = now + Duration::from_millis(500);
        assert_eq!(t.wait(a, half), Duration::from_millis(500));
        // Another address is not affected.
        assert!(t.take(b, now));
        assert!(t.take(a, now + Duration::from_millis(1001)));
        assert!(!t.take(a, now + Duration::from_millis(1002)));
    }

    #[test]
    fn a_right_key_gives_its_attempt_back() {
        let t = CancelThrottle::default();
        let a: IpAddr = "::1".parse().unwrap();
        let now = Instant::now();
        for _ in 0..100 {
            assert!(t.take(a, now));
            t.refund(a);
        }
        assert_eq!(t.wait(a, now), Duration::ZERO);
    }

    #[test]
    fn the_table_is_bounded() {
        let t = CancelThrottle::default();
        let now = Instant::now();
        for i in 0..PEERS_MAX as u32 {
            let ip = IpAddr::from(std::net::Ipv4Addr::from(i));
            for _ in 0..10 {
                t.take(ip, now);
            }
        }
        let new: IpAddr = "255.255.255.255".parse().unwrap();
        assert!(!t.take(new, now), "full of throttled addresses");
        // Once they have refilled, they are forgotten and the new address gets a bucket.
        assert!(t.take(new, now + Duration::from_secs(10)));
        assert_eq!(t.buckets.lock().len(), 1);
    }
}
