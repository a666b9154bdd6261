//! The logical plan: what the SQL layer hands to the engine, a closed set of types.
//!
//! No sqlparser type appears here. Every name is resolved and every expression is typed:
//! [`Expr::Column`] indexes a row, aggregates are [`AggCall`]s with their PostgreSQL result
//! type, and each window is a [`WindowSpec`] whose default START AT the engine fills in when
//! the query is registered (the query's submission time, rounded down to its slide).
//!
//! Rows seen by expressions, by context:
//! - *input row*: the stream's (or system view's) columns in declaration order;
//!   [`Query::filter`], [`Aggregate::group_by`] and [`AggCall::arg`] read it.
//! - *aggregate row*: the group keys, then the aggregate results, in order
//!   (`[key_0, .., key_k-1, agg_0, .., agg_n-1]`); [`Query::having`], [`Query::projection`]
//!   and [`Query::order_by`] read it when [`Query::aggregate`] is set, and read the input row
//!   otherwise.
//! - [`Expr::WindowMeta`] reads the instance being emitted (wtime, wstart, wrange, wslide).

use crate::types::{Column, DataType, Value};

/// One planned statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Plan {
    /// `CREATE STREAM name (cols) [TYPE ARCHIVED|UNARCHIVED]`.
    CreateStream(CreateStream),
    /// `DROP STREAM [IF EXISTS] a, b [CASCADE | RESTRICT]`.
    DropStream {
        /// Stream names, normalised (lower-cased unless quoted; `schema.name` kept whole).
        names: Vec<String>,
        /// `IF EXISTS` given.
        if_exists: bool,
        /// `CASCADE`: the derived streams and sinks that read them are dropped too
        /// (without it, their existence refuses the DROP with 2BP01).
        cascade: bool,
    },
    /// `CREATE STREAM name [TYPE ...] [WITH (...)] AS SELECT ...`: a derived stream.
    CreateDerived(CreateDerived),
    /// `CREATE SINK name AS SELECT ... WITH (connector = ...)` or `... FROM stream WITH`.
    CreateSink(CreateSink),
    /// `DROP SINK [IF EXISTS] a, b`.
    DropSink {
        /// Sink names, normalised.
        names: Vec<String>,
        /// `IF EXISTS` given.
        if_exists: bool,
    },
    /// `CREATE TABLE [IF NOT EXISTS] name (cols, constraints)`.
    CreateTable(CreateTable),
    /// `DROP TABLE [IF EXISTS] a, b`.
    DropTable {
        /// Table names, normalised.
        names: Vec<String>,
        /// `IF EXISTS` given.
        if_exists: bool,
    },
    /// `UPDATE t SET c = e, ... [WHERE p]`.
    Update(Update),
    /// `DELETE FROM t [WHERE p]`.
    Delete(Delete),
    /// `TRUNCATE [TABLE] a, b`.
    Truncate {
        /// Table names, normalised.
        names: Vec<String>,
    },
    /// `INSERT INTO s [(cols)] VALUES ...` (a stream or a table).
    /// `ALTER STREAM name SET (retention = '...')` / `RESET (retention)`.
    AlterStreamRetention {
        /// Stream name, normalised.
        name: String,
        /// The new retention, microseconds; `None`: keep every segment.
        retention_us: Option<i64>,
    },
    /// `ALTER STREAM name PAUSE` (`pause`) or `RESUME`: stop or restart its source.
    AlterStreamSource {
        /// Stream name, normalised.
        name: String,
        /// PAUSE (true) or RESUME.
        pause: bool,
    },
    /// `INSERT INTO s [(cols)] VALUES ...`.
    Insert(Insert),
    /// `COPY s [(cols)] FROM STDIN [WITH (...)]`.
    CopyFrom(CopyFrom),
    /// A SELECT: continuous when it reads a stream, finite otherwise.
    Query(Box<Query>),
    /// `COPY (SELECT ...) TO STDOUT [WITH (...)]`.
    CopyTo {
        /// The query whose rows are copied out.
        query: Box<Query>,
        /// FORMAT, HEADER, DELIMITER, NULL.
        options: CopyOptions,
    },
    /// `EXPLAIN [(options)] SELECT ...`.
    Explain {
        /// The query explained.
        query: Box<Query>,
        /// FORMAT, ANALYZE, EVENT_RATE.
        options: ExplainOptions,
    },
    /// `EXPLAIN (FORMAT FLINK, ...) QUERIES ALL | (id, ...)`: the registered continuous
    /// queries as one Flink job.
    ExplainQueries {
        /// The query ids; `None`: every registered query.
        ids: Option<Vec<u64>>,
        /// FORMAT (FLINK only), EVENT_RATE and the export's options.
        options: ExplainOptions,
    },
    /// `DECLARE name [NO SCROLL] CURSOR [WITH[OUT] HOLD] FOR SELECT ...`.
    Declare {
        /// Cursor name, normalised.
        cursor: String,
        /// The query.
        query: Box<Query>,
        /// `WITH HOLD`: the cursor outlives its transaction (and may be declared outside one).
        hold: bool,
    },
    /// `FETCH [n|ALL|NEXT|FORWARD n] [FROM|IN] name` and `MOVE ...`.
    Fetch {
        /// Cursor name, normalised.
        cursor: String,
        /// How many rows.
        count: FetchCount,
        /// `MOVE`: skip the rows, send none; the tag is `MOVE n`.
        is_move: bool,
        /// `WITH (timeout = '1s')` (Materialize's syntax), in microseconds: return the rows
        /// that arrived within this long, even fewer than asked for. `None` waits until the
        /// count is reached or the query ends.
        timeout_us: Option<i64>,
    },
    /// `CLOSE name` (`Some`) or `CLOSE ALL` (`None`).
    Close {
        /// The cursor, or `None` for ALL.
        cursor: Option<String>,
    },
    /// BEGIN / START TRANSACTION / COMMIT / END / ROLLBACK / ABORT.
    Transaction(TransactionOp),
    /// `SET name = value` / `SET name TO value`; `RESET name` sets `None`.
    Set {
        /// Setting name, lower-cased.
        name: String,
        /// New value as text, `None` for RESET/DEFAULT.
        value: Option<String>,
        /// `SET LOCAL`: the value lasts until the transaction block ends.
        local: bool,
    },
    /// `SHOW name` / `SHOW ALL`.
    Show {
        /// Setting name, lower-cased; "all" for SHOW ALL.
        name: String,
    },
    /// `SELECT tcq_advance('stream', timestamp)`: a heartbeat that moves an idle stream's
    /// time forward (docs/sql.md, Windows).
    Advance {
        /// The stream's name, a `text` expression over no input row (a literal or `$n`);
        /// evaluated once, then normalised as an identifier (lower-cased unless quoted).
        stream: Expr,
        /// The new time of the stream: a timestamp or text; the engine casts it to the
        /// stream's time type.
        time_expr: Expr,
        /// Types of `$1..$n`.
        param_types: Vec<DataType>,
        /// The result's type: the stream's time type when the name is a literal,
        /// `timestamp` otherwise (the stream is only known at execution).
        result_type: DataType,
    },
    /// `DEALLOCATE [PREPARE] name` (`Some`) or `DEALLOCATE ALL` (`None`): drivers send it
    /// to drop their server-side prepared statements.
    Deallocate {
        /// The statement name, or `None` for ALL.
        name: Option<String>,
    },
    /// `SAVEPOINT name`, `RELEASE [SAVEPOINT] name`, `ROLLBACK [WORK] TO [SAVEPOINT] name`.
    /// Ingest is not transactional, so a savepoint marks cursors and queued notifications,
    /// never tuples (see the engine's session).
    Savepoint(SavepointOp),
    /// `LISTEN channel`.
    Listen {
        /// Channel name, normalised.
        channel: String,
    },
    /// `UNLISTEN channel` (`Some`) or `UNLISTEN *` (`None`).
    Unlisten {
        /// The channel, or `None` for all.
        channel: Option<String>,
    },
    /// `NOTIFY channel [, 'payload']`.
    Notify {
        /// Channel name, normalised.
        channel: String,
        /// The payload, `""` when none is given.
        payload: String,
    },
    /// `DISCARD ALL | PLANS | SEQUENCES | TEMP`.
    Discard {
        /// `ALL`: reset the whole session state; the others have nothing to discard here.
        all: bool,
        /// The command tag (`DISCARD ALL`, `DISCARD PLANS`, ...).
        tag: String,
    },
    /// `SELECT f(args) [AS name]` for a function with an effect on the session or the
    /// server (advisory locks, `pg_notify`, `pg_cancel_backend`): the engine runs it, once.
    SessionCall {
        /// Which function.
        func: SessionFunc,
        /// Its arguments, typed as the function takes them, over no input row.
        args: Vec<Expr>,
        /// The result column (the function's name or the alias), typed.
        column: Column,
        /// Types of `$1..$n`.
        param_types: Vec<DataType>,
    },
    /// `CREATE ROLE name [WITH] options` / `CREATE USER` (which is LOGIN by default).
    CreateRole {
        /// Role name, normalised.
        name: String,
        /// The attributes given.
        options: RoleOptions,
        /// `CREATE USER`: LOGIN unless NOLOGIN is given.
        user: bool,
    },
    /// `ALTER ROLE name [WITH] options` / `ALTER USER`.
    AlterRole {
        /// Role name, normalised.
        name: String,
        /// The attributes changed; the others stay.
        options: RoleOptions,
    },
    /// `DROP ROLE [IF EXISTS] a, b` / `DROP USER`.
    DropRole {
        /// Role names, normalised.
        names: Vec<String>,
        /// `IF EXISTS` given.
        if_exists: bool,
    },
    /// `GRANT privileges ON [STREAM|TABLE] names TO roles` (`grant`) or
    /// `REVOKE privileges ON [STREAM|TABLE] names FROM roles`.
    Grant(Grant),
    /// `ALTER STREAM|TABLE name OWNER TO role`.
    AlterOwner {
        /// A stored table (`ALTER TABLE`) or a stream.
        table: bool,
        /// Relation name, normalised.
        name: String,
        /// The new owner, normalised.
        owner: String,
    },
    /// An empty query string (`;`).
    Empty,
}

