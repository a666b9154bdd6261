//! One client's session: prepare, describe, execute; transaction state, cursors, settings.
//!
//! Statements are parsed at prepare time and bound against the catalog when they are
//! described or executed, so a multi-statement string may create a stream and then read it.
//! Cursors hold a running query's subscription; `FETCH n` waits until it has `n` rows or the
//! query ends, as DESIGN.md section 1 asks.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use super::catalog::{QueryGuard, RunningQuery, Stream};
use super::copy::CopyIn;
use super::{Engine, Outcome, Subscription};
use crate::error::{Error, Result};
use crate::exec::finite::run_finite;
use crate::exec::{plan_windows, Event, ExecLimits, QueryExec, RowBatch};
use crate::expr::{eval, EvalContext};
use crate::sql::{self, FetchCount, Plan, Query, Source, StartSpec, TransactionOp, WindowSpec};
use crate::types::{Column, DataType, Value};
use crate::window::{Start, Window};

/// A parsed statement, not yet bound.
#[derive(Clone, Debug)]
pub struct Statement {
    pub(crate) parsed: crate::sql::Parsed,
}

impl Statement {
    /// The statement's SQL text.
    pub fn text(&self) -> &str {
        self.parsed.text()
    }
}

/// What the extended protocol's Describe reports.
#[derive(Clone, Debug, PartialEq)]
pub struct Description {
    /// Types of `$1..$n`.
    pub params: Vec<DataType>,
    /// Result columns; `None` for statements without rows (RowDescription vs NoData).
    pub columns: Option<Vec<Column>>,
}

/// Transaction status for ReadyForQuery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxStatus {
    /// 'I'
    Idle,
    /// 'T'
    InBlock,
    /// 'E'
    Failed,
}

struct Cursor {
    sub: Subscription,
    /// WITH HOLD: survives the end of its transaction.
    hold: bool,
    buffered: VecDeque<Vec<Value>>,
    ended: bool,
}

/// A client's session.
pub struct Session {
    pub(crate) engine: Arc<Engine>,
    pub(crate) pid: i32,
    pub(crate) tx: TxStatus,
    cursors: HashMap<String, Cursor>,
    settings: HashMap<String, String>,
    user: String,
    database: String,
}

impl crate::expr::SessionInfo for Session {
    fn user(&self) -> &str {
        &self.user
    }
    fn database(&self) -> &str {
        &self.database
    }
    fn pid(&self) -> i32 {
        self.pid
    }
    fn setting(&self, name: &str) -> Option<String> {
        self.settings.get(&name.to_ascii_lowercase()).cloned()
    }
}

const DEFAULT_SETTINGS: &[(&str, &str)] = &[
    ("server_version", "15.0"),
    ("server_version_num", "150000"),
    ("server_encoding", "UTF8"),
    ("client_encoding", "UTF8"),
    ("datestyle", "ISO, MDY"),
    ("timezone", "UTC"),
    ("integer_datetimes", "on"),
    ("standard_conforming_strings", "on"),
    ("search_path", "\"$user\", public"),
    ("transaction_isolation", "read committed"),
    ("default_transaction_isolation", "read committed"),
    ("max_identifier_length", "63"),
    ("application_name", ""),
    ("extra_float_digits", "1"),
    ("is_superuser", "on"),
    ("lc_collate", "C"),
    ("intervalstyle", "postgres"),
];

impl Session {
    pub(crate) fn new(engine: Arc<Engine>, pid: i32) -> Session {
        let settings = DEFAULT_SETTINGS
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Session {
            engine,
            pid,
            tx: TxStatus::Idle,
            cursors: HashMap::new(),
            settings,
            user: "tcq".into(),
            database: "tcq".into(),
        }
    }

    /// Record who connected (from the start-up message), for `current_user`,
    /// `current_database()` and `application_name`.
    pub fn set_identity(&mut self, user: &str, database: &str, application_name: Option<&str>) {
        self.user = user.to_string();
        self.database = database.to_string();
        if let Some(a) = application_name {
            self.settings
                .insert("application_name".into(), a.to_string());
        }
    }

    /// The backend id.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Transaction status for ReadyForQuery.
    pub fn tx_status(&self) -> TxStatus {
        self.tx
    }

