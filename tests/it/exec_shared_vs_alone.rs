//! The shared WCG plan gives exactly the rows of every window computed on its own.
//!
//! Protects the heart of the engine: for seeded
//! random window sets (tumbling, hopping, jumping, offset and epoch starts), random streams
//! (gaps, duplicate timestamps, ties on instance boundaries, late tuples) and each aggregate
//! class (partitioned-by, covered-by, holistic), the executor running the min-cost plan must
//! emit, slide event by slide event, the same rows as one executor per window with no
//! sharing, and both must equal a naive evaluator that recomputes every instance from the
//! raw tuples.

use proptest::prelude::*;
use tcq::exec::{Event, ExecLimits, QueryExec, RowBatch};
use tcq::expr::WindowMetaValues;
use tcq::sql::{AggCall, AggFunc, Aggregate, Expr, Query, Source, WindowMeta};
use tcq::types::{Column, DataType, Value};
use tcq::wcg::{self, SharedPlan, Slider};
use tcq::window::{Start, Window};

const LIMITS: ExecLimits = ExecLimits {
    groups_max: 1_000_000,
    open_instances_max: 100_000,
    empty_slide_events_max: u64::MAX,
    distinct_values_max: usize::MAX,
    coalesce_bytes: 1 << 20,
};

fn call(func: AggFunc, arg: Option<usize>, result_type: DataType) -> AggCall {
    AggCall {
        func,
        arg: arg.map(Expr::Column),
        arg_type: DataType::Int4,
        distinct: false,
        result_type,
    }
}

