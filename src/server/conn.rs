//! Per-connection state and the loop that streams a continuous query to its client.
//!
//! pgwire serves every connection with one shared handler object, so whatever belongs to
//! a connection lives in a [`Conn`] stored in the connection's session extensions: the
//! engine [`Session`], prepared statements and portals of the extended protocol, an open
//! `COPY FROM STDIN`, and the cancel handle. Dropping the connection drops the `Conn`, and
//! with it every subscription (which unregisters its query) and any open COPY (which is
//! aborted): that is how a vanished client leaves the engine clean.
//!
//! [`pump`] is the heart of continuous results. It writes rows as the subscription yields
//! them, flushes only when nothing more is ready (one syscall per burst, not per row, yet a
//! slide event's rows reach the client within milliseconds), and while it waits it watches
//! the cancel signal and the client's socket.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use futures::channel::oneshot;
use pgwire::api::ConnectionHandle;
use pgwire::error::{PgWireError, PgWireResult};
use pgwire::messages::copy::CopyData;
use pgwire::messages::PgWireBackendMessage;

use super::wire::{self, FieldFormat, Wire};
use crate::engine::memory::Reservation;
use crate::engine::{CopyIn, Event, Session, Statement, Subscription};
use crate::error::Error;
use crate::sql::CopyOptions;
use crate::types::{Column, DataType, Value};

/// What a connection keeps between messages.
pub(crate) struct Conn {
    /// The engine session.
    pub(crate) session: Session,
    /// Prepared statements by name (`""` is the unnamed statement).
    pub(crate) statements: HashMap<String, Prepared>,
    /// Portals by name (`""` is the unnamed portal).
    pub(crate) portals: HashMap<String, Portal>,
    /// An open `COPY FROM STDIN`.
    pub(crate) copy: Option<CopyState>,
    /// The cancel handle pgwire's connection manager fires on a CancelRequest.
    pub(crate) cancel: Option<Arc<ConnectionHandle>>,
    /// Fires when the peer has closed its end of the socket.
    pub(crate) closed: Option<tokio::sync::watch::Receiver<bool>>,
    /// This connection in the engine's list of sessions (`pg_stat_activity`); dropping
    /// the guard with the connection removes it.
    pub(crate) backend: Option<(
        Arc<crate::engine::backends::Backend>,
        crate::engine::backends::BackendGuard,
    )>,
    /// Turns `true` when the server shuts down.
    pub(crate) shutdown: Option<tokio::sync::watch::Receiver<bool>>,
    /// Turns `true` when another session runs `pg_terminate_backend` on this one.
    pub(crate) terminated: Option<tokio::sync::watch::Receiver<bool>>,
}

impl Conn {
    /// A fresh connection state around `session`.
    pub(crate) fn new(session: Session) -> Conn {
        Conn {
            session,
            statements: HashMap::new(),
            portals: HashMap::new(),
            copy: None,
            cancel: None,
            closed: None,
            backend: None,
            shutdown: None,
            terminated: None,
        }
    }

    /// Report what the session does, for `pg_stat_activity`: `active` with the statement
    /// text while one runs, else the idle state its transaction status implies.
    pub(crate) fn report_activity(&self, query: Option<&str>) {
        let Some((backend, _)) = &self.backend else {
            return;
        };
        let state = match (query, self.session.tx_status()) {
            (Some(_), _) => "active",
            (None, crate::engine::TxStatus::Idle) => "idle",
            (None, crate::engine::TxStatus::InBlock) => "idle in transaction",
            (None, crate::engine::TxStatus::Failed) => "idle in transaction (aborted)",
        };
        backend.set_activity(state, query);
    }

    /// Start watching for a cancel request for the statement about to run. A cancel that
    /// arrived while nothing ran is forgotten here, as PostgreSQL forgets it. A COPY FROM
    /// STDIN that a protocol error left open is aborted: a new statement means it is over.
    pub(crate) async fn start_query(&mut self) -> CancelWatch {
        if let Some(copy) = self.copy.take() {
            copy.sink.abort();
        }
        let rx = match &self.cancel {
            Some(handle) => Some(handle.start_query().await),
            None => None,
        };
        CancelWatch {
            rx,
            closed: self.closed.clone(),
            shutdown: self.shutdown.clone(),
            terminated: self.terminated.clone(),
            deadline: self
                .session
                .statement_timeout()
                .map(|t| tokio::time::Instant::now() + t),
        }
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        if let Some(copy) = self.copy.take() {
            copy.sink.abort();
        }
    }
}

