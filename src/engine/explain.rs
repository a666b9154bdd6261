//! EXPLAIN for continuous queries: the windows, the min-cost WCG and its costs, and with
//! ANALYZE the measured work beside the model's.

use std::sync::Arc;

use super::register::{build_exec, resolve};
use super::{Engine, Outcome};
use crate::error::Result;
use crate::exec::WorkCounters;
use crate::sql::{ExplainFormat, ExplainOptions, Query};
use crate::types::{Column, DataType, Value};

/// Run EXPLAIN [ANALYZE] for `query`.
pub(crate) async fn explain(
    engine: &Arc<Engine>,
    query: Query,
    options: ExplainOptions,
    params: &[Value],
    share: bool,
) -> Result<Outcome> {
    let text = query.text.clone();
    let columns = query.columns.clone();
    let lines = if matches!(query.source, crate::sql::Source::Join { .. }) {
        if options.analyze || options.format != ExplainFormat::Text {
            return Err(crate::Error::FeatureNotSupported(
                "EXPLAIN of a join supports the text format without ANALYZE".into(),
            ));
        }
        super::join::explain(engine, query, params)?
    } else if options.format == ExplainFormat::Flink {
        flink(engine, &query, &options)?
    } else if query.is_continuous() {
        let (stream, windows) = resolve(engine, &query)?;
        let eta = options
            .event_rate_per_sec
            .unwrap_or_else(|| stream.event_rate_per_sec());
        let exec = build_exec(engine, query, params, &stream, windows.clone(), Some(eta))?;
        let plan_sharing = exec.sharing();
        let workload = exec.workload(eta);
        let across = if options.format == ExplainFormat::Text {
            across_queries(&stream, &exec, eta, share)
        } else {
            Vec::new()
        };
        let now = stream.stats.lock().now_us;
        let measured = if options.analyze {
            let mut sub = super::register::attach(
                engine,
                &stream,
                exec,
                text,
                columns,
                super::Overflow::Error,
                None,
                None,
                false,
            )
            .await?;
            let id = sub.query_id();
            let mut rows = 0u64;
            let mut work = WorkCounters::default();
            loop {
                if let Some((q, _)) = engine.catalog.queries().get(id) {
                    if let Some(w) = q.exec.lock().work() {
                        work = w.clone();
                    }
                }
                match sub.next().await {
                    Some(Ok(e)) => rows += e.row_count() as u64,
                    Some(Err(e)) => return Err(e),
                    None => break,
                }
            }
            if let Some((q, _)) = engine.catalog.queries().get(id) {
                if let Some(w) = q.exec.lock().work() {
                    work = w.clone();
                }
            }
            let stats = stream.stats.lock().clone();
            let span = match (now, stats.now_us) {
                (Some(a), Some(b)) => b - a,
                (None, Some(b)) => b - stats.first_us.unwrap_or(b),
                _ => 0,
            };
            Some((rows, work, span))
        } else {
            None
        };
        let mut lines = render(
            &windows.iter().map(|(w, _)| *w).collect::<Vec<_>>(),
            &plan_sharing,
            &options,
            &workload,
            measured.as_ref(),
        );
        lines.extend(across);
        lines
    } else if let crate::sql::Source::Table { name, .. } = &query.source {
        vec![format!(
            "Scan of table {name} (finite: the table as it is when the statement runs)"
        )]
    } else {
        vec![format!("Result ({})", text)]
    };
    Ok(plan_rows(lines))
}

