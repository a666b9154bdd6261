//! The engine: the public surface the server calls. It knows nothing of sockets.
//!
//! An [`Engine`] owns the catalog of streams and the registered continuous queries. Each
//! client connection gets a [`Session`] (transaction state, cursors, settings). A session
//! turns SQL text into [`Statement`]s ([`Session::prepare`]), describes them for the extended
//! protocol ([`Session::describe`]) and executes them ([`Session::execute`]), which yields an
//! [`Outcome`]:
//! - [`Outcome::Command`]: a command tag (`CREATE STREAM`, `INSERT 0 3`, `BEGIN`, ...);
//! - [`Outcome::Rows`]: a finite row set (SHOW, EXPLAIN, FETCH, system views);
//! - [`Outcome::Stream`]: a continuous query's unbounded rows, as a [`Subscription`];
//! - [`Outcome::CopyIn`]: a [`CopyIn`] sink for `COPY ... FROM STDIN`;
//! - [`Outcome::CopyOut`]: `COPY (SELECT ...) TO STDOUT`, a subscription plus its format.
//!
//! Before a statement runs, the session checks its user's privileges on the streams and
//! tables it names ([`roles`]: roles, owners, GRANT/REVOKE; 42501 when one is missing).
//!
//! Design decision: ingest never waits long on a reader. Each query's output is a queue
//! bounded in bytes (`output_queue_bytes`); when an event does not fit, ingest waits while
//! the reader keeps taking rows, and a reader that takes nothing for `output_stall_timeout`
//! (1 s) loses its query with SQLSTATE 54000 (or, if its session chose
//! `SET tcq.output_overflow = 'skip'`, the event is dropped at once and counted in a
//! NOTICE), so one idle cursor can neither stall a stream for long nor grow the server's
//! memory.

pub mod archive;
mod archive_codec;
pub(crate) mod backends;
mod background;
mod background_run;
mod catalog;
pub(crate) mod coord;
mod copy;
pub(crate) mod copy_binary;
mod copy_fields;
mod copy_pipeline;
mod copy_plain;
mod explain;
mod fanout;
pub(crate) mod flink;
mod join;
mod log_scan;
pub mod memory;
pub(crate) mod monitor;
mod outq;
mod persist;
mod pg_catalog;
mod private_fs;
mod privileges;
mod register;
mod registry;
mod rel_job;
mod resolve;
mod restore;
pub(crate) mod roles;
mod segment;
mod session;
mod setting_values;
mod settings;
mod sinks;
mod sources;
mod speculate;
mod spill;
mod staging;
mod step;
mod subscription;
mod table_dml;
mod table_log;
mod view_rows;
mod views;

pub use archive::{StorageConfig, SyncMode};
pub(crate) use background::{BackgroundStatus, SinkInfo};
pub(crate) use catalog::Stream;
pub(crate) use copy::CopyIn;
/// COPY's field reader, which sources also decode with.
pub(crate) use copy_fields::append_field;
pub(crate) use outq::Overflow;
pub(crate) use session::{Description, Session, Statement, TxStatus};
pub(crate) use subscription::{Event, Subscription};

use std::sync::Arc;
use std::time::Duration;

use crate::types::{Column, Value};

/// Stack of every thread that runs queries (the async workers, the blocking pool, each
/// stream's thread): expression evaluation recurses over expressions up to 1,000 levels
/// deep (the binder refuses deeper ones with 54001). 8 MiB.
pub const THREAD_STACK_BYTES: usize = 8 << 20;

