//! Queries that run without a client: a derived stream's (`CREATE STREAM d AS SELECT
//! ...`) and a sink's (`CREATE SINK k AS SELECT ... WITH (connector = ...)`).
//!
//! Each is a [`Background`]: its bound query, where its rows go, and its status
//! (`tcq_sinks`). Its query is registered as any client's is (so it joins the shared
//! plans of its stream, and shows in `tcq_queries` and EXPLAIN), with an output queue of
//! `Overflow::Block`: when the consumer (`background_run`) falls behind, because a
//! webhook is down or a derived stream's own readers wait, the query waits for room and so
//! does ingest into its stream. That is backpressure, never a silent drop.
//!
//! Positions. Each delivered batch ends at a slide event's instant `W` (a passed-through
//! tuple's timestamp for a query without a window): every event up to `W` is delivered. An
//! archived derived stream writes `W` in the commit record of the statement holding the
//! batch's rows; a sink keeps it in `DIR/sinks/<name>.position` once the batch is written.
//! At a restart the query is registered again; over an archived stream it first replays
//! the archive from the earliest instance that ends after `W` (the back-fill of
//! `Stream::attach_with_backfill`) with its windows on the grid it was created on, and
//! every row at or before `W` is skipped. So an archived derived stream over an archived
//! stream gets each slide event exactly once across crashes, and a sink at least once (a
//! batch written but not yet recorded is written again). Over an unarchived stream or a
//! join, the query restarts from the tuples that arrive after the restart.
//!
//! Design decision: a derived stream is a stream like any other (its rows are ingested as
//! a statement each batch), so it can be archived, read, joined and fed to sinks with no
//! new code in the executor; only writes by clients are refused (42809), since its rows
//! are its query's.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::watch;

use crate::connect::sink::SinkSpec;
use crate::error::{Error, Result};
use crate::sql::BackgroundQuery;

/// What a background query feeds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A derived stream of this name.
    Stream,
    /// A sink.
    Sink,
}

impl Kind {
    /// `stream` or `sink`, as messages and `tcq_sinks.kind` say it.
    pub(crate) fn word(&self) -> &'static str {
        match self {
            Kind::Stream => "stream",
            Kind::Sink => "sink",
        }
    }
}

/// A background query's counters and state, as `tcq_sinks`, `/metrics` and the console
/// show them.
#[derive(Clone, Debug, Default)]
pub(crate) struct BackgroundStatus {
    /// `starting`, `running`, `retrying` (its last write failed: it waits, then writes the
    /// same batch again), `failed` (its query ended with an error) or `stopped`.
    pub(crate) state: &'static str,
    /// Rows delivered.
    pub(crate) rows: u64,
    /// Slide events delivered (batches of passed-through tuples, for a query without a
    /// window).
    pub(crate) events: u64,
    /// Failed writes (each retried) and the error that ended the query, if any.
    pub(crate) errors: u64,
    /// The last of those errors.
    pub(crate) last_error: Option<String>,
    /// The event time up to which everything is delivered, microseconds since the epoch.
    pub(crate) position_us: Option<i64>,
}

/// A derived stream's or sink's query and its state.
pub(crate) struct Background {
    /// The derived stream's or the sink's name.
    pub(crate) name: String,
    pub(crate) kind: Kind,
    /// Its place in the catalog (a derived stream's is its stream's OID; a sink takes one
    /// from the same counter, so catalog order is creation order).
    pub(crate) oid: u32,
    pub(crate) query: BackgroundQuery,
    /// A sink's connector and format.
    pub(crate) sink: Option<SinkSpec>,
    /// When it was created, microseconds since the epoch: its windows' default START AT
    /// is resolved at this instant again when its query replays after a restart.
    pub(crate) created_us: i64,
    /// Who created it.
    pub(crate) owner: String,
    pub(crate) status: Mutex<BackgroundStatus>,
    /// The registered query's id (0 before it is registered).
    pub(crate) query_id: AtomicU64,
    stop: watch::Sender<bool>,
}

impl Background {
    /// A background query, not registered yet.
    pub(crate) fn new(
        name: String,
        kind: Kind,
        oid: u32,
        query: BackgroundQuery,
        sink: Option<SinkSpec>,
        created_us: i64,
        owner: String,
    ) -> Arc<Background> {
        Arc::new(Background {
            name,
            kind,
            oid,
            query,
            sink,
            created_us,
            owner,
            status: Mutex::new(BackgroundStatus {
                state: "starting",
                ..BackgroundStatus::default()
            }),
            query_id: AtomicU64::new(0),
            stop: watch::channel(false).0,
        })
    }