/// The lines on cross-query sharing: the shared plan of `stream` the query would join (or
/// why it would run alone or start a plan), and the model cost across the plan's queries
/// with and without sharing.
fn across_queries(
    stream: &super::catalog::Stream,
    exec: &crate::exec::QueryExec,
    eta: f64,
    share: bool,
) -> Vec<String> {
    use crate::wcg::explain::event_rate_text;
    let head = "Sharing across queries:".to_string();
    if !share {
        return vec![
            head,
            "  off (tcq.share_across_queries): the query runs alone".into(),
        ];
    }
    let Some(key) = crate::exec::shared::share_key(exec) else {
        return vec![
            head,
            "  not shared: only windowed aggregates without DISTINCT or now() share".into(),
        ];
    };
    let plans: Vec<std::sync::Arc<super::catalog::PlanRun>> = stream.plans.lock().clone();
    let mut refused = None;
    // As the engine joins: plans with the query's own GROUP BY keys first.
    let mut candidates: Vec<(bool, &std::sync::Arc<super::catalog::PlanRun>)> = plans
        .iter()
        .filter(|p| p.key == key)
        .map(|p| (p.state.lock().agg.is_rollup_for(exec), p))
        .collect();
    candidates.sort_by_key(|(rollup, _)| *rollup);
    for (_, p) in candidates {
        let st = p.state.lock();
        match st.agg.join_refusal(exec, eta) {
            Some(why) => refused = Some(why),
            None => {
                let (with, without) = st.agg.model_costs(exec.windows(), eta);
                let nodes = st.agg.nodes().len();
                let per_hour = |c: f64| crate::wcg::explain::number(c * 3600.0);
                let rollup = st.agg.rollup_costs(exec, eta).map(|(rollup, alone)| {
                    format!(
                        "  rolls up from the plan's finer GROUP BY groups: {} events per hour for its windows and merges, {} alone",
                        per_hour(rollup),
                        per_hour(alone)
                    )
                });
                let mut lines = vec![
                    head,
                    format!(
                        "  joins shared plan {} on {} ({} queries, {nodes} nodes now)",
                        p.id,
                        stream.name,
                        st.queries.len()
                    ),
                    format!(
                        "  Model cost of its {} queries with this one at {}: {} events per hour shared, {} each alone ({:.1}x)",
                        st.queries.len() + 1,
                        event_rate_text(eta),
                        per_hour(with),
                        per_hour(without),
                        if with > 0.0 { without / with } else { 1.0 }
                    ),
                ];
                lines.extend(rollup);
                return lines;
            }
        }
    }
    let why = match refused {
        Some(why) => format!("  starts a new shared plan: no running plan can take it ({why})"),
        None => {
            "  starts a new shared plan (none over this stream has its WHERE and parameters)".into()
        }
    };
    vec![head, why]
}

/// EXPLAIN (FORMAT FLINK): the plan of one query as a Flink job (see
/// [`crate::wcg::flink`]).
///
/// Errors: 0A000 with ANALYZE (the export does not run the query), for a query that reads
/// no stream, and for what [`crate::wcg::flink::flink_job`] cannot express exactly; 22023
/// for a bad export option.
fn flink(engine: &Arc<Engine>, query: &Query, options: &ExplainOptions) -> Result<Vec<String>> {
    use crate::wcg::flink::{flink_job, ExportOptions};
    if options.analyze {
        return Err(crate::Error::FeatureNotSupported(
            "EXPLAIN (FORMAT FLINK) does not run the query; drop ANALYZE".into(),
        ));
    }
    if !matches!(query.source, crate::sql::Source::Stream { .. }) {
        return Err(crate::Error::FeatureNotSupported(
            "EXPLAIN (FORMAT FLINK) exports continuous aggregates over one stream (no joins, no tables)"
                .into(),
        ));
    }
    let export = ExportOptions::from_pairs(&options.flink)?;
    let (stream, resolved) = resolve(engine, query)?;
    let (windows, cutoffs): (Vec<_>, Vec<_>) = resolved.into_iter().unzip();
    let part = FlinkPart {
        label: "query".into(),
        query: query.clone(),
        slack_us: super::resolve::query_slack_us(&query.windows, stream.slack_us),
        windows,
        cutoffs,
        eta: options
            .event_rate_per_sec
            .unwrap_or_else(|| stream.event_rate_per_sec()),
        source: stream.source.lock().as_ref().cloned(),
        stream: stream.clone(),
    };
    flink_job(&[part.as_flink()], &export)
}

/// A query of a Flink export with what it borrows from the catalog.
struct FlinkPart {
    label: String,
    query: Query,
    stream: Arc<super::catalog::Stream>,
    source: Option<Arc<crate::connect::Source>>,
    slack_us: i64,
    windows: Vec<crate::window::Window>,
    cutoffs: Vec<Option<i64>>,
    eta: f64,
}

impl FlinkPart {
    fn as_flink(&self) -> crate::wcg::flink::FlinkQuery<'_> {
        crate::wcg::flink::FlinkQuery {
            label: self.label.clone(),
            query: &self.query,
            source: crate::wcg::flink::FlinkSource {
                name: &self.stream.name,
                columns: &self.stream.columns,
                ts_col: self.stream.ts_col,
                connector: self.source.as_ref().map(|s| &s.spec),
            },
            slack_us: self.slack_us,
            windows: self.windows.clone(),
            cutoffs: self.cutoffs.clone(),
            eta_per_sec: self.eta,
        }
    }
}