/// `SELECT key, <aggs>, wstart(*), wtime(*), wrange(*), wslide(*) FROM s [windows] GROUP BY key`
fn query(calls: Vec<AggCall>, grouped: bool) -> Query {
    let nkeys = usize::from(grouped);
    let mut projection: Vec<Expr> = (0..nkeys + calls.len()).map(Expr::Column).collect();
    projection.extend(
        [
            WindowMeta::Wstart,
            WindowMeta::Wtime,
            WindowMeta::Wrange,
            WindowMeta::Wslide,
        ]
        .map(Expr::WindowMeta),
    );
    let columns = projection
        .iter()
        .enumerate()
        .map(|(i, _)| Column::new(format!("c{i}"), DataType::Text))
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
        filter: None,
        aggregate: Some(Aggregate {
            group_by: if grouped {
                vec![Expr::Column(1)]
            } else {
                vec![]
            },
            group_types: if grouped {
                vec![DataType::Int4]
            } else {
                vec![]
            },
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

/// The aggregates of a property case's `class` and their calls over column 2: 0 is count
/// and sum (invertible), 1 min and max, any other count and `other`.
fn agg_class(class: usize, other: AggFunc) -> (Vec<AggFunc>, Vec<AggCall>) {
    let funcs = match class {
        0 => vec![AggFunc::CountStar, AggFunc::Sum],
        1 => vec![AggFunc::Min, AggFunc::Max],
        _ => vec![AggFunc::CountStar, other],
    };
    let calls = funcs
        .iter()
        .map(|f| match f {
            AggFunc::CountStar => call(*f, None, DataType::Int8),
            AggFunc::Sum => call(*f, Some(2), DataType::Int8),
            _ => call(*f, Some(2), DataType::Int4),
        })
        .collect();
    (funcs, calls)
}

fn run(q: &Query, windows: &[Window], plan: SharedPlan, batches: &[RowBatch]) -> Vec<Vec<Value>> {
    run_cut(q, windows, &vec![None; windows.len()], plan, batches)
}

/// Run with cut-offs: epoch grids shown from an instant on, as a default START AT is run.
fn run_cut(
    q: &Query,
    windows: &[Window],
    cutoffs: &[Option<i64>],
    plan: SharedPlan,
    batches: &[RowBatch],
) -> Vec<Vec<Value>> {
    run_exec(q, windows, cutoffs, plan, batches, 0)
}

/// Run under `slack` (microseconds of lateness accepted), every grid shown from its start;
/// the rows in [`canonical`] order.
fn run_slack(
    q: &Query,
    windows: &[Window],
    plan: SharedPlan,
    batches: &[RowBatch],
    slack: i64,
) -> Vec<String> {
    let cutoffs = vec![None; windows.len()];
    canonical(run_exec(q, windows, &cutoffs, plan, batches, slack))
}

fn run_exec(
    q: &Query,
    windows: &[Window],
    cutoffs: &[Option<i64>],
    plan: SharedPlan,
    batches: &[RowBatch],
    slack: i64,
) -> Vec<Vec<Value>> {
    let mut exec = QueryExec::new(
        q.clone(),
        windows.to_vec(),
        cutoffs.to_vec(),
        plan,
        vec![],
        false,
        LIMITS,
        1_000_000,
    )
    .unwrap();
    exec.set_slack(slack);
    let mut out = Vec::new();
    for b in batches {
        exec.push(b, &mut out).unwrap();
    }
    out.into_iter().flat_map(Event::into_rows).collect()
}

/// Rows sorted within each slide event instant so that the comparison does not depend on
/// the order windows close at one instant.
fn canonical(mut rows: Vec<Vec<Value>>) -> Vec<String> {
    let mut s: Vec<String> = rows.drain(..).map(|r| format!("{r:?}")).collect();
    s.sort();
    s
}

/// The naive reference: for each window alone, walk current time tuple by tuple; when an
/// instance's end is passed, aggregate over the tuples that had arrived by then and lie in it.
fn naive(
    windows: &[Window],
    tuples: &[(i64, i32, i32)],
    grouped: bool,
    funcs: &[AggFunc],
) -> Vec<String> {
    let mut rows = Vec::new();
    for w in windows {
        let mut now: Option<i64> = None;
        let mut next_m: Option<i64> = None;
        let mut seen: Vec<(i64, i32, i32)> = Vec::new();
        for &(t, k, v) in tuples {
            if now.is_none_or(|n| t > n) {
                if next_m.is_none() {
                    next_m = Some(if w.is_bounded() {
                        0
                    } else {
                        w.next_closing_index(t)
                    });
                }
                now = Some(t);
                while w.upper_us(next_m.unwrap()) <= t {
                    let m = next_m.unwrap();
                    emit(w, m, &seen, grouped, funcs, &mut rows);
                    next_m = Some(m + 1);
                }
            }
            seen.push((t, k, v));
        }
    }
    rows.sort();
    rows
}

fn emit(
    w: &Window,
    m: i64,
    seen: &[(i64, i32, i32)],
    grouped: bool,
    funcs: &[AggFunc],
    rows: &mut Vec<String>,
) {
    let (lo, hi) = (w.lower_us(m), w.upper_us(m));
    let inside: Vec<&(i64, i32, i32)> = seen
        .iter()
        .filter(|(t, _, _)| *t >= lo && *t < hi)
        .collect();
    let mut keys: Vec<i32> = Vec::new();
    for (_, k, _) in &inside {
        if !keys.contains(k) {
            keys.push(*k);
        }
    }
    let groups: Vec<Option<i32>> = if grouped {
        keys.into_iter().map(Some).collect()
    } else {
        vec![None]
    };
    for g in groups {
        let vals: Vec<i64> = inside
            .iter()
            .filter(|(_, k, _)| g.is_none_or(|g| g == *k))
            .map(|(_, _, v)| *v as i64)
            .collect();
        let mut row: Vec<Value> = g.map(Value::Int4).into_iter().collect();
        for f in funcs {
            row.push(match f {
                AggFunc::CountStar => Value::Int8(vals.len() as i64),
                AggFunc::Sum if vals.is_empty() => Value::Null,
                AggFunc::Sum => Value::Int8(vals.iter().sum()),
                AggFunc::Min => vals
                    .iter()
                    .min()
                    .map_or(Value::Null, |v| Value::Int4(*v as i32)),
                AggFunc::Max => vals
                    .iter()
                    .max()
                    .map_or(Value::Null, |v| Value::Int4(*v as i32)),
                _ => unreachable!("the reference covers count, sum, min, max"),
            });
        }
        let meta = WindowMetaValues {
            lower_us: lo,
            upper_us: hi,
            range_us: w.range_us,
            slide_us: w.slide_us,
            tz: false,
        };
        row.extend([
            Value::Timestamp(meta.lower_us),
            Value::Timestamp(meta.upper_us),
            Value::Interval(tcq::types::Interval {
                months: 0,
                days: 0,
                micros: meta.range_us,
            }),
            Value::Interval(tcq::types::Interval {
                months: 0,
                days: 0,
                micros: meta.slide_us,
            }),
        ]);
        rows.push(format!("{row:?}"));
    }
}

fn window_strategy() -> impl Strategy<Value = Window> {
    // Ranges and slides on a grid of 5 so that windows relate; offsets too.
    (
        1i64..=8,
        1i64..=8,
        prop_oneof![Just(None), (0i64..=6).prop_map(Some)],
    )
        .prop_map(|(r, s, o)| {
            let start = match o {
                None => Start::Epoch,
                Some(o) => Start::At(o * 5),
            };
            Window::new(r * 5, s * 5, start).unwrap()
        })
}

fn stream_strategy() -> impl Strategy<Value = Vec<(i64, i32, i32)>> {
    // Mostly increasing times with gaps, duplicates, boundary ties and some late tuples.
    prop::collection::vec((0i64..=12, -3i64..=1, 0i32..3, -5i32..20), 1..80).prop_map(|steps| {
        let mut t = 0i64;
        steps
            .into_iter()
            .map(|(gap, late, k, v)| {
                t += gap;
                let ts = if late < 0 { (t + late * 7).max(0) } else { t };
                (ts, k, v)
            })
            .collect()
    })
}

fn batches_of(tuples: &[(i64, i32, i32)], split: usize) -> Vec<RowBatch> {
    tuples
        .chunks(split.max(1))
        .map(|c| {
            let mut b = RowBatch::new(3);
            for &(t, k, v) in c {
                b.push([Value::Timestamp(t), Value::Int4(k), Value::Int4(v)], t);
            }
            b
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn shared_plan_equals_each_window_alone(
        windows in prop::collection::vec(window_strategy(), 1..5),
        tuples in stream_strategy(),
        class in 0usize..3,
        grouped in any::<bool>(),
        split in 1usize..20,
    ) {
        let (funcs, calls) = agg_class(class, AggFunc::Min);
        let q = query(calls, grouped);
        let sharing = tcq::agg::sharing_of(&funcs.iter().map(|f| tcq::agg::AggSpec::new(*f, DataType::Int4, false)).collect::<Vec<_>>());
        let batches = batches_of(&tuples, split);
        let shared = canonical(run(&q, &windows, wcg::plan(&windows, sharing, 1e6), &batches));
        // Every sliding aggregator the aggregates allow, on every node with a parent.
        for slider in [Slider::TwoStacks, Slider::SubtractOnEvict] {
            if let Some(plan) = with_slider(wcg::plan(&windows, sharing, 1e6), slider, &funcs) {
                let sliding = canonical(run(&q, &windows, plan, &batches));
                prop_assert_eq!(&sliding, &shared, "{} plan vs panes", slider);
            }
        }
        let alone: Vec<String> = {
            let mut all = Vec::new();
            for w in &windows {
                all.extend(run(&q, std::slice::from_ref(w), SharedPlan::unshared(std::slice::from_ref(w)), &batches));
            }
            canonical(all)
        };
        prop_assert_eq!(&shared, &alone, "shared plan vs each window alone");
        prop_assert_eq!(&alone, &naive(&windows, &tuples, grouped, &funcs), "engine vs naive reference");

        // Default START ATs run as epoch grids with a cut-off: same rows as the bounded
        // window starting at the cut-off, and shared with the other epoch grids.
        let cut: Vec<(Window, Option<i64>)> = windows.iter().map(|w| match w.start {
            Start::At(o) => {
                let c = o.div_euclid(w.slide_us) * w.slide_us;
                (Window::new(w.range_us, w.slide_us, Start::Epoch).unwrap(), Some(c))
            }
            Start::Epoch => (*w, None),
        }).collect();
        let (cw, cc): (Vec<Window>, Vec<Option<i64>>) = cut.iter().copied().unzip();
        let bounded: Vec<Window> = cut.iter().map(|(w, c)| match c {
            Some(c) => Window::new(w.range_us, w.slide_us, Start::At(*c)).unwrap(),
            None => *w,
        }).collect();
        let with_cutoffs = canonical(run_cut(&q, &cw, &cc, wcg::plan(&cw, sharing, 1e6), &batches));
        let bounded_rows = naive(&bounded, &tuples, grouped, &funcs);
        prop_assert_eq!(&with_cutoffs, &bounded_rows, "cut-off epoch grids vs bounded windows");
        if let Some(plan) = with_slider(wcg::plan(&cw, sharing, 1e6), Slider::TwoStacks, &funcs) {
            let sliding = canonical(run_cut(&q, &cw, &cc, plan, &batches));
            prop_assert_eq!(&sliding, &bounded_rows, "two-stacks with cut-offs");
        }
    }
}

/// The naive reference under SLACK: current time is the highest timestamp consumed less
/// `slack_us`; an instance is emitted once current time reaches its end, with every tuple
/// that had arrived by then (late ones included).
fn naive_slack(
    windows: &[Window],
    tuples: &[(i64, i32, i32)],
    grouped: bool,
    funcs: &[AggFunc],
    slack_us: i64,
) -> Vec<String> {
    let mut rows = Vec::new();
    for w in windows {
        let (mut now, mut next_m): (Option<i64>, Option<i64>) = (None, None);
        let mut seen: Vec<(i64, i32, i32)> = Vec::new();
        for &(t, k, v) in tuples {
            let time = t - slack_us;
            if now.is_none_or(|n| time > n) {
                let m0 = *next_m.get_or_insert(if w.is_bounded() {
                    0
                } else {
                    w.next_closing_index(time)
                });
                now = Some(time);
                let mut m = m0;
                while w.upper_us(m) <= time {
                    emit(w, m, &seen, grouped, funcs, &mut rows);
                    m += 1;
                }
                next_m = Some(m);
            }
            seen.push((t, k, v));
        }
    }
    rows.sort();
    rows
}

/// A window with RANGE a random multiple (1 to 5,000) of its SLIDE.
fn long_window_strategy() -> impl Strategy<Value = Window> {
    let ratio = prop_oneof![1i64..=8, 8i64..=200, 200i64..=5_000];
    (
        1i64..=4,
        ratio,
        prop_oneof![Just(None), (0i64..=6).prop_map(Some)],
    )
        .prop_map(|(s, k, o)| {
            let start = o.map_or(Start::Epoch, Start::At);
            Window::new(k * s, s, start).unwrap()
        })
}

/// Tuples mostly in order and close together, with empty stretches (long gaps), late
/// tuples within and beyond a SLACK of up to 12, and keys drawn from a range that moves
/// with time, so groups come and go.
fn moving_stream_strategy() -> impl Strategy<Value = Vec<(i64, i32, i32)>> {
    prop::collection::vec(
        (
            prop_oneof![8 => 0i64..=3, 1 => 50i64..=4_000],
            prop_oneof![6 => Just(0i64), 1 => 1i64..=20],
            0i32..4,
            -9i32..30,
        ),
        1..120,
    )
    .prop_map(|steps| {
        let mut t = 0i64;
        steps
            .into_iter()
            .enumerate()
            .map(|(i, (gap, back, k, v))| {
                t += gap;
                ((t - back).max(0), (i / 15) as i32 + k, v)
            })
            .collect()
    })
}

/// `plan` with `slider` on every node that has a parent and that `slider` can run for
/// `funcs` (subtract-on-evict: count and sum over partitioning edges); `None` when no node
/// changed.
fn with_slider(mut plan: SharedPlan, slider: Slider, funcs: &[AggFunc]) -> Option<SharedPlan> {
    let allowed = match slider {
        Slider::SubtractOnEvict => funcs
            .iter()
            .all(|f| matches!(f, AggFunc::CountStar | AggFunc::Count | AggFunc::Sum)),
        _ => true,
    };
    if !allowed {
        return None;
    }
    let windows: Vec<Window> = plan.nodes.iter().map(|n| n.window).collect();
    let mut changed = false;
    for n in &mut plan.nodes {
        let Some(p) = n.parent else { continue };
        if slider == Slider::SubtractOnEvict && !n.window.is_partitioned_by(&windows[p]) {
            continue;
        }
        n.slider = slider;
        changed = true;
    }
    changed.then_some(plan)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    /// Long windows that slide often, along the plans the cost model picks with sliding
    /// aggregators allowed and with each aggregator forced, under SLACK, against each
    /// window alone and the naive reference.
    #[test]
    fn sliding_aggregators_equal_each_window_alone(
        windows in prop::collection::vec(long_window_strategy(), 1..3),
        tuples in moving_stream_strategy(),
        class in 0usize..3,
        grouped in any::<bool>(),
        split in 1usize..40,
        slack in prop_oneof![Just(0i64), 1i64..=12],
        eta in prop_oneof![Just(0.05f64), Just(1e5), Just(1e6)],
    ) {
        let (funcs, calls) = agg_class(class, AggFunc::Max);
        let q = query(calls, grouped);
        let batches = batches_of(&tuples, split);
        let want = naive_slack(&windows, &tuples, grouped, &funcs, slack);
        let rows_of = |plan: SharedPlan| run_slack(&q, &windows, plan, &batches, slack);
        let specs: Vec<tcq::agg::AggSpec> = funcs.iter()
            .map(|f| tcq::agg::AggSpec::new(*f, DataType::Int4, false)).collect();
        let sharing = tcq::agg::sharing_of(&specs);
        let workload = wcg::Workload {
            eta_per_sec: eta,
            groups: if grouped { wcg::Groups::Estimated(4.0) } else { wcg::Groups::One },
            sliders: tcq::agg::sliders_of(&specs),
        };
        let modelled = wcg::plan_for(&windows, sharing, &workload);
        prop_assert_eq!(&rows_of(modelled.clone()), &want, "model's plan {:?}", modelled);
        let paper = wcg::plan(&windows, sharing, 1e6);
        for slider in [Slider::TwoStacks, Slider::SubtractOnEvict] {
            if let Some(plan) = with_slider(paper.clone(), slider, &funcs) {
                prop_assert_eq!(&rows_of(plan.clone()), &want, "{} on {:?}", slider, plan);
            }
        }
        if windows.iter().all(|w| w.range_us / w.slide_us <= 100) {
            prop_assert_eq!(&rows_of(SharedPlan::unshared(&windows)), &want, "alone");
        }
    }
}

/// Windows of a few slides (2, 3 and 5, so the plan's pane is 1) with RANGE 1 to 5,000
/// slides, all from one START AT (or the epoch), duplicates allowed.
fn slide_family_strategy() -> impl Strategy<Value = Vec<Window>> {
    let ratio = prop_oneof![1i64..=8, 8i64..=200, 200i64..=5_000];
    (
        prop::collection::vec((prop::sample::select(vec![2i64, 3, 5]), ratio), 2..6),
        prop_oneof![Just(None), (0i64..=6).prop_map(Some)],
    )
        .prop_map(|(ws, o)| {
            let start = o.map_or(Start::Epoch, Start::At);
            ws.into_iter()
                .map(|(s, k)| Window::new(k * s, s, start).unwrap())
                .collect()
        })
}

/// The plan of slide panes by hand: the one-unit pane folds raw tuples, one tumbling factor
/// window per distinct slide merges its panes, and every window reads its slide's pane with
/// `slider` (identical windows share one node).
fn slide_pane_plan(windows: &[Window], slider: Slider) -> SharedPlan {
    let start = windows[0].start;
    let tumbling = |s: i64| Window::new(s, s, start).unwrap();
    let mut nodes = vec![wcg::PlanNode {
        window: tumbling(1),
        user_windows: vec![],
        parent: None,
        slider: Slider::Panes,
    }];
    let mut slides: Vec<i64> = windows.iter().map(|w| w.slide_us).collect();
    slides.sort_unstable();
    slides.dedup();
    for s in slides {
        let pane = nodes.len();
        nodes.push(wcg::PlanNode {
            window: tumbling(s),
            user_windows: vec![],
            parent: Some(0),
            slider: Slider::Panes,
        });
        for (i, w) in windows.iter().enumerate().filter(|(_, w)| w.slide_us == s) {
            match nodes.iter_mut().skip(pane + 1).find(|n| n.window == *w) {
                Some(n) => n.user_windows.push(i),
                None => nodes.push(wcg::PlanNode {
                    window: *w,
                    user_windows: vec![i],
                    parent: Some(pane),
                    slider,
                }),
            }
        }
    }
    SharedPlan { nodes }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Slide panes: windows of a few slides computed through one tumbling factor window per
    /// slide (by hand, with each aggregator, and as the cost model plans them), under SLACK,
    /// with empty stretches, late tuples and groups that come and go, equal the naive
    /// reference.
    #[test]
    fn slide_panes_equal_each_window_alone(
        windows in slide_family_strategy(),
        tuples in moving_stream_strategy(),
        class in 0usize..3,
        grouped in any::<bool>(),
        split in 1usize..40,
        slack in prop_oneof![Just(0i64), 1i64..=12],
        eta in prop_oneof![Just(1e6f64), Just(1e9)],
    ) {
        let (funcs, calls) = agg_class(class, AggFunc::Max);
        let q = query(calls, grouped);
        let batches = batches_of(&tuples, split);
        let want = naive_slack(&windows, &tuples, grouped, &funcs, slack);
        let rows_of = |plan: SharedPlan| run_slack(&q, &windows, plan, &batches, slack);
        for slider in [Slider::Panes, Slider::TwoStacks, Slider::SubtractOnEvict] {
            if slider == Slider::SubtractOnEvict && class != 0 {
                continue;
            }
            let plan = slide_pane_plan(&windows, slider);
            prop_assert_eq!(&rows_of(plan.clone()), &want, "{} on {:?}", slider, plan);
        }
        let specs: Vec<tcq::agg::AggSpec> = funcs.iter()
            .map(|f| tcq::agg::AggSpec::new(*f, DataType::Int4, false)).collect();
        let workload = wcg::Workload {
            eta_per_sec: eta,
            groups: if grouped { wcg::Groups::Estimated(4.0) } else { wcg::Groups::One },
            sliders: tcq::agg::sliders_of(&specs),
        };
        let modelled = wcg::plan_for(&windows, tcq::agg::sharing_of(&specs), &workload);
        prop_assert_eq!(&rows_of(modelled.clone()), &want, "model's plan {:?}", modelled);
    }
}

/// Regression: a late tuple whose factor-window instance has closed but whose user-window
/// instance has not must still be counted (it goes straight to the child).
#[test]
fn late_tuple_reaches_child_after_parent_instance_closed() {
    let w = |r| Window::new(r, r, Start::Epoch).unwrap();
    let windows = [w(20), w(30)];
    let q = query(vec![call(AggFunc::CountStar, None, DataType::Int8)], false);
    let plan = wcg::plan(&windows, tcq::wcg::Sharing::PartitionedBy, 1e6);
    assert!(
        plan.nodes.iter().any(|n| n.parent.is_some()),
        "the plan shares: {plan:?}"
    );
    // t = 0 starts the grid; t = 12 closes the factor instance [0, 10); t = 5 is late for it
    // but [0, 20) and [0, 30) are still open; t = 40 closes both.
    let tuples = [(0, 0, 1), (12, 0, 1), (5, 0, 1), (40, 0, 1)];
    let rows = canonical(run(&q, &windows, plan, &batches_of(&tuples, 1)));
    assert_eq!(rows, naive(&windows, &tuples, false, &[AggFunc::CountStar]));
    assert!(rows.iter().any(|r| r.starts_with("[Int8(3)")), "{rows:?}");
}

/// Keys that stop appearing do not pile up: the group dictionary is compacted, and results
/// stay exact across compactions.
#[test]
fn group_ids_of_departed_keys_are_dropped() {
    let w = Window::new(1_000, 1_000, Start::At(0)).unwrap();
    let q = query(
        vec![
            call(AggFunc::CountStar, None, DataType::Int8),
            call(AggFunc::Sum, Some(2), DataType::Int8),
        ],
        true,
    );
    let mut exec = QueryExec::new(
        q,
        vec![w],
        vec![None],
        SharedPlan::unshared(&[w]),
        vec![],
        false,
        LIMITS,
        0,
    )
    .unwrap();
    let (mut out, mut rows, mut max_ids) = (Vec::new(), 0usize, 0usize);
    for chunk in 0..300 {
        let mut b = RowBatch::new(3);
        for i in 0..1_000i64 {
            let t = chunk * 1_000 + i;
            // Every key is new: 300,000 distinct keys in all, 1,000 per instance.
            b.push(
                [Value::Timestamp(t), Value::Int4(t as i32), Value::Int4(2)],
                t,
            );
        }
        exec.push(&b, &mut out).unwrap();
        max_ids = max_ids.max(exec.group_ids());
        for e in out.drain(..) {
            let r = e.into_rows();
            for row in &r {
                assert_eq!(&row[1..3], &[Value::Int8(1), Value::Int8(2)], "{row:?}");
            }
            rows += r.len();
        }
    }
    assert_eq!(rows, 299_000);
    assert!(max_ids < 140_000, "dictionary grew to {max_ids} ids");
    assert!(max_ids > 60_000, "compaction ran too early: {max_ids}");
}

/// A long window sliding by short steps over sparse tuples, as its plan runs it (a pane
/// factor window under a sliding aggregator), and each aggregator on it: `[0]` the pane,
/// `[1]` the window.
fn pane_plan(w: Window, slider: Slider) -> SharedPlan {
    let pane = Window::new(w.slide_us, w.slide_us, w.start).unwrap();
    SharedPlan {
        nodes: vec![
            wcg::PlanNode {
                window: pane,
                user_windows: vec![],
                parent: None,
                slider: Slider::Panes,
            },
            wcg::PlanNode {
                window: w,
                user_windows: vec![0],
                parent: Some(0),
                slider,
            },
        ],
    }
}

/// Sparse tuples: mostly far apart (many slide events between two), some close, some late
/// within a SLACK of up to 12.
fn sparse_stream_strategy() -> impl Strategy<Value = Vec<(i64, i32, i32)>> {
    prop::collection::vec(
        (
            prop_oneof![3 => 0i64..=2, 5 => 10i64..=300, 1 => 1_000i64..=5_000],
            prop_oneof![6 => Just(0i64), 1 => 1i64..=12],
            0i32..3,
            -9i32..30,
        ),
        1..60,
    )
    .prop_map(|steps| {
        let mut t = 0i64;
        steps
            .into_iter()
            .map(|(gap, back, k, v)| {
                t += gap;
                ((t - back).max(0), k, v)
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Slide events with no tuple entering or leaving the window are emitted as runs (a
    /// repeat of the event before, bounds moved): the rows equal the window run with open
    /// instances, which computes every event, under HAVING, LIMIT, SLACK and a heartbeat
    /// across a long empty stretch; ungrouped rows in order, grouped ones per event set.
    #[test]
    fn quiet_slide_events_as_runs_equal_every_event_computed(
        slide in 1i64..=4,
        ratio in prop_oneof![1i64..=5, 5i64..=100],
        offset in prop_oneof![Just(None), (0i64..=6).prop_map(Some)],
        tuples in sparse_stream_strategy(),
        grouped in any::<bool>(),
        max in any::<bool>(),
        having in prop_oneof![Just(None), (0i64..=4).prop_map(Some)],
        limit in prop_oneof![Just(None), (1u64..=300).prop_map(Some)],
        split in 1usize..20,
        slack in prop_oneof![Just(0i64), 1i64..=12],
        heartbeat in prop_oneof![Just(None), (1i64..=20_000).prop_map(Some)],
        coalesce in prop_oneof![Just(0usize), Just(1usize << 12), Just(1usize << 20)],
    ) {
        let start = offset.map_or(Start::Epoch, Start::At);
        let w = Window::new(ratio * slide, slide, start).unwrap();
        let second = if max { AggFunc::Max } else { AggFunc::Sum };
        let calls = vec![
            call(AggFunc::CountStar, None, DataType::Int8),
            call(second, Some(2), if max { DataType::Int4 } else { DataType::Int8 }),
        ];
        let mut q = query(calls, grouped);
        // HAVING count(*) > h (compiled: the block shape), LIMIT only where the rows'
        // order within an event is fixed (ungrouped).
        let nkeys = usize::from(grouped);
        q.having = having.map(|h| tcq::sql::Expr::Binary {
            op: tcq::sql::BinaryOp::Gt,
            left: Box::new(Expr::Column(nkeys)),
            right: Box::new(Expr::Literal(Value::Int8(h))),
        });
        q.limit = if grouped { None } else { limit };
        let batches = batches_of(&tuples, split);
        let last_t = tuples.iter().map(|t| t.0).max().unwrap_or(0);
        let limits = ExecLimits { coalesce_bytes: coalesce, ..LIMITS };
        let run_plan = |plan: SharedPlan| -> Vec<Vec<Value>> {
            let mut exec = QueryExec::new(
                q.clone(), vec![w], vec![None], plan, vec![], false, limits, 1_000_000,
            ).unwrap();
            exec.set_slack(slack);
            let mut out = Vec::new();
            for b in &batches {
                exec.push(b, &mut out).unwrap();
            }
            if let Some(h) = heartbeat {
                exec.heartbeat(last_t + h, &mut out).unwrap();
            }
            out.into_iter().flat_map(Event::into_rows).collect()
        };
        let every_event = run_plan(SharedPlan::unshared(&[w]));
        let sorted = |rows: Vec<Vec<Value>>| if grouped { canonical(rows) } else {
            rows.iter().map(|r| format!("{r:?}")).collect()
        };
        let want = sorted(every_event);
        for slider in [Slider::TwoStacks, Slider::SubtractOnEvict] {
            if slider == Slider::SubtractOnEvict && max {
                continue;
            }
            let got = sorted(run_plan(pane_plan(w, slider)));
            prop_assert_eq!(&got, &want, "{}", slider);
        }
    }
}
