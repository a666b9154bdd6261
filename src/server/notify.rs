//! Sending LISTEN notifications to a client, as PostgreSQL does: just before ReadyForQuery
//! when no transaction block is open, and at once while the client is idle; and how
//! `pg_cancel_backend` and `pg_terminate_backend` reach a connection.
//!
//! The second kind of notification needs a write while the connection waits for the
//! client's next message: the connection loop (`socket.rs`) waits on the session's inbox
//! beside the socket and writes the notifications through the connection's own framed
//! socket when the connection is idle, which [`ConnSlot`] tracks: every handler marks the
//! connection busy on entry, and [`super::query::ready`] marks it idle after ReadyForQuery
//! is flushed. Nothing else writes while the loop waits, so a handler's messages and a
//! notification never interleave, and no second descriptor of the socket is needed.

use std::sync::Arc;
use std::time::Duration;

use pgwire::messages::response::NotificationResponse;
use pgwire::messages::PgWireBackendMessage;

use super::conn::ConnSlot;
use crate::engine::coord::Notification;

/// How long an idle client may leave a notification unread in its socket before the
/// connection is closed (half a message may be on the wire by then).
pub(crate) const CLIENT_WRITE_STALL: Duration = Duration::from_secs(10);

/// The NotificationResponse message for `n`.
pub(crate) fn message(n: Notification) -> PgWireBackendMessage {
    PgWireBackendMessage::NotificationResponse(NotificationResponse::new(
        n.pid, n.channel, n.payload,
    ))
}

/// Register the connection in the engine's list of sessions (`pg_stat_activity`), with
/// the signal `pg_cancel_backend` and `pg_terminate_backend` fire.
pub(crate) fn attach(
    engine: &Arc<crate::engine::Engine>,
    slot: &Arc<ConnSlot>,
    info: crate::engine::backends::BackendInfo,
    handle: Arc<pgwire::api::ConnectionHandle>,
    terminate: tokio::sync::watch::Sender<bool>,
) {
    let signal = backend_signal(handle, terminate);
    let registered = engine.backends().register(info, signal);
    // Start-up holds the only other reference: the lock is free.
    if let Ok(mut conn) = slot.conn.try_lock() {
        conn.backend = Some(registered);
    }
}

/// A cancel fires the connection's cancel handle, as a CancelRequest does. A terminate also
/// raises `terminate`: a running statement ends with FATAL 57P01 (it watches the signal
/// as it watches for a cancel), and an idle connection loop answers it with the same FATAL
/// before the client's next message; either way the connection then closes.
fn backend_signal(
    handle: Arc<pgwire::api::ConnectionHandle>,
    terminate: tokio::sync::watch::Sender<bool>,
) -> crate::engine::backends::SignalFn {
    use crate::engine::backends::Signal;
    Box::new(move |signal| {
        if signal == Signal::Terminate {
            tracing::info!("terminating a connection at a client's request");
            terminate.send_replace(true);
            return true;
        }
        let cancel = handle.clone();
        tokio::spawn(async move { cancel.cancel().await });
        true
    })
}
