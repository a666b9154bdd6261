//! A continuous query's output queue: bounded in bytes, and never waited on.
//!
//! The stream's ingest task pushes each slide event's rows with [`OutSender::push`], which
//! never blocks: when the event would take the queue past its byte bound the push fails
//! with [`Full`] (the caller then ends that query with 54000), or, for a subscriber that
//! chose [`Overflow::Skip`], the event is dropped and counted, and the reader is told how
//! many rows it missed in a NOTICE before the next event it gets. Either way ingest and the
//! stream's other subscribers go on at once: one reader that stops reading can neither
//! stall a stream nor grow the server's memory past its bound.
//!
//! A reader that keeps reading is waited for, not cut off: [`deliver`] holds a full queue's
//! next event until the reader takes an entry, and only a reader that takes nothing for
//! `output_stall_timeout` (1 s by default) while there is something to take loses its
//! query. That time is counted from the reader's last take, or from when its queue stopped
//! being empty if that came later, not from when the queue filled: a reader that stopped
//! reading long before its queue filled is cut off at once, without holding ingest back.
//! A burst larger than the queue (an all-or-nothing COPY of three million flights closes
//! its windows at once) slows ingest to the pace of its readers instead of failing them.
//!
//! Design decision: the bound counts bytes, not events, because one slide event can be one
//! row or a million; an event larger than the whole bound is still accepted into an empty
//! queue, so a query whose every event is large still runs (its size is bounded by
//! `groups_max` and `live_tuples_max`).

use std::collections::VecDeque;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::Notify;

use super::memory::{MemoryBudget, MemoryKind, Reservation};
use crate::error::Result;
use crate::exec::Event;
use crate::types::Value;

/// What a full queue does to its subscriber.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Overflow {
    /// End the query with 54000 (the default).
    #[default]
    Error,
    /// Drop the events that do not fit and tell the reader how many rows it missed.
    Skip,
    /// Wait for room as long as it takes (backpressure: ingest into the stream waits), and
    /// end each step's events with an empty [`Event::Rows`], which says that every slide
    /// event up to the query's current time is complete. For the queries of derived
    /// streams and sinks, whose reader is the server itself; a session cannot choose it.
    Block,
}

/// The push did not fit in a queue bounded at `bytes_max` bytes.
#[derive(Debug)]
pub(crate) struct Full {
    pub(crate) bytes_max: usize,
}

/// A queued item: an event with its size, or a run of skipped events at that place.
enum Entry {
    Event(Result<Event>, usize),
    Skipped { rows: u64, events: u64 },
}

struct Inner {
    entries: VecDeque<Entry>,
    /// Since when the reader has had entries to take and taken none (`None`: the queue
    /// is empty).
    waiting_since: Option<tokio::time::Instant>,
    /// The bytes of the queued events, as counted by the global memory budget (never
    /// refused by it).
    charged: Reservation,
    /// The sender is gone: the reader drains what is queued, then ends.
    closed: bool,
}

struct Shared {
    inner: Mutex<Inner>,
    ready: Notify,
    /// Signalled whenever the reader takes an entry: a full queue's sender waits on it.
    drained: Notify,
}

/// The ingest side of an output queue. Dropping it ends the query for its reader.
pub(crate) struct OutSender {
    shared: Arc<Shared>,
    bytes_max: usize,
    overflow: Overflow,
}

/// The reading side of an output queue.
pub(crate) struct OutReceiver {
    shared: Arc<Shared>,
    bytes_max: usize,
}

/// A queue bounded at `bytes_max` bytes of queued events, whose bytes `budget` counts.
pub(crate) fn output_queue(
    bytes_max: usize,
    overflow: Overflow,
    budget: &Arc<MemoryBudget>,
) -> (OutSender, OutReceiver) {
    let shared = Arc::new(Shared {
        inner: Mutex::new(Inner {
            entries: VecDeque::new(),
            waiting_since: None,
            charged: Reservation::new(budget, MemoryKind::OutputQueues),
            closed: false,
        }),
        ready: Notify::new(),
        drained: Notify::new(),
    });
    let tx = OutSender {
        shared: shared.clone(),
        bytes_max,
        overflow,
    };
    (tx, OutReceiver { shared, bytes_max })
}

/// Approximate heap bytes an event holds (values inline, text beyond its inline size).
pub(crate) fn event_bytes(ev: &Result<Event>) -> usize {
    match ev {
        Ok(ev) => event_heap_bytes(ev),
        Err(_) => 64,
    }
}

