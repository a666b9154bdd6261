//! A source's task: runs its connector, delivers its batches to the stream, and keeps its
//! status. Connectors call [`Ctx`] for everything that is not their protocol: waiting
//! while paused or while the memory budget is spent, delivering rows with their position,
//! counting bad messages.
//!
//! Rules:
//! - Paused (`ALTER STREAM ... PAUSE`): the connector waits before its next read; its
//!   position stays where the last delivered batch left it.
//! - Backpressure: while the engine's tracked memory, with the cost of one more batch
//!   (the last one's size), is at 90% of `memory_limit` or more, the connector waits
//!   before its next read (state `throttled`) until it is below 80%; past half the limit,
//!   the batches already delivered are processed by the stream before the memory is
//!   looked at, so that what they will cost is counted. A stream's full ingest queue
//!   makes delivery itself wait. Nothing is dropped.
//! - A bad message is counted and kept as the last error with where it was; with
//!   `on_error = 'stop'` the source stops (state `failed`) until `ALTER STREAM ...
//!   RESUME`, which goes on past that message (counted, not delivered).
//! - A connection that fails (a broker down, a directory gone) is retried after a pause
//!   growing from 0.2 s to 5 s, from the position of the last delivered batch.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::format::Decoder;
use super::spec::{ConnectorSpec, OnError};
use super::{Control, Source};
use crate::engine::{Engine, Stream};
use crate::exec::columns::ColumnBatch;

/// Why a connector returned.
#[derive(Debug)]
pub(crate) enum Halt {
    /// Asked to stop (DROP STREAM, shutdown) or the stream is gone.
    Stopped,
    /// A bad message with `on_error = 'stop'`.
    Failed,
    /// The connection failed: try again from the last delivered position.
    Retry(String),
}

/// A connector's view of its source.
pub(crate) struct Ctx {
    engine: Weak<Engine>,
    pub(crate) stream: Arc<Stream>,
    pub(crate) source: Arc<Source>,
    control: watch::Receiver<Control>,
    pub(crate) decoder: Decoder,
    /// The position after the last delivered batch (or recovered at start).
    position: Option<serde_json::Value>,
    /// An unarchived stream's position file, and when it was last written.
    position_file: Option<std::path::PathBuf>,
    saved_at: Instant,
    unsaved: bool,
    /// Where the bad message that stopped the source is (`partition 1 offset 17`).
    failed_at: Option<String>,
    /// After each RESUME of a failed source: where the message it stopped on is, which is
    /// skipped (not counted again) when it is read again.
    skip_bad_at: Vec<String>,
    /// Heap bytes of the last delivered batch: what the next one is expected to cost.
    last_batch_bytes: usize,
    /// The last position that is durable: in an archived stream's log, in the position
    /// file, or (without a data directory) delivered and a second old. A Kafka source's
    /// consumer group is committed from it.
    durable: watch::Sender<Option<serde_json::Value>>,
}

/// Run `source`'s connector for `stream` until it is stopped.
pub(crate) async fn run(
    engine: Weak<Engine>,
    stream: Arc<Stream>,
    source: Arc<Source>,
    control: watch::Receiver<Control>,
) {
    let Some(e) = engine.upgrade() else { return };
    let position_file = match (&e.data, &stream.archive) {
        (Some(d), None) => Some(super::position_path(&d.config.dir, &stream.name)),
        _ => None,
    };
    let recovered = match &stream.archive {
        Some(a) => a.source_position(),
        None => position_file.as_ref().and_then(|p| std::fs::read(p).ok()),
    };
    drop(e);
    let decoder = Decoder::new(&stream.columns, stream.ts_col, source.spec.format.clone());
    let position: Option<serde_json::Value> =
        recovered.and_then(|b| serde_json::from_slice(&b).ok());
    let mut ctx = Ctx {
        engine,
        stream,
        source: source.clone(),
        control,
        decoder,
        durable: watch::Sender::new(position.clone()),
        position,
        position_file,
        saved_at: Instant::now(),
        unsaved: false,
        failed_at: None,
        skip_bad_at: Vec::new(),
        last_batch_bytes: 0,
    };
    ctx.show_position();
    let mut backoff = Duration::from_millis(200);
    loop {
        if ctx.gate().await.is_err() {
            break;
        }
        // "running" once the connector holds its connection (Ctx::connected); until then
        // "starting", or still "retrying" after a failed attempt.
        if ctx.source.status().state != "retrying" {
            ctx.set_state("starting");
        }
        let r = match &source.spec.connector {
            ConnectorSpec::File(f) => super::file::run(f, &mut ctx).await,
            ConnectorSpec::Kafka(k) => super::kafka::run(k, &mut ctx).await,
            ConnectorSpec::Mqtt(m) => super::mqtt::run(m, &mut ctx).await,
            ConnectorSpec::Nats(n) => super::nats::run(n, &mut ctx).await,
        };
        match r {
            Ok(()) | Err(Halt::Stopped) => {
                if ctx.stopping() {
                    break;
                }
            }
            Err(Halt::Failed) => {
                // What control said so far is spent: a RESUME that let the source start
                // (seen by `gate` without being marked) must not count as the RESUME of
                // this failure, which would skip the bad message unasked.
                ctx.control.borrow_and_update();
                ctx.set_state("failed");
                if !ctx.wait_for_resume().await {
                    break;
                }
                ctx.skip_bad_at.extend(ctx.failed_at.take());
            }
            Err(Halt::Retry(why)) => {
                tracing::warn!("source of stream {}: {why}; retrying", ctx.stream.name);
                ctx.source.update(|s| {
                    s.state = "retrying";
                    s.last_error = Some(why);
                });
                if !ctx.sleep(backoff).await {
                    break;
                }
                backoff = (backoff * 2).min(Duration::from_secs(5));
                continue;
            }
        }
        backoff = Duration::from_millis(200);
    }
    ctx.save_position(true);
    ctx.set_state("stopped");
}

