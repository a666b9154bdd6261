//! A background query's consumer: reads its subscription, cuts the rows into batches of
//! whole slide events, and delivers each batch to the derived stream or the sink's
//! connector, retrying a failed batch until it is delivered or the query is dropped.
//!
//! The query's output queue ([`super::Overflow::Block`]) ends every executor step that
//! emitted something with an empty event: at that mark every slide event up to the
//! query's current time is complete, so the rows gathered since the last mark are whole
//! slide events (a multi-window query's rows of one instant are never split). Those rows
//! are one batch. Rows at or before the resume position (see `background`) are skipped.
//!
//! While a batch fails (a webhook down, a full disk), the consumer waits, 0.1 s growing
//! to 5 s, and writes it again; meanwhile it reads nothing, so its query's queue fills
//! (`output_queue_bytes`) and then the query, and ingest into the stream it reads, waits.

use std::sync::{Arc, Weak};
use std::time::Duration;

use std::sync::atomic::Ordering;

use super::background::{Background, Kind};
use super::outq::Overflow;
use super::{Engine, Event, Stream, Subscription};
use crate::connect::sink::{SinkBatch, Writer};
use crate::error::{Error, Result};
use crate::exec::RowBatch;
use crate::sql::{self, Plan, Source, StartSpec};
use crate::types::Value;

/// Where a background query's batches go.
enum Output {
    /// Ingested into the derived stream, the batch's last event time in its commit record.
    Stream(Arc<Stream>),
    /// Written by a sink's connector; the position kept in this file afterwards.
    Sink(Box<dyn Writer>, Option<std::path::PathBuf>),
}

/// Where sink `name` keeps its position: `DIR/sinks/<name>.position`.
pub(crate) fn position_path(data_dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    data_dir
        .join("sinks")
        .join(format!("{}.position", super::archive::escape_name(name)))
}

/// The event time up to which `b` delivered before the server stopped: an archived
/// derived stream's last commit record's, a sink's position file's; `None` if none.
pub(crate) fn resume_position(engine: &Engine, b: &Background) -> Option<i64> {
    let bytes = match b.kind {
        Kind::Stream => {
            let s = engine.catalog.streams_read().get(&b.name).cloned()?;
            s.archive.as_ref()?.source_position()?
        }
        Kind::Sink => {
            let d = engine.data.as_ref()?;
            std::fs::read(position_path(&d.config.dir, &b.name)).ok()?
        }
    };
    let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    v["time_us"].as_i64()
}

/// Start `b`'s consumer on `sub`, skipping rows at or before `resume`.
pub(crate) fn spawn(
    engine: &Arc<Engine>,
    b: Arc<Background>,
    sub: Subscription,
    resume: Option<i64>,
) {
    let output = match (&b.kind, &b.sink) {
        (Kind::Sink, Some(spec)) => Output::Sink(
            crate::connect::sink::writer(&b.name, spec, b.query.windowed()),
            engine
                .data
                .as_ref()
                .map(|d| position_path(&d.config.dir, &b.name)),
        ),
        _ => match engine.catalog.streams_read().get(&b.name).cloned() {
            Some(s) => Output::Stream(s),
            None => return,
        },
    };
    b.update(|s| {
        s.state = "running";
        s.position_us = resume;
    });
    tokio::spawn(run(Arc::downgrade(engine), b, sub, output, resume));
}

/// The consumer's loop, until the query ends or is stopped.
async fn run(
    engine: Weak<Engine>,
    b: Arc<Background>,
    mut sub: Subscription,
    mut output: Output,
    mut resume: Option<i64>,
) {
    let mut stop = b.stopped();
    let mut pending: Vec<Vec<Value>> = Vec::new();
    let failed = loop {
        let ev = tokio::select! {
            _ = stop.wait_for(|s| *s) => break None,
            ev = sub.next() => ev,
        };
        match ev {
            // The query ended: its stream went away, or the server is shutting down.
            None => break None,
            Some(Err(e)) => break Some(e.to_string()),
            Some(Ok(Event::Notice(n))) => tracing::info!("{}: {n}", b.label()),
            Some(Ok(ev)) => {
                let rows = ev.into_rows();
                if !rows.is_empty() {
                    pending.extend(rows);
                    continue;
                }
                let batch = std::mem::take(&mut pending);
                match deliver(&engine, &b, &mut output, batch, resume, &mut stop).await {
                    Some(at) => resume = at.or(resume),
                    None => break None,
                }
            }
        }
    };
    drop(sub);
    b.update(|s| match failed {
        Some(e) => {
            tracing::warn!("{} stopped: its query failed: {e}", b.label());
            s.state = "failed";
            s.errors += 1;
            s.last_error = Some(e);
        }
        None => s.state = "stopped",
    });
}