impl Plan {
    /// How many parameters (`$1..$n`) the statement takes: the length of its
    /// `param_types`, 0 for a statement that takes none.
    pub(crate) fn param_count(&self) -> usize {
        match self {
            Plan::Insert(i) => i.param_types.len(),
            Plan::Update(u) => u.param_types.len(),
            Plan::Delete(d) => d.param_types.len(),
            Plan::Query(q)
            | Plan::Explain { query: q, .. }
            | Plan::CopyTo { query: q, .. }
            | Plan::Declare { query: q, .. } => q.param_types.len(),
            Plan::Advance { param_types, .. } | Plan::SessionCall { param_types, .. } => {
                param_types.len()
            }
            _ => 0,
        }
    }
}

/// Role attributes of CREATE ROLE / ALTER ROLE; `None` leaves one at its default (CREATE)
/// or as it is (ALTER).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoleOptions {
    /// LOGIN / NOLOGIN.
    pub(crate) login: Option<bool>,
    /// SUPERUSER / NOSUPERUSER.
    pub(crate) superuser: Option<bool>,
    /// `PASSWORD 'x'` is `Some(Some(x))` (plain text, or a SCRAM-SHA-256 verifier as
    /// PostgreSQL stores one); `PASSWORD NULL` is `Some(None)`.
    pub(crate) password: Option<Option<String>>,
}

/// Privileges on a stream or table, as a set (bits).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Privileges(pub(crate) u8);

impl Privileges {
    /// Read the relation (SELECT, a continuous query, `COPY (SELECT ...) TO`, EXPLAIN).
    pub(crate) const SELECT: Privileges = Privileges(1);
    /// Add rows (INSERT, `COPY ... FROM`, `tcq_advance`).
    pub(crate) const INSERT: Privileges = Privileges(2);
    /// UPDATE a stored table.
    pub(crate) const UPDATE: Privileges = Privileges(4);
    /// DELETE from a stored table.
    pub(crate) const DELETE: Privileges = Privileges(8);
    /// TRUNCATE a stored table.
    pub(crate) const TRUNCATE: Privileges = Privileges(16);
    /// `ALL [PRIVILEGES]`.
    pub(crate) const ALL: Privileges = Privileges(31);
    /// PostgreSQL's names, in its order, with the letter `aclitem` uses for each.
    pub(crate) const NAMES: [(&'static str, char, Privileges); 5] = [
        ("INSERT", 'a', Privileges::INSERT),
        ("SELECT", 'r', Privileges::SELECT),
        ("UPDATE", 'w', Privileges::UPDATE),
        ("DELETE", 'd', Privileges::DELETE),
        ("TRUNCATE", 'D', Privileges::TRUNCATE),
    ];

    /// Every privilege of `other` is in `self`.
    pub(crate) fn contains(self, other: Privileges) -> bool {
        self.0 & other.0 == other.0
    }

    /// Both sets.
    pub(crate) fn union(self, other: Privileges) -> Privileges {
        Privileges(self.0 | other.0)
    }

    /// `self` without `other`.
    pub(crate) fn without(self, other: Privileges) -> Privileges {
        Privileges(self.0 & !other.0)
    }

    /// No privilege.
    pub(crate) fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The `aclitem` letters (`arwdD` for ALL).
    pub(crate) fn letters(self) -> String {
        Privileges::NAMES
            .iter()
            .filter(|(_, _, p)| self.contains(*p))
            .map(|(_, c, _)| *c)
            .collect()
    }
}

/// Which relations a GRANT or REVOKE names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GrantTarget {
    /// `ON STREAM x`: streams only.
    Stream,
    /// `ON TABLE x` or `ON x`: a stored table or a stream, as PostgreSQL's TABLE covers
    /// every relation kind.
    Relation,
}

/// `GRANT` / `REVOKE` on relations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    /// GRANT (`true`) or REVOKE (`false`).
    pub(crate) grant: bool,
    /// The privileges given or taken.
    pub(crate) privileges: Privileges,
    /// What kind of relation the names are.
    pub(crate) target: GrantTarget,
    /// Relation names, normalised.
    pub(crate) relations: Vec<String>,
    /// Role names, normalised; `public` is every role.
    pub(crate) grantees: Vec<String>,
}

