//! Cross-query sharing gives every query exactly the rows it gets alone.
//!
//! Protects the semantics of `exec::shared` (issue 9): random sets of continuous aggregate
//! queries (windows from the paper's RandomGen and ChainGen, random aggregates, filters and
//! group keys) register and end at random points of a random stream (gaps, ties, late
//! tuples). Queries are placed into shared plans by the engine's rule: same share key, and
//! a running plan takes a query only when `SharedAgg::join_refusal` says so (otherwise it
//! starts a new plan). Each query's rows must equal those of the same query run alone over
//! the tuples that arrived while it was registered.

use proptest::prelude::*;
use tcq::exec::shared::{share_key, SharedAgg};
use tcq::exec::{Batch, Event, ExecLimits, QueryExec, RowBatch};
use tcq::sql::{AggCall, AggFunc, Aggregate, BinaryOp, Expr, Query, Source, WindowMeta};
use tcq::types::{Column, DataType, Value};
use tcq::wcg::eval::{generate, EvalConfig, Generator, Rng};
use tcq::wcg::SharedPlan;
use tcq::window::{Start, Window};

const LIMITS: ExecLimits = ExecLimits {
    groups_max: 1_000_000,
    open_instances_max: 100_000,
    empty_slide_events_max: u64::MAX,
    distinct_values_max: usize::MAX,
};

const SEC: i64 = 1_000_000;

/// One random query: its plan-free description.
#[derive(Clone, Debug)]
struct Spec {
    windows: Vec<Window>,
    funcs: Vec<AggFunc>,
    filter: bool,
    grouped: bool,
    /// Index of the tuple before which it registers, and before which it ends.
    from: usize,
    to: usize,
}

fn call(func: AggFunc) -> AggCall {
    AggCall {
        func,
        arg: (func != AggFunc::CountStar).then_some(Expr::Column(2)),
        arg_type: DataType::Int4,
        distinct: false,
        result_type: DataType::Int8,
    }
}

