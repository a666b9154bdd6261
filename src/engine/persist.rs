//! The catalog on disk: what a data directory's catalog file holds (every stream's, table's,
//! derived stream's and sink's definition, the roles and the access lists), and a new
//! stream with its archive.
//!
//! Every statement that changes the catalog writes it whole with [`save_catalog`] while it
//! holds the catalog's lock, so the file always describes one state the server was in.

use std::sync::Arc;

use super::background::{DerivedShape, Kind};
use super::catalog::Stream;
use super::Engine;
use crate::error::Result;
use crate::sql;

/// A new stream from its definition: an archived stream in an engine with a data directory
/// opens (creating, or with `fresh`, first clearing) its archive and recovers its log.
pub(crate) fn new_stream(
    engine: &Arc<Engine>,
    c: sql::CreateStream,
    fresh: bool,
) -> Result<Arc<Stream>> {
    let oid = engine.catalog.next_oid();
    let mut recovered = None;
    let archive = match (&engine.data, c.archived) {
        (Some(data), true) => {
            let dir = data.stream_dir(&c.name);
            if fresh && dir.exists() {
                // Left by a stream of this name dropped while a crash interrupted the removal
                // of its files: the catalog no longer has it, so its tuples are not this
                // stream's.
                std::fs::remove_dir_all(&dir).map_err(|e| {
                    super::archive::io_err(format!("cannot remove {}", dir.display()), e)
                })?;
            }
            let codec = super::archive::ArchiveCodec::new(&c.columns, c.timestamp_column);
            let (a, r) = super::archive::StreamArchive::open(dir, codec, &data.config)?;
            recovered = Some(r);
            Some(Arc::new(a))
        }
        _ => None,
    };
    let retention_us = c.retention_us;
    let stream = Stream::create(
        c.name,
        oid,
        c.columns,
        c.timestamp_column,
        c.archived,
        c.slack_us,
        engine.limits().output_stall_timeout,
        archive,
    );
    *stream.retention_us.lock() = retention_us;
    if let Some(r) = recovered {
        let mut st = stream.stats.lock();
        st.tuples = r.tuples;
        st.first_us = r.first_us;
        st.now_us = r.last_us;
        st.newest_us = r.last_us;
    }
    stream.apply_retention();
    Ok(stream)
}

/// Write every stream's and table's definition, the roles and the access lists to the data
/// directory's catalog (nothing without one).
pub(crate) fn save_catalog(
    engine: &Engine,
    streams: &std::collections::HashMap<String, Arc<Stream>>,
) -> Result<()> {
    let Some(data) = &engine.data else {
        return Ok(());
    };
    use super::archive::CatalogRecord;
    let background = engine.catalog.background().list();
    let mut records: Vec<(u32, CatalogRecord)> = streams
        .values()
        .map(|s| {
            let derived = background
                .iter()
                .find(|b| b.kind == Kind::Stream && b.name == s.name);
            if let Some(b) = derived {
                let shape = DerivedShape {
                    archived: s.archived,
                    slack_us: s.slack_us,
                    retention_us: *s.retention_us.lock(),
                };
                return (s.oid, b.record(Some(&shape)));
            }
            let ddl = super::archive::stream_ddl(
                &s.name,
                &s.columns,
                s.ts_col,
                s.archived,
                s.slack_us,
                *s.retention_us.lock(),
                &s.source
                    .lock()
                    .as_ref()
                    .map(|src| src.ddl_options())
                    .unwrap_or_default(),
            );
            (s.oid, CatalogRecord::Stream(ddl))
        })
        .collect();
    records.extend(
        background
            .iter()
            .filter(|b| b.kind == Kind::Sink)
            .map(|b| (b.oid, b.record(None))),
    );
    records.extend(
        engine
            .catalog
            .table_logs()
            .iter()
            .map(|(&oid, log)| (oid, CatalogRecord::Table(log.ddl.clone()))),
    );
    records.sort_by_key(|r| r.0);
    let mut records: Vec<CatalogRecord> = records.into_iter().map(|r| r.1).collect();
    records.extend(engine.catalog.roles().records());
    data.write_catalog(&records)
}