/// One batch of whole slide events: the rows, each one's event time, where each slide
/// event begins, and the last event time.
struct Batch {
    rows: Vec<Vec<Value>>,
    times: Vec<Option<i64>>,
    events: Vec<usize>,
    last: Option<i64>,
}

impl Batch {
    /// The batch of `rows` (those after `resume`) of `b`'s query; `None` when none is left.
    fn new(b: &Background, mut rows: Vec<Vec<Value>>, resume: Option<i64>) -> Option<Batch> {
        let time_of = |r: &Vec<Value>| b.query.time_column.and_then(|c| r[c].as_timestamp());
        if let Some(w) = resume {
            rows.retain(|r| time_of(r).is_none_or(|t| t > w));
        }
        if rows.is_empty() {
            return None;
        }
        let times: Vec<Option<i64>> = rows.iter().map(time_of).collect();
        // A windowed query's slide events are told apart by their instants; a query
        // without a window hands over the tuples of one step as one batch.
        let mut events = vec![0];
        if b.query.windowed() {
            events.extend((1..rows.len()).filter(|&i| times[i] != times[i - 1]));
        }
        let last = times.iter().rev().find_map(|t| *t);
        Some(Batch {
            rows,
            times,
            events,
            last,
        })
    }
}

/// Deliver the rows of one batch of whole slide events (those after `resume`), retrying
/// until delivered. Returns the batch's last event time (`Some(None)`: nothing to deliver,
/// or no event times), or `None` when the query is to stop.
async fn deliver(
    engine: &Weak<Engine>,
    b: &Background,
    output: &mut Output,
    rows: Vec<Vec<Value>>,
    resume: Option<i64>,
    stop: &mut tokio::sync::watch::Receiver<bool>,
) -> Option<Option<i64>> {
    let Some(batch) = Batch::new(b, rows, resume) else {
        return Some(None);
    };
    let mut backoff = Duration::from_millis(100);
    loop {
        // A write that hangs (a webhook that never answers within its timeout, a derived
        // stream whose readers wait) does not hold up DROP.
        let r = tokio::select! {
            r = write(engine, b, output, &batch) => r,
            _ = stop.wait_for(|s| *s) => return None,
        };
        match r {
            Ok(()) => break,
            Err(Failure::Gone) => return None,
            Err(Failure::Retry(e)) => {
                tracing::warn!("{}: {e}; retrying", b.label());
                b.update(|s| {
                    s.state = "retrying";
                    s.errors += 1;
                    s.last_error = Some(e);
                });
                let _ = tokio::time::timeout(backoff, stop.wait_for(|s| *s)).await;
                if *stop.borrow() {
                    return None;
                }
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
        }
    }
    if let (Output::Sink(_, Some(path)), Some(t)) = (&*output, batch.last) {
        save_position(path, t);
    }
    b.update(|s| {
        s.state = "running";
        s.rows += batch.rows.len() as u64;
        s.events += batch.events.len() as u64;
        s.position_us = batch.last.or(s.position_us);
    });
    Some(batch.last)
}

/// One attempt at writing `batch` to `output`.
async fn write(
    engine: &Weak<Engine>,
    b: &Background,
    output: &mut Output,
    batch: &Batch,
) -> Result<(), Failure> {
    match output {
        Output::Stream(s) => ingest(engine, s, &batch.rows, &batch.times, batch.last).await,
        Output::Sink(w, _) => {
            let columns = &b.query.query.columns;
            let sink_batch = SinkBatch {
                columns: &columns[..b.query.visible],
                rows: &batch.rows,
                times: batch.times.clone(),
                events: batch.events.clone(),
                key_columns: &b.query.key_columns,
                time_name: b.query.time_column.map_or("", |c| columns[c].name.as_str()),
            };
            w.write(&sink_batch).await.map_err(Failure::Retry)
        }
    }
}

/// Why a delivery failed.
enum Failure {
    /// Try the same batch again after a pause.
    Retry(String),
    /// The derived stream (or the engine) is gone: stop.
    Gone,
}

/// Ingest `rows` into derived stream `s` as one statement, `last` in its commit record.
async fn ingest(
    engine: &Weak<Engine>,
    s: &Arc<Stream>,
    rows: &[Vec<Value>],
    times: &[Option<i64>],
    last: Option<i64>,
) -> Result<(), Failure> {
    let Some(engine) = engine.upgrade() else {
        return Err(Failure::Gone);
    };
    let mut batch = RowBatch::new(s.columns.len());
    let now = crate::time::now_us();
    for (r, t) in rows.iter().zip(times) {
        batch.push(r.iter().cloned(), t.unwrap_or(now));
    }
    let position = last
        .map(|t| serde_json::json!({ "time_us": t }).to_string().into_bytes())
        .unwrap_or_default();
    match engine
        .catalog
        .ingest_from_source(s, batch.into(), position)
        .await
    {
        Ok(()) => Ok(()),
        Err(crate::Error::UndefinedTable(_)) => Err(Failure::Gone),
        Err(e) => Err(Failure::Retry(format!(
            "writing into stream {}: {e}",
            s.name
        ))),
    }
}

/// Keep a sink's position on disk (written aside, then renamed over the old one). A
/// failure is logged: the sink then delivers again from an older position after a
/// restart (at least once).
fn save_position(path: &std::path::Path, t: i64) {
    use std::io::Write;
    let tmp = path.with_extension("tmp");
    let body = serde_json::json!({ "time_us": t }).to_string();
    let r = super::private_fs::create_dir_all(path.parent().expect("a directory"))
        .and_then(|()| super::private_fs::create(&tmp)?.write_all(body.as_bytes()))
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = r {
        tracing::warn!("cannot save the sink position {}: {e}", path.display());
    }
}

/// Register `b`'s query now, as created: exactly as a client's (shared plans, a back-fill
/// for an explicit START AT before the stream's time), with a blocking output queue.
pub(crate) async fn register_new(engine: &Arc<Engine>, b: &Background) -> Result<Subscription> {
    let sub = super::register::register(
        engine,
        (*b.query.query).clone(),
        &[],
        Overflow::Block,
        None,
        true,
    )
    .await?;
    b.query_id.store(sub.query_id(), Ordering::Release);
    Ok(sub)
}

/// Register `b`'s query again after a restart, resuming after event time `resume` (see
/// the module's story). Over an archived stream the archive is replayed from where the
/// first instance not delivered begins; otherwise the query starts as a new one.
pub(crate) async fn register_again(
    engine: &Arc<Engine>,
    b: &Background,
    resume: Option<i64>,
) -> Result<Subscription> {
    let q = (*b.query.query).clone();
    let stream = match &q.source {
        Source::Stream { name, .. } => engine.catalog.stream(name)?,
        _ => return register_new(engine, b).await,
    };
    // Without an archive there is nothing to replay; without event times, no place to
    // resume from.
    if stream.archive.is_none() || b.query.time_column.is_none() {
        return register_new(engine, b).await;
    }
    let windows = q
        .windows
        .iter()
        .map(|w| super::resolve::resolve_window(w, b.created_us))
        .collect::<Result<Vec<_>>>()?;
    let from_us = replay_from(&q, b.created_us, resume);
    let (text, columns) = (q.text.clone(), q.columns.clone());
    let exec = super::register::build_exec(engine, q, &[], &stream, windows, None)?;
    let sub = super::register::attach(
        engine,
        &stream,
        exec,
        text,
        columns,
        Overflow::Block,
        None,
        Some(from_us),
        false,
    )
    .await?;
    b.query_id.store(sub.query_id(), Ordering::Release);
    Ok(sub)
}

/// Where a replay after a restart begins (`None`: the whole archive): the earliest instant
/// an instance ending after `resume` can hold, or, with nothing delivered yet, where the
/// query's first instance begins (its creation time for a query without a window).
fn replay_from(q: &sql::Query, created_us: i64, resume: Option<i64>) -> Option<i64> {
    if q.windows.is_empty() {
        return Some(resume.unwrap_or(created_us));
    }
    if let Some(w) = resume {
        let range = q.windows.iter().map(|w| w.range_us).max().unwrap_or(0);
        return Some(w.saturating_sub(range));
    }
    let mut from: Option<i64> = Some(i64::MAX);
    for w in &q.windows {
        let start = match w.start {
            StartSpec::Epoch => None,
            StartSpec::At(t) => Some(t),
            StartSpec::Default => Some(created_us.div_euclid(w.slide_us) * w.slide_us),
        };
        from = match (from, start) {
            (Some(a), Some(b)) => Some(a.min(b)),
            _ => None,
        };
    }
    from
}

/// Recreate a derived stream from its catalog record (at start-up): its stream now (with
/// its archive recovered), its query once [`start_restored`] runs.
pub(crate) fn restore(engine: &Arc<Engine>, json: &str) -> Result<()> {
    let bad = |why: &str| Error::DataCorrupted(format!("catalog record {json}: {why}"));
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| bad(&e.to_string()))?;
    let ddl = v["ddl"].as_str().ok_or_else(|| bad("no ddl"))?;
    let created_us = v["created_us"]
        .as_i64()
        .ok_or_else(|| bad("no created_us"))?;
    let owner = v["owner"].as_str().unwrap_or_default().to_string();
    let parsed = sql::parse(ddl)?;
    let plan = match parsed.first() {
        Some(p) => sql::bind(p, &engine.catalog, &[])?,
        None => return Err(bad("empty ddl")),
    };
    let b = match plan {
        Plan::CreateDerived(c) => {
            let name = c.stream.name.clone();
            let stream = super::persist::new_stream(engine, c.stream, false)?;
            let b = Background::new(
                name.clone(),
                Kind::Stream,
                stream.oid,
                c.query,
                None,
                created_us,
                owner,
            );
            engine.catalog.streams_write().insert(name, stream);
            b
        }
        Plan::CreateSink(c) => {
            let oid = engine.catalog.next_oid();
            Background::new(
                c.name,
                Kind::Sink,
                oid,
                c.query,
                Some(c.spec),
                created_us,
                owner,
            )
        }
        _ => return Err(bad("not a CREATE STREAM ... AS or CREATE SINK")),
    };
    engine.catalog.background().add(b);
    Ok(())
}

/// After the catalog is restored: register every derived stream's and sink's query again
/// (in catalog order, so a derived stream's query is there before what reads it), start
/// their consumers, then the streams' sources, then let the server accept connections.
pub(crate) fn start_restored(engine: &Arc<Engine>) {
    let restored = engine.catalog.background().list();
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return;
    };
    engine.catalog.background().set_ready(false);
    let engine = engine.clone();
    handle.spawn(async move {
        for b in restored {
            let resume = super::background_run::resume_position(&engine, &b);
            match register_again(&engine, &b, resume).await {
                Ok(sub) => super::background_run::spawn(&engine, b, sub, resume),
                Err(e) => {
                    tracing::warn!("{}: its query cannot run again: {e}", b.label());
                    b.update(|s| {
                        s.state = "failed";
                        s.errors += 1;
                        s.last_error = Some(e.to_string());
                    });
                }
            }
        }
        let streams: Vec<Arc<Stream>> = engine.catalog.streams_read().values().cloned().collect();
        for s in streams {
            super::sources::run(&engine, &s);
        }
        engine.catalog.background().set_ready(true);
    });
}