/// Savepoint commands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SavepointOp {
    /// `SAVEPOINT name`.
    Define(String),
    /// `RELEASE [SAVEPOINT] name`.
    Release(String),
    /// `ROLLBACK [WORK | TRANSACTION] TO [SAVEPOINT] name`.
    RollbackTo(String),
}

/// Functions the engine runs for their effect, as `SELECT f(args)` without FROM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionFunc {
    /// `pg_advisory_lock(key)` / `(k1, k2)`: waits for an exclusive session lock; `void`.
    AdvisoryLock,
    /// `pg_advisory_lock_shared`: waits for a shared session lock; `void`.
    AdvisoryLockShared,
    /// `pg_try_advisory_lock`: takes an exclusive session lock if free; `boolean`.
    TryAdvisoryLock,
    /// `pg_try_advisory_lock_shared`; `boolean`.
    TryAdvisoryLockShared,
    /// `pg_advisory_xact_lock`: an exclusive lock released at the end of the transaction.
    AdvisoryXactLock,
    /// `pg_advisory_xact_lock_shared`.
    AdvisoryXactLockShared,
    /// `pg_try_advisory_xact_lock`; `boolean`.
    TryAdvisoryXactLock,
    /// `pg_try_advisory_xact_lock_shared`; `boolean`.
    TryAdvisoryXactLockShared,
    /// `pg_advisory_unlock`: releases one hold of an exclusive session lock; `boolean`.
    AdvisoryUnlock,
    /// `pg_advisory_unlock_shared`; `boolean`.
    AdvisoryUnlockShared,
    /// `pg_advisory_unlock_all()`: releases every session lock the session holds; `void`.
    AdvisoryUnlockAll,
    /// `pg_notify(channel, payload)`: NOTIFY with computed arguments; `void`.
    Notify,
    /// `pg_cancel_backend(pid)`: cancel that session's running statement; `boolean`.
    CancelBackend,
    /// `pg_terminate_backend(pid)`: end that session's connection; `boolean`.
    TerminateBackend,
    /// `tcq_flink_attach(query_id, rest, job, sink_dir)`: query `query_id`'s rows now come
    /// from Flink job `job`'s filesystem sink; `text`.
    FlinkAttach,
}

/// `CREATE STREAM`.
#[derive(Clone, Debug, PartialEq)]
pub struct CreateStream {
    /// Stream name, normalised.
    pub(crate) name: String,
    /// Columns in order.
    pub(crate) columns: Vec<Column>,
    /// Index of the TIMESTAMPCOLUMN, if any; `None` means stamped on arrival.
    pub(crate) timestamp_column: Option<usize>,
    /// `TYPE ARCHIVED`.
    pub(crate) archived: bool,
    /// `IF NOT EXISTS`.
    pub(crate) if_not_exists: bool,
    /// `WITH (slack = '...')`: the default SLACK of windows over this stream, microseconds.
    pub(crate) slack_us: i64,
    /// `WITH (retention = '...')` of an archived stream, microseconds: sealed segments whose
    /// latest tuple is older than the stream's current time minus this are removed.
    pub(crate) retention_us: Option<i64>,
    /// `WITH (connector = '...', ...)`: the source that feeds the stream.
    pub(crate) source: Option<crate::connect::SourceSpec>,
}

/// The continuous query of a derived stream or a sink, with what the engine needs beyond
/// the rows: each row's event time and which columns are the query's own.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BackgroundQuery {
    /// The query. Its result has [`BackgroundQuery::visible`] columns as written, then,
    /// when the select list has none, the event time column added at the end.
    pub(crate) query: Box<Query>,
    /// The result column holding each row's event time: `wtime(*)` of a windowed query
    /// (the slide event's instant), the stream's TIMESTAMPCOLUMN of a query without a
    /// window; `None` for a query without a window over a stream stamped on arrival.
    pub(crate) time_column: Option<usize>,
    /// How many result columns the query's select list has (the rest were added).
    pub(crate) visible: usize,
    /// The result columns that are GROUP BY keys (a sink's message key).
    pub(crate) key_columns: Vec<usize>,
    /// The streams the query reads, normalised.
    pub(crate) inputs: Vec<String>,
    /// The query's text as written (the SELECT alone).
    pub(crate) text: String,
}

impl BackgroundQuery {
    /// True when the query has windows (its rows come at slide events); false when it
    /// passes tuples through.
    pub(crate) fn windowed(&self) -> bool {
        !self.query.windows.is_empty() || matches!(self.query.source, Source::Join { .. })
    }
}

/// `CREATE STREAM name [TYPE ARCHIVED | UNARCHIVED] [WITH (slack, retention)] AS SELECT
/// ...`: a stream fed by a continuous query that runs without a client.
#[derive(Clone, Debug, PartialEq)]
pub struct CreateDerived {
    /// The stream to create: its columns are the query's result columns, its
    /// TIMESTAMPCOLUMN the event time column.
    pub(crate) stream: CreateStream,
    /// The query that feeds it.
    pub(crate) query: BackgroundQuery,
}

/// `CREATE SINK [IF NOT EXISTS] name AS SELECT ... WITH (connector = ...)`.
#[derive(Clone, Debug, PartialEq)]
pub struct CreateSink {
    /// Sink name, normalised.
    pub(crate) name: String,
    /// `IF NOT EXISTS`.
    pub(crate) if_not_exists: bool,
    /// The query whose rows are written.
    pub(crate) query: BackgroundQuery,
    /// Where and how they are written.
    pub(crate) spec: crate::connect::sink::SinkSpec,
}

/// `CREATE TABLE`.
#[derive(Clone, Debug, PartialEq)]
pub struct CreateTable {
    /// Table name, normalised.
    pub(crate) name: String,
    /// Columns in order.
    pub(crate) columns: Vec<Column>,
    /// Per column: `NOT NULL` (or part of the PRIMARY KEY).
    pub(crate) not_null: Vec<bool>,
    /// Per column: `DEFAULT e`, a constant expression of the column's type, evaluated at
    /// each insert that leaves the column out.
    pub(crate) defaults: Vec<Option<Expr>>,
    /// `PRIMARY KEY (cols)`, as column indexes.
    pub(crate) primary_key: Option<Vec<usize>>,
    /// Each `UNIQUE (cols)`, as column indexes.
    pub(crate) unique: Vec<Vec<usize>>,
    /// `IF NOT EXISTS`.
    pub(crate) if_not_exists: bool,
}

/// A stored table's shape as the binder needs it ([`SchemaProvider::table`]).
#[derive(Clone, Debug, PartialEq)]
pub struct TableInfo {
    /// Columns in order.
    pub(crate) columns: Vec<Column>,
    /// Per column: its DEFAULT expression, if any.
    pub(crate) defaults: Vec<Option<Expr>>,
    /// Its PRIMARY KEY and UNIQUE keys, as column indexes.
    pub(crate) keys: Vec<Vec<usize>>,
    /// The constraint name of each key, in the order of `keys` (`t_pkey`, `t_a_key`).
    pub(crate) key_names: Vec<String>,
}

/// `RETURNING ...` of INSERT, UPDATE or DELETE on a table.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Returning {
    /// The list, over the affected row (the new row; the removed row for DELETE).
    pub(crate) projection: Vec<Expr>,
    /// Names and types of the result columns.
    pub(crate) columns: Vec<Column>,
}

