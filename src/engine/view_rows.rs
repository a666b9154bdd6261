//! The system views: their rows, now, as a viewer may see them (their columns are
//! `views::system_view_columns`). One function per view.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::background::Background;
use super::catalog::{Catalog, PlanRun, Stream};
use super::registry::RunningQuery;
use super::views::{Viewer, HIDDEN};
use crate::types::Value;

/// A timestamp, or NULL.
fn ts(t: Option<i64>) -> Value {
    t.map_or(Value::Null, Value::Timestamp)
}

/// A text value.
fn text(s: &str) -> Value {
    Value::Text(s.into())
}

impl Catalog {
    /// The rows of a system view, now, as `viewer` may see them.
    pub(crate) fn system_view_rows(&self, name: &str, viewer: &Viewer) -> Vec<Vec<Value>> {
        match name {
            "tcq_streams" => self.tcq_streams_rows(),
            "pg_stat_ssl" => self.pg_stat_ssl_rows(),
            "pg_stat_activity" => self.pg_stat_activity_rows(viewer),
            "tcq_sources" => self.tcq_sources_rows(),
            "tcq_sinks" => self.tcq_sinks_rows(viewer),
            "tcq_memory" => self.tcq_memory_rows(),
            "tcq_plans" => self.tcq_plans_rows(),
            "tcq_queries" => self.tcq_queries_rows(viewer),
            _ => Vec::new(),
        }
    }

    /// The rows of `tcq_streams`.
    fn tcq_streams_rows(&self) -> Vec<Vec<Value>> {
        let mut rows = Vec::new();
        let mut streams: Vec<Arc<Stream>> = self.streams_read().values().cloned().collect();
        streams.sort_by(|a, b| a.name.cmp(&b.name));
        for s in streams {
            let cols: Vec<String> = s
                .columns
                .iter()
                .map(|c| format!("{} {}", c.name, c.data_type.name()))
                .collect();
            let st = s.stats.lock().clone();
            rows.push(vec![
                text(&s.name),
                text(&cols.join(", ")),
                s.ts_col.map_or(Value::Null, |i| text(&s.columns[i].name)),
                text(if s.archived { "ARCHIVED" } else { "UNARCHIVED" }),
                Value::Int8(s.tuples_kept(&st) as i64),
                ts(st.now_us),
                Value::Int8(
                    (s.queries.lock().len()
                        + s.joins.len()
                        + s.plans
                            .lock()
                            .iter()
                            .map(|p| p.state.lock().queries.len())
                            .sum::<usize>()) as i64,
                ),
                s.archive
                    .as_ref()
                    .map_or(Value::Null, |a| Value::Int8(a.disk_bytes() as i64)),
                self.roles()
                    .owner(&s.name)
                    .map_or(Value::Null, |o| text(&o)),
            ]);
        }
        rows
    }

    /// The rows of `pg_stat_ssl`.
    fn pg_stat_ssl_rows(&self) -> Vec<Vec<Value>> {
        let mut rows = Vec::new();
        for b in &self.backends().list() {
            let mut row = vec![Value::Int4(b.pid), Value::Bool(b.ssl.is_some())];
            match &b.ssl {
                Some(s) => row.extend([text(&s.version), text(&s.cipher), Value::Int4(s.bits)]),
                None => row.extend([Value::Null, Value::Null, Value::Null]),
            }
            row.extend([Value::Null, Value::Null, Value::Null]);
            rows.push(row);
        }
        rows
    }

    /// The rows of `pg_stat_activity`.
    fn pg_stat_activity_rows(&self, viewer: &Viewer) -> Vec<Vec<Value>> {
        let mut rows = Vec::new();
        let backends = self.backends().list();
        let user_of = |pid: Option<i32>| user_of(&backends, pid);
        let tstz = |t: Option<i64>| t.map_or(Value::Null, Value::TimestampTz);
        for b in &backends {
            let a = b.activity();
            if !viewer.sees(Some(&b.user)) {
                // PostgreSQL shows who, not what, when or from where.
                let mut row = vec![Value::Null; 10];
                row[0] = text(&b.database);
                row[1] = Value::Int4(b.pid);
                row[2] = text(&b.user);
                row[3] = text(&b.application_name);
                row[8] = text(HIDDEN);
                row[9] = text("client backend");
                rows.push(row);
                continue;
            }
            rows.push(vec![
                text(&b.database),
                Value::Int4(b.pid),
                text(&b.user),
                text(&b.application_name),
                text(&b.client_addr),
                tstz(Some(b.backend_start_us)),
                tstz(a.query_start_us),
                text(a.state),
                text(&a.query),
                text("client backend"),
            ]);
        }
        let mut qs: Vec<Arc<RunningQuery>> = self
            .queries()
            .queries()
            .into_iter()
            .map(|(q, _)| q)
            .collect();
        qs.sort_by_key(|q| q.id);
        for q in qs {
            let mut row = vec![Value::Null; 10];
            let session = q.pid.and_then(|p| backends.iter().find(|b| b.pid == p));
            let sees = viewer.sees(user_of(q.pid));
            if let Some(b) = session {
                row[0] = text(&b.database);
                row[2] = text(&b.user);
            }
            row[1] = q.pid.map_or(Value::Null, Value::Int4);
            // As a client backend's row: who for everyone, the state and the text
            // for its own user and superusers only.
            if sees {
                row[7] = text("active");
            }
            row[8] = text(if sees { &q.text } else { HIDDEN });
            row[9] = text("tcq continuous query");
            rows.push(row);
        }
        rows
    }

