//! The sessions connected to the server, for `pg_stat_activity`, `pg_cancel_backend(pid)`
//! and `pg_terminate_backend(pid)`.
//!
//! The server registers each connection once it has started up ([`Backends::register`]),
//! with the function that cancels its running statement or ends the connection: only the
//! server knows sockets and cancel handles, and the engine only passes the request on. The
//! registration ends when the returned [`BackendGuard`] drops with the connection. The
//! server also reports what the session is doing ([`Backend::set_activity`]): `active` with
//! the statement's text while one runs, `idle` or `idle in transaction` otherwise.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

/// What a signal to a backend asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Signal {
    /// Cancel the running statement (57014), as a CancelRequest does.
    Cancel,
    /// End the connection (FATAL 57P01).
    Terminate,
}

/// What the server does with a [`Signal`]; true if there was something to signal.
pub(crate) type SignalFn = Box<dyn Fn(Signal) -> bool + Send + Sync>;

/// What a session is doing, as `pg_stat_activity` shows it.
#[derive(Clone, Debug)]
pub(crate) struct Activity {
    /// `active`, `idle`, `idle in transaction`, `idle in transaction (aborted)`.
    pub(crate) state: &'static str,
    /// The running statement, or the last one.
    pub(crate) query: String,
    /// When that statement started (Unix microseconds).
    pub(crate) query_start_us: Option<i64>,
}

/// One connected session.
pub(crate) struct Backend {
    /// Backend id.
    pub(crate) pid: i32,
    /// User name from the start-up message.
    pub(crate) user: String,
    /// Database name from the start-up message.
    pub(crate) database: String,
    /// `application_name` from the start-up message.
    pub(crate) application_name: String,
    /// The client's address.
    pub(crate) client_addr: String,
    /// When the connection started (Unix microseconds).
    pub(crate) backend_start_us: i64,
    /// The connection's TLS, if it uses TLS (`pg_stat_ssl`).
    pub(crate) ssl: Option<SslInfo>,
    activity: Mutex<Activity>,
    signal: SignalFn,
}

impl Backend {
    /// Record what the session is doing.
    pub(crate) fn set_activity(&self, state: &'static str, query: Option<&str>) {
        let mut a = self.activity.lock();
        a.state = state;
        if let Some(q) = query {
            // A source's credentials in a CREATE STREAM are not shown to anyone.
            a.query = crate::connect::options::redact_sql(q).into_owned();
            a.query_start_us = Some(crate::time::now_us());
        }
    }

    /// The current activity.
    pub(crate) fn activity(&self) -> Activity {
        self.activity.lock().clone()
    }
}

/// The registry of connected sessions.
pub(crate) struct Backends {
    map: Arc<Mutex<HashMap<i32, Arc<Backend>>>>,
    /// The next backend id; wire connections and console sessions draw from the same
    /// counter, so ids never collide.
    next_pid: std::sync::atomic::AtomicI32,
}

impl Default for Backends {
    fn default() -> Self {
        Backends {
            map: Arc::default(),
            next_pid: std::sync::atomic::AtomicI32::new(1000),
        }
    }
}

/// Unregisters a backend when dropped.
pub(crate) struct BackendGuard {
    map: Weak<Mutex<HashMap<i32, Arc<Backend>>>>,
    pid: i32,
}

impl Drop for BackendGuard {
    fn drop(&mut self) {
        if let Some(map) = self.map.upgrade() {
            map.lock().remove(&self.pid);
        }
    }
}

/// A connection's TLS session, as `pg_stat_ssl` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SslInfo {
    /// The protocol version: `TLSv1.2`, `TLSv1.3`.
    pub(crate) version: String,
    /// The cipher suite's name (`TLS_AES_256_GCM_SHA384`).
    pub(crate) cipher: String,
    /// Bits of the cipher's key.
    pub(crate) bits: i32,
}

/// Who connected, for [`Backends::register`].
pub(crate) struct BackendInfo {
    /// Backend id.
    pub(crate) pid: i32,
    /// User name.
    pub(crate) user: String,
    /// Database name.
    pub(crate) database: String,
    /// `application_name`.
    pub(crate) application_name: String,
    /// The client's address.
    pub(crate) client_addr: String,
    /// The connection's TLS session (`None`: plaintext, or a console session).
    pub(crate) ssl: Option<SslInfo>,
}

impl Backends {
    /// A fresh backend id (from 1000 on) for a new session.
    pub(crate) fn next_pid(&self) -> i32 {
        self.next_pid
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// Register a connected session; it stays listed until the guard drops.
    pub(crate) fn register(
        &self,
        info: BackendInfo,
        signal: SignalFn,
    ) -> (Arc<Backend>, BackendGuard) {
        let backend = Arc::new(Backend {
            pid: info.pid,
            user: info.user,
            database: info.database,
            application_name: info.application_name,
            client_addr: info.client_addr,
            backend_start_us: crate::time::now_us(),
            ssl: info.ssl,
            activity: Mutex::new(Activity {
                state: "idle",
                query: String::new(),
                query_start_us: None,
            }),
            signal,
        });
        self.map.lock().insert(info.pid, backend.clone());
        let guard = BackendGuard {
            map: Arc::downgrade(&self.map),
            pid: info.pid,
        };
        (backend, guard)
    }

    /// Send `signal` to backend `pid`; false if there is no such backend (PostgreSQL then
    /// warns and returns false) or nothing to signal.
    pub(crate) fn signal(&self, pid: i32, signal: Signal) -> Option<bool> {
        let backend = self.map.lock().get(&pid).cloned()?;
        Some((backend.signal)(signal))
    }

    /// Every connected session, by pid.
    pub(crate) fn list(&self) -> Vec<Arc<Backend>> {
        let mut v: Vec<Arc<Backend>> = self.map.lock().values().cloned().collect();
        v.sort_by_key(|b| b.pid);
        v
    }
}
