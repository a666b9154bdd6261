//! The console's JSON endpoints and its compiled-in assets.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{json, Value as Json_};

use super::live::ConsoleSession;
use super::{engine_error, error_response, Console, User};
use crate::engine::Outcome;
use crate::types::{Column, Value};

const INDEX_HTML: &str = include_str!("assets/index.html");
const CONSOLE_JS: &str = include_str!("assets/console.js");
const CONSOLE_CSS: &str = include_str!("assets/console.css");
const FAVICON_SVG: &str = include_str!("assets/favicon.svg");

/// The page's Content-Security-Policy: its own script and style only (no inline script),
/// connections to itself only, and no framing by other pages (so no other site can overlay
/// the Cancel buttons).
const CSP: &str = "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'";

/// `GET /`: the console's page.
pub(super) async fn index() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        INDEX_HTML,
    )
        .into_response()
}

/// `GET /assets/{name}`: the script and the style sheet.
pub(super) async fn asset(Path(name): Path<String>) -> Response {
    let (body, kind) = match name.as_str() {
        "console.js" => (CONSOLE_JS, "text/javascript; charset=utf-8"),
        "console.css" => (CONSOLE_CSS, "text/css; charset=utf-8"),
        "favicon.svg" => (FAVICON_SVG, "image/svg+xml"),
        _ => return (StatusCode::NOT_FOUND, "no such asset\n").into_response(),
    };
    ([(header::CONTENT_TYPE, kind)], body).into_response()
}

/// `GET /favicon.ico`: the console's icon (an SVG, which browsers take at this address
/// too), so a browser's request for it is not a failed resource on every page.
pub(super) async fn favicon() -> Response {
    (
        [
            (header::CONTENT_TYPE, "image/svg+xml"),
            (header::CACHE_CONTROL, "max-age=86400"),
        ],
        FAVICON_SVG,
    )
        .into_response()
}

/// A timestamp as PostgreSQL prints it, or `null`.
pub(crate) fn time_json(t_us: Option<i64>) -> Json_ {
    t_us.map_or(Json_::Null, |t| {
        Json_::String(crate::time::format_timestamp(t))
    })
}

/// A value as JSON: integers and finite floats as numbers, booleans as booleans, NULL as
/// null, everything else (numeric, text, timestamps, intervals) in its PostgreSQL text form.
pub(crate) fn value_json(v: &Value) -> Json_ {
    match v {
        Value::Null => Json_::Null,
        Value::Bool(b) => Json_::Bool(*b),
        Value::Int2(i) => json!(i),
        Value::Int4(i) => json!(i),
        Value::Int8(i) => json!(i),
        Value::Float4(f) if f.is_finite() => json!(f),
        Value::Float8(f) if f.is_finite() => json!(f),
        other => Json_::String(other.to_text().unwrap_or_default()),
    }
}

/// Columns as `[{"name": ..., "type": ...}]`.
pub(crate) fn columns_json(columns: &[Column]) -> Json_ {
    Json_::Array(
        columns
            .iter()
            .map(|c| json!({ "name": c.name, "type": c.data_type.name() }))
            .collect(),
    )
}

/// `GET /api/streams`: every stream with its schema, counters and ingest rate.
pub(super) async fn streams(State(console): State<Arc<Console>>) -> Json<Json_> {
    let list: Vec<Json_> = console
        .engine
        .stream_infos()
        .into_iter()
        .map(|s| {
            let (rate, history) = console.rates.of(&s.name);
            json!({
                "name": s.name,
                "columns": columns_json(&s.columns),
                "timestamp_column": s.timestamp_column,
                "type": if s.archived { "ARCHIVED" } else { "UNARCHIVED" },
                "tuples": s.tuples,
                "current_time": time_json(s.now_us),
                "current_time_us": s.now_us,
                "late_tuples": s.late_tuples,
                "queries": s.queries,
                "rate_per_sec": rate,
                "rate_history": history,
                "disk_bytes": s.disk_bytes,
                "retention": s.retention_us.map(crate::time::human_interval),
                "source": s.source.map(|src| json!({
                    "connector": src.connector,
                    "state": src.status.state,
                    "messages": src.status.messages,
                    "tuples": src.status.tuples,
                    "bad_messages": src.status.bad_messages,
                    "last_error": src.status.last_error,
                    "lag": src.status.lag,
                })),
            })
        })
        .collect();
    Json(Json_::Array(list))
}

