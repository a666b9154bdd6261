//! Finite queries (catalogs, stored tables, system views) evaluated on a blocking thread,
//! so a long one (a correlated subquery per row of a join, a sort of a large table)
//! neither holds an async worker (other sessions, new connections, `pg_stat_activity` go
//! on) nor escapes a cancel.
//!
//! The statement's future owns a [`CancelOnDrop`]: whatever stops waiting for it (a
//! CancelRequest, `pg_cancel_backend`, `statement_timeout`, a closed socket, shutdown)
//! drops the future, which raises the flag the executor reads in its loops
//! ([`crate::exec::cancel::CancelCheck`]); the thread then ends within milliseconds and
//! its result is discarded.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::sql::RelQuery;
use crate::types::{Column, Value};

use super::session::{Session, SessionVars};

/// Raises its flag when dropped: the statement is no longer awaited.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Run `job` on a blocking thread with a copy of `session`'s variables, in the session's
/// time zone, and a flag raised once this future is dropped (`job` reads it through
/// [`crate::exec::cancel::CancelCheck`] and fails with 57014). Errors: `job`'s; XX000 if
/// the thread panicked.
pub(crate) async fn off_worker<T: Send + 'static>(
    session: &Session,
    job: impl FnOnce(&SessionVars, &AtomicBool) -> Result<T> + Send + 'static,
) -> Result<T> {
    let flag = Arc::new(AtomicBool::new(false));
    let _guard = CancelOnDrop(flag.clone());
    let vars = session.vars.clone();
    let zone = crate::tz::current_cell();
    let task =
        tokio::task::spawn_blocking(move || crate::tz::sync_scope(zone, || job(&vars, &flag)));
    task.await
        .map_err(|e| Error::Internal(format!("statement thread failed: {e}")))?
}

/// Evaluate `rq` for `session` with `params` on a blocking thread ([`off_worker`]): its
/// result columns and rows. Errors: the executor's; 57014 when the flag is raised (never
/// seen by the client: the dropped future's caller reports why it stopped); XX000 if the
/// thread panicked.
pub(crate) async fn run(
    session: &Session,
    rq: &RelQuery,
    params: &[Value],
) -> Result<(Vec<Column>, Vec<Vec<Value>>)> {
    let engine = session.engine.clone();
    let rq = rq.clone();
    let params = params.to_vec();
    let superuser = session.is_superuser();
    off_worker(session, move |vars, flag| {
        let mut settings: Vec<(String, String)> = (vars.settings.iter())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        settings.sort();
        let provider = super::pg_catalog::CatalogRelations {
            catalog: &engine.catalog,
            user: &vars.user,
            database: &vars.database,
            settings: &settings,
            superuser,
        };
        crate::exec::relational::run_cancellable(&rq, &provider, &params, Some(vars), Some(flag))
    })
    .await
}
