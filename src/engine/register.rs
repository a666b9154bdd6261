//! Registering a continuous query, in one place for both kinds: a single-stream query is
//! resolved (windows, START AT), planned (`build_exec`) and attached to its stream's ingest
//! task, alone or in a shared plan ([`attach`]); a join is built (`join::build`) and gets a
//! task and feeds of its own ([`register_join`]). Both take their id from the registry's
//! one `admit`, so `queries_max` counts them together, and both end when their
//! subscription is dropped (the guards here unregister them).
//!
//! Clients (`Session::subscribe`, which also counts `queries_per_connection_max`), EXPLAIN
//! ANALYZE and the queries that run without a client (derived streams, sinks) all come
//! through here.

use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use tokio::sync::mpsc;

use super::catalog::{QueryGuard, Stream};
use super::fanout::JoinFeed;
use super::outq::Overflow;
use super::registry::{JoinQuery, QueryRegistry, RunningQuery};
use super::resolve::{query_slack_us, resolve_window, ResolvedWindows};
use super::{Engine, Subscription};
use crate::error::{Error, Result};
use crate::exec::{plan_windows, ExecLimits, QueryExec};
use crate::sql::{Query, Source, StartSpec, WindowSpec};
use crate::types::{Column, DataType, Value};
use crate::window::Window;

/// The stream a continuous query reads and its windows, resolved now.
pub(crate) fn resolve(engine: &Engine, q: &Query) -> Result<(Arc<Stream>, ResolvedWindows)> {
    let Source::Stream { name, .. } = &q.source else {
        return Err(Error::Internal("a continuous query reads a stream".into()));
    };
    let stream = engine.catalog.stream(name)?;
    let now = crate::time::now_us();
    let windows = q
        .windows
        .iter()
        .map(|w| resolve_window(w, now))
        .collect::<Result<Vec<_>>>()?;
    Ok((stream, windows))
}

/// The executor for `q` with its plan, ready to register.
pub(crate) fn build_exec(
    engine: &Engine,
    q: Query,
    params: &[Value],
    stream: &Stream,
    resolved: Vec<(Window, Option<i64>)>,
    eta: Option<f64>,
) -> Result<QueryExec> {
    let (windows, cutoffs): (Vec<Window>, Vec<Option<i64>>) = resolved.into_iter().unzip();
    let slack_us = query_slack_us(&q.windows, stream.slack_us);
    let limits = engine.limits();
    let eta = eta.unwrap_or_else(|| stream.event_rate_per_sec());
    let plan = plan_windows(&q, &windows, eta);
    let tz = stream
        .ts_col
        .is_none_or(|c| stream.columns[c].data_type == DataType::TimestampTz);
    let exec_limits = ExecLimits {
        groups_max: limits.groups_max,
        open_instances_max: limits.open_instances_max,
        empty_slide_events_max: limits.empty_slide_events_max,
        distinct_values_max: limits.distinct_values_max,
        coalesce_bytes: limits.output_queue_bytes / 64,
    };
    let mut exec = QueryExec::new(
        q,
        windows,
        cutoffs,
        plan,
        params.to_vec(),
        tz,
        exec_limits,
        limits.live_tuples_max,
    )?;
    exec.set_slack(slack_us);
    exec.set_planned_rate(eta);
    Ok(exec)
}

/// Where a query over an archived stream starts its back-fill: `Some(from)` when one of
/// its windows has an explicit START AT (`from` = the earliest, `None` for 'epoch') that
/// lies before the stream's current time; `None` when it does not back-fill.
fn backfill_from(stream: &Stream, windows: &[WindowSpec]) -> Option<Option<i64>> {
    stream.archive.as_ref()?;
    let now = stream.stats.lock().now_us?;
    let mut from: Option<Option<i64>> = None;
    for w in windows {
        let start = match w.start {
            StartSpec::Default => continue,
            StartSpec::Epoch => None,
            StartSpec::At(t) if t <= now => Some(t),
            StartSpec::At(_) => continue,
        };
        from = Some(match (from, start) {
            (None, s) => s,
            (Some(None), _) | (_, None) => None,
            (Some(Some(a)), Some(b)) => Some(a.min(b)),
        });
    }
    from
}

/// Register continuous query `q` (either kind) for session `pid` and return its
/// subscription; `share`: it may join a shared plan of its stream.
pub(crate) async fn register(
    engine: &Arc<Engine>,
    q: Query,
    params: &[Value],
    overflow: Overflow,
    pid: Option<i32>,
    share: bool,
) -> Result<Subscription> {
    if matches!(q.source, Source::Join { .. }) {
        return register_join(engine, q, params, overflow, pid).await;
    }
    let (stream, windows) = resolve(engine, &q)?;
    let columns = q.columns.clone();
    let text = q.text.clone();
    let backfill = backfill_from(&stream, &q.windows);
    let exec = build_exec(engine, q, params, &stream, windows, None)?;
    attach(
        engine, &stream, exec, text, columns, overflow, pid, backfill, share,
    )
    .await
}