/// `UPDATE t SET ... [WHERE ...]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Update {
    /// Table name, normalised.
    pub(crate) table: String,
    /// `SET column = expr`: the column's index and the new value over the old row, already
    /// cast to the column's type.
    pub(crate) assignments: Vec<(usize, Expr)>,
    /// WHERE over the old row; every row when `None`.
    pub(crate) filter: Option<Expr>,
    /// `RETURNING ...`, over each new row.
    pub(crate) returning: Option<Returning>,
    /// Types of `$1..$n`.
    pub(crate) param_types: Vec<DataType>,
}

/// `DELETE FROM t [WHERE ...]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Delete {
    /// Table name, normalised.
    pub(crate) table: String,
    /// WHERE over the row; every row when `None`.
    pub(crate) filter: Option<Expr>,
    /// `RETURNING ...`, over each removed row.
    pub(crate) returning: Option<Returning>,
    /// Types of `$1..$n`.
    pub(crate) param_types: Vec<DataType>,
}

/// What INSERT does with a row whose key a table already holds.
#[derive(Clone, Debug, PartialEq, Default)]
pub(crate) enum OnConflict {
    /// 23505, and nothing of the statement is inserted.
    #[default]
    Error,
    /// `ON CONFLICT [(cols)] DO NOTHING`: the row is skipped when it clashes on the arbiter
    /// key (`key_columns`, as the table's key definition gives them), or on any key without
    /// a target; a clash on another key is still 23505.
    DoNothing {
        /// The arbiter key's columns, `None` for every key.
        key_columns: Option<Vec<usize>>,
    },
    /// `ON CONFLICT (cols) DO UPDATE SET ... [WHERE ...]`: the held row whose key on
    /// `key_columns` equals the new row's is updated instead.
    DoUpdate {
        /// The arbiter key's columns (a PRIMARY KEY or UNIQUE key of the table).
        key_columns: Vec<usize>,
        /// `SET column = expr`, over the held row followed by the proposed row
        /// (`EXCLUDED.*`), cast to the column's type.
        assignments: Vec<(usize, Expr)>,
        /// WHERE over the same row: the held row is left alone when false.
        filter: Option<Expr>,
    },
}

/// `INSERT INTO`.
#[derive(Clone, Debug, PartialEq)]
pub struct Insert {
    /// Stream or table name, normalised.
    pub(crate) stream: String,
    /// True when the target is a stored table (then every row names every column, with
    /// defaults filled in).
    pub(crate) table: bool,
    /// `ON CONFLICT DO NOTHING / DO UPDATE` (tables only).
    pub(crate) on_conflict: OnConflict,
    /// `RETURNING ...` (tables only): over each inserted or updated row.
    pub(crate) returning: Option<Returning>,
    /// For each value position, the stream column it fills; columns not named get NULL.
    pub(crate) target_columns: Vec<usize>,
    /// The rows; each expression is constant (literals, parameters, casts, arithmetic) and
    /// already cast to its target column's type. With [`Insert::select`], one row over the
    /// SELECT's result row, evaluated for each of its rows.
    pub(crate) rows: Vec<Vec<Expr>>,
    /// `INSERT ... SELECT` (tables only): the finite query whose rows are inserted.
    pub(crate) select: Option<Box<Query>>,
    /// Types of `$1..$n` as inferred from the target columns.
    pub(crate) param_types: Vec<DataType>,
}

/// `COPY s FROM STDIN`.
#[derive(Clone, Debug, PartialEq)]
pub struct CopyFrom {
    /// Stream or table name, normalised.
    pub(crate) stream: String,
    /// True when the target is a stored table.
    pub(crate) table: bool,
    /// For each field of a row, the stream column it fills (all columns when not named).
    pub(crate) target_columns: Vec<usize>,
    /// Format options.
    pub(crate) options: CopyOptions,
}

/// COPY's format options, with PostgreSQL's defaults per format.
#[derive(Clone, Debug, PartialEq)]
pub struct CopyOptions {
    /// text, csv or binary.
    pub(crate) format: CopyFormat,
    /// `HEADER`: the first line names columns (csv and text).
    pub(crate) header: bool,
    /// `HEADER MATCH` (COPY FROM): the header's names must be the COPY's columns, in order.
    pub(crate) header_match: bool,
    /// `FORCE_NOT_NULL` (CSV, COPY FROM): the fields (positions in the COPY's column list)
    /// never read as NULL, even when they equal the NULL string.
    pub(crate) force_not_null: Vec<usize>,
    /// `FORCE_NULL` (CSV, COPY FROM): the fields read as NULL when they equal the NULL
    /// string even quoted.
    pub(crate) force_null: Vec<usize>,
    /// Field delimiter: tab for text, comma for csv.
    pub(crate) delimiter: u8,
    /// The NULL marker: `\N` for text, empty unquoted string for csv.
    pub(crate) null: String,
    /// CSV quote character, `"` by default.
    pub(crate) quote: u8,
    /// CSV escape character, the quote by default.
    pub(crate) escape: u8,
    /// `LIVE` (tcq's own option, COPY FROM only): rows reach queries as each CopyData
    /// message arrives instead of all at once at the end; a bad row ends the COPY and the
    /// rows before it stay.
    pub(crate) live: bool,
}

impl CopyOptions {
    /// PostgreSQL's defaults for `format`.
    pub(crate) fn defaults(format: CopyFormat) -> CopyOptions {
        match format {
            CopyFormat::Text | CopyFormat::Binary => CopyOptions {
                format,
                header: false,
                header_match: false,
                force_not_null: Vec::new(),
                force_null: Vec::new(),
                delimiter: b'\t',
                null: "\\N".into(),
                quote: b'"',
                escape: b'"',
                live: false,
            },
            CopyFormat::Csv => CopyOptions {
                format,
                header: false,
                header_match: false,
                force_not_null: Vec::new(),
                force_null: Vec::new(),
                delimiter: b',',
                null: String::new(),
                quote: b'"',
                escape: b'"',
                live: false,
            },
        }
    }
}

/// COPY formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CopyFormat {
    /// PostgreSQL's text format: tab-separated, backslash escapes, `\N` for NULL.
    Text,
    /// CSV.
    Csv,
    /// PostgreSQL's binary format: a signature header, per tuple a field count and
    /// length-prefixed fields in each type's binary (`send`) encoding, a -1 trailer.
    Binary,
}

/// EXPLAIN options.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ExplainOptions {
    /// Output format.
    pub(crate) format: ExplainFormat,
    /// `ANALYZE`: run the query (until its LIMIT or a cancel) and show measured work.
    pub(crate) analyze: bool,
    /// `VERBOSE`: also show each optimizer step's output.
    pub(crate) verbose: bool,
    /// `EVENT_RATE '<n> per <unit>'`: events per second for the cost model; `None` uses the
    /// stream's observed rate.
    pub(crate) event_rate_per_sec: Option<f64>,
    /// With FORMAT FLINK: the export's options as written (`parallelism`, `sink`, ...;
    /// [`crate::wcg::flink::ExportOptions::from_pairs`] reads them).
    pub(crate) flink: Vec<(String, String)>,
}

