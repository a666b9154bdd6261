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

use std::sync::Arc;

use tokio::sync::mpsc;

use super::catalog::Stream;
use super::fanout::JoinMsg;
use super::registry::JoinQuery;
use super::resolve::{query_slack_us, resolve_window};
use super::Engine;
use crate::error::{Error, Result};
use crate::exec::{Event, ExecLimits, JoinExec, JoinInputPlan, MultiJoin};
use crate::sql::{Query, Source};
use crate::types::{DataType, Value};
use crate::window::Start;

/// One unit of work for a join's executor, run on its task.
type Step = Box<dyn FnOnce(&mut MultiJoin, &mut Vec<Event>) -> Result<()> + Send>;

/// Batches a join's feed holds before the statements feeding it wait.
pub(crate) const FEED_BATCHES: usize = 4;

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
        exec.set_slack(i, query_slack_us(windows, s.slack_us));
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

/// A join's task: runs its executor over the feed, in order, until the feed closes.
pub(crate) async fn join_task(q: Arc<JoinQuery>, mut rx: mpsc::Receiver<JoinMsg>) {
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
    if let Err(e) = super::fanout::deliver(&q.tx, out, q.output_stall, q.id).await {
        q.fail(e);
        return;
    }
    if let Err(e) = result {
        q.fail(e);
    } else if done {
        q.close();
    }
}
