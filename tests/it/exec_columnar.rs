//! The columnar path gives exactly the rows of the tuple-at-a-time evaluator.
//!
//! Protects `QueryExec::push_columns` (issue 7): for seeded random streams over every column
//! type, with NULLs, duplicate and late timestamps and tuples on instance boundaries, cut
//! into random batches (so batches cross and end on window ends), a query fed the tuples as
//! columnar batches must emit, event by event, the same rows and NOTICEs as the same query
//! fed the same batches as rows, with and without SLACK. Queries read group keys and arguments of every type
//! (the columnar fold) and, with a WHERE clause or an expression argument, fall back to
//! rows.

use proptest::prelude::*;
use rust_decimal::Decimal;
use tcq::exec::columns::ColumnBatchBuilder;
use tcq::exec::shared::SharedAgg;
use tcq::exec::{Batch, Event, ExecLimits, QueryExec, RowBatch};
use tcq::sql::{AggCall, AggFunc, Aggregate, BinaryOp, Expr, Query, Source, WindowMeta};
use tcq::types::{Column, DataType, Interval, Value};
use tcq::window::{Start, Window};

const LIMITS: ExecLimits = ExecLimits {
    groups_max: 1_000_000,
    open_instances_max: 100_000,
    empty_slide_events_max: u64::MAX,
    distinct_values_max: usize::MAX,
    coalesce_bytes: 1 << 20,
};

/// Column 0 is the timestamp; the others one of each type, and a last bigint column of
/// values near its limits (sums leave bigint and become numeric; squares leave i128).
const TYPES: [DataType; 13] = [
    DataType::Timestamp,
    DataType::Bool,
    DataType::Int2,
    DataType::Int4,
    DataType::Int8,
    DataType::Float4,
    DataType::Float8,
    DataType::Numeric,
    DataType::Text,
    DataType::Varchar(Some(8)),
    DataType::TimestampTz,
    DataType::Interval,
    DataType::Int8,
];

/// The column of bigints near the limits.
const BIG: usize = 12;

fn value_of(ty: DataType, x: i64) -> Value {
    match ty {
        DataType::Bool => Value::Bool(x % 2 == 0),
        DataType::Int2 => Value::Int2((x % 300) as i16),
        DataType::Int4 => Value::Int4((x % 7) as i32),
        DataType::Int8 => Value::Int8(x * 1_000_003),
        DataType::Float4 => Value::Float4(x as f32 / 4.0),
        DataType::Float8 => Value::Float8(x as f64 / 8.0),
        DataType::Numeric => Value::Numeric(Decimal::new(x, 2)),
        DataType::Text => Value::Text(format!("k{}", x % 5).into()),
        DataType::Varchar(_) => Value::Text(if x % 3 == 0 {
            "a text longer than twenty-four bytes".into()
        } else {
            format!("v{}", x % 4).into()
        }),
        DataType::TimestampTz => Value::TimestampTz(x * 1_000),
        DataType::Interval => Value::Interval(Interval {
            months: (x % 3) as i32,
            days: (x % 5) as i32,
            micros: x,
        }),
        DataType::Timestamp => Value::Timestamp(x),
        // Not in TYPES: streams have no date, time or char(n) columns.
        DataType::Date => Value::Date((x % 10_000) as i32),
        DataType::Time => Value::Time(x.rem_euclid(86_400_000_000)),
        DataType::Bpchar(_) => Value::Text(format!("c{}", x % 3).into()),
    }
}

/// Tuples: (time in seconds, one seed per column, a NULL mask).
fn tuples() -> impl Strategy<Value = Vec<(i64, Vec<i64>, u16)>> {
    prop::collection::vec(
        (
            0i64..120,
            prop::collection::vec(-50i64..50, TYPES.len()),
            any::<u16>(),
        ),
        0..150,
    )
}