/// Approximate heap bytes of one event (values inline, text beyond its inline size).
pub(crate) fn event_heap_bytes(ev: &Event) -> usize {
    match ev {
        Event::Rows(rows) => rows_bytes(rows),
        Event::Block(b) => b.heap_bytes(),
        Event::Notice(s) => s.len(),
    }
}

/// Approximate heap bytes of rows (values inline, text beyond its inline size).
pub(crate) fn rows_bytes(rows: &[Vec<Value>]) -> usize {
    const VEC: usize = std::mem::size_of::<Vec<Value>>();
    rows.iter()
        .map(|r| {
            VEC + r.capacity() * std::mem::size_of::<Value>()
                + r.iter()
                    .map(crate::exec::block::value_heap_bytes)
                    .sum::<usize>()
        })
        .sum()
}

impl OutSender {
    /// Queue the end-of-step marker of an [`Overflow::Block`] queue (an empty
    /// [`Event::Rows`]), whatever the queue holds: it is a few bytes.
    fn push_marker(&self) {
        let mut inner = self.shared.inner.lock();
        inner
            .entries
            .push_back(Entry::Event(Ok(Event::Rows(Vec::new())), 0));
        inner
            .waiting_since
            .get_or_insert_with(tokio::time::Instant::now);
        drop(inner);
        self.shared.ready.notify_one();
    }

    /// Queue `ev` without waiting. `Err(Full)` when it does not fit and the subscriber did
    /// not choose to skip; a skipped event is `Ok` (it was dealt with).
    pub(crate) fn push(&self, ev: Result<Event>) -> std::result::Result<(), Full> {
        self.try_push(ev).map_err(|(full, _)| full)
    }

    /// As [`OutSender::push`], but a full queue hands the event back for another try.
    /// The event comes back as it went in (a result block is about 140 bytes inline):
    /// boxing it would cost an allocation per retry for a lint's size limit.
    #[allow(clippy::result_large_err)]
    fn try_push(&self, ev: Result<Event>) -> std::result::Result<(), (Full, Result<Event>)> {
        let size = event_bytes(&ev);
        let mut inner = self.shared.inner.lock();
        let queued = inner.charged.bytes();
        if queued > 0 && queued + size > self.bytes_max {
            match (self.overflow, &ev) {
                (Overflow::Error | Overflow::Block, _) => {
                    return Err((
                        Full {
                            bytes_max: self.bytes_max,
                        },
                        ev,
                    ))
                }
                (Overflow::Skip, Ok(e @ (Event::Rows(_) | Event::Block(_)))) => {
                    // Skipped events merge into one entry where they would have been.
                    let n = e.row_count() as u64;
                    let k = match e {
                        Event::Block(b) => b.slide_events() as u64,
                        _ => 1,
                    };
                    match inner.entries.back_mut() {
                        Some(Entry::Skipped { rows, events }) => {
                            *rows += n;
                            *events += k;
                        }
                        _ => inner
                            .entries
                            .push_back(Entry::Skipped { rows: n, events: k }),
                    }
                    inner
                        .waiting_since
                        .get_or_insert_with(tokio::time::Instant::now);
                    return Ok(());
                }
                // A NOTICE is small and says something rows do not: it is queued anyway.
                (Overflow::Skip, _) => {}
            }
        }
        let bytes = inner.charged.bytes() + size;
        inner.charged.force_resize(bytes);
        inner.entries.push_back(Entry::Event(ev, size));
        inner
            .waiting_since
            .get_or_insert_with(tokio::time::Instant::now);
        drop(inner);
        self.shared.ready.notify_one();
        Ok(())
    }
}

/// Queue `events` for the reader of the queue in `slot`, in order. A full queue waits while
/// its reader keeps taking entries, so a reader that reads as fast as it can is never cut
/// off by a burst (an all-or-nothing COPY closes thousands of instances at once); a reader
/// that has taken nothing for `stall` while it had entries to take (counted from before the
/// queue filled, see the module docs) gets `Some(Full)`, and its query is ended by the
/// caller.
/// `None` also when the query was closed meanwhile (its subscription went away). A queue
/// of [`Overflow::Block`] waits for its reader without limit and ends a non-empty step with
/// a marker (see there).
pub(crate) async fn deliver(
    slot: &Mutex<Option<OutSender>>,
    events: Vec<Event>,
    stall: std::time::Duration,
) -> Option<Full> {
    let (shared, blocks) = {
        let tx = slot.lock();
        let tx = tx.as_ref()?;
        (tx.shared.clone(), tx.overflow == Overflow::Block)
    };
    let marked = blocks && !events.is_empty();
    for ev in events {
        let mut ev = Ok(ev);
        loop {
            // Registered before the try, so an entry taken in between is not missed.
            let progress = shared.drained.notified();
            tokio::pin!(progress);
            progress.as_mut().enable();
            let tried = match slot.lock().as_ref() {
                None => return None,
                Some(tx) => tx.try_push(ev),
            };
            match tried {
                Ok(()) => break,
                Err((_, back)) if blocks => {
                    progress.await;
                    ev = back;
                }
                Err((full, back)) => {
                    let waited = shared
                        .inner
                        .lock()
                        .waiting_since
                        .map_or(std::time::Duration::ZERO, |t| t.elapsed());
                    let left = stall.saturating_sub(waited);
                    if left.is_zero() || tokio::time::timeout(left, progress).await.is_err() {
                        return Some(full);
                    }
                    ev = back;
                }
            }
        }
    }
    if marked {
        if let Some(tx) = slot.lock().as_ref() {
            tx.push_marker();
        }
    }
    None
}