    /// Mark the open transaction block failed after an error (no-op outside a block).
    pub fn fail_transaction(&mut self) {
        if self.tx == TxStatus::InBlock {
            self.tx = TxStatus::Failed;
        }
    }

    /// Split and parse a query string into statements. Errors: 42601.
    pub fn prepare(&mut self, text: &str) -> Result<Vec<Statement>> {
        Ok(crate::sql::parse(text)?
            .into_iter()
            .map(|parsed| Statement { parsed })
            .collect())
    }

    fn bind(&self, stmt: &Statement, hints: &[Option<DataType>]) -> Result<Plan> {
        // The binder refuses expressions deeper than sql::EXPRESSION_DEPTH_MAX (54001) and
        // grows its stack as it recurses, so no statement can overflow a worker's stack.
        sql::bind(&stmt.parsed, &self.engine.catalog, hints)
    }

    /// Describe a statement for the extended protocol. `param_hints` are the types the
    /// client gave in Parse (`None` = unspecified).
    pub fn describe(
        &mut self,
        stmt: &Statement,
        param_hints: &[Option<DataType>],
    ) -> Result<Description> {
        let plan = self.bind(stmt, param_hints)?;
        let text_col = |n: &str| Some(vec![Column::new(n, DataType::Text)]);
        Ok(match plan {
            Plan::Insert(i) => Description {
                params: i.param_types,
                columns: None,
            },
            Plan::Query(q) => Description {
                params: q.param_types.clone(),
                columns: Some(q.columns.clone()),
            },
            Plan::Explain { query, .. } => Description {
                params: query.param_types.clone(),
                columns: text_col("QUERY PLAN"),
            },
            Plan::Show { name } => Description {
                params: vec![],
                columns: text_col(&name),
            },
            Plan::Fetch {
                cursor,
                is_move: false,
                ..
            } => {
                let columns = self.cursors.get(&cursor).map(|c| c.sub.columns().to_vec());
                Description {
                    params: vec![],
                    columns,
                }
            }
            Plan::Advance { .. } => Description {
                params: vec![],
                columns: Some(vec![Column::new("tcq_advance", DataType::Timestamp)]),
            },
            Plan::CopyTo { query, .. } | Plan::Declare { query, .. } => Description {
                params: query.param_types.clone(),
                columns: None,
            },
            _ => Description {
                params: vec![],
                columns: None,
            },
        })
    }

