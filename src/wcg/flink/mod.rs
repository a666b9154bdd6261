//! `EXPLAIN (FORMAT FLINK)` and `tcqd flink export`: continuous queries, with their WCG
//! sharing within and across queries, as ONE Flink SQL job (Flink 2.x), for users whose
//! streams outgrow one machine.
//!
//! [`flink_job`] writes one script, statement by statement:
//! 1. `SET` statements: `table.local-time-zone` UTC (tcq's windows are aligned to the epoch
//!    in UTC), the job's name, and the export's parallelism, checkpoint interval and state
//!    backend ([`ExportOptions`]);
//! 2. one source table per stream ([`ddl::source_table`]): a Kafka source for a stream fed
//!    by the Kafka connector (same topic, format, start position), the filesystem source for
//!    the file connector, else a CSV file; a `WATERMARK` on the TIMESTAMPCOLUMN of the column
//!    minus the SLACK minus 1 ms (Flink fires an instance `[a, e)` once the watermark passes
//!    `e - 1 ms`, tcq once its time, the highest timestamp minus the SLACK, reaches `e`);
//! 3. per shared plan (queries over the same stream with the same WHERE, GROUP BY keys and
//!    SLACK, as tcq shares them across queries; a query with count(DISTINCT) alone), a view
//!    `<plan>_input` with the WHERE applied and the group keys `k0..` and aggregate
//!    arguments `a0..` computed once, and one view per node of the plan chosen for Flink
//!    ([`crate::wcg::flink_cost`]) named `<plan>_<window>`: `<plan>` is `tcq_<stream>_`
//!    and a hash of the plan's WHERE, keys and SLACK, `<window>` its range, slide and START
//!    AT (`r1h_s10m_at978307200`), so the same queries always give the same names. A root
//!    is a window aggregation over the input; any other node a cascading window aggregation
//!    over its parent's rows on the parent's `window_time`, as the paper does for Trill.
//!    Each view carries `ws`/`we` (the instance's start and end), `rt` (its
//!    `window_time`), the keys and the partial aggregates of every state of the plan
//!    ([`nodes::partials`]);
//! 4. one sink table per query ([`ddl::sink_table`]), and one `EXECUTE STATEMENT SET` with
//!    one INSERT per query: its user windows' rows (`UNION ALL`), finalised and projected as
//!    tcq emits them, `wtime(*)` as `we`, `wstart(*)` as `ws`, the START AT cut-off as a
//!    filter `ws >= TIMESTAMP '...'`, with the window's index, start, end and group keys in
//!    front (`tcq_window`, `tcq_wstart`, `tcq_wend`, `tcq_k0..`).
//!
//! The cascade is exact by construction: parent rows sit at `rt = b + r_p - 1 ms` (Flink's
//! `window_time` of instance `[b, b + r_p)`), and a child instance `[a, a + r)` must merge the
//! parent instances `b = a, a + s_p, .., a + r - r_p` (the covering instances). A hopping
//! window of size `r - r_p + s_p`, ending at `a + r`, holds exactly those `rt`; for a tumbling
//! parent that is the child's own size. Flink's HOP needs its size to be a multiple of its
//! slide; where it is not (`r mod s != 0`, or jumping windows), the view hops by
//! `gcd(size, slide)` and keeps the instances on the window's own grid with a filter on `ws`.
//!
//! What Flink cannot match is refused with [`Error::FeatureNotSupported`] (SQLSTATE 0A000)
//! and the reason ([`check`]): ungrouped aggregates (tcq emits one row per slide event even
//! for an empty instance; a Flink window aggregation emits nothing for it), joins, queries
//! without a window clause or without aggregates, DISTINCT other than count(DISTINCT x),
//! stddev and variance over non-integers, bool_and/bool_or, avg(bigint) (Flink's DECIMAL
//! division at that width keeps 6 fractional digits), LIMIT/OFFSET (which end a continuous
//! query after a count of rows in arrival order), streams stamped on arrival (processing
//! time has no reproducible windows), MQTT-fed streams, epoch-number timestamps in a
//! source's messages, `$n` parameters, functions without a Flink equivalent here, and times
//! finer than Flink's milliseconds. count(DISTINCT x) is exported computed from the stream
//! (no window is computed from another's partials); stddev and variance of integers carry
//! exact sums and sums of squares in DECIMAL(38, 0) and round once to DOUBLE at the end.
//! Differences that remain, documented rather than refused: avg(integer) is a
//! DECIMAL(38, 18) where tcq gives PostgreSQL's numeric (they agree to 16 significant
//! digits); stddev/variance agree to about 15; select-list arithmetic follows Flink's typing
//! (its integer division and overflow rules); the grid filter of a window whose range is not
//! a multiple of its slide counts whole units since the epoch in an INT, which for slides of
//! whole seconds (not minutes) overflows after 2038; and lateness (docs/flink.md: under
//! parallelism Flink's watermark is the least over the source's partitions or files).
//!
//! ```ignore
//! use tcq::wcg::flink::interval;
//! assert_eq!(interval(600_000_000).unwrap(), "INTERVAL '10' MINUTE");
//! assert_eq!(interval(5_400_000_000).unwrap(), "INTERVAL '90' MINUTE");
//! assert_eq!(interval(86_400_000_000 * 120).unwrap(), "INTERVAL '120 00:00:00.000' DAY(3) TO SECOND(3)");
//! ```

