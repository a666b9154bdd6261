//! One client connection from accept to close: the guarded socket, TLS negotiation, the
//! start-up deadline, message dispatch to the handlers, protocol errors and panics.
//!
//! This is pgwire's `process_socket` loop, owned here so that the socket pgwire's codec
//! reads from is a [`Guarded`] one: a malformed or oversized message is answered with a
//! FATAL ErrorResponse naming what was wrong (08P01, or 54000 for a message over
//! `message_bytes_max`) and the connection closes, instead of panicking inside pgwire's
//! decoder. Dispatch itself is pgwire's [`process_message`] and [`process_error`], so the
//! protocol state machine stays the library's, except after a FATAL error: the connection
//! then ends with the ErrorResponse alone, without the ReadyForQuery `process_error` adds.
//!
//! An SSLRequest is answered `S` when the server has TLS configured (`N` otherwise) and the
//! same loop then runs again over the TLS stream: [`run`] is generic over the stream. A
//! client that sent bytes after its SSLRequest without waiting for the answer is dropped
//! (they would be read as plaintext inside what it believes is TLS). A GSSENCRequest is
//! answered `N`; a CancelRequest goes to [`Handler::cancel_request`], throttled per peer.
//!
//! Design decision: a panic in a connection's task (a bug, never an input the server means
//! to refuse) ends that connection only, and is logged as one line (see
//! [`install_panic_hook`]) rather than as a backtrace per panic, so a client that finds such
//! a bug cannot flood the log.

use std::cell::Cell;
use std::future::Future;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Once};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::{FutureExt, SinkExt, StreamExt};
use pgwire::api::NoopHandler;
use pgwire::api::{ClientInfo, DefaultClient, PgWireConnectionState};
use pgwire::error::{ErrorInfo, PgWireError};
use pgwire::messages::response::{GssEncResponse, SslResponse};
use pgwire::messages::{PgWireBackendMessage, PgWireFrontendMessage, SslNegotiationMetaMessage};
use pgwire::tokio::server::{process_error, process_message, PgWireMessageServerCodec};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_util::codec::Framed;

use super::conn::ConnSlot;
use super::guard::{reject_of, Guarded};
use super::Handler;
use crate::engine::coord::Inbox;
use crate::engine::TxStatus;

/// How long a client has to complete start-up (as pgwire's own loop allows).
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

type Socket<S> = Framed<Guarded<S>, PgWireMessageServerCodec<String>>;

/// What a connection's stream must offer: a plain TCP stream, or TLS over one.
pub(crate) trait Stream: AsyncRead + AsyncWrite + Unpin + Send + Sync + 'static {}
impl<S: AsyncRead + AsyncWrite + Unpin + Send + Sync + 'static> Stream for S {}

/// Panics caught in connection tasks since the process started.
static CONNECTION_PANICS: AtomicU64 = AtomicU64::new(0);

/// Panics caught in connection tasks since the process started (each ended its connection
/// only, and was logged as one line).
pub fn connection_panics() -> u64 {
    CONNECTION_PANICS.load(Ordering::Relaxed)
}