/// `GET /api/tables`: every stored table with its columns, primary key and row count.
pub(super) async fn tables(State(console): State<Arc<Console>>) -> Json<Json_> {
    let list: Vec<Json_> = console
        .engine
        .table_infos()
        .into_iter()
        .map(|t| {
            json!({
                "name": t.name,
                "columns": columns_json(&t.columns),
                "primary_key": t.primary_key,
                "rows": t.rows,
            })
        })
        .collect();
    Json(Json_::Array(list))
}

/// `GET /api/queries`: every registered query with its client, counters and state.
pub(super) async fn queries(State(console): State<Arc<Console>>) -> Json<Json_> {
    let backends = console.engine.backends().list();
    let list: Vec<Json_> = console
        .engine
        .query_infos()
        .into_iter()
        .map(|q| {
            let client = q
                .pid
                .and_then(|pid| backends.iter().find(|b| b.pid == pid))
                .map(|b| {
                    json!({
                        "pid": b.pid,
                        "user": b.user,
                        "application_name": b.application_name,
                        "client_addr": b.client_addr,
                    })
                });
            json!({
                "id": q.id,
                "text": q.text,
                "pid": q.pid,
                "client": client,
                "streams": q.streams,
                "current_time": time_json(q.stats.now_us),
                "current_time_us": q.stats.now_us,
                "tuples_in": q.stats.tuples_in,
                "rows_out": q.stats.rows_out,
                "slide_events": q.stats.slide_events,
                "late_tuples": q.stats.late_tuples,
                "open_instances": q.state.open_instances,
                "groups": q.state.groups,
                "state_bytes": q.state.state_bytes,
                "has_plan": q.has_plan,
                "feeds": q.feeds,
                "flink_job": q.flink.as_ref().map(|f| f.0.clone()),
                "flink_state": q.flink.as_ref().map(|f| f.1.clone()),
            })
        })
        .collect();
    Json(Json_::Array(list))
}

/// `GET /api/sinks`: every derived stream and sink with its state and counters.
pub(super) async fn sinks(State(console): State<Arc<Console>>) -> Json<Json_> {
    let list: Vec<Json_> = console
        .engine
        .sink_infos()
        .into_iter()
        .map(|s| {
            json!({
                "name": s.name,
                "kind": s.kind,
                "connector": s.connector,
                "options": s.options,
                "query": s.query,
                "query_id": (s.query_id != 0).then_some(s.query_id),
                "state": s.status.state,
                "rows": s.status.rows,
                "slide_events": s.status.events,
                "errors": s.status.errors,
                "last_error": s.status.last_error,
                "position": time_json(s.status.position_us),
            })
        })
        .collect();
    Json(Json_::Array(list))
}

fn no_such_query(id: u64) -> Response {
    error_response(
        StatusCode::NOT_FOUND,
        format!("no continuous query with id {id}"),
        "42704",
    )
}

/// `GET /api/queries/{id}/plan`: the query's window coverage graph with measured work.
pub(super) async fn plan(State(console): State<Arc<Console>>, Path(id): Path<u64>) -> Response {
    match console.engine.query_plan_json(id) {
        Some(text) => ([(header::CONTENT_TYPE, "application/json")], text).into_response(),
        None if console.engine.query_infos().iter().any(|q| q.id == id) => error_response(
            StatusCode::NOT_FOUND,
            format!("query {id} has no window coverage graph (no windowed aggregate)"),
            "0A000",
        ),
        None => no_such_query(id),
    }
}

/// `POST /api/queries/{id}/cancel`: cancel the query's session's statement.
pub(super) async fn cancel(State(console): State<Arc<Console>>, Path(id): Path<u64>) -> Response {
    match console.engine.cancel_query(id) {
        Some(cancelled) => Json(json!({ "cancelled": cancelled })).into_response(),
        None => no_such_query(id),
    }
}

/// The body of `POST /api/sql` and `POST /api/explain`.
#[derive(Deserialize)]
pub(super) struct SqlBody {
    sql: String,
}