impl Drop for OutSender {
    fn drop(&mut self) {
        self.shared.inner.lock().closed = true;
        self.shared.ready.notify_one();
        // A `deliver` waiting for room finds the query closed at once.
        self.shared.drained.notify_waiters();
    }
}

/// What [`OutReceiver::try_recv`] found.
pub(crate) enum TryRecv {
    /// An event.
    Event(Result<Event>),
    /// Nothing queued now.
    Empty,
    /// Nothing queued and the sender is gone.
    Closed,
}

impl OutReceiver {
    /// The next event without waiting.
    pub(crate) fn try_recv(&self) -> TryRecv {
        let mut inner = self.shared.inner.lock();
        let entry = inner.entries.pop_front();
        if entry.is_some() {
            inner.waiting_since = (!inner.entries.is_empty()).then(tokio::time::Instant::now);
            self.shared.drained.notify_waiters();
        }
        match entry {
            Some(Entry::Event(ev, size)) => {
                let bytes = inner.charged.bytes() - size;
                inner.charged.force_resize(bytes);
                TryRecv::Event(ev)
            }
            Some(Entry::Skipped { rows, events }) => TryRecv::Event(Ok(Event::Notice(format!(
                "skipped {rows} rows of {events} slide events: the client fell behind and its output queue reached output_queue_bytes ({} bytes)",
                self.bytes_max
            )))),
            None if inner.closed => TryRecv::Closed,
            None => TryRecv::Empty,
        }
    }

    /// The next event, waiting for one; `None` once the sender is gone and the queue is
    /// drained. Cancel-safe: an event is only taken by a call that returns it.
    pub(crate) async fn recv(&mut self) -> Option<Result<Event>> {
        loop {
            let ready = self.shared.ready.notified();
            match self.try_recv() {
                TryRecv::Event(ev) => return Some(ev),
                TryRecv::Closed => return None,
                TryRecv::Empty => ready.await,
            }
        }
    }