/// The shared slot in pgwire's session extensions that holds a connection's [`Conn`].
pub(crate) struct ConnSlot {
    /// The connection's state; handlers hold the lock for the whole message they handle.
    pub(crate) conn: tokio::sync::Mutex<Conn>,
    /// True between a flushed ReadyForQuery and the next message from the client: the
    /// only time a notification may be written outside a handler (see `notify`).
    idle: std::sync::atomic::AtomicBool,
    /// The session's time zone, for [`crate::tz::scope`] around each message.
    pub(crate) zone: crate::tz::ZoneCell,
}

impl ConnSlot {
    /// A slot around `conn`, not idle (start-up is still answering).
    pub(crate) fn new(conn: Conn) -> ConnSlot {
        ConnSlot {
            zone: conn.session.zone(),
            conn: tokio::sync::Mutex::new(conn),
            idle: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Mark the connection idle (after ReadyForQuery is flushed) or busy (a message came).
    pub(crate) fn set_idle(&self, idle: bool) {
        self.idle.store(idle, std::sync::atomic::Ordering::SeqCst);
    }

    /// True while the client has been answered and has sent nothing new.
    pub(crate) fn is_idle(&self) -> bool {
        self.idle.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// A statement prepared with Parse.
pub(crate) struct Prepared {
    /// `None` for an empty query string.
    pub(crate) stmt: Option<Statement>,
    /// Parameter types the client gave in Parse (`None` = let the server infer).
    pub(crate) hints: Vec<Option<DataType>>,
    /// The type OIDs the client gave in Parse, as sent (an `oid` hint is held as bigint).
    pub(crate) hint_oids: Vec<u32>,
    /// Bytes of the statement's SQL text (counted against `prepared_statement_bytes_max`).
    pub(crate) text_bytes: usize,
    /// The statement as charged to the global memory budget (estimated from its text,
    /// `memory::prepared_statement_bytes`), given back when dropped.
    pub(crate) _memory: Reservation,
}

/// A portal created with Bind.
pub(crate) struct Portal {
    /// `None` for an empty query string.
    pub(crate) stmt: Option<Statement>,
    /// Bound parameter values.
    pub(crate) params: Vec<Value>,
    /// Result format codes from Bind.
    pub(crate) formats: Vec<i16>,
    /// How far execution has gone.
    pub(crate) state: PortalState,
}

/// A portal's execution state: row-limited Execute suspends it and the next resumes it.
pub(crate) enum PortalState {
    /// Not executed yet.
    Ready,
    /// A finite result being handed out in pieces.
    Rows {
        /// Result columns.
        columns: Vec<Column>,
        /// Rows not yet sent.
        rows: VecDeque<Vec<Value>>,
        /// The engine's command tag.
        tag: String,
    },
    /// A continuous query being streamed.
    Stream {
        /// The query's output.
        sub: Subscription,
        /// Rows of an event that did not fit under the last Execute's row limit.
        pending: VecDeque<Vec<Value>>,
    },
    /// Finished: executing again completes with no rows.
    Done {
        /// The command word for the empty completion (`SELECT`).
        command: String,
    },
}

/// An open `COPY FROM STDIN`.
pub(crate) struct CopyState {
    /// The engine's sink.
    pub(crate) sink: CopyIn,
    /// Statements of a simple-query string that follow the COPY, run after CopyDone.
    pub(crate) rest: VecDeque<Statement>,
    /// Started by the extended protocol (errors then wait for Sync).
    pub(crate) extended: bool,
    /// When the COPY passes the session's `statement_timeout`, counted from its start: the
    /// time the client takes to send the data counts, as in PostgreSQL.
    pub(crate) deadline: Option<tokio::time::Instant>,
    /// The COPY's cancel watch, from its start: a cancel request sent while the data
    /// arrives fails it (57014) at the next chunk or at CopyDone, and keeps no row.
    pub(crate) watch: CancelWatch,
    /// CopyData bytes since the watch was last looked at.
    pub(crate) unwatched_bytes: usize,
}

/// Watches, for one statement, the cancel signal and the client's socket.
pub(crate) struct CancelWatch {
    rx: Option<oneshot::Receiver<()>>,
    closed: Option<tokio::sync::watch::Receiver<bool>>,
    shutdown: Option<tokio::sync::watch::Receiver<bool>>,
    terminated: Option<tokio::sync::watch::Receiver<bool>>,
    /// When the running statement passes the session's `statement_timeout`.
    deadline: Option<tokio::time::Instant>,
}

/// Resolves when `rx` turns `true`; pending forever without one (or once its sender is gone).
pub(crate) async fn flagged(rx: Option<&mut tokio::sync::watch::Receiver<bool>>) {
    match rx {
        Some(rx) => {
            // The guard `wait_for` returns must not live across the next await.
            let seen = rx.wait_for(|flag| *flag).await.is_ok();
            if !seen {
                std::future::pending::<()>().await;
            }
        }
        None => std::future::pending().await,
    }
}

/// Why a [`CancelWatch`] fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// A CancelRequest for this backend.
    Canceled,
    /// The client closed its socket.
    Disconnected,
    /// The server is shutting down (SIGTERM), or pg_terminate_backend named this session.
    Shutdown,
    /// The statement ran past the session's `statement_timeout`.
    Timeout,
}

impl CancelWatch {
    /// Start the clock of a statement that may run for `timeout` (`None`: no limit), as
    /// PostgreSQL's `statement_timeout` does for each statement of a query string.
    pub(crate) fn time_statement(&mut self, timeout: Option<std::time::Duration>) {
        self.deadline = timeout.map(|t| tokio::time::Instant::now() + t);
    }

    /// Keep the clock of a statement that started earlier (a COPY FROM STDIN, whose data
    /// arrives in later messages): it must stop at `deadline`.
    pub(crate) fn set_deadline(&mut self, deadline: Option<tokio::time::Instant>) {
        self.deadline = deadline;
    }

    /// Resolves when the statement must stop; pending forever otherwise.
    pub(crate) async fn fired(&mut self) -> Stop {
        let deadline = self.deadline;
        let timeout = async move {
            match deadline {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        let cancel = async {
            match self.rx.as_mut() {
                Some(rx) => match rx.await {
                    Ok(()) => Stop::Canceled,
                    // The handle was replaced or dropped: no cancel can come any more.
                    Err(_) => std::future::pending().await,
                },
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            s = cancel => s,
            () = flagged(self.closed.as_mut()) => Stop::Disconnected,
            () = flagged(self.shutdown.as_mut()) => Stop::Shutdown,
            () = flagged(self.terminated.as_mut()) => Stop::Shutdown,
            () = timeout => Stop::Timeout,
        }
    }
}

/// How rows are written: as DataRows (per-column binary flags) or as COPY lines.
pub(crate) enum RowSink<'a> {
    /// DataRow messages, each column in its format.
    Data(&'a [FieldFormat]),
    /// CopyData messages in COPY text, CSV or binary format (then each column in its
    /// binary format).
    Copy(&'a CopyOptions, &'a [FieldFormat]),
}

/// How a [`pump`] ended.
#[derive(Debug)]
pub(crate) enum PumpEnd {
    /// The query ended normally (LIMIT, stream dropped).
    Ended,
    /// The row limit was reached; more rows may follow.
    Suspended,
    /// The query failed or was cancelled (57014).
    Failed(Error),
}

/// Stream `sub` to the client until it ends, fails, is cancelled, or `limit` rows (0 = no
/// limit) have been written. `pending` holds rows of a partly sent event across calls;
/// `sent` counts the rows written. Errors are only socket errors.
pub(crate) async fn pump(
    wire: &mut dyn Wire,
    sub: &mut Subscription,
    pending: &mut VecDeque<Vec<Value>>,
    sink: &RowSink<'_>,
    limit: u64,
    watch: &mut CancelWatch,
    sent: &mut u64,
) -> PgWireResult<PumpEnd> {
    let mut buffers = RowBuffers::default();
    // One watch for the whole pump: its waiters (on the cancel signal, the socket, the
    // shutdown flag every session shares, the timeout) are registered once, not again
    // each time the queue runs dry.
    let fired = watch.fired();
    tokio::pin!(fired);
    loop {
        while let Some(row) = pending.pop_front() {
            if limit > 0 && *sent >= limit {
                pending.push_front(row);
                return Ok(PumpEnd::Suspended);
            }
            write_row(wire, sink, &row, *sent == 0, &mut buffers).await?;
            *sent += 1;
        }
        if limit > 0 && *sent >= limit {
            return Ok(PumpEnd::Suspended);
        }
        if let std::task::Poll::Ready(stop) = futures::poll!(fired.as_mut()) {
            return Ok(PumpEnd::Failed(stop_error(stop)?));
        }
        let event = match sub.try_next() {
            Some(event) => event,
            None => {
                // Nothing is ready: this is the moment to put the rows on the wire.
                wire.flush().await?;
                tokio::select! {
                    event = sub.next() => event,
                    stop = &mut fired => return Ok(PumpEnd::Failed(stop_error(stop)?)),
                }
            }
        };
        match event {
            None => return Ok(PumpEnd::Ended),
            Some(Err(e)) => return Ok(PumpEnd::Failed(e)),
            Some(Ok(Event::Rows(rows))) => pending.extend(rows),
            // A block whose rows all go out is encoded straight from its columns; under a
            // row limit it is held as rows, as a partly sent event must be.
            Some(Ok(Event::Block(block))) if limit == 0 => {
                write_block(wire, sink, &block, *sent == 0, &mut buffers).await?;
                *sent += block.len() as u64;
            }
            Some(Ok(e @ Event::Block(_))) => pending.extend(e.into_rows()),
            Some(Ok(Event::Notice(text))) => wire.feed(wire::notice_message(&text)).await?,
        }
    }
}

/// The error a stopped statement reports to its client; a client that went away gets
/// none: the connection ends with an I/O error, which drops its state. A shutdown is a
/// FATAL 57P01, after which the connection closes.
pub(crate) fn stop_error(stop: Stop) -> PgWireResult<Error> {
    match stop {
        Stop::Canceled => Ok(Error::QueryCanceled),
        Stop::Timeout => Ok(Error::StatementTimeout),
        Stop::Shutdown => Err(shutdown_error()),
        Stop::Disconnected => Err(PgWireError::IoError(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "client closed the connection",
        ))),
    }
}

/// FATAL 57P01, as PostgreSQL sends to its clients on a fast shutdown.
pub(crate) fn shutdown_error() -> PgWireError {
    PgWireError::UserError(Box::new(pgwire::error::ErrorInfo::new(
        "FATAL".into(),
        "57P01".into(),
        "terminating connection due to administrator command".into(),
    )))
}

/// Buffers a reader's rows are encoded through, reused from row to row.
#[derive(Default)]
struct RowBuffers {
    scratch: String,
    line: String,
    /// Where each line of a block ends in `line`.
    ends: Vec<usize>,
    /// A block's messages, between encoding and the socket.
    msgs: Vec<PgWireBackendMessage>,
    copy: super::encode::LineScratch,
    /// COPY lines are cut from this shared buffer, so a line costs no allocation of its own.
    out: bytes::BytesMut,
}

/// Bytes `RowBuffers::out` grows by when it runs short.
const LINE_BUFFER_BYTES: usize = 64 << 10;

/// Write one row; `first` is true for the first row of the result (a binary COPY's header
/// goes in the same CopyData message, as PostgreSQL sends it).
async fn write_row(
    wire: &mut dyn Wire,
    sink: &RowSink<'_>,
    row: &[Value],
    first: bool,
    b: &mut RowBuffers,
) -> PgWireResult<()> {
    wire.feed(row_message(sink, row, first, b)).await
}

/// Write the messages carrying the rows of `block`, one row each; `first`: the block
/// begins the result. COPY lines in text or CSV are written for the whole block at once,
/// each with its CopyData header, and reach the socket's buffer in one copy.
async fn write_block(
    wire: &mut dyn Wire,
    sink: &RowSink<'_>,
    block: &crate::exec::RowBlock,
    first: bool,
    b: &mut RowBuffers,
) -> PgWireResult<()> {
    match sink {
        RowSink::Copy(options, _) if options.format != crate::sql::CopyFormat::Binary => {
            let mut text = std::mem::take(&mut b.line);
            text.clear();
            b.ends.clear();
            // The type byte and a length field filled in below.
            let head = "d\0\0\0\0";
            super::encode::copy_block(block, options, head, &mut text, &mut b.ends, &mut b.copy);
            let mut framed = text.into_bytes();
            super::out_bytes::set_lengths(&mut framed, &b.ends);
            let written = wire.write_copy_data(&mut framed).await;
            framed.clear();
            b.line = String::from_utf8(framed).unwrap_or_default();
            written
        }
        _ => {
            let mut msgs = std::mem::take(&mut b.msgs);
            for r in 0..block.len() {
                msgs.push(row_message(sink, block.row(r), first && r == 0, b));
            }
            let fed = wire.feed_all(&mut msgs).await;
            b.msgs = msgs;
            fed
        }
    }
}

/// The message carrying one row: a DataRow, or a CopyData with exactly one row.
fn row_message<R>(
    sink: &RowSink<'_>,
    row: R,
    first: bool,
    b: &mut RowBuffers,
) -> PgWireBackendMessage
where
    R: IntoIterator,
    R::Item: std::borrow::Borrow<Value>,
    R::IntoIter: ExactSizeIterator,
{
    match sink {
        RowSink::Data(binary) => wire::data_row_in(row, binary, &mut b.scratch, &mut b.out),
        RowSink::Copy(options, formats) if options.format == crate::sql::CopyFormat::Binary => {
            let mut data = bytes::BytesMut::new();
            if first {
                super::encode::binary_copy_header(&mut data);
            }
            super::encode::binary_copy_tuple(row, formats, &mut data, &mut b.scratch);
            PgWireBackendMessage::CopyData(CopyData::new(data.freeze()))
        }
        RowSink::Copy(options, _) => {
            b.line.clear();
            super::encode::copy_line(row, options, &mut b.line, &mut b.copy);
            if b.out.capacity() < b.line.len() {
                b.out.reserve(LINE_BUFFER_BYTES.max(b.line.len()));
            }
            b.out.extend_from_slice(b.line.as_bytes());
            PgWireBackendMessage::CopyData(CopyData::new(b.out.split().freeze()))
        }
    }
}