/// Serve one accepted connection until it ends; a panic inside ends only this connection.
pub(crate) async fn serve_connection(stream: TcpStream, addr: SocketAddr, handler: Arc<Handler>) {
    install_panic_hook();
    let run = Marked(Box::pin(negotiate(stream, addr, handler)));
    match AssertUnwindSafe(run).catch_unwind().await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::debug!(%addr, "connection ended: {e}"),
        // The hook has logged the panic's one line.
        Err(_) => {
            CONNECTION_PANICS.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The guarded, framed socket over `stream`; `secure` when it is a TLS stream.
fn framed<S: Stream>(stream: S, addr: SocketAddr, secure: bool, handler: &Handler) -> Socket<S> {
    let guarded = Guarded::new(stream, handler.engine.limits().message_bytes_max);
    let mut framed = Framed::new(
        guarded,
        PgWireMessageServerCodec::new(DefaultClient::new(addr, secure)),
    );
    // Results are written in larger pieces than the codec's 8 KiB default: a reader
    // that keeps up gets a quarter of the system calls. Rows are still flushed the
    // moment nothing more is ready (see `conn::pump`), so latency is unchanged.
    framed.set_backpressure_boundary(WRITE_BUFFER_BYTES);
    // Messages the handlers frame themselves (see `out_bytes`) go out through the guard.
    let out = framed
        .session_extensions()
        .get_or_insert_with(super::out_bytes::OutBytes::default);
    framed.get_mut().set_out(out);
    framed
}

/// Bytes of encoded messages a connection gathers before writing them to its socket
/// (and, for a result, whenever no more rows are ready).
const WRITE_BUFFER_BYTES: usize = 64 << 10;

/// Run the connection over plain TCP, and over TLS once the client has asked for it and
/// been told `S`. TLS set-up counts against the start-up deadline.
async fn negotiate(
    stream: TcpStream,
    addr: SocketAddr,
    handler: Arc<Handler>,
) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let deadline = Instant::now() + STARTUP_TIMEOUT;
    let plain = framed(stream, addr, false, &handler);
    let Some(plain) = run(plain, &handler, deadline).await? else {
        return Ok(());
    };
    let Some(tls) = handler.tls.as_ref() else {
        return Ok(());
    };
    let parts = plain.into_parts();
    let (tcp, unread) = parts.io.into_inner();
    if unread || !parts.read_buf.is_empty() {
        tracing::debug!(%addr, "client sent data after its SSLRequest before TLS began");
        return Ok(());
    }
    let stream = match tokio::time::timeout_at(deadline, tls.acceptor.accept(tcp)).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => {
            tracing::info!(%addr, "TLS handshake failed: {e}");
            return Ok(());
        }
        Err(_) => return Ok(()),
    };
    let session = stream.get_ref().1;
    let info = ssl_info(
        session.protocol_version(),
        session.negotiated_cipher_suite(),
    );
    let socket = framed(stream, addr, true, &handler);
    if let Some(info) = info {
        socket.session_extensions().insert(info);
    }
    run(socket, &handler, deadline).await.map(drop)
}

/// What `pg_stat_ssl` shows of a TLS session: OpenSSL's names for the protocol version
/// (`TLSv1.3`) and, for TLS 1.3, the cipher suite (`TLS_AES_256_GCM_SHA384`; rustls
/// prefixes it `TLS13_`); TLS 1.2 suites keep rustls's IANA-style names.
fn ssl_info(
    version: Option<tokio_rustls::rustls::ProtocolVersion>,
    suite: Option<tokio_rustls::rustls::SupportedCipherSuite>,
) -> Option<crate::engine::backends::SslInfo> {
    use tokio_rustls::rustls::ProtocolVersion;
    let version = match version? {
        ProtocolVersion::TLSv1_3 => "TLSv1.3".to_string(),
        ProtocolVersion::TLSv1_2 => "TLSv1.2".to_string(),
        other => format!("{other:?}"),
    };
    let name = suite?.suite().as_str().unwrap_or("unknown").to_string();
    let cipher = match name.strip_prefix("TLS13_") {
        Some(rest) => format!("TLS_{rest}"),
        None => name,
    };
    let bits = if cipher.contains("AES_128") { 128 } else { 256 };
    Some(crate::engine::backends::SslInfo {
        version,
        cipher,
        bits,
    })
}