mod check;
mod ddl;
mod nodes;
mod render;

pub(crate) use render::interval;

use crate::connect::spec::{ConnectorSpec, SourceSpec};
use crate::error::{Error, Result};
use crate::sql::{Query, WindowMeta};
use crate::types::{Column, DataType};
use crate::wcg::flink_cost::{choose, FlinkCostModel, FlinkPlan};
use crate::window::{Start, Window};
use nodes::State;
use render::{flink_type, ident, render, timestamp};

pub(crate) const MS: i64 = 1_000;

pub(crate) fn refuse<T>(what: impl Into<String>) -> Result<T> {
    Err(Error::FeatureNotSupported(format!(
        "EXPLAIN (FORMAT FLINK) cannot express this query exactly: {}",
        what.into()
    )))
}

/// The stream a query reads, as the export needs it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FlinkSource<'a> {
    /// Stream name, normalised (the Flink table gets the same name).
    pub(crate) name: &'a str,
    /// The stream's columns in declaration order.
    pub(crate) columns: &'a [Column],
    /// Index of the TIMESTAMPCOLUMN; `None` (stamped on arrival) is refused.
    pub(crate) ts_col: Option<usize>,
    /// The stream's source (`CREATE STREAM ... WITH (connector = ...)`), if any.
    pub(crate) connector: Option<&'a SourceSpec>,
}

/// One query of the job.
#[derive(Clone, Debug)]
pub(crate) struct FlinkQuery<'a> {
    /// The query's name in the job: `q<id>` for registered query `id`; its sink table is
    /// `tcq_<label>` and its Kafka topic or directory `<label>`.
    pub(crate) label: String,
    /// The bound query.
    pub(crate) query: &'a Query,
    /// The stream it reads.
    pub(crate) source: FlinkSource<'a>,
    /// The query's SLACK over the stream, microseconds: the watermark's delay.
    pub(crate) slack_us: i64,
    /// The query's resolved windows, in the order written.
    pub(crate) windows: Vec<Window>,
    /// Their display cut-offs (a default START AT: instances starting before it are not
    /// shown), one per window.
    pub(crate) cutoffs: Vec<Option<i64>>,
    /// The stream's event rate, events per second (tcq's and Flink's cost models).
    pub(crate) eta_per_sec: f64,
}

impl FlinkQuery<'_> {
    /// The name of the query's sink table.
    pub(crate) fn sink_name(&self) -> String {
        format!("tcq_{}", self.label)
    }
}

/// How the query rows are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SinkFormat {
    /// CSV, one row a line (Kafka: one row a message).
    Csv,
    /// One JSON object a row.
    Json,
}