/// The registered queries `ids` (every one for `None`), ordered by id, as parts of a Flink
/// export. Errors: 42704 for an id that names no registered query.
fn registered_parts(
    engine: &Engine,
    ids: Option<&[u64]>,
    eta: Option<f64>,
) -> Result<Vec<FlinkPart>> {
    let registry: std::collections::HashMap<u64, _> = engine
        .catalog
        .queries()
        .queries()
        .into_iter()
        .map(|(q, s)| (q.id, (q, s)))
        .collect();
    let mut chosen: Vec<u64> = match ids {
        Some(ids) => {
            for id in ids {
                if !registry.contains_key(id) {
                    return Err(crate::Error::UndefinedObject(format!(
                        "no continuous query with id {id} is registered (see tcq_queries)"
                    )));
                }
            }
            ids.to_vec()
        }
        None => registry.keys().copied().collect(),
    };
    chosen.sort_unstable();
    chosen.dedup();
    let mut parts = Vec::new();
    for id in chosen {
        let (q, stream_name) = &registry[&id];
        let Ok(stream) = engine.catalog.stream(stream_name) else {
            continue;
        };
        let exec = q.exec.lock();
        parts.push(FlinkPart {
            label: format!("q{id}"),
            query: exec.query().clone(),
            slack_us: exec.slack_us(),
            windows: exec.windows().to_vec(),
            cutoffs: exec.cutoffs().to_vec(),
            eta: eta.unwrap_or_else(|| stream.event_rate_per_sec()),
            source: stream.source.lock().as_ref().cloned(),
            stream: stream.clone(),
        });
    }
    Ok(parts)
}

/// `EXPLAIN (FORMAT FLINK, ...) QUERIES ALL | (ids)`: the registered queries as one Flink
/// job. With ALL, the queries the export refuses are left out and listed with the reason;
/// a query named in the list that it refuses is an error (0A000, naming the query).
///
/// Errors: 42704 for an unknown id; 22023 when no query can be exported or for a bad
/// export option.
pub(crate) fn explain_queries(
    engine: &Arc<Engine>,
    ids: Option<Vec<u64>>,
    options: ExplainOptions,
) -> Result<Outcome> {
    use crate::wcg::flink::{exportable, flink_job, ExportOptions};
    let export = ExportOptions::from_pairs(&options.flink)?;
    let parts = registered_parts(engine, ids.as_deref(), options.event_rate_per_sec)?;
    let mut left_out = Vec::new();
    let mut queries = Vec::new();
    for p in &parts {
        let q = p.as_flink();
        match exportable(&q) {
            Ok(()) => queries.push(q),
            Err(e) if ids.is_none() => left_out.push(format!("--   {}: {e}", p.label)),
            Err(e) => return Err(e),
        }
    }
    if queries.is_empty() {
        if let Some(first) = left_out.first() {
            return Err(crate::Error::FeatureNotSupported(format!(
                "no registered query can be exported: {}",
                first.trim_start_matches('-').trim_start()
            )));
        }
    }
    let mut lines = flink_job(&queries, &export)?;
    if !left_out.is_empty() {
        let mut head = vec!["-- Registered queries left out of the job:".to_string()];
        head.extend(left_out);
        let at = lines
            .iter()
            .position(|l| !l.starts_with("--"))
            .unwrap_or(lines.len());
        lines.splice(at..at, head);
    }
    Ok(plan_rows(lines))
}

/// EXPLAIN's result: one text row per line, in the column PostgreSQL names "QUERY PLAN".
fn plan_rows(lines: Vec<String>) -> Outcome {
    Outcome::Rows {
        columns: vec![Column::new("QUERY PLAN", DataType::Text)],
        tag: "EXPLAIN".into(),
        rows: lines
            .into_iter()
            .map(|l| vec![Value::Text(l.into())])
            .collect(),
        notices: vec![],
    }
}

/// Render the optimizer's report in the requested format; with ANALYZE, the measured work
/// per plan node and the rows emitted follow.
fn render(
    windows: &[crate::window::Window],
    sharing: &crate::wcg::Sharing,
    options: &ExplainOptions,
    workload: &crate::wcg::Workload,
    measured: Option<&(u64, WorkCounters, i64)>,
) -> Vec<String> {
    use crate::wcg::explain::{explain_dot, explain_json, explain_text, Measured};
    let report = crate::wcg::optimize_for(windows, *sharing, workload);
    let m = measured
        .map(|(_, w, span)| Measured::from_counters(*span, &w.tuples_folded, &w.partials_merged));
    let mut lines = match options.format {
        ExplainFormat::Text => explain_text(&report, m.as_ref()),
        ExplainFormat::Json => vec![explain_json(&report, m.as_ref())],
        ExplainFormat::Dot => vec![explain_dot(&report, m.as_ref())],
        ExplainFormat::Flink => unreachable!("EXPLAIN (FORMAT FLINK) is rendered by flink()"),
    };
    if let (Some((rows, _, _)), ExplainFormat::Text) = (measured, options.format) {
        lines.push(format!("Rows emitted: {rows}"));
    }
    lines
}
