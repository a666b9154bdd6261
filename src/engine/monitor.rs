//! What the server is doing, as data: the streams, the registered queries with their
//! counters and state, a running query's plan with its measured work, and cancelling a
//! query. The web console and `/metrics` read this; it is the same information as the
//! system views `tcq_streams` and `tcq_queries`, in a typed form.
//!
//! Design decision: snapshots are taken without passing a barrier through the streams'
//! queues (as the system views do), so a console polling every second never waits behind
//! ingest; a snapshot may lag the last accepted statement by one batch.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::mpsc;

use super::backends::Signal;
use super::Engine;
use crate::exec::{QueryStats, StateSummary};
use crate::types::{Column, Value};

/// Slide events a live tail buffers; a reader further behind misses events (counted).
pub(crate) const TAIL_EVENTS_BUFFERED: usize = 64;

/// A live copy of a registered query's rows ([`Engine::tail_query`]). The query's own
/// reader is unaffected: a tail never slows the query down, and a tail that falls more than
/// [`TAIL_EVENTS_BUFFERED`] slide events or `Limits::output_queue_bytes` of rows behind
/// misses events, counted in [`QueryTail::missed`]. Dropping it ends the tail.
pub(crate) struct QueryTail {
    /// The query's result columns.
    pub(crate) columns: Vec<Column>,
    rx: mpsc::Receiver<Vec<Vec<Value>>>,
    missed: Arc<AtomicU64>,
    queued_bytes: Arc<AtomicUsize>,
}

impl QueryTail {
    /// The rows of the query's next slide event (or of a batch of pass-through tuples);
    /// `None` once the query has ended.
    pub(crate) async fn next(&mut self) -> Option<Vec<Vec<Value>>> {
        let rows = self.rx.recv().await?;
        self.queued_bytes
            .fetch_sub(super::outq::rows_bytes(&rows), Ordering::AcqRel);
        Some(rows)
    }

    /// Slide events missed so far because the tail's reader fell behind.
    pub(crate) fn missed(&self) -> u64 {
        self.missed.load(Ordering::Relaxed)
    }
}

/// One declared stream, now.
#[derive(Clone, Debug)]
pub(crate) struct StreamInfo {
    /// The stream's name.
    pub(crate) name: String,
    /// Its columns, in order.
    pub(crate) columns: Vec<Column>,
    /// The TIMESTAMPCOLUMN's name; `None` for a stream stamped on arrival.
    pub(crate) timestamp_column: Option<String>,
    /// `ARCHIVED` or `UNARCHIVED`.
    pub(crate) archived: bool,
    /// Tuples accepted since the stream was created.
    pub(crate) tuples: u64,
    /// The highest timestamp accepted (microseconds since the Unix epoch), once any.
    pub(crate) now_us: Option<i64>,
    /// Continuous queries reading it (joins included).
    pub(crate) queries: usize,
    /// Late tuples counted by the queries that read it now, summed (a tuple late for two
    /// queries counts twice).
    pub(crate) late_tuples: u64,
    /// Bytes of an archived stream's files on disk (`None`: not archived on a data
    /// directory), as `tcq_streams.disk_bytes`.
    pub(crate) disk_bytes: Option<u64>,
    /// An archived stream's retention, microseconds (`None`: keeps everything).
    pub(crate) retention_us: Option<i64>,
    /// The source feeding it, if it has one.
    pub(crate) source: Option<SourceInfo>,
}

/// One stored table, now.
#[derive(Clone, Debug)]
pub(crate) struct TableInfo {
    /// The table's name.
    pub(crate) name: String,
    /// Its columns, in order.
    pub(crate) columns: Vec<Column>,
    /// The PRIMARY KEY's columns (empty without one).
    pub(crate) primary_key: Vec<String>,
    /// Rows it holds.
    pub(crate) rows: usize,
}

/// A stream's source, now: its connector and status (as `tcq_sources` shows them).
#[derive(Clone, Debug)]
pub(crate) struct SourceInfo {
    /// `kafka`, `mqtt` or `file`.
    pub(crate) connector: &'static str,
    /// State and counters.
    pub(crate) status: crate::connect::SourceStatus,
}

/// One registered continuous query, now.
#[derive(Clone, Debug)]
pub(crate) struct QueryInfo {
    /// The id `tcq_queries` shows.
    pub(crate) id: u64,
    /// The statement's text.
    pub(crate) text: String,
    /// The session that registered it (its backend id); `None` for EXPLAIN ANALYZE's own
    /// run.
    pub(crate) pid: Option<i32>,
    /// The streams it reads.
    pub(crate) streams: Vec<String>,
    /// Its counters (tuples in, rows out, late tuples, slide events, current time).
    pub(crate) stats: QueryStats,
    /// What it holds between slide events (zero for a join, which does not report it; for
    /// a member of a cross-query shared plan, the whole plan's, shared with its other
    /// members).
    pub(crate) state: StateSummary,
    /// Whether it runs along a window coverage graph ([`Engine::query_plan_json`] has a
    /// plan for it).
    pub(crate) has_plan: bool,
    /// `stream d` or `sink k` for the query of a derived stream or sink; `None` for a
    /// client's.
    pub(crate) feeds: Option<String>,
    /// The Flink job computing its rows and the job's state (`tcq_flink_attach`).
    pub(crate) flink: Option<(String, String)>,
}

