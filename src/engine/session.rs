//! One client's session: prepare, describe, execute; transaction state, cursors, settings.
//!
//! Statements are parsed at prepare time and bound against the catalog when they are
//! described or executed, so a multi-statement string may create a stream and then read it.
//! Cursors hold a running query's subscription; `FETCH n` waits until it has `n` rows or the
//! query ends, as a PostgreSQL cursor does.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use super::catalog::Stream;
use super::coord::{self, Inbox, LockKey, LockMode, Notification};
use super::copy::CopyIn;
use super::copy_fields::CopyRel;
use super::persist::{new_stream, save_catalog};
use super::settings::{
    display_name, known_setting, parse_bool_setting, parse_overflow, parse_timeout_ms, setting_on,
    show_ms, DEFAULT_SETTINGS, OTHER_SETTINGS, OVERFLOW_SETTING, SHARE_SETTING, SPECULATE_SETTING,
};
use super::Notice;
use super::{Engine, Outcome, Overflow, Subscription};
use crate::error::{Error, Result};
use crate::exec::finite::run_finite;
use crate::exec::{Event, RowBatch};
use crate::expr::{eval, EvalContext};
use crate::sql::{self, FetchCount, Plan, Query, SavepointOp, SessionFunc, Source, TransactionOp};
use crate::types::{Column, DataType, Value};

/// A parsed statement, not yet bound.
#[derive(Clone, Debug)]
pub struct Statement {
    pub(crate) parsed: crate::sql::Parsed,
}

impl Statement {
    /// The statement's SQL text.
    pub(crate) fn text(&self) -> &str {
        self.parsed.text()
    }

    /// Identifiers the statement wrote longer than 63 bytes, with the names they were cut
    /// to (see [`crate::sql::Parsed::truncated_identifiers`]).
    pub(crate) fn truncated_identifiers(&self) -> &[(String, String)] {
        self.parsed.truncated_identifiers()
    }

    /// What a `DEALLOCATE` forgets: `Some(Some(name))` one prepared statement,
    /// `Some(None)` all of them; `None` for any other statement.
    pub(crate) fn deallocates(&self) -> Option<Option<String>> {
        self.parsed.deallocates()
    }
}

/// What the extended protocol's Describe reports.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Description {
    /// Types of `$1..$n`.
    pub(crate) params: Vec<DataType>,
    /// The parameters (0-based) described to clients as a catalog type (`oid`, `oid[]`):
    /// catalog queries' parameters compared with an oid or cast to such a type, whose
    /// values are held as [`crate::types::CatalogType::held_as`].
    pub(crate) catalog_params: Vec<(usize, crate::types::CatalogType)>,
    /// Result columns; `None` for statements without rows (RowDescription vs NoData).
    pub(crate) columns: Option<Vec<Column>>,
}

/// Transaction status for ReadyForQuery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TxStatus {
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

/// A savepoint: what the transaction had when it was set, so that ROLLBACK TO can undo
/// what is undoable. Tuples are not: ingest is not transactional (a COPY or INSERT is
/// visible to continuous queries as soon as it completes), so a savepoint covers cursors,
/// queued notifications, LISTEN changes and transaction-level advisory locks only.
struct Savepoint {
    name: String,
    cursors: HashSet<String>,
    notifications: usize,
    listen_ops: usize,
    xact_locks: usize,
    stream_drops: usize,
    /// The settings when it was defined: ROLLBACK TO puts them back.
    settings: SettingsSnapshot,
}

/// A LISTEN or UNLISTEN waiting for its transaction to commit.
enum ListenOp {
    Listen(String),
    Unlisten(Option<String>),
}

/// The session's settings at one moment, to put back at a transaction block's end.
#[derive(Clone)]
struct SettingsSnapshot {
    settings: HashMap<String, String>,
    zone: crate::tz::Zone,
}

/// What an expression may ask of its session (`current_user`, `current_database()`,
/// `pg_backend_pid()`, `current_setting(...)`): the session's own fields, and the copy a
/// statement takes to a blocking thread (`engine::rel_job`).
#[derive(Clone, Debug)]
pub(crate) struct SessionVars {
    pub(crate) user: String,
    pub(crate) database: String,
    pub(crate) pid: i32,
    /// The settings by lower-case name (`SET`, the start-up message).
    pub(crate) settings: HashMap<String, String>,
}

impl crate::expr::SessionInfo for SessionVars {
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
        setting_of(&self.settings, name)
    }
}

/// A client's session.
pub struct Session {
    pub(crate) engine: Arc<Engine>,
    /// User, database, backend pid and settings.
    pub(crate) vars: SessionVars,
    pub(crate) tx: TxStatus,
    /// The open transaction block is READ ONLY (BEGIN READ ONLY, SET TRANSACTION READ
    /// ONLY, or `default_transaction_read_only` when it began).
    tx_read_only: bool,
    cursors: HashMap<String, Cursor>,
    /// The settings as the open transaction block found them, which ROLLBACK restores
    /// (a SET in a block that does not commit is undone, as in PostgreSQL).
    block_settings: Option<SettingsSnapshot>,
    /// The settings before the block's first SET LOCAL, and the names SET LOCAL set since
    /// (a later plain SET of a name keeps it): COMMIT restores those names from it.
    local_settings: Option<(SettingsSnapshot, HashSet<String>)>,
    /// What this session's user is when it is no role: a superuser when it connected by
    /// trust (the bootstrap user), nothing when it authenticated (see `engine::roles`).
    pub(crate) implicit_superuser: bool,
    /// Continuous queries this session holds now (`queries_per_connection_max`).
    live_queries: Arc<std::sync::atomic::AtomicUsize>,
    savepoints: Vec<Savepoint>,
    /// Notifications for this session, waiting to be sent to its client.
    inbox: Arc<Inbox>,
    /// Channels this session listens on (committed).
    listening: HashSet<String>,
    /// LISTEN / UNLISTEN of the open transaction, applied at COMMIT.
    pending_listen: Vec<ListenOp>,
    /// DROP STREAM statements of the open transaction block, carried out at COMMIT and
    /// forgotten at ROLLBACK (a stream and its archive are not destroyed by a statement
    /// that is rolled back).
    pending_stream_drops: Vec<(Vec<String>, bool)>,
    /// NOTIFYs of the open transaction, sent at COMMIT.
    pending_notify: Vec<Notification>,
    /// Session-level advisory lock holds.
    session_locks: HashMap<(LockKey, LockMode), u32>,
    /// Transaction-level advisory lock holds, released at the end of the transaction.
    xact_locks: Vec<(LockKey, LockMode)>,
    /// The session time zone (`SET TimeZone`).
    zone: crate::tz::ZoneCell,
    /// Settings changed since the server last reported them.
    reported: Vec<(String, String)>,
}

/// The catalog as one session's statements name it: `database.schema.name` must name the
/// session's database.
struct SessionSchema<'a> {
    catalog: &'a super::catalog::Catalog,
    database: &'a str,
    relations: SessionRelations<'a>,
}

/// The catalog's relations as a session's catalog queries are bound against them: with the
/// session's database, for three-part names.
struct SessionRelations<'a> {
    catalog: &'a super::catalog::Catalog,
    database: &'a str,
}

impl sql::RelationProvider for SessionRelations<'_> {
    fn relation(&self, schema: &str, name: &str) -> Option<(Vec<Column>, Vec<Vec<Value>>)> {
        sql::RelationProvider::relation(self.catalog, schema, name)
    }
    fn database(&self) -> Option<&str> {
        Some(self.database)
    }
}

impl sql::SchemaProvider for SessionSchema<'_> {
    fn stream(&self, name: &str) -> Option<(Vec<Column>, Option<usize>)> {
        sql::SchemaProvider::stream(self.catalog, name)
    }
    fn system_view(&self, name: &str) -> Option<Vec<Column>> {
        sql::SchemaProvider::system_view(self.catalog, name)
    }
    fn table(&self, name: &str) -> Option<sql::TableInfo> {
        sql::SchemaProvider::table(self.catalog, name)
    }
    fn stream_names(&self) -> Vec<String> {
        sql::SchemaProvider::stream_names(self.catalog)
    }
    fn relations(&self) -> Option<&dyn sql::RelationProvider> {
        Some(&self.relations)
    }
    fn database(&self) -> Option<&str> {
        Some(self.database)
    }
}

