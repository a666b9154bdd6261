//! The simple query protocol: one Query message, possibly several statements.
//!
//! Each statement runs to its end before the next starts, and its [`Outcome`] becomes
//! messages: CommandComplete for commands, RowDescription + DataRows for finite results,
//! an unbounded streamed result for continuous queries, a COPY sub-protocol for COPY. The
//! first error aborts the rest of the string and fails an open transaction block, as in
//! PostgreSQL. ReadyForQuery carries the session's transaction status.
//!
//! A `COPY ... FROM STDIN` in the middle of a string suspends it: the statements after it
//! are kept in the connection's [`CopyState`] and run once the client's CopyDone arrives.

use std::collections::VecDeque;

use pgwire::api::PgWireConnectionState;
use pgwire::error::PgWireResult;
use pgwire::messages::copy::{CopyData, CopyDone, CopyInResponse, CopyOutResponse};
use pgwire::messages::response::{EmptyQueryResponse, ReadyForQuery};
use pgwire::messages::PgWireBackendMessage;

use super::conn::{pump, stop_error, CancelWatch, Conn, ConnSlot, CopyState, PumpEnd, RowSink};
use super::wire::{self, FieldFormat, Wire};
use crate::engine::{Outcome, Statement, Subscription};
use crate::error::{Error, Result};
use crate::sql::{CopyFormat, CopyOptions};
use crate::types::Value;

/// What the caller must do after a run of statements.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// All done (or stopped by an error): send ReadyForQuery.
    Ready,
    /// A COPY FROM STDIN is open: ReadyForQuery comes after CopyDone.
    CopyIn,
}

/// True for a query string with nothing but whitespace and semicolons.
pub(crate) fn is_empty_query(text: &str) -> bool {
    text.chars().all(|c| c == ';' || c.is_whitespace())
}

/// Handle a Query message.
pub(crate) async fn on_query(wire: &mut dyn Wire, slot: &ConnSlot, text: &str) -> PgWireResult<()> {
    let mut guard = slot.conn.lock().await;
    let conn = &mut *guard;
    tracing::debug!(pid = conn.session.pid(), query = %crate::connect::options::redact_sql(text), "query");
    conn.report_activity(Some(text));
    let mut watch = conn.start_query().await;
    if is_empty_query(text) {
        wire.feed(PgWireBackendMessage::EmptyQueryResponse(
            EmptyQueryResponse::new(),
        ))
        .await?;
        return ready(wire, slot, conn).await;
    }
    match super::guard::check_text(text).and_then(|()| conn.session.prepare(text)) {
        Err(e) => fail(wire, conn, &e).await?,
        Ok(stmts) if stmts.is_empty() => {
            wire.feed(PgWireBackendMessage::EmptyQueryResponse(
                EmptyQueryResponse::new(),
            ))
            .await?
        }
        Ok(stmts) => {
            // PostgreSQL's scanner notices long identifiers of the whole string first.
            for (written, cut) in stmts.iter().flat_map(|s| s.truncated_identifiers()) {
                wire.feed(wire::truncation_notice(written, cut)).await?;
            }
            if run_statements(wire, conn, stmts.into(), &mut watch, true).await? == Flow::CopyIn {
                return wire.flush().await;
            }
        }
    }
    ready(wire, slot, conn).await
}

/// Send the notifications waiting for the session, then ReadyForQuery with the session's
/// transaction status, and mark the connection idle (see `notify`). Inside a transaction
/// block notifications wait for its end, as in PostgreSQL.
pub(crate) async fn ready(
    wire: &mut dyn Wire,
    slot: &ConnSlot,
    conn: &mut Conn,
) -> PgWireResult<()> {
    send_notifications(wire, conn).await?;
    // Changed settings that clients track (TimeZone), just before ReadyForQuery as
    // PostgreSQL reports them.
    for (name, value) in conn.session.take_reported_settings() {
        let status = pgwire::messages::startup::ParameterStatus::new(name, value);
        wire.feed(PgWireBackendMessage::ParameterStatus(status))
            .await?;
    }
    let tx = wire::session_tx(&conn.session);
    wire.set_tx(tx);
    wire.set_state(PgWireConnectionState::ReadyForQuery);
    wire.feed(PgWireBackendMessage::ReadyForQuery(ReadyForQuery::new(tx)))
        .await?;
    wire.flush().await?;
    conn.report_activity(None);
    slot.set_idle(true);
    Ok(())
}

