//! The system views' names and columns, and who may see what in them. A leaf of the
//! engine: the binder reads the columns through the catalog, `view_rows` fills them.

use crate::types::{Column, DataType};

/// The system views and their columns.
pub(crate) fn system_view_columns(name: &str) -> Option<Vec<Column>> {
    let c = Column::new;
    Some(match name {
        "tcq_streams" => vec![
            c("name", DataType::Text),
            c("columns", DataType::Text),
            c("timestamp_column", DataType::Text),
            c("type", DataType::Text),
            c("tuples", DataType::Int8),
            c("current_time", DataType::Timestamp),
            c("queries", DataType::Int8),
            c("disk_bytes", DataType::Int8),
            c("owner", DataType::Text),
        ],
        "tcq_queries" => vec![
            c("id", DataType::Int8),
            c("query", DataType::Text),
            c("stream", DataType::Text),
            c("current_time", DataType::Timestamp),
            c("tuples_in", DataType::Int8),
            c("rows_out", DataType::Int8),
            c("late_tuples", DataType::Int8),
            c("slide_events", DataType::Int8),
            c("stream_times", DataType::Text),
            c("backfill", DataType::Text),
            c("backfill_tuples", DataType::Int8),
            c("backfill_secs", DataType::Float8),
            c("plan_id", DataType::Int8),
            // `stream d` or `sink k` for the query of a derived stream or sink; NULL for
            // a client's.
            c("feeds", DataType::Text),
            c("flink_job", DataType::Text),
            c("flink_state", DataType::Text),
        ],
        // One row per node of each cross-query shared plan (`exec::shared`).
        "tcq_plans" => vec![
            c("plan_id", DataType::Int8),
            c("stream", DataType::Text),
            c("node", DataType::Int4),
            c("window", DataType::Text),
            c("factor", DataType::Bool),
            c("parent", DataType::Int4),
            c("queries", DataType::Text),
            c("tuples_folded", DataType::Int8),
            c("partials_merged", DataType::Int8),
            c("rollup_queries", DataType::Text),
        ],
        // One row per kind of tracked memory (`memory::MemoryKind`), then `total`; the
        // limit is the same on every row.
        // One row per stream fed by a source (`connect`).
        "tcq_sources" => sources_columns(),
        // One row per sink and derived stream (`background`).
        "tcq_sinks" => sinks_columns(),
        "tcq_memory" => vec![
            c("kind", DataType::Text),
            c("bytes", DataType::Int8),
            c("limit_bytes", DataType::Int8),
        ],
        // PostgreSQL's columns that clients read most; tcq's continuous queries are listed
        // too, with backend_type 'tcq continuous query' and the pid of their session.
        "pg_stat_activity" => vec![
            c("datname", DataType::Text),
            c("pid", DataType::Int4),
            c("usename", DataType::Text),
            c("application_name", DataType::Text),
            c("client_addr", DataType::Text),
            c("backend_start", DataType::TimestampTz),
            c("query_start", DataType::TimestampTz),
            c("state", DataType::Text),
            c("query", DataType::Text),
            c("backend_type", DataType::Text),
        ],
        // PostgreSQL's view, one row per connected session (no client certificates).
        "pg_stat_ssl" => vec![
            c("pid", DataType::Int4),
            c("ssl", DataType::Bool),
            c("version", DataType::Text),
            c("cipher", DataType::Text),
            c("bits", DataType::Int4),
            c("client_dn", DataType::Text),
            c("client_serial", DataType::Numeric),
            c("issuer_dn", DataType::Text),
        ],
        _ => return None,
    })
}

/// Who reads a system view: other users' query text (`tcq_queries`, `pg_stat_activity`)
/// is shown to superusers only; others see `<insufficient privilege>`, as PostgreSQL shows.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Viewer<'a> {
    /// The session's user.
    pub(crate) user: &'a str,
    /// Whether it is a superuser now.
    pub(crate) superuser: bool,
}

impl Viewer<'_> {
    /// Whether this viewer may see what a session of `owner` runs (`None`: no session).
    pub(crate) fn sees(&self, owner: Option<&str>) -> bool {
        self.superuser || owner == Some(self.user)
    }
}

/// The text shown in place of a query the viewer may not see.
pub(crate) const HIDDEN: &str = "<insufficient privilege>";

/// The columns of `tcq_sources`.
fn sources_columns() -> Vec<Column> {
    let c = Column::new;
    vec![
        c("stream", DataType::Text),
        c("connector", DataType::Text),
        c("format", DataType::Text),
        c("state", DataType::Text),
        c("options", DataType::Text),
        c("messages", DataType::Int8),
        c("tuples", DataType::Int8),
        c("bad_messages", DataType::Int8),
        c("last_error", DataType::Text),
        c("lag", DataType::Int8),
        c("position", DataType::Text),
        c("commit_errors", DataType::Int8),
    ]
}

/// The columns of `tcq_sinks`.
fn sinks_columns() -> Vec<Column> {
    let c = Column::new;
    vec![
        c("name", DataType::Text),
        c("kind", DataType::Text),
        c("connector", DataType::Text),
        c("format", DataType::Text),
        c("state", DataType::Text),
        c("query_id", DataType::Int8),
        c("query", DataType::Text),
        c("options", DataType::Text),
        c("rows", DataType::Int8),
        c("slide_events", DataType::Int8),
        c("errors", DataType::Int8),
        c("last_error", DataType::Text),
        c("position", DataType::Timestamp),
        c("owner", DataType::Text),
    ]
}