impl Ctx {
    fn set_state(&self, state: &'static str) {
        self.source.update(|s| s.state = state);
    }

    /// The connector lost what it reads and its client is reconnecting by itself (NATS):
    /// the state is `retrying`, with `why` as the last error, until [`Ctx::connected`].
    pub(crate) fn reconnecting(&self, why: String) {
        self.source.update(|s| {
            if s.state != "retrying" {
                s.state = "retrying";
                s.last_error = Some(why);
            }
        });
    }

    /// The connector reached what it reads (a broker answered, the directory is readable):
    /// the state is `running` from now on.
    pub(crate) fn connected(&self) {
        if matches!(self.source.status().state, "starting" | "retrying") {
            self.set_state("running");
        }
    }

    fn show_position(&self) {
        let p = self.position.as_ref().map(|p| p.to_string());
        self.source.update(|s| s.position = p);
    }

    /// True once the source is to end (stopped, stream dropped, engine gone).
    pub(crate) fn stopping(&self) -> bool {
        *self.control.borrow() == Control::Stop
            || self
                .stream
                .dropped
                .load(std::sync::atomic::Ordering::Acquire)
            || self.engine.strong_count() == 0
    }

    /// Wait while paused or while the memory budget is nearly spent. Errors:
    /// [`Halt::Stopped`] when the source is to end.
    pub(crate) async fn gate(&mut self) -> Result<(), Halt> {
        // Connectors pass here at least once a second, idle or not: a position not saved
        // yet is saved once it is a second old.
        self.save_position(false);
        loop {
            if self.stopping() {
                return Err(Halt::Stopped);
            }
            if *self.control.borrow() == Control::Pause {
                self.set_state("paused");
                let _ = self.control.changed().await;
                continue;
            }
            let Some((used, limit)) = self.memory() else {
                return Err(Halt::Stopped);
            };
            if used * 2 >= limit {
                // Past half the budget: let the stream take in what was delivered before
                // deciding, since the memory its queries will use for it is not counted
                // until then.
                self.settle().await;
            }
            let Some((used, limit)) = self.memory() else {
                return Err(Halt::Stopped);
            };
            // The next batch will cost about what the last one did (counted up to a tenth
            // of the limit, so that reading resumes below 80% whatever the batches):
            // stop before it would cross 90% rather than after.
            let next = (self.last_batch_bytes as u128).min(limit / 10);
            if (used + next) * 10 >= limit * 9 {
                self.set_state("throttled");
                while let Some(e) = self.engine.upgrade() {
                    let m = e.memory();
                    if (m.used() as u128) * 10 < (m.limit() as u128) * 8 || self.stopping() {
                        break;
                    }
                    drop(e);
                    if !self.sleep(Duration::from_millis(20)).await {
                        return Err(Halt::Stopped);
                    }
                }
                continue;
            }
            let throttled_or_paused = matches!(self.source.status().state, "throttled" | "paused");
            if throttled_or_paused {
                self.set_state("running");
            }
            return Ok(());
        }
    }

    /// The engine's tracked memory and its limit, in bytes; `None` once the engine is gone.
    fn memory(&self) -> Option<(u128, u128)> {
        let engine = self.engine.upgrade()?;
        let m = engine.memory();
        Some((m.used() as u128, m.limit() as u128))
    }

    /// Wait (at most a second, less when stopped) until the stream has processed the
    /// batches delivered to it.
    async fn settle(&mut self) {
        let stream = self.stream.clone();
        tokio::select! {
            _ = stream.barrier() => {}
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = self.control.changed() => {}
        }
    }

    /// Sleep `d`, or less when the source is stopped or paused meanwhile; false when the
    /// source is to end.
    pub(crate) async fn sleep(&mut self, d: Duration) -> bool {
        let _ = tokio::time::timeout(d, self.control.changed()).await;
        !self.stopping()
    }