/// Counts one of a session's live continuous queries while it exists.
struct LiveQuery(Arc<std::sync::atomic::AtomicUsize>);

impl Drop for LiveQuery {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

impl crate::expr::SessionInfo for Session {
    fn user(&self) -> &str {
        self.vars.user()
    }
    fn database(&self) -> &str {
        self.vars.database()
    }
    fn pid(&self) -> i32 {
        self.vars.pid()
    }
    fn setting(&self, name: &str) -> Option<String> {
        self.vars.setting(name)
    }
}

/// The value of setting `name` (any case) among a session's `settings`; as SHOW, a
/// parameter never SET has its default (`current_setting('jit')` is off).
pub(crate) fn setting_of(settings: &HashMap<String, String>, name: &str) -> Option<String> {
    let name = name.to_ascii_lowercase();
    settings.get(&name).cloned().or_else(|| {
        OTHER_SETTINGS
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    })
}

/// What a read-only transaction may not execute, as PostgreSQL names it in 25006
/// (`INSERT`, `COPY FROM`, `CREATE TABLE`); `None` for a statement that writes nothing.
fn writes(plan: &Plan) -> Option<&'static str> {
    Some(match plan {
        Plan::Insert(_) => "INSERT",
        Plan::CopyFrom(_) => "COPY FROM",
        Plan::Update(_) => "UPDATE",
        Plan::Delete(_) => "DELETE",
        Plan::Truncate { .. } => "TRUNCATE TABLE",
        Plan::CreateTable(_) => "CREATE TABLE",
        Plan::DropTable { .. } => "DROP TABLE",
        Plan::CreateStream(_) | Plan::CreateDerived(_) => "CREATE STREAM",
        Plan::DropStream { .. } => "DROP STREAM",
        Plan::CreateSink(_) => "CREATE SINK",
        Plan::DropSink { .. } => "DROP SINK",
        Plan::CreateRole { .. } => "CREATE ROLE",
        Plan::AlterRole { .. } => "ALTER ROLE",
        Plan::DropRole { .. } => "DROP ROLE",
        Plan::Grant(g) if g.grant => "GRANT",
        Plan::Grant(_) => "REVOKE",
        Plan::AlterOwner { table: true, .. } => "ALTER TABLE",
        Plan::AlterOwner { .. } | Plan::AlterStreamSource { .. } => "ALTER STREAM",
        _ => return None,
    })
}

