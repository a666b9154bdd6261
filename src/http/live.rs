//! Live results over Server-Sent Events: a statement's rows as its windows close.
//!
//! `GET /api/sql/stream?sql=...` runs the statements in `sql` in a fresh console session
//! and sends, in order:
//! - `session` `{"pid"}`: the session's backend id (`pg_cancel_backend(pid)` stops it);
//! - per statement, `columns` `[{"name","type"}]`, then `rows` `[[...], ...]` (one event
//!   per slide event, at most [`ROWS_PER_EVENT`] rows each), `notice` `"text"`, and
//!   `complete` `{"tag"}` when it ends;
//! - `error` `{"message","sqlstate"}` when a statement fails or is cancelled (57014),
//!   `limit` `{"rows"}` when `stream_rows_max` rows have been sent, and `end` `{}` after the
//!   last statement. After `error`, `limit` or `end` the stream closes; the page must not
//!   reconnect (EventSource would, so it closes itself on these events).
//!
//! `GET /api/queries/{id}/tail` follows registered query `id`: the same rows its own reader
//! gets, from now on, copied without ever slowing the query
//! ([`crate::engine::Engine::tail_query`]); the stream has no `session` event, and ends
//! with `complete` and `end` when the query ends.
//!
//! Bounds: a client that closes the page ends the statement at once (its subscription is
//! dropped, and with it the query); a client that stops reading is one the engine's output
//! queue cuts off (`output_stall_timeout`); at most `streams_max` streams are open at once.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use axum::extract::{ConnectInfo, Path, Query, State};
use axum::http::StatusCode;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::{mpsc, Notify};

use super::api::{columns_json, value_json};
use super::{error_response, Console, User};
use crate::engine::backends::{BackendGuard, BackendInfo, Signal};
use crate::engine::{Event, Outcome, Session};

/// Rows carried by one `rows` event; a larger slide event is split over several.
pub(crate) const ROWS_PER_EVENT: usize = 1000;

/// SSE events buffered between the statement's task and the response (backpressure
/// beyond).
const EVENTS_BUFFERED: usize = 16;

/// A console session: an engine session registered among the backends, with the flag its
/// `pg_cancel_backend` raises.
pub(crate) struct ConsoleSession {
    pub(crate) session: Session,
    cancel: Arc<CancelFlag>,
    _guard: BackendGuard,
}

#[derive(Default)]
struct CancelFlag {
    /// True while a statement runs (a cancel then has something to stop).
    running: AtomicBool,
    notify: Notify,
}

impl ConsoleSession {
    /// A new session of `user` for a request from `peer`, listed in `pg_stat_activity`
    /// with application_name `tcq console`.
    pub(crate) fn open(console: &Console, user: &User, peer: SocketAddr) -> ConsoleSession {
        let engine = &console.engine;
        let pid = engine.backends().next_pid();
        let mut session = engine.session(pid);
        session.set_identity(&user.0, "tcq", Some("tcq console"));
        let cancel = Arc::new(CancelFlag::default());
        let flag = cancel.clone();
        let signal = Box::new(move |_: Signal| {
            // Cancel and terminate both end the running statement: a console session
            // lives only as long as its request.
            let running = flag.running.load(Ordering::Acquire);
            if running {
                flag.notify.notify_one();
            }
            running
        });
        let info = BackendInfo {
            pid,
            user: user.0.clone(),
            database: "tcq".into(),
            application_name: "tcq console".into(),
            client_addr: peer.ip().to_string(),
            ssl: None,
        };
        let (_, guard) = engine.backends().register(info, signal);
        ConsoleSession {
            session,
            cancel,
            _guard: guard,
        }
    }
}

/// The query string of `/api/sql/stream`.
#[derive(Deserialize)]
pub(super) struct StreamParams {
    sql: String,
}

/// `GET /api/sql/stream?sql=...`: the statements' rows as Server-Sent Events.
pub(super) async fn sql_stream(
    State(console): State<Arc<Console>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Extension(user): Extension<User>,
    Query(params): Query<StreamParams>,
) -> Response {
    stream_sql(console, &user, peer, params.sql)
}