/// Feed the session's waiting notifications, if no transaction block is open.
pub(crate) async fn send_notifications(wire: &mut dyn Wire, conn: &Conn) -> PgWireResult<()> {
    if conn.session.tx_status() != crate::engine::TxStatus::Idle {
        return Ok(());
    }
    for n in conn.session.inbox().take_all() {
        wire.feed(super::notify::message(n)).await?;
    }
    Ok(())
}

/// Report a statement's error and fail an open transaction block.
pub(crate) async fn fail(wire: &mut dyn Wire, conn: &mut Conn, e: &Error) -> PgWireResult<()> {
    tracing::info!(
        pid = conn.session.pid(),
        sqlstate = super::sqlstate(e),
        "statement failed: {e}"
    );
    conn.session.fail_transaction();
    wire.set_tx(wire::session_tx(&conn.session));
    wire.feed(wire::error_message(e)).await
}

/// Execute one statement, giving up if the client cancels or goes away meanwhile. The
/// engine's `execute` must therefore tolerate being dropped (a FETCH may wait for rows).
pub(crate) async fn execute(
    conn: &mut Conn,
    stmt: &Statement,
    params: &[Value],
    watch: &mut CancelWatch,
) -> PgWireResult<Result<Outcome>> {
    // DEALLOCATE forgets the connection's prepared statements, as in PostgreSQL (the SQL
    // name space is the protocol's): an unknown name is 26000.
    let forget = stmt.deallocates();
    if let Some(Some(name)) = &forget {
        if !conn.statements.contains_key(name)
            && conn.session.tx_status() != crate::engine::TxStatus::Failed
        {
            return Ok(Err(Error::InvalidSqlStatementName(format!(
                "prepared statement \"{name}\" does not exist"
            ))));
        }
    }
    let outcome = tokio::select! {
        outcome = conn.session.execute(stmt, params) => outcome,
        stop = watch.fired() => Err(stop_error(stop)?),
    };
    if outcome.is_ok() {
        match forget {
            Some(Some(name)) => {
                conn.statements.remove(&name);
            }
            Some(None) => conn.statements.retain(|name, _| name.is_empty()),
            None => {}
        }
    }
    Ok(outcome)
}

/// Run statements of a simple-query string in order until one fails or opens a COPY FROM
/// STDIN. `allow_copy_in` is false for the statements that follow a COPY: pgwire answers a
/// CopyDone with ReadyForQuery, so a second COPY FROM STDIN in one string cannot be served.
pub(crate) async fn run_statements(
    wire: &mut dyn Wire,
    conn: &mut Conn,
    mut stmts: VecDeque<Statement>,
    watch: &mut CancelWatch,
    allow_copy_in: bool,
) -> PgWireResult<Flow> {
    while let Some(stmt) = stmts.pop_front() {
        watch.time_statement(conn.session.statement_timeout());
        let outcome = match execute(conn, &stmt, &[], watch).await? {
            Ok(outcome) => outcome,
            Err(e) => {
                fail(wire, conn, &e).await?;
                return Ok(Flow::Ready);
            }
        };
        let result = match outcome {
            Outcome::Command(tag) => wire.feed(wire::complete(&tag)).await.map(|_| Ok(())),
            Outcome::Rows {
                columns,
                rows,
                tag,
                notices,
            } => {
                for n in &notices {
                    wire.feed(wire::coded_notice_message(n)).await?;
                }
                let text = wire::text_formats(&columns);
                // A command with notices (DROP ... IF EXISTS) has no columns: no
                // RowDescription. A SELECT with an empty target list has none either, and
                // PostgreSQL still describes it (a RowDescription of zero fields).
                if !columns.is_empty() || tag.starts_with("SELECT") {
                    wire.feed(wire::row_description(&columns, &text)).await?;
                }
                let mut scratch = String::new();
                for row in &rows {
                    wire.feed(wire::data_row(row, &text, &mut scratch)).await?;
                }
                wire.feed(wire::complete(&tag)).await.map(|_| Ok(()))
            }
            Outcome::Stream(mut sub) => stream_simple(wire, &mut sub, watch).await,
            Outcome::CopyOut {
                mut subscription,
                options,
            } => copy_out(wire, &mut subscription, &options, watch).await,
            Outcome::CopyIn(sink) => {
                if !allow_copy_in {
                    sink.abort();
                    Ok(Err(Error::FeatureNotSupported(
                        "only one COPY FROM STDIN per query string is supported".into(),
                    )))
                } else {
                    start_copy_in(wire, conn, sink, stmts, false).await?;
                    return Ok(Flow::CopyIn);
                }
            }
        }?;
        if let Err(e) = result {
            fail(wire, conn, &e).await?;
            return Ok(Flow::Ready);
        }
    }
    Ok(Flow::Ready)
}