/// Resource limits, each with a documented default.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Continuous queries registered at once. Default 1,024.
    pub queries_max: usize,
    /// Groups per window instance (GROUP BY cardinality). Default 1,000,000.
    pub groups_max: usize,
    /// Bytes of result rows a query's output queue holds for its reader (per subscriber).
    /// A full queue makes ingest wait while its reader keeps reading; see
    /// `output_stall_timeout`. A session with `tcq.output_overflow = 'skip'` has the event
    /// that does not fit dropped at once and counted instead. Default 16 MiB.
    pub output_queue_bytes: usize,
    /// How long the reader of an output queue may take nothing while it has rows to take:
    /// when its queue is full its query ends with 54000 once this much time has passed
    /// since its last take (or since its queue stopped being empty), and ingest waits only
    /// for what is left of it. Default 1 s.
    pub output_stall_timeout: Duration,
    /// Bytes a single COPY or INSERT may stage before it commits (all-or-nothing needs the
    /// whole statement held until its end). A COPY keeps `statement_staging_memory_bytes`
    /// in memory and stages the rest in a temporary file. Default 4 GiB.
    pub statement_staging_bytes_max: usize,
    /// Bytes of parsed columnar batches one COPY keeps in memory before it moves them to a
    /// temporary file. Default 160 MiB (a flight of the sample takes 36.7 bytes parsed, so
    /// three million flights take about 105 MiB).
    pub statement_staging_memory_bytes: usize,
    /// Consecutive empty slide events emitted after one jump of current time; the rest of
    /// the run is skipped with a NOTICE. Default 100,000.
    pub empty_slide_events_max: u64,
    /// Live tuples a windowed query without aggregates keeps. Default 1,000,000.
    pub live_tuples_max: usize,
    /// Open instances per window (RANGE / SLIDE, rounded up); a window over it is refused.
    /// Default 100,000.
    pub open_instances_max: usize,
    /// Bytes in the body of one protocol message (a Query's text, a Parse, a CopyData
    /// chunk). A longer message is refused from its header, before its body is read, with
    /// 54000, and the connection closes (PostgreSQL closes it too). Default 64 MiB.
    pub message_bytes_max: usize,
    /// Client connections open at once; one more is refused at start-up with 53300.
    /// Default 1,000.
    pub connections_max: usize,
    /// Continuous queries (streaming statements, cursors, suspended portals) one connection
    /// may hold at once; one more is refused with 54000. Default 64.
    pub queries_per_connection_max: usize,
    /// Named prepared statements one connection may hold; one more is refused with 54000.
    /// Default 1,000.
    pub prepared_statements_max: usize,
    /// Bytes of SQL text of the prepared statements one connection holds (the statements'
    /// plans grow with their text); a Parse past it is refused with 53200. Default 1 MiB,
    /// which the memory budget charges as about 160 MiB of plans
    /// ([`memory::prepared_statement_bytes`]): one connection within its own limit then
    /// holds at most a sixth of the default budget.
    pub prepared_statement_bytes_max: usize,
    /// Bytes of one COPY line (record); a longer line rejects the COPY with 54000.
    /// Default 16 MiB.
    pub copy_line_bytes_max: usize,
    /// Distinct values one `count(DISTINCT x)` (or other DISTINCT aggregate) keeps per
    /// group and window instance; one more ends the query with 54000. Default 1,000,000.
    pub distinct_values_max: usize,
    /// Rows one stored table may hold; a statement that would pass it is refused with
    /// 54000 and changes nothing. Default 1,000,000.
    pub table_rows_max: usize,
    /// Bytes of memory the engine tracks server-wide (see [`memory`]): queries' state,
    /// queued result rows, COPY batches staged in memory, prepared statements' text. A
    /// query whose state would cross it ends with 53200, a Parse is refused with 53200, a
    /// COPY moves its batches to its temporary file early. Default 1 GiB.
    pub memory_limit_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            queries_max: 1024,
            groups_max: 1_000_000,
            output_queue_bytes: 16 << 20,
            output_stall_timeout: Duration::from_secs(1),
            statement_staging_bytes_max: 4 << 30,
            statement_staging_memory_bytes: 160 << 20,
            empty_slide_events_max: 100_000,
            live_tuples_max: 1_000_000,
            open_instances_max: 100_000,
            message_bytes_max: 64 << 20,
            connections_max: 1000,
            queries_per_connection_max: 64,
            prepared_statements_max: 1000,
            prepared_statement_bytes_max: 1 << 20,
            copy_line_bytes_max: 16 << 20,
            distinct_values_max: 1_000_000,
            table_rows_max: 1_000_000,
            memory_limit_bytes: 1 << 30,
        }
    }
}