    /// The rows of `tcq_sources`.
    fn tcq_sources_rows(&self) -> Vec<Vec<Value>> {
        let mut streams: Vec<Arc<Stream>> = self.streams_read().values().cloned().collect();
        streams.sort_by(|a, b| a.name.cmp(&b.name));
        sources_rows(&streams)
    }

    /// The rows of `tcq_sinks`.
    fn tcq_sinks_rows(&self, viewer: &Viewer) -> Vec<Vec<Value>> {
        sinks_rows(&self.background().list(), viewer)
    }

    /// The rows of `tcq_memory`.
    fn tcq_memory_rows(&self) -> Vec<Vec<Value>> {
        let mut rows = Vec::new();
        let m = self.memory();
        let limit = Value::Int8(m.limit().min(i64::MAX as usize) as i64);
        for k in super::memory::MemoryKind::ALL {
            rows.push(vec![
                text(k.name()),
                Value::Int8(m.used_by(k) as i64),
                limit.clone(),
            ]);
        }
        rows.push(vec![text("total"), Value::Int8(m.used() as i64), limit]);
        rows
    }

    /// The rows of `tcq_plans`.
    fn tcq_plans_rows(&self) -> Vec<Vec<Value>> {
        let mut rows = Vec::new();
        let mut streams: Vec<Arc<Stream>> = self.streams_read().values().cloned().collect();
        streams.sort_by(|a, b| a.name.cmp(&b.name));
        let mut all = Vec::new();
        for s in streams {
            let plans: Vec<Arc<PlanRun>> = s.plans.lock().clone();
            for p in plans {
                let nodes = p.state.lock().agg.nodes();
                for (i, n) in nodes.into_iter().enumerate() {
                    let ids: Vec<String> = n.queries.iter().map(u64::to_string).collect();
                    let rollups: Vec<String> = n.rollups.iter().map(u64::to_string).collect();
                    all.push((
                        p.id,
                        vec![
                            Value::Int8(p.id as i64),
                            text(&s.name),
                            Value::Int4(i as i32),
                            text(&crate::wcg::explain::window_text(&n.window)),
                            Value::Bool(n.factor),
                            n.parent.map_or(Value::Null, |x| Value::Int4(x as i32)),
                            text(&ids.join(",")),
                            Value::Int8(n.tuples_folded as i64),
                            Value::Int8(n.partials_merged as i64),
                            text(&rollups.join(",")),
                        ],
                    ));
                }
            }
        }
        all.sort_by_key(|(id, _)| *id);
        rows.extend(all.into_iter().map(|(_, r)| r));
        rows
    }