/// Attach a built executor to its stream and return the subscription. With `backfill`
/// (`Some(from_us)`) the query first replays the stream's archive
/// (see `Stream::attach_with_backfill`).
// The query, where its rows go and how it starts: each argument is used once.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn attach(
    engine: &Arc<Engine>,
    stream: &Arc<Stream>,
    exec: QueryExec,
    text: String,
    columns: Vec<Column>,
    overflow: Overflow,
    pid: Option<i32>,
    backfill: Option<Option<i64>>,
    share: bool,
) -> Result<Subscription> {
    let limits = engine.limits();
    let id = engine.catalog.queries().admit(limits.queries_max)?;
    let (tx, rx) =
        super::outq::output_queue(limits.output_queue_bytes, overflow, engine.catalog.memory());
    let done = exec.is_done();
    let failure = Arc::new(parking_lot::Mutex::new(None));
    let running = Arc::new(RunningQuery {
        columns: columns.clone(),
        taps: parking_lot::Mutex::new(Vec::new()),
        failure: failure.clone(),
        id,
        text,
        pid,
        exec: parking_lot::Mutex::new(exec),
        tx: parking_lot::Mutex::new(Some(tx)),
        backfill: parking_lot::Mutex::new(None),
        plan_id: std::sync::atomic::AtomicU64::new(0),
        memory: parking_lot::Mutex::new(super::memory::StateMeter::new(engine.catalog.memory())),
        flink: parking_lot::Mutex::new(None),
    });
    if done {
        // LIMIT 0: the query ends before it starts.
        running.close();
    }
    // Dropped on an error below, it takes the query out of the stream and its plans.
    let guard = QueryGuard {
        stream: Arc::downgrade(stream),
        registry: Arc::downgrade(engine.catalog.queries()),
        id,
    };
    // A query that back-fills from the archive runs alone: it replays tuples no shared
    // plan sees.
    let key = if share && backfill.is_none() {
        crate::exec::shared::share_key(&running.exec.lock())
    } else {
        None
    };
    let listed = running.clone();
    match (backfill, key) {
        (None, Some(key)) => stream.attach_shared(running, key).await?,
        (None, None) => stream.attach(running).await?,
        (Some(from_us), _) => stream.attach_with_backfill(running, from_us).await?,
    }
    // Listed in tcq_queries only once its attachment is in the stream's queue: a client
    // that sees the query there and then inserts is sure the query sees those rows (listed
    // before, an INSERT could overtake the attachment and be missed).
    engine.catalog.queries().insert(listed, stream.name.clone());
    Ok(Subscription {
        columns,
        rx,
        guard: Some(Box::new(guard)),
        query_id: id,
        failure: Some(failure),
    })
}

/// Register join `q` and return its subscription.
pub(crate) async fn register_join(
    engine: &Arc<Engine>,
    q: Query,
    params: &[Value],
    overflow: Overflow,
    pid: Option<i32>,
) -> Result<Subscription> {
    let columns = q.columns.clone();
    let text = q.text.clone();
    let tables = match &q.source {
        Source::Join { tables, .. } => tables.iter().map(|t| t.table.clone()).collect(),
        _ => Vec::new(),
    };
    let (exec, streams, _) = super::join::build(engine, q, params)?;
    let limits = engine.limits();
    let id = engine.catalog.queries().admit(limits.queries_max)?;
    let (out_tx, out_rx) =
        super::outq::output_queue(limits.output_queue_bytes, overflow, engine.catalog.memory());
    let (feed_tx, feed_rx) = mpsc::channel(super::join::FEED_BATCHES);
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
        memory: Mutex::new(super::memory::StateMeter::new(engine.catalog.memory())),
    });
    engine.catalog.queries().insert_join(query.clone());
    tokio::spawn(super::join::join_task(query.clone(), feed_rx));
    for (i, s) in streams.iter().enumerate() {
        s.joins.add(JoinFeed {
            id,
            stream: i,
            tx: feed_tx.clone(),
        });
    }
    let guard = JoinGuard {
        streams: streams.iter().map(Arc::downgrade).collect(),
        registry: Arc::downgrade(engine.catalog.queries()),
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

/// Unregisters a join when its subscription is dropped.
struct JoinGuard {
    streams: Vec<Weak<Stream>>,
    registry: Weak<QueryRegistry>,
    query: Weak<JoinQuery>,
    id: u64,
}

impl Drop for JoinGuard {
    fn drop(&mut self) {
        for s in self.streams.iter().filter_map(Weak::upgrade) {
            s.joins.remove(self.id);
        }
        if let Some(q) = self.query.upgrade() {
            q.close();
        }
        if let Some(r) = self.registry.upgrade() {
            r.remove(self.id);
        }
    }
}
