//! The catalog: streams, and the continuous queries registered on them.
//!
//! Each [`Stream`] has one ingest task fed by a bounded queue of messages (batches,
//! heartbeats, query attachments, barriers), so statements reach queries in the order the
//! server accepts them, and parsing a statement on its connection overlaps with running the
//! queries of the previous one. A statement is accepted once its batch is in the queue; the
//! bytes in flight are bounded by a semaphore, so a fast writer waits rather than growing a
//! buffer. The task runs each registered query's executor on the batch and sends the events
//! to the query's output queue, which is bounded in bytes and never waited on: an event that
//! does not fit ends that query with 54000 (or is skipped, if its session asked), so no
//! reader can stall a stream or its other queries, and no queue grows without bound.
//! System views and EXPLAIN first pass a barrier
//! through the queue, so they see every statement accepted before them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::backends::Backends;
use super::background::Registry as BackgroundRegistry;
use super::memory::MemoryBudget;
use super::roles::Roles;
use super::table_log::TableLog;
use crate::table::Table;
use tokio::sync::{mpsc, oneshot, OwnedSemaphorePermit, Semaphore};

use super::fanout::JoinFeeds;
use super::registry::{BackfillProgress, QueryRegistry, RunningQuery};
use super::speculate::{SpecMsg, SpecTag, Speculator, SPEC_QUEUE};
use super::{Engine, Limits};
use crate::error::{Error, Result};
use crate::exec::{Batch, Event, QueryExec, RowBatch};
use crate::sql::SchemaProvider;
use crate::types::Column;

/// Observed counters of a stream.
#[derive(Clone, Debug, Default)]
pub(crate) struct StreamStats {
    pub(crate) tuples: u64,
    /// Current time: the newest tuple's timestamp or a later heartbeat (tcq_advance, the
    /// server clock).
    pub(crate) now_us: Option<i64>,
    pub(crate) first_us: Option<i64>,
    /// The newest tuple's timestamp, heartbeats aside: what retention counts back from.
    pub(crate) newest_us: Option<i64>,
}

/// A declared stream.
pub(crate) struct Stream {
    pub(crate) name: String,
    /// The OID psql sees (`pg_class.oid`), from 16384 on.
    pub(crate) oid: u32,
    pub(crate) columns: Vec<Column>,
    pub(crate) ts_col: Option<usize>,
    pub(crate) archived: bool,
    /// `WITH (slack = ...)`: the default SLACK of windows over this stream, microseconds.
    pub(crate) slack_us: i64,
    /// How long a full output queue waits for its reader to take something before that
    /// reader's query ends (`Limits::output_stall_timeout`).
    pub(crate) output_stall: std::time::Duration,
    pub(crate) stats: Mutex<StreamStats>,
    pub(crate) queries: Mutex<Vec<Arc<RunningQuery>>>,
    /// Cross-query shared plans over this stream (`exec::shared`); their member queries
    /// are not in `queries`.
    pub(crate) plans: Mutex<Vec<Arc<PlanRun>>>,
    /// The feeds of the join queries reading this stream.
    pub(crate) joins: JoinFeeds,
    pub(crate) dropped: AtomicBool,
    /// The log and segments of an archived stream in a data directory.
    pub(crate) archive: Option<Arc<super::archive::StreamArchive>>,
    /// `WITH (retention = ...)` of an archived stream, microseconds (`None`: keep all).
    pub(crate) retention_us: Mutex<Option<i64>>,
    tx: mpsc::Sender<IngestMsg>,
    /// A COPY's staged batches, sent while it is open for the speculative fold (see
    /// `speculate`); never waited on.
    pub(crate) spec_tx: mpsc::Sender<SpecMsg>,
    budget: Arc<Semaphore>,
    /// Held by a statement that queues several batches, so no other statement's batches
    /// fall between them.
    pub(crate) enqueue_order: tokio::sync::Mutex<()>,
    /// The source that feeds the stream (`CREATE STREAM ... WITH (connector = ...)`).
    pub(crate) source: Mutex<Option<Arc<crate::connect::Source>>>,
}

/// What a stream's ingest task consumes, in order.
enum IngestMsg {
    /// A batch; a COPY's batches carry their place in it (see `speculate`).
    Batch(Batch, OwnedSemaphorePermit, Option<SpecTag>),
    Heartbeat(i64),
    Attach(Arc<RunningQuery>, Option<Backfill>),
    /// Join a shared plan with this key (or start one); the result goes back to the
    /// registering session.
    Share(Arc<RunningQuery>, String, oneshot::Sender<Result<()>>),
    Barrier(oneshot::Sender<()>),
    Drop,
}

/// The rest of a back-fill, replayed by the ingest task before it attaches the query.
struct Backfill {
    /// Where the back-fill's own rounds stopped.
    from: super::archive::LogPos,
    /// The end of the log when the attachment was queued.
    seam: super::archive::LogPos,
    /// Segments whose latest tuple precedes this are skipped (`None`: every segment).
    from_us: Option<i64>,
    /// Keeps the sealed logs the rest may be in.
    _pin: super::archive::ReplayPin,
}

/// A back-fill stops replaying in rounds once less than this is left in the open log; the
/// ingest task replays the rest (other queries of the stream wait that long).
const CATCH_UP_BYTES: u64 = 1 << 20;
/// A back-fill replays at most this many rounds on its own, in case ingest outpaces it.
const CATCH_UP_ROUNDS: usize = 16;

/// Batches (of at most 16 Ki rows each) a back-fill reads ahead of its query: bounds the
/// replay's memory while the reading overlaps the execution.
const REPLAY_READ_AHEAD: usize = 4;

/// The event rate a query is planned for when its stream has no observed rate yet (issue
/// 11: planned for 1 event/s, a 1 h / 1 s query registered before any data skipped the
/// pane and later cut ingest from 20 k to 3 k rows/s). A plan that has consumed nothing
/// is re-planned for the observed rate when its first batch arrives, if that batch (or
/// what came before it) shows one; a plan whose first batch is a single tuple keeps this
/// rate, and so does one over a stream stamped on arrival (the server clock's heartbeats
/// start its windows before the first tuple). So the unknown rate is taken to be high:
/// sharing (a pane under a sliding window) is then chosen wherever it pays at any rate up
/// to it, and at a truly low rate it costs only the merges of one slide event's pane
/// partials.
pub(crate) const UNKNOWN_RATE_PER_SEC: f64 = 1000.0;