    /// A snapshot of the status.
    pub(crate) fn status(&self) -> BackgroundStatus {
        self.status.lock().clone()
    }

    pub(crate) fn update(&self, f: impl FnOnce(&mut BackgroundStatus)) {
        f(&mut self.status.lock())
    }

    /// End the query for good (DROP): its consumer stops and drops the subscription.
    pub(crate) fn stop(&self) {
        self.stop.send_replace(true);
    }

    /// A receiver that turns `true` when the query is to stop.
    pub(crate) fn stopped(&self) -> watch::Receiver<bool> {
        self.stop.subscribe()
    }

    /// `stream d` or `sink k`.
    pub(crate) fn label(&self) -> String {
        format!("{} {}", self.kind.word(), self.name)
    }

    /// The catalog record that declares it again (see `background_run::restore`); `stream`
    /// is a derived stream's stream as it is now.
    pub(crate) fn record(&self, stream: Option<&DerivedShape>) -> super::archive::CatalogRecord {
        let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        let ddl = match (&self.kind, &self.sink) {
            (Kind::Sink, Some(spec)) => {
                let options: Vec<String> = spec
                    .options
                    .iter()
                    .map(|(k, v)| format!("{} = '{}'", quote(k), v.replace('\'', "''")))
                    .collect();
                format!(
                    "CREATE SINK {} AS {} WITH ({})",
                    quote(&self.name),
                    self.query.text,
                    options.join(", ")
                )
            }
            _ => derived_ddl(stream, &self.name, &self.query.text),
        };
        let json = serde_json::json!({
            "ddl": ddl,
            "created_us": self.created_us,
            "owner": self.owner,
        });
        match self.kind {
            Kind::Stream => super::archive::CatalogRecord::Derived(json.to_string()),
            Kind::Sink => super::archive::CatalogRecord::Sink(json.to_string()),
        }
    }
}

/// What a derived stream's catalog record says of its stream besides its query.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DerivedShape {
    /// `TYPE ARCHIVED`.
    pub(crate) archived: bool,
    /// `WITH (slack = ...)`, microseconds.
    pub(crate) slack_us: i64,
    /// `WITH (retention = ...)`, microseconds.
    pub(crate) retention_us: Option<i64>,
}

/// `CREATE STREAM "d" TYPE ... [WITH (...)] AS <query>` for derived stream `name` as it is
/// now (its retention may have changed since it was created).
fn derived_ddl(stream: Option<&DerivedShape>, name: &str, query: &str) -> String {
    let mut ddl = format!("CREATE STREAM \"{}\"", name.replace('"', "\"\""));
    if let Some(s) = stream {
        ddl.push_str(if s.archived {
            " TYPE ARCHIVED"
        } else {
            " TYPE UNARCHIVED"
        });
        let mut options = Vec::new();
        if s.slack_us != 0 {
            options.push(format!("slack = '{} microseconds'", s.slack_us));
        }
        if let Some(r) = s.retention_us {
            options.push(format!("retention = '{r} microseconds'"));
        }
        if !options.is_empty() {
            ddl.push_str(&format!(" WITH ({})", options.join(", ")));
        }
    }
    format!("{ddl} AS {query}")
}

/// A derived stream or sink, now, as the console and `/metrics` show it.
#[derive(Clone, Debug)]
pub(crate) struct SinkInfo {
    /// Its name.
    pub(crate) name: String,
    /// `stream` (a derived stream) or `sink`.
    pub(crate) kind: &'static str,
    /// A sink's connector (`file`, `http`); `None` for a derived stream.
    pub(crate) connector: Option<&'static str>,
    /// A sink's options as declared, secrets masked.
    pub(crate) options: Option<String>,
    /// Its query's text.
    pub(crate) query: String,
    /// Its query's id in `tcq_queries` (0 while it is not registered).
    pub(crate) query_id: u64,
    /// State and counters.
    pub(crate) status: BackgroundStatus,
}

/// The derived streams and sinks of an engine.
#[derive(Default)]
pub(crate) struct Registry {
    all: Mutex<Vec<Arc<Background>>>,
    /// `false` while the queries restored at start are being registered: the server
    /// accepts connections once it is `true` (see [`Registry::wait_ready`]).
    ready: Option<watch::Sender<bool>>,
}

impl Registry {
    pub(crate) fn new() -> Registry {
        Registry {
            all: Mutex::new(Vec::new()),
            ready: Some(watch::channel(true).0),
        }
    }

    /// Every background query, in catalog order.
    pub(crate) fn list(&self) -> Vec<Arc<Background>> {
        let mut all = self.all.lock().clone();
        all.sort_by_key(|b| b.oid);
        all
    }