/// The connection loop over one stream. `Ok(Some(socket))`: the client asked for TLS and
/// was told `S` (only on a plain stream with TLS configured); the caller wraps the stream.
async fn run<S: Stream>(
    mut socket: Socket<S>,
    handler: &Arc<Handler>,
    deadline: Instant,
) -> std::io::Result<Option<Socket<S>>> {
    let cancel = Arc::new(NoopHandler);
    let startup_deadline = tokio::time::sleep_until(deadline);
    tokio::pin!(startup_deadline);
    let mut shutdown = handler.shutdown.subscribe();
    let mut idle: Option<Idle> = None;
    loop {
        if idle.is_none() && matches!(socket.state(), PgWireConnectionState::ReadyForQuery) {
            idle = Idle::of(&socket).await;
        }
        if let Some(i) = &idle {
            if i.inbox.has_pending() && !deliver_notifications(&mut socket, i).await? {
                return Ok(None);
            }
        }
        let (inbox, terminated) = match &mut idle {
            Some(i) => (i.open.then_some(&i.inbox), i.terminated.as_mut()),
            None => (None, None),
        };
        let in_startup = matches!(
            socket.state(),
            PgWireConnectionState::AwaitingSslRequest
                | PgWireConnectionState::AwaitingStartup
                | PgWireConnectionState::AuthenticationInProgress
        );
        // Biased: a shutdown or terminate raised before the client's next message arrived
        // wins over that message, whichever the socket delivers first.
        let next = tokio::select! {
            biased;
            () = super::conn::flagged(Some(&mut shutdown)) => {
                // An open COPY is aborted when the connection's state is dropped.
                return refuse(&mut socket, super::conn::shutdown_error()).await.map(|()| None);
            }
            () = super::conn::flagged(terminated) => {
                return refuse(&mut socket, super::conn::shutdown_error()).await.map(|()| None);
            }
            _ = &mut startup_deadline, if in_startup => return Ok(None),
            open = async {
                match inbox {
                    Some(inbox) => inbox.wait().await,
                    None => std::future::pending().await,
                }
            } => {
                if let Some(i) = idle.as_mut() {
                    i.open = open;
                }
                continue;
            }
            next = socket.next() => next,
        };
        let msg = match next {
            None => return Ok(None),
            Some(Ok(msg)) => msg,
            Some(Err(e)) => return refuse(&mut socket, e).await.map(|()| None),
        };
        match msg {
            PgWireFrontendMessage::SslNegotiation(SslNegotiationMetaMessage::PostgresSsl(_)) => {
                if socket.is_secure() {
                    let e = PgWireError::UserError(Box::new(ErrorInfo::new(
                        "FATAL".into(),
                        "08P01".into(),
                        "SSLRequest on a connection that already uses TLS".into(),
                    )));
                    return refuse(&mut socket, e).await.map(|()| None);
                }
                if handler.tls.is_some() {
                    socket
                        .send(PgWireBackendMessage::SslResponse(SslResponse::Accept))
                        .await?;
                    return Ok(Some(socket));
                }
                socket
                    .send(PgWireBackendMessage::SslResponse(SslResponse::Refuse))
                    .await?;
                continue;
            }
            PgWireFrontendMessage::SslNegotiation(SslNegotiationMetaMessage::PostgresGss(_)) => {
                socket
                    .send(PgWireBackendMessage::GssEncResponse(GssEncResponse::Refuse))
                    .await?;
                continue;
            }
            PgWireFrontendMessage::SslNegotiation(_) => {
                // Not a negotiation: a StartupMessage or CancelRequest, decoded next round.
                socket.set_state(PgWireConnectionState::AwaitingStartup);
                continue;
            }
            PgWireFrontendMessage::CancelRequest(request) => {
                handler
                    .cancel_request(socket.socket_addr().ip(), request)
                    .await;
                // Never answered, as in PostgreSQL: the connection just closes.
                socket.close().await?;
                return Ok(None);
            }
            PgWireFrontendMessage::Terminate(_) => return Ok(None),
            _ => {}
        }
        let is_extended_query = match socket.state() {
            PgWireConnectionState::CopyInProgress(extended) => extended,
            _ => msg.is_extended_query(),
        };
        let result = process_message(
            msg,
            &mut socket,
            handler.clone(),
            handler.clone(),
            handler.clone(),
            handler.clone(),
            cancel.clone(),
        )
        .await;
        if let Err(e) = result {
            if e.is_fatal() {
                return end_with_fatal(&mut socket, e).await.map(|()| None);
            }
            process_error(&mut socket, e, is_extended_query).await?;
        }
    }
}

/// What the loop watches between messages once start-up is done: the session's LISTEN
/// inbox and the `pg_terminate_backend` signal.
struct Idle {
    slot: Arc<ConnSlot>,
    inbox: Arc<Inbox>,
    /// False once the inbox has closed (the session ended).
    open: bool,
    terminated: Option<tokio::sync::watch::Receiver<bool>>,
}