/// Bytes of staged batches a stream's ingest queue holds, in KiB permits.
const INGEST_BUDGET_KIB: usize = 64 * 1024;

impl Stream {
    /// A stream and its ingest task (spawned on the current tokio runtime).
    // One argument per field of the stream's definition, each used once.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn create(
        name: String,
        oid: u32,
        columns: Vec<Column>,
        ts_col: Option<usize>,
        archived: bool,
        slack_us: i64,
        output_stall: std::time::Duration,
        archive: Option<Arc<super::archive::StreamArchive>>,
    ) -> Arc<Stream> {
        let (tx, rx) = mpsc::channel(64);
        let (spec_tx, spec_rx) = mpsc::channel(SPEC_QUEUE);
        let stream = Arc::new(Stream {
            name,
            oid,
            columns,
            ts_col,
            archived,
            slack_us,
            output_stall,
            stats: Mutex::new(StreamStats::default()),
            queries: Mutex::new(Vec::new()),
            plans: Mutex::new(Vec::new()),
            joins: JoinFeeds::default(),
            dropped: AtomicBool::new(false),
            archive,
            retention_us: Mutex::new(None),
            tx,
            spec_tx,
            budget: Arc::new(Semaphore::new(INGEST_BUDGET_KIB)),
            enqueue_order: tokio::sync::Mutex::new(()),
            source: Mutex::new(None),
        });
        // The stream's queries run on a thread of their own, not on an async worker: a
        // worker that wakes a subscriber's connection task runs that task next on the same
        // core (tokio's LIFO slot), so the executor and the encoding of its rows would take
        // turns on one core while the other idles.
        let rx = Arc::new(Mutex::new(Some((rx, spec_rx))));
        let (handle, task, queue) = (
            tokio::runtime::Handle::current(),
            stream.clone(),
            rx.clone(),
        );
        let spawned = std::thread::Builder::new()
            .name("tcq-stream".into())
            .stack_size(super::THREAD_STACK_BYTES)
            .spawn(move || {
                if let Some((rx, spec_rx)) = queue.lock().take() {
                    handle.block_on(ingest_task(task, rx, spec_rx));
                }
            });
        if let Err(e) = spawned {
            tracing::warn!(
                "no thread for stream {}: {e}; its queries run on the async workers",
                stream.name
            );
            if let Some((rx, spec_rx)) = rx.lock().take() {
                tokio::spawn(ingest_task(stream.clone(), rx, spec_rx));
            }
        }
        stream
    }

    async fn send(&self, msg: IngestMsg) -> Result<()> {
        self.tx
            .send(msg)
            .await
            .map_err(|_| Error::UndefinedTable(self.name.clone()))
    }

    /// Wait until every message accepted before this call has been processed.
    pub(crate) async fn barrier(&self) {
        let (ack, done) = oneshot::channel();
        if self.send(IngestMsg::Barrier(ack)).await.is_ok() {
            let _ = done.await;
        }
    }

    /// Register a query into the shared plan for `key` (see `exec::shared`): it sees every
    /// batch accepted after this call. Errors: a window of it exceeds a limit in the plan.
    pub(crate) async fn attach_shared(&self, q: Arc<RunningQuery>, key: String) -> Result<()> {
        let (tx, rx) = oneshot::channel();
        self.send(IngestMsg::Share(q, key, tx)).await?;
        rx.await
            .map_err(|_| Error::UndefinedTable(self.name.clone()))?
    }

    /// Register a query: it sees every batch accepted after this call.
    pub(crate) async fn attach(&self, q: Arc<RunningQuery>) -> Result<()> {
        self.send(IngestMsg::Attach(q, None)).await
    }

    /// Register a query on an archived stream that first replays the archive (segments
    /// reaching `from_us`, then the logs), then sees every batch accepted after it.
    ///
    /// Ingest goes on during the replay. A task of its own replays the files up to the end
    /// of the last committed statement, then again up to the new end, in rounds, until
    /// what is left is small ([`CATCH_UP_BYTES`]). Then, holding the stream's enqueue
    /// order for a moment, it takes the seam (the end of the log, where no statement is
    /// between its records) and queues the attachment with the rest up to the seam: the
    /// ingest task replays that rest and attaches the query, so every batch logged before
    /// the seam (and queued before the attachment) reaches the query from the files once,
    /// and every batch after it from the queue.
    pub(crate) async fn attach_with_backfill(
        self: &Arc<Self>,
        q: Arc<RunningQuery>,
        from_us: Option<i64>,
    ) -> Result<()> {
        let Some(archive) = self.archive.clone() else {
            return self.attach(q).await;
        };
        if self.dropped.load(Ordering::Acquire) {
            return Err(Error::UndefinedTable(self.name.clone()));
        }
        *q.backfill.lock() = Some(BackfillProgress::new());
        let stream = self.clone();
        tokio::spawn(async move {
            let pin = archive.pin();
            let mut at = super::archive::LogPos::default();
            for round in 0..CATCH_UP_ROUNDS {
                let end = archive.committed_at();
                if round > 0 && end.seq == at.seq && end.offset - at.offset < CATCH_UP_BYTES {
                    break;
                }
                if !replay(&stream, &q, &archive, at, end, from_us).await {
                    // A stream dropped during the replay ends the query, as it ends the
                    // queries attached to it.
                    q.close();
                    return;
                }
                at = end;
            }
            let _order = stream.enqueue_order.lock().await;
            let seam = archive.committed_at();
            let msg = IngestMsg::Attach(
                q.clone(),
                Some(Backfill {
                    from: at,
                    seam,
                    from_us,
                    _pin: pin,
                }),
            );
            if stream.send(msg).await.is_err() {
                q.close();
            }
        });
        Ok(())
    }

    /// Sealed segments whose latest tuple is before this are past the retention: the
    /// stream's newest tuple's timestamp minus its retention (`None`: no retention, or no
    /// tuple yet). A heartbeat moves current time but not this: a far-future
    /// `tcq_advance` must not age out the archive.
    pub(crate) fn retain_before_us(&self) -> Option<i64> {
        let keep_us = (*self.retention_us.lock())?;
        let now = self.stats.lock().newest_us?;
        Some(now.saturating_sub(keep_us))
    }

    /// Tuples the stream holds, from its counters `st`: those accepted (and, archived,
    /// recovered at start), less those retention removed from its archive since.
    pub(crate) fn tuples_kept(&self, st: &StreamStats) -> u64 {
        st.tuples
            .saturating_sub(self.archive.as_ref().map_or(0, |a| a.retired_tuples()))
    }

    /// Remove the sealed segments that retention no longer keeps (see
    /// [`Stream::retain_before_us`]). Blocking file removal; quick.
    pub(crate) fn apply_retention(&self) {
        if let (Some(archive), Some(before_us)) = (&self.archive, self.retain_before_us()) {
            archive.drop_segments_before(before_us);
        }
    }

    /// Wait until the statement that ended at log `position` is durable (per `--sync`).
    pub(crate) async fn wait_durable(&self, position: Option<u64>) -> Result<()> {
        match (&self.archive, position) {
            (Some(a), Some(p)) => a.wait_durable(p).await,
            _ => Ok(()),
        }
    }

    /// End the stream: its source stops, batches already accepted are processed, then its
    /// queries end.
    pub(crate) async fn drop_stream(&self) {
        self.dropped.store(true, Ordering::Release);
        if let Some(source) = self.source.lock().take() {
            source.stop();
        }
        let _ = self.send(IngestMsg::Drop).await;
        self.joins.end_all().await;
    }

    /// Event rate for the cost model: observed events per second of stream time, or
    /// [`UNKNOWN_RATE_PER_SEC`] before the stream has shown one.
    pub(crate) fn event_rate_per_sec(&self) -> f64 {
        self.observed_rate_per_sec().unwrap_or(UNKNOWN_RATE_PER_SEC)
    }

    /// Observed events per second of stream time: the tuples accepted over the span of
    /// their timestamps; `None` until two tuples with different timestamps have arrived.
    pub(crate) fn observed_rate_per_sec(&self) -> Option<f64> {
        let s = self.stats.lock();
        match (s.first_us, s.now_us) {
            (Some(a), Some(b)) if b > a && s.tuples > 1 => {
                Some(s.tuples as f64 / ((b - a) as f64 / 1e6))
            }
            _ => None,
        }
    }

    /// True when the stream is stamped with the server clock on arrival.
    pub(crate) fn is_ingest_time(&self) -> bool {
        self.ts_col.is_none()
    }
}