    /// Execute a statement with bound parameter values.
    pub async fn execute(&mut self, stmt: &Statement, params: &[Value]) -> Result<Outcome> {
        if let Some((columns, rows)) =
            super::pgcompat::answer(stmt.text(), &self.engine.catalog, &self.user)
        {
            let tag = format!("SELECT {}", rows.len());
            return Ok(Outcome::Rows {
                columns,
                rows,
                tag,
                notices: vec![],
            });
        }
        let hints: Vec<Option<DataType>> = params.iter().map(|v| v.data_type()).collect();
        let plan = self.bind(stmt, &hints)?;
        if self.tx == TxStatus::Failed
            && !matches!(
                plan,
                Plan::Transaction(TransactionOp::Commit | TransactionOp::Rollback)
            )
        {
            return Err(Error::InFailedTransaction);
        }
        match plan {
            Plan::Empty => Ok(Outcome::Command(String::new())),
            // Prepared statements live in the server's per-connection state; drivers
            // issue DEALLOCATE to forget theirs, and a fresh name is used for any new one.
            Plan::Deallocate { name } => Ok(Outcome::Command(
                if name.is_some() {
                    "DEALLOCATE"
                } else {
                    "DEALLOCATE ALL"
                }
                .into(),
            )),
            Plan::CreateStream(c) => self.create_stream(c),
            Plan::DropStream { names, if_exists } => self.drop_stream(names, if_exists).await,
            Plan::Insert(i) => self.insert(i, params).await,
            Plan::CopyFrom(c) => {
                let stream = self.engine.catalog.stream(&c.stream)?;
                Ok(Outcome::CopyIn(CopyIn::new(
                    self.engine.clone(),
                    stream,
                    c.target_columns,
                    c.options,
                )))
            }
            Plan::Query(q) => self.query(*q, params).await,
            Plan::CopyTo { query, options } => {
                let subscription = self.subscribe(*query, params).await?;
                Ok(Outcome::CopyOut {
                    subscription,
                    options,
                })
            }
            Plan::Explain { query, options } => {
                super::explain::explain(&self.engine, *query, options, params).await
            }
            Plan::Declare {
                cursor,
                query,
                hold,
            } => self.declare(cursor, *query, params, hold).await,
            Plan::Fetch {
                cursor,
                count,
                is_move,
            } => self.fetch(&cursor, count, is_move).await,
            Plan::Close { cursor } => self.close(cursor),
            Plan::Transaction(op) => Ok(self.transaction(op)),
            Plan::Set { name, value } => {
                if name == "all" && value.is_none() {
                    self.settings = DEFAULT_SETTINGS
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect();
                    return Ok(Outcome::Command("RESET".into()));
                }
                if name == "timezone" {
                    if let Some(v) = &value {
                        let utc = [
                            "utc",
                            "etc/utc",
                            "gmt",
                            "z",
                            "zulu",
                            "+00",
                            "00:00",
                            "0",
                            "+00:00",
                            "universal",
                        ];
                        if !utc.contains(&v.trim_matches('\'').to_ascii_lowercase().as_str()) {
                            return Err(Error::FeatureNotSupported(format!(
                                "time zone \"{v}\" is not supported: tcq shows timestamptz in UTC"
                            )));
                        }
                    }
                }
                let tag = if value.is_some() { "SET" } else { "RESET" };
                let v = value.unwrap_or_else(|| {
                    DEFAULT_SETTINGS
                        .iter()
                        .find(|(k, _)| *k == name)
                        .map_or(String::new(), |(_, v)| v.to_string())
                });
                self.settings.insert(name, v);
                Ok(Outcome::Command(tag.into()))
            }
            Plan::Show { name } => self.show(&name),
            Plan::Advance { stream, time_expr } => {
                let s = self.engine.catalog.stream(&stream)?;
                let t = eval(
                    &time_expr,
                    &EvalContext::new(&[], params, None).with_session(self),
                )?;
                let t_us = t.as_timestamp().ok_or_else(|| {
                    Error::DatatypeMismatch("tcq_advance needs a timestamp".into())
                })?;
                self.engine.catalog.heartbeat(&s, t_us).await?;
                // The stream's time never goes back: an earlier instant changes nothing.
                let t_us = s.stats.lock().now_us.unwrap_or(t_us).max(t_us);
                Ok(Outcome::Rows {
                    columns: vec![Column::new("tcq_advance", DataType::Timestamp)],
                    rows: vec![vec![Value::Timestamp(t_us)]],
                    tag: "SELECT 1".into(),
                    notices: vec![],
                })
            }
        }
    }

    fn create_stream(&mut self, c: sql::CreateStream) -> Result<Outcome> {
        let mut streams = self.engine.catalog.streams.write();
        if streams.contains_key(&c.name) || super::catalog::system_view_columns(&c.name).is_some() {
            if c.if_not_exists {
                return Ok(Outcome::Rows {
                    columns: vec![],
                    rows: vec![],
                    tag: "CREATE STREAM".into(),
                    notices: vec![format!("relation \"{}\" already exists, skipping", c.name)],
                });
            }
            return Err(Error::DuplicateTable(c.name));
        }
        let oid = self
            .engine
            .catalog
            .next_oid
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let stream = Stream::create(
            c.name.clone(),
            oid,
            c.columns,
            c.timestamp_column,
            c.archived,
            c.slack_us,
            self.engine.catalog.stall,
        );
        streams.insert(c.name, stream);
        Ok(Outcome::Command("CREATE STREAM".into()))
    }

    async fn drop_stream(&mut self, names: Vec<String>, if_exists: bool) -> Result<Outcome> {
        let mut notices = Vec::new();
        let mut dropped = Vec::new();
        {
            let mut streams = self.engine.catalog.streams.write();
            for n in &names {
                if !streams.contains_key(n) && !if_exists {
                    return Err(Error::UndefinedTable(n.clone()));
                }
            }
            for n in names {
                match streams.remove(&n) {
                    Some(s) => dropped.push(s),
                    None => notices.push(format!("stream \"{n}\" does not exist, skipping")),
                }
            }
        }
        // Queries reading a dropped stream end once it has processed what it accepted:
        // their subscriptions drain and finish.
        for s in dropped {
            s.drop_stream().await;
        }
        if notices.is_empty() {
            Ok(Outcome::Command("DROP STREAM".into()))
        } else {
            Ok(Outcome::Rows {
                columns: vec![],
                rows: vec![],
                tag: "DROP STREAM".into(),
                notices,
            })
        }
    }

