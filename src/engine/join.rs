//! Join queries in the engine: one executor fed by several streams, in acceptance order.
//!
//! A single-stream query runs inside its stream's ingest task. A join reads several streams,
//! so it gets its own task and its own bounded input queue (its *feed*). Each stream keeps
//! the feeds of the joins that read it, and a statement's batch is put on those feeds when
//! the statement is accepted ([`forward_batch`], called by the catalog while the statement
//! holds its stream's enqueue order). So the join sees the statements of all its streams in
//! the order the server accepted them — `INSERT INTO a ...; INSERT INTO b ...` from one
//! client reaches the join in that order — whatever the streams' ingest tasks are doing.
//!
//! Design decision: the stream holds the only strong senders of a feed; the registry keeps
//! a weak one for barriers. Dropping the subscription removes the feeds from the streams, so
//! the feed closes and the join's task ends without a cycle keeping it alive.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use tokio::sync::{mpsc, oneshot};

use super::catalog::Stream;
use super::session::resolve_window;
use super::{Engine, Subscription};
use crate::error::{Error, Result};
use crate::exec::{Batch, Event, ExecLimits, JoinExec, JoinInputPlan, MultiJoin};
use crate::sql::{Query, Source};
use crate::types::{DataType, Value};
use crate::window::Start;

/// Messages a join's task consumes, in order.
pub(crate) enum JoinMsg {
    /// A batch of the join's stream number `.0`.
    Batch(usize, Arc<Batch>),
    /// Stream `.0`'s time moved to `.1` without tuples.
    Heartbeat(usize, i64),
    /// Acknowledge once everything before has been processed.
    Barrier(oneshot::Sender<()>),
    /// A stream of the join was dropped: end the query after what is queued.
    End,
}

/// One unit of work for a join's executor, run on its task.
type Step = Box<dyn FnOnce(&mut MultiJoin, &mut Vec<Event>) -> Result<()> + Send>;

/// Batches a join's feed holds before the statements feeding it wait.
const FEED_BATCHES: usize = 4;

/// A stream's link to a join reading it.
#[derive(Clone)]
pub(crate) struct JoinFeed {
    /// The join query's id.
    pub(crate) id: u64,
    /// Which of the join's streams this is.
    pub(crate) stream: usize,
    pub(crate) tx: mpsc::Sender<JoinMsg>,
}

/// A registered join query.
pub(crate) struct JoinQuery {
    pub(crate) id: u64,
    pub(crate) text: String,
    /// The session that registered it (`pg_cancel_backend` of it cancels the join).
    pub(crate) pid: Option<i32>,
    /// The join's distinct streams, by name, in the order of [`JoinExec::stream_times`].
    pub(crate) streams: Vec<String>,
    /// The stored tables a stream-table join reads at each slide event.
    pub(crate) tables: Vec<String>,
    pub(crate) exec: Mutex<MultiJoin>,
    tx: Mutex<Option<super::outq::OutSender>>,
    /// `Limits::output_stall_timeout`.
    output_stall: std::time::Duration,
    failure: Arc<Mutex<Option<Error>>>,
    feed: mpsc::WeakSender<JoinMsg>,
    /// The join's state as charged to the memory budget.
    memory: Mutex<super::memory::StateMeter>,
}

impl JoinQuery {
    fn fail(&self, error: Error) {
        self.failure.lock().get_or_insert(error);
        self.close();
    }

