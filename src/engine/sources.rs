//! The engine's side of sources (`connect`): attaching a declared source to its stream,
//! `ALTER STREAM ... PAUSE | RESUME`, and the `tcq_sources` view. A source hands the
//! engine batches with a position (`Catalog::ingest_from_source`); everything else about
//! connectors stays in `connect`.

use std::sync::Arc;

use super::persist::save_catalog;
use super::session::Session;
use super::{Engine, Outcome, Stream};
use crate::connect::{Source, SourceSpec};
use crate::error::{Error, Result};
use crate::types::{Column, DataType, Value};

/// Give `stream` its declared source (not started yet: see [`run`]). `fresh`: a stream
/// created now, so a position file left by a dropped stream of the same name is removed.
pub(crate) fn attach(engine: &Engine, stream: &Stream, spec: Option<SourceSpec>, fresh: bool) {
    if fresh {
        forget(engine, &stream.name);
    }
    if let Some(spec) = spec {
        *stream.source.lock() = Some(Source::new(spec));
    }
}

/// Start `stream`'s source, if it has one.
pub(crate) fn run(engine: &Arc<Engine>, stream: &Arc<Stream>) {
    crate::connect::spawn(engine, stream);
}

/// Remove the position file an unarchived stream's source kept (DROP STREAM).
pub(crate) fn forget(engine: &Engine, name: &str) {
    if let Some(d) = &engine.data {
        let _ = std::fs::remove_file(crate::connect::position_path(&d.config.dir, name));
    }
}

impl Session {
    /// `ALTER STREAM name PAUSE | RESUME`: persisted, then applied. Errors: 42P01, 55000
    /// when the stream has no source.
    pub(crate) fn alter_source(&mut self, name: &str, pause: bool) -> Result<Outcome> {
        let stream = self.engine.catalog.stream(name)?;
        let Some(source) = stream.source.lock().clone() else {
            return Err(Error::ObjectNotInPrerequisiteState(format!(
                "stream \"{name}\" has no source to {}: declare one with CREATE STREAM ... WITH (connector = ...)",
                if pause { "pause" } else { "resume" }
            )));
        };
        let was = source.is_paused();
        source.set_paused(pause);
        let saved = {
            let streams = self.engine.catalog.streams.read();
            save_catalog(&self.engine, &streams)
        };
        if let Err(e) = saved {
            source.set_paused(was);
            return Err(e);
        }
        Ok(Outcome::Command("ALTER STREAM".into()))
    }
}

/// The columns of `tcq_sources`.
pub(crate) fn view_columns() -> Vec<Column> {
    let c = Column::new;
    vec![
        c("stream", DataType::Text),
        c("connector", DataType::Text),
        c("format", DataType::Text),
        c("state", DataType::Text),
        c("options", DataType::Text),
        c("messages", DataType::Int8),
        c("tuples", DataType::Int8),
        c("bad_messages", DataType::Int8),
        c("last_error", DataType::Text),
        c("lag", DataType::Int8),
        c("position", DataType::Text),
        c("commit_errors", DataType::Int8),
    ]
}

/// One row of `tcq_sources` per stream with a source, by stream name. Secret options are
/// masked.
pub(crate) fn view_rows(streams: &[Arc<Stream>]) -> Vec<Vec<Value>> {
    let text = |s: &str| Value::Text(s.into());
    let opt = |s: Option<String>| s.map_or(Value::Null, |s| Value::Text(s.into()));
    let mut rows = Vec::new();
    for s in streams {
        let Some(src) = s.source.lock().clone() else {
            continue;
        };
        let st = src.status();
        let format = src
            .spec
            .options
            .iter()
            .find(|(k, _)| k == "format")
            .map_or("json", |(_, v)| v.as_str())
            .to_ascii_lowercase();
        rows.push(vec![
            text(&s.name),
            text(src.spec.connector.name()),
            text(&format),
            text(st.state),
            text(&crate::connect::options::display(&src.ddl_options())),
            Value::Int8(st.messages as i64),
            Value::Int8(st.tuples as i64),
            Value::Int8(st.bad_messages as i64),
            opt(st.last_error),
            st.lag.map_or(Value::Null, Value::Int8),
            opt(st.position),
            Value::Int8(st.commit_errors as i64),
        ]);
    }
    rows
}
