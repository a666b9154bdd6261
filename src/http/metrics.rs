//! `/metrics` in the Prometheus text exposition format (version 0.0.4), and the sampler
//! that measures each stream's ingest rate.
//!
//! Series (labels in braces):
//! - `tcq_stream_tuples_total{stream}` (counter), `tcq_stream_ingest_rate{stream}` (gauge,
//!   tuples per second over the last sampling second), `tcq_stream_late_tuples{stream}`;
//! - per stream fed by a source, `{stream,connector}`: `tcq_source_messages_total`,
//!   `tcq_source_bad_messages_total` (counters), `tcq_source_lag` (Kafka messages behind the
//!   high watermarks, bytes of files; absent while unknown) and `tcq_source_running` (1
//!   while consuming) (gauges), `tcq_source_commit_errors_total` (failed commits to a Kafka
//!   source's consumer group; counter);
//! - per derived stream and sink, `{sink,kind,connector}` (kind `stream` or `sink`;
//!   connector empty for a derived stream): `tcq_sink_rows_total`,
//!   `tcq_sink_slide_events_total`, `tcq_sink_errors_total` (counters since the server
//!   started) and `tcq_sink_running` (1 while it delivers; 0 while it retries a failed
//!   write, or after its query failed) (gauge);
//! - `tcq_ingest_tuples_total`, `tcq_ingest_rate`: the same summed over the streams declared
//!   now (gauges: a dropped stream takes its share with it);
//! - per query, `tcq_query_rows_out_total`, `tcq_query_tuples_in_total`,
//!   `tcq_query_late_tuples_total`, `tcq_query_slide_events_total` (counters), and
//!   `tcq_query_open_instances`, `tcq_query_groups`, `tcq_query_state_bytes` (gauges), each
//!   `{query="<id>"}`;
//! - `tcq_rows_out`, `tcq_late_tuples`, `tcq_open_window_instances`, `tcq_groups`: sums over
//!   the queries registered now (gauges: a query that ends takes its share with it);
//! - `tcq_streams`, `tcq_queries`, `tcq_connections` (sessions: wire connections and
//!   console requests), `tcq_memory_resident_bytes` (the process's resident set, from
//!   `/proc/self/statm`; absent where that file is not);
//! - `tcq_memory_tracked_bytes{kind}` (what the global memory budget tracks, by
//!   `engine::memory::MemoryKind`), `tcq_memory_limit_bytes`, `tcq_memory_refusals_total`.

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::sync::{Arc, Weak};

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use parking_lot::Mutex;

use super::Console;
use crate::engine::monitor::{QueryInfo, StreamInfo};

/// Samples kept per stream: one a second, a minute of history.
pub(crate) const RATE_SAMPLES: usize = 60;

/// Each stream's ingest rate, sampled once a second.
#[derive(Default)]
pub(crate) struct Rates {
    by_stream: Mutex<HashMap<String, StreamRate>>,
}

#[derive(Default)]
struct StreamRate {
    /// The last sample: when (microseconds since the epoch, server clock) and how many
    /// tuples the stream had accepted.
    last: Option<(i64, u64)>,
    /// Tuples per second over each of the last [`RATE_SAMPLES`] seconds, oldest first.
    history: VecDeque<f64>,
}

impl Rates {
    /// Take one sample of every stream at `now_us`; streams that are gone are forgotten.
    fn sample(&self, now_us: i64, streams: &[(String, u64)]) {
        let mut by = self.by_stream.lock();
        by.retain(|name, _| streams.iter().any(|(n, _)| n == name));
        for (name, tuples) in streams {
            let r = by.entry(name.clone()).or_default();
            if let Some((t, n)) = r.last {
                let secs = (now_us - t) as f64 / 1e6;
                if secs > 0.0 {
                    if r.history.len() == RATE_SAMPLES {
                        r.history.pop_front();
                    }
                    r.history.push_back(tuples.saturating_sub(n) as f64 / secs);
                }
            }
            r.last = Some((now_us, *tuples));
        }
    }