/// Where each query's rows go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SinkSpec {
    /// Flink's `print` sink (the TaskManagers' stdout).
    Print,
    /// Flink's `blackhole` sink: rows computed and dropped (benchmarks).
    Blackhole,
    /// One directory per query, `<path>/<label>`, of part files.
    Filesystem {
        /// The parent directory.
        path: String,
        /// Row format.
        format: SinkFormat,
    },
    /// One topic per query, `<topic_prefix><label>`, keyed by window end and group keys.
    Kafka {
        /// `host:port[,host:port]`.
        bootstrap: String,
        /// Prefix of the topics' names.
        topic_prefix: String,
        /// Key and value format.
        format: SinkFormat,
    },
}

/// Options of the export.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ExportOptions {
    /// `parallelism.default` of the job.
    pub(crate) parallelism: Option<u32>,
    /// Checkpoint interval, milliseconds (also when files of a filesystem sink are
    /// committed).
    pub(crate) checkpoint_interval_ms: Option<i64>,
    /// `state.backend.type`: `hashmap`, `rocksdb` or `forst`.
    pub(crate) state_backend: Option<String>,
    /// The queries' sinks; `None`: Kafka on the brokers of the first Kafka-fed stream with
    /// topics `tcq-<label>`, else files under `tcq-flink-results`.
    pub(crate) sink: Option<SinkSpec>,
    /// Streams without a connector read `<source_dir>/<stream>.csv` (default
    /// `<stream>.csv`).
    pub(crate) source_dir: Option<String>,
    /// `scan.watermark.idle-timeout` of Kafka sources, milliseconds: a partition idle this
    /// long stops holding the watermark back.
    pub(crate) idle_timeout_ms: i64,
    /// Distinct GROUP BY keys over the streams for the Flink cost model; `None`: unknown.
    pub(crate) groups: Option<f64>,
    /// The job's name (`pipeline.name`).
    pub(crate) job_name: Option<String>,
    /// Which plan the views follow.
    pub(crate) plan: PlanChoice,
}

/// Which plan the exported views follow (`PLAN 'flink' | 'wcg' | 'plain'`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum PlanChoice {
    /// tcq's min-cost WCG where the Flink cost model finds it cheaper ([`choose`]).
    #[default]
    Flink,
    /// tcq's min-cost WCG as tcq runs it, every edge and factor window kept.
    Wcg,
    /// Every window computed from the stream: Flink's own slicing.
    Plain,
}

impl Default for ExportOptions {
    fn default() -> ExportOptions {
        ExportOptions {
            parallelism: None,
            checkpoint_interval_ms: None,
            state_backend: None,
            sink: None,
            source_dir: None,
            idle_timeout_ms: 10_000,
            groups: None,
            job_name: None,
            plan: PlanChoice::Flink,
        }
    }
}