/// Engine configuration.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Resource limits.
    pub limits: Limits,
}

/// The shared engine: catalog, registered queries, counters. Cheap to share via `Arc`.
pub struct Engine {
    pub(crate) config: Config,
    pub(crate) catalog: catalog::Catalog,
    /// Advisory locks, shared by all sessions.
    pub(crate) locks: coord::Locks,
    /// LISTEN registrations, shared by all sessions.
    pub(crate) notifier: coord::Notifier,
    /// The data directory, when the engine keeps its state on disk.
    pub(crate) data: Option<archive::DataDir>,
    /// Where large COPYs stage their rows: under the data directory, or a private
    /// directory of this engine's (see `staging`).
    pub(crate) staging: staging::Staging,
}

impl Engine {
    /// End every running continuous query (server shutdown): their executors stop at the
    /// next batch, and an executor waiting on a full output queue returns at once, so
    /// nothing waits on a timer of a runtime that is shutting down.
    pub(crate) fn end_all_queries(&self) {
        self.catalog.queries().close_all();
    }

    /// A new engine with an empty catalog that keeps everything in memory (see
    /// [`Engine::open`] for one on a data directory).
    pub fn new(config: Config) -> Arc<Engine> {
        Engine::build(config, None)
    }

    /// An engine on the data directory `storage` (memory only when `None`): locks
    /// the directory, restores the catalog and recovers every archived stream's log (a torn
    /// tail is cut off and logged with its file and offset). Needs a tokio runtime (each
    /// stream gets its ingest task). Errors: the directory is locked by another server
    /// ([`crate::Error::ObjectInUse`]), cannot be read or written ([`crate::Error::Io`]),
    /// or its catalog is damaged ([`crate::Error::DataCorrupted`]).
    pub fn open(config: Config, storage: Option<StorageConfig>) -> crate::Result<Arc<Engine>> {
        let Some(storage) = storage else {
            return Ok(Engine::build(config, None));
        };
        let data = archive::DataDir::open(storage)?;
        let records = data.read_catalog()?;
        let engine = Engine::build(config, Some(data));
        for r in records {
            match r {
                archive::CatalogRecord::Stream(ddl) => restore::restore_stream(&engine, &ddl)?,
                archive::CatalogRecord::Table(ddl) => restore::restore_table(&engine, &ddl)?,
                archive::CatalogRecord::Role(json) => engine.catalog.roles().restore_role(&json)?,
                archive::CatalogRecord::Acl(json) => engine.catalog.roles().restore_acl(&json)?,
                archive::CatalogRecord::Derived(json) | archive::CatalogRecord::Sink(json) => {
                    background_run::restore(&engine, &json)?
                }
            }
        }
        background_run::start_restored(&engine);
        Ok(engine)
    }

    fn build(config: Config, data: Option<archive::DataDir>) -> Arc<Engine> {
        let staging = match &data {
            Some(d) => staging::Staging::in_data_dir(&d.config.dir),
            None => staging::Staging::private_temp(),
        };
        let engine = Arc::new(Engine {
            staging,
            catalog: catalog::Catalog::new(&config.limits),
            locks: coord::Locks::default(),
            notifier: coord::Notifier::default(),
            config,
            data,
        });
        catalog::Catalog::start_clock(&engine);
        engine
    }

    /// A new session (one per client connection); `pid` is the backend id shown to clients.
    pub fn session(self: &Arc<Self>, pid: i32) -> Session {
        Session::new(self.clone(), pid)
    }

    /// The configured limits.
    pub(crate) fn limits(&self) -> &Limits {
        &self.config.limits
    }

    /// The global memory budget: its limit and what is tracked against it now.
    pub(crate) fn memory(&self) -> &Arc<memory::MemoryBudget> {
        self.catalog.memory()
    }