    /// Stream `name`'s latest rate (tuples per second) and its history, oldest first.
    pub(crate) fn of(&self, name: &str) -> (f64, Vec<f64>) {
        self.by_stream
            .lock()
            .get(name)
            .map_or((0.0, Vec::new()), |r| {
                (
                    r.history.back().copied().unwrap_or(0.0),
                    r.history.iter().copied().collect(),
                )
            })
    }
}

/// Sample every stream once a second while the console lives.
pub(super) fn start_sampler(console: &Arc<Console>) {
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let weak: Weak<Console> = Arc::downgrade(console);
    handle.spawn(async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
        loop {
            tick.tick().await;
            let Some(console) = weak.upgrade() else {
                return;
            };
            let streams: Vec<(String, u64)> = console
                .engine
                .stream_infos()
                .into_iter()
                .map(|s| (s.name, s.tuples))
                .collect();
            console.rates.sample(crate::time::now_us(), &streams);
        }
    });
}

/// The process's resident set in bytes, from `/proc/self/statm`.
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok()?)
}

/// A label value with `\`, `"` and line breaks escaped, as the format requires.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// One metric family: its HELP and TYPE lines, then its samples.
fn family(out: &mut String, name: &str, kind: &str, help: &str, samples: &[(String, f64)]) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
    for (labels, v) in samples {
        let _ = writeln!(out, "{name}{labels} {v}");
    }
}

/// The exposition text for the engine behind `console`, now.
pub(crate) fn render(console: &Console) -> String {
    let engine = &console.engine;
    let streams = engine.stream_infos();
    let queries = engine.query_infos();
    let mut out = String::new();
    stream_families(&mut out, console, &streams);
    source_families(&mut out, &streams);
    sink_families(&mut out, &engine.sink_infos());
    query_families(&mut out, &queries);
    family(
        &mut out,
        "tcq_streams",
        "gauge",
        "Streams declared.",
        &total(streams.len() as f64),
    );
    family(
        &mut out,
        "tcq_queries",
        "gauge",
        "Continuous queries registered.",
        &total(queries.len() as f64),
    );
    family(
        &mut out,
        "tcq_connections",
        "gauge",
        "Sessions open: PostgreSQL connections and console requests.",
        &total(engine.backends().list().len() as f64),
    );
    memory_families(&mut out, engine);
    out
}

/// One unlabelled sample.
fn total(v: f64) -> Vec<(String, f64)> {
    vec![(String::new(), v)]
}

/// The families of each stream, and the ingest totals over every stream.
fn stream_families(out: &mut String, console: &Console, streams: &[StreamInfo]) {
    let by_stream = |f: &dyn Fn(&StreamInfo) -> f64| {
        streams
            .iter()
            .map(|s| (format!("{{stream=\"{}\"}}", label(&s.name)), f(s)))
            .collect::<Vec<_>>()
    };
    let rate = |s: &StreamInfo| console.rates.of(&s.name).0;
    family(
        out,
        "tcq_stream_tuples_total",
        "counter",
        "Tuples accepted into the stream.",
        &by_stream(&|s| s.tuples as f64),
    );
    family(
        out,
        "tcq_stream_ingest_rate",
        "gauge",
        "Tuples per second accepted into the stream over the last sampling second.",
        &by_stream(&rate),
    );
    family(
        out,
        "tcq_stream_late_tuples",
        "gauge",
        "Late tuples counted by the queries reading the stream now.",
        &by_stream(&|s| s.late_tuples as f64),
    );
    family(
        out,
        "tcq_ingest_tuples_total",
        "gauge",
        "Tuples accepted into the streams declared now (a dropped stream takes its share with it).",
        &total(streams.iter().map(|s| s.tuples as f64).sum()),
    );
    family(
        out,
        "tcq_ingest_rate",
        "gauge",
        "Tuples per second accepted into every stream over the last sampling second.",
        &total(streams.iter().map(rate).sum()),
    );
}