/// EXPLAIN output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum ExplainFormat {
    /// Human-readable text, one line per row of a `QUERY PLAN` column.
    #[default]
    Text,
    /// One JSON document.
    Json,
    /// Graphviz DOT.
    Dot,
    /// Flink SQL (Flink 2.x) computing the same rows along the same plan, one line per row
    /// (see [`crate::wcg::flink`]).
    Flink,
}

/// How many rows a FETCH takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FetchCount {
    /// `FETCH n`, `FETCH FORWARD n`, `FETCH NEXT` (n = 1), `FETCH` (n = 1).
    Count(u64),
    /// `FETCH ALL`: waits until the query ends.
    All,
}

/// Transaction control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransactionOp {
    /// BEGIN / START TRANSACTION, with `READ ONLY` (`Some(true)`), `READ WRITE`
    /// (`Some(false)`) or neither (`None`: `default_transaction_read_only` decides).
    Begin {
        /// The access mode written, if any.
        read_only: Option<bool>,
        /// The isolation level written (`serializable`, `repeatable read`, ...), if any:
        /// what `SHOW transaction_isolation` answers in the block.
        isolation: Option<&'static str>,
        /// Written `START TRANSACTION`, whose command tag is `START TRANSACTION`, not `BEGIN`.
        start: bool,
    },
    /// COMMIT / END.
    Commit,
    /// ROLLBACK / ABORT.
    Rollback,
    /// `COMMIT AND CHAIN` (`commit`) or `ROLLBACK AND CHAIN`: end the block and begin a
    /// new one with the same access mode; 25P01 outside a transaction block.
    Chain {
        /// COMMIT (a failed block is rolled back all the same), else ROLLBACK.
        commit: bool,
    },
}

/// A SELECT.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    /// What the query reads.
    pub source: Source,
    /// Window clauses after the stream, in the order written. Empty: tuples pass through as
    /// they arrive. Several: a multi-window query, one row set per window.
    pub windows: Vec<WindowSpec>,
    /// WHERE, over the input row; type boolean.
    pub filter: Option<Expr>,
    /// GROUP BY and aggregates; `None` when the query has neither.
    pub aggregate: Option<Aggregate>,
    /// HAVING, over the aggregate row; type boolean.
    pub having: Option<Expr>,
    /// The select list, over the aggregate row (or the input row without aggregation).
    pub projection: Vec<Expr>,
    /// Names and types of the result columns, one per projection entry.
    pub columns: Vec<Column>,
    /// ORDER BY, over the same row as the projection; applies within one slide event.
    pub order_by: Vec<SortKey>,
    /// LIMIT: the query ends after this many rows in all.
    pub limit: Option<u64>,
    /// OFFSET: rows skipped before the first sent (finite queries only).
    pub offset: Option<u64>,
    /// `LIMIT $n`: the parameter (`bigint`) that gives [`Query::limit`] when the statement
    /// runs; [`Query::resolve_row_counts`] reads it.
    pub limit_param: Option<usize>,
    /// `OFFSET $n`, likewise for [`Query::offset`].
    pub offset_param: Option<usize>,
    /// Types of `$1..$n`.
    pub param_types: Vec<DataType>,
    /// The statement's text, as shown by `tcq_queries`.
    pub text: String,
}

impl Query {
    /// Fill [`Query::limit`] and [`Query::offset`] from the parameters of `LIMIT $n` and
    /// `OFFSET $n`, as PostgreSQL does when it executes a portal: NULL means no limit (no
    /// offset); the values are `bigint`s.
    ///
    /// Errors: `InvalidRowCountInLimit` (2201W) for a negative LIMIT,
    /// `InvalidRowCountInResultOffset` (2201X) for a negative OFFSET.
    pub(crate) fn resolve_row_counts(&mut self, params: &[Value]) -> crate::error::Result<()> {
        use crate::error::Error;
        let count = |i: usize, what: &str| -> crate::error::Result<Option<u64>> {
            let v = match params.get(i) {
                None | Some(Value::Null) => return Ok(None),
                Some(v) => v,
            };
            let n = match v {
                Value::Text(t) => t.trim().parse::<i64>().ok(),
                v => v.as_i64(),
            }
            .ok_or_else(|| {
                let shown = match v {
                    Value::Text(t) => t.to_string(),
                    other => format!("{other:?}"),
                };
                Error::InvalidTextRepresentation(format!(
                    "invalid input syntax for type bigint: \"{shown}\""
                ))
            })?;
            u64::try_from(n).map(Some).map_err(|_| {
                let msg = format!("{what} must not be negative");
                if what == "LIMIT" {
                    Error::InvalidRowCountInLimit(msg)
                } else {
                    Error::InvalidRowCountInResultOffset(msg)
                }
            })
        };
        if let Some(i) = self.limit_param {
            self.limit = count(i, "LIMIT")?;
        }
        if let Some(i) = self.offset_param {
            self.offset = count(i, "OFFSET")?;
        }
        Ok(())
    }

    /// True when the query reads a stream and so never ends by itself.
    pub(crate) fn is_continuous(&self) -> bool {
        matches!(self.source, Source::Stream { .. } | Source::Join { .. })
    }
}

/// What a query reads.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// A stream, by normalised name, with its columns.
    Stream {
        /// Stream name.
        name: String,
        /// Its columns (the input row).
        columns: Vec<Column>,
    },
    /// A system view (`tcq_streams`, `tcq_queries`, `pg_catalog.*`), by normalised name.
    System {
        /// View name.
        name: String,
        /// Its columns (the input row).
        columns: Vec<Column>,
    },
    /// A stored table, read as it is when the statement runs (a finite query).
    Table {
        /// Table name, normalised.
        name: String,
        /// Its columns (the input row).
        columns: Vec<Column>,
    },
    /// No FROM clause: one empty input row (`SELECT 1`, `SELECT version()`).
    Nothing,
    /// A finite relational query (catalogs, joins, subqueries, CTEs, set operations),
    /// evaluated by [`crate::exec::relational`]; the other fields of [`Query`] are unused
    /// except `columns`, `param_types` and `text`.
    Relational(Box<super::RelQuery>),
    /// Two or more windowed streams joined (`JOIN ... ON`, `USING`, or a comma list with
    /// the predicates in WHERE). The input row is the inputs' rows concatenated in the
    /// order written; [`Query::filter`] holds every join and WHERE predicate over it, and
    /// [`Query::windows`] is empty (each input carries its own window).
    Join {
        /// The joined streams, in the order written.
        inputs: Vec<JoinInput>,
        /// The stored tables joined to them, in the order written (stream-table joins):
        /// each is read as it is at every slide event.
        tables: Vec<JoinTable>,
    },
}

/// A stored table in a join with streams.
#[derive(Clone, Debug, PartialEq)]
pub struct JoinTable {
    /// Table name, normalised.
    pub(crate) table: String,
    /// The name the query gives it (alias, else the table's name).
    pub(crate) alias: String,
    /// The table's columns.
    pub(crate) columns: Vec<Column>,
    /// Index of this table's first column in the join's input row.
    pub(crate) offset: usize,
    /// `LEFT JOIN`: a join tuple of the relations before it that no table row matches is
    /// kept once, with NULLs for the table's columns.
    pub(crate) left: bool,
    /// The `ON` / `USING` predicates of a LEFT JOIN, over the join's input row (an inner
    /// join's predicates are in [`Query::filter`]).
    pub(crate) on: Vec<Expr>,
}

