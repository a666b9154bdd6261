//! Start-up: the streams and tables of a data directory's catalog made again, each from its
//! catalog record (derived streams and sinks are `background_run::restore`'s).

use std::sync::Arc;

use super::Engine;
use crate::error::{Error, Result};
use crate::sql::{self, Plan};

/// Recreate a stored table and its rows from its catalog record and its log (at start-up).
pub(crate) fn restore_table(engine: &Arc<Engine>, ddl: &str) -> Result<()> {
    let parsed = sql::parse(ddl)?;
    let plan = match parsed.first() {
        Some(p) => sql::bind(p, &engine.catalog, &[])?,
        None => return Err(Error::DataCorrupted(format!("catalog record: {ddl}"))),
    };
    let Plan::CreateTable(c) = plan else {
        return Err(Error::DataCorrupted(format!(
            "catalog record is not a CREATE TABLE: {ddl}"
        )));
    };
    let name = c.name.clone();
    let table = super::table_dml::new_table(engine, c, ddl, false)?;
    tracing::info!("table {name}: {} rows recovered", table.len());
    engine.catalog.tables_write().insert(name, table);
    Ok(())
}

/// Recreate a stream from its catalog record (at start-up).
pub(crate) fn restore_stream(engine: &Arc<Engine>, ddl: &str) -> Result<()> {
    let parsed = sql::parse(ddl)?;
    let plan = match parsed.first() {
        Some(p) => sql::bind(p, &engine.catalog, &[])?,
        None => return Err(Error::DataCorrupted(format!("catalog record: {ddl}"))),
    };
    let Plan::CreateStream(c) = plan else {
        return Err(Error::DataCorrupted(format!(
            "catalog record is not a CREATE STREAM: {ddl}"
        )));
    };
    let name = c.name.clone();
    let source = c.source.clone();
    let stream = super::persist::new_stream(engine, c, false)?;
    // Its source starts once the derived streams' and sinks' queries are registered
    // again (`background::start_restored`), so that none misses a tuple.
    super::sources::attach(engine, &stream, source, false);
    if let Some(a) = &stream.archive {
        tracing::info!(
            "stream {name}: {} archived tuples recovered from {}",
            stream.tuples_kept(&stream.stats.lock()),
            a.dir.display()
        );
    }
    engine.catalog.streams_write().insert(name, stream);
    Ok(())
}