/// The families of the streams' sources.
fn source_families(out: &mut String, streams: &[StreamInfo]) {
    let sources: Vec<_> = streams
        .iter()
        .filter_map(|s| Some((s.name.as_str(), s.source.as_ref()?)))
        .collect();
    let by_source = |f: &dyn Fn(&crate::connect::SourceStatus) -> Option<f64>| {
        sources
            .iter()
            .filter_map(|(name, src)| {
                let labels = format!(
                    "{{stream=\"{}\",connector=\"{}\"}}",
                    label(name),
                    src.connector
                );
                Some((labels, f(&src.status)?))
            })
            .collect::<Vec<_>>()
    };
    family(
        out,
        "tcq_source_messages_total",
        "counter",
        "Messages the stream's source accepted (Kafka records, MQTT publishes, file lines or rows).",
        &by_source(&|s| Some(s.messages as f64)),
    );
    family(
        out,
        "tcq_source_bad_messages_total",
        "counter",
        "Messages the stream's source could not decode (skipped, or the one it stopped on).",
        &by_source(&|s| Some(s.bad_messages as f64)),
    );
    family(
        out,
        "tcq_source_lag",
        "gauge",
        "What the source has left to read: Kafka messages behind the high watermarks, bytes of files.",
        &by_source(&|s| s.lag.map(|l| l as f64)),
    );
    family(
        out,
        "tcq_source_running",
        "gauge",
        "1 while the source consumes; 0 while paused, throttled by the memory budget, retrying or failed.",
        &by_source(&|s| Some(f64::from(u8::from(s.state == "running")))),
    );
    family(
        out,
        "tcq_source_commit_errors_total",
        "counter",
        "Failed commits of offsets to a Kafka source's consumer group (group_id).",
        &by_source(&|s| Some(s.commit_errors as f64)),
    );
}

/// The families of each continuous query, and their sums over the queries.
fn query_families(out: &mut String, queries: &[QueryInfo]) {
    let by_query = |f: &dyn Fn(&QueryInfo) -> f64| {
        queries
            .iter()
            .map(|q| (format!("{{query=\"{}\"}}", q.id), f(q)))
            .collect::<Vec<_>>()
    };
    family(
        out,
        "tcq_query_rows_out_total",
        "counter",
        "Rows the query emitted.",
        &by_query(&|q| q.stats.rows_out as f64),
    );
    family(
        out,
        "tcq_query_tuples_in_total",
        "counter",
        "Tuples the query consumed.",
        &by_query(&|q| q.stats.tuples_in as f64),
    );
    family(
        out,
        "tcq_query_late_tuples_total",
        "counter",
        "Tuples that missed at least one closed instance of the query's windows.",
        &by_query(&|q| q.stats.late_tuples as f64),
    );
    family(
        out,
        "tcq_query_slide_events_total",
        "counter",
        "Slide events the query emitted.",
        &by_query(&|q| q.stats.slide_events as f64),
    );
    family(
        out,
        "tcq_query_open_instances",
        "gauge",
        "Window instances the query holds open.",
        &by_query(&|q| q.state.open_instances as f64),
    );
    family(
        out,
        "tcq_query_groups",
        "gauge",
        "Group keys the query holds.",
        &by_query(&|q| q.state.groups as f64),
    );
    family(
        out,
        "tcq_query_state_bytes",
        "gauge",
        "Bytes of partial states and group keys the query holds (estimate).",
        &by_query(&|q| q.state.state_bytes as f64),
    );
    let sum = |f: &dyn Fn(&QueryInfo) -> u64| total(queries.iter().map(f).sum::<u64>() as f64);
    family(
        out,
        "tcq_rows_out",
        "gauge",
        "Rows emitted by the queries registered now.",
        &sum(&|q| q.stats.rows_out),
    );
    family(
        out,
        "tcq_late_tuples",
        "gauge",
        "Late tuples counted by the queries registered now.",
        &sum(&|q| q.stats.late_tuples),
    );
    family(
        out,
        "tcq_open_window_instances",
        "gauge",
        "Window instances open over the queries registered now.",
        &sum(&|q| q.state.open_instances as u64),
    );
    family(
        out,
        "tcq_groups",
        "gauge",
        "Group keys held by the queries registered now.",
        &sum(&|q| q.state.groups as u64),
    );
}

