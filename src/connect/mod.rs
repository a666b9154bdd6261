//! Sources: streams fed from where the data lives (Kafka, MQTT, NATS, a directory of files)
//! without a client, declared on the stream:
//!
//! ```sql
//! CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay integer, origin text)
//!     WITH (connector = 'kafka', topic = 'flights', bootstrap_servers = '127.0.0.1:9092',
//!           format = 'json', start = 'earliest');
//! ALTER STREAM flights PAUSE;  -- and RESUME
//! ```
//!
//! [`options`] reads and checks a `WITH` list (sinks reuse it), [`spec`] turns one into a
//! [`SourceSpec`] when the statement is bound, [`format`] decodes messages into rows. Each
//! source runs as one task ([`runner`]) that hands the engine batches of rows with the
//! position after them (`Catalog::ingest_from_source`): that is all the engine knows of
//! connectors. The position is opaque to it: JSON a connector reads back (Kafka: the next
//! offset of each partition; files: the file, byte offset and line).
//!
//! Delivery: into an archived stream, a batch's position is written in the commit record
//! of the statement that holds its tuples, so after a crash the source resumes exactly
//! after the last statement on disk (exactly once for Kafka and files). Into an
//! unarchived stream (whose tuples a restart does not keep anyway) the position is saved
//! beside the catalog at most once a second: a crash re-delivers up to the last second
//! (at least once). MQTT has no positions: QoS 1 messages are acknowledged once their
//! rows are accepted (at least once). Core NATS keeps nothing for a subscriber (at most
//! once).
//!
//! Design decision: a source is declared on its stream, RisingWave's `CREATE SOURCE`/
//! `CREATE TABLE ... WITH (connector = ...)` convention, rather than TelegraphCQ's
//! `ALTER STREAM ... ADD WRAPPER`: one statement declares the columns and where their
//! values come from, `DROP STREAM` ends both, and the catalog restores both.

mod columnar;
mod file;
pub(crate) mod format;
mod json_columns;
mod json_row;
pub(crate) mod kafka;
mod kafka_fetch;
mod kafka_group;
mod kafka_oversize;
mod kafka_partition;
mod kafka_wire;
mod mqtt;
mod nats;
pub(crate) mod options;
mod parquet_rows;
mod runner;
pub(crate) mod sink;
pub(crate) mod spec;

pub(crate) use spec::SourceSpec;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::watch;

use crate::engine::Engine;

/// What a source's task is asked to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Control {
    Run,
    Pause,
    Stop,
}

/// A source's counters and state, as `tcq_sources`, `/metrics` and the console show them.
#[derive(Clone, Debug, Default)]
pub(crate) struct SourceStatus {
    /// `starting`, `running`, `paused`, `throttled` (memory budget), `retrying` (the
    /// broker or directory is unreachable), `failed` (a bad message with
    /// `on_error = 'stop'`) or `stopped`.
    pub(crate) state: &'static str,
    /// Messages accepted (Kafka records, MQTT publishes, NATS messages, lines or Parquet
    /// rows of files).
    pub(crate) messages: u64,
    /// Tuples delivered to the stream.
    pub(crate) tuples: u64,
    /// Bad messages (skipped, or the one that stopped the source).
    pub(crate) bad_messages: u64,
    /// The last error: a bad message with where it was (partition and offset, file and
    /// line, topic), or why the connection failed.
    pub(crate) last_error: Option<String>,
    /// What is left to read: Kafka messages behind each partition's high watermark,
    /// bytes of files not read yet; `None` where the connector cannot tell (MQTT, NATS).
    pub(crate) lag: Option<i64>,
    /// The position after the last delivered batch, as JSON.
    pub(crate) position: Option<String>,
    /// Failed commits of offsets to a Kafka source's consumer group (`group_id`); the
    /// last one's error is `last_error`.
    pub(crate) commit_errors: u64,
}

/// The source of one stream: its declaration, its task's controls and its status.
pub(crate) struct Source {
    /// The declaration.
    pub(crate) spec: SourceSpec,
    status: Mutex<SourceStatus>,
    control: watch::Sender<Control>,
    /// The task's end of `control`, until the task starts.
    receiver: Mutex<Option<watch::Receiver<Control>>>,
    paused: AtomicBool,
}

impl Source {
    /// A snapshot of the status.
    pub(crate) fn status(&self) -> SourceStatus {
        self.status.lock().clone()
    }

    pub(crate) fn update(&self, f: impl FnOnce(&mut SourceStatus)) {
        f(&mut self.status.lock())
    }

    /// True while paused by `ALTER STREAM ... PAUSE` (or declared `paused = true`).
    pub(crate) fn is_paused(&self) -> bool {
        self.paused.load(Ordering::Acquire)
    }

    /// Stop (`true`) or restart consuming; the position is kept. Restarting a failed
    /// source goes on past the message it failed on.
    pub(crate) fn set_paused(&self, paused: bool) {
        self.paused.store(paused, Ordering::Release);
        if *self.control.borrow() != Control::Stop {
            self.control
                .send_replace(if paused { Control::Pause } else { Control::Run });
        }
    }

    /// Wait until the task has stopped reading after a pause: until its state is
    /// `paused` (which the task sets once it waits), `failed` or `stopped`, or the source
    /// is resumed; at most `limit`, since a delivery held by backpressure (or a
    /// connection being made) ends before the task looks again.
    pub(crate) async fn parked(&self, limit: std::time::Duration) {
        let start = std::time::Instant::now();
        while self.is_paused()
            && !matches!(self.status().state, "paused" | "failed" | "stopped")
            && start.elapsed() < limit
        {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }

    /// End the source's task for good (DROP STREAM, shutdown).
    pub(crate) fn stop(&self) {
        self.control.send_replace(Control::Stop);
    }

    /// The options that declare the source again, `paused` included when paused (the
    /// catalog's `CREATE STREAM ... WITH (...)`).
    pub(crate) fn ddl_options(&self) -> Vec<(String, String)> {
        let mut o = self.spec.options.clone();
        if self.is_paused() {
            o.push(("paused".into(), "true".into()));
        }
        o
    }
}

impl Source {
    /// The source `spec`, not running yet (paused if declared so): see [`spawn`].
    pub(crate) fn new(spec: SourceSpec) -> Arc<Source> {
        let paused = spec.paused;
        let (control, rx) = watch::channel(if paused { Control::Pause } else { Control::Run });
        Arc::new(Source {
            spec,
            status: Mutex::new(SourceStatus {
                state: if paused { "paused" } else { "starting" },
                ..SourceStatus::default()
            }),
            control,
            receiver: Mutex::new(Some(rx)),
            paused: AtomicBool::new(paused),
        })
    }
}

/// Start `stream`'s source, if it has one that has not started, on the current tokio
/// runtime; its task ends when the source is stopped or the stream dropped.
pub(crate) fn spawn(engine: &Arc<Engine>, stream: &Arc<crate::engine::Stream>) {
    let Some(source) = stream.source.lock().clone() else {
        return;
    };
    let Some(rx) = source.receiver.lock().take() else {
        return;
    };
    tokio::spawn(runner::run(
        Arc::downgrade(engine),
        stream.clone(),
        source,
        rx,
    ));
}

/// Where an unarchived stream's source keeps its position: `DIR/sources/<name>.position`.
pub(crate) fn position_path(data_dir: &std::path::Path, stream: &str) -> std::path::PathBuf {
    data_dir.join("sources").join(format!(
        "{}.position",
        crate::engine::archive::escape_name(stream)
    ))
}
