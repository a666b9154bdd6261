//! The optimizer's plans compute the right values (pure code, no server).
//!
//! Protects: every plan the optimizer returns, followed the way the executor follows it
//! (a root folds raw events into its instances; any other node merges the `M(W, parent)`
//! consecutive parent instances starting at `Window::first_covering_index`), gives each
//! user window exactly the aggregate computed from raw events alone: sums under
//! "partitioned by" (overlap would double count) and maxima under "covered by". Window sets
//! are random and include hopping and jumping windows, START AT offsets and epoch grids, and
//! the plans include factor windows, whose grids the optimizer chooses.

use proptest::prelude::*;
use std::collections::HashMap;
use tcq::wcg::{optimize, SharedPlan, Sharing};
use tcq::window::{Start, Window};

/// Events `(time, value)` at small integer times.
type Events = Vec<(i64, i64)>;

fn direct(w: &Window, m: i64, events: &Events, sharing: Sharing) -> Option<i64> {
    let (lo, hi) = (w.lower_us(m), w.upper_us(m));
    let inside = events
        .iter()
        .filter(|(t, _)| lo <= *t && *t < hi)
        .map(|(_, v)| *v);
    match sharing {
        Sharing::CoveredBy => inside.max(),
        _ => Some(inside.sum()),
    }
}

/// The value of instance `m` of plan node `n`, computed along the plan.
fn along_plan(
    plan: &SharedPlan,
    n: usize,
    m: i64,
    events: &Events,
    sharing: Sharing,
    memo: &mut HashMap<(usize, i64), Option<i64>>,
) -> Option<i64> {
    if let Some(v) = memo.get(&(n, m)) {
        return *v;
    }
    let node = &plan.nodes[n];
    let v = match node.parent {
        None => direct(&node.window, m, events, sharing),
        Some(p) => {
            let up = plan.nodes[p].window;
            let first = node.window.first_covering_index(m, &up);
            let parts: Vec<Option<i64>> = (0..node.window.covering_multiplier(&up))
                .map(|k| along_plan(plan, p, first + k, events, sharing, memo))
                .collect();
            match sharing {
                Sharing::CoveredBy => parts.into_iter().flatten().max(),
                _ => Some(parts.into_iter().map(|v| v.unwrap_or(0)).sum()),
            }
        }
    };
    memo.insert((n, m), v);
    v
}

fn window() -> impl Strategy<Value = Window> {
    (
        1i64..=12,
        1i64..=12,
        any::<bool>(),
        prop_oneof![Just(None), (0i64..=6).prop_map(Some)],
    )
        .prop_map(|(r, s, tumbling, start)| {
            let s = if tumbling { r } else { s };
            let start = start.map_or(Start::Epoch, Start::At);
            Window::new(r, s, start).unwrap()
        })
}

fn check(windows: &[Window], events: &Events, sharing: Sharing) -> Result<(), TestCaseError> {
    for eta in [1.0, 1e6, 1e9] {
        let report = optimize(windows, sharing, eta);
        let plan = &report.plan;
        let mut memo = HashMap::new();
        for (n, node) in plan.nodes.iter().enumerate() {
            for &u in &node.user_windows {
                let w = &windows[u];
                let ms = if w.is_bounded() { 0..12 } else { -12..12 };
                for m in ms {
                    let want = direct(w, m, events, sharing);
                    let got = along_plan(plan, n, m, events, sharing, &mut memo);
                    prop_assert_eq!(got, want, "window {} instance {} in plan {:?}", w, m, plan);
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn shared_plans_equal_each_window_alone(
        windows in prop::collection::vec(window(), 1..=6),
        events in prop::collection::vec((-80i64..160, -50i64..50), 0..60),
        covered in any::<bool>(),
    ) {
        let sharing = if covered { Sharing::CoveredBy } else { Sharing::PartitionedBy };
        check(&windows, &events, sharing)?;
    }
}

#[test]
fn paper_example_7_with_factor_window_computes_each_window() {
    let set: Vec<Window> = [2, 3, 4]
        .into_iter()
        .map(|r| Window::new(r, r, Start::Epoch).unwrap())
        .collect();
    let events: Events = (-30..60).map(|t| (t, t * 7 % 11)).collect();
    check(&set, &events, Sharing::PartitionedBy).unwrap();
    check(&set, &events, Sharing::CoveredBy).unwrap();
}
