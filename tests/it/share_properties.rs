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
    coalesce_bytes: 1 << 20,
};

const SEC: i64 = 1_000_000;

/// The event rate the plans are costed at: high enough that rolling up from at most 48
/// fine groups per instance is cheaper than folding each instance's tuples again.
const ETA: f64 = 1_000.0;

/// One random query: its plan-free description.
#[derive(Clone, Debug)]
struct Spec {
    windows: Vec<Window>,
    /// Per window: `Some(c)` for a default START AT (an epoch grid shown from instant `c`
    /// on, whose nodes queries registered at other times share), `None` for START AT.
    cutoffs: Vec<Option<i64>>,
    funcs: Vec<AggFunc>,
    filter: bool,
    /// GROUP BY columns (1: k, 2: v), in order.
    keys: Vec<usize>,
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

/// `SELECT <keys>, <aggs>, wtime(*), wrange(*), wslide(*) FROM s [windows] [WHERE v > 0]
/// [GROUP BY <keys>]`
fn query(spec: &Spec) -> Query {
    let nkeys = spec.keys.len();
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
            group_by: spec.keys.iter().map(|&c| Expr::Column(c)).collect(),
            group_types: vec![DataType::Int4; nkeys],
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
        spec.cutoffs.clone(),
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
        .flat_map(Event::into_rows)
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

/// How the queries of a case were placed.
#[derive(Default)]
struct Placed {
    plans_made: usize,
    /// Joins into a plan that had seen tuples.
    running_joins: usize,
    /// Joins as a roll-up member (GROUP BY keys a strict subset of the plan's).
    rollups: usize,
    /// Joins into a running plan that had to gain an aggregate state.
    states_added: usize,
    /// Joins that put a count/sum/avg query and a min/max-only one in one plan.
    mixed_classes: usize,
}

/// True when the query's aggregates are all min/max ("covered by" alone).
fn min_max_only(spec: &Spec) -> bool {
    spec.funcs
        .iter()
        .all(|f| matches!(f, AggFunc::Min | AggFunc::Max))
}

/// Every query in shared plans, registering and leaving at its points.
/// Returns each query's rows and how they were placed.
fn shared(
    specs: &[Spec],
    tuples: &[(i64, i32, i32)],
    batch_len: usize,
) -> (Vec<Vec<String>>, Placed) {
    let mut execs: Vec<Option<QueryExec>> = vec![None; specs.len()]
        .into_iter()
        .map(|_: Option<()>| None)
        .collect();
    let mut outs: Vec<Vec<Event>> = vec![Vec::new(); specs.len()];
    let mut plans: Vec<Plan> = Vec::new();
    let mut placed = Placed::default();
    let mut i = 0;
    while i <= tuples.len() {
        for (q, spec) in specs.iter().enumerate() {
            if spec.to == i && execs[q].is_some() {
                for p in &mut plans {
                    if let Some(pos) = p.members.iter().position(|&m| m == q) {
                        p.agg.leave(q as u64, ETA);
                        p.members.remove(pos);
                    }
                }
                plans.retain(|p| !p.members.is_empty());
            }
            if spec.from == i {
                let mut exec = exec_of(spec);
                let key = share_key(&exec).expect("shareable");
                // As the engine: plans with the query's own keys first, then roll-ups.
                let fits = |p: &Plan, rollup: bool| {
                    p.key == key
                        && p.agg.is_rollup_for(&exec) == rollup
                        && p.agg.join_refusal(&exec, ETA).is_none()
                };
                let at = (plans.iter().position(|p| fits(p, false)))
                    .or_else(|| plans.iter().position(|p| fits(p, true)));
                match at.map(|i| &mut plans[i]) {
                    Some(p) => {
                        let states = p.agg.aggregate_states();
                        placed.running_joins += usize::from(p.agg.is_running());
                        p.agg.join(q as u64, &mut exec, ETA).unwrap();
                        assert_eq!(p.agg.idle_factor_nodes(), 0, "a factor window feeds a node");
                        placed.states_added +=
                            usize::from(p.agg.is_running() && p.agg.aggregate_states() > states);
                        placed.rollups += usize::from(p.agg.rollup_members().contains(&(q as u64)));
                        placed.mixed_classes += usize::from(
                            p.members
                                .iter()
                                .any(|&m| min_max_only(&specs[m]) != min_max_only(spec)),
                        );
                        p.members.push(q);
                    }
                    None => {
                        let mut agg = SharedAgg::new(&exec, LIMITS).unwrap();
                        agg.join(q as u64, &mut exec, ETA).unwrap();
                        plans.push(Plan {
                            key,
                            agg,
                            members: vec![q],
                        });
                        placed.plans_made += 1;
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
    (outs.into_iter().map(rows_of).collect(), placed)
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
    // The keys most queries use; others use a subset (roll-up candidates), or other keys.
    let key_sets: [&[usize]; 5] = [&[], &[1], &[2], &[1, 2], &[2, 1]];
    let keys = if rng.chance(0.5) {
        key_sets[rng.range(3, 4) as usize].to_vec()
    } else {
        key_sets[rng.range(0, 2) as usize].to_vec()
    };
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
    let mut specs: Vec<Spec> = Vec::new();
    for q in 0..nq {
        let gen = if rng.chance(0.5) {
            Generator::RandomGen
        } else {
            Generator::ChainGen
        };
        let mut windows = generate(gen, rng.range(1, 3) as usize, tumbling, &mut rng, &cfg);
        // Mostly one filter and key for all, so that they share; sometimes another.
        let filter = if rng.chance(0.15) { !filter } else { filter };
        let keys = if rng.chance(0.15) {
            key_sets[rng.range(0, 4) as usize].to_vec()
        } else if keys.len() == 2 && rng.chance(0.6) {
            vec![keys[rng.range(0, 1) as usize]]
        } else {
            keys.clone()
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
        // A roll-up pays when its windows are plan nodes already: half of the subset-key
        // queries read an earlier query's window sizes with default START ATs (the
        // dashboard case), the other half their own.
        let copies = q > 0 && keys.len() < key_sets[3].len() && rng.chance(0.5);
        if copies {
            windows = specs[rng.range(0, q as i64 - 1) as usize].windows.clone();
        }
        let default_start = copies || rng.chance(0.4);
        let mut cutoffs = Vec::new();
        for w in &mut windows {
            let start = if from == 0 {
                base
            } else if rng.chance(0.33) {
                seen_max - rng.range(0, 5) * SEC
            } else {
                (seen_max / SEC + rng.range(1, 6)) * SEC
            };
            if default_start {
                *w = Window::new(w.range_us, w.slide_us, Start::Epoch).unwrap();
                cutoffs.push(Some(start));
            } else {
                *w = Window::new(w.range_us, w.slide_us, Start::At(start)).unwrap();
                cutoffs.push(None);
            }
        }
        // Hopping cases mostly hold min/max-only queries ("covered by"); some count/sum
        // ones try to join their running plans too.
        let funcs_all = if !tumbling && rng.chance(0.25) {
            vec![AggFunc::Min, AggFunc::Max, AggFunc::CountStar, AggFunc::Sum]
        } else {
            funcs_all.clone()
        };
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
            cutoffs,
            keys,
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
        let (got, _) = shared(&specs, &tuples, batch_len);
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
        cutoffs: vec![None; windows.len()],
        windows,
        funcs,
        filter: false,
        keys: vec![1],
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
    let (got, placed) = shared(&specs, &tuples, 5);
    // count/avg/sum are partitioned-by, max covered-by alone; max runs exactly under
    // partitioned-by too, so all three share one plan.
    assert_eq!(placed.plans_made, 1);
    assert_eq!(placed.mixed_classes, 1);
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

/// The random cases do exercise joins into running plans, roll-ups, aggregate states added
/// to running plans and plans mixing min/max-only queries with count/sum ones (the property
/// is not vacuous).
#[test]
fn random_cases_join_running_plans() {
    let mut total = Placed::default();
    for seed in 0..128 {
        let (specs, tuples) = case(seed);
        let (got, placed) = shared(&specs, &tuples, 3);
        total.running_joins += placed.running_joins;
        total.rollups += placed.rollups;
        total.states_added += placed.states_added;
        total.mixed_classes += placed.mixed_classes;
        for (q, spec) in specs.iter().enumerate() {
            assert_eq!(got[q], alone(spec, &tuples), "seed {seed} query {q}");
        }
    }
    eprintln!(
        "running joins {}, roll-ups {}, states added {}, mixed classes {}",
        total.running_joins, total.rollups, total.states_added, total.mixed_classes
    );
    assert!(
        total.running_joins >= 20,
        "only {} joins into running plans",
        total.running_joins
    );
    assert!(total.rollups >= 10, "only {} roll-up joins", total.rollups);
    assert!(
        total.states_added >= 20,
        "only {} states added",
        total.states_added
    );
    assert!(
        total.mixed_classes >= 20,
        "only {} mixed-class joins",
        total.mixed_classes
    );
}

/// A count query joins a running min/max-only plan only where every edge the plan runs
/// partitions its child: a hopping node computed "covered by" its hopping parent merges
/// overlapping instances, which would count tuples twice. Regression guard for the class
/// rule of `SharedAgg::join_refusal` (item 4 of issue 9).
#[test]
fn count_joins_a_min_max_plan_only_over_partitioning_edges() {
    let base = 1_000 * SEC;
    let epoch = |r: i64, s: i64| Window::new(r * SEC, s * SEC, Start::Epoch).unwrap();
    let tuples: Vec<(i64, i32, i32)> = (0..80)
        .map(|i| (base + i * SEC / 2, (i % 2) as i32, i as i32))
        .collect();
    let spec = |windows: Vec<Window>, func: AggFunc, from: usize, cutoff: i64| Spec {
        cutoffs: vec![Some(cutoff); windows.len()],
        windows,
        funcs: vec![func],
        filter: false,
        keys: vec![1],
        from,
        to: tuples.len(),
    };
    let later = base + 20 * SEC;
    for (min_windows, count_window, plans_made) in [
        // 6 s / 2 s is covered by 4 s / 2 s, not partitioned: the count query runs alone.
        (vec![epoch(4, 2), epoch(6, 2)], epoch(6, 2), 2),
        // Tumbling windows partition each other: it joins and reads the running node.
        (vec![epoch(2, 2), epoch(4, 4)], epoch(4, 4), 1),
    ] {
        let specs = vec![
            spec(min_windows, AggFunc::Min, 0, base),
            spec(vec![count_window], AggFunc::CountStar, 30, later),
        ];
        let (got, placed) = shared(&specs, &tuples, 4);
        assert_eq!(placed.plans_made, plans_made, "{specs:?}");
        assert_eq!(placed.mixed_classes, 2 - plans_made);
        for (q, spec) in specs.iter().enumerate() {
            assert_eq!(got[q], alone(spec, &tuples), "query {q}");
        }
        // Two tuples a second, alternating keys: one per key per second.
        let want = format!(
            "[Int4(0), Int8({}), Timestamp(",
            count_window.range_us / SEC
        );
        assert!(got[1]
            .iter()
            .all(|r| r.starts_with(&want) || r.starts_with("[Int4(1)")));
        assert!(!got[1].is_empty());
    }
}
