//! `tcqd paper`: the paper's evaluation (section 5) and measured sharing speed-ups.
//!
//! Two parts. First the model costs of BL, UP, SP, WCG and WCG-FW on the paper's window-set
//! generators ([`tcq::wcg::eval`]). Then the executor itself, run three times over the
//! same input with the same windows: every window on its own (BL), along Algorithm 1's
//! min-cost WCG (WCG), and along Algorithm 2's WCG with factor windows (WCG-FW), so the
//! measured speed-up can be set beside the predicted one. The measurement calls the
//! executor directly (no wire), so it isolates the effect of sharing.

use std::time::Instant;

use tcq::agg::{sharing_of, AggSpec};
use tcq::exec::{ExecLimits, QueryExec, RowBatch};
use tcq::sql::{AggCall, AggFunc, Aggregate, Expr, Query, Source, WindowMeta};
use tcq::types::{Column, DataType, Value};
use tcq::wcg;
use tcq::wcg::eval::{paper_evaluation, render_table, ten_window_query, EvalConfig};
use tcq::window::{Start, Window};
use tcq::Result;

/// One measured run.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Measured {
    /// Which plan: BL, WCG or WCG-FW.
    pub(crate) technique: &'static str,
    /// Model cost of the plan per hour of stream time (events).
    pub(crate) model_cost_per_hour: f64,
    /// Tuples per second through the executor.
    pub(crate) tuples_per_sec: f64,
    /// Rows emitted (equal across techniques: the plans compute the same results).
    pub(crate) rows: u64,
}

/// `SELECT k, count(*), sum(v), max(v), wtime(*) FROM s <windows> GROUP BY k`, where the
/// input row is (ts, k text, v integer).
fn query() -> Query {
    let call = |func, arg: Option<usize>, t| AggCall {
        func,
        arg: arg.map(Expr::Column),
        arg_type: DataType::Int4,
        distinct: false,
        result_type: t,
    };
    let calls = vec![
        call(AggFunc::CountStar, None, DataType::Int8),
        call(AggFunc::Sum, Some(2), DataType::Int8),
        call(AggFunc::Avg, Some(2), DataType::Numeric),
    ];
    let projection = vec![
        Expr::Column(0),
        Expr::Column(1),
        Expr::Column(2),
        Expr::Column(3),
        Expr::WindowMeta(WindowMeta::Wtime),
    ];
    let columns = (0..projection.len())
        .map(|i| Column::new(format!("c{i}"), DataType::Text))
        .collect();
    Query {
        source: Source::Stream {
            name: "s".into(),
            columns: vec![
                Column::new("ts", DataType::Timestamp),
                Column::new("k", DataType::Text),
                Column::new("v", DataType::Int4),
            ],
        },
        windows: vec![],
        filter: None,
        aggregate: Some(Aggregate {
            group_by: vec![Expr::Column(1)],
            group_types: vec![DataType::Text],
            calls,
        }),
        having: None,
        projection,
        columns,
        order_by: vec![],
        limit: None,
        offset: None,
        limit_param: None,
        offset_param: None,
        param_types: vec![],
        text: String::new(),
    }
}

/// A deterministic input: `n` tuples, one every `gap_us`, 50 groups.
pub(crate) fn synthetic_input(n: usize, gap_us: i64) -> Vec<RowBatch> {
    let mut batches = Vec::new();
    let mut b = RowBatch::new(3);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let t = i as i64 * gap_us;
        let key = format!("k{:02}", x % 50);
        b.push(
            [
                Value::Timestamp(t),
                Value::Text(key.into()),
                Value::Int4((x % 1000) as i32 - 200),
            ],
            t,
        );
        if b.len() == 65_536 {
            batches.push(std::mem::replace(&mut b, RowBatch::new(3)));
        }
    }
    if !b.is_empty() {
        batches.push(b);
    }
    batches
}