    /// Bytes queued now.
    #[cfg(test)]
    pub(crate) fn queued_bytes(&self) -> usize {
        self.shared.inner.lock().charged.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(n: usize) -> Result<Event> {
        Ok(Event::Rows(
            (0..n).map(|i| vec![Value::Int8(i as i64)]).collect(),
        ))
    }

    #[test]
    fn a_full_queue_refuses_without_waiting_and_drains_in_order() {
        let one = event_bytes(&rows(10));
        let budget = MemoryBudget::new(usize::MAX);
        let (tx, rx) = output_queue(one * 3, Overflow::Error, &budget);
        for _ in 0..3 {
            tx.push(rows(10)).unwrap();
        }
        assert_eq!(tx.push(rows(10)).unwrap_err().bytes_max, one * 3);
        assert_eq!(rx.queued_bytes(), one * 3);
        assert_eq!(budget.used_by(MemoryKind::OutputQueues), one * 3);
        drop(tx);
        let mut n = 0;
        while let TryRecv::Event(ev) = rx.try_recv() {
            assert!(matches!(ev, Ok(Event::Rows(r)) if r.len() == 10));
            n += 1;
        }
        assert_eq!(n, 3);
        assert!(matches!(rx.try_recv(), TryRecv::Closed));
        assert_eq!(rx.queued_bytes(), 0);
        assert_eq!(budget.used(), 0);
    }

    #[test]
    fn an_event_larger_than_the_bound_fits_an_empty_queue() {
        let budget = MemoryBudget::new(usize::MAX);
        let (tx, rx) = output_queue(16, Overflow::Error, &budget);
        tx.push(rows(1000)).unwrap();
        assert!(tx.push(rows(1)).is_err());
        assert!(matches!(rx.try_recv(), TryRecv::Event(Ok(Event::Rows(r))) if r.len() == 1000));
        tx.push(rows(1)).unwrap();
    }

    /// A reader that has had entries to take for longer than the stall timeout when its
    /// queue fills is cut off at once; one whose queue just stopped being empty (a burst)
    /// is waited for.
    #[tokio::test(start_paused = true)]
    async fn the_stall_counts_from_the_readers_last_chance_to_read() {
        let budget = MemoryBudget::new(usize::MAX);
        let one = event_bytes(&rows(10));
        let stall = std::time::Duration::from_secs(1);
        let (tx, rx) = output_queue(one * 2, Overflow::Error, &budget);
        let slot = Mutex::new(Some(tx));
        let ev = || match rows(10) {
            Ok(e) => e,
            Err(_) => unreachable!(),
        };
        // A burst into an empty queue: the reader gets the whole stall to take something.
        let start = tokio::time::Instant::now();
        assert!(deliver(&slot, vec![ev(), ev(), ev()], stall)
            .await
            .is_some());
        assert_eq!(start.elapsed(), stall);
        // The reader takes one entry, then nothing for 5 s while one is left to take.
        assert!(matches!(rx.try_recv(), TryRecv::Event(_)));
        tokio::time::sleep(std::time::Duration::from_secs(5)).await;
        let start = tokio::time::Instant::now();
        assert!(deliver(&slot, vec![ev(), ev()], stall).await.is_some());
        assert_eq!(
            start.elapsed(),
            std::time::Duration::ZERO,
            "cut off at once"
        );
        // A reader that drained its queue and then sees a burst is waited for again.
        while let TryRecv::Event(_) = rx.try_recv() {}
        tokio::time::sleep(std::time::Duration::from_secs(5)).await;
        let reader = async {
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            while let TryRecv::Event(_) = rx.try_recv() {}
        };
        let (full, ()) = tokio::join!(deliver(&slot, vec![ev(), ev(), ev()], stall), reader);
        assert!(
            full.is_none(),
            "a reader that reads within the stall keeps its query"
        );
    }

    /// A blocking queue (derived streams, sinks) waits for its reader as long as it takes,
    /// and marks the end of each step that emitted something.
    #[tokio::test(start_paused = true)]
    async fn a_blocking_queue_waits_for_its_reader_and_marks_each_step() {
        let budget = MemoryBudget::new(usize::MAX);
        let one = event_bytes(&rows(10));
        let (tx, rx) = output_queue(one, Overflow::Block, &budget);
        let slot = Mutex::new(Some(tx));
        let ev = || match rows(10) {
            Ok(e) => e,
            Err(_) => unreachable!(),
        };
        let reader = async {
            // Far longer than any stall timeout.
            tokio::time::sleep(std::time::Duration::from_secs(60)).await;
            let mut taken = Vec::new();
            while taken.len() < 3 {
                match rx.try_recv() {
                    TryRecv::Event(Ok(Event::Rows(r))) => taken.push(r.len()),
                    _ => tokio::time::sleep(std::time::Duration::from_millis(1)).await,
                }
            }
            taken
        };
        let (full, taken) = tokio::join!(
            deliver(&slot, vec![ev(), ev()], std::time::Duration::ZERO),
            reader
        );
        assert!(
            full.is_none(),
            "a blocking queue never gives up on its reader"
        );
        assert_eq!(taken, [10, 10, 0], "both events, then the step's marker");
        assert!(matches!(rx.try_recv(), TryRecv::Empty));
        // A step without events has no marker.
        assert!(deliver(&slot, vec![], std::time::Duration::ZERO)
            .await
            .is_none());
        assert!(matches!(rx.try_recv(), TryRecv::Empty));
    }

    #[test]
    fn a_skipping_reader_is_told_what_it_missed() {
        let one = event_bytes(&rows(5));
        let budget = MemoryBudget::new(usize::MAX);
        let (tx, rx) = output_queue(one, Overflow::Skip, &budget);
        tx.push(rows(5)).unwrap();
        tx.push(rows(7)).unwrap();
        tx.push(rows(8)).unwrap();
        assert!(matches!(rx.try_recv(), TryRecv::Event(Ok(Event::Rows(r))) if r.len() == 5));
        let TryRecv::Event(Ok(Event::Notice(n))) = rx.try_recv() else {
            panic!("expected the skip notice where the events were dropped");
        };
        assert!(n.starts_with("skipped 15 rows of 2 slide events"), "{n}");
        tx.push(rows(5)).unwrap();
        assert!(matches!(rx.try_recv(), TryRecv::Event(Ok(Event::Rows(r))) if r.len() == 5));
        assert!(matches!(rx.try_recv(), TryRecv::Empty));
    }
}
