//! Sending LISTEN notifications to a client, as PostgreSQL does: just before ReadyForQuery
//! when no transaction block is open, and at once while the client is idle.
//!
//! The second needs a write to the socket while pgwire's loop is waiting for the client's
//! next message, which pgwire offers no way to do. Each connection therefore gets a
//! delivery task with its own duplicate of the socket's descriptor (see
//! `Handler::prepare_socket`). It writes only when the connection is idle, which
//! [`ConnSlot`] tracks: every handler marks the connection busy on entry, before it takes
//! the connection lock, and [`super::query::ready`] marks it idle after ReadyForQuery is
//! flushed. The task writes while holding the connection lock and only between whole
//! messages (pgwire's write buffer is empty after that flush), so a handler's messages and
//! a notification never interleave.

use std::sync::{Arc, Weak};
use std::time::Duration;

use bytes::BytesMut;
use pgwire::messages::response::NotificationResponse;
use pgwire::messages::PgWireBackendMessage;
use tokio::io::AsyncWriteExt;

use super::conn::ConnSlot;
use crate::engine::coord::{Inbox, Notification};
use crate::engine::TxStatus;

/// How long an idle client may leave a notification unread in its socket before the
/// connection is closed (half a message may be on the wire by then).
pub(crate) const CLIENT_WRITE_STALL: Duration = Duration::from_secs(10);

/// The NotificationResponse message for `n`.
pub(crate) fn message(n: Notification) -> PgWireBackendMessage {
    PgWireBackendMessage::NotificationResponse(NotificationResponse::new(
        n.pid, n.channel, n.payload,
    ))
}

/// Deliver `inbox` to the client on `writer` whenever the connection is idle, until the
/// session ends. A client that does not read its socket for `stall` loses its connection:
/// half a notification may be on the wire, and nothing else can be written after it.
pub(crate) async fn deliver_when_idle(
    slot: Weak<ConnSlot>,
    inbox: Arc<Inbox>,
    writer: std::net::TcpStream,
    stall: Duration,
) {
    let Ok(mut writer) = tokio::net::TcpStream::from_std(writer) else {
        return;
    };
    while inbox.wait().await {
        let Some(slot) = slot.upgrade() else {
            return;
        };
        let conn = slot.conn.lock().await;
        if !slot.is_idle() || conn.session.tx_status() != TxStatus::Idle {
            // Sent by the next ReadyForQuery instead.
            continue;
        }
        let mut buf = BytesMut::new();
        for n in inbox.take_all() {
            if message(n).encode(&mut buf).is_err() {
                return;
            }
        }
        match tokio::time::timeout(stall, writer.write_all(&buf)).await {
            Ok(Ok(())) => {}
            _ => {
                let _ = writer.shutdown().await;
                return;
            }
        }
    }
}

/// Register a started connection with the engine (`pg_stat_activity`, `pg_cancel_backend`,
/// `pg_terminate_backend`) and start delivering its notifications when it is idle.
/// `writer` is the connection's duplicate socket (none if it could not be made).
pub(crate) fn attach(
    engine: &Arc<crate::engine::Engine>,
    slot: &Arc<ConnSlot>,
    info: crate::engine::backends::BackendInfo,
    handle: Arc<pgwire::api::ConnectionHandle>,
    writer: Option<std::net::TcpStream>,
) {
    let socket = writer.as_ref().and_then(|w| w.try_clone().ok());
    let signal = backend_signal(Arc::downgrade(slot), handle, socket);
    let registered = engine.backends().register(info, signal);
    // Start-up holds the only other reference: the lock is free.
    if let Ok(mut conn) = slot.conn.try_lock() {
        conn.backend = Some(registered);
        if let Some(writer) = writer {
            let inbox = conn.session.inbox();
            let stall = CLIENT_WRITE_STALL;
            tokio::spawn(deliver_when_idle(
                Arc::downgrade(slot),
                inbox,
                writer,
                stall,
            ));
        }
    }
}

/// How the engine's `pg_cancel_backend` and `pg_terminate_backend` reach a connection. A
/// cancel fires the connection's cancel handle, as a CancelRequest does. A terminate also
/// shuts the socket down at once, which ends the connection whether it is idle (pgwire's
/// read sees the end) or running a statement (its writes fail); an idle client first gets
/// PostgreSQL's FATAL 57P01, written between whole messages (see the module's header).
fn backend_signal(
    slot: Weak<ConnSlot>,
    handle: Arc<pgwire::api::ConnectionHandle>,
    socket: Option<std::net::TcpStream>,
) -> crate::engine::backends::SignalFn {
    use crate::engine::backends::Signal;
    Box::new(move |signal| {
        let cancel = handle.clone();
        tokio::spawn(async move { cancel.cancel().await });
        if signal != Signal::Terminate {
            return true;
        }
        tracing::info!("terminating a connection at a client's request");
        let Some(socket) = &socket else {
            return true;
        };
        if slot.upgrade().is_some_and(|s| s.is_idle()) {
            let fatal = pgwire::error::ErrorInfo::new(
                "FATAL".into(),
                "57P01".into(),
                "terminating connection due to administrator command".into(),
            );
            let mut buf = BytesMut::new();
            let message = PgWireBackendMessage::ErrorResponse(fatal.into());
            if message.encode(&mut buf).is_ok() {
                use std::io::Write;
                // One small write on an idle socket: it goes whole or not at all.
                let _ = (&*socket).write(&buf);
            }
        }
        let _ = socket.shutdown(std::net::Shutdown::Both);
        true
    })
}