/// A cross-query shared plan over one stream and its member queries.
pub(crate) struct PlanRun {
    pub(crate) id: u64,
    pub(crate) key: String,
    pub(crate) state: Mutex<PlanState>,
    /// The plan's state as charged to the memory budget.
    pub(crate) memory: Mutex<super::memory::StateMeter>,
}

/// A shared plan's state: `queries[i]` is the member `agg.member_ids()[i]`.
pub(crate) struct PlanState {
    pub(crate) agg: crate::exec::shared::SharedAgg,
    pub(crate) queries: Vec<Arc<RunningQuery>>,
}

/// Plan ids, server-wide.
static NEXT_PLAN_ID: AtomicU64 = AtomicU64::new(1);

impl PlanRun {
    /// Remove member `id` (its nodes are pruned); true when the plan is left empty.
    pub(crate) fn leave(&self, id: u64, eta_per_sec: f64) -> bool {
        let mut st = self.state.lock();
        st.agg.leave(id, eta_per_sec);
        st.queries.retain(|q| q.id != id);
        st.agg.is_empty()
    }
}

/// Remove query `id` from whichever shared plan of `stream` it is in; drop emptied plans.
pub(crate) fn leave_plans(stream: &Stream, id: u64) {
    let eta = stream.event_rate_per_sec();
    let plans: Vec<Arc<PlanRun>> = stream.plans.lock().clone();
    for p in plans {
        let member = p.state.lock().queries.iter().any(|q| q.id == id);
        if member && p.leave(id, eta) {
            stream.plans.lock().retain(|x| x.id != p.id);
        }
    }
}

/// Join `q` to the plan of `stream` with `key` that accepts it, or start a new plan.
fn join_plan(stream: &Stream, q: &Arc<RunningQuery>, key: String) -> Result<()> {
    let eta = stream.event_rate_per_sec();
    let plans: Vec<Arc<PlanRun>> = stream.plans.lock().clone();
    let mut exec = q.exec.lock();
    // Plans with the query's own GROUP BY keys first, then those it would roll up from.
    let mut candidates: Vec<(bool, &Arc<PlanRun>)> = plans
        .iter()
        .filter(|p| p.key == key)
        .map(|p| (p.state.lock().agg.is_rollup_for(&exec), p))
        .collect();
    candidates.sort_by_key(|(rollup, _)| *rollup);
    for (_, p) in candidates {
        let mut st = p.state.lock();
        if st.agg.join_refusal(&exec, eta).is_none() {
            st.agg.join(q.id, &mut exec, eta)?;
            st.queries.push(q.clone());
            q.plan_id.store(p.id, Ordering::Release);
            return Ok(());
        }
    }
    let budget = q.memory.lock().budget().clone();
    let mut agg = crate::exec::shared::SharedAgg::new(&exec, exec.limits())?;
    agg.join(q.id, &mut exec, eta)?;
    let id = NEXT_PLAN_ID.fetch_add(1, Ordering::Relaxed);
    q.plan_id.store(id, Ordering::Release);
    stream.plans.lock().push(Arc::new(PlanRun {
        id,
        key,
        state: Mutex::new(PlanState {
            agg,
            queries: vec![q.clone()],
        }),
        memory: Mutex::new(super::memory::StateMeter::new(&budget)),
    }));
    Ok(())
}