    /// The one of `kind` named `name`.
    pub(crate) fn get(&self, kind: &Kind, name: &str) -> Option<Arc<Background>> {
        self.all
            .lock()
            .iter()
            .find(|b| b.kind == *kind && b.name == name)
            .cloned()
    }

    /// The one whose query has id `id`.
    pub(crate) fn by_query(&self, id: u64) -> Option<Arc<Background>> {
        self.all
            .lock()
            .iter()
            .find(|b| b.query_id.load(Ordering::Acquire) == id)
            .cloned()
    }

    pub(crate) fn add(&self, b: Arc<Background>) {
        self.all.lock().push(b);
    }

    /// Remove the one of `kind` named `name` (its query goes on until it is stopped).
    pub(crate) fn remove(&self, kind: &Kind, name: &str) -> Option<Arc<Background>> {
        let mut all = self.all.lock();
        let i = all.iter().position(|b| b.kind == *kind && b.name == name)?;
        Some(all.remove(i))
    }

    pub(crate) fn set_ready(&self, ready: bool) {
        if let Some(r) = &self.ready {
            r.send_replace(ready);
        }
    }

    /// The background queries that read a stream of `names`, directly or through derived
    /// streams, in dependency order (each before what it reads), without those named.
    pub(crate) fn dependents(&self, names: &[String]) -> Vec<Arc<Background>> {
        let all = self.list();
        let mut reached: Vec<String> = names.to_vec();
        let mut found: Vec<Arc<Background>> = Vec::new();
        loop {
            let before = found.len();
            for b in &all {
                let taken = found.iter().any(|f| Arc::ptr_eq(f, b))
                    || (b.kind == Kind::Stream && names.contains(&b.name));
                if !taken && b.query.inputs.iter().any(|i| reached.contains(i)) {
                    if b.kind == Kind::Stream {
                        reached.push(b.name.clone());
                    }
                    found.push(b.clone());
                }
            }
            if found.len() == before {
                break;
            }
        }
        found.reverse();
        found
    }

    /// 42809 for INSERT or COPY into derived stream `name` (its rows are its query's).
    pub(crate) fn refuse_write(&self, name: &str) -> Result<()> {
        if self.get(&Kind::Stream, name).is_some() {
            return Err(Error::WrongObjectType(format!(
                "cannot insert into derived stream \"{name}\": its rows come from its query"
            )));
        }
        Ok(())
    }

    /// Wait until the derived streams and sinks restored at start have registered their
    /// queries (at most 30 s), so that no tuple accepted from a client misses them.
    pub(crate) async fn wait_ready(&self) {
        let Some(ready) = &self.ready else {
            return;
        };
        let mut rx = ready.subscribe();
        let waited =
            tokio::time::timeout(std::time::Duration::from_secs(30), rx.wait_for(|r| *r)).await;
        if waited.is_err() {
            tracing::warn!("derived streams and sinks still registering after 30 s; serving");
        }
    }

    /// Every derived stream and sink, in creation order, as the console shows them.
    pub(crate) fn infos(&self) -> Vec<SinkInfo> {
        self.list()
            .iter()
            .map(|b| SinkInfo {
                name: b.name.clone(),
                kind: b.kind.word(),
                connector: b.sink.as_ref().map(|s| s.connector_name()),
                options: b
                    .sink
                    .as_ref()
                    .map(|s| crate::connect::options::display(&s.options)),
                query: b.query.text.clone(),
                query_id: b.query_id.load(Ordering::Acquire),
                status: b.status(),
            })
            .collect()
    }
}

/// 2BP01 for dropping the streams of `names` that `dependents` read, as PostgreSQL words
/// it (the DETAIL names each dependent and what it reads).
pub(crate) fn dependents_error(names: &[String], dependents: &[Arc<Background>]) -> Error {
    let detail: Vec<String> = dependents
        .iter()
        .map(|d| {
            let read = d
                .query
                .inputs
                .iter()
                .find(|i| names.contains(i))
                .or(d.query.inputs.first())
                .cloned()
                .unwrap_or_default();
            format!("{} depends on stream {read}", d.label())
        })
        .collect();
    let what = if names.len() == 1 {
        format!("stream {}", names[0])
    } else {
        format!("streams {}", names.join(", "))
    };
    Error::DependentObjectsStillExist(format!(
        "cannot drop {what} because other objects depend on it"
    ))
    .with_detail(detail.join("\n"))
    .with_hint("Use DROP ... CASCADE to drop the dependent objects too.")
}
