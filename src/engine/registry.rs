//! The query registry: every registered continuous query, single-stream or join, under one
//! id sequence and one count against `queries_max`.
//!
//! A single-stream query ([`RunningQuery`]) runs inside its stream's ingest task; a join
//! ([`JoinQuery`]) on a task of its own. Both are registered here by
//! [`QueryRegistry::admit`], which checks the server-wide limit over both kinds and hands
//! out the id, so a join and a single-stream query count the same.
//!
//! A leaf of the engine: the registry holds queries, not streams; the stream a query reads
//! is kept by name.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::{mpsc, oneshot};

use super::fanout::{self, JoinMsg};
use super::outq::OutSender;
use crate::error::{Error, Result};
use crate::exec::{Event, MultiJoin, QueryExec};
use crate::types::{Column, Value};

/// A registered continuous query.
pub(crate) struct RunningQuery {
    pub(crate) id: u64,
    pub(crate) text: String,
    /// The session that registered it (none for EXPLAIN ANALYZE's own run).
    pub(crate) pid: Option<i32>,
    pub(crate) exec: Mutex<QueryExec>,
    pub(crate) tx: Mutex<Option<OutSender>>,
    /// Why the query ended, when it failed: read by the subscription after the queued
    /// events, so an error is never lost behind a full queue.
    pub(crate) failure: Arc<Mutex<Option<Error>>>,
    /// The replay of the archive, for a query that back-fills (`None`: it does not).
    pub(crate) backfill: Mutex<Option<BackfillProgress>>,
    /// The result columns (for a tail's description).
    pub(crate) columns: Vec<Column>,
    /// Live tails ([`Engine::tail_query`](super::super::Engine::tail_query)): copies of the
    /// query's rows, sent without waiting; a tail that is full misses the event.
    pub(crate) taps: Mutex<Vec<Tap>>,
    /// The cross-query shared plan the query runs in (0: none).
    pub(crate) plan_id: AtomicU64,
    /// The query's state as charged to the memory budget (a member of a shared plan holds
    /// none of its own: the plan's is charged to the plan).
    pub(crate) memory: Mutex<super::memory::StateMeter>,
    /// The Flink job that computes the query's rows, once attached (`tcq_flink_attach`).
    pub(crate) flink: Mutex<Option<Arc<FlinkRun>>>,
}

impl RunningQuery {
    /// End the query with `error`: its reader gets the queued rows, then the error.
    pub(crate) fn fail(&self, error: Error) {
        self.failure.lock().get_or_insert(error);
        self.close();
    }

    /// Stop sending: the subscription drains what is queued, then ends (and so do the
    /// live tails).
    pub(crate) fn close(&self) {
        self.tx.lock().take();
        self.taps.lock().clear();
        self.memory.lock().release();
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.tx.lock().is_none()
    }

    /// Deliver `events` to the query's reader and live tails, as a slide event's are;
    /// false when the query ended (its reader fell behind: see [`fanout::deliver`]).
    pub(crate) async fn deliver(&self, events: Vec<Event>, stall: std::time::Duration) -> bool {
        tap(self, &events);
        match fanout::deliver(&self.tx, events, stall, self.id).await {
            Ok(()) => true,
            Err(e) => {
                self.fail(e);
                false
            }
        }
    }
}

/// A back-fill's progress, as `tcq_queries` shows it (`backfill`, `backfill_tuples`,
/// `backfill_secs`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BackfillProgress {
    /// Archived tuples replayed so far.
    pub(crate) tuples: u64,
    /// When the query was registered and its replay began.
    started: std::time::Instant,
    /// Wall time from registration to joining the live tuples, once the replay is over.
    took: Option<std::time::Duration>,
}

impl BackfillProgress {
    /// A replay beginning now.
    pub(crate) fn new() -> BackfillProgress {
        BackfillProgress {
            tuples: 0,
            started: std::time::Instant::now(),
            took: None,
        }
    }

    /// The replay is over: the query reads live tuples from now on.
    pub(crate) fn finish(&mut self) {
        self.took.get_or_insert_with(|| self.started.elapsed());
    }

    /// True once the replay is over.
    pub(crate) fn done(&self) -> bool {
        self.took.is_some()
    }

    /// Wall time the replay has taken so far, or took in all once over.
    pub(crate) fn elapsed(&self) -> std::time::Duration {
        self.took.unwrap_or_else(|| self.started.elapsed())
    }
}

impl Default for BackfillProgress {
    fn default() -> Self {
        BackfillProgress::new()
    }
}

/// One live tail of a query's rows.
pub(crate) struct Tap {
    pub(crate) tx: mpsc::Sender<Vec<Vec<Value>>>,
    /// Slide events this tail missed because its buffer was full.
    pub(crate) missed: Arc<AtomicU64>,
    /// Bytes of rows queued for the tail's reader (`outq::rows_bytes`); an event that
    /// would take it past `bytes_max` is missed, unless nothing is queued.
    pub(crate) queued_bytes: Arc<std::sync::atomic::AtomicUsize>,
    pub(crate) bytes_max: usize,
}