/// Unregisters a query when its subscription is dropped.
pub(crate) struct QueryGuard {
    pub(crate) stream: Weak<Stream>,
    pub(crate) registry: Weak<QueryRegistry>,
    pub(crate) id: u64,
}

impl Drop for QueryGuard {
    fn drop(&mut self) {
        if let Some(s) = self.stream.upgrade() {
            leave_plans(&s, self.id);
            s.queries.lock().retain(|q| {
                if q.id == self.id {
                    q.close();
                }
                q.id != self.id
            });
        }
        if let Some(r) = self.registry.upgrade() {
            r.remove(self.id);
        }
    }
}

/// The catalog's tables as a stream-table join reads them.
struct TablesReader(Arc<RwLock<HashMap<String, Arc<crate::table::Table>>>>);

impl crate::exec::table_join::TableReader for TablesReader {
    fn snapshot(&self, name: &str) -> Option<crate::table::TableSnapshot> {
        self.0.read().get(name).map(|t| t.snapshot())
    }
}

/// Streams, tables and registered queries. Streams and tables share one namespace.
pub(crate) struct Catalog {
    streams: RwLock<HashMap<String, Arc<Stream>>>,
    /// Stored tables (see `table`). Take this lock after `streams` when holding both.
    tables: Arc<RwLock<HashMap<String, Arc<crate::table::Table>>>>,
    /// The logs of the stored tables on a data directory, by table oid (see `table_log`).
    table_logs: Mutex<HashMap<u32, Arc<super::table_log::TableLog>>>,
    /// Registered continuous queries, single-stream and joins.
    queries: Arc<QueryRegistry>,
    next_oid: std::sync::atomic::AtomicU32,
    /// Roles, relation owners and grants. Take this lock after `streams` and `tables`.
    roles: super::roles::Roles,
    /// Connected sessions (`pg_stat_activity`, `pg_cancel_backend`).
    backends: super::backends::Backends,
    /// The global memory budget (`memory_limit_bytes`; `tcq_memory`).
    memory: Arc<super::memory::MemoryBudget>,
    /// Derived streams and sinks: the queries that run without a client.
    background: super::background::Registry,
}

impl Catalog {
    /// The streams by name, read-locked (take it before the tables' lock when holding both).
    pub(crate) fn streams_read(&self) -> RwLockReadGuard<'_, HashMap<String, Arc<Stream>>> {
        self.streams.read()
    }

    /// The streams by name, write-locked for a statement that adds or drops one; it holds
    /// the lock until the catalog on disk says so (`persist::save_catalog`).
    pub(crate) fn streams_write(&self) -> RwLockWriteGuard<'_, HashMap<String, Arc<Stream>>> {
        self.streams.write()
    }

    /// The stored tables by name, read-locked (after the streams' lock when holding both).
    pub(crate) fn tables_read(&self) -> RwLockReadGuard<'_, HashMap<String, Arc<Table>>> {
        self.tables.read()
    }

    /// The stored tables by name, write-locked for CREATE / DROP TABLE and start-up.
    pub(crate) fn tables_write(&self) -> RwLockWriteGuard<'_, HashMap<String, Arc<Table>>> {
        self.tables.write()
    }

    /// The logs of the stored tables on a data directory, by table oid.
    pub(crate) fn table_logs(&self) -> MutexGuard<'_, HashMap<u32, Arc<TableLog>>> {
        self.table_logs.lock()
    }

    /// The registered continuous queries, single-stream and joins.
    pub(crate) fn queries(&self) -> &Arc<QueryRegistry> {
        &self.queries
    }

    /// A new relation OID (streams, tables, sinks share the sequence), from 16384 on.
    pub(crate) fn next_oid(&self) -> u32 {
        self.next_oids(1)
    }

    /// The first of `n` consecutive new relation OIDs (a table takes one per key index too).
    pub(crate) fn next_oids(&self, n: u32) -> u32 {
        self.next_oid.fetch_add(n, Ordering::Relaxed)
    }

    /// Roles, relation owners and grants (take after the streams' and tables' locks).
    pub(crate) fn roles(&self) -> &Roles {
        &self.roles
    }

    /// The connected sessions (`pg_stat_activity`, `pg_cancel_backend`).
    pub(crate) fn backends(&self) -> &Backends {
        &self.backends
    }

    /// The global memory budget (`memory_limit_bytes`; `tcq_memory`).
    pub(crate) fn memory(&self) -> &Arc<MemoryBudget> {
        &self.memory
    }

    /// The derived streams and sinks.
    pub(crate) fn background(&self) -> &BackgroundRegistry {
        &self.background
    }
}

impl Catalog {
    pub(crate) fn new(limits: &Limits) -> Catalog {
        Catalog {
            streams: RwLock::new(HashMap::new()),
            tables: Arc::new(RwLock::new(HashMap::new())),
            table_logs: Mutex::new(HashMap::new()),
            queries: Arc::new(QueryRegistry::new()),
            next_oid: std::sync::atomic::AtomicU32::new(FIRST_OID),
            backends: super::backends::Backends::default(),
            memory: super::memory::MemoryBudget::new(limits.memory_limit_bytes),
            roles: super::roles::Roles::default(),
            background: super::background::Registry::new(),
        }
    }

    /// Wait until the changes made so far to the table with oid `oid` are on disk (per
    /// `--sync`); at once for a table kept in memory only.
    pub(crate) async fn table_durable(&self, oid: u32) -> Result<()> {
        let log = self.table_logs.lock().get(&oid).cloned();
        match log {
            Some(log) => log.wait_durable().await,
            None => Ok(()),
        }
    }

    /// Stored table `name`; 42P01 when there is none.
    pub(crate) fn table(&self, name: &str) -> Result<Arc<crate::table::Table>> {
        self.tables
            .read()
            .get(name)
            .cloned()
            .ok_or_else(|| Error::UndefinedTable(name.to_string()))
    }

