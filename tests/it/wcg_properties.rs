//! Properties of the WCG optimizer over random window sets (pure code, no server).
//!
//! Protects: the plan is a forest in topological order (Theorem 7), it computes every user
//! window exactly once, each edge satisfies the relation its `Sharing` allows (Theorems 4-6)
//! and the executor's multiplier contract (Theorem 3), the plan never costs more than the
//! unshared baseline, and no window a user can write (ranges up to days in microseconds,
//! co-prime ranges, offsets anywhere in the i64 range) panics or overflows.

use proptest::prelude::*;
use tcq::wcg::graph::relation_holds;
use tcq::wcg::{optimize, Sharing};
use tcq::window::{Start, Window};

const SEC: i64 = 1_000_000;

fn unit() -> impl Strategy<Value = i64> {
    prop_oneof![
        Just(1),
        Just(SEC),
        Just(60 * SEC),
        Just(3600 * SEC),
        Just(7 * SEC)
    ]
}

/// Correlated windows: small multiples of a shared unit, tumbling, hopping or jumping.
fn correlated_window() -> impl Strategy<Value = (i64, i64, i64, bool)> {
    (1i64..=12, 1i64..=12, 0i64..=3, any::<bool>())
}

fn window_set() -> impl Strategy<Value = Vec<Window>> {
    (
        unit(),
        prop::collection::vec(correlated_window(), 1..=10),
        any::<bool>(),
    )
        .prop_map(|(u, ws, epoch)| {
            ws.into_iter()
                .map(|(r, s, o, tumbling)| {
                    let s = if tumbling { r } else { s };
                    let start = if epoch {
                        Start::Epoch
                    } else {
                        Start::At(o * u)
                    };
                    Window::new(r * u, s * u, start).unwrap()
                })
                .collect()
        })
}

/// Extreme windows: co-prime ranges, ranges of days in microseconds, offsets near the
/// ends of the i64 range.
fn extreme_set() -> impl Strategy<Value = Vec<Window>> {
    let range = prop_oneof![
        Just(7 * SEC),
        Just(11 * SEC),
        Just(13 * SEC),
        Just(17 * 60 * SEC),
        Just(23 * 3600 * SEC),
        Just(400 * 86_400 * SEC),
        1i64..=i64::MAX / 4,
        Just(i64::MAX),
    ];
    let slide = prop_oneof![Just(1i64), Just(SEC), 1i64..=i64::MAX];
    let start = prop_oneof![
        Just(Start::Epoch),
        Just(Start::At(0)),
        any::<i64>().prop_map(Start::At),
        Just(Start::At(i64::MIN)),
        Just(Start::At(i64::MAX))
    ];
    prop::collection::vec((range, slide, start), 1..=10).prop_map(|ws| {
        ws.into_iter()
            .map(|(r, s, o)| Window::new(r, s, o).unwrap())
            .collect()
    })
}

fn sharing() -> impl Strategy<Value = Sharing> {
    prop_oneof![
        Just(Sharing::None),
        Just(Sharing::PartitionedBy),
        Just(Sharing::CoveredBy)
    ]
}

fn eta() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(1.0 / 60.0),
        Just(1.0),
        Just(100.0),
        Just(1e6),
        Just(0.0)
    ]
}

fn check_plan(windows: &[Window], sharing: Sharing, eta: f64) -> Result<(), TestCaseError> {
    let report = optimize(windows, sharing, eta);
    let plan = &report.plan;
    // Every user window exactly once, by a node with that window.
    let mut seen = vec![0; windows.len()];
    for node in &plan.nodes {
        for &u in &node.user_windows {
            prop_assert_eq!(node.window, windows[u]);
            seen[u] += 1;
        }
    }
    prop_assert!(
        seen.iter().all(|&n| n == 1),
        "user windows computed {:?} times",
        seen
    );
    // A forest in topological order whose edges satisfy the relation.
    for (i, node) in plan.nodes.iter().enumerate() {
        if let Some(p) = node.parent {
            prop_assert!(p < i, "parent {} after child {}", p, i);
            let up = &plan.nodes[p].window;
            prop_assert!(
                relation_holds(sharing, &node.window, up),
                "{} from {}",
                node.window,
                up
            );
            prop_assert!(node.window.covering_multiplier(up) >= 1);
        }
    }
    // Factor windows feed some window.
    for (i, node) in plan.nodes.iter().enumerate() {
        if node.user_windows.is_empty() {
            prop_assert!(
                plan.nodes.iter().any(|n| n.parent == Some(i)),
                "idle factor window"
            );
        }
    }
    let (cost, base) = (report.chosen().total.per_sec, report.unshared.total.per_sec);
    prop_assert!(cost.is_finite() && base.is_finite());
    prop_assert!(
        cost <= base * (1.0 + 1e-9),
        "plan {} > unshared {}",
        cost,
        base
    );
    prop_assert!(cost <= report.algorithm1.total.per_sec * (1.0 + 1e-9));
    if let Some(r) = report.period_us {
        prop_assert!(r > 0);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn correlated_sets_plan_to_a_valid_cheaper_forest(
        ws in window_set(), sh in sharing(), eta in eta()
    ) {
        check_plan(&ws, sh, eta)?;
    }

    #[test]
    fn extreme_sets_neither_panic_nor_overflow(ws in extreme_set(), sh in sharing(), eta in eta()) {
        check_plan(&ws, sh, eta)?;
    }
}

#[test]
fn co_prime_ranges_of_seconds_minutes_and_hours() {
    let set: Vec<Window> = [7 * SEC, 11 * SEC, 13 * SEC, 17 * 60 * SEC, 23 * 3600 * SEC]
        .into_iter()
        .map(|r| Window::new(r, r, Start::Epoch).unwrap())
        .collect();
    for sharing in [Sharing::PartitionedBy, Sharing::CoveredBy] {
        let report = optimize(&set, sharing, 1000.0);
        check_plan(&set, sharing, 1000.0).unwrap();
        // The pane is 1 second: the factor window <1 s, 1 s> folds each event once and feeds
        // all five windows, 1005 instead of 5000 events per second.
        assert_eq!(report.pane.unwrap().range_us, SEC);
        assert_eq!(
            report.plan.nodes[0].window,
            Window::new(SEC, SEC, Start::Epoch).unwrap()
        );
        assert!(report.plan.nodes[1..].iter().all(|n| n.parent == Some(0)));
        assert!(
            (report.saving_percent() - 79.9).abs() < 1e-9,
            "{}",
            report.saving_percent()
        );
    }
}