    /// The rows of `tcq_queries`.
    fn tcq_queries_rows(&self, viewer: &Viewer) -> Vec<Vec<Value>> {
        let mut rows = Vec::new();
        let backends = self.backends().list();
        let user_of = |pid: Option<i32>| user_of(&backends, pid);
        let mut qs: Vec<(Arc<RunningQuery>, String)> = self.queries().queries();
        qs.sort_by_key(|(q, _)| q.id);
        let mut all: Vec<(u64, Vec<Value>)> = Vec::new();
        let time_text = |t: Option<i64>| t.map_or("-".to_string(), crate::time::format_timestamp);
        for (q, stream) in qs {
            let st = q.exec.lock().stats().clone();
            let backfill = *q.backfill.lock();
            let flink = q.flink.lock().clone();
            all.push((
                q.id,
                vec![
                    Value::Int8(q.id as i64),
                    text(if viewer.sees(user_of(q.pid)) {
                        &q.text
                    } else {
                        HIDDEN
                    }),
                    text(&stream),
                    ts(st.now_us),
                    Value::Int8(st.tuples_in as i64),
                    Value::Int8(st.rows_out as i64),
                    Value::Int8(st.late_tuples as i64),
                    Value::Int8(st.slide_events as i64),
                    text(&format!("{stream}: {}", time_text(st.now_us))),
                    match backfill {
                        None => Value::Null,
                        Some(b) if b.done() => text("done"),
                        Some(_) => text("replaying"),
                    },
                    backfill.map_or(Value::Null, |b| Value::Int8(b.tuples as i64)),
                    backfill.map_or(Value::Null, |b| Value::Float8(b.elapsed().as_secs_f64())),
                    match q.plan_id.load(Ordering::Acquire) {
                        0 => Value::Null,
                        id => Value::Int8(id as i64),
                    },
                    self.feeds(q.id),
                    flink.as_ref().map_or(Value::Null, |f| text(&f.job)),
                    flink
                        .as_ref()
                        .map_or(Value::Null, |f| text(&f.state.lock())),
                ],
            ));
        }
        for j in self.queries().joins() {
            let exec = j.exec.lock();
            let st = exec.stats().clone();
            let times: Vec<String> = j
                .streams
                .iter()
                .zip(exec.stream_times())
                .map(|(n, t)| format!("{n}: {}", time_text(*t)))
                .collect();
            all.push((
                j.id,
                vec![
                    Value::Int8(j.id as i64),
                    text(if viewer.sees(user_of(j.pid)) {
                        &j.text
                    } else {
                        HIDDEN
                    }),
                    text(&j.streams.join(", ")),
                    ts(st.now_us),
                    Value::Int8(st.tuples_in as i64),
                    Value::Int8(st.rows_out as i64),
                    Value::Int8(st.late_tuples as i64),
                    Value::Int8(st.slide_events as i64),
                    text(&times.join(", ")),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    self.feeds(j.id),
                    // flink_job, flink_state: joins run alone, in tcq.
                    Value::Null,
                    Value::Null,
                ],
            ));
        }
        all.sort_by_key(|(id, _)| *id);
        rows.extend(all.into_iter().map(|(_, r)| r));
        rows
    }
}

impl Catalog {
    /// `tcq_queries.feeds` of query `id`: the derived stream or sink it feeds, if any.
    fn feeds(&self, id: u64) -> Value {
        self.background()
            .by_query(id)
            .map_or(Value::Null, |b| Value::Text(b.label().into()))
    }
}

/// One row of `tcq_sources` per stream with a source, by stream name. Secret options are
/// masked.
fn sources_rows(streams: &[Arc<Stream>]) -> Vec<Vec<Value>> {
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

/// One row of `tcq_sinks` per sink and derived stream, in creation order. The query text
/// only for superusers and its owner; secret options masked for everyone.
fn sinks_rows(all: &[Arc<Background>], viewer: &Viewer) -> Vec<Vec<Value>> {
    let text = |s: &str| Value::Text(s.into());
    let opt = |s: Option<String>| s.map_or(Value::Null, |s| Value::Text(s.into()));
    all.iter()
        .map(|b| {
            let st = b.status();
            let (connector, format, options) = match &b.sink {
                Some(spec) => (
                    text(spec.connector_name()),
                    text(match spec.format.kind {
                        crate::connect::sink::spec::SinkFormatKind::Json => "json",
                        crate::connect::sink::spec::SinkFormatKind::Csv => "csv",
                    }),
                    text(&crate::connect::options::display(&spec.options)),
                ),
                None => (Value::Null, Value::Null, Value::Null),
            };
            let sees = viewer.superuser || viewer.user == b.owner;
            let id = b.query_id.load(Ordering::Acquire);
            vec![
                text(&b.name),
                text(b.kind.word()),
                connector,
                format,
                text(st.state),
                if id == 0 {
                    Value::Null
                } else {
                    Value::Int8(id as i64)
                },
                text(if sees { &b.query.text } else { HIDDEN }),
                options,
                Value::Int8(st.rows as i64),
                Value::Int8(st.events as i64),
                Value::Int8(st.errors as i64),
                opt(st.last_error),
                st.position_us.map_or(Value::Null, Value::Timestamp),
                text(&b.owner),
            ]
        })
        .collect()
}

/// The user of connection `pid` among `backends` (`None`: no pid, or no such connection).
fn user_of(backends: &[Arc<super::backends::Backend>], pid: Option<i32>) -> Option<&str> {
    pid.and_then(|p| backends.iter().find(|b| b.pid == p))
        .map(|b| b.user.as_str())
}