    /// Table `name` as it is now (columns, rows, key indexes), or `None` when there is no
    /// such table. Cheap: the snapshot shares the table's rows until the table changes.
    pub(crate) fn table_snapshot(&self, name: &str) -> Option<crate::table::TableSnapshot> {
        self.tables.read().get(name).map(|t| t.snapshot())
    }

    /// A reader of this catalog's tables for stream-table joins (it holds the table map,
    /// not the engine).
    pub(crate) fn table_reader(&self) -> Arc<dyn crate::exec::table_join::TableReader> {
        Arc::new(TablesReader(self.tables.clone()))
    }

    pub(crate) fn stream(&self, name: &str) -> Result<Arc<Stream>> {
        self.streams
            .read()
            .get(name)
            .cloned()
            .ok_or_else(|| Error::UndefinedTable(name.to_string()))
    }

    /// Start the task that advances server-clock streams while they are idle (as
    /// TelegraphCQ's wrappers sent punctuation after an idle second). Needs a tokio runtime;
    /// without one, server-clock streams advance only with arrivals.
    pub(crate) fn start_clock(engine: &Arc<Engine>) {
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let weak = Arc::downgrade(engine);
        handle.spawn(async move {
            let mut tick = tokio::time::interval(std::time::Duration::from_millis(100));
            loop {
                tick.tick().await;
                let Some(engine) = weak.upgrade() else { return };
                let streams: Vec<Arc<Stream>> = engine
                    .catalog
                    .streams
                    .read()
                    .values()
                    .filter(|s| s.is_ingest_time())
                    .cloned()
                    .collect();
                for s in streams {
                    let now = crate::time::now_us();
                    s.joins.try_forward_heartbeat(now);
                    if !s.queries.lock().is_empty() || !s.plans.lock().is_empty() {
                        let now = crate::time::now_us();
                        if s.tx.try_send(IngestMsg::Heartbeat(now)).is_ok() {
                            let mut st = s.stats.lock();
                            st.now_us = Some(st.now_us.map_or(now, |n| n.max(now)));
                        }
                    }
                }
            }
        });
    }

    /// Accept a batch into `stream`: it is queued for the stream's ingest task, which runs
    /// every registered query over it in order. Waits while the queue is full. An archived
    /// stream logs the batch first and returns once it is durable (per `--sync`).
    pub(crate) async fn ingest(&self, stream: &Arc<Stream>, batch: RowBatch) -> Result<()> {
        let position = {
            let _whole = stream.enqueue_order.lock().await;
            let log = StatementLog::begin(stream);
            let batch: Batch = batch.into();
            log.append(stream, &batch)?;
            self.send_batch(stream, batch).await?;
            log.commit(stream).await?
        };
        stream.wait_durable(position).await
    }

    /// Accept a batch from `stream`'s source with `position`, the source's place after the
    /// batch (opaque bytes): as [`Catalog::ingest`], and into an archived stream the
    /// position is written in the commit record of the batch's statement, so the tuples
    /// and the position reach the disk together or not at all.
    pub(crate) async fn ingest_from_source(
        &self,
        stream: &Arc<Stream>,
        batch: Batch,
        position: Vec<u8>,
    ) -> Result<()> {
        let position = {
            let _whole = stream.enqueue_order.lock().await;
            let mut log = StatementLog::begin(stream);
            log.position = position;
            log.append(stream, &batch)?;
            self.send_batch(stream, batch).await?;
            log.commit(stream).await?
        };
        stream.wait_durable(position).await
    }

    /// Queue one batch; the caller holds `stream.enqueue_order` (a statement queueing
    /// several batches holds it across all of them).
    pub(crate) async fn send_batch(&self, stream: &Arc<Stream>, batch: Batch) -> Result<()> {
        self.send_batch_tagged(stream, batch, None).await
    }

    /// [`Catalog::send_batch`] for batch `tag.seq` of a COPY (`None`: not a COPY's batch,
    /// or one the COPY did not offer for speculation).
    pub(crate) async fn send_batch_tagged(
        &self,
        stream: &Arc<Stream>,
        batch: Batch,
        tag: Option<SpecTag>,
    ) -> Result<()> {
        if stream.dropped.load(Ordering::Acquire) {
            return Err(Error::UndefinedTable(stream.name.clone()));
        }
        let kib = (batch.heap_bytes() / 1024).clamp(1, INGEST_BUDGET_KIB) as u32;
        let permit = stream
            .budget
            .clone()
            .acquire_many_owned(kib)
            .await
            .map_err(|_| Error::UndefinedTable(stream.name.clone()))?;
        {
            let mut st = stream.stats.lock();
            st.tuples += batch.len() as u64;
            if let Some(&max) = batch.times().iter().max() {
                st.now_us = Some(st.now_us.map_or(max, |n| n.max(max)));
                st.newest_us = Some(st.newest_us.map_or(max, |n| n.max(max)));
            }
            if st.first_us.is_none() {
                st.first_us = batch.times().first().copied();
            }
        }
        stream.joins.forward_batch(&batch).await;
        stream.send(IngestMsg::Batch(batch, permit, tag)).await
    }

    /// Move `stream`'s time to `t_us` without tuples (tcq_advance, the server clock).
    pub(crate) async fn heartbeat(&self, stream: &Arc<Stream>, t_us: i64) -> Result<()> {
        {
            let mut st = stream.stats.lock();
            st.now_us = Some(st.now_us.map_or(t_us, |n| n.max(t_us)));
        }
        stream.joins.forward_heartbeat(t_us).await;
        stream.send(IngestMsg::Heartbeat(t_us)).await
    }

    /// Wait until every join reading table `name` has processed the stream statements
    /// accepted before this call, so that a change to the table is seen from the next
    /// slide event on and by no event of a statement accepted before it. A join whose
    /// reader stalls it is waited for at most `output_stall_timeout` plus a second.
    pub(crate) async fn barrier_table_readers(&self, name: &str, stall: std::time::Duration) {
        let readers: Vec<_> = self
            .queries
            .joins()
            .into_iter()
            .filter(|j| j.tables.iter().any(|t| t == name))
            .collect();
        let all = async {
            for j in readers {
                j.barrier().await;
            }
        };
        let bound = stall + std::time::Duration::from_secs(1);
        let _ = tokio::time::timeout(bound, all).await;
    }

