//! The COPY FROM STDIN sub-protocol: CopyData, CopyDone, CopyFail.
//!
//! The connection's [`CopyState`](super::conn::CopyState) holds the engine's sink. Each
//! CopyData payload is fed to it as it arrives; CopyDone finishes it (all rows reach the
//! stream at once, or none; with `LIVE`, each message's rows have reached it already) and the handler sends `COPY n` itself; CopyFail aborts it with
//! 57014 as PostgreSQL does. Lines are parsed in chunks of 1 MiB (and at CopyDone), a chunk
//! of plain lines on other threads while the next one arrives; a data error is reported
//! with the message after the one that completed its chunk (or at CopyDone); pgwire
//! then leaves copy mode and ignores the client's remaining CopyData and CopyDone (simple
//! protocol) or everything up to Sync (extended protocol), which is PostgreSQL's behaviour.
//! A client that disconnects mid-COPY drops the connection state, which aborts the sink.
//!
//! `statement_timeout` covers the whole COPY, from the statement to CopyDone, as in
//! PostgreSQL: the first CopyData or the CopyDone that arrives past it fails the COPY with
//! 57014 and none of its rows is kept. (A client that stops sending mid-COPY hears of the
//! timeout with its next message: the server does not interrupt the wait.)

use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};

use super::conn::ConnSlot;
use super::query::{fail, run_statements};
use super::wire::{self, Wire};
use crate::error::Error;

/// Handle a CopyData message.
pub(crate) async fn on_copy_data(
    wire: &mut dyn Wire,
    slot: &ConnSlot,
    data: &[u8],
) -> PgWireResult<()> {
    let mut guard = slot.conn.lock().await;
    let conn = &mut *guard;
    let Some(copy) = conn.copy.as_mut() else {
        return Ok(());
    };
    // The cancel watch is looked at once per chunk of data, not per message (psql sends a
    // message per line).
    copy.unwatched_bytes += data.len();
    let stopped = if copy.unwatched_bytes >= WATCH_BYTES {
        copy.unwatched_bytes = 0;
        stopped(&mut copy.watch)?
    } else {
        None
    };
    let fed = match stopped {
        Some(e) => Err(e),
        None if past(copy.deadline) => Err(Error::StatementTimeout),
        None => copy.sink.feed(data).await,
    };
    if let Err(e) = fed {
        if let Some(copy) = conn.copy.take() {
            copy.sink.abort();
        }
        conn.session.fail_transaction();
        wire.set_tx(wire::session_tx(&conn.session));
        return Err(wire::user_error(&e));
    }
    Ok(())
}

/// Handle CopyDone: finish the COPY, send `COPY n`, then run the rest of the query string.
/// pgwire sends the ReadyForQuery (simple protocol) or waits for Sync (extended).
pub(crate) async fn on_copy_done(wire: &mut dyn Wire, slot: &ConnSlot) -> PgWireResult<()> {
    let mut guard = slot.conn.lock().await;
    let conn = &mut *guard;
    let Some(copy) = conn.copy.take() else {
        return Err(wire::server_error(
            "08P01",
            "unexpected CopyDone outside COPY",
        ));
    };
    let mut watch = copy.watch;
    let finished = if past(copy.deadline) {
        copy.sink.abort();
        Err(Error::StatementTimeout)
    } else if let Some(e) = stopped(&mut watch)? {
        // Canceled while the data arrived: none of it is kept.
        copy.sink.abort();
        Err(e)
    } else {
        tokio::select! {
            n = copy.sink.finish() => n,
            stop = watch.fired() => Err(super::conn::stop_error(stop)?),
        }
    };
    match finished {
        Ok(n) => {
            wire.feed(wire::complete_rows("COPY", n)).await?;
            if !copy.extended && !copy.rest.is_empty() {
                run_statements(wire, conn, copy.rest, &mut watch, false).await?;
            }
        }
        Err(e) => fail(wire, conn, &e).await?,
    }
    if !copy.extended {
        // pgwire sends the ReadyForQuery; notifications go just before it.
        super::query::send_notifications(wire, conn).await?;
    }
    wire.set_tx(wire::session_tx(&conn.session));
    Ok(())
}

/// CopyData bytes between two looks at a COPY's cancel watch.
const WATCH_BYTES: usize = 1 << 20;

/// The error a COPY's watch has fired with (a cancel request, the timeout, a shutdown), if
/// it has; a client gone away is an I/O error that ends the connection.
fn stopped(watch: &mut super::conn::CancelWatch) -> PgWireResult<Option<Error>> {
    use futures::FutureExt;
    match watch.fired().now_or_never() {
        Some(stop) => super::conn::stop_error(stop).map(Some),
        None => Ok(None),
    }
}

/// True once `deadline` has passed.
fn past(deadline: Option<tokio::time::Instant>) -> bool {
    deadline.is_some_and(|at| tokio::time::Instant::now() >= at)
}

/// Handle CopyFail: abort the COPY; the returned error is what pgwire sends.
pub(crate) async fn on_copy_fail(
    wire: &mut dyn Wire,
    slot: &ConnSlot,
    message: &str,
) -> PgWireError {
    let mut guard = slot.conn.lock().await;
    let conn = &mut *guard;
    if let Some(copy) = conn.copy.take() {
        copy.sink.abort();
    }
    conn.session.fail_transaction();
    wire.set_tx(wire::session_tx(&conn.session));
    let e = Error::QueryCanceled;
    PgWireError::UserError(Box::new(ErrorInfo::new(
        "ERROR".into(),
        super::sqlstate(&e).into(),
        format!("COPY from stdin failed: {message}"),
    )))
}