/// `GET /api/queries/{id}/tail`: registered query `id`'s rows from now on, as Server-Sent
/// Events (`columns`, `rows`, `notice` when the tail fell behind and missed slide events,
/// `complete` when the query ends).
pub(super) async fn tail(State(console): State<Arc<Console>>, Path(id): Path<u64>) -> Response {
    let Some(permit) = stream_permit(&console) else {
        return streams_exhausted(&console);
    };
    let Some(mut tail) = console.engine.tail_query(id) else {
        return error_response(
            StatusCode::NOT_FOUND,
            format!("no continuous query with id {id} to follow (joins cannot be followed)"),
            "42704",
        );
    };
    let (tx, rx) = mpsc::channel::<SseEvent>(EVENTS_BUFFERED);
    tokio::spawn(async move {
        let _permit = permit;
        let mut shutdown = console.shutdown.subscribe();
        let mut sent = 0u64;
        let mut missed = 0u64;
        if tx
            .send(event("columns", columns_json(&tail.columns)))
            .await
            .is_err()
        {
            return;
        }
        loop {
            let next = tokio::select! {
                next = tail.next() => next,
                () = tx.closed() => return,
                _ = shutdown.wait_for(|down| *down) => return,
            };
            let Some(rows) = next else { break };
            if tail.missed() > missed {
                missed = tail.missed();
                let n = json!(format!(
                    "the tail fell behind and missed {missed} slide events"
                ));
                if tx.send(event("notice", n)).await.is_err() {
                    return;
                }
            }
            match send_rows(&console, &rows, &tx, &mut sent).await {
                Ok(()) => {}
                Err(Err(Stop::Limit)) => {
                    let _ = tx.send(event("limit", json!({ "rows": sent }))).await;
                    return;
                }
                Err(_) => return,
            }
        }
        let _ = tx
            .send(event(
                "complete",
                json!({ "tag": format!("SELECT {sent}") }),
            ))
            .await;
        let _ = tx.send(event("end", json!({}))).await;
    });
    sse_response(rx)
}

fn stream_permit(console: &Console) -> Option<tokio::sync::OwnedSemaphorePermit> {
    console.streams.clone().try_acquire_owned().ok()
}

fn streams_exhausted(console: &Console) -> Response {
    error_response(
        StatusCode::SERVICE_UNAVAILABLE,
        format!(
            "the console has {} live streams open already",
            console.options.streams_max
        ),
        "53300",
    )
}

fn sse_response(mut rx: mpsc::Receiver<SseEvent>) -> Response {
    let events = futures::stream::poll_fn(move |cx| {
        rx.poll_recv(cx)
            .map(|e| e.map(Ok::<_, std::convert::Infallible>))
    });
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}

fn stream_sql(console: Arc<Console>, user: &User, peer: SocketAddr, sql: String) -> Response {
    if sql.len() > console.options.sql_bytes_max {
        return error_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the SQL text is longer than {} bytes",
                console.options.sql_bytes_max
            ),
            "54000",
        );
    }
    let Some(permit) = stream_permit(&console) else {
        return streams_exhausted(&console);
    };
    let (tx, rx) = mpsc::channel::<SseEvent>(EVENTS_BUFFERED);
    let session = ConsoleSession::open(&console, user, peer);
    tokio::spawn(async move {
        let _permit = permit;
        run_statements(console, session, sql, tx).await;
    });
    sse_response(rx)
}

fn event(name: &str, data: serde_json::Value) -> SseEvent {
    SseEvent::default().event(name).data(data.to_string())
}

/// Why a statement's stream stopped early.
enum Stop {
    /// The page went away, or the server shuts down: send nothing more.
    Gone,
    /// The row limit was reached.
    Limit,
}