    /// Wait until every stream has processed what it accepted (for system views).
    ///
    /// A stream whose task is held up (by a reader that stalls its query) is waited for at
    /// most one second: the view then shows counters that lag the last statements a little.
    pub(crate) async fn barrier_all(&self) {
        let streams: Vec<Arc<Stream>> = self.streams.read().values().cloned().collect();
        let joins = self.queries.joins();
        let all = async {
            for s in streams {
                s.barrier().await;
            }
            for j in joins {
                j.barrier().await;
            }
        };
        let _ = tokio::time::timeout(std::time::Duration::from_secs(1), all).await;
    }
}

/// One statement's records in its stream's archive; nothing for an unarchived stream.
/// Used while the statement holds the stream's enqueue order: append each batch before it
/// is queued, commit after the last, then wait for the returned position to be durable
/// after releasing the order.
pub(crate) struct StatementLog {
    archive: Option<(Arc<super::archive::StreamArchive>, u64)>,
    /// A source's position after the statement's tuples, written in its commit record
    /// (empty: none).
    pub(crate) position: Vec<u8>,
}

impl StatementLog {
    /// A new statement on `stream`.
    pub(crate) fn begin(stream: &Stream) -> StatementLog {
        StatementLog {
            archive: stream.archive.as_ref().map(|a| (a.clone(), a.begin())),
            position: Vec::new(),
        }
    }

    /// Log one batch (before it is queued). Errors: the stream was dropped, or the write
    /// failed.
    pub(crate) fn append(&self, stream: &Stream, batch: &Batch) -> Result<()> {
        let Some((archive, statement)) = &self.archive else {
            return Ok(());
        };
        if stream.dropped.load(Ordering::Acquire) {
            return Err(Error::UndefinedTable(stream.name.clone()));
        }
        archive.append(*statement, batch)
    }

    /// Write the commit record; returns the log position to wait for. Under `--sync
    /// always` the statement is durable before this returns (the caller still holds the
    /// order, so no other statement writes before its fsync). A log that has outgrown its
    /// size is rotated here and sealed on a blocking thread (a failure to seal is logged:
    /// the tuples stay in the log, which recovery seals).
    pub(crate) async fn commit(self, stream: &Stream) -> Result<Option<u64>> {
        let Some((archive, statement)) = self.archive else {
            return Ok(None);
        };
        let position = archive.commit_with(statement, &self.position)?;
        if archive.sync_mode() == super::archive::SyncMode::Always {
            archive.wait_durable(position).await?;
        }
        match archive.rotate_if_full() {
            Ok(Some(seq)) => {
                let retain_before = stream.retain_before_us();
                tokio::task::spawn_blocking(move || {
                    if let Err(e) = archive.seal(seq) {
                        tracing::warn!("sealing a segment in {}: {e}", archive.dir.display());
                    } else if let Some(before_us) = retain_before {
                        archive.drop_segments_before(before_us);
                    }
                });
            }
            Ok(None) => {}
            Err(e) => tracing::warn!("starting a new log in {}: {e}", archive.dir.display()),
        }
        Ok(Some(position))
    }
}

/// A stream's ingest task: consumes its queue in order until the stream is dropped.
/// The queue of statements comes first; a COPY's speculative batches are folded only while
/// it is empty.
async fn ingest_task(
    stream: Arc<Stream>,
    mut rx: mpsc::Receiver<IngestMsg>,
    mut spec_rx: mpsc::Receiver<SpecMsg>,
) {
    let mut step = super::step::StepSize::default();
    // The latest heartbeat passed on so far: the archive keeps tuples, not heartbeats.
    let mut heartbeat_us: Option<i64> = None;
    let mut spec = Speculator::default();
    loop {
        let msg = tokio::select! {
            biased;
            msg = rx.recv() => match msg {
                Some(msg) => msg,
                None => return,
            },
            Some(s) = spec_rx.recv() => {
                spec.offered(&stream, s);
                continue;
            }
        };
        // Any message that moves a query's state makes a speculation stale.
        match &msg {
            IngestMsg::Batch(..) | IngestMsg::Attach(..) | IngestMsg::Barrier(_) => {}
            _ => spec.invalidate(),
        }
        match msg {
            IngestMsg::Batch(batch, _permit, tag) => {
                let skip = spec.committed(&stream, tag).await;
                // A plan made before the stream had a rate is re-planned for the observed
                // one if it has not consumed anything yet (exact, once per plan).
                let rate = stream.observed_rate_per_sec();
                let mut at = 0;
                while at < batch.len() {
                    let n = step.rows.min(batch.len() - at);
                    let piece = if n == batch.len() {
                        std::borrow::Cow::Borrowed(&batch)
                    } else {
                        std::borrow::Cow::Owned(batch.slice(at..at + n))
                    };
                    // The time the queries' steps took, without waiting for their readers.
                    let mut busy = std::time::Duration::ZERO;
                    run_queries(&stream, &skip.queries, |exec, out| {
                        let started = std::time::Instant::now();
                        if let Some(r) = rate {
                            exec.replan_unstarted(r)?;
                        }
                        let result = exec.push_batch(&piece, out);
                        busy += started.elapsed();
                        result
                    })
                    .await;
                    run_plans(&stream, &skip.plans, |agg, execs, outs| {
                        let started = std::time::Instant::now();
                        if let Some(r) = rate {
                            agg.replan_unstarted(r, execs)?;
                        }
                        let result = agg.push_batch(&piece, execs, outs);
                        busy += started.elapsed();
                        result
                    })
                    .await;
                    step.took(n, busy);
                    at += n;
                }
            }
            IngestMsg::Attach(q, Some(b)) => {
                spec.invalidate();
                let archive = stream
                    .archive
                    .clone()
                    .expect("a back-fill reads an archive");
                if replay(&stream, &q, &archive, b.from, b.seam, b.from_us).await {
                    // A heartbeat queued before the attachment (a tcq_advance during the
                    // replay) reaches the query after the tuples logged before it.
                    if let Some(t_us) = heartbeat_us {
                        let beat = &mut |exec: &mut QueryExec, out: &mut Vec<Event>| {
                            exec.heartbeat(t_us, out)
                        };
                        if !run_query(&stream, &q, beat).await {
                            continue;
                        }
                    }
                    if let Some(b) = q.backfill.lock().as_mut() {
                        b.finish();
                    }
                    step = super::step::StepSize::default();
                    stream.queries.lock().push(q);
                }
            }
            IngestMsg::Heartbeat(t_us) => {
                heartbeat_us = Some(heartbeat_us.map_or(t_us, |h| h.max(t_us)));
                run_queries(&stream, &[], |exec, out| exec.heartbeat(t_us, out)).await;
                run_plans(&stream, &[], |agg, execs, outs| {
                    agg.heartbeat(t_us, execs, outs)
                })
                .await
            }
            IngestMsg::Attach(q, None) => {
                // A new query may cost far more a tuple than those the step size was
                // learnt from: start again from small steps.
                step = super::step::StepSize::default();
                stream.queries.lock().push(q)
            }
            IngestMsg::Share(q, key, done) => {
                step = super::step::StepSize::default();
                let r = if q.is_closed() {
                    Ok(())
                } else {
                    join_plan(&stream, &q, key)
                };
                let _ = done.send(r);
            }
            IngestMsg::Barrier(ack) => {
                let _ = ack.send(());
            }
            IngestMsg::Drop => {
                for q in stream.queries.lock().drain(..) {
                    q.close();
                }
                for p in stream.plans.lock().drain(..) {
                    for q in p.state.lock().queries.drain(..) {
                        q.close();
                    }
                }
                return;
            }
        }
    }
}