/// One stream of a join, under its own window.
#[derive(Clone, Debug, PartialEq)]
pub struct JoinInput {
    /// Stream name, normalised.
    pub(crate) stream: String,
    /// The name the query gives it (alias, else the stream's unqualified name).
    pub(crate) alias: String,
    /// The stream's columns.
    pub(crate) columns: Vec<Column>,
    /// Index of this input's first column in the join's input row.
    pub(crate) offset: usize,
    /// Its window clause (the first one, when it has several).
    pub(crate) window: WindowSpec,
    /// Its further window clauses, in the order written: non-empty for the one input of a
    /// multi-window join, which the engine runs as one join per window
    /// ([`crate::exec::MultiJoin`]). At most one input of a join has any.
    pub(crate) more_windows: Vec<WindowSpec>,
}

/// A window clause as written; the engine resolves [`StartSpec::Default`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowSpec {
    /// RANGE BY, microseconds, > 0.
    pub(crate) range_us: i64,
    /// SLIDE BY, microseconds, > 0 (= range when SLIDE BY is omitted).
    pub(crate) slide_us: i64,
    /// START AT.
    pub(crate) start: StartSpec,
    /// SLACK, microseconds, >= 0; `None` takes the stream's default (`WITH (slack = ...)`).
    pub(crate) slack_us: Option<i64>,
}

/// START AT as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StartSpec {
    /// Omitted: the submission time rounded down to a multiple of the slide since the epoch.
    Default,
    /// `START AT 'epoch'`: an unbounded grid anchored at the epoch.
    Epoch,
    /// `START AT '<timestamp>'`, microseconds since the epoch.
    At(i64),
}

/// GROUP BY keys and aggregate calls.
#[derive(Clone, Debug, PartialEq)]
pub struct Aggregate {
    /// Group keys, over the input row. Empty: one group (and a row for empty instances).
    pub group_by: Vec<Expr>,
    /// Output types of the group keys.
    pub group_types: Vec<DataType>,
    /// Aggregate calls, in the order they appear in the aggregate row.
    pub calls: Vec<AggCall>,
}

/// One aggregate call, e.g. `avg(delay)`.
#[derive(Clone, Debug, PartialEq)]
pub struct AggCall {
    /// Which aggregate.
    pub func: AggFunc,
    /// Its argument over the input row; `None` for `count(*)`.
    pub arg: Option<Expr>,
    /// Type of the argument (`Int8` for `count(*)`, unused).
    pub arg_type: DataType,
    /// `DISTINCT`: holistic, computed without sharing.
    pub distinct: bool,
    /// Result type as PostgreSQL gives it (count: bigint; sum(int): bigint; sum(bigint),
    /// avg(int): numeric; avg(float8): float8; ...).
    pub result_type: DataType,
}

/// The supported aggregate functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AggFunc {
    /// `count(*)`
    CountStar,
    /// `count(x)`: non-NULL values.
    Count,
    /// `sum(x)`
    Sum,
    /// `avg(x)`
    Avg,
    /// `min(x)`
    Min,
    /// `max(x)`
    Max,
    /// `stddev(x)`, `stddev_samp(x)`
    StddevSamp,
    /// `stddev_pop(x)`
    StddevPop,
    /// `variance(x)`, `var_samp(x)`
    VarSamp,
    /// `var_pop(x)`
    VarPop,
    /// `bool_and(x)`, `every(x)`: the minimum of booleans (false before true).
    BoolAnd,
    /// `bool_or(x)`: the maximum of booleans.
    BoolOr,
    /// `bit_and(x)`: the bitwise AND of integers, of the argument's type.
    BitAnd,
    /// `bit_or(x)`: the bitwise OR of integers, of the argument's type.
    BitOr,
    /// `bit_xor(x)`: the bitwise XOR of integers, of the argument's type.
    BitXor,
}

impl AggFunc {
    /// True for the aggregates that keep the least value seen (`min`, `bool_and`); their
    /// partial state is [`crate::agg::Acc::Extreme`], as for `max` and `bool_or`.
    pub(crate) fn keeps_least(self) -> bool {
        matches!(self, AggFunc::Min | AggFunc::BoolAnd)
    }
}

/// ORDER BY key.
#[derive(Clone, Debug, PartialEq)]
pub struct SortKey {
    /// The key.
    pub(crate) expr: Expr,
    /// DESC.
    pub(crate) descending: bool,
    /// NULLS FIRST (PostgreSQL's default: nulls first when descending).
    pub(crate) nulls_first: bool,
}

/// A typed scalar expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// Column `i` of the row in context.
    Column(usize),
    /// A constant.
    Literal(Value),
    /// Parameter `$(i+1)`.
    Param(usize),
    /// A unary operator.
    Unary {
        /// Which.
        op: UnaryOp,
        /// Operand.
        expr: Box<Expr>,
    },
    /// A binary operator.
    Binary {
        /// Which.
        op: BinaryOp,
        /// Left operand.
        left: Box<Expr>,
        /// Right operand.
        right: Box<Expr>,
    },
    /// `CAST(expr AS type)` / `expr::type`.
    Cast {
        /// Operand.
        expr: Box<Expr>,
        /// Target type.
        to: DataType,
    },
    /// A scalar function call.
    Func {
        /// Which.
        func: ScalarFunc,
        /// Arguments.
        args: Vec<Expr>,
    },
    /// `CASE [operand] WHEN .. THEN .. ELSE .. END`.
    Case {
        /// The operand of a simple CASE.
        operand: Option<Box<Expr>>,
        /// WHEN/THEN pairs.
        branches: Vec<(Expr, Expr)>,
        /// ELSE; NULL when absent.
        otherwise: Option<Box<Expr>>,
    },
    /// `expr IS [NOT] NULL`.
    IsNull {
        /// Operand.
        expr: Box<Expr>,
        /// IS NOT NULL.
        negated: bool,
    },
    /// `expr [NOT] IN (list)`.
    InList {
        /// Operand.
        expr: Box<Expr>,
        /// The list.
        list: Vec<Expr>,
        /// NOT IN.
        negated: bool,
    },
    /// `expr [NOT] [I]LIKE pattern`.
    Like {
        /// Operand.
        expr: Box<Expr>,
        /// Pattern.
        pattern: Box<Expr>,
        /// NOT LIKE.
        negated: bool,
        /// ILIKE.
        case_insensitive: bool,
    },
    /// wtime(*), wstart(*), wrange(*), wslide(*) of the instance being emitted.
    WindowMeta(WindowMeta),
}

/// Window functions of TelegraphCQ and tcq.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowMeta {
    /// `wtime(*)`: end (exclusive) of the instance; type timestamp (timestamptz when the
    /// stream's time column is timestamptz).
    Wtime,
    /// `wstart(*)`: start of the instance; same type as wtime.
    Wstart,
    /// `wrange(*)`: the window's RANGE as an interval.
    Wrange,
    /// `wslide(*)`: the window's SLIDE as an interval.
    Wslide,
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `NOT x`
    Not,
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (integer division for integers, as PostgreSQL)
    Div,
    /// `%`
    Mod,
    /// `=`
    Eq,
    /// `<>`, `!=`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
    /// `AND` (three-valued)
    And,
    /// `OR` (three-valued)
    Or,
    /// `||`
    Concat,
}