async fn run_statements(
    console: Arc<Console>,
    mut cs: ConsoleSession,
    sql: String,
    tx: mpsc::Sender<SseEvent>,
) {
    let mut sent = 0u64;
    if tx
        .send(event("session", json!({ "pid": cs.session.pid() })))
        .await
        .is_err()
    {
        return;
    }
    let statements = match cs.session.prepare(&sql) {
        Ok(s) => s,
        Err(e) => {
            let _ = tx.send(error_event(&e)).await;
            return;
        }
    };
    for stmt in &statements {
        cs.cancel.running.store(true, Ordering::Release);
        // A finite statement may wait too (FETCH for its rows): the page going away or a
        // cancel ends the wait.
        let outcome = tokio::select! {
            outcome = cs.session.execute(stmt, &[]) => outcome,
            () = cs.cancel.notify.notified() => Err(crate::Error::QueryCanceled),
            () = tx.closed() => return,
        };
        let result = match outcome {
            Ok(o) => deliver(&console, &cs, o, &tx, &mut sent).await,
            Err(e) => Err(Ok(e)),
        };
        cs.cancel.running.store(false, Ordering::Release);
        match result {
            Ok(()) => {}
            Err(Ok(e)) => {
                let _ = tx.send(error_event(&e)).await;
                return;
            }
            Err(Err(Stop::Limit)) => {
                let _ = tx.send(event("limit", json!({ "rows": sent }))).await;
                return;
            }
            Err(Err(Stop::Gone)) => return,
        }
    }
    let _ = tx.send(event("end", json!({}))).await;
}

fn error_event(e: &crate::Error) -> SseEvent {
    event("error", super::error_json(e))
}

type Delivered = Result<(), Result<crate::Error, Stop>>;

/// Send one statement's outcome; a continuous one until it ends, is cancelled, reaches
/// the row limit, or its page goes away.
async fn deliver(
    console: &Console,
    cs: &ConsoleSession,
    outcome: Outcome,
    tx: &mpsc::Sender<SseEvent>,
    sent: &mut u64,
) -> Delivered {
    let send = |e: SseEvent| async move { tx.send(e).await.map_err(|_| Err(Stop::Gone)) };
    match outcome {
        Outcome::Command(tag) => send(event("complete", json!({ "tag": tag }))).await,
        Outcome::Rows {
            columns,
            rows,
            tag,
            notices,
        } => {
            for n in notices {
                send(event("notice", json!(n.message))).await?;
            }
            send(event("columns", columns_json(&columns))).await?;
            send_rows(console, &rows, tx, sent).await?;
            send(event("complete", json!({ "tag": tag }))).await
        }
        Outcome::Stream(mut sub)
        | Outcome::CopyOut {
            subscription: mut sub,
            ..
        } => {
            send(event("columns", columns_json(sub.columns()))).await?;
            let first = *sent;
            let mut shutdown = console.shutdown.subscribe();
            loop {
                let next = tokio::select! {
                    next = sub.next() => next,
                    () = cs.cancel.notify.notified() => return Err(Ok(crate::Error::QueryCanceled)),
                    () = tx.closed() => return Err(Err(Stop::Gone)),
                    _ = shutdown.wait_for(|down| *down) => return Err(Err(Stop::Gone)),
                };
                match next {
                    Some(Ok(Event::Rows(rows))) => send_rows(console, &rows, tx, sent).await?,
                    Some(Ok(Event::Block(b))) => {
                        send_rows(console, &b.into_rows(), tx, sent).await?
                    }
                    Some(Ok(Event::Notice(n))) => send(event("notice", json!(n))).await?,
                    Some(Err(e)) => return Err(Ok(e)),
                    None => break,
                }
            }
            let tag = format!("SELECT {}", *sent - first);
            send(event("complete", json!({ "tag": tag }))).await
        }
        Outcome::CopyIn(copy) => {
            copy.abort();
            Err(Ok(crate::Error::FeatureNotSupported(
                "COPY FROM STDIN needs a PostgreSQL client; the console takes INSERT".into(),
            )))
        }
    }
}

/// Send `rows` in events of at most [`ROWS_PER_EVENT`], stopping at `stream_rows_max`.
async fn send_rows(
    console: &Console,
    rows: &[Vec<crate::types::Value>],
    tx: &mpsc::Sender<SseEvent>,
    sent: &mut u64,
) -> Delivered {
    let max = console.options.stream_rows_max;
    let room = max.saturating_sub(*sent) as usize;
    for chunk in rows[..rows.len().min(room)].chunks(ROWS_PER_EVENT) {
        let data: Vec<serde_json::Value> = chunk
            .iter()
            .map(|r| serde_json::Value::Array(r.iter().map(value_json).collect()))
            .collect();
        tx.send(event("rows", serde_json::Value::Array(data)))
            .await
            .map_err(|_| Err(Stop::Gone))?;
        *sent += chunk.len() as u64;
    }
    if rows.len() > room {
        return Err(Err(Stop::Limit));
    }
    Ok(())
}