/// Feed query `q` the committed batches of `stream`'s archive between log positions
/// `from` and `to`, at engine speed (files are read on a blocking thread). False when the
/// query has ended.
async fn replay(
    stream: &Arc<Stream>,
    q: &Arc<RunningQuery>,
    archive: &Arc<super::archive::StreamArchive>,
    from: super::archive::LogPos,
    to: super::archive::LogPos,
    from_us: Option<i64>,
) -> bool {
    // Three stages on their own threads, so that a back-fill uses every core: the archive
    // is decoded on one blocking thread, the query runs on another, and its rows are
    // encoded by its client's connection task. The channel bounds what is read ahead.
    let (tx, rx) =
        std::sync::mpsc::sync_channel::<crate::exec::columns::ColumnBatch>(REPLAY_READ_AHEAD);
    let (a, reading, source) = (archive.clone(), q.clone(), stream.clone());
    let reader = tokio::task::spawn_blocking(move || {
        a.read_range(from, to, from_us, &mut |b| {
            !reading.is_closed() && !source.dropped.load(Ordering::Acquire) && tx.send(b).is_ok()
        })
    });
    let (s, running) = (stream.clone(), q.clone());
    let handle = tokio::runtime::Handle::current();
    let executor = tokio::task::spawn_blocking(move || {
        for b in rx {
            if running.is_closed() || s.dropped.load(Ordering::Acquire) {
                return false;
            }
            let n = b.len() as u64;
            let batch = Batch::Columns(b);
            let step =
                &mut |exec: &mut QueryExec, out: &mut Vec<Event>| exec.push_batch(&batch, out);
            if !handle.block_on(run_query(&s, &running, step)) {
                return false;
            }
            if let Some(b) = running.backfill.lock().as_mut() {
                b.tuples += n;
            }
        }
        !running.is_closed() && !s.dropped.load(Ordering::Acquire)
    });
    let ran = executor.await;
    match (reader.await, ran) {
        // A file that cannot be read or is damaged ends the query: it must not answer
        // from part of the stream's data (see `archive::damaged`).
        (Ok(Err(e)), _) => {
            q.fail(e);
            false
        }
        (Ok(Ok(_)), Ok(ok)) => ok,
        (Err(e), _) | (_, Err(e)) => {
            q.fail(Error::Internal(format!("back-fill: {e}")));
            false
        }
    }
}

/// Run every query of `stream` one step and queue what each emits. Waits on a reader only
/// while it keeps reading (see `outq::deliver`).
///
/// `skip`: ids of queries not to run (their speculative fold covered this batch).
async fn run_queries(
    stream: &Arc<Stream>,
    skip: &[u64],
    mut step: impl FnMut(&mut QueryExec, &mut Vec<Event>) -> Result<()>,
) {
    let queries: Vec<Arc<RunningQuery>> = stream.queries.lock().clone();
    for q in queries {
        if q.is_closed() || skip.contains(&q.id) {
            continue;
        }
        if !run_query(stream, &q, &mut step).await {
            stream.queries.lock().retain(|x| x.id != q.id);
        }
    }
}

/// A shared plan's step over its members' executors and their event lists.
type PlanStep<'a> = dyn FnMut(
        &mut crate::exec::shared::SharedAgg,
        &mut [&mut QueryExec],
        &mut [Vec<Event>],
    ) -> Result<()>
    + 'a;