impl ExportOptions {
    /// The options named in `pairs` (EXPLAIN's or `tcqd flink export`'s, names in lower
    /// case): `parallelism` (n), `checkpoint_interval` and `idle_timeout` (intervals, `'10
    /// seconds'`), `state_backend` (`hashmap`, `rocksdb`, `forst`), `sink` (`kafka`,
    /// `filesystem`, `print`, `blackhole`), `sink_path`, `sink_format` (`csv`, `json`),
    /// `sink_bootstrap_servers`, `sink_topic_prefix`, `source_path`, `groups` (n),
    /// `job_name`.
    ///
    /// Errors: 22023 for an unknown option or a bad value.
    pub(crate) fn from_pairs(pairs: &[(String, String)]) -> Result<ExportOptions> {
        let bad = |k: &str, v: &str, why: &str| {
            Error::InvalidParameterValue(format!(
                "invalid value for option \"{k}\": \"{v}\" ({why})"
            ))
        };
        let ms = |k: &str, v: &str| -> Result<i64> {
            let iv = crate::time::parse_interval(v)
                .map_err(|_| bad(k, v, "an interval, e.g. '10 seconds'"))?;
            let us = crate::time::fixed_length_us(&iv)?;
            if us < MS {
                return Err(bad(k, v, "at least 1 millisecond"));
            }
            Ok(us / MS)
        };
        let mut o = ExportOptions::default();
        let (mut kind, mut path, mut format, mut servers, mut prefix) =
            (None, None, None, None, None);
        for (k, v) in pairs {
            match k.as_str() {
                "parallelism" => {
                    o.parallelism = Some(
                        v.parse()
                            .ok()
                            .filter(|p| *p > 0)
                            .ok_or_else(|| bad(k, v, "a positive integer"))?,
                    )
                }
                "checkpoint_interval" => o.checkpoint_interval_ms = Some(ms(k, v)?),
                "idle_timeout" => o.idle_timeout_ms = ms(k, v)?,
                "state_backend" => match v.to_ascii_lowercase().as_str() {
                    b @ ("hashmap" | "rocksdb" | "forst") => o.state_backend = Some(b.into()),
                    _ => return Err(bad(k, v, "hashmap, rocksdb or forst")),
                },
                "groups" => {
                    o.groups = Some(
                        v.parse::<f64>()
                            .ok()
                            .filter(|g| *g >= 1.0)
                            .ok_or_else(|| bad(k, v, "a number of keys, at least 1"))?,
                    )
                }
                "sink" => kind = Some(v.to_ascii_lowercase()),
                "sink_path" => path = Some(v.clone()),
                "sink_format" => {
                    format = Some(match v.to_ascii_lowercase().as_str() {
                        "csv" => SinkFormat::Csv,
                        "json" => SinkFormat::Json,
                        _ => return Err(bad(k, v, "csv or json")),
                    })
                }
                "sink_bootstrap_servers" => servers = Some(v.clone()),
                "sink_topic_prefix" => prefix = Some(v.clone()),
                "source_path" => o.source_dir = Some(v.clone()),
                "job_name" => o.job_name = Some(v.clone()),
                "plan" => {
                    o.plan = match v.to_ascii_lowercase().as_str() {
                        "flink" => PlanChoice::Flink,
                        "wcg" => PlanChoice::Wcg,
                        "plain" => PlanChoice::Plain,
                        _ => return Err(bad(k, v, "flink, wcg or plain")),
                    }
                }
                other => {
                    return Err(Error::InvalidParameterValue(format!(
                        "unrecognized Flink export option \"{other}\""
                    )))
                }
            }
        }
        o.sink = match kind.as_deref() {
            None if path.is_none() && servers.is_none() => None,
            None | Some("filesystem") if servers.is_none() => Some(SinkSpec::Filesystem {
                path: path.unwrap_or_else(|| "tcq-flink-results".into()),
                format: format.unwrap_or(SinkFormat::Csv),
            }),
            // No servers: the brokers of the Kafka-fed stream (see `sink_for`).
            None | Some("kafka") => Some(SinkSpec::Kafka {
                bootstrap: servers.unwrap_or_default(),
                topic_prefix: prefix.unwrap_or_else(|| "tcq-".into()),
                format: format.unwrap_or(SinkFormat::Json),
            }),
            Some("print") => Some(SinkSpec::Print),
            Some("blackhole") => Some(SinkSpec::Blackhole),
            Some(other) => return Err(bad("sink", other, "kafka, filesystem, print or blackhole")),
        };
        Ok(o)
    }