    async fn insert(&mut self, ins: sql::Insert, params: &[Value]) -> Result<Outcome> {
        let stream = self.engine.catalog.stream(&ins.stream)?;
        let ncols = stream.columns.len();
        let mut batch = RowBatch::new(ncols);
        let now = crate::time::now_us();
        for exprs in &ins.rows {
            let mut row = vec![Value::Null; ncols];
            for (e, &c) in exprs.iter().zip(&ins.target_columns) {
                row[c] = eval(e, &EvalContext::new(&[], params, None).with_session(self))?;
            }
            let t = match stream.ts_col {
                None => now,
                Some(c) => row[c].as_timestamp().ok_or_else(|| {
                    Error::NotNullViolation(format!(
                        "null value in column \"{}\" violates not-null constraint: it is the stream's TIMESTAMPCOLUMN",
                        stream.columns[c].name
                    ))
                })?,
            };
            batch.push(row, t);
            if batch.heap_bytes() > self.engine.config.limits.statement_staging_bytes_max {
                return Err(Error::ProgramLimitExceeded(
                    "INSERT staged more than statement_staging_bytes_max bytes".into(),
                ));
            }
        }
        let n = batch.len();
        if n > 0 {
            self.engine.catalog.ingest(&stream, batch).await?;
        }
        Ok(Outcome::Command(format!("INSERT 0 {n}")))
    }

    async fn query(&mut self, q: Query, params: &[Value]) -> Result<Outcome> {
        if q.is_continuous() {
            return Ok(Outcome::Stream(self.subscribe(q, params).await?));
        }
        let (columns, rows) = self.finite(&q, params).await?;
        let tag = format!("SELECT {}", rows.len());
        Ok(Outcome::Rows {
            columns,
            rows,
            tag,
            notices: vec![],
        })
    }

    async fn finite(&self, q: &Query, params: &[Value]) -> Result<(Vec<Column>, Vec<Vec<Value>>)> {
        let input = match &q.source {
            Source::System { name, .. } => {
                self.engine.catalog.barrier_all().await;
                self.engine
                    .catalog
                    .system_view_rows(name.strip_prefix("pg_catalog.").unwrap_or(name))
            }
            Source::Nothing => vec![vec![]],
            Source::Stream { .. } | Source::Join { .. } => {
                unreachable!("continuous queries are subscribed")
            }
        };
        Ok((q.columns.clone(), run_finite(q, input, params, Some(self))?))
    }

    /// Register `q` and return its subscription (finite queries yield their rows and end).
    pub(crate) async fn subscribe(&mut self, q: Query, params: &[Value]) -> Result<Subscription> {
        if !q.is_continuous() {
            let (columns, rows) = self.finite(&q, params).await?;
            let (tx, rx) = tokio::sync::mpsc::channel(1);
            if !rows.is_empty() {
                let _ = tx.try_send(Ok(Event::Rows(rows)));
            }
            return Ok(Subscription {
                columns,
                rx,
                guard: None,
                query_id: 0,
                failure: None,
            });
        }
        register(&self.engine, q, params).await
    }

    async fn declare(
        &mut self,
        name: String,
        q: Query,
        params: &[Value],
        hold: bool,
    ) -> Result<Outcome> {
        if self.tx != TxStatus::InBlock && !hold {
            return Err(Error::NoActiveTransaction(
                "DECLARE CURSOR can only be used in transaction blocks".into(),
            ));
        }
        if self.cursors.contains_key(&name) {
            return Err(Error::DuplicateCursor(name));
        }
        let sub = self.subscribe(q, params).await?;
        self.cursors.insert(
            name,
            Cursor {
                sub,
                hold,
                buffered: VecDeque::new(),
                ended: false,
            },
        );
        Ok(Outcome::Command("DECLARE CURSOR".into()))
    }