/// `POST /api/sql`: run the statements in `sql` in a fresh session, in order, and return
/// one result per statement: `{"tag", "columns", "rows", "truncated", "notices"}`. A
/// continuous statement is refused (400, SQLSTATE 0A000): it never ends, so the page reads
/// it from `/api/sql/stream` instead. The first failing statement ends the request with its
/// error.
pub(super) async fn sql(
    State(console): State<Arc<Console>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Extension(user): Extension<User>,
    Json(body): Json<SqlBody>,
) -> Response {
    if body.sql.len() > console.options.sql_bytes_max {
        return too_long(&console);
    }
    let mut session = ConsoleSession::open(&console, &user, peer);
    let statements = match session.session.prepare(&body.sql) {
        Ok(s) => s,
        Err(e) => return engine_error(&e),
    };
    let mut results = Vec::new();
    for stmt in &statements {
        let outcome = match run(&console, &mut session, stmt).await {
            Ok(o) => o,
            Err(response) => return response,
        };
        match outcome {
            Outcome::Command(tag) => results.push(json!({ "tag": tag })),
            Outcome::Rows {
                columns,
                rows,
                tag,
                notices,
            } => {
                let truncated = rows.len() > console.options.rows_max;
                let rows: Vec<Json_> = rows
                    .iter()
                    .take(console.options.rows_max)
                    .map(|r| Json_::Array(r.iter().map(value_json).collect()))
                    .collect();
                results.push(json!({
                    "tag": tag,
                    "columns": columns_json(&columns),
                    "rows": rows,
                    "truncated": truncated,
                    "notices": notices.iter().map(|n| &n.message).collect::<Vec<_>>(),
                }));
            }
            Outcome::Stream(_) | Outcome::CopyOut { .. } => {
                return error_response(
                    StatusCode::BAD_REQUEST,
                    "a continuous query never ends: read it from /api/sql/stream".into(),
                    "0A000",
                )
            }
            Outcome::CopyIn(copy) => {
                copy.abort();
                return error_response(
                    StatusCode::BAD_REQUEST,
                    "COPY FROM STDIN needs a PostgreSQL client; the console takes INSERT".into(),
                    "0A000",
                );
            }
        }
    }
    Json(json!({ "results": results })).into_response()
}

/// Execute `stmt`; an error, or the end of `statement_timeout` (57014), is the response.
async fn run(
    console: &Console,
    session: &mut ConsoleSession,
    stmt: &crate::engine::Statement,
) -> Result<Outcome, Response> {
    let timeout = console.options.statement_timeout;
    match tokio::time::timeout(timeout, session.session.execute(stmt, &[])).await {
        Ok(Ok(outcome)) => Ok(outcome),
        Ok(Err(e)) => Err(engine_error(&e)),
        Err(_) => Err(error_response(
            StatusCode::BAD_REQUEST,
            format!(
                "canceling statement due to statement timeout ({} s in the console)",
                timeout.as_secs_f64()
            ),
            "57014",
        )),
    }
}

fn too_long(console: &Console) -> Response {
    error_response(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "the SQL text is longer than {} bytes",
            console.options.sql_bytes_max
        ),
        "54000",
    )
}

/// `POST /api/explain`: `EXPLAIN (FORMAT JSON)` of one continuous SELECT, as the JSON
/// object the optimizer's report renders to (the page draws it as the plan picture).
pub(super) async fn explain(
    State(console): State<Arc<Console>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Extension(user): Extension<User>,
    Json(body): Json<SqlBody>,
) -> Response {
    if body.sql.len() > console.options.sql_bytes_max {
        return too_long(&console);
    }
    let mut session = ConsoleSession::open(&console, &user, peer);
    let text = format!(
        "EXPLAIN (FORMAT JSON) {}",
        body.sql.trim().trim_end_matches(';')
    );
    let statements = match session.session.prepare(&text) {
        Ok(s) => s,
        Err(e) => return engine_error(&e),
    };
    let [stmt] = statements.as_slice() else {
        return error_response(
            StatusCode::BAD_REQUEST,
            "EXPLAIN takes one statement".into(),
            "42601",
        );
    };
    match run(&console, &mut session, stmt).await {
        Ok(Outcome::Rows { rows, .. }) => match rows.first().and_then(|r| r.first()) {
            Some(Value::Text(plan)) if plan.starts_with('{') => (
                [(header::CONTENT_TYPE, "application/json")],
                plan.to_string(),
            )
                .into_response(),
            _ => error_response(
                StatusCode::BAD_REQUEST,
                "this statement has no window coverage graph to draw".into(),
                "0A000",
            ),
        },
        Ok(_) => error_response(
            StatusCode::BAD_REQUEST,
            "EXPLAIN gave no plan".into(),
            "0A000",
        ),
        Err(response) => response,
    }
}