/// The memory budget's families, and the process's resident memory.
fn memory_families(out: &mut String, engine: &crate::engine::Engine) {
    let memory = engine.memory();
    family(
        out,
        "tcq_memory_tracked_bytes",
        "gauge",
        "Memory the engine tracks against memory_limit, by kind.",
        &crate::engine::memory::MemoryKind::ALL
            .iter()
            .map(|k| {
                (
                    format!("{{kind=\"{}\"}}", k.name()),
                    memory.used_by(*k) as f64,
                )
            })
            .collect::<Vec<_>>(),
    );
    family(
        out,
        "tcq_memory_limit_bytes",
        "gauge",
        "The global memory budget (memory_limit).",
        &total(memory.limit() as f64),
    );
    family(
        out,
        "tcq_memory_refusals_total",
        "counter",
        "Requests the memory budget refused (each a 53200 or a COPY staged to disk early).",
        &total(memory.refusals() as f64),
    );
    if let Some(rss) = resident_bytes() {
        family(
            out,
            "tcq_memory_resident_bytes",
            "gauge",
            "The server process's resident memory.",
            &total(rss as f64),
        );
    }
}

/// The families of derived streams and sinks.
fn sink_families(out: &mut String, sinks: &[crate::engine::SinkInfo]) {
    let by_sink = |f: &dyn Fn(&crate::engine::BackgroundStatus) -> f64| {
        sinks
            .iter()
            .map(|s| {
                let labels = format!(
                    "{{sink=\"{}\",kind=\"{}\",connector=\"{}\"}}",
                    label(&s.name),
                    s.kind,
                    s.connector.unwrap_or_default()
                );
                (labels, f(&s.status))
            })
            .collect::<Vec<_>>()
    };
    family(
        out,
        "tcq_sink_rows_total",
        "counter",
        "Rows the sink (or derived stream) delivered since the server started.",
        &by_sink(&|s| s.rows as f64),
    );
    family(
        out,
        "tcq_sink_slide_events_total",
        "counter",
        "Slide events the sink (or derived stream) delivered since the server started.",
        &by_sink(&|s| s.events as f64),
    );
    family(
        out,
        "tcq_sink_errors_total",
        "counter",
        "Failed writes of the sink (each retried), and its query's error if it failed.",
        &by_sink(&|s| s.errors as f64),
    );
    family(
        out,
        "tcq_sink_running",
        "gauge",
        "1 while the sink delivers; 0 while it retries a failed write or after its query failed.",
        &by_sink(&|s| f64::from(u8::from(s.state == "running"))),
    );
}

/// `GET /metrics`.
pub(super) async fn metrics(State(console): State<Arc<Console>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        render(&console),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_tuples_per_second_between_samples_and_forget_dropped_streams() {
        let rates = Rates::default();
        rates.sample(0, &[("a".into(), 100)]);
        assert_eq!(rates.of("a"), (0.0, vec![]));
        rates.sample(2_000_000, &[("a".into(), 1100), ("b".into(), 5)]);
        assert_eq!(rates.of("a"), (500.0, vec![500.0]));
        rates.sample(2_500_000, &[("a".into(), 1100), ("b".into(), 10)]);
        assert_eq!(rates.of("a"), (0.0, vec![500.0, 0.0]));
        assert_eq!(rates.of("b"), (10.0, vec![10.0]));
        rates.sample(3_000_000, &[("b".into(), 10)]);
        assert_eq!(rates.of("a"), (0.0, vec![]));
        for i in 0..100 {
            rates.sample(4_000_000 + i * 1_000_000, &[("b".into(), 10)]);
        }
        assert_eq!(rates.of("b").1.len(), RATE_SAMPLES);
    }

    #[test]
    fn label_values_escape_what_the_format_requires() {
        assert_eq!(label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