    async fn fetch(&mut self, name: &str, count: FetchCount, is_move: bool) -> Result<Outcome> {
        let cursor = self
            .cursors
            .get_mut(name)
            .ok_or_else(|| Error::InvalidCursorName(name.to_string()))?;
        let want = match count {
            FetchCount::Count(n) => n as usize,
            FetchCount::All => usize::MAX,
        };
        let mut notices = Vec::new();
        while cursor.buffered.len() < want && !cursor.ended {
            match cursor.sub.next().await {
                None => cursor.ended = true,
                Some(Ok(Event::Rows(rows))) => cursor.buffered.extend(rows),
                Some(Ok(Event::Notice(n))) => notices.push(n),
                Some(Err(e)) => {
                    cursor.ended = true;
                    return Err(e);
                }
            }
        }
        let take = want.min(cursor.buffered.len());
        let rows: Vec<Vec<Value>> = cursor.buffered.drain(..take).collect();
        if is_move {
            return Ok(Outcome::Command(format!("MOVE {}", rows.len())));
        }
        Ok(Outcome::Rows {
            columns: cursor.sub.columns().to_vec(),
            tag: format!("FETCH {}", rows.len()),
            rows,
            notices,
        })
    }

    fn close(&mut self, cursor: Option<String>) -> Result<Outcome> {
        match cursor {
            None => {
                self.cursors.clear();
                Ok(Outcome::Command("CLOSE CURSOR ALL".into()))
            }
            Some(name) => {
                self.cursors
                    .remove(&name)
                    .ok_or(Error::InvalidCursorName(name))?;
                Ok(Outcome::Command("CLOSE CURSOR".into()))
            }
        }
    }

    fn transaction(&mut self, op: TransactionOp) -> Outcome {
        match op {
            TransactionOp::Begin => {
                if self.tx == TxStatus::Idle {
                    self.tx = TxStatus::InBlock;
                    Outcome::Command("BEGIN".into())
                } else {
                    Outcome::Rows {
                        columns: vec![],
                        rows: vec![],
                        tag: "BEGIN".into(),
                        notices: vec!["there is already a transaction in progress".into()],
                    }
                }
            }
            TransactionOp::Commit | TransactionOp::Rollback => {
                let was = self.tx;
                self.tx = TxStatus::Idle;
                // Cursors end with their transaction, except WITH HOLD ones after a COMMIT.
                let keep_held = op == TransactionOp::Commit && was != TxStatus::Failed;
                self.cursors.retain(|_, c| keep_held && c.hold);
                let tag = if op == TransactionOp::Commit && was != TxStatus::Failed {
                    "COMMIT"
                } else {
                    "ROLLBACK"
                };
                if was == TxStatus::Idle {
                    Outcome::Rows {
                        columns: vec![],
                        rows: vec![],
                        tag: tag.into(),
                        notices: vec!["there is no transaction in progress".into()],
                    }
                } else {
                    Outcome::Command(tag.into())
                }
            }
        }
    }

    fn show(&self, name: &str) -> Result<Outcome> {
        if name == "all" {
            let mut rows: Vec<Vec<Value>> = self
                .settings
                .iter()
                .map(|(k, v)| vec![Value::Text(k.into()), Value::Text(v.into())])
                .collect();
            rows.sort_by(|a, b| a[0].as_str().cmp(&b[0].as_str()));
            let tag = format!("SHOW {}", rows.len());
            return Ok(Outcome::Rows {
                columns: vec![
                    Column::new("name", DataType::Text),
                    Column::new("setting", DataType::Text),
                ],
                rows,
                tag,
                notices: vec![],
            });
        }
        let v = self.settings.get(name).ok_or_else(|| {
            Error::UndefinedObject(format!("unrecognized configuration parameter \"{name}\""))
        })?;
        Ok(Outcome::Rows {
            columns: vec![Column::new(name, DataType::Text)],
            rows: vec![vec![Value::Text(v.into())]],
            tag: "SHOW".into(),
            notices: vec![],
        })
    }

    /// The result columns of cursor `name` made by DECLARE, if it exists.
    pub fn cursor_columns(&self, name: &str) -> Option<Vec<Column>> {
        self.cursors.get(name).map(|c| c.sub.columns().to_vec())
    }