/// Copy the rows of `events` to `q`'s live tails. Never waits: a tail whose buffer is full
/// (in events or in bytes) misses these rows (counted for its reader), a closed one is
/// dropped.
pub(crate) fn tap(q: &RunningQuery, events: &[Event]) {
    let mut taps = q.taps.lock();
    if taps.is_empty() {
        return;
    }
    for e in events {
        if matches!(e, Event::Rows(_) | Event::Block(_)) {
            // The reader subtracts the bytes of the copy it receives: count the copy's.
            let copy = e.clone().into_rows();
            let bytes = super::outq::rows_bytes(&copy);
            let k = match e {
                Event::Block(b) => b.slide_events() as u64,
                _ => 1,
            };
            taps.retain(|t| {
                // An event larger than the bound still goes to a tail that has taken
                // everything, as the output queue lets one through to an empty queue.
                let queued = t.queued_bytes.load(Ordering::Acquire);
                if queued > 0 && queued + bytes > t.bytes_max {
                    t.missed.fetch_add(k, Ordering::Relaxed);
                    return !t.tx.is_closed();
                }
                match t.tx.try_send(copy.clone()) {
                    Ok(()) => {
                        t.queued_bytes.fetch_add(bytes, Ordering::AcqRel);
                        true
                    }
                    Err(mpsc::error::TrySendError::Full(_)) => {
                        t.missed.fetch_add(k, Ordering::Relaxed);
                        true
                    }
                    Err(mpsc::error::TrySendError::Closed(_)) => false,
                }
            });
        }
    }
}

/// A query's Flink job, as `tcq_queries` shows it.
#[derive(Debug)]
pub(crate) struct FlinkRun {
    /// The job id.
    pub(crate) job: String,
    /// The job's last known state (`RUNNING`, `FINISHED`, ...), or why it is unknown.
    pub(crate) state: Mutex<String>,
}

/// A registered join query.
pub(crate) struct JoinQuery {
    pub(crate) id: u64,
    pub(crate) text: String,
    /// The session that registered it (`pg_cancel_backend` of it cancels the join).
    pub(crate) pid: Option<i32>,
    /// The join's distinct streams, by name, in the order of `JoinExec::stream_times`.
    pub(crate) streams: Vec<String>,
    /// The stored tables a stream-table join reads at each slide event.
    pub(crate) tables: Vec<String>,
    pub(crate) exec: Mutex<MultiJoin>,
    pub(crate) tx: Mutex<Option<OutSender>>,
    /// `Limits::output_stall_timeout`.
    pub(crate) output_stall: std::time::Duration,
    pub(crate) failure: Arc<Mutex<Option<Error>>>,
    pub(crate) feed: mpsc::WeakSender<JoinMsg>,
    /// The join's state as charged to the memory budget.
    pub(crate) memory: Mutex<super::memory::StateMeter>,
}

impl JoinQuery {
    /// End the join with `error`: its reader gets the queued rows, then the error.
    pub(crate) fn fail(&self, error: Error) {
        self.failure.lock().get_or_insert(error);
        self.close();
    }

    /// Stop sending: the subscription drains what is queued, then ends.
    pub(crate) fn close(&self) {
        self.tx.lock().take();
        self.memory.lock().release();
    }

    /// Wait until the join has processed every message queued before this call.
    pub(crate) async fn barrier(&self) {
        let Some(feed) = self.feed.upgrade() else {
            return;
        };
        let (ack, done) = oneshot::channel();
        if feed.send(JoinMsg::Barrier(ack)).await.is_ok() {
            let _ = done.await;
        }
    }
}

/// Registered queries by id: single-stream queries with the name of the stream each
/// reads, and joins.
#[derive(Default)]
pub(crate) struct QueryRegistry {
    queries: Mutex<HashMap<u64, (Arc<RunningQuery>, String)>>,
    joins: Mutex<HashMap<u64, Arc<JoinQuery>>>,
    next_id: AtomicU64,
}

impl QueryRegistry {
    /// A new registry; the first id is 1.
    pub(crate) fn new() -> QueryRegistry {
        QueryRegistry {
            next_id: AtomicU64::new(1),
            ..QueryRegistry::default()
        }
    }

    /// The id of a query about to be registered; 54000 when `queries_max` queries (single
    /// stream and joins together) are registered already.
    pub(crate) fn admit(&self, queries_max: usize) -> Result<u64> {
        if self.len() >= queries_max {
            return Err(Error::ProgramLimitExceeded(format!(
                "more than {queries_max} continuous queries (queries_max)"
            )));
        }
        Ok(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Registered queries of both kinds.
    pub(crate) fn len(&self) -> usize {
        self.queries.lock().len() + self.joins.lock().len()
    }

    /// Register single-stream query `q`, which reads stream `stream`.
    pub(crate) fn insert(&self, q: Arc<RunningQuery>, stream: String) {
        self.queries.lock().insert(q.id, (q, stream));
    }

    /// Register join `q`.
    pub(crate) fn insert_join(&self, q: Arc<JoinQuery>) {
        self.joins.lock().insert(q.id, q);
    }

    /// Unregister query `id` (either kind).
    pub(crate) fn remove(&self, id: u64) {
        self.queries.lock().remove(&id);
        self.joins.lock().remove(&id);
    }

    /// Single-stream query `id` and the name of its stream.
    pub(crate) fn get(&self, id: u64) -> Option<(Arc<RunningQuery>, String)> {
        self.queries.lock().get(&id).cloned()
    }

    /// Join `id`.
    pub(crate) fn join(&self, id: u64) -> Option<Arc<JoinQuery>> {
        self.joins.lock().get(&id).cloned()
    }

    /// Every single-stream query with the name of its stream, in no order.
    pub(crate) fn queries(&self) -> Vec<(Arc<RunningQuery>, String)> {
        self.queries.lock().values().cloned().collect()
    }

    /// Every join, in no order.
    pub(crate) fn joins(&self) -> Vec<Arc<JoinQuery>> {
        self.joins.lock().values().cloned().collect()
    }

    /// End every query (server shutdown): single-stream executors stop at the next batch,
    /// and one waiting on a full output queue returns at once.
    pub(crate) fn close_all(&self) {
        for (q, _) in self.queries() {
            q.close();
        }
    }
}