    /// The sink used for `queries` (see [`ExportOptions::sink`]).
    ///
    /// Errors: 22023 for a Kafka sink without brokers when no stream is Kafka-fed.
    pub(crate) fn sink_for(&self, queries: &[FlinkQuery<'_>]) -> Result<SinkSpec> {
        let kafka = queries
            .iter()
            .find_map(|q| match q.source.connector.map(|c| &c.connector) {
                Some(ConnectorSpec::Kafka(k)) => Some(k.bootstrap.join(",")),
                _ => None,
            });
        Ok(match (&self.sink, kafka) {
            (
                Some(SinkSpec::Kafka {
                    bootstrap,
                    topic_prefix,
                    format,
                }),
                source,
            ) if bootstrap.is_empty() => SinkSpec::Kafka {
                bootstrap: source.ok_or_else(|| {
                    Error::InvalidParameterValue(
                        "a Kafka sink needs sink_bootstrap_servers when no stream is read from Kafka"
                            .into(),
                    )
                })?,
                topic_prefix: topic_prefix.clone(),
                format: *format,
            },
            (Some(s), _) => s.clone(),
            (None, Some(bootstrap)) => SinkSpec::Kafka {
                bootstrap,
                topic_prefix: "tcq-".into(),
                format: SinkFormat::Json,
            },
            (None, None) => SinkSpec::Filesystem {
                path: "tcq-flink-results".into(),
                format: SinkFormat::Csv,
            },
        })
    }
}

/// A shared plan of the job: queries over one stream with the same WHERE, keys and SLACK.
pub(crate) struct Group {
    /// `tcq_<stream>_<hash>`.
    pub(crate) name: String,
    pub(crate) stream: String,
    /// The source table it reads (the stream's, per SLACK).
    pub(crate) table: String,
    pub(crate) ts_column: String,
    pub(crate) nkeys: usize,
    pub(crate) key_exprs: Vec<String>,
    pub(crate) key_types: Vec<DataType>,
    pub(crate) filter: Option<String>,
    pub(crate) states: Vec<State>,
    /// The union of the members' windows.
    pub(crate) windows: Vec<Window>,
    /// The plan chosen for Flink over `windows`.
    pub(crate) plan: FlinkPlan,
    /// Indices (into the job's queries) of the members.
    pub(crate) members: Vec<usize>,
    /// Per member: the state index of each of its calls, and the union index of each of
    /// its windows.
    pub(crate) calls: Vec<Vec<usize>>,
    pub(crate) user: Vec<Vec<usize>>,
}

impl Group {
    pub(crate) fn input_name(&self) -> String {
        format!("{}_input", self.name)
    }