/// Run the three plans over `input` for `windows`.
pub(crate) fn measure(
    windows: &[Window],
    input: &[RowBatch],
    eta_per_sec: f64,
) -> Result<Vec<Measured>> {
    let q = query();
    let specs: Vec<AggSpec> = q
        .aggregate
        .as_ref()
        .map(|a| {
            a.calls
                .iter()
                .map(|c| AggSpec::new(c.func, c.arg_type, false))
                .collect()
        })
        .unwrap_or_default();
    let report = wcg::optimize(windows, sharing_of(&specs), eta_per_sec);
    let plans = report.candidates();
    let limits = ExecLimits {
        groups_max: usize::MAX,
        open_instances_max: 1_000_000,
        empty_slide_events_max: u64::MAX,
        distinct_values_max: usize::MAX,
        coalesce_bytes: 0,
    };
    let tuples: usize = input.iter().map(RowBatch::len).sum();
    let mut out = Vec::new();
    for (technique, plan, model) in plans {
        let mut exec = QueryExec::new(
            q.clone(),
            windows.to_vec(),
            vec![None; windows.len()],
            plan,
            vec![],
            false,
            limits,
            0,
        )?;
        let mut events = Vec::new();
        let mut rows = 0u64;
        let t0 = Instant::now();
        for b in input {
            exec.push(b, &mut events)?;
            for e in events.drain(..) {
                rows += e.row_count() as u64;
            }
        }
        let secs = t0.elapsed().as_secs_f64();
        out.push(Measured {
            technique,
            model_cost_per_hour: model,
            tuples_per_sec: tuples as f64 / secs,
            rows,
        });
    }
    Ok(out)
}

/// Print the evaluation table and the measured throughput of BL, WCG and WCG-FW on the
/// paper's four-window example (tumbling 10, 20, 30, 40 minutes) and on a ten-window set.
pub(crate) fn run_paper() -> Result<()> {
    let cfg = EvalConfig::default();
    for line in render_table(&cfg, &paper_evaluation(&cfg)) {
        println!("{line}");
    }
    let minute = 60_000_000;
    let w = |r: i64| Window::new(r * minute, r * minute, Start::Epoch).expect("positive");
    // One tuple per 120 ms of stream time: 30 per minute, 2 M tuples over 2.7 days.
    let input = synthetic_input(2_000_000, 120_000);
    let eta = 1e6 / 120_000.0;
    for (name, windows) in [
        (
            "paper example 10/20/30/40 minutes",
            vec![w(10), w(20), w(30), w(40)],
        ),
        ("ten-window set", ten_window_query()),
    ] {
        println!();
        println!(
            "Measured: {name}, {} windows, 2,000,000 tuples, 50 groups, count/sum/avg",
            windows.len()
        );
        println!(
            "  {:<8} {:>18} {:>16} {:>12} {:>10} {:>10}",
            "plan", "model cost/hour", "tuples/s", "rows", "model x", "measured x"
        );
        let results = measure(&windows, &input, eta)?;
        let (base_cost, base_speed) = (results[0].model_cost_per_hour, results[0].tuples_per_sec);
        for m in &results {
            println!(
                "  {:<8} {:>18.0} {:>16.0} {:>12} {:>10.2} {:>10.2}",
                m.technique,
                m.model_cost_per_hour,
                m.tuples_per_sec,
                m.rows,
                base_cost / m.model_cost_per_hour,
                m.tuples_per_sec / base_speed
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The three plans compute the same rows; sharing only changes the work.
    #[test]
    fn plans_emit_the_same_number_of_rows() {
        let minute = 60_000_000;
        let w = |r: i64| Window::new(r * minute, r * minute, Start::Epoch).unwrap();
        let input = synthetic_input(20_000, 1_000_000);
        let results = measure(&[w(10), w(20), w(30), w(40)], &input, 1.0).unwrap();
        assert_eq!(results.len(), 3);
        assert!(results[0].rows > 0);
        assert!(
            results.iter().all(|m| m.rows == results[0].rows),
            "{results:?}"
        );
        assert!(results[2].model_cost_per_hour < results[0].model_cost_per_hour);
    }
}
