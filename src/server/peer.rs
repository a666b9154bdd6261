//! Noticing that a client closed its end of the socket while nothing reads from it.
//!
//! A statement that streams a continuous query reads nothing from its socket, so a client
//! that goes away would only be noticed at the next write, which for a quiet query may
//! never come. [`watch`] registers the socket with one process-wide epoll instance for
//! `EPOLLRDHUP` (peer closed its write side), `EPOLLHUP` and `EPOLLERR`, never for input,
//! so protocol bytes stay the connection's to read; a single thread waits on it and flags
//! the connection's `watch` channel.
//!
//! Design decision: this replaces a watcher that worked on a duplicate of every socket's
//! descriptor, which made each connection cost two descriptors. The registration is
//! one-shot and is never removed by hand: closing the socket (its only descriptor) removes
//! it from the epoll set, so a descriptor number reused by a later connection can never be
//! confused with the old one (entries are keyed by a connection id, not a descriptor).

use std::collections::HashMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use parking_lot::Mutex;
use tokio::sync::watch;

struct Watcher {
    epoll: OwnedFd,
    senders: Mutex<HashMap<u64, watch::Sender<bool>>>,
    next_id: AtomicU64,
}

static WATCHER: OnceLock<Option<Watcher>> = OnceLock::new();

fn watcher() -> Option<&'static Watcher> {
    WATCHER
        .get_or_init(|| {
            // SAFETY: epoll_create1 has no memory-safety preconditions.
            let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
            if fd < 0 {
                tracing::warn!(
                    "epoll_create1 failed ({}): closed peers are noticed at the next write only",
                    std::io::Error::last_os_error()
                );
                return None;
            }
            // SAFETY: `fd` is a new descriptor that nothing else owns.
            let epoll = unsafe { OwnedFd::from_raw_fd(fd) };
            Some(Watcher {
                epoll,
                senders: Mutex::new(HashMap::new()),
                next_id: AtomicU64::new(1),
            })
        })
        .as_ref()
        .inspect(|_| start_thread())
}

fn start_thread() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let spawned = std::thread::Builder::new()
            .name("tcq-peer-watch".into())
            .spawn(run);
        if let Err(e) = spawned {
            tracing::warn!("cannot start the peer watcher: {e}");
        }
    });
}

/// The watcher thread: flag every connection whose peer hung up.
fn run() {
    let Some(w) = WATCHER.get().and_then(Option::as_ref) else {
        return;
    };
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 64];
    loop {
        // SAFETY: `events` has room for the 64 entries the kernel may write.
        let n = unsafe { libc::epoll_wait(w.epoll.as_raw_fd(), events.as_mut_ptr(), 64, -1) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            tracing::warn!("epoll_wait failed: {}", std::io::Error::last_os_error());
            return;
        }
        for ev in &events[..n as usize] {
            let id = ev.u64;
            if let Some(tx) = w.senders.lock().remove(&id) {
                tx.send_replace(true);
            }
        }
    }
}

/// A registered socket; dropping it forgets the connection (the descriptor's close removes
/// it from the epoll set).
pub(crate) struct PeerWatch {
    id: u64,
}

impl Drop for PeerWatch {
    fn drop(&mut self) {
        if let Some(w) = WATCHER.get().and_then(Option::as_ref) {
            w.senders.lock().remove(&self.id);
        }
    }
}

/// Watch `fd` (a connected socket) for its peer closing; the receiver turns `true` then.
/// `None` when the watcher is unavailable (the connection then notices at its next write).
pub(crate) fn watch(fd: RawFd) -> Option<(PeerWatch, watch::Receiver<bool>)> {
    let w = watcher()?;
    let id = w.next_id.fetch_add(1, Ordering::Relaxed);
    let (tx, rx) = watch::channel(false);
    w.senders.lock().insert(id, tx);
    let mut ev = libc::epoll_event {
        events: (libc::EPOLLRDHUP | libc::EPOLLONESHOT) as u32,
        u64: id,
    };
    // SAFETY: `fd` is an open socket owned by the caller; `ev` outlives the call.
    let r = unsafe { libc::epoll_ctl(w.epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) };
    if r < 0 {
        w.senders.lock().remove(&id);
        tracing::debug!("epoll_ctl failed: {}", std::io::Error::last_os_error());
        return None;
    }
    Some((PeerWatch { id }, rx))
}