/// `SELECT [k,] <aggs>, wtime(*), wrange(*), wslide(*) FROM s [windows] [WHERE v > 0]
/// [GROUP BY k]`
fn query(spec: &Spec) -> Query {
    let nkeys = usize::from(spec.grouped);
    let mut projection: Vec<Expr> = (0..nkeys + spec.funcs.len()).map(Expr::Column).collect();
    projection
        .extend([WindowMeta::Wtime, WindowMeta::Wrange, WindowMeta::Wslide].map(Expr::WindowMeta));
    let columns = (0..projection.len())
        .map(|i| Column::new(format!("c{i}"), DataType::Text))
        .collect();
    Query {
        source: Source::Stream {
            name: "s".into(),
            columns: vec![
                Column::new("t", DataType::Timestamp),
                Column::new("k", DataType::Int4),
                Column::new("v", DataType::Int4),
            ],
        },
        windows: vec![],
        filter: spec.filter.then(|| Expr::Binary {
            op: BinaryOp::Gt,
            left: Box::new(Expr::Column(2)),
            right: Box::new(Expr::Literal(Value::Int4(0))),
        }),
        aggregate: Some(Aggregate {
            group_by: if spec.grouped {
                vec![Expr::Column(1)]
            } else {
                vec![]
            },
            group_types: if spec.grouped {
                vec![DataType::Int4]
            } else {
                vec![]
            },
            calls: spec.funcs.iter().map(|f| call(*f)).collect(),
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

fn exec_of(spec: &Spec) -> QueryExec {
    QueryExec::new(
        query(spec),
        spec.windows.clone(),
        vec![None; spec.windows.len()],
        SharedPlan::unshared(&spec.windows),
        vec![],
        false,
        LIMITS,
        1_000_000,
    )
    .unwrap()
}

fn batch(tuples: &[(i64, i32, i32)]) -> Batch {
    let mut b = RowBatch::new(3);
    for &(t, k, v) in tuples {
        b.push([Value::Timestamp(t), Value::Int4(k), Value::Int4(v)], t);
    }
    Batch::Rows(b)
}

fn rows_of(events: Vec<Event>) -> Vec<String> {
    let mut rows: Vec<String> = events
        .into_iter()
        .flat_map(|e| match e {
            Event::Rows(r) => r,
            Event::Notice(_) => vec![],
        })
        .map(|r| format!("{r:?}"))
        .collect();
    // Within one slide event, groups may come in another order from another plan.
    rows.sort();
    rows
}

/// Each query alone, over the tuples of its registration.
fn alone(spec: &Spec, tuples: &[(i64, i32, i32)]) -> Vec<String> {
    let mut exec = exec_of(spec);
    let mut out = Vec::new();
    for t in &tuples[spec.from..spec.to] {
        exec.push_batch(&batch(std::slice::from_ref(t)), &mut out)
            .unwrap();
    }
    rows_of(out)
}

struct Plan {
    key: String,
    agg: SharedAgg,
    members: Vec<usize>,
}

/// Every query in shared plans, registering and leaving at its points.
/// Returns each query's rows, the plans made and the joins into running plans.
fn shared(
    specs: &[Spec],
    tuples: &[(i64, i32, i32)],
    batch_len: usize,
) -> (Vec<Vec<String>>, usize, usize) {
    let mut execs: Vec<Option<QueryExec>> = vec![None; specs.len()]
        .into_iter()
        .map(|_: Option<()>| None)
        .collect();
    let mut outs: Vec<Vec<Event>> = vec![Vec::new(); specs.len()];
    let mut plans: Vec<Plan> = Vec::new();
    let mut plans_made = 0;
    let mut running_joins = 0;
    let mut i = 0;
    while i <= tuples.len() {
        for (q, spec) in specs.iter().enumerate() {
            if spec.to == i && execs[q].is_some() {
                for p in &mut plans {
                    if let Some(pos) = p.members.iter().position(|&m| m == q) {
                        p.agg.leave(q as u64, 1.0);
                        p.members.remove(pos);
                    }
                }
                plans.retain(|p| !p.members.is_empty());
            }
            if spec.from == i {
                let mut exec = exec_of(spec);
                let key = share_key(&exec).expect("shareable");
                match plans
                    .iter_mut()
                    .find(|p| p.key == key && p.agg.join_refusal(&exec).is_none())
                {
                    Some(p) => {
                        running_joins += usize::from(p.agg.is_running());
                        p.agg.join(q as u64, &mut exec, 1.0).unwrap();
                        p.members.push(q);
                    }
                    None => {
                        let mut agg = SharedAgg::new(&exec, LIMITS).unwrap();
                        agg.join(q as u64, &mut exec, 1.0).unwrap();
                        plans.push(Plan {
                            key,
                            agg,
                            members: vec![q],
                        });
                        plans_made += 1;
                    }
                }
                execs[q] = Some(exec);
            }
        }
        if i == tuples.len() {
            break;
        }
        // A batch never crosses a registration or end point.
        let next_point = specs
            .iter()
            .flat_map(|s| [s.from, s.to])
            .filter(|&p| p > i)
            .min()
            .unwrap_or(tuples.len());
        let end = (i + batch_len).min(next_point).min(tuples.len());
        let b = batch(&tuples[i..end]);
        for p in &mut plans {
            let ids = p.agg.member_ids();
            assert_eq!(ids, p.members.iter().map(|&m| m as u64).collect::<Vec<_>>());
            let mut taken: Vec<(usize, QueryExec)> = p
                .members
                .iter()
                .map(|&m| (m, execs[m].take().unwrap()))
                .collect();
            let mut refs: Vec<&mut QueryExec> = taken.iter_mut().map(|(_, e)| e).collect();
            let mut pouts = vec![Vec::new(); refs.len()];
            p.agg.push_batch(&b, &mut refs, &mut pouts).unwrap();
            for ((m, e), o) in taken.into_iter().zip(pouts) {
                outs[m].extend(o);
                execs[m] = Some(e);
            }
        }
        i = end;
    }
    (
        outs.into_iter().map(rows_of).collect(),
        plans_made,
        running_joins,
    )
}

/// A random case: tuples, and queries whose later registrations use START ATs that begin
/// after the stream's time so far (they join) or before it (they start a plan of their own).
fn case(seed: u64) -> (Vec<Spec>, Vec<(i64, i32, i32)>) {
    let mut rng = Rng::new(seed);
    let n = rng.range(60, 160) as usize;
    let base = 1_000 * SEC;
    let mut t = base;
    let mut tuples = Vec::with_capacity(n);
    for _ in 0..n {
        t += rng.range(0, 3) * SEC
            + if rng.chance(0.2) {
                rng.range(0, 999_999)
            } else {
                0
            };
        let late = if rng.chance(0.1) {
            rng.range(1, 8) * SEC
        } else {
            0
        };
        tuples.push((t - late, rng.range(0, 2) as i32, rng.range(-3, 12) as i32));
    }
    let cfg = EvalConfig {
        s_max: 8,
        k_max: 4,
        ..EvalConfig::default()
    };
    let grouped = rng.chance(0.5);
    let filter = rng.chance(0.3);
    let tumbling = rng.chance(0.5);
    let nq = rng.range(2, 6) as usize;
    let funcs_all = if tumbling {
        vec![
            AggFunc::CountStar,
            AggFunc::Sum,
            AggFunc::Avg,
            AggFunc::Min,
            AggFunc::Max,
        ]
    } else {
        vec![AggFunc::Min, AggFunc::Max]
    };
    let mut specs = Vec::new();
    for q in 0..nq {
        let gen = if rng.chance(0.5) {
            Generator::RandomGen
        } else {
            Generator::ChainGen
        };
        let mut windows = generate(gen, rng.range(1, 3) as usize, tumbling, &mut rng, &cfg);
        // Mostly one filter and key for all, so that they share; sometimes another.
        let (filter, grouped) = if rng.chance(0.15) {
            (!filter, grouped)
        } else {
            (filter, grouped)
        };
        let from = if q == 0 || rng.chance(0.3) {
            0
        } else {
            rng.range(0, n as i64 - 1) as usize
        };
        let to = if rng.chance(0.5) {
            n
        } else {
            rng.range(from as i64 + 1, n as i64) as usize
        };
        // START AT: the first tuple for queries there from the start; later ones begin
        // after (or, a third of the time, before) the latest timestamp so far.
        let seen_max = tuples[..from].iter().map(|x| x.0).max().unwrap_or(base);
        for w in &mut windows {
            let start = if from == 0 {
                base
            } else if rng.chance(0.33) {
                seen_max - rng.range(0, 5) * SEC
            } else {
                (seen_max / SEC + rng.range(1, 6)) * SEC
            };
            *w = Window::new(w.range_us, w.slide_us, Start::At(start)).unwrap();
        }
        let mut funcs: Vec<AggFunc> = funcs_all
            .iter()
            .copied()
            .filter(|_| rng.chance(0.5))
            .collect();
        if funcs.is_empty() {
            funcs.push(funcs_all[rng.range(0, funcs_all.len() as i64 - 1) as usize]);
        }
        specs.push(Spec {
            windows,
            funcs,
            filter,
            grouped,
            from,
            to,
        });
    }
    (specs, tuples)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_query_gets_its_rows_alone(seed in any::<u64>(), batch_len in 1usize..8) {
        let (specs, tuples) = case(seed);
        let (got, _, _) = shared(&specs, &tuples, batch_len);
        for (q, spec) in specs.iter().enumerate() {
            let want = alone(spec, &tuples);
            prop_assert_eq!(&got[q], &want, "query {} of {:?}", q, spec);
        }
    }
}

/// The harness shares at all: queries registered together with one key get one plan.
#[test]
fn queries_with_one_key_share_one_plan() {
    let w = |s: i64| Window::new(s * SEC, s * SEC, Start::At(1_000 * SEC)).unwrap();
    let spec = |windows: Vec<Window>, funcs: Vec<AggFunc>| Spec {
        windows,
        funcs,
        filter: false,
        grouped: true,
        from: 0,
        to: 40,
    };
    let specs = vec![
        spec(vec![w(2), w(4)], vec![AggFunc::CountStar, AggFunc::Avg]),
        spec(vec![w(6)], vec![AggFunc::Sum]),
        spec(vec![w(4)], vec![AggFunc::Max]),
    ];
    let tuples: Vec<(i64, i32, i32)> = (0..40)
        .map(|i| (1_000 * SEC + i * SEC / 2, (i % 3) as i32, i as i32))
        .collect();
    let (got, plans, _) = shared(&specs, &tuples, 5);
    // count/avg/sum are partitioned-by, max covered-by: two keys, two plans.
    assert_eq!(plans, 2);
    for (q, spec) in specs.iter().enumerate() {
        assert_eq!(got[q], alone(spec, &tuples), "query {q}");
    }
    // Group 0 in [1000 s, 1006 s): v = 0 + 3 + 6 + 9.
    assert!(
        got[1]
            .iter()
            .any(|r| r.starts_with("[Int4(0), Int8(18), Timestamp(1006000000)")),
        "{:?}",
        got[1]
    );
}

/// The random cases do exercise joins into running plans (the property is not vacuous).
#[test]
fn random_cases_join_running_plans() {
    let mut joins = 0;
    for seed in 0..64 {
        let (specs, tuples) = case(seed);
        let (got, _, j) = shared(&specs, &tuples, 3);
        joins += j;
        for (q, spec) in specs.iter().enumerate() {
            assert_eq!(got[q], alone(spec, &tuples), "seed {seed} query {q}");
        }
    }
    assert!(joins >= 5, "only {joins} joins into running plans");
}