/// Run every shared plan of `stream` one step, queue each member's events, and remove the
/// members that ended (their nodes are pruned). `skip`: ids of plans not to run.
async fn run_plans(
    stream: &Arc<Stream>,
    skip: &[u64],
    mut step: impl FnMut(
        &mut crate::exec::shared::SharedAgg,
        &mut [&mut QueryExec],
        &mut [Vec<Event>],
    ) -> Result<()>,
) {
    let plans: Vec<Arc<PlanRun>> = stream.plans.lock().clone();
    for p in plans.into_iter().filter(|p| !skip.contains(&p.id)) {
        let step: &mut PlanStep = &mut step;
        let (queries, outs, result, done, errors) = {
            let mut st = p.state.lock();
            let st = &mut *st;
            let queries = st.queries.clone();
            let mut guards: Vec<_> = queries.iter().map(|q| q.exec.lock()).collect();
            let mut execs: Vec<&mut QueryExec> = guards.iter_mut().map(|g| &mut **g).collect();
            let mut outs = vec![Vec::new(); queries.len()];
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                step(&mut st.agg, &mut execs, &mut outs)
            }))
            .unwrap_or_else(|_| {
                Err(Error::Internal(format!(
                    "shared plan {} failed unexpectedly and was stopped",
                    p.id
                )))
            })
            .and_then(|()| {
                let agg = &st.agg;
                p.memory
                    .lock()
                    .charge(|| agg.state().state_bytes)
                    .map_err(|r| {
                        let ids: Vec<String> = queries.iter().map(|q| q.id.to_string()).collect();
                        let noun = if ids.len() == 1 { "query" } else { "queries" };
                        r.error(&format!(
                            "the state of shared plan {} ({noun} {})",
                            p.id,
                            ids.join(", ")
                        ))
                    })
            });
            let done: Vec<bool> = execs.iter().map(|e| e.is_done()).collect();
            drop(execs);
            drop(guards);
            let mut member_errors = st.agg.take_member_errors();
            let errors: Vec<Option<Error>> = queries
                .iter()
                .map(|q| {
                    let i = member_errors.iter().position(|(id, _)| *id == q.id)?;
                    Some(member_errors.swap_remove(i).1)
                })
                .collect();
            (queries, outs, result, done, errors)
        };
        deliver_plan(stream, &queries, outs, result, done, errors).await;
    }
}

/// Queue each member's events of a plan's step (`outs[i]` for `queries[i]`) and end the
/// members that failed (`result`: the plan's error, which ends all; `errors[i]`: the
/// member's own) or are done (`done[i]`); ended members leave the plan.
pub(super) async fn deliver_plan(
    stream: &Stream,
    queries: &[Arc<RunningQuery>],
    outs: Vec<Vec<Event>>,
    result: Result<()>,
    done: Vec<bool>,
    errors: Vec<Option<Error>>,
) {
    let mut ended = Vec::new();
    for (((q, out), done), error) in queries.iter().zip(outs).zip(done).zip(errors) {
        let mut ok = q.deliver(out, stream.output_stall).await;
        if let Err(e) = &result {
            q.fail(e.clone());
            ok = false;
        }
        if let Some(e) = error {
            // This member's own finalisation failed: it ends alone (see exec::shared).
            q.fail(e);
            ok = false;
        }
        if !ok || done || q.is_closed() {
            q.close();
            ended.push(q.id);
        }
    }
    for id in ended {
        leave_plans(stream, id);
    }
}

/// Run query `q` one step and queue what it emits; false when the query has ended (failed,
/// its reader fell behind, or it is done) and is closed.
async fn run_query(
    stream: &Arc<Stream>,
    q: &Arc<RunningQuery>,
    step: &mut impl FnMut(&mut QueryExec, &mut Vec<Event>) -> Result<()>,
) -> bool {
    {
        let mut out = Vec::new();
        let (result, done) = {
            let mut exec = q.exec.lock();
            // A bug in one query's executor must not take the stream (or the server) down:
            // it ends that query with an internal error instead.
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                step(&mut exec, &mut out)
            }))
            .unwrap_or_else(|_| {
                Err(Error::Internal(format!(
                    "query {} failed unexpectedly and was stopped",
                    q.id
                )))
            })
            .and_then(|()| {
                q.memory
                    .lock()
                    .charge(|| exec.state().state_bytes)
                    .map_err(|r| r.error(&format!("the state of query {}", q.id)))
            });
            (r, exec.is_done())
        };
        deliver_query(stream, q, out, result, done).await
    }
}

/// Queue the events `out` of query `q`'s step and end it when the step failed (`result`),
/// its reader fell behind, or it is `done`; false when it has ended and is closed.
pub(super) async fn deliver_query(
    stream: &Stream,
    q: &Arc<RunningQuery>,
    out: Vec<Event>,
    result: Result<()>,
    done: bool,
) -> bool {
    let mut ok = q.deliver(out, stream.output_stall).await;
    if let Err(e) = result {
        q.fail(e);
        ok = false;
    }
    if !ok || done {
        q.close();
        return false;
    }
    true
}

/// First OID handed to a stream, as PostgreSQL's first user OID.
pub(crate) const FIRST_OID: u32 = 16384;

impl SchemaProvider for Catalog {
    fn stream(&self, name: &str) -> Option<(Vec<Column>, Option<usize>)> {
        self.streams
            .read()
            .get(name)
            .map(|s| (s.columns.clone(), s.ts_col))
    }

    fn system_view(&self, name: &str) -> Option<Vec<Column>> {
        super::views::system_view_columns(name.strip_prefix("pg_catalog.").unwrap_or(name))
    }

    fn table(&self, name: &str) -> Option<crate::sql::TableInfo> {
        self.tables.read().get(name).map(|t| crate::sql::TableInfo {
            columns: t.columns.to_vec(),
            defaults: t.defaults.clone(),
            keys: t.keys.iter().map(|k| k.columns.clone()).collect(),
            key_names: t.keys.iter().map(|k| k.name.clone()).collect(),
        })
    }

    fn stream_names(&self) -> Vec<String> {
        self.streams.read().keys().cloned().collect()
    }

    fn relations(&self) -> Option<&dyn crate::sql::RelationProvider> {
        Some(self)
    }
}

/// Schemas that belong to the system: a stream may not be created in them (42501), as
/// PostgreSQL refuses user relations in its catalogs.
pub(crate) fn check_schema_writable(name: &str) -> Result<()> {
    let Some((schema, _)) = name.rsplit_once('.') else {
        return Ok(());
    };
    let schema = schema.trim_matches('"');
    if schema.starts_with("pg_") || schema == "information_schema" {
        return Err(Error::InsufficientPrivilege(format!(
            "permission denied to create \"{name}\": schema \"{schema}\" is a system schema"
        )));
    }
    Ok(())
}