impl Engine {
    /// Every stream, by name.
    pub(crate) fn stream_infos(&self) -> Vec<StreamInfo> {
        let mut streams: Vec<_> = self.catalog.streams_read().values().cloned().collect();
        streams.sort_by(|a, b| a.name.cmp(&b.name));
        streams
            .into_iter()
            .map(|s| {
                let stats = s.stats.lock().clone();
                let mut queries: Vec<_> = s.queries.lock().clone();
                // Members of shared plans (the plan's lock is released before theirs).
                let plans: Vec<_> = s.plans.lock().clone();
                for p in plans {
                    let members = p.state.lock().queries.clone();
                    queries.extend(members);
                }
                let late_tuples = queries
                    .iter()
                    .map(|q| q.exec.lock().stats().late_tuples)
                    .sum();
                StreamInfo {
                    name: s.name.clone(),
                    columns: s.columns.clone(),
                    timestamp_column: s.ts_col.map(|i| s.columns[i].name.clone()),
                    archived: s.archived,
                    tuples: stats.tuples,
                    now_us: stats.now_us,
                    queries: queries.len() + s.joins.len(),
                    late_tuples,
                    disk_bytes: s.archive.as_ref().map(|a| a.disk_bytes()),
                    retention_us: *s.retention_us.lock(),
                    source: s.source.lock().as_ref().map(|src| SourceInfo {
                        connector: src.spec.connector.name(),
                        status: src.status(),
                    }),
                }
            })
            .collect()
    }

    /// Every stored table, by name.
    pub(crate) fn table_infos(&self) -> Vec<TableInfo> {
        let mut tables: Vec<_> = self.catalog.tables_read().values().cloned().collect();
        tables.sort_by(|a, b| a.name.cmp(&b.name));
        tables
            .into_iter()
            .map(|t| TableInfo {
                name: t.name.clone(),
                columns: t.columns.to_vec(),
                primary_key: t
                    .keys
                    .iter()
                    .filter(|k| k.primary)
                    .flat_map(|k| k.columns.iter().map(|&c| t.columns[c].name.clone()))
                    .collect(),
                rows: t.len(),
            })
            .collect()
    }

    /// Every registered continuous query, by id.
    pub(crate) fn query_infos(&self) -> Vec<QueryInfo> {
        let mut all: Vec<QueryInfo> = self
            .catalog
            .queries()
            .queries()
            .iter()
            .map(|(q, stream)| {
                let exec = q.exec.lock();
                QueryInfo {
                    id: q.id,
                    text: q.text.clone(),
                    pid: q.pid,
                    streams: vec![stream.clone()],
                    stats: exec.stats().clone(),
                    state: exec.state(),
                    has_plan: (exec.work().is_some() || exec.is_member())
                        && exec.planned_rate().is_some(),
                    feeds: None,
                    flink: q
                        .flink
                        .lock()
                        .as_ref()
                        .map(|f| (f.job.clone(), f.state.lock().clone())),
                }
            })
            .collect();
        // A member of a shared plan holds no state of its own: it shows its plan's (taken
        // after its own lock is released; the plan's lock is taken before its members').
        let mut shared = std::collections::HashMap::new();
        let streams: Vec<_> = self.catalog.streams_read().values().cloned().collect();
        for s in streams {
            let plans: Vec<_> = s.plans.lock().clone();
            for p in plans {
                let st = p.state.lock();
                let state = st.agg.state();
                for q in &st.queries {
                    shared.insert(q.id, state);
                }
            }
        }
        for info in &mut all {
            if let Some(state) = shared.get(&info.id) {
                info.state = *state;
            }
        }
        all.extend(self.catalog.queries().joins().iter().map(|j| QueryInfo {
            id: j.id,
            text: j.text.clone(),
            pid: j.pid,
            streams: j.streams.clone(),
            stats: j.exec.lock().stats().clone(),
            state: StateSummary::default(),
            has_plan: false,
            feeds: None,
            flink: None,
        }));
        for info in &mut all {
            info.feeds = self
                .catalog
                .background()
                .by_query(info.id)
                .map(|b| b.label());
        }
        all.sort_by_key(|q| q.id);
        all
    }