    /// Roles, relation owners and grants; the server installs the `--password-file` users
    /// here and looks up who may log in.
    pub(crate) fn roles(&self) -> &roles::Roles {
        self.catalog.roles()
    }

    /// Every derived stream and sink, in creation order, as the console and `/metrics`
    /// show them.
    pub(crate) fn sink_infos(&self) -> Vec<SinkInfo> {
        self.catalog.background().infos()
    }

    /// Wait until the derived streams and sinks restored at start have registered their
    /// queries (at most 30 s), so that no tuple accepted from a client misses them. The
    /// server calls this before it accepts connections.
    pub(crate) async fn wait_ready(&self) {
        self.catalog.background().wait_ready().await
    }

    /// The connected sessions; the server registers each connection here.
    pub(crate) fn backends(&self) -> &backends::Backends {
        self.catalog.backends()
    }
}

/// A NOTICE (or WARNING) for the client: its severity, its SQLSTATE (PostgreSQL's for the
/// same notice, 00000 when PostgreSQL gives none) and its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    /// `NOTICE`, or `WARNING` where PostgreSQL warns (a COMMIT outside a transaction block).
    pub(crate) severity: &'static str,
    /// Five-character SQLSTATE.
    pub(crate) sqlstate: &'static str,
    /// The message.
    pub(crate) message: String,
}

impl Notice {
    /// `relation "x" already exists, skipping`: CREATE ... IF NOT EXISTS of an existing
    /// relation, 42P07 (duplicate_table) as PostgreSQL's `transformCreateStmt` gives it.
    pub(crate) fn relation_exists(name: &str) -> Notice {
        Notice {
            severity: "NOTICE",
            sqlstate: "42P07",
            message: format!("relation \"{name}\" already exists, skipping"),
        }
    }

    /// A WARNING with its SQLSTATE, as PostgreSQL's `there is no transaction in progress`
    /// (25P01) and `there is already a transaction in progress` (25001).
    pub(crate) fn warning(sqlstate: &'static str, message: &str) -> Notice {
        Notice {
            severity: "WARNING",
            sqlstate,
            message: message.into(),
        }
    }
}

impl From<String> for Notice {
    /// A notice without a code of its own (00000), as PostgreSQL's DROP ... IF EXISTS.
    fn from(message: String) -> Notice {
        Notice {
            severity: "NOTICE",
            sqlstate: "00000",
            message,
        }
    }
}

impl From<&str> for Notice {
    fn from(message: &str) -> Notice {
        Notice::from(message.to_string())
    }
}

/// What executing a statement produced.
// One Outcome exists per statement at a time, so the size of its largest variant (the
// COPY sink) costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
pub enum Outcome {
    /// A command that returns no rows, with its tag (`CREATE STREAM`, `INSERT 0 3`, `SET`).
    Command(String),
    /// A finite result: columns, rows, and the tag (`SELECT 3`, `FETCH 3`, `SHOW`, `EXPLAIN`).
    Rows {
        /// Result columns.
        columns: Vec<Column>,
        /// All rows.
        rows: Vec<Vec<Value>>,
        /// Command tag.
        tag: String,
        /// NOTICE messages to send before the rows.
        notices: Vec<Notice>,
    },
    /// A continuous query's rows, unbounded.
    Stream(Subscription),
    /// `COPY ... FROM STDIN`: feed the sink, then finish or abort it.
    CopyIn(CopyIn),
    /// `COPY (SELECT ...) TO STDOUT`.
    CopyOut {
        /// The rows.
        subscription: Subscription,
        /// How to format them.
        options: crate::sql::CopyOptions,
    },
}

impl std::fmt::Debug for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Command(tag) => write!(f, "Command({tag})"),
            Outcome::Rows { tag, rows, .. } => write!(f, "Rows({tag}, {} rows)", rows.len()),
            Outcome::Stream(_) => write!(f, "Stream"),
            Outcome::CopyIn(_) => write!(f, "CopyIn"),
            Outcome::CopyOut { .. } => write!(f, "CopyOut"),
        }
    }
}
