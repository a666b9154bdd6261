//! Sinks: the rows of a continuous query written where they are used (a file, a webhook,
//! a Kafka topic) while no client is connected.
//!
//! ```sql
//! CREATE SINK busy AS
//!     SELECT origin, count(*), wtime(*) FROM flights [RANGE BY '1 hour'] GROUP BY origin
//!     WITH (connector = 'file', path = '/var/lib/tcq/busy.ndjson', format = 'json');
//! DROP SINK busy;
//! ```
//!
//! [`spec`] reads a sink's `WITH` list (through the same [`super::options`] reader as
//! sources) into a [`SinkSpec`]; [`encode`] turns rows into NDJSON or CSV lines; [`file`],
//! [`http`] and [`kafka`] are the connectors. The engine runs the query and hands a connector one
//! [`SinkBatch`] at a time: the rows of whole slide events, in order (see
//! `engine::background`); a connector's [`Writer::write`] returns once the batch is
//! delivered (or fails, and the engine retries the same batch after a pause). That is all
//! a connector knows of queries.

pub(crate) mod encode;
mod file;
mod http;
mod kafka;
pub(crate) mod spec;

pub(crate) use spec::{check_new, sink_spec, SinkSpec};

use crate::types::{Column, Value};

/// The rows of one or more whole slide events, in order, as a connector writes them.
pub(crate) struct SinkBatch<'a> {
    /// The sink's result columns, those of its select list only.
    pub(crate) columns: &'a [Column],
    /// The rows, each with the select list's values first (then the event time column
    /// when the query did not select it: writers use `columns.len()` values).
    pub(crate) rows: &'a [Vec<Value>],
    /// Each row's event time (the slide event's instant, or a passed-through tuple's
    /// timestamp), microseconds since the Unix epoch; `None` for a query over a stream
    /// stamped on arrival without a window.
    pub(crate) times: Vec<Option<i64>>,
    /// Where each slide event's rows start in `rows` (ascending; the first is 0).
    pub(crate) events: Vec<usize>,
    /// The result columns that are the query's GROUP BY keys.
    pub(crate) key_columns: &'a [usize],
    /// The name of the event time column (`wtime`, or the stream's TIMESTAMPCOLUMN).
    pub(crate) time_name: &'a str,
}

impl SinkBatch<'_> {
    /// The rows of slide event `i` (an index into `events`), as a range of `rows`.
    pub(crate) fn event(&self, i: usize) -> std::ops::Range<usize> {
        let end = self.events.get(i + 1).copied().unwrap_or(self.rows.len());
        self.events[i]..end
    }
}

/// A connector's writer: delivers batches in order.
#[async_trait::async_trait]
pub(crate) trait Writer: Send {
    /// Deliver `batch`; `Ok` once it is written as the connector promises (a file: written
    /// and, with `fsync = 'batch'`, fsynced; a webhook: every POST answered 2xx). Errors:
    /// why it failed, for `tcq_sinks.last_error` (the caller retries the whole batch, so
    /// a connector may deliver part of a batch twice).
    async fn write(&mut self, batch: &SinkBatch<'_>) -> Result<(), String>;
}

/// A writer for `spec`, for the sink named `name` (whose query has windows: `windowed`).
/// Nothing is opened or connected until the first batch.
pub(crate) fn writer(name: &str, spec: &SinkSpec, windowed: bool) -> Box<dyn Writer> {
    match &spec.connector {
        spec::SinkConnector::File(f) => Box::new(file::FileWriter::new(f.clone(), spec.format)),
        spec::SinkConnector::Http(h) => {
            Box::new(http::HttpWriter::new(name, h.clone(), spec.format))
        }
        spec::SinkConnector::Kafka(k) => {
            Box::new(kafka::KafkaWriter::new(k.clone(), spec.format, windowed))
        }
    }
}