impl Idle {
    async fn of<S: Stream>(socket: &Socket<S>) -> Option<Idle> {
        let slot = socket.session_extensions().get::<ConnSlot>()?;
        let (inbox, terminated) = {
            let conn = slot.conn.lock().await;
            (conn.session.inbox(), conn.terminated.clone())
        };
        Some(Idle {
            slot,
            inbox,
            open: true,
            terminated,
        })
    }
}

/// Write waiting notifications if the connection is idle outside a transaction block (in
/// one, the next ReadyForQuery carries them). False when the client left them unread for
/// `CLIENT_WRITE_STALL`: the connection must close, half a message may be on the wire.
async fn deliver_notifications<S: Stream>(
    socket: &mut Socket<S>,
    idle: &Idle,
) -> std::io::Result<bool> {
    let conn = idle.slot.conn.lock().await;
    if !idle.slot.is_idle() || conn.session.tx_status() != TxStatus::Idle {
        return Ok(true);
    }
    for n in idle.inbox.take_all() {
        socket.feed(super::notify::message(n)).await?;
    }
    match tokio::time::timeout(super::notify::CLIENT_WRITE_STALL, socket.flush()).await {
        Ok(flushed) => flushed.map(|()| true),
        Err(_) => Ok(false),
    }
}

/// End the session on a handler's FATAL error (a failed authentication, too many clients,
/// a bad start-up setting, a terminated backend): the ErrorResponse with every field, then
/// close, as PostgreSQL does. No ReadyForQuery follows it: pgwire's `process_error` sends one
/// after every error, and a client that reads it after a FATAL (asyncpg) reports a protocol
/// violation.
async fn end_with_fatal<S: Stream>(socket: &mut Socket<S>, e: PgWireError) -> std::io::Result<()> {
    let info: ErrorInfo = e.into();
    socket
        .send(PgWireBackendMessage::ErrorResponse(info.into()))
        .await?;
    socket.close().await
}

/// Answer a message the guard or pgwire's decoder refused with a FATAL ErrorResponse; the
/// connection then closes (the caller returns).
async fn refuse<S: Stream>(socket: &mut Socket<S>, e: PgWireError) -> std::io::Result<()> {
    let (code, message) = match &e {
        PgWireError::UserError(info) => (info.code.clone(), info.message.clone()),
        PgWireError::IoError(io) => match reject_of(io) {
            Some(reject) => (reject.code.to_string(), reject.message.clone()),
            // The socket itself failed: nobody to answer.
            None => return Err(std::io::Error::new(io.kind(), io.to_string())),
        },
        other => ("08P01".to_string(), other.to_string()),
    };
    tracing::debug!("refusing a client message: {code} {message}");
    let info = ErrorInfo::new("FATAL".to_string(), code, message);
    socket
        .send(PgWireBackendMessage::ErrorResponse(info.into()))
        .await?;
    socket.close().await
}

thread_local! {
    /// Whether the current thread is polling a connection's task.
    static IN_CONNECTION: Cell<bool> = const { Cell::new(false) };
}

/// A future that marks its thread as serving a connection while it is polled.
struct Marked<F>(Pin<Box<F>>);

impl<F: Future> Future for Marked<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        struct Reset(bool);
        impl Drop for Reset {
            fn drop(&mut self) {
                IN_CONNECTION.with(|c| c.set(self.0));
            }
        }
        let _reset = Reset(IN_CONNECTION.with(|c| c.replace(true)));
        self.0.as_mut().poll(cx)
    }
}

/// Log a panic inside a connection's task as one line; other panics go to the hook that
/// was installed before (the default prints the message and, if asked, a backtrace).
pub(crate) fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_CONNECTION.with(|c| c.get()) {
                return previous(info);
            }
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("(no message)");
            let location = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            let line = format!("connection task panicked at {location}: {message}")
                .replace(['\n', '\r'], " ");
            tracing::error!("{line}");
        }));
    });
}