fn rows_of(tuples: &[(i64, Vec<i64>, u16)]) -> Vec<(Vec<Value>, i64)> {
    tuples
        .iter()
        .map(|(t, seeds, nulls)| {
            let t_us = t * 1_000_000;
            let mut row = vec![Value::Timestamp(t_us)];
            for (c, ty) in TYPES.iter().enumerate().skip(1) {
                // About one value in four is NULL.
                row.push(if nulls >> (c % 16) & 1 == 1 && seeds[c] % 2 == 0 {
                    Value::Null
                } else if c == BIG {
                    let x = seeds[c];
                    Value::Int8(if x >= 0 { i64::MAX - x } else { i64::MIN - x })
                } else {
                    value_of(*ty, seeds[c])
                });
            }
            (row, t_us)
        })
        .collect()
}

fn call(func: AggFunc, arg: Option<Expr>, arg_col: usize) -> AggCall {
    AggCall {
        func,
        arg,
        arg_type: TYPES[arg_col],
        distinct: false,
        result_type: DataType::Text,
    }
}

fn col_call(func: AggFunc, c: usize) -> AggCall {
    call(func, Some(Expr::Column(c)), c)
}

/// Aggregates over every argument type the executor folds.
fn calls() -> Vec<AggCall> {
    use AggFunc::*;
    let mut calls = vec![call(CountStar, None, 0)];
    for c in 1..TYPES.len() {
        calls.push(col_call(Count, c));
        calls.push(col_call(Min, c));
        calls.push(col_call(Max, c));
    }
    for c in [2, 3, 4, 5, 6, 7] {
        calls.push(col_call(Sum, c));
        calls.push(col_call(Avg, c));
        calls.push(col_call(StddevSamp, c));
        calls.push(col_call(VarPop, c));
    }
    let mut distinct = col_call(Count, 8);
    distinct.distinct = true;
    calls.push(distinct);
    calls
}

