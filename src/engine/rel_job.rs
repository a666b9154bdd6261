//! A finite relational query (catalogs, stored tables) evaluated on a blocking thread, so
//! a long one (a correlated subquery per row of a join) neither holds an async worker
//! (other sessions, new connections, `pg_stat_activity` go on) nor escapes a cancel.
//!
//! The statement's future owns a [`CancelOnDrop`]: whatever stops waiting for it (a
//! CancelRequest, `pg_cancel_backend`, `statement_timeout`, a closed socket, shutdown)
//! drops the future, which raises the flag the executor reads in its loops
//! ([`crate::exec::relational::run_cancellable`]); the thread then ends within
//! milliseconds and its result is discarded.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::sql::RelQuery;
use crate::types::{Column, Value};

use super::session::Session;

/// Raises its flag when dropped: the statement is no longer awaited.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// What the executor may ask of the session, copied for the blocking thread.
struct SessionView {
    user: String,
    database: String,
    pid: i32,
    settings: HashMap<String, String>,
}

impl crate::expr::SessionInfo for SessionView {
    fn user(&self) -> &str {
        &self.user
    }
    fn database(&self) -> &str {
        &self.database
    }
    fn pid(&self) -> i32 {
        self.pid
    }
    fn setting(&self, name: &str) -> Option<String> {
        super::session::setting_of(&self.settings, name)
    }
}

/// Evaluate `rq` for `session` with `params` on a blocking thread: its result columns and
/// rows. Errors: the executor's; 57014 when the flag is raised (never seen by the client:
/// the dropped future's caller reports why it stopped); XX000 if the thread panicked.
pub(crate) async fn run(
    session: &Session,
    rq: &RelQuery,
    params: &[Value],
) -> Result<(Vec<Column>, Vec<Vec<Value>>)> {
    let flag = Arc::new(AtomicBool::new(false));
    let _guard = CancelOnDrop(flag.clone());
    let engine = session.engine.clone();
    let rq = rq.clone();
    let params = params.to_vec();
    let superuser = session.is_superuser();
    let view = SessionView {
        user: session.user.clone(),
        database: session.database.clone(),
        pid: session.pid,
        settings: session.settings.clone(),
    };
    let zone = crate::tz::current_cell();
    let job = tokio::task::spawn_blocking(move || {
        let mut settings: Vec<(String, String)> = (view.settings.iter())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        settings.sort();
        let provider = super::pg_catalog::CatalogRelations {
            catalog: &engine.catalog,
            user: &view.user,
            database: &view.database,
            settings: &settings,
            superuser,
        };
        crate::tz::sync_scope(zone, || {
            crate::exec::relational::run_cancellable(
                &rq,
                &provider,
                &params,
                Some(&view),
                Some(&flag),
            )
        })
    });
    job.await
        .map_err(|e| Error::Internal(format!("relational query thread failed: {e}")))?
}