    /// The value of a setting (for `current_setting`).
    pub fn setting(&self, name: &str) -> Option<&str> {
        self.settings.get(name).map(String::as_str)
    }
}

/// Resolve a window clause: the default START AT is the submission time rounded down to a
/// multiple of the slide since the epoch (TelegraphCQ 2.1's rule).
///
/// A default START AT is run as an epoch grid shown from that instant on (the second
/// value): the results are the same, and windows with default starts share work with each
/// other as their grids are all aligned to the epoch.
pub(crate) fn resolve_window(
    spec: &WindowSpec,
    submitted_us: i64,
) -> Result<(Window, Option<i64>)> {
    let (start, cutoff) = match spec.start {
        StartSpec::Epoch => (Start::Epoch, None),
        StartSpec::At(t) => (Start::At(t), None),
        StartSpec::Default => (
            Start::Epoch,
            Some(submitted_us.div_euclid(spec.slide_us) * spec.slide_us),
        ),
    };
    let w = Window::new(spec.range_us, spec.slide_us, start)
        .map_err(|e| Error::InvalidParameterValue(e.to_string()))?;
    Ok((w, cutoff))
}

/// Windows with their display cut-off (see [`resolve_window`]).
pub(crate) type ResolvedWindows = Vec<(Window, Option<i64>)>;

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
    let plan = plan_windows(
        &q,
        &windows,
        eta.unwrap_or_else(|| stream.event_rate_per_sec()),
    );
    let tz = stream
        .ts_col
        .is_none_or(|c| stream.columns[c].data_type == DataType::TimestampTz);
    let exec_limits = ExecLimits {
        groups_max: limits.groups_max,
        open_instances_max: limits.open_instances_max,
        empty_slide_events_max: limits.empty_slide_events_max,
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
    Ok(exec)
}

/// The SLACK a query applies to one stream: the largest its window clauses over that stream
/// give, each defaulting to the stream's `WITH (slack = ...)`.
pub(crate) fn query_slack_us(windows: &[WindowSpec], stream_default_us: i64) -> i64 {
    windows
        .iter()
        .map(|w| w.slack_us.unwrap_or(stream_default_us))
        .max()
        .unwrap_or(stream_default_us)
}

/// Register a continuous query on its stream.
pub(crate) async fn register(
    engine: &Arc<Engine>,
    q: Query,
    params: &[Value],
) -> Result<Subscription> {
    if matches!(q.source, Source::Join { .. }) {
        return super::join::register(engine, q, params).await;
    }
    let (stream, windows) = resolve(engine, &q)?;
    let columns = q.columns.clone();
    let text = q.text.clone();
    let exec = build_exec(engine, q, params, &stream, windows, None)?;
    attach(engine, &stream, exec, text, columns).await
}

/// Attach a built executor to its stream and return the subscription.
pub(crate) async fn attach(
    engine: &Arc<Engine>,
    stream: &Arc<Stream>,
    exec: QueryExec,
    text: String,
    columns: Vec<Column>,
) -> Result<Subscription> {
    let limits = engine.limits();
    if engine.catalog.queries.lock().len() >= limits.queries_max {
        return Err(Error::ProgramLimitExceeded(format!(
            "more than {} continuous queries (queries_max)",
            limits.queries_max
        )));
    }
    let id = engine
        .catalog
        .next_query_id
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let (tx, rx) = tokio::sync::mpsc::channel(limits.output_queue_events.max(1));
    let done = exec.is_done();
    let failure = Arc::new(parking_lot::Mutex::new(None));
    let running = Arc::new(RunningQuery {
        failure: failure.clone(),
        id,
        text,
        exec: parking_lot::Mutex::new(exec),
        tx: parking_lot::Mutex::new(Some(tx)),
    });
    if done {
        // LIMIT 0: the query ends before it starts.
        running.close();
    }
    engine
        .catalog
        .queries
        .lock()
        .insert(id, (running.clone(), stream.name.clone()));
    let guard = QueryGuard {
        stream: Arc::downgrade(stream),
        catalog_queries: Arc::downgrade(&engine.catalog.queries),
        id,
    };
    stream.attach(running).await?;
    Ok(Subscription {
        columns,
        rx,
        guard: Some(Box::new(guard)),
        query_id: id,
        failure: Some(failure),
    })
}
