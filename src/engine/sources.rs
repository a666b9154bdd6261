//! The engine's side of sources (`connect`): attaching a declared source to its stream,
//! `ALTER STREAM ... PAUSE | RESUME`, and the `tcq_sources` view. A source hands the
//! engine batches with a position (`Catalog::ingest_from_source`); everything else about
//! connectors stays in `connect`.

use std::sync::Arc;

use super::persist::save_catalog;
use super::{Engine, Outcome, Stream};
use crate::connect::{Source, SourceSpec};
use crate::error::{Error, Result};

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

/// `ALTER STREAM name PAUSE | RESUME`: persisted, then applied. A pause returns once the
/// source has stopped reading (its batch in flight delivered; at most [`PARK_WAIT`]), so
/// that `tcq_sources` says `paused` and nothing is read after the command's answer.
/// Errors: 42P01, 55000 when the stream has no source.
pub(crate) async fn alter_source(engine: &Engine, name: &str, pause: bool) -> Result<Outcome> {
    let stream = engine.catalog.stream(name)?;
    let Some(source) = stream.source.lock().clone() else {
        return Err(Error::ObjectNotInPrerequisiteState(format!(
            "stream \"{name}\" has no source to {}: declare one with CREATE STREAM ... WITH (connector = ...)",
            if pause { "pause" } else { "resume" }
        )));
    };
    let was = source.is_paused();
    source.set_paused(pause);
    let saved = {
        let streams = engine.catalog.streams_read();
        save_catalog(engine, &streams)
    };
    if let Err(e) = saved {
        source.set_paused(was);
        return Err(e);
    }
    if pause {
        source.parked(PARK_WAIT).await;
    }
    Ok(Outcome::Command("ALTER STREAM".into()))
}

/// The longest `ALTER STREAM ... PAUSE` waits for its source to stop reading.
const PARK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);