impl BinaryOp {
    /// For a comparison (`=`, `<>`, `<`, `<=`, `>`, `>=`), whether it holds when its left
    /// operand compares `o` with its right one; `None` for any other operator.
    pub(crate) fn holds(self, o: std::cmp::Ordering) -> Option<bool> {
        use std::cmp::Ordering::{Equal, Greater, Less};
        Some(match self {
            BinaryOp::Eq => o == Equal,
            BinaryOp::NotEq => o != Equal,
            BinaryOp::Lt => o == Less,
            BinaryOp::LtEq => o != Greater,
            BinaryOp::Gt => o == Greater,
            BinaryOp::GtEq => o != Less,
            _ => return None,
        })
    }

    /// The comparison with its operands swapped (`a < b` is `b > a`); `None` for an
    /// operator that is no comparison.
    pub(crate) fn flipped(self) -> Option<BinaryOp> {
        Some(match self {
            BinaryOp::Eq | BinaryOp::NotEq => self,
            BinaryOp::Lt => BinaryOp::Gt,
            BinaryOp::LtEq => BinaryOp::GtEq,
            BinaryOp::Gt => BinaryOp::Lt,
            BinaryOp::GtEq => BinaryOp::LtEq,
            _ => return None,
        })
    }
}

/// `x op ANY|ALL (array)` over an array built from a row's values
/// ([`ScalarFunc::Quantified`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuantSpec {
    /// The operator applied to `x` and each element.
    pub op: QuantOp,
    /// ALL (else ANY).
    pub all: bool,
    /// Where the array comes from.
    pub source: ArraySource,
}

/// The operator of a [`QuantSpec`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuantOp {
    /// A comparison (`=`, `<>`, `<`, `<=`, `>`, `>=`).
    Cmp(BinaryOp),
    /// `[NOT] LIKE|ILIKE`.
    Like {
        /// NOT LIKE.
        negated: bool,
        /// ILIKE.
        case_insensitive: bool,
    },
}

/// The array of a [`QuantSpec`], from its arguments after `x`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArraySource {
    /// `string_to_array(s, delimiter [, null_string])`: text elements.
    Split,
    /// `regexp_split_to_array(s, pattern [, flags])`: text elements.
    RegexSplit,
    /// `s::t[]`: the array whose text form is `s`, elements of type `t`.
    Text(DataType),
}

