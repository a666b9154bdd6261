//! The statements of queries that run without a client (`CREATE STREAM ... AS`, `CREATE
//! SINK`, `DROP SINK`, and what `DROP STREAM` does to them) and the `tcq_sinks` view. The
//! queries themselves are in `background` and `background_run`.
//!
//! The statements run on a [`Sinks`]: the engine and the session's user, nothing else of
//! the session.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::background::{self, Background, Kind};
use super::persist::save_catalog;
use super::{Engine, Notice, Outcome};
use crate::error::{Error, Result};
use crate::sql::{CreateDerived, CreateSink};

/// The derived-stream and sink statements of one session.
pub(crate) struct Sinks<'a> {
    /// The engine whose catalog holds them.
    pub(crate) engine: &'a Arc<Engine>,
    /// The session's user, who owns what it creates.
    pub(crate) user: &'a str,
}

impl Sinks<'_> {
    /// `CREATE STREAM name ... AS SELECT ...`: the stream, then its query (registered
    /// before the stream can be seen), then the catalog. Errors: 42P07 for a name taken,
    /// the query's registration errors, the catalog's write error (nothing is kept).
    pub(crate) async fn create_derived(&self, c: CreateDerived) -> Result<Outcome> {
        super::catalog::check_schema_writable(&c.stream.name)?;
        let name = c.stream.name.clone();
        if let Some(exists) = self.relation_taken(&name, c.stream.if_not_exists, "CREATE STREAM")? {
            return Ok(exists);
        }
        let stream = super::persist::new_stream(self.engine, c.stream, true)?;
        let b = Background::new(
            name.clone(),
            Kind::Stream,
            stream.oid,
            c.query,
            None,
            crate::time::now_us(),
            self.user.to_string(),
        );
        let undo = |stream: &super::Stream| {
            stream.dropped.store(true, Ordering::Release);
            if let Some(a) = &stream.archive {
                a.remove();
            }
        };
        let sub = match super::background_run::register_new(self.engine, &b).await {
            Ok(sub) => sub,
            Err(e) => {
                undo(&stream);
                return Err(e);
            }
        };
        {
            let mut streams = self.engine.catalog.streams_write();
            if streams.contains_key(&name) || self.engine.catalog.tables_read().contains_key(&name)
            {
                undo(&stream);
                return Err(Error::DuplicateTable(name));
            }
            streams.insert(name.clone(), stream.clone());
            self.engine.catalog.roles().set_owner(&name, self.user);
            self.engine.catalog.background().add(b.clone());
            if let Err(e) = save_catalog(self.engine, &streams) {
                streams.remove(&name);
                self.engine.catalog.roles().remove_relation(&name);
                self.engine
                    .catalog
                    .background()
                    .remove(&Kind::Stream, &name);
                undo(&stream);
                return Err(e);
            }
        }
        super::background_run::spawn(self.engine, b, sub, None);
        Ok(Outcome::Command("CREATE STREAM".into()))
    }

    /// `Some(outcome)` (a NOTICE) when relation `name` exists and `if_not_exists`; 42P07
    /// when it exists otherwise; `None` when the name is free.
    fn relation_taken(
        &self,
        name: &str,
        if_not_exists: bool,
        tag: &str,
    ) -> Result<Option<Outcome>> {
        let catalog = &self.engine.catalog;
        let taken = catalog.streams_read().contains_key(name)
            || catalog.tables_read().contains_key(name)
            || super::views::system_view_columns(name).is_some();
        match (taken, if_not_exists) {
            (false, _) => Ok(None),
            (true, true) => Ok(Some(Outcome::Rows {
                columns: vec![],
                rows: vec![],
                tag: tag.into(),
                notices: vec![Notice::relation_exists(name)],
            })),
            (true, false) => Err(Error::DuplicateTable(name.to_string())),
        }
    }

    /// `CREATE SINK`: its query registered, then the catalog. Errors: 42710 for a sink of
    /// that name, the query's registration errors, the catalog's write error.
    pub(crate) async fn create_sink(&self, c: CreateSink) -> Result<Outcome> {
        let registry = self.engine.catalog.background();
        if registry.get(&Kind::Sink, &c.name).is_some() {
            if c.if_not_exists {
                return Ok(Outcome::Rows {
                    columns: vec![],
                    rows: vec![],
                    tag: "CREATE SINK".into(),
                    notices: vec![Notice {
                        severity: "NOTICE",
                        sqlstate: "42710",
                        message: format!("sink \"{}\" already exists, skipping", c.name),
                    }],
                });
            }
            return Err(sink_exists(&c.name));
        }
        crate::connect::sink::check_new(&c.spec.connector)?;
        let oid = self.engine.catalog.next_oid();
        let b = Background::new(
            c.name.clone(),
            Kind::Sink,
            oid,
            c.query,
            Some(c.spec),
            crate::time::now_us(),
            self.user.to_string(),
        );
        // A position left by a dropped sink of this name is not this sink's.
        self.forget_position(&c.name);
        let sub = super::background_run::register_new(self.engine, &b).await?;
        {
            let streams = self.engine.catalog.streams_write();
            if registry.get(&Kind::Sink, &c.name).is_some() {
                return Err(sink_exists(&c.name));
            }
            registry.add(b.clone());
            if let Err(e) = save_catalog(self.engine, &streams) {
                registry.remove(&Kind::Sink, &c.name);
                return Err(e);
            }
        }
        super::background_run::spawn(self.engine, b, sub, None);
        Ok(Outcome::Command("CREATE SINK".into()))
    }

    /// `DROP SINK`: each named sink stops and leaves the catalog. Errors: 42704 for a sink
    /// that does not exist (a NOTICE with IF EXISTS).
    pub(crate) fn drop_sink(&self, names: Vec<String>, if_exists: bool) -> Result<Outcome> {
        let registry = self.engine.catalog.background();
        let mut notices = Vec::new();
        let mut dropped = Vec::new();
        {
            let streams = self.engine.catalog.streams_write();
            for n in &names {
                if registry.get(&Kind::Sink, n).is_none() && !if_exists {
                    return Err(Error::UndefinedObject(format!(
                        "sink \"{n}\" does not exist"
                    )));
                }
            }
            for n in names {
                match registry.remove(&Kind::Sink, &n) {
                    Some(b) => dropped.push(b),
                    None => notices.push(format!("sink \"{n}\" does not exist, skipping").into()),
                }
            }
            if !dropped.is_empty() {
                if let Err(e) = save_catalog(self.engine, &streams) {
                    for b in dropped {
                        registry.add(b);
                    }
                    return Err(e);
                }
            }
        }
        for b in dropped {
            b.stop();
            self.forget_position(&b.name);
        }
        Ok(Outcome::Rows {
            columns: vec![],
            rows: vec![],
            tag: "DROP SINK".into(),
            notices,
        })
    }

    fn forget_position(&self, name: &str) {
        if let Some(d) = &self.engine.data {
            let path = super::background_run::position_path(&d.config.dir, name);
            let _ = std::fs::remove_file(path);
        }
    }

    /// What `DROP STREAM names` also drops: with `cascade`, the derived streams and sinks
    /// that read them (NOTICEs say which); without, 2BP01 if there are any. Returns the
    /// stream names to drop (the derived ones first), the sinks and the notices.
    pub(crate) fn drop_stream_dependents(&self, names: &[String], cascade: bool) -> Result<Drops> {
        let deps = self.engine.catalog.background().dependents(names);
        if deps.is_empty() {
            return Ok((names.to_vec(), Vec::new(), Vec::new()));
        }
        if !cascade {
            return Err(background::dependents_error(names, &deps));
        }
        let notices = deps
            .iter()
            .map(|d| format!("drop cascades to {}", d.label()).into())
            .collect();
        let mut streams: Vec<String> = deps
            .iter()
            .filter(|d| d.kind == Kind::Stream)
            .map(|d| d.name.clone())
            .collect();
        streams.extend(names.iter().cloned());
        let sinks = deps.into_iter().filter(|d| d.kind == Kind::Sink).collect();
        Ok((streams, sinks, notices))
    }

    /// Forget the sinks and derived streams' queries a `DROP STREAM` removes (under the
    /// streams' lock, before the catalog is written); returns them, to be stopped once
    /// the catalog says they are gone.
    pub(crate) fn unregister_dropped(
        &self,
        streams: &[String],
        sinks: &[Arc<Background>],
    ) -> Vec<Arc<Background>> {
        let registry = self.engine.catalog.background();
        let mut gone: Vec<Arc<Background>> = streams
            .iter()
            .filter_map(|n| registry.remove(&Kind::Stream, n))
            .collect();
        gone.extend(
            sinks
                .iter()
                .filter_map(|s| registry.remove(&Kind::Sink, &s.name)),
        );
        gone
    }

    /// Stop what [`Session::unregister_dropped`] returned.
    pub(crate) fn stop_dropped(&self, gone: Vec<Arc<Background>>) {
        for b in gone {
            b.stop();
            if b.kind == Kind::Sink {
                self.forget_position(&b.name);
            }
        }
    }
}

/// What a `DROP STREAM` drops: the streams (derived ones first), the sinks, and the
/// NOTICEs that say what cascaded.
pub(crate) type Drops = (Vec<String>, Vec<Arc<Background>>, Vec<Notice>);

fn sink_exists(name: &str) -> Error {
    Error::DuplicateObject(format!("sink \"{name}\" already exists"))
}
