//! EXPLAIN for continuous queries: the windows, the min-cost WCG and its costs, and with
//! ANALYZE the measured work beside the model's.

use std::sync::Arc;

use super::session::{build_exec, resolve};
use super::{Engine, Outcome};
use crate::error::Result;
use crate::exec::{Event, WorkCounters};
use crate::sql::{ExplainFormat, ExplainOptions, Query};
use crate::types::{Column, DataType, Value};

/// Run EXPLAIN [ANALYZE] for `query`.
pub(crate) async fn explain(
    engine: &Arc<Engine>,
    query: Query,
    options: ExplainOptions,
    params: &[Value],
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
    } else if query.is_continuous() {
        let (stream, windows) = resolve(engine, &query)?;
        let eta = options
            .event_rate_per_sec
            .unwrap_or_else(|| stream.event_rate_per_sec());
        let exec = build_exec(engine, query, params, &stream, windows.clone(), Some(eta))?;
        let plan_sharing = exec.sharing();
        let now = stream.stats.lock().now_us;
        let measured = if options.analyze {
            let mut sub = super::session::attach(
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
                if let Some((q, _)) = engine.catalog.queries.lock().get(&id) {
                    if let Some(w) = q.exec.lock().work() {
                        work = w.clone();
                    }
                }
                match sub.next().await {
                    Some(Ok(Event::Rows(r))) => rows += r.len() as u64,
                    Some(Ok(Event::Notice(_))) => {}
                    Some(Err(e)) => return Err(e),
                    None => break,
                }
            }
            if let Some((q, _)) = engine.catalog.queries.lock().get(&id) {
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
        render(
            &windows.iter().map(|(w, _)| *w).collect::<Vec<_>>(),
            &plan_sharing,
            &options,
            eta,
            measured.as_ref(),
        )
    } else if let crate::sql::Source::Table { name, .. } = &query.source {
        vec![format!(
            "Scan of table {name} (finite: the table as it is when the statement runs)"
        )]
    } else {
        vec![format!("Result ({})", text)]
    };
    let rows: Vec<Vec<Value>> = lines
        .into_iter()
        .map(|l| vec![Value::Text(l.into())])
        .collect();
    Ok(Outcome::Rows {
        columns: vec![Column::new("QUERY PLAN", DataType::Text)],
        tag: "EXPLAIN".into(),
        rows,
        notices: vec![],
    })
}

/// Render the optimizer's report in the requested format; with ANALYZE, the measured work
/// per plan node and the rows emitted follow.
fn render(
    windows: &[crate::window::Window],
    sharing: &crate::wcg::Sharing,
    options: &ExplainOptions,
    eta: f64,
    measured: Option<&(u64, WorkCounters, i64)>,
) -> Vec<String> {
    use crate::wcg::explain::{explain_dot, explain_json, explain_text, Measured};
    let report = crate::wcg::optimize(windows, *sharing, eta);
    let m = measured
        .map(|(_, w, span)| Measured::from_counters(*span, &w.tuples_folded, &w.partials_merged));
    let mut lines = match options.format {
        ExplainFormat::Text => explain_text(&report, m.as_ref()),
        ExplainFormat::Json => vec![explain_json(&report, m.as_ref())],
        ExplainFormat::Dot => vec![explain_dot(&report, m.as_ref())],
    };
    if let (Some((rows, _, _)), ExplainFormat::Text) = (measured, options.format) {
        lines.push(format!("Rows emitted: {rows}"));
    }
    lines
}