/// Scalar functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarFunc {
    /// `x op ANY|ALL (array)` over an array built from the row, args `[x, array args..]`.
    Quantified(QuantSpec),
    /// `abs(x)`
    Abs,
    /// `round(x [, n])`
    Round,
    /// `floor(x)`
    Floor,
    /// `ceil(x)`, `ceiling(x)`
    Ceil,
    /// `sqrt(x)`
    Sqrt,
    /// `coalesce(a, b, ...)`
    Coalesce,
    /// `nullif(a, b)`
    NullIf,
    /// `greatest(...)`
    Greatest,
    /// `least(...)`
    Least,
    /// `lower(s)`
    Lower,
    /// `upper(s)`
    Upper,
    /// `length(s)`, `char_length(s)`
    Length,
    /// `octet_length(s)`: bytes of the UTF-8 text.
    OctetLength,
    /// `substr(s, from [, len])`, `substring`
    Substr,
    /// `x::numeric(p, s)`, with args `[x, p, s]`: `x` rounded half away from zero to `s`
    /// digits; 22003 when more than `p - s` digits remain before the point.
    NumericTypmod,
    /// `x::timestamp(p)` (timestamptz, time), with args `[x, p]`: `x` rounded half away
    /// from zero to `p` fractional digits of a second, as PostgreSQL's
    /// AdjustTimestampForTypmod rounds (on microseconds since 2000-01-01 for timestamps);
    /// infinities are unchanged.
    TimeTypmod,
    /// `concat(...)`
    Concat,
    /// `date_trunc('unit', ts)`
    DateTrunc,
    /// `extract(field FROM ts)`, `date_part('field', ts)`: double precision (numeric for
    /// extract, as PostgreSQL 14+).
    DatePart,
    /// `to_timestamp(double)` and `to_timestamp(text, template)`: timestamptz.
    ToTimestamp,
    /// `to_date(text, template)`: date.
    ToDate,
    /// `now()`, `current_timestamp`: the statement's start, timestamptz.
    Now,
    /// `version()`
    Version,
    /// `current_database()`
    CurrentDatabase,
    /// `current_schema()`
    CurrentSchema,
    /// `current_user`, `session_user`, `user`
    CurrentUser,
    /// `current_setting('name')`
    CurrentSetting,
    /// `pg_backend_pid()`
    BackendPid,
    /// `timezone(zone, ts)`, `ts AT TIME ZONE zone`: a timestamptz as the wall time in
    /// `zone` (a timestamp), or a timestamp read as wall time in `zone` (a timestamptz).
    Timezone,
    /// `trunc(x [, n])`: toward zero (to n digits for numeric).
    Trunc,
    /// `sign(x)`: -1, 0 or 1 of the argument's type.
    Sign,
    /// `power(a, b)`, `pow`, `a ^ b`: double precision, or numeric for numeric operands.
    Power,
    /// `exp(x)`.
    Exp,
    /// `ln(x)`: natural logarithm; 2201E for zero or a negative number.
    Ln,
    /// `log(x)`: base-10 logarithm; 2201E for zero or a negative number.
    Log10,
    /// `random()`: a double precision in [0, 1), drawn per call.
    Random,
    /// `clock_timestamp()`: the wall clock when the call is evaluated, timestamptz.
    ClockTimestamp,
    /// `lpad(s, n [, fill])`: s filled on the left (or cut) to n characters.
    Lpad,
    /// `rpad(s, n [, fill])`: s filled on the right (or cut) to n characters.
    Rpad,
    /// `reverse(s)`.
    Reverse,
    /// `repeat(s, n)`.
    Repeat,
    /// `strpos(s, sub)`, `position(sub IN s)`: the 1-based character position, 0 if absent.
    Strpos,
    /// `initcap(s)`: each word's first letter upper case, the rest lower case.
    Initcap,
    /// `ascii(s)`: the code point of the first character (0 for empty text).
    Ascii,
    /// `chr(n)`: the character of code point n.
    Chr,
    /// `to_hex(n)`: an integer in hexadecimal (two's complement for negatives).
    ToHex,
    /// `a & b`: bitwise AND of two integers of one type.
    BitAnd,
    /// `a | b`: bitwise OR.
    BitOr,
    /// `a # b`: bitwise exclusive OR.
    BitXor,
    /// `~a`: bitwise NOT.
    BitNot,
    /// `a << n`: shift left by n bits (an integer; PostgreSQL takes n modulo the width).
    ShiftLeft,
    /// `a >> n`: arithmetic shift right by n bits.
    ShiftRight,
    /// `md5(s)`: the MD5 digest of s's UTF-8 bytes, 32 lower-case hexadecimal digits.
    Md5,
    /// `regexp_replace(s, pattern, replacement [, flags])`: the first match (every match
    /// with flag `g`) replaced; `\1`..`\9` and `\&` in the replacement are groups.
    RegexpReplace,
    /// `to_char(x, format)`: a number, timestamp or interval formatted by a PostgreSQL
    /// format pattern (`YYYY-MM-DD HH24:MI:SS`, `999D99`, `FM9,999.00`, ...).
    ToChar,
    /// `age(a [, b])`: `a - b` (b: today's midnight) in years, months and days, as
    /// PostgreSQL's symbolic difference.
    Age,
    /// `date_bin(stride, ts, origin)`: the start of the stride-long bin containing ts,
    /// bins aligned on origin.
    DateBin,
    /// `justify_hours(iv)`: 24-hour periods carried into days.
    JustifyHours,
    /// `justify_days(iv)`: 30-day periods carried into months.
    JustifyDays,
    /// `justify_interval(iv)`: both, with the signs made to agree.
    JustifyInterval,
    /// `s ~ pattern`: POSIX regular expression match (`!~` is its NOT).
    RegexMatch,
    /// `s ~* pattern`: the same ignoring case.
    RegexIMatch,
    /// `s SIMILAR TO pattern`: SQL regular expression over the whole text.
    SimilarTo,
    /// `substring(s FROM pattern)` of a text pattern: what the POSIX regular expression's
    /// first group (or whole match) took.
    RegexSubstr,
    /// `substring(s SIMILAR pattern ESCAPE esc)`, `substring(s FROM pattern FOR esc)`: the
    /// part between the SQL regular expression's `esc"` separators.
    SimilarSubstr,
    /// A `character(n)` value read as text: its trailing blanks dropped (PostgreSQL's
    /// bpchar-to-text cast, which comparisons, `||` and text functions apply). No name
    /// calls it; the binder inserts it.
    BpcharText,
    /// `width_bucket(x, low, high, count)`: the 1-based bucket of x among count equal
    /// buckets over [low, high); 0 below, count + 1 at or above.
    WidthBucket,
    /// `translate(s, from, to)`: each character of `from` in `s` replaced by the one at its
    /// position in `to`, or removed when `to` is shorter.
    Translate,
    /// `isfinite(date | timestamp | timestamptz | interval)`: false for the infinities.
    IsFinite,
    /// `cbrt(x)`: cube root, double precision.
    Cbrt,
    /// `sin(x)`, `atan2d(y, x)`, `tanh(x)`, ...: a trigonometric or hyperbolic function of
    /// double precision (see [`crate::expr_trig`]).
    Trig(crate::expr_trig::Trig),
    /// `regexp_count(s, pattern [, start [, flags]])`: int4 (see [`crate::expr_regexp15`]).
    RegexpCount,
    /// `regexp_instr(s, pattern [, start [, n [, endoption [, flags [, subexpr]]]]])`: int4.
    RegexpInstr,
    /// `regexp_like(s, pattern [, flags])`: boolean.
    RegexpLike,
    /// `regexp_substr(s, pattern [, start [, n [, flags [, subexpr]]]])`: text.
    RegexpSubstr,
    /// `min_scale(x)`: the fewest fraction digits that represent a numeric exactly, int4.
    MinScale,
    /// `trim_scale(x)`: a numeric without its trailing fraction zeros.
    TrimScale,
    /// `degrees(x)`: radians to degrees, double precision.
    Degrees,
    /// `radians(x)`: degrees to radians, double precision.
    Radians,
    /// `pi()`: double precision.
    Pi,
    /// `gcd(a, b)`: greatest common divisor (int4, int8 or numeric); 22003 on overflow.
    Gcd,
    /// `lcm(a, b)`: least common multiple (int4, int8 or numeric); 22003 on overflow.
    Lcm,
    /// `div(a, b)`: numeric quotient truncated toward zero; 22012 for a zero divisor.
    Div,
    /// `scale(x)`: the digits after a numeric's decimal point, int4.
    Scale,
    /// `num_nulls(...)`: how many arguments are NULL, int4 (not strict).
    NumNulls,
    /// `num_nonnulls(...)`: how many arguments are not NULL, int4 (not strict).
    NumNonNulls,
    /// `make_date(year, month, day)`: a date (a negative year is BC); 22008 when invalid.
    MakeDate,
    /// `make_time(hour, min, sec)`: a time of day (sec double precision); 22008 when invalid.
    MakeTime,
    /// `make_timestamp(year, month, mday, hour, min, sec)`: a timestamp without time zone
    /// (sec double precision); 22008 when a field is out of range (PostgreSQL 15 takes no
    /// year below 1).
    MakeTimestamp,
    /// `make_interval(years, months, weeks, days, hours, mins, secs)`, each defaulting to 0.
    MakeInterval,
    /// `make_timestamptz(year, month, mday, hour, min, sec [, timezone])`: the wall-clock
    /// time in the session's (or the given) time zone.
    MakeTimestampTz,
    /// `(s1, e1) OVERLAPS (s2, e2)` over four values of one date/time type: boolean, with
    /// PostgreSQL's NULL rules (made by the operator, not called by name).
    Overlaps,
    /// `btrim(s [, chars])`, `TRIM([BOTH] [chars FROM] s)`: s without the characters of
    /// `chars` (a blank by default) at either end.
    Btrim,
    /// `ltrim(s [, chars])`, `TRIM(LEADING ...)`: the same at the start only.
    Ltrim,
    /// `rtrim(s [, chars])`, `TRIM(TRAILING ...)`: the same at the end only.
    Rtrim,
    /// `like_escape(pattern, esc)`, what `LIKE pattern ESCAPE esc` matches by: the pattern
    /// rewritten to the backslash escapes LIKE reads (an empty `esc` escapes nothing);
    /// 22025 for an escape of more than one character.
    LikeEscape,
    /// `factorial(bigint)`: n! as numeric, exact; 22003 for a negative n or one past
    /// PostgreSQL's numeric range (32177).
    Factorial,
    /// `to_number(text, fmt)`: the number the template's digit positions read from the
    /// text (`99G999D9S` reads `12,454.8-`); 22P02 when they read no digit.
    ToNumber,
}

/// Catalog access the binder needs; implemented by the engine's catalog.
pub trait SchemaProvider {
    /// The columns of stream `name` (normalised) and the index of its timestamp column.
    fn stream(&self, name: &str) -> Option<(Vec<Column>, Option<usize>)>;
    /// The columns of system view `name` (normalised), e.g. `tcq_streams`.
    fn system_view(&self, name: &str) -> Option<Vec<Column>>;
    /// Stored table `name` (normalised): its columns and defaults. None by default.
    fn table(&self, _name: &str) -> Option<TableInfo> {
        None
    }
    /// Every stream's name, for the "Perhaps you meant" hint of a misspelled one.
    fn stream_names(&self) -> Vec<String> {
        Vec::new()
    }
    /// The relations finite relational queries read (system catalogs, later stored
    /// tables); `None` leaves such queries to the continuous binder, which refuses them.
    fn relations(&self) -> Option<&dyn super::RelationProvider> {
        None
    }
    /// The session's database, against which `database.schema.name` is checked; `None`
    /// (the default) accepts any.
    fn database(&self) -> Option<&str> {
        None
    }
}