/// Stream a continuous query's rows in the simple protocol: RowDescription, rows as they
/// come, `SELECT n` when the query ends.
async fn stream_simple(
    wire: &mut dyn Wire,
    sub: &mut Subscription,
    watch: &mut CancelWatch,
) -> PgWireResult<Result<()>> {
    let text = wire::text_formats(sub.columns());
    wire.feed(wire::row_description(sub.columns(), &text))
        .await?;
    let mut pending = VecDeque::new();
    let mut sent = 0;
    match pump(
        wire,
        sub,
        &mut pending,
        &RowSink::Data(&text),
        0,
        watch,
        &mut sent,
    )
    .await?
    {
        PumpEnd::Failed(e) => Ok(Err(e)),
        PumpEnd::Ended | PumpEnd::Suspended => {
            wire.feed(wire::complete_rows("SELECT", sent)).await?;
            Ok(Ok(()))
        }
    }
}

/// `COPY (SELECT ...) TO STDOUT`: CopyOutResponse, a CopyData per row as the query yields
/// them (flushed per event), CopyDone and `COPY n` when it ends.
pub(crate) async fn copy_out(
    wire: &mut dyn Wire,
    sub: &mut Subscription,
    options: &CopyOptions,
    watch: &mut CancelWatch,
) -> PgWireResult<Result<()>> {
    let ncols = sub.columns().len();
    let binary = options.format == CopyFormat::Binary;
    let formats: Vec<FieldFormat> = sub
        .columns()
        .iter()
        .map(|c| FieldFormat::of(c, binary))
        .collect();
    let format = i8::from(binary);
    let response = CopyOutResponse::new(format, ncols as i16, vec![format as i16; ncols]);
    wire.feed(PgWireBackendMessage::CopyOutResponse(response))
        .await?;
    if options.header {
        let names: Vec<&str> = sub.columns().iter().map(|c| c.name.as_str()).collect();
        let mut line = String::new();
        super::encode::copy_header(&names, options, &mut line);
        let data = bytes::Bytes::from(line.into_bytes());
        wire.feed(PgWireBackendMessage::CopyData(CopyData::new(data)))
            .await?;
    }
    let mut pending = VecDeque::new();
    let mut sent = 0;
    match pump(
        wire,
        sub,
        &mut pending,
        &RowSink::Copy(options, &formats),
        0,
        watch,
        &mut sent,
    )
    .await?
    {
        PumpEnd::Failed(e) => Ok(Err(e)),
        PumpEnd::Ended | PumpEnd::Suspended => {
            if binary {
                // The trailer, after the header when no row carried it (PostgreSQL sends
                // the header with the first row and the trailer in a message of its own).
                let mut data = bytes::BytesMut::new();
                if sent == 0 {
                    super::encode::binary_copy_header(&mut data);
                }
                data.extend_from_slice(&(-1i16).to_be_bytes());
                wire.feed(PgWireBackendMessage::CopyData(CopyData::new(data.freeze())))
                    .await?;
            }
            wire.feed(PgWireBackendMessage::CopyDone(CopyDone::new()))
                .await?;
            wire.feed(wire::complete_rows("COPY", sent)).await?;
            Ok(Ok(()))
        }
    }
}

/// Open a COPY FROM STDIN: CopyInResponse (textual format, one text column per field) and
/// pgwire's copy state, so that CopyData messages reach the copy handler.
pub(crate) async fn start_copy_in(
    wire: &mut dyn Wire,
    conn: &mut Conn,
    sink: crate::engine::CopyIn,
    rest: VecDeque<Statement>,
    extended: bool,
) -> PgWireResult<()> {
    let mut sink = sink;
    let ncols = sink.column_count();
    let format = i8::from(sink.is_binary());
    if sink.is_binary() {
        sink.set_binary_decoder(super::encode::parse_binary);
    }
    let response = CopyInResponse::new(format, ncols as i16, vec![format as i16; ncols]);
    let deadline = conn
        .session
        .statement_timeout()
        .map(|t| tokio::time::Instant::now() + t);
    // From here a cancel request is the COPY's (an earlier COPY left open is aborted).
    let mut watch = conn.start_query().await;
    watch.set_deadline(deadline);
    conn.copy = Some(CopyState {
        sink,
        rest,
        extended,
        deadline,
        watch,
        unwatched_bytes: 0,
    });
    wire.set_state(PgWireConnectionState::CopyInProgress(extended));
    wire.feed(PgWireBackendMessage::CopyInResponse(response))
        .await?;
    wire.flush().await
}