fn query(keys: Vec<usize>, calls: Vec<AggCall>, filter: Option<Expr>) -> Query {
    let n = keys.len() + calls.len();
    let mut projection: Vec<Expr> = (0..n).map(Expr::Column).collect();
    projection.push(Expr::WindowMeta(WindowMeta::Wtime));
    let columns = (0..projection.len())
        .map(|i| Column::new(format!("c{i}"), DataType::Text))
        .collect();
    Query {
        source: Source::Stream {
            name: "s".into(),
            columns: TYPES
                .iter()
                .enumerate()
                .map(|(i, t)| Column::new(format!("c{i}"), *t))
                .collect(),
        },
        windows: vec![],
        filter,
        aggregate: Some(Aggregate {
            group_types: keys.iter().map(|&k| TYPES[k]).collect(),
            group_by: keys.into_iter().map(Expr::Column).collect(),
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

/// Aggregates the typed kernels fold (none can fail), over every argument type.
fn kernel_calls() -> Vec<AggCall> {
    use AggFunc::*;
    let mut calls = vec![call(CountStar, None, 0)];
    for c in 1..TYPES.len() {
        calls.push(col_call(Count, c));
        calls.push(col_call(Min, c));
        calls.push(col_call(Max, c));
    }
    for c in [2, 3, 4, 5, 6, BIG] {
        calls.push(col_call(Sum, c));
        calls.push(col_call(Avg, c));
    }
    for c in [2, 3, 5, 6] {
        calls.push(col_call(StddevSamp, c));
        calls.push(col_call(StddevPop, c));
        calls.push(col_call(VarSamp, c));
        calls.push(col_call(VarPop, c));
    }
    calls
}

fn exec_limited(q: &Query, windows: &[Window], slack_us: i64, limits: ExecLimits) -> QueryExec {
    let plan = tcq::exec::plan_windows(q, windows, 1.0);
    let mut exec = QueryExec::new(
        q.clone(),
        windows.to_vec(),
        vec![None; windows.len()],
        plan,
        vec![],
        false,
        limits,
        1_000_000,
    )
    .unwrap();
    exec.set_slack(slack_us);
    exec
}

/// Feed `rows` cut at `cuts` to one executor as row batches and to another as columnar
/// batches; both must give the same events (and the same errors).
fn same_events(q: &Query, windows: &[Window], rows: &[(Vec<Value>, i64)], cuts: &[usize]) {
    // Without SLACK and with a SLACK of 3 s (current time trails the stream's time).
    for slack_us in [0, 3_000_000] {
        same_events_with(q, windows, rows, cuts, slack_us);
    }
}

fn same_events_with(
    q: &Query,
    windows: &[Window],
    rows: &[(Vec<Value>, i64)],
    cuts: &[usize],
    slack_us: i64,
) {
    same_events_limited(q, windows, rows, cuts, slack_us, LIMITS)
}

fn same_events_limited(
    q: &Query,
    windows: &[Window],
    rows: &[(Vec<Value>, i64)],
    cuts: &[usize],
    slack_us: i64,
    limits: ExecLimits,
) {
    let (mut by_rows, mut by_cols) = (
        exec_limited(q, windows, slack_us, limits),
        exec_limited(q, windows, slack_us, limits),
    );
    let (mut out_rows, mut out_cols) = (Vec::new(), Vec::new());
    let mut bounds: Vec<usize> = cuts.iter().map(|c| c % (rows.len() + 1)).collect();
    bounds.extend([0, rows.len()]);
    bounds.sort_unstable();
    for w in bounds.windows(2) {
        let part = &rows[w[0]..w[1]];
        let mut rb = RowBatch::new(TYPES.len());
        let mut cb = ColumnBatchBuilder::new(&TYPES, 4);
        for (row, t) in part {
            rb.push(row.clone(), *t);
            cb.push_row(&mut row.clone(), *t);
        }
        let cb = cb.finish();
        assert_eq!(
            cb.to_rows(),
            rb,
            "a columnar batch holds the rows it was built from"
        );
        let a = by_rows.push(&rb, &mut out_rows).map_err(|e| e.to_string());
        let b = by_cols
            .push_columns(&cb, &mut out_cols)
            .map_err(|e| e.to_string());
        assert_eq!(a, b);
        if a.is_err() {
            break;
        }
    }
    assert_eq!(by_rows.stats(), by_cols.stats());
    assert_eq!(render(&out_rows), render(&out_cols));
}

/// The events, counters and first error of `q` run as the only member of a cross-query
/// shared plan, fed `rows` cut at `cuts` as row or as columnar batches.
fn shared_run(
    q: &Query,
    windows: &[Window],
    rows: &[(Vec<Value>, i64)],
    cuts: &[usize],
    slack_us: i64,
    columns: bool,
) -> (Vec<String>, String, Option<String>) {
    let mut exec = exec_limited(q, windows, slack_us, LIMITS);
    let mut agg = SharedAgg::new(&exec, LIMITS).unwrap();
    agg.join(0, &mut exec, 1.0).unwrap();
    let mut outs = vec![Vec::new()];
    let mut bounds: Vec<usize> = cuts.iter().map(|c| c % (rows.len() + 1)).collect();
    bounds.extend([0, rows.len()]);
    bounds.sort_unstable();
    let mut error = None;
    for w in bounds.windows(2) {
        let part = &rows[w[0]..w[1]];
        let batch = if columns {
            let mut cb = ColumnBatchBuilder::new(&TYPES, 4);
            for (row, t) in part {
                cb.push_row(&mut row.clone(), *t);
            }
            Batch::Columns(cb.finish())
        } else {
            let mut rb = RowBatch::new(TYPES.len());
            for (row, t) in part {
                rb.push(row.clone(), *t);
            }
            Batch::Rows(rb)
        };
        if let Err(e) = agg.push_batch(&batch, &mut [&mut exec], &mut outs) {
            error = Some(e.to_string());
            break;
        }
    }
    (render(&outs[0]), format!("{:?}", exec.stats()), error)
}

/// Events as text: NaN compares equal to itself there.
fn render(events: &[Event]) -> Vec<String> {
    events.iter().map(|e| format!("{e:?}")).collect()
}

/// A window of `r` seconds sliding `s`.
fn w(r: i64, s: i64, o: Start) -> Window {
    Window::new(r * 1_000_000, s * 1_000_000, o).unwrap()
}

fn windows() -> impl Strategy<Value = Vec<Window>> {
    let o = Start::At(0);
    prop::collection::vec(
        prop_oneof![
            (1i64..30).prop_map(move |r| w(r, r, o)),
            (1i64..10, 1i64..4).prop_map(move |(s, k)| w(s * k, s, o)),
            (1i64..10, 1i64..10).prop_map(move |(r, s)| w(r, s, o)),
        ],
        1..4,
    )
}

/// A run of in-order tuples that falls in two open instances of a hopping window, where the
/// later instance reaches the group limit at an earlier tuple than the first instance does:
/// the kernels stop at that earlier tuple, as the tuple-at-a-time fold does. RANGE 9 s SLIDE
/// 8 s with a SLACK of 3 s: the tuple at 10 s opens [8 s, 17 s) with group 1 while [0 s, 9 s)
/// holds group 0; the tuple at 8 s with group 0 is the one that exceeds one group per
/// instance (in [8 s, 17 s)), before the tuple at 8 s with group 2 would in [0 s, 9 s).
#[test]
fn the_group_limit_stops_at_the_earliest_tuple_across_instances() {
    let tuple = |t: i64, key: i64| (t, vec![key; TYPES.len()], 0u16);
    let rows = rows_of(&[tuple(1, 0), tuple(10, 1), tuple(8, 0), tuple(8, 2)]);
    let q = query(vec![3], vec![call(AggFunc::CountStar, None, 0)], None);
    let windows = [w(9, 8, Start::At(0))];
    let limits = ExecLimits {
        groups_max: 1,
        ..LIMITS
    };
    same_events_limited(&q, &windows, &rows, &[], 3_000_000, limits);
    let mut exec = exec_limited(&q, &windows, 3_000_000, limits);
    let mut cb = ColumnBatchBuilder::new(&TYPES, 4);
    for (row, t) in &rows {
        cb.push_row(&mut row.clone(), *t);
    }
    let err = exec
        .push_columns(&cb.finish(), &mut Vec::new())
        .expect_err("the third tuple exceeds the group limit");
    assert!(err.to_string().contains("group"), "{err}");
    assert_eq!(exec.stats().tuples_in, 3, "counted up to the failing tuple");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Grouped by keys of several types, every aggregate over every type.
    #[test]
    fn grouped_columnar_equals_rows(
        tuples in tuples(),
        windows in windows(),
        cuts in prop::collection::vec(any::<usize>(), 0..6),
        keys in prop::sample::subsequence((1..TYPES.len()).collect::<Vec<_>>(), 0..3),
    ) {
        let rows = rows_of(&tuples);
        same_events(&query(keys, calls(), None), &windows, &rows, &cuts);
    }

    /// The typed kernels (every aggregate infallible): runs of in-order tuples folded a
    /// column at a time, cut where instances end; late tuples in the same batches.
    #[test]
    fn kernels_columnar_equal_rows(
        tuples in tuples(),
        windows in windows(),
        cuts in prop::collection::vec(any::<usize>(), 0..6),
        keys in prop::sample::subsequence((1..TYPES.len()).collect::<Vec<_>>(), 0..3),
    ) {
        let rows = rows_of(&tuples);
        same_events(&query(keys, kernel_calls(), None), &windows, &rows, &cuts);
    }

    /// A group limit stops the kernels' run at the same tuple, with the same error and
    /// counters, as the tuple-at-a-time fold.
    #[test]
    fn kernels_stop_at_the_group_limit_as_rows_do(
        tuples in tuples(),
        windows in windows(),
        cuts in prop::collection::vec(any::<usize>(), 0..6),
        groups_max in 1usize..5,
    ) {
        let rows = rows_of(&tuples);
        let q = query(vec![3], vec![call(AggFunc::CountStar, None, 0), col_call(AggFunc::Max, 6)], None);
        let limits = ExecLimits { groups_max, ..LIMITS };
        for slack_us in [0, 3_000_000] {
            same_events_limited(&q, &windows, &rows, &cuts, slack_us, limits);
        }
    }

    /// Shared plans (children merge their parents' partials; late tuples go straight to a
    /// child whose parent instance has closed).
    #[test]
    fn shared_plans_columnar_equals_rows(
        tuples in tuples(),
        p in 1i64..6,
        cuts in prop::collection::vec(any::<usize>(), 0..6),
    ) {
        let rows = rows_of(&tuples);
        let o = Start::At(0);
        let windows = [w(p, p, o), w(2 * p, 2 * p, o), w(4 * p, 2 * p, o), w(6 * p, 6 * p, o)];
        let minmax = (1..TYPES.len())
            .flat_map(|c| [col_call(AggFunc::Min, c), col_call(AggFunc::Max, c)])
            .collect();
        same_events(&query(vec![3], minmax, None), &windows, &rows, &cuts);
        let sums = vec![call(AggFunc::CountStar, None, 0), col_call(AggFunc::Sum, 7)];
        same_events(&query(vec![], sums, None), &windows, &rows, &cuts);
    }

    /// WHERE comparing a column of any type with a constant (either side, every
    /// comparison): selection vectors over the columns, with the typed kernels and with the
    /// tuple-at-a-time fold of columns (a DISTINCT aggregate among the calls).
    #[test]
    fn column_filters_equal_rows(
        tuples in tuples(),
        windows in windows(),
        cuts in prop::collection::vec(any::<usize>(), 0..6),
        column in 1..TYPES.len(),
        op in 0usize..6,
        seed in -50i64..50,
        swap in any::<bool>(),
        keys in prop::sample::subsequence((1..TYPES.len()).collect::<Vec<_>>(), 0..2),
    ) {
        let rows = rows_of(&tuples);
        let ops = [BinaryOp::Eq, BinaryOp::NotEq, BinaryOp::Lt, BinaryOp::LtEq, BinaryOp::Gt, BinaryOp::GtEq];
        let (col, lit) = (
            Box::new(Expr::Column(column)),
            Box::new(Expr::Literal(value_of(TYPES[column], seed))),
        );
        let (left, right) = if swap { (lit, col) } else { (col, lit) };
        let filter = Expr::Binary { op: ops[op], left, right };
        let q = query(keys.clone(), kernel_calls(), Some(filter.clone()));
        same_events(&q, &windows, &rows, &cuts);
        let mut calls = vec![call(AggFunc::CountStar, None, 0), col_call(AggFunc::Sum, 7)];
        let mut distinct = col_call(AggFunc::Count, 8);
        distinct.distinct = true;
        calls.push(distinct);
        same_events(&query(keys, calls, Some(filter)), &windows, &rows, &cuts);
    }

    /// A cross-query shared plan fed columnar batches gives its member the events and
    /// counters it gets from the same batches as rows: through the typed kernels (with and
    /// without a column filter) and, for a numeric sum, a tuple at a time.
    #[test]
    fn shared_plan_columnar_equals_rows(
        tuples in tuples(),
        windows in windows(),
        cuts in prop::collection::vec(any::<usize>(), 0..6),
        keys in prop::sample::subsequence((1..TYPES.len()).collect::<Vec<_>>(), 0..2),
        filtered in any::<bool>(),
    ) {
        let rows = rows_of(&tuples);
        let filter = filtered.then(|| Expr::Binary {
            op: BinaryOp::LtEq,
            left: Box::new(Expr::Column(3)),
            right: Box::new(Expr::Literal(Value::Int4(2))),
        });
        let numeric = vec![call(AggFunc::CountStar, None, 0), col_call(AggFunc::Sum, 7)];
        for calls in [kernel_calls(), numeric] {
            let q = query(keys.clone(), calls, filter.clone());
            for slack_us in [0, 3_000_000] {
                let by_rows = shared_run(&q, &windows, &rows, &cuts, slack_us, false);
                let by_cols = shared_run(&q, &windows, &rows, &cuts, slack_us, true);
                prop_assert_eq!(by_rows, by_cols);
            }
        }
    }

    /// Queries the columnar fold does not take (a WHERE that is no column-constant
    /// comparison, an expression argument) read rows.
    #[test]
    fn fallback_queries_equal_rows(
        tuples in tuples(),
        windows in windows(),
        cuts in prop::collection::vec(any::<usize>(), 0..6),
    ) {
        let rows = rows_of(&tuples);
        let gt = Expr::Binary {
            op: BinaryOp::Gt,
            left: Box::new(Expr::Binary {
                op: BinaryOp::Add,
                left: Box::new(Expr::Column(3)),
                right: Box::new(Expr::Literal(Value::Int4(1))),
            }),
            right: Box::new(Expr::Literal(Value::Int4(0))),
        };
        let plus = Expr::Binary {
            op: BinaryOp::Add,
            left: Box::new(Expr::Column(4)),
            right: Box::new(Expr::Literal(Value::Int8(1))),
        };
        let q = query(vec![8], vec![col_call(AggFunc::Sum, 4)], Some(gt));
        same_events(&q, &windows, &rows, &cuts);
        let q = query(vec![], vec![call(AggFunc::Max, Some(plus), 4)], None);
        same_events(&q, &windows, &rows, &cuts);
    }
}

/// One batch whose tuples close 200 one-row slide events (ungrouped count over 1 s
/// tumbling windows): the rows travel in a few blocks, each counting the slide events it
/// holds, and are exactly the rows of one block per event, as with coalescing off. A LIMIT
/// cuts the coalesced block at its row, and the query stops there.
#[test]
fn the_small_slide_events_of_a_batch_share_blocks() {
    let rows: Vec<(Vec<Value>, i64)> = (0..=200)
        .map(|t| {
            let mut row = vec![Value::Null; TYPES.len()];
            row[0] = Value::Timestamp(t * 1_000_000);
            (row, t * 1_000_000)
        })
        .collect();
    let mut batch = RowBatch::new(TYPES.len());
    for (row, t) in &rows {
        batch.push(row.clone(), *t);
    }
    let q = query(vec![], vec![call(AggFunc::CountStar, None, 0)], None);
    let windows = [w(1, 1, Start::At(0))];
    let run = |q: &Query, coalesce_bytes: usize| {
        let limits = ExecLimits {
            coalesce_bytes,
            ..LIMITS
        };
        let mut exec = exec_limited(q, &windows, 0, limits);
        let mut out = Vec::new();
        exec.push(&batch, &mut out).unwrap();
        let blocks: Vec<(usize, usize)> = out
            .iter()
            .map(|e| match e {
                Event::Block(b) => (b.len(), b.slide_events()),
                other => panic!("a block, not {other:?}"),
            })
            .collect();
        let rows: Vec<Vec<Value>> = out.into_iter().flat_map(Event::into_rows).collect();
        (blocks, rows)
    };
    let (apart, want) = run(&q, 0);
    assert_eq!(apart, vec![(1, 1); 200], "one block per slide event");
    assert_eq!(want.len(), 200);
    assert_eq!(want[7][0], Value::Int8(1));
    assert_eq!(
        want[7][1],
        Value::Timestamp(8_000_000),
        "wtime of [7 s, 8 s)"
    );
    let (together, got) = run(&q, 1 << 20);
    assert!(together.len() < 10, "{} blocks", together.len());
    assert_eq!(together.iter().map(|b| b.0).sum::<usize>(), 200);
    assert_eq!(together.iter().map(|b| b.1).sum::<usize>(), 200);
    assert_eq!(got, want);
    // LIMIT 5: the first five rows, in one block.
    let mut limited = q.clone();
    limited.limit = Some(5);
    let (blocks, got) = run(&limited, 1 << 20);
    assert_eq!(blocks.iter().map(|b| b.0).sum::<usize>(), 5);
    assert_eq!(got, want[..5].to_vec());
}