    /// The plan query `id` runs along, as `EXPLAIN ANALYZE (FORMAT JSON)` would show it
    /// (the same renderer, [`crate::wcg::explain::explain_json`]), with the work measured
    /// since the query started in `measured`. The report is re-derived from the query's
    /// windows, aggregate class and the event rate its plan was chosen for, so it names the
    /// plan being executed.
    ///
    /// `None`: no such query, or it has no window coverage graph (a join, a query without
    /// aggregates or windows).
    pub(crate) fn query_plan_json(&self, id: u64) -> Option<String> {
        let (q, _) = self.catalog.queries().get(id)?;
        let exec = q.exec.lock();
        if exec.is_member() {
            let eta = exec.planned_rate()?;
            drop(exec);
            return self.shared_plan_json(&q, eta);
        }
        let work = exec.work()?;
        let eta = exec.planned_rate()?;
        let report = crate::wcg::optimize_for(exec.windows(), exec.sharing(), &exec.workload(eta));
        debug_assert_eq!(
            &report.plan,
            exec.plan(),
            "the optimizer is deterministic: the same windows, class and rate give the plan the query runs"
        );
        let stats = exec.stats();
        let span = match (stats.now_us, stats.started_us) {
            (Some(now), Some(first)) => now - first,
            _ => 0,
        };
        let measured = crate::wcg::explain::Measured::from_counters(
            span,
            &work.tuples_folded,
            &work.partials_merged,
        );
        Some(crate::wcg::explain::explain_json(&report, Some(&measured)))
    }

    /// The plan of the shared plan query `q` is a member of, as [`Engine::query_plan_json`]
    /// renders a plan: the optimizer's report over the union of the members' windows at
    /// `eta`, with the plan's measured work when the running nodes are that report's plan
    /// (they are until a query joins or leaves a running plan, which places or prunes nodes
    /// incrementally; then the work is left out rather than shown against other nodes).
    fn shared_plan_json(&self, q: &super::registry::RunningQuery, eta: f64) -> Option<String> {
        let plan_id = q.plan_id.load(Ordering::Acquire);
        let stream = self.catalog.queries().get(q.id)?.1;
        let stream = self.catalog.stream(&stream).ok()?;
        let plan = stream
            .plans
            .lock()
            .iter()
            .find(|p| p.id == plan_id)?
            .clone();
        let st = plan.state.lock();
        let windows: Vec<crate::window::Window> =
            st.agg.member_windows().into_iter().flatten().collect();
        let report = crate::wcg::optimize_for(&windows, st.agg.sharing(), &st.agg.workload(eta));
        let running = st.agg.plan();
        let same = running.nodes.len() == report.plan.nodes.len()
            && running
                .nodes
                .iter()
                .zip(&report.plan.nodes)
                .all(|(a, b)| a.window == b.window && a.parent == b.parent);
        let measured = if same {
            let nodes = st.agg.nodes();
            let folded: Vec<u64> = nodes.iter().map(|n| n.tuples_folded).collect();
            let merged: Vec<u64> = nodes.iter().map(|n| n.partials_merged).collect();
            drop(st);
            let stats = q.exec.lock().stats().clone();
            let span = match (stats.now_us, stats.started_us) {
                (Some(now), Some(first)) => now - first,
                _ => 0,
            };
            Some(crate::wcg::explain::Measured::from_counters(
                span, &folded, &merged,
            ))
        } else {
            None
        };
        Some(crate::wcg::explain::explain_json(
            &report,
            measured.as_ref(),
        ))
    }

    /// Follow registered query `id`'s rows from now on, as its own reader gets them.
    /// `None`: no such query, or a join (a join's rows are not tapped).
    pub(crate) fn tail_query(&self, id: u64) -> Option<QueryTail> {
        let (q, _) = self.catalog.queries().get(id)?;
        let (tx, rx) = mpsc::channel(TAIL_EVENTS_BUFFERED);
        let missed = Arc::new(AtomicU64::new(0));
        let queued_bytes = Arc::new(AtomicUsize::new(0));
        q.taps.lock().push(super::registry::Tap {
            tx,
            missed: missed.clone(),
            queued_bytes: queued_bytes.clone(),
            bytes_max: self.limits().output_queue_bytes,
        });
        Some(QueryTail {
            columns: q.columns.clone(),
            rx,
            missed,
            queued_bytes,
        })
    }

    /// Cancel query `id` as `pg_cancel_backend` would cancel its session: the statement
    /// (or cursor) running it ends with 57014 on its connection.
    ///
    /// `None`: no such query. `Some(false)`: the query has no session to signal (EXPLAIN
    /// ANALYZE's own run) or the session had nothing running.
    pub(crate) fn cancel_query(&self, id: u64) -> Option<bool> {
        let pid = match self.catalog.queries().get(id) {
            Some((q, _)) => q.pid,
            None => self.catalog.queries().join(id)?.pid,
        };
        match pid {
            Some(pid) => Some(self.catalog.backends().signal(pid, Signal::Cancel) == Some(true)),
            None => Some(false),
        }
    }
}