    async fn wait_for_resume(&mut self) -> bool {
        // RESUME sets Run; a failed source's control still says Run, so wait for a change
        // through Pause (ALTER ... RESUME of a failed source passes through it).
        loop {
            if self.stopping() {
                return false;
            }
            if self.control.changed().await.is_err() {
                return false;
            }
            if *self.control.borrow() == Control::Run {
                return true;
            }
        }
    }

    /// The position after the last delivered batch (or recovered at start), if any.
    pub(crate) fn position(&self) -> Option<&serde_json::Value> {
        self.position.as_ref()
    }

    /// Deliver `batch` (the rows of `messages` messages) with `position`, the place after
    /// them (`None` for a connector without positions): into an archived stream in one
    /// statement with the position in its commit record. Waits while the stream's queue
    /// is full. Errors: [`Halt::Stopped`] when the stream was dropped, [`Halt::Retry`] when
    /// the archive could not be written.
    pub(crate) async fn deliver(
        &mut self,
        batch: ColumnBatch,
        messages: u64,
        position: Option<serde_json::Value>,
    ) -> Result<(), Halt> {
        let tuples = batch.len() as u64;
        if tuples > 0 {
            self.last_batch_bytes = batch.heap_bytes();
            let Some(engine) = self.engine.upgrade() else {
                return Err(Halt::Stopped);
            };
            let bytes = position.as_ref().map_or_else(Vec::new, |p| {
                serde_json::to_vec(p).expect("JSON of a position")
            });
            let r = engine
                .catalog
                .ingest_from_source(&self.stream, batch.into(), bytes)
                .await;
            if let Err(e) = r {
                return Err(match e {
                    crate::Error::UndefinedTable(_) => Halt::Stopped,
                    e => Halt::Retry(format!("delivering to the stream: {e}")),
                });
            }
        }
        self.source.update(|s| {
            s.messages += messages;
            s.tuples += tuples;
        });
        if let Some(position) = position {
            if tuples > 0 && self.stream.archive.is_some() {
                // On disk: ingest_from_source returned once the commit record was durable.
                self.durable.send_replace(Some(position.clone()));
            }
            self.advance(position);
        }
        Ok(())
    }

    /// A receiver of the last durable position (see `durable`).
    pub(crate) fn durable_positions(&self) -> watch::Receiver<Option<serde_json::Value>> {
        self.durable.subscribe()
    }

    /// Count `messages` consumed without rows (all bad, or empty) and move the position.
    pub(crate) fn advance(&mut self, position: serde_json::Value) {
        let p = position.to_string();
        self.position = Some(position);
        self.unsaved = true;
        self.source.update(|s| s.position = Some(p));
        self.save_position(false);
    }

    /// A bad message at `at` (`partition 1 offset 17`, `file a.csv line 3`): counted and
    /// kept as the last error. Errors: [`Halt::Failed`] with `on_error = 'stop'`.
    pub(crate) fn bad(&mut self, at: &str, why: &str) -> Result<(), Halt> {
        if let Some(i) = self.skip_bad_at.iter().position(|s| s == at) {
            // A message the source stopped on, read again after RESUME: counted then.
            self.skip_bad_at.swap_remove(i);
            return Ok(());
        }
        let text = format!("{at}: {why}");
        self.source.update(|s| {
            s.bad_messages += 1;
            s.last_error = Some(text);
        });
        if self.source.spec.on_error == OnError::Stop {
            self.failed_at = Some(at.to_string());
            tracing::warn!(
                "source of stream {} stopped at a bad message ({at}); ALTER STREAM ... RESUME skips it",
                self.stream.name
            );
            return Err(Halt::Failed);
        }
        Ok(())
    }

    /// Show `lag` (messages or bytes left to read).
    pub(crate) fn set_lag(&self, lag: Option<i64>) {
        self.source.update(|s| s.lag = lag);
    }

    /// Keep an unarchived stream's position on disk (at most once a second unless `now`)
    /// and publish it as durable; without a data directory, only publish it.
    fn save_position(&mut self, now: bool) {
        if self.stream.archive.is_some() {
            return; // in the commit records
        }
        let Some(p) = &self.position else {
            return;
        };
        if !self.unsaved || (!now && self.saved_at.elapsed() < Duration::from_secs(1)) {
            return;
        }
        let r = self.position_file.as_ref().map_or(Ok(()), |path| {
            let tmp = path.with_extension("tmp");
            std::fs::create_dir_all(path.parent().expect("a directory"))
                .and_then(|()| std::fs::write(&tmp, p.to_string()))
                .and_then(|()| std::fs::rename(&tmp, path))
        });
        match r {
            Ok(()) => {
                self.durable.send_replace(Some(p.clone()));
            }
            Err(e) => tracing::warn!(
                "cannot save the source position of {}: {e}",
                self.stream.name
            ),
        }
        self.saved_at = Instant::now();
        self.unsaved = false;
    }
}