impl Session {
    /// The derived-stream and sink statements of this session (`sinks`).
    fn sinks(&self) -> super::sinks::Sinks<'_> {
        super::sinks::Sinks {
            engine: &self.engine,
            user: &self.vars.user,
        }
    }

    /// The table statements of this session (`table_dml`).
    fn tables(&self) -> super::table_dml::TableDml<'_> {
        super::table_dml::TableDml {
            engine: &self.engine,
            session: self,
        }
    }

    /// Whether this session's queries join cross-query shared plans
    /// (`tcq.share_across_queries`).
    fn share(&self) -> bool {
        self.bool_setting(SHARE_SETTING)
    }

    /// A Boolean setting of this session (both tcq's are on by default).
    fn bool_setting(&self, name: &str) -> bool {
        self.vars
            .settings
            .get(name)
            .and_then(|v| parse_bool_setting(name, v).ok())
            .unwrap_or(true)
    }

    /// What a full output queue does to this session's queries (`tcq.output_overflow`).
    fn overflow(&self) -> Overflow {
        self.vars
            .settings
            .get(OVERFLOW_SETTING)
            .and_then(|v| parse_overflow(v).ok())
            .unwrap_or_default()
    }

    pub(crate) fn new(engine: Arc<Engine>, pid: i32) -> Session {
        let settings = DEFAULT_SETTINGS
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Session {
            engine,
            vars: SessionVars {
                user: "tcq".into(),
                database: "tcq".into(),
                pid,
                settings,
            },
            tx: TxStatus::Idle,
            tx_read_only: false,
            cursors: HashMap::new(),
            block_settings: None,
            local_settings: None,
            implicit_superuser: true,
            live_queries: Arc::default(),
            savepoints: Vec::new(),
            inbox: Arc::new(Inbox::default()),
            listening: HashSet::new(),
            pending_listen: Vec::new(),
            pending_stream_drops: Vec::new(),
            pending_notify: Vec::new(),
            session_locks: HashMap::new(),
            xact_locks: Vec::new(),
            zone: Arc::new(parking_lot::RwLock::new(crate::tz::Zone::utc())),
            reported: Vec::new(),
        }
    }

    /// `SET name = value` (`value` `None`: `RESET name`), also applied to the settings of
    /// the start-up message. Errors: 42704 for an unknown parameter, 22023 for a value it
    /// refuses, 0A000 for `SET ROLE` to another role.
    pub(crate) fn set_setting(&mut self, name: String, value: Option<String>) -> Result<Outcome> {
        if name == "all" && value.is_none() {
            self.reset_settings();
            return Ok(Outcome::Command("RESET".into()));
        }
        if !known_setting(&name) {
            return Err(Error::UndefinedObject(format!(
                "unrecognized configuration parameter \"{name}\""
            )));
        }
        let value = match value {
            Some(v) => Some(super::setting_values::checked(&name, &v)?),
            None => None,
        };
        if name == "transaction_read_only" {
            // Only inside a block, as PostgreSQL; outside it changes nothing.
            if self.tx == TxStatus::Idle {
                return Ok(Outcome::Rows {
                    columns: vec![],
                    rows: vec![],
                    tag: "SET".into(),
                    notices: vec!["SET TRANSACTION can only be used in transaction blocks".into()],
                });
            }
            self.tx_read_only = value.as_deref().is_some_and(setting_on);
            return Ok(Outcome::Command("SET".into()));
        }
        if name == "timezone" {
            let zone = match &value {
                Some(v) => crate::tz::Zone::parse(v)?,
                None => crate::tz::Zone::utc(),
            };
            let tag = if value.is_some() { "SET" } else { "RESET" };
            self.set_zone(zone);
            return Ok(Outcome::Command(tag.into()));
        }
        if name == "role" || name == "session_authorization" {
            // Recorded only when it names no other role: a session never acts as
            // another role (there is no membership, see engine::roles).
            if let Some(v) = &value {
                if !matches!(v.to_lowercase().as_str(), "none" | "default" | "")
                    && *v != self.vars.user
                {
                    return Err(Error::FeatureNotSupported(format!(
                        "SET {} to another role is not supported: tcq has no role membership",
                        name.to_uppercase()
                    )));
                }
            }
        }
        if name == OVERFLOW_SETTING {
            if let Some(v) = &value {
                parse_overflow(v)?;
            }
        }
        // Kept in PostgreSQL's display form: SHOW gives `400ms`, `5s`, `1min`, `0`.
        let value = match (name.as_str(), value) {
            ("statement_timeout", Some(v)) => Some(show_ms(parse_timeout_ms(&v)?)),
            (_, value) => value,
        };
        if name == SHARE_SETTING || name == SPECULATE_SETTING {
            if let Some(v) = &value {
                parse_bool_setting(&name, v)?;
            }
        }
        let tag = if value.is_some() { "SET" } else { "RESET" };
        let v = value.unwrap_or_else(|| {
            DEFAULT_SETTINGS
                .iter()
                .chain(OTHER_SETTINGS)
                .find(|(k, _)| *k == name)
                .map_or(String::new(), |(_, v)| v.to_string())
        });
        self.vars.settings.insert(name, v);
        Ok(Outcome::Command(tag.into()))
    }

    /// Apply a setting the client sent in its start-up message (a start-up parameter such
    /// as pgjdbc's `TimeZone` or asyncpg's `server_settings`, or a `-c name=value` of
    /// `options`), as `SET` applies it (`Session::set_setting`); names are case-insensitive.
    /// Errors: 42704 for an unknown parameter, 22023 for a value it refuses.
    pub(crate) fn apply_startup_setting(&mut self, name: &str, value: &str) -> Result<()> {
        self.set_setting(name.to_ascii_lowercase(), Some(value.to_string()))?;
        // Reported in the start-up ParameterStatus set, not again.
        self.reported.clear();
        Ok(())
    }

    /// The session's time zone, shared with the code that formats and parses its
    /// timestamptz text (the server runs each message inside [`crate::tz::scope`]).
    pub(crate) fn zone(&self) -> crate::tz::ZoneCell {
        self.zone.clone()
    }

    /// Settings whose new values the client must be told of (ParameterStatus), since the
    /// last call: `(name as PostgreSQL reports it, value)`.
    pub(crate) fn take_reported_settings(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.reported)
    }

    /// `SET [LOCAL] name = value` as a statement: [`Session::set_setting`], remembered so
    /// that the block's end undoes it as PostgreSQL does (ROLLBACK every SET of the block,
    /// COMMIT the SET LOCALs). SET LOCAL outside a block is a WARNING (25P01) and changes
    /// nothing.
    fn set_in_block(
        &mut self,
        name: String,
        value: Option<String>,
        local: bool,
    ) -> Result<Outcome> {
        if local && self.tx == TxStatus::Idle {
            let what = if name == "transaction_isolation" {
                "SET TRANSACTION"
            } else {
                "SET LOCAL"
            };
            return Ok(Outcome::Rows {
                columns: vec![],
                rows: vec![],
                tag: "SET".into(),
                notices: vec![Notice::warning(
                    "25P01",
                    &format!("{what} can only be used in transaction blocks"),
                )],
            });
        }
        if name == "default_transaction_isolation" && self.tx == TxStatus::Idle {
            // Outside a block every statement is a transaction of the default level.
            let outcome = self.set_setting(name, value)?;
            self.isolation_from_default();
            return Ok(outcome);
        }
        if local && self.local_settings.is_none() {
            self.local_settings = Some((self.settings_snapshot(), HashSet::new()));
        }
        let outcome = self.set_setting(name.clone(), value)?;
        if let Some((_, names)) = &mut self.local_settings {
            if local {
                names.insert(name);
            } else {
                names.remove(&name);
            }
        }
        Ok(outcome)
    }

    /// `transaction_isolation` as a transaction starts: `default_transaction_isolation`.
    fn isolation_from_default(&mut self) {
        let level = self
            .vars
            .settings
            .get("default_transaction_isolation")
            .cloned()
            .unwrap_or_else(|| "read committed".into());
        self.vars
            .settings
            .insert("transaction_isolation".into(), level);
    }

    fn settings_snapshot(&self) -> SettingsSnapshot {
        SettingsSnapshot {
            settings: self.vars.settings.clone(),
            zone: self.zone.read().clone(),
        }
    }

    /// Put the settings back as `snap` has them: all of them, or only `names`.
    fn restore_settings(&mut self, snap: SettingsSnapshot, names: Option<&HashSet<String>>) {
        if names.is_none_or(|n| n.contains("timezone")) {
            self.set_zone(snap.zone);
        }
        match names {
            None => self.vars.settings = snap.settings,
            Some(names) => {
                for n in names {
                    match snap.settings.get(n) {
                        Some(v) => self.vars.settings.insert(n.clone(), v.clone()),
                        None => self.vars.settings.remove(n),
                    };
                }
            }
        }
    }

    fn set_zone(&mut self, zone: crate::tz::Zone) {
        let name = zone.name().to_string();
        *self.zone.write() = zone;
        if self.vars.settings.get("timezone") != Some(&name) {
            self.reported.push(("TimeZone".into(), name.clone()));
        }
        self.vars.settings.insert("timezone".into(), name);
    }

    /// RESET ALL: every setting to its default.
    fn reset_settings(&mut self) {
        let application_name = self.vars.settings.get("application_name").cloned();
        self.vars.settings = DEFAULT_SETTINGS
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        // The start-up packet's application_name is the session default, as in PostgreSQL.
        if let Some(a) = application_name {
            self.vars.settings.insert("application_name".into(), a);
        }
        // Fixed for the session, as PostgreSQL's (set at start-up, see `set_trusted`).
        let superuser = if self.is_superuser() { "on" } else { "off" };
        self.vars
            .settings
            .insert("is_superuser".into(), superuser.into());
        let utc = crate::tz::Zone::utc();
        let name = utc.name().to_string();
        if self.zone.read().name() != name {
            self.reported.push(("TimeZone".into(), name));
        }
        *self.zone.write() = utc;
    }

    /// The session's notification inbox: the server sends what it holds to the client
    /// before ReadyForQuery outside a transaction block, and while the client is idle.
    pub(crate) fn inbox(&self) -> Arc<Inbox> {
        self.inbox.clone()
    }

    /// Record who connected (from the start-up message), for `current_user`,
    /// `current_database()` and `application_name`.
    pub(crate) fn set_identity(
        &mut self,
        user: &str,
        database: &str,
        application_name: Option<&str>,
    ) {
        self.vars.user = user.to_string();
        self.vars.database = database.to_string();
        if let Some(a) = application_name {
            self.vars
                .settings
                .insert("application_name".into(), a.to_string());
        }
    }

    /// The backend id.
    pub(crate) fn pid(&self) -> i32 {
        self.vars.pid
    }

    /// Transaction status for ReadyForQuery.
    pub(crate) fn tx_status(&self) -> TxStatus {
        self.tx
    }

    /// Mark the open transaction block failed after an error (no-op outside a block).
    pub(crate) fn fail_transaction(&mut self) {
        if self.tx == TxStatus::InBlock {
            self.tx = TxStatus::Failed;
        }
    }

    /// Split and parse a query string into statements. Errors: 42601.
    pub fn prepare(&mut self, text: &str) -> Result<Vec<Statement>> {
        let parsed = crate::sql::parse(text).map_err(|e| match e.kind() {
            // A FETCH that scrolls backwards is refused by the parser here and by the
            // executor in PostgreSQL, which an aborted block never reaches: 25P02 there.
            Error::ObjectNotInPrerequisiteState(_) if self.tx == TxStatus::Failed => {
                Error::InFailedTransaction
            }
            _ => e,
        })?;
        Ok(parsed
            .into_iter()
            .map(|parsed| Statement { parsed })
            .collect())
    }

    fn bind(&self, stmt: &Statement, hints: &[Option<DataType>]) -> Result<Plan> {
        // The binder refuses expressions deeper than sql::EXPRESSION_DEPTH_MAX (54001) and
        // grows its stack as it recurses, so no statement can overflow a worker's stack.
        let schema = SessionSchema {
            catalog: &self.engine.catalog,
            database: &self.vars.database,
            relations: SessionRelations {
                catalog: &self.engine.catalog,
                database: &self.vars.database,
            },
        };
        sql::bind(&stmt.parsed, &schema, hints)
    }

    /// Describe a statement for the extended protocol. `param_hints` are the types the
    /// client gave in Parse (`None` = unspecified).
    pub(crate) fn describe(
        &mut self,
        stmt: &Statement,
        param_hints: &[Option<DataType>],
    ) -> Result<Description> {
        let plan = self.bind(stmt, param_hints)?;
        let text_col = |n: &str| Some(vec![Column::new(n, DataType::Text)]);
        let catalog_params = match &plan {
            Plan::Query(q)
            | Plan::Explain { query: q, .. }
            | Plan::CopyTo { query: q, .. }
            | Plan::Declare { query: q, .. } => match &q.source {
                crate::sql::Source::Relational(rq) => rq.catalog_params.clone(),
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        let mut description = match plan {
            Plan::Insert(i) => Description {
                params: i.param_types,
                catalog_params: vec![],
                columns: i.returning.map(|r| r.columns),
            },
            Plan::Update(u) => Description {
                params: u.param_types,
                catalog_params: vec![],
                columns: u.returning.map(|r| r.columns),
            },
            Plan::Delete(d) => Description {
                params: d.param_types,
                catalog_params: vec![],
                columns: d.returning.map(|r| r.columns),
            },
            Plan::Query(q) => Description {
                params: q.param_types.clone(),
                catalog_params: vec![],
                columns: Some(q.columns.clone()),
            },
            Plan::Explain { query, .. } => Description {
                params: query.param_types.clone(),
                catalog_params: vec![],
                columns: text_col("QUERY PLAN"),
            },
            Plan::ExplainQueries { .. } => Description {
                params: vec![],
                catalog_params: vec![],
                columns: text_col("QUERY PLAN"),
            },
            Plan::Show { name } => Description {
                params: vec![],
                catalog_params: vec![],
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
                    catalog_params: vec![],
                    columns,
                }
            }
            Plan::Advance {
                param_types,
                result_type,
                ..
            } => Description {
                params: param_types,
                catalog_params: vec![],
                columns: Some(vec![Column::new("tcq_advance", result_type)]),
            },
            Plan::SessionCall {
                param_types,
                column,
                ..
            } => Description {
                params: param_types,
                catalog_params: vec![],
                columns: Some(vec![column]),
            },
            Plan::CopyTo { query, .. } | Plan::Declare { query, .. } => Description {
                params: query.param_types.clone(),
                catalog_params: vec![],
                columns: None,
            },
            _ => Description {
                params: vec![],
                catalog_params: vec![],
                columns: None,
            },
        };
        description.catalog_params = catalog_params;
        Ok(description)
    }

    /// Execute a statement with bound parameter values.
    pub async fn execute(&mut self, stmt: &Statement, params: &[Value]) -> Result<Outcome> {
        let plan = self.checked_plan(stmt, params)?;
        self.run_plan(plan, stmt, params).await
    }

    /// `stmt` bound, its row counts resolved, and every check that comes before running it:
    /// an aborted block (25P02), missing parameters (42P02), privileges (42501), a
    /// read-only transaction (25006).
    fn checked_plan(&mut self, stmt: &Statement, params: &[Value]) -> Result<Plan> {
        let hints: Vec<Option<DataType>> = params.iter().map(|v| v.data_type()).collect();
        let mut plan = match self.bind(stmt, &hints) {
            Ok(plan) => plan,
            // An aborted block analyses nothing: PostgreSQL answers 25P02 before looking at
            // what the statement names (COMMIT and ROLLBACK always bind).
            Err(_) if self.tx == TxStatus::Failed => return Err(Error::InFailedTransaction),
            Err(e) => return Err(e),
        };
        // A statement that takes parameters given none (a simple query, or a Bind without
        // values) is refused as PostgreSQL's parser refuses it, before anything runs.
        let wanted = plan.param_count();
        if params.is_empty() && wanted > 0 && self.tx != TxStatus::Failed {
            return Err(Error::UndefinedParameter(format!(
                "there is no parameter ${wanted}"
            )));
        }
        match &mut plan {
            Plan::Query(q)
            | Plan::CopyTo { query: q, .. }
            | Plan::Explain { query: q, .. }
            | Plan::Declare { query: q, .. } => q.resolve_row_counts(params)?,
            _ => {}
        }
        if self.tx == TxStatus::Failed
            && !matches!(
                plan,
                Plan::Transaction(
                    TransactionOp::Commit | TransactionOp::Rollback | TransactionOp::Chain { .. }
                ) | Plan::Savepoint(SavepointOp::RollbackTo(_))
            )
        {
            return Err(Error::InFailedTransaction);
        }
        self.check_privileges(&plan)?;
        if let Some(what) = writes(&plan) {
            if self.read_only() {
                return Err(Error::ReadOnlySqlTransaction(format!(
                    "cannot execute {what} in a read-only transaction"
                )));
            }
        }
        Ok(plan)
    }

    /// Run a prepared `plan` of `stmt`.
    async fn run_plan(
        &mut self,
        plan: Plan,
        stmt: &Statement,
        params: &[Value],
    ) -> Result<Outcome> {
        match plan {
            Plan::Empty => Ok(Outcome::Command(String::new())),
            // Prepared statements live in the server's per-connection state: the server
            // checks the name (26000) and forgets the statement before this runs.
            Plan::Deallocate { name } => Ok(Outcome::Command(
                if name.is_some() {
                    "DEALLOCATE"
                } else {
                    "DEALLOCATE ALL"
                }
                .into(),
            )),
            Plan::CreateStream(c) => self.create_stream(c),
            Plan::CreateDerived(c) => self.sinks().create_derived(c).await,
            Plan::CreateSink(c) => self.sinks().create_sink(c).await,
            Plan::DropSink { names, if_exists } => self.sinks().drop_sink(names, if_exists),
            Plan::DropStream {
                names,
                if_exists,
                cascade,
            } if self.tx == TxStatus::InBlock => self.defer_drop_stream(names, if_exists, cascade),
            Plan::DropStream {
                names,
                if_exists,
                cascade,
            } => self.drop_stream(names, if_exists, cascade).await,
            Plan::CreateTable(c) => self.tables().create_table(c, stmt.parsed.text()),
            Plan::DropTable { names, if_exists } => {
                self.tables().drop_table(names, if_exists).await
            }
            Plan::Truncate { names } => self.tables().truncate(names).await,
            Plan::Update(u) => self.tables().update_table(u, params).await,
            Plan::Delete(d) => self.tables().delete_table(d, params).await,
            Plan::Insert(mut i) if i.table => {
                // INSERT ... SELECT: the query's rows first, then the all-or-nothing insert.
                let selected = match i.select.take() {
                    Some(q) => Some(self.finite(&q, params).await?.1),
                    None => None,
                };
                self.tables().insert_table(i, params, selected).await
            }
            Plan::AlterStreamRetention { name, retention_us } => {
                self.alter_retention(&name, retention_us).await
            }
            Plan::AlterStreamSource { name, pause } => {
                super::sources::alter_source(&self.engine, &name, pause).await
            }
            Plan::Insert(i) => {
                self.engine.catalog.background().refuse_write(&i.stream)?;
                self.insert(i, params).await
            }
            Plan::CopyFrom(c) => self.copy_from(c),
            Plan::Query(q) => self.query(*q, params).await,
            Plan::CopyTo { query, options } => {
                let subscription = self.subscribe(*query, params).await?;
                Ok(Outcome::CopyOut {
                    subscription,
                    options,
                })
            }
            Plan::Explain { query, options } => {
                super::explain::explain(&self.engine, *query, options, params, self.share()).await
            }
            Plan::ExplainQueries { ids, options } => {
                super::explain::explain_queries(&self.engine, ids, options)
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
                timeout_us,
            } => self.fetch(&cursor, count, is_move, timeout_us).await,
            Plan::Close { cursor } => self.close(cursor),
            Plan::Transaction(op) => self.transaction_with_drops(op).await,
            Plan::Savepoint(op) => self.savepoint(op),
            Plan::Listen { channel } => {
                coord::check_notify(&channel, "")?;
                self.listen_op(ListenOp::Listen(channel))?;
                Ok(Outcome::Command("LISTEN".into()))
            }
            Plan::Unlisten { channel } => {
                self.listen_op(ListenOp::Unlisten(channel))?;
                Ok(Outcome::Command("UNLISTEN".into()))
            }
            Plan::Notify { channel, payload } => {
                self.notify(channel, payload)?;
                Ok(Outcome::Command("NOTIFY".into()))
            }
            Plan::Discard { all, tag } => {
                if all {
                    self.discard_all()?;
                }
                Ok(Outcome::Command(tag))
            }
            Plan::SessionCall {
                func, args, column, ..
            } => self.session_call(func, &args, column, params).await,
            Plan::Set { name, value, local } => self.set_in_block(name, value, local),
            Plan::Show { name } => self.show(&name),
            Plan::CreateRole {
                name,
                options,
                user,
            } => self.create_role(&name, options, user),
            Plan::AlterRole { name, options } => self.alter_role(&name, options),
            Plan::DropRole { names, if_exists } => self.drop_role(names, if_exists),
            Plan::Grant(g) => self.grant(g),
            Plan::AlterOwner { table, name, owner } => self.alter_owner(table, &name, &owner),
            Plan::Advance {
                stream,
                time_expr,
                result_type,
                ..
            } => self.advance(&stream, &time_expr, result_type, params).await,
        }
    }

    /// `COPY ... FROM STDIN`: a COPY-in state for the stream or table (a derived stream's
    /// output is refused, 42809).
    fn copy_from(&self, c: sql::CopyFrom) -> Result<Outcome> {
        if !c.table {
            self.engine.catalog.background().refuse_write(&c.stream)?;
        }
        let rel = if c.table {
            CopyRel::table(self.engine.catalog.table(&c.stream)?)
        } else {
            CopyRel::stream(self.engine.catalog.stream(&c.stream)?)
        };
        let mut copy = CopyIn::new(self.engine.clone(), rel, c.target_columns, c.options);
        if self.bool_setting(SPECULATE_SETTING) {
            copy.speculate();
        }
        Ok(Outcome::CopyIn(copy))
    }

    /// BEGIN, COMMIT or ROLLBACK; a COMMIT of a block also drops the streams its DROP
    /// STREAMs deferred, and a block's end forgets them either way.
    async fn transaction_with_drops(&mut self, op: TransactionOp) -> Result<Outcome> {
        let commits = matches!(
            op,
            TransactionOp::Commit | TransactionOp::Chain { commit: true }
        ) && self.tx == TxStatus::InBlock;
        let ends = !matches!(op, TransactionOp::Begin { .. });
        let drops = if ends {
            std::mem::take(&mut self.pending_stream_drops)
        } else {
            Vec::new()
        };
        let outcome = self.transaction(op)?;
        if commits {
            for (names, cascade) in drops {
                // Checked when the DROP ran; one dropped since by another session is
                // gone already.
                self.drop_stream(names, true, cascade).await?;
            }
        }
        Ok(outcome)
    }

    /// `SELECT tcq_advance(stream, time)`: move the stream's time to `time` (never back)
    /// and answer the stream's time after it.
    async fn advance(
        &mut self,
        stream: &sql::Expr,
        time_expr: &sql::Expr,
        result_type: DataType,
        params: &[Value],
    ) -> Result<Outcome> {
        let (s, t_us) = self.advance_target(stream, time_expr, params)?;
        self.engine.catalog.heartbeat(&s, t_us).await?;
        // The stream's time never goes back: an earlier instant changes nothing.
        let t_us = s.stats.lock().now_us.unwrap_or(t_us).max(t_us);
        Ok(Outcome::Rows {
            columns: vec![Column::new("tcq_advance", result_type)],
            rows: vec![vec![if result_type == DataType::TimestampTz {
                Value::TimestampTz(t_us)
            } else {
                Value::Timestamp(t_us)
            }]],
            tag: "SELECT 1".into(),
            notices: vec![],
        })
    }

    /// The stream and time of `tcq_advance(stream, time)`, evaluated. Errors: 42P01, 42809
    /// for a table or system view, 23502
    /// for NULLs, 22007 for text that is no timestamp.
    fn advance_target(
        &self,
        stream: &sql::Expr,
        time_expr: &sql::Expr,
        params: &[Value],
    ) -> Result<(Arc<Stream>, i64)> {
        let ctx = EvalContext::new(&[], params, None).with_session(self);
        let name = match eval(stream, &ctx)? {
            Value::Null => {
                return Err(Error::NotNullViolation(
                    "tcq_advance needs a stream name, not NULL".into(),
                ))
            }
            v => sql::stream_name_of(&v.to_text().unwrap_or_default()),
        };
        let s = self.engine.catalog.stream(&name).map_err(|e| {
            let catalog = &self.engine.catalog;
            if catalog.tables_read().contains_key(&name)
                || super::views::system_view_columns(&name).is_some()
            {
                sql::advance_of_no_stream(&name)
            } else {
                e
            }
        })?;
        self.check_relation("stream", &name, sql::Privileges::INSERT)?;
        let time_type = s
            .ts_col
            .map_or(DataType::TimestampTz, |c| s.columns[c].data_type);
        let t = crate::expr::cast_value(eval(time_expr, &ctx)?, time_type)?;
        let t_us = t.as_timestamp().ok_or_else(|| {
            Error::NotNullViolation("tcq_advance needs a timestamp, not NULL".into())
        })?;
        Ok((s, t_us))
    }

    fn create_stream(&mut self, c: sql::CreateStream) -> Result<Outcome> {
        super::catalog::check_schema_writable(&c.name)?;
        if let Some(source) = &c.source {
            crate::connect::spec::check_declared(source)?;
        }
        let mut streams = self.engine.catalog.streams_write();
        if streams.contains_key(&c.name)
            || self.engine.catalog.tables_read().contains_key(&c.name)
            || super::views::system_view_columns(&c.name).is_some()
        {
            if c.if_not_exists {
                return Ok(Outcome::Rows {
                    columns: vec![],
                    rows: vec![],
                    tag: "CREATE STREAM".into(),
                    notices: vec![Notice::relation_exists(&c.name)],
                });
            }
            return Err(Error::DuplicateTable(c.name));
        }
        if let Some(source) = &c.source {
            let others: Vec<(String, crate::connect::SourceSpec)> = streams
                .values()
                .filter_map(|s| Some((s.name.clone(), s.source.lock().as_ref()?.spec.clone())))
                .collect();
            crate::connect::spec::check_mqtt_client_id(
                source,
                &c.name,
                others.iter().map(|(n, s)| (n.as_str(), s)),
            )?;
        }
        let name = c.name.clone();
        let source = c.source.clone();
        let stream = new_stream(&self.engine, c, true)?;
        super::sources::attach(&self.engine, &stream, source, true);
        streams.insert(name.clone(), stream.clone());
        self.engine
            .catalog
            .roles()
            .set_owner(&name, &self.vars.user);
        // The stream exists once the catalog on disk says so; if that write fails, it does
        // not exist at all.
        if let Err(e) = save_catalog(&self.engine, &streams) {
            streams.remove(&name);
            self.engine.catalog.roles().remove_relation(&name);
            stream
                .dropped
                .store(true, std::sync::atomic::Ordering::Release);
            if let Some(source) = stream.source.lock().take() {
                source.stop();
            }
            if let Some(a) = &stream.archive {
                a.remove();
            }
            return Err(e);
        }
        super::sources::run(&self.engine, &stream);
        Ok(Outcome::Command("CREATE STREAM".into()))
    }

    /// `ALTER STREAM ... SET (retention = ...)`: persisted, then applied at once.
    async fn alter_retention(&mut self, name: &str, retention_us: Option<i64>) -> Result<Outcome> {
        let stream = self.engine.catalog.stream(name)?;
        if !stream.archived {
            return Err(Error::InvalidParameterValue(format!(
                "stream \"{name}\" is not archived: retention applies to TYPE ARCHIVED streams"
            )));
        }
        let _order = stream.enqueue_order.lock().await;
        let old = std::mem::replace(&mut *stream.retention_us.lock(), retention_us);
        let saved = {
            let streams = self.engine.catalog.streams_read();
            save_catalog(&self.engine, &streams)
        };
        if let Err(e) = saved {
            *stream.retention_us.lock() = old;
            return Err(e);
        }
        stream.apply_retention();
        Ok(Outcome::Command("ALTER STREAM".into()))
    }

    async fn drop_stream(
        &mut self,
        names: Vec<String>,
        if_exists: bool,
        cascade: bool,
    ) -> Result<Outcome> {
        let mut notices = Vec::new();
        let mut dropped = Vec::new();
        let gone;
        {
            let mut streams = self.engine.catalog.streams_write();
            for n in &names {
                if !streams.contains_key(n) && !if_exists {
                    return Err(Error::UndefinedTable(n.clone()));
                }
            }
            let (names, sinks, cascaded) = self.sinks().drop_stream_dependents(&names, cascade)?;
            notices.extend(cascaded);
            gone = self.sinks().unregister_dropped(&names, &sinks);
            for n in names {
                match streams.remove(&n) {
                    Some(s) => {
                        self.engine.catalog.roles().remove_relation(&n);
                        dropped.push(s)
                    }
                    None => notices.push(format!("stream \"{n}\" does not exist, skipping").into()),
                }
            }
            if !dropped.is_empty() || !gone.is_empty() {
                save_catalog(&self.engine, &streams)?;
            }
        }
        // A derived stream's or sink's query stops; its consumer then drops it.
        self.sinks().stop_dropped(gone);
        // Queries reading a dropped stream end once it has processed what it accepted:
        // their subscriptions drain and finish.
        for s in dropped {
            // A query still replaying the archive is not attached to the stream yet: it
            // ends here (an attached one ends once the stream has processed its queue).
            let replaying: Vec<_> = self
                .engine
                .catalog
                .queries()
                .queries()
                .into_iter()
                .filter(|(q, name)| *name == s.name && q.backfill.lock().is_some_and(|b| !b.done()))
                .map(|(q, _)| q)
                .collect();
            for q in replaying {
                q.close();
            }
            s.drop_stream().await;
            super::sources::forget(&self.engine, &s.name);
            if let Some(a) = &s.archive {
                // Taken so that no statement is still writing into the files removed.
                let _order = s.enqueue_order.lock().await;
                a.remove();
            }
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

    /// DROP STREAM inside a transaction block: checked now (42P01 for a missing stream
    /// without IF EXISTS), carried out at COMMIT, forgotten at ROLLBACK.
    fn defer_drop_stream(
        &mut self,
        names: Vec<String>,
        if_exists: bool,
        cascade: bool,
    ) -> Result<Outcome> {
        let mut notices = Vec::new();
        let mut found = Vec::new();
        {
            let streams = self.engine.catalog.streams_read();
            for n in names {
                if streams.contains_key(&n) {
                    found.push(n);
                } else if if_exists {
                    notices.push(format!("stream \"{n}\" does not exist, skipping").into());
                } else {
                    return Err(Error::UndefinedTable(n));
                }
            }
        }
        // Dependents are checked now (2BP01 at once), and dropped with them at COMMIT.
        let (_, _, cascaded) = self.sinks().drop_stream_dependents(&found, cascade)?;
        notices.extend(cascaded);
        self.pending_stream_drops.push((found, cascade));
        Ok(Outcome::Rows {
            columns: vec![],
            rows: vec![],
            tag: "DROP STREAM".into(),
            notices,
        })
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
                crate::types::conform(&mut row[c], stream.columns[c].typmod)?;
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
                let viewer = super::views::Viewer {
                    user: &self.vars.user,
                    superuser: self.is_superuser(),
                };
                self.engine
                    .catalog
                    .system_view_rows(name.strip_prefix("pg_catalog.").unwrap_or(name), &viewer)
            }
            Source::Table { name, .. } => self
                .engine
                .catalog
                .table_snapshot(name)
                .ok_or_else(|| Error::UndefinedTable(name.clone()))?
                .rows()
                .to_vec(),
            Source::Nothing => vec![vec![]],
            Source::Relational(rq) => {
                self.engine.catalog.barrier_all().await;
                // Off the async workers, and stopped when this future is dropped.
                return super::rel_job::run(self, rq, params).await;
            }
            Source::Stream { .. } | Source::Join { .. } => {
                unreachable!("continuous queries are subscribed")
            }
        };
        // Off the async workers too: a filter or sort over a large table takes long.
        let query = q.clone();
        let params = params.to_vec();
        let rows = super::rel_job::off_worker(self, move |vars, flag| {
            run_finite(&query, input, &params, Some(vars), Some(flag))
        })
        .await?;
        Ok((q.columns.clone(), rows))
    }

    /// Register `q` and return its subscription (finite queries yield their rows and end).
    pub(crate) async fn subscribe(&mut self, q: Query, params: &[Value]) -> Result<Subscription> {
        if !q.is_continuous() {
            let (columns, rows) = self.finite(&q, params).await?;
            // A finite result is already in memory: the queue's bound does not apply.
            let (tx, rx) = super::outq::output_queue(
                usize::MAX,
                Overflow::Error,
                self.engine.catalog.memory(),
            );
            if !rows.is_empty() {
                let _ = tx.push(Ok(Event::Rows(rows)));
            }
            return Ok(Subscription {
                columns,
                rx,
                guard: None,
                query_id: 0,
                failure: None,
            });
        }
        let max = self.engine.limits().queries_per_connection_max;
        let live = &self.live_queries;
        if live.load(std::sync::atomic::Ordering::Relaxed) >= max {
            return Err(Error::ProgramLimitExceeded(format!(
                "more than {max} continuous queries and cursors on one connection (queries_per_connection_max)"
            )));
        }
        let mut sub = super::register::register(
            &self.engine,
            q,
            params,
            self.overflow(),
            Some(self.vars.pid),
            self.share(),
        )
        .await?;
        live.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let counted = LiveQuery(live.clone());
        let guard = sub.guard.take();
        sub.guard = Some(Box::new((guard, counted)));
        Ok(sub)
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

    async fn fetch(
        &mut self,
        name: &str,
        count: FetchCount,
        is_move: bool,
        timeout_us: Option<i64>,
    ) -> Result<Outcome> {
        let deadline = timeout_us.map(|us| {
            tokio::time::Instant::now() + std::time::Duration::from_micros(us.max(0) as u64)
        });
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
            let next = match deadline {
                None => cursor.sub.next().await,
                // What is ready is always taken, even once the time is up (timeout 0).
                Some(deadline) => match cursor.sub.try_next() {
                    Some(event) => event,
                    None => match tokio::time::timeout_at(deadline, cursor.sub.next()).await {
                        Ok(event) => event,
                        Err(_) => break,
                    },
                },
            };
            match next {
                None => cursor.ended = true,
                Some(Ok(e @ (Event::Rows(_) | Event::Block(_)))) => {
                    cursor.buffered.extend(e.into_rows())
                }
                Some(Ok(Event::Notice(n))) => notices.push(n.into()),
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

    /// `default_transaction_read_only` is on.
    fn default_read_only(&self) -> bool {
        self.vars
            .settings
            .get("default_transaction_read_only")
            .is_some_and(|v| setting_on(v))
    }

    /// The current transaction (the block, or the statement's own outside one) is read-only.
    fn read_only(&self) -> bool {
        if self.tx == TxStatus::Idle {
            self.default_read_only()
        } else {
            self.tx_read_only
        }
    }

    fn transaction(&mut self, op: TransactionOp) -> Result<Outcome> {
        let warning = |tag: &str, sqlstate: &'static str, text: &str| Outcome::Rows {
            columns: vec![],
            rows: vec![],
            tag: tag.into(),
            notices: vec![Notice::warning(sqlstate, text)],
        };
        match op {
            TransactionOp::Begin {
                read_only,
                isolation,
                start,
            } => {
                let tag = if start { "START TRANSACTION" } else { "BEGIN" };
                Ok(if self.tx == TxStatus::Idle {
                    self.tx = TxStatus::InBlock;
                    self.tx_read_only = read_only.unwrap_or_else(|| self.default_read_only());
                    self.block_settings = Some(self.settings_snapshot());
                    if let Some(level) = isolation {
                        self.vars
                            .settings
                            .insert("transaction_isolation".into(), level.into());
                    }
                    Outcome::Command(tag.into())
                } else {
                    warning(tag, "25001", "there is already a transaction in progress")
                })
            }
            TransactionOp::Commit | TransactionOp::Rollback => {
                let was = self.tx;
                let tag = self.end_block(op == TransactionOp::Commit)?;
                Ok(if was == TxStatus::Idle {
                    warning(tag, "25P01", "there is no transaction in progress")
                } else {
                    Outcome::Command(tag.into())
                })
            }
            TransactionOp::Chain { commit } => {
                if self.tx == TxStatus::Idle {
                    let word = if commit { "COMMIT" } else { "ROLLBACK" };
                    return Err(Error::NoActiveTransaction(format!(
                        "{word} AND CHAIN can only be used in transaction blocks"
                    )));
                }
                let read_only = self.tx_read_only;
                let tag = self.end_block(commit)?;
                // The new block keeps the ended one's characteristics, as in PostgreSQL.
                self.tx = TxStatus::InBlock;
                self.tx_read_only = read_only;
                self.block_settings = Some(self.settings_snapshot());
                Ok(Outcome::Command(tag.into()))
            }
        }
    }

    /// End the transaction block (or nothing, outside one): COMMIT when `commit` and the
    /// block has not failed, else ROLLBACK; answers the command tag that says which.
    fn end_block(&mut self, commit: bool) -> Result<&'static str> {
        let was = self.tx;
        self.tx = TxStatus::Idle;
        self.tx_read_only = false;
        let committed = commit && was != TxStatus::Failed;
        let (block, local) = (self.block_settings.take(), self.local_settings.take());
        match (committed, block, local) {
            (false, Some(snap), _) => self.restore_settings(snap, None),
            (true, _, Some((snap, names))) => self.restore_settings(snap, Some(&names)),
            _ => {}
        }
        self.isolation_from_default();
        // Cursors end with their transaction, except WITH HOLD ones after a COMMIT.
        self.cursors.retain(|_, c| committed && c.hold);
        self.savepoints.clear();
        self.release_xact_locks();
        let ops = std::mem::take(&mut self.pending_listen);
        let notifications = std::mem::take(&mut self.pending_notify);
        if committed {
            ops.into_iter().for_each(|op| self.apply_listen(op));
            self.engine.notifier.deliver(&coord::fold(notifications))?;
        }
        Ok(if committed { "COMMIT" } else { "ROLLBACK" })
    }

    /// SAVEPOINT, RELEASE and ROLLBACK TO. Errors: 25P01 outside a transaction block, 3B001
    /// for an unknown name.
    fn savepoint(&mut self, op: SavepointOp) -> Result<Outcome> {
        let (word, name) = match &op {
            SavepointOp::Define(n) => ("SAVEPOINT", n),
            SavepointOp::Release(n) => ("RELEASE SAVEPOINT", n),
            SavepointOp::RollbackTo(n) => ("ROLLBACK TO SAVEPOINT", n),
        };
        if self.tx == TxStatus::Idle {
            return Err(Error::NoActiveTransaction(format!(
                "{word} can only be used in transaction blocks"
            )));
        }
        if let SavepointOp::Define(name) = op {
            self.savepoints.push(Savepoint {
                name,
                cursors: self.cursors.keys().cloned().collect(),
                notifications: self.pending_notify.len(),
                listen_ops: self.pending_listen.len(),
                stream_drops: self.pending_stream_drops.len(),
                xact_locks: self.xact_locks.len(),
                settings: self.settings_snapshot(),
            });
            return Ok(Outcome::Command("SAVEPOINT".into()));
        }
        // The innermost savepoint of that name, as PostgreSQL picks it.
        let i = self
            .savepoints
            .iter()
            .rposition(|s| &s.name == name)
            .ok_or_else(|| Error::InvalidSavepoint(name.clone()))?;
        if matches!(op, SavepointOp::Release(_)) {
            self.savepoints.truncate(i);
            return Ok(Outcome::Command("RELEASE".into()));
        }
        self.savepoints.truncate(i + 1);
        // The SETs since the savepoint are undone, as PostgreSQL undoes them.
        let snap = self.savepoints[i].settings.clone();
        self.restore_settings(snap, None);
        let sp = &self.savepoints[i];
        self.cursors.retain(|n, _| sp.cursors.contains(n));
        self.pending_notify.truncate(sp.notifications);
        self.pending_listen.truncate(sp.listen_ops);
        self.pending_stream_drops.truncate(sp.stream_drops);
        let undone: Vec<_> = self.xact_locks.drain(sp.xact_locks..).collect();
        for (key, mode) in undone {
            self.engine.locks.unlock(self.vars.pid, key, mode);
        }
        self.tx = TxStatus::InBlock;
        Ok(Outcome::Command("ROLLBACK".into()))
    }

    /// LISTEN / UNLISTEN: at once outside a transaction block, at COMMIT inside one.
    /// Errors: 54000 past [`coord::SESSION_CHANNELS_MAX`] channels or queued changes.
    fn listen_op(&mut self, op: ListenOp) -> Result<()> {
        let max = coord::SESSION_CHANNELS_MAX;
        if matches!(op, ListenOp::Listen(_))
            && self.listening.len() + self.pending_listen.len() >= max
        {
            return Err(Error::ProgramLimitExceeded(format!(
                "a session may listen on at most {max} channels (and queue as many LISTENs in a transaction)"
            )));
        }
        if self.tx == TxStatus::Idle {
            self.apply_listen(op);
        } else {
            self.pending_listen.push(op);
        }
        Ok(())
    }

    fn apply_listen(&mut self, op: ListenOp) {
        let notifier = &self.engine.notifier;
        match op {
            ListenOp::Listen(channel) => {
                notifier.listen(self.vars.pid, &channel, &self.inbox);
                self.listening.insert(channel);
            }
            ListenOp::Unlisten(Some(channel)) => {
                notifier.unlisten(self.vars.pid, &channel);
                self.listening.remove(&channel);
            }
            ListenOp::Unlisten(None) => {
                for channel in self.listening.drain() {
                    notifier.unlisten(self.vars.pid, &channel);
                }
            }
        }
    }

    /// NOTIFY: sent at once outside a transaction block, at COMMIT inside one (and never
    /// after ROLLBACK). Errors: 22023 for a bad channel or payload, 54000 when a
    /// listener's inbox is full.
    fn notify(&mut self, channel: String, payload: String) -> Result<()> {
        coord::check_notify(&channel, &payload)?;
        let n = Notification {
            pid: self.vars.pid,
            channel,
            payload,
        };
        if self.tx == TxStatus::Idle {
            self.engine.notifier.deliver(&[n])
        } else if self.pending_notify.len() >= coord::SESSION_CHANNELS_MAX {
            Err(Error::ProgramLimitExceeded(format!(
                "too many notifications in one transaction: at most {} are queued until COMMIT",
                coord::SESSION_CHANNELS_MAX
            )))
        } else {
            self.pending_notify.push(n);
            Ok(())
        }
    }

    /// DISCARD ALL: close cursors, reset settings, UNLISTEN *, release advisory locks.
    /// Errors: 25001 inside a transaction block.
    fn discard_all(&mut self) -> Result<()> {
        if self.tx != TxStatus::Idle {
            return Err(Error::ActiveSqlTransaction(
                "DISCARD ALL cannot run inside a transaction block".into(),
            ));
        }
        self.cursors.clear();
        self.reset_settings();
        self.apply_listen(ListenOp::Unlisten(None));
        self.unlock_all_session_locks();
        Ok(())
    }

    fn release_xact_locks(&mut self) {
        for (key, mode) in std::mem::take(&mut self.xact_locks) {
            self.engine.locks.unlock(self.vars.pid, key, mode);
        }
    }

    fn unlock_all_session_locks(&mut self) {
        for ((key, mode), n) in std::mem::take(&mut self.session_locks) {
            for _ in 0..n {
                self.engine.locks.unlock(self.vars.pid, key, mode);
            }
        }
    }

    /// Run a [`SessionFunc`]: one row with one value.
    async fn session_call(
        &mut self,
        func: SessionFunc,
        args: &[sql::Expr],
        column: Column,
        params: &[Value],
    ) -> Result<Outcome> {
        use SessionFunc as F;
        let values = {
            let ctx = EvalContext::new(&[], params, None).with_session(self);
            args.iter()
                .map(|a| eval(a, &ctx))
                .collect::<Result<Vec<_>>>()?
        };
        let mut notices = Vec::new();
        let void = Value::Text(Default::default());
        let value = match func {
            F::Notify => {
                let text = |v: &Value| match v {
                    Value::Null => String::new(),
                    v => v.to_text().unwrap_or_default(),
                };
                self.notify(text(&values[0]), text(&values[1]))?;
                void
            }
            F::AdvisoryUnlockAll => {
                self.unlock_all_session_locks();
                void
            }
            F::FlinkAttach => {
                let text = |v: &Value| v.to_text().unwrap_or_default();
                let Value::Int8(id) = values[0] else {
                    return Ok(one_value(column, Value::Null, notices));
                };
                let (rest, job, dir) = (text(&values[1]), text(&values[2]), text(&values[3]));
                let done = super::flink::attach(&self.engine, id as u64, &rest, &job, &dir)?;
                Value::Text(done.into())
            }
            F::CancelBackend | F::TerminateBackend => {
                let Value::Int4(pid) = values[0] else {
                    return Ok(one_value(column, Value::Null, notices));
                };
                let signal = if func == F::CancelBackend {
                    super::backends::Signal::Cancel
                } else {
                    super::backends::Signal::Terminate
                };
                self.check_signal(pid, func == F::CancelBackend)?;
                // PostgreSQL's signal reaches the calling statement itself, which ends
                // with 57014; it is answered here, before any signal is raised, so that
                // no cancel is left pending for the session's next statement.
                if func == F::CancelBackend && pid == self.vars.pid {
                    return Err(Error::QueryCanceled);
                }
                match self.engine.catalog.backends().signal(pid, signal) {
                    Some(done) => Value::Bool(done),
                    None => {
                        notices
                            .push(format!("PID {pid} is not a PostgreSQL backend process").into());
                        Value::Bool(false)
                    }
                }
            }
            _ => {
                let key = match values[..] {
                    [Value::Int8(k)] => LockKey::One(k),
                    [Value::Int4(a), Value::Int4(b)] => LockKey::Two(a, b),
                    // NULL arguments: PostgreSQL's functions are strict and return NULL.
                    _ => return Ok(one_value(column, Value::Null, notices)),
                };
                self.advisory(func, key, &mut notices).await?
            }
        };
        Ok(one_value(column, value, notices))
    }

    /// An advisory lock function. Errors: 54000 for a lock past
    /// [`coord::SESSION_LOCKS_MAX`] (taking one already held again counts on its key).
    async fn advisory(
        &mut self,
        func: SessionFunc,
        key: LockKey,
        notices: &mut Vec<Notice>,
    ) -> Result<Value> {
        use SessionFunc as F;
        let mode = match func {
            F::AdvisoryLockShared
            | F::TryAdvisoryLockShared
            | F::AdvisoryXactLockShared
            | F::TryAdvisoryXactLockShared
            | F::AdvisoryUnlockShared => LockMode::Shared,
            _ => LockMode::Exclusive,
        };
        let xact = matches!(
            func,
            F::AdvisoryXactLock
                | F::AdvisoryXactLockShared
                | F::TryAdvisoryXactLock
                | F::TryAdvisoryXactLockShared
        );
        let taking = !matches!(func, F::AdvisoryUnlock | F::AdvisoryUnlockShared);
        let held = !xact && self.session_locks.contains_key(&(key, mode));
        let max = coord::SESSION_LOCKS_MAX;
        if taking && !held && self.session_locks.len() + self.xact_locks.len() >= max {
            return Err(Error::ProgramLimitExceeded(format!(
                "a session may hold at most {max} advisory locks"
            )));
        }
        let locks = &self.engine.locks;
        let taken = match func {
            F::AdvisoryUnlock | F::AdvisoryUnlockShared => {
                let held = self.session_locks.get_mut(&(key, mode));
                let Some(count) = held.filter(|c| **c > 0) else {
                    let kind = match mode {
                        LockMode::Exclusive => "ExclusiveLock",
                        LockMode::Shared => "ShareLock",
                    };
                    notices.push(format!("you don't own a lock of type {kind}").into());
                    return Ok(Value::Bool(false));
                };
                *count -= 1;
                if *count == 0 {
                    self.session_locks.remove(&(key, mode));
                }
                locks.unlock(self.vars.pid, key, mode);
                return Ok(Value::Bool(true));
            }
            F::AdvisoryLock
            | F::AdvisoryLockShared
            | F::AdvisoryXactLock
            | F::AdvisoryXactLockShared => {
                locks.lock(self.vars.pid, key, mode).await;
                true
            }
            _ => locks.try_lock(self.vars.pid, key, mode),
        };
        if taken {
            if !xact {
                let holds = self.session_locks.entry((key, mode)).or_insert(0);
                *holds = holds.saturating_add(1);
            } else if self.tx == TxStatus::Idle {
                // Outside a block the statement is its own transaction, which ends now.
                locks.unlock(self.vars.pid, key, mode);
            } else {
                self.xact_locks.push((key, mode));
            }
        }
        Ok(match func {
            F::AdvisoryLock
            | F::AdvisoryLockShared
            | F::AdvisoryXactLock
            | F::AdvisoryXactLockShared => Value::Text(Default::default()),
            _ => Value::Bool(taken),
        })
    }

    fn show(&self, name: &str) -> Result<Outcome> {
        if name == "all" {
            let mut rows: Vec<Vec<Value>> = self
                .vars
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
        if name == "transaction_read_only" {
            let v = if self.read_only() { "on" } else { "off" };
            return Ok(Outcome::Rows {
                columns: vec![Column::new(name, DataType::Text)],
                rows: vec![vec![Value::Text(v.into())]],
                tag: "SHOW".into(),
                notices: vec![],
            });
        }
        let other = OTHER_SETTINGS
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string());
        let v = self
            .vars
            .settings
            .get(name)
            .cloned()
            .or(other)
            .ok_or_else(|| {
                Error::UndefinedObject(format!("unrecognized configuration parameter \"{name}\""))
            })?;
        Ok(Outcome::Rows {
            columns: vec![Column::new(display_name(name), DataType::Text)],
            rows: vec![vec![Value::Text(v.into())]],
            tag: "SHOW".into(),
            notices: vec![],
        })
    }

    /// The result columns of cursor `name` made by DECLARE, if it exists.
    pub(crate) fn cursor_columns(&self, name: &str) -> Option<Vec<Column>> {
        self.cursors.get(name).map(|c| c.sub.columns().to_vec())
    }

    /// The session's `statement_timeout`: how long one statement may run before it is
    /// cancelled with 57014 ("canceling statement due to statement timeout"); `None` when
    /// it is 0 (the default), which is no limit.
    pub(crate) fn statement_timeout(&self) -> Option<std::time::Duration> {
        let ms = parse_timeout_ms(self.setting_inner("statement_timeout")?).ok()?;
        (ms > 0).then(|| std::time::Duration::from_millis(ms))
    }

    fn setting_inner(&self, name: &str) -> Option<&str> {
        self.vars.settings.get(name).map(String::as_str)
    }
}

/// A one-row, one-column result.
fn one_value(column: Column, value: Value, notices: Vec<Notice>) -> Outcome {
    Outcome::Rows {
        columns: vec![column],
        rows: vec![vec![value]],
        tag: "SELECT 1".into(),
        notices,
    }
}

impl Drop for Session {
    /// A session that ends releases its advisory locks and stops listening, as a
    /// PostgreSQL backend does when its connection closes.
    fn drop(&mut self) {
        self.release_xact_locks();
        self.unlock_all_session_locks();
        self.apply_listen(ListenOp::Unlisten(None));
        self.inbox.close();
    }
}