    pub(crate) fn node_name(&self, i: usize) -> String {
        format!(
            "{}_{}",
            self.name,
            nodes::window_tag(&self.plan.nodes[i].window)
        )
    }
}

/// FNV-1a, 64 bits: a stable hash for plan names (no randomised hasher).
fn stable_hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The Flink SQL job for `queries`, one line of text per element: one source per stream,
/// the shared plans' views, one sink and one INSERT per query in one statement set.
///
/// Errors: 0A000 ([`Error::FeatureNotSupported`]) naming the query for what Flink cannot
/// compute exactly (see the module header); 22023 for an empty set.
pub(crate) fn flink_job(
    queries: &[FlinkQuery<'_>],
    options: &ExportOptions,
) -> Result<Vec<String>> {
    if queries.is_empty() {
        return Err(Error::InvalidParameterValue(
            "no continuous query to export".into(),
        ));
    }
    let groups = group_queries(queries, options)?;
    let sink = options.sink_for(queries)?;
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut out = vec![format!(
        "-- Flink SQL (Flink 2.x): {} of tcq in {}, one job.",
        plural(queries.len(), "continuous query", "continuous queries"),
        plural(groups.len(), "shared plan", "shared plans")
    )];
    for q in queries {
        out.push(format!("--   {}: {}", q.label, select_text(&q.query.text)));
    }
    out.extend(ddl::settings(options, queries.len()));
    let mut tables: Vec<String> = Vec::new();
    for q in queries {
        let table = source_table_of(queries, q);
        if !tables.contains(&table) {
            out.push(String::new());
            out.extend(ddl::source_table(&q.source, &table, q.slack_us, options)?);
            tables.push(table);
        }
    }
    for g in &groups {
        out.push(String::new());
        out.extend(group_views(g, queries)?);
    }
    out.push(String::new());
    out.push("-- One sink per query.".into());
    for g in &groups {
        for &m in &g.members {
            out.extend(ddl::sink_table(&queries[m], &g.key_types, &sink)?);
        }
    }
    out.push("EXECUTE STATEMENT SET".into());
    out.push("BEGIN".into());
    for (qi, q) in queries.iter().enumerate() {
        let (g, m) = groups
            .iter()
            .find_map(|g| g.members.iter().position(|&x| x == qi).map(|m| (g, m)))
            .ok_or_else(|| Error::Internal(format!("query {} in no plan", q.label)))?;
        out.extend(insert(g, m, q)?);
    }
    out.push("END;".into());
    Ok(out)
}

/// The source table `q` reads (see [`ddl::source_table_name`]).
fn source_table_of(queries: &[FlinkQuery<'_>], q: &FlinkQuery<'_>) -> String {
    let several = queries
        .iter()
        .any(|x| x.source.name == q.source.name && x.slack_us != q.slack_us);
    ddl::source_table_name(q.source.name, q.slack_us, several)
}

/// Whether [`flink_job`] can export `q`: `Err` gives the reason (0A000) as it would.
pub(crate) fn exportable(q: &FlinkQuery<'_>) -> Result<()> {
    shared_parts(q).map(|_| ())
}

/// The query's text from its SELECT on (EXPLAIN's options cut off), on one line.
fn select_text(text: &str) -> String {
    let from = text.to_ascii_lowercase().find("select").unwrap_or(0);
    text[from..]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Render the parts of `q` that decide its plan: WHERE, group keys, aggregate states.
fn shared_parts(q: &FlinkQuery<'_>) -> Result<(Option<String>, Vec<String>, Vec<State>)> {
    let agg = check::check_query(q).map_err(|e| name_query(e, q))?;
    let col = |i: usize| Ok(ident(&q.source.columns[i].name));
    let no_meta = |_: WindowMeta| refuse("wtime(*) outside the select list");
    let r = |e| render(e, &col, &no_meta).map_err(|e| name_query(e, q));
    let filter = q.query.filter.as_ref().map(r).transpose()?;
    let keys = agg.group_by.iter().map(r).collect::<Result<Vec<_>>>()?;
    let states = agg
        .calls
        .iter()
        .map(|c| {
            Ok(State {
                func: c.func,
                arg: c.arg.as_ref().map(r).transpose()?,
                arg_type: c.arg_type,
                distinct: c.distinct,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((filter, keys, states))
}

/// A refusal that names the query it is about.
fn name_query(e: Error, q: &FlinkQuery<'_>) -> Error {
    match e {
        Error::FeatureNotSupported(m) if q.label != "query" => {
            Error::FeatureNotSupported(format!("{m} (query {})", q.label))
        }
        e => e,
    }
}

/// Group the queries into shared plans and plan each for Flink.
fn group_queries(queries: &[FlinkQuery<'_>], options: &ExportOptions) -> Result<Vec<Group>> {
    let mut groups: Vec<(String, Group)> = Vec::new();
    for (qi, q) in queries.iter().enumerate() {
        let (filter, keys, states) = shared_parts(q)?;
        let agg = q.query.aggregate.as_ref().expect("checked");
        let alone = states.iter().any(|s| s.distinct);
        let key = format!(
            "{}|{filter:?}|{keys:?}|{:?}|slack={}{}",
            q.source.name,
            agg.group_types,
            q.slack_us,
            if alone {
                format!("|{}", q.label)
            } else {
                String::new()
            }
        );
        let gi = match groups.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                let name = format!("tcq_{}_{:08x}", q.source.name, stable_hash(&key) as u32);
                let ts = q.source.ts_col.expect("checked");
                groups.push((
                    key,
                    Group {
                        name,
                        stream: q.source.name.to_string(),
                        table: source_table_of(queries, q),
                        ts_column: q.source.columns[ts].name.clone(),
                        nkeys: keys.len(),
                        key_exprs: keys.clone(),
                        key_types: agg.group_types.clone(),
                        filter: filter.clone(),
                        states: Vec::new(),
                        windows: Vec::new(),
                        plan: FlinkPlan {
                            nodes: Vec::new(),
                            cost: 0.0,
                            plain_cost: 0.0,
                        },
                        members: Vec::new(),
                        calls: Vec::new(),
                        user: Vec::new(),
                    },
                ));
                groups.len() - 1
            }
        };
        let g = &mut groups[gi].1;
        let calls = states
            .into_iter()
            .map(|s| index_of(&mut g.states, s))
            .collect();
        let user = q
            .windows
            .iter()
            .map(|w| index_of(&mut g.windows, *w))
            .collect();
        g.members.push(qi);
        g.calls.push(calls);
        g.user.push(user);
    }
    let mut out: Vec<Group> = groups.into_iter().map(|(_, g)| g).collect();
    for g in &mut out {
        let specs: Vec<crate::agg::AggSpec> = g
            .states
            .iter()
            .map(|s| crate::agg::AggSpec::new(s.func, s.arg_type, s.distinct))
            .collect();
        let sharing = crate::agg::sharing_of(&specs);
        let eta = queries[g.members[0]].eta_per_sec;
        let model = FlinkCostModel {
            eta_per_sec: eta,
            groups: options.groups,
        };
        g.plan = match options.plan {
            PlanChoice::Flink => choose(&crate::wcg::plan(&g.windows, sharing, eta), &model),
            PlanChoice::Wcg => as_is(&crate::wcg::plan(&g.windows, sharing, eta), &model),
            PlanChoice::Plain => as_is(&crate::wcg::SharedPlan::unshared(&g.windows), &model),
        };
    }
    Ok(out)
}

/// `plan` exported as it is, with the Flink cost model's figures.
fn as_is(plan: &crate::wcg::SharedPlan, model: &FlinkCostModel) -> FlinkPlan {
    let nodes: Vec<crate::wcg::flink_cost::FlinkNode> = plan
        .nodes
        .iter()
        .map(|n| {
            let stream_cost = model.cost_from_stream(&n.window);
            crate::wcg::flink_cost::FlinkNode {
                window: n.window,
                parent: n.parent,
                user_windows: n.user_windows.clone(),
                cost: n.parent.map_or(stream_cost, |p| {
                    model.cost_from_parent(&n.window, &plan.nodes[p].window)
                }),
                stream_cost,
            }
        })
        .collect();
    FlinkPlan {
        cost: nodes.iter().map(|n| n.cost).sum(),
        plain_cost: nodes
            .iter()
            .filter(|n| !n.user_windows.is_empty())
            .map(|n| n.stream_cost)
            .sum(),
        nodes,
    }
}

fn index_of<T: PartialEq>(v: &mut Vec<T>, x: T) -> usize {
    match v.iter().position(|y| *y == x) {
        Some(i) => i,
        None => {
            v.push(x);
            v.len() - 1
        }
    }
}

/// The input view and the node views of plan `g`.
fn group_views(g: &Group, queries: &[FlinkQuery<'_>]) -> Result<Vec<String>> {
    let labels: Vec<&str> = g
        .members
        .iter()
        .map(|&m| queries[m].label.as_str())
        .collect();
    let mut out = vec![
        format!(
            "-- Shared plan {} on {}: {}; {} windows in {} views ({:.3} records/s in the Flink cost model, {:.3} with every window from the stream).",
            g.name,
            g.stream,
            labels.join(", "),
            g.windows.len(),
            g.plan.nodes.len(),
            g.plan.cost,
            g.plan.plain_cost
        ),
        format!("CREATE TEMPORARY VIEW {} AS", g.input_name()),
    ];
    let mut items = vec![ident(&g.ts_column)];
    for (k, e) in g.key_exprs.iter().enumerate() {
        items.push(format!("{e} AS k{k}"));
    }
    for (j, s) in g.states.iter().enumerate() {
        if let Some(a) = &s.arg {
            items.push(format!("{a} AS a{j}"));
        }
    }
    out.push(format!("SELECT {}", items.join(", ")));
    out.push(format!("FROM {}", ident(&g.table)));
    if let Some(f) = &g.filter {
        out.push(format!("WHERE {f}"));
    }
    if let Some(last) = out.last_mut() {
        last.push(';');
    }
    for i in 0..g.plan.nodes.len() {
        out.extend(nodes::node_view(g, i)?);
    }
    Ok(out)
}

/// The INSERT of member `m` of `g`: one branch per user window.
fn insert(g: &Group, m: usize, q: &FlinkQuery<'_>) -> Result<Vec<String>> {
    let query = q.query;
    let nkeys = g.nkeys;
    let mut branches = Vec::new();
    for (u, w) in q.windows.iter().enumerate() {
        let union_index = g.user[m][u];
        let node = g
            .plan
            .nodes
            .iter()
            .position(|n| n.user_windows.contains(&union_index))
            .ok_or_else(|| Error::Internal(format!("user window {u} has no plan node")))?;
        let col = |i: usize| -> Result<String> {
            Ok(if i < nkeys {
                format!("k{i}")
            } else {
                let j = g.calls[m][i - nkeys];
                nodes::finalise(j, &g.states[j])
            })
        };
        let meta = |mt: WindowMeta| -> Result<String> {
            match mt {
                WindowMeta::Wtime => Ok("we".into()),
                WindowMeta::Wstart => Ok("ws".into()),
                WindowMeta::Wrange => interval(w.range_us),
                WindowMeta::Wslide => interval(w.slide_us),
            }
        };
        let mut items = vec![
            format!("{u} AS `tcq_window`"),
            "CAST(ws AS TIMESTAMP(3)) AS `tcq_wstart`".into(),
            "CAST(we AS TIMESTAMP(3)) AS `tcq_wend`".into(),
        ];
        for (k, t) in g.key_types.iter().enumerate() {
            items.push(format!("CAST(k{k} AS {}) AS `tcq_k{k}`", flink_type(t)?));
        }
        let names = ddl::sink_columns(q);
        for ((e, c), name) in query.projection.iter().zip(&query.columns).zip(&names) {
            items.push(format!(
                "CAST({} AS {}) AS {}",
                render(e, &col, &meta).map_err(|e| name_query(e, q))?,
                flink_type(&c.data_type)?,
                ident(name)
            ));
        }
        let mut filters = Vec::new();
        let first = match (w.start, q.cutoffs.get(u).copied().flatten()) {
            (_, Some(c)) => Some(c),
            (Start::At(o), None) => Some(o),
            (Start::Epoch, None) => None,
        };
        if let Some(f) = first {
            filters.push(format!("ws >= {}", timestamp(f)));
        }
        if let Some(h) = &query.having {
            filters.push(render(h, &col, &meta).map_err(|e| name_query(e, q))?);
        }
        let mut b = format!("SELECT {} FROM {}", items.join(", "), g.node_name(node));
        if !filters.is_empty() {
            b.push_str(&format!(" WHERE {}", filters.join(" AND ")));
        }
        branches.push(b);
    }
    let mut out = vec![format!("INSERT INTO {}", ident(&q.sink_name()))];
    let n = branches.len();
    for (i, b) in branches.into_iter().enumerate() {
        if i + 1 < n {
            out.push(b);
            out.push("UNION ALL".into());
        } else {
            out.push(format!("{b};"));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod doc_examples {
    //! The examples in this module's documentation, run as unit tests: they use items
    //! private to the crate, which doctests cannot reach.

    #[test]
    fn module_example() {
        use crate::wcg::flink::interval;
        assert_eq!(interval(600_000_000).unwrap(), "INTERVAL '10' MINUTE");
        assert_eq!(interval(5_400_000_000).unwrap(), "INTERVAL '90' MINUTE");
        assert_eq!(
            interval(86_400_000_000 * 120).unwrap(),
            "INTERVAL '120 00:00:00.000' DAY(3) TO SECOND(3)"
        );
    }
}