    fn close(&self) {
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

/// Registered joins by id.
pub(crate) type JoinRegistry = Mutex<HashMap<u64, Arc<JoinQuery>>>;

/// Put a batch accepted into `stream` on the feed of every join reading it.
pub(crate) async fn forward_batch(stream: &Stream, batch: &Batch) {
    let feeds: Vec<JoinFeed> = stream.joins.lock().clone();
    if feeds.is_empty() {
        return;
    }
    // A columnar batch (COPY) is shared as it is (its arrays are reference-counted): each
    // join reads it as rows on its own task, or reads its key columns directly.
    let shared = Arc::new(batch.clone());
    for f in feeds {
        // A join that ended has dropped its feed; nothing is lost by skipping it.
        let _ = f.tx.send(JoinMsg::Batch(f.stream, shared.clone())).await;
    }
}

/// Move `stream`'s time in every join reading it (`tcq_advance`).
pub(crate) async fn forward_heartbeat(stream: &Stream, t_us: i64) {
    let feeds: Vec<JoinFeed> = stream.joins.lock().clone();
    for f in feeds {
        let _ = f.tx.send(JoinMsg::Heartbeat(f.stream, t_us)).await;
    }
}

/// The server clock's heartbeat for an idle stream stamped on arrival; skipped when a
/// feed is full (the next tick will carry a later time anyway).
pub(crate) fn try_forward_heartbeat(stream: &Stream, t_us: i64) {
    for f in stream.joins.lock().iter() {
        let _ = f.tx.try_send(JoinMsg::Heartbeat(f.stream, t_us));
    }
}

/// A stream was dropped: every join reading it ends after what it has queued.
pub(crate) async fn end_joins(stream: &Stream) {
    let feeds: Vec<JoinFeed> = std::mem::take(&mut *stream.joins.lock());
    for f in feeds {
        let _ = f.tx.send(JoinMsg::End).await;
    }
}

/// Unregisters a join when its subscription is dropped.
struct JoinGuard {
    streams: Vec<Weak<Stream>>,
    registry: Weak<JoinRegistry>,
    query: Weak<JoinQuery>,
    id: u64,
}

impl Drop for JoinGuard {
    fn drop(&mut self) {
        for s in self.streams.iter().filter_map(Weak::upgrade) {
            s.joins.lock().retain(|f| f.id != self.id);
        }
        if let Some(q) = self.query.upgrade() {
            q.close();
        }
        if let Some(r) = self.registry.upgrade() {
            r.lock().remove(&self.id);
        }
    }
}

/// The executor of join `q`, its distinct streams, and each input's display name. A join
/// with a multi-window input gets one [`JoinExec`] per window of it, in the order written.
pub(crate) fn build(
    engine: &Engine,
    q: Query,
    params: &[Value],
) -> Result<(MultiJoin, Vec<Arc<Stream>>, Vec<String>)> {
    let Source::Join { inputs, .. } = &q.source else {
        return Err(Error::Internal("a join query reads a join".into()));
    };
    let multi = inputs.iter().position(|i| !i.more_windows.is_empty());
    let Some(m) = multi else {
        let (exec, streams, names) = build_one(engine, q, params, None, &[])?;
        return Ok((MultiJoin::new(vec![exec], None), streams, names));
    };
    let limit = q.limit;
    let windows: Vec<_> = std::iter::once(inputs[m].window)
        .chain(inputs[m].more_windows.iter().copied())
        .collect();
    let all = windows.clone();
    let mut joins = Vec::with_capacity(windows.len());
    let mut streams = Vec::new();
    let mut names = Vec::new();
    for w in windows {
        let mut one = q.clone();
        one.limit = None;
        if let Source::Join { inputs, .. } = &mut one.source {
            inputs[m].window = w;
            inputs[m].more_windows.clear();
        }
        let (exec, s, n) = build_one(engine, one, params, Some(m), &all)?;
        joins.push(exec);
        streams = s;
        names = n;
    }
    Ok((MultiJoin::new(joins, limit), streams, names))
}

/// The executor of a join with one window per input; `meta_input` as
/// [`JoinExec::new_for_window`]. `all_windows`: every window of the multi-window input
/// (its stream's time takes the largest SLACK among them, as in a single-stream query).
fn build_one(
    engine: &Engine,
    q: Query,
    params: &[Value],
    meta_input: Option<usize>,
    all_windows: &[crate::sql::WindowSpec],
) -> Result<(JoinExec, Vec<Arc<Stream>>, Vec<String>)> {
    let Source::Join { inputs, tables } = &q.source else {
        return Err(Error::Internal("a join query reads a join".into()));
    };
    let has_tables = !tables.is_empty();
    let now = crate::time::now_us();
    let mut streams: Vec<Arc<Stream>> = Vec::new();
    let mut plans = Vec::with_capacity(inputs.len());
    let mut names = Vec::with_capacity(inputs.len());
    for input in inputs {
        let stream = engine.catalog.stream(&input.stream)?;
        let idx = match streams.iter().position(|s| s.name == stream.name) {
            Some(i) => i,
            None => {
                streams.push(stream);
                streams.len() - 1
            }
        };
        let (window, cutoff) = resolve_window(&input.window, now)?;
        let first_index = match (window.start, cutoff) {
            (Start::At(_), _) => 0,
            // A default START AT: the first instance starting at or after the cut-off.
            (Start::Epoch, Some(c)) => {
                (c as i128 + window.slide_us as i128 - 1).div_euclid(window.slide_us as i128) as i64
            }
            (Start::Epoch, None) => i64::MIN,
        };
        plans.push(JoinInputPlan {
            window,
            first_index,
            stream: idx,
        });
        names.push(if input.alias == input.stream {
            input.stream.clone()
        } else {
            format!("{} AS {}", input.stream, input.alias)
        });
    }
    let mut slacks = vec![Vec::new(); streams.len()];
    for (input, plan) in inputs.iter().zip(&plans) {
        slacks[plan.stream].push(input.window);
    }
    if let Some(m) = meta_input {
        slacks[plans[m].stream].extend_from_slice(all_windows);
    }
    let tz = streams.iter().any(|s| {
        s.ts_col
            .is_none_or(|c| s.columns[c].data_type == DataType::TimestampTz)
    });
    let limits = engine.limits();
    // A stream-table join runs the join of its streams, then its table stage at each event.
    let (q, stage) = if has_tables {
        let (inner, stage) = crate::exec::table_join::split(
            q,
            engine.catalog.table_reader(),
            params.to_vec(),
            limits.groups_max,
            limits.live_tuples_max,
        )?;
        (inner, Some(stage))
    } else {
        (q, None)
    };
    let mut exec = JoinExec::new_for_window(
        q,
        plans,
        streams.len(),
        params.to_vec(),
        tz,
        ExecLimits {
            groups_max: limits.groups_max,
            open_instances_max: limits.open_instances_max,
            empty_slide_events_max: limits.empty_slide_events_max,
            distinct_values_max: limits.distinct_values_max,
            coalesce_bytes: limits.output_queue_bytes / 64,
        },
        limits.live_tuples_max,
        meta_input,
    )?;
    if let Some(stage) = stage {
        exec.set_table_stage(stage)?;
    }
    for (i, (s, windows)) in streams.iter().zip(&slacks).enumerate() {
        exec.set_slack(i, super::session::query_slack_us(windows, s.slack_us));
    }
    Ok((exec, streams, names))
}

/// EXPLAIN of a join: its inputs, windows, probe order and hash keys.
pub(crate) fn explain(engine: &Engine, q: Query, params: &[Value]) -> Result<Vec<String>> {
    let Source::Join { inputs, tables } = &q.source else {
        return Err(Error::Internal("a join query reads a join".into()));
    };
    let columns: Vec<String> = inputs
        .iter()
        .flat_map(|i| i.columns.iter().map(|c| format!("{}.{}", i.alias, c.name)))
        .collect();
    // The full row of a stream-table join: every relation's columns at its offset.
    let mut full: Vec<(usize, String)> = inputs
        .iter()
        .flat_map(|i| {
            i.columns
                .iter()
                .enumerate()
                .map(|(k, c)| (i.offset + k, format!("{}.{}", i.alias, c.name)))
        })
        .chain(tables.iter().flat_map(|t| {
            t.columns
                .iter()
                .enumerate()
                .map(|(k, c)| (t.offset + k, format!("{}.{}", t.alias, c.name)))
        }))
        .collect();
    full.sort();
    let full: Vec<String> = full.into_iter().map(|(_, n)| n).collect();
    let multi = inputs.iter().position(|i| !i.more_windows.is_empty());
    let (exec, _, names) = build(engine, q.clone(), params)?;
    // The relation the aggregates allow over the multi-window input's windows.
    let windows: Vec<_> = multi.map(|m| exec.input_windows(m)).unwrap_or_default();
    let sharing = crate::exec::query::sharing_of_query(&q, &windows);
    Ok(exec.explain(&names, &columns, &full, multi, sharing))
}

/// Register join `q` and return its subscription.
pub(crate) async fn register(
    engine: &Arc<Engine>,
    q: Query,
    params: &[Value],
    overflow: super::Overflow,
    pid: Option<i32>,
) -> Result<Subscription> {
    let columns = q.columns.clone();
    let text = q.text.clone();
    let tables = match &q.source {
        Source::Join { tables, .. } => tables.iter().map(|t| t.table.clone()).collect(),
        _ => Vec::new(),
    };
    let (exec, streams, _) = build(engine, q, params)?;
    let limits = engine.limits();
    let registered = engine.catalog.queries.lock().len() + engine.catalog.joins.lock().len();
    if registered >= limits.queries_max {
        return Err(Error::ProgramLimitExceeded(format!(
            "more than {} continuous queries (queries_max)",
            limits.queries_max
        )));
    }
    let id = engine
        .catalog
        .next_query_id
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let (out_tx, out_rx) =
        super::outq::output_queue(limits.output_queue_bytes, overflow, &engine.catalog.memory);
    let (feed_tx, feed_rx) = mpsc::channel(FEED_BATCHES);
    let failure = Arc::new(Mutex::new(None));
    let done = exec.is_done();
    let query = Arc::new(JoinQuery {
        id,
        text,
        pid,
        streams: streams.iter().map(|s| s.name.clone()).collect(),
        tables,
        exec: Mutex::new(exec),
        tx: Mutex::new((!done).then_some(out_tx)),
        output_stall: limits.output_stall_timeout,
        failure: failure.clone(),
        feed: feed_tx.downgrade(),
        memory: Mutex::new(super::memory::StateMeter::new(&engine.catalog.memory)),
    });
    engine.catalog.joins.lock().insert(id, query.clone());
    tokio::spawn(join_task(query.clone(), feed_rx));
    for (i, s) in streams.iter().enumerate() {
        s.joins.lock().push(JoinFeed {
            id,
            stream: i,
            tx: feed_tx.clone(),
        });
    }
    let guard = JoinGuard {
        streams: streams.iter().map(Arc::downgrade).collect(),
        registry: Arc::downgrade(&engine.catalog.joins),
        query: Arc::downgrade(&query),
        id,
    };
    Ok(Subscription {
        columns,
        rx: out_rx,
        guard: Some(Box::new(guard)),
        query_id: id,
        failure: Some(failure),
    })
}

/// A join's task: runs its executor over the feed, in order, until the feed closes.
async fn join_task(q: Arc<JoinQuery>, mut rx: mpsc::Receiver<JoinMsg>) {
    while let Some(msg) = rx.recv().await {
        let step: Step = match msg {
            JoinMsg::Batch(s, batch) => Box::new(move |e, out| e.push_batch(s, &batch, out)),
            JoinMsg::Heartbeat(s, t) => Box::new(move |e, out| e.heartbeat(s, t, out)),
            JoinMsg::Barrier(ack) => {
                let _ = ack.send(());
                continue;
            }
            JoinMsg::End => {
                q.close();
                continue;
            }
        };
        if q.tx.lock().is_none() {
            continue;
        }
        run_step(&q, step).await;
    }
}

/// Run one step of the executor and queue its output; a full queue waits only while its
/// reader keeps reading (see `outq::deliver`), else the query ends with 54000.
async fn run_step(q: &JoinQuery, step: Step) {
    let mut out = Vec::new();
    let (result, done) = {
        let mut exec = q.exec.lock();
        // A bug in the executor ends this query, not the server.
        let r =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| step(&mut exec, &mut out)))
                .unwrap_or_else(|_| {
                    Err(Error::Internal(format!(
                        "query {} failed unexpectedly and was stopped",
                        q.id
                    )))
                })
                .and_then(|()| {
                    q.memory
                        .lock()
                        .charge(|| exec.state_bytes())
                        .map_err(|r| r.error(&format!("the state of query {}", q.id)))
                });
        (r, exec.is_done())
    };
    if q.tx.lock().is_none() {
        return;
    }
    let full = super::outq::deliver(&q.tx, out, q.output_stall).await;
    if let Some(full) = full {
        tracing::info!(
            query = q.id,
            "slow client: its query's output queue reached {} bytes; ending the query",
            full.bytes_max
        );
        q.fail(Error::ProgramLimitExceeded(format!(
            "query {} ended: its client fell behind and its output queue reached output_queue_bytes ({} bytes)",
            q.id, full.bytes_max
        )));
        return;
    }
    if let Err(e) = result {
        q.fail(e);
    } else if done {
        q.close();
    }
}
