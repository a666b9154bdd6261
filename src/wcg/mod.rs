//! The window coverage graph (WCG): sharing sub-aggregates between correlated windows.
//!
//! Paper: Wu, Bernstein, Raizman, Pavlopoulou, "Cost-based Query Rewriting Techniques for
//! Optimizing Aggregates Over Correlated Windows".
//! The executor consumes [`SharedPlan`]: a forest of windows in which every non-root node
//! is computed from its parent's partial aggregates. [`plan`] returns it; [`optimize`] also
//! returns every step that led to it, as a [`PlanReport`] that [`explain`] renders.
//!
//! The modules follow the paper:
//! - [`graph`]: the WCG (section 2.2) and the relation of each [`Sharing`] (Theorems 5, 6);
//! - [`cost`]: the cost model (section 3.2), ranked by long-run cost per second because the
//!   paper's period `R` overflows for co-prime ranges;
//! - [`sliding`]: the sliding-window aggregator of each node (panes, Two-Stacks,
//!   subtract-on-evict), part of the cost model;
//! - [`alg1`]: Algorithm 1, the min-cost WCG, a forest (Theorem 7);
//! - [`factor`]: factor windows, Algorithms 2-4 with Equations 2-3 and Theorems 8-9;
//! - [`report`]: the named steps and the final choice;
//! - [`slide_panes`]: one tumbling factor window per parent and slide, under the windows of
//!   that slide (beyond the paper);
//! - [`members`]: one plan for several queries, never costlier than each alone;
//! - [`explain`]: EXPLAIN as text, JSON and Graphviz DOT;
//! - [`flink`]: EXPLAIN (FORMAT FLINK), the shared plan of a set of queries as one Flink SQL
//!   job (cascading window aggregation where it pays);
//! - [`flink_cost`]: the cost of a plan on Flink, which slices windows itself;
//! - [`eval`]: the paper's evaluation (section 5): generators and the BL/UP/SP/WCG/WCG-FW
//!   model costs.
//!
//! One design decision: the virtual root `S` is the raw stream on the pane grid (the gcd of
//! all ranges, slides and offset differences), not a 1-microsecond window; an edge from `S`
//! costs raw events, and the pane itself is a candidate factor window.
//!
//! ```ignore
//! use tcq::wcg::{plan, optimize, Sharing};
//! use tcq::window::{Start, Window};
//! let min = 60_000_000;
//! let w = |m: i64| Window::new(m * min, m * min, Start::Epoch).unwrap();
//! // Example 7 of the paper: 20, 30 and 40 minutes, one event per minute.
//! let report = optimize(&[w(20), w(30), w(40)], Sharing::PartitionedBy, 1.0 / 60.0);
//! assert_eq!(report.unshared.total.per_period.unwrap().round(), 360.0);
//! assert_eq!(report.algorithm1.total.per_period.unwrap().round(), 246.0);
//! assert_eq!(report.chosen().total.per_period.unwrap().round(), 150.0);
//! let shared = plan(&[w(20), w(30), w(40)], Sharing::PartitionedBy, 1.0 / 60.0);
//! assert_eq!(shared.nodes[0].window, w(10)); // the factor window, a root
//! assert!(shared.nodes[0].user_windows.is_empty());
//! ```

pub(crate) mod alg1;
pub(crate) mod cost;
pub mod eval;
pub mod explain;
pub(crate) mod factor;
pub(crate) mod flink;
pub(crate) mod flink_cost;
pub mod graph;
pub(crate) mod members;
pub(crate) mod report;
pub(crate) mod slide_panes;
pub mod sliding;

pub use report::optimize;
pub(crate) use report::optimize_for;
pub use sliding::{Groups, Slider, Sliders, Workload};

use crate::window::Window;

/// Which coverage relation the query's aggregates allow (paper Theorems 5 and 6); a query
/// with several aggregates uses the strictest class among them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Sharing {
    /// No sharing: holistic aggregates (count(DISTINCT x)) or no aggregates at all.
    None,
    /// Distributive and algebraic aggregates (count, sum, avg, stddev, variance): only
    /// "partitioned by" edges (Theorem 5).
    PartitionedBy,
    /// min and max: "covered by" edges, overlap is harmless (Theorem 6).
    CoveredBy,
}

/// One window of the shared plan.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanNode {
    /// The window.
    pub window: Window,
    /// Indices (into the query's window list) of the user windows this node computes;
    /// empty for a factor window, whose results are never shown.
    pub user_windows: Vec<usize>,
    /// The node (index into [`SharedPlan::nodes`]) whose partials this one merges; `None`
    /// for a root, which folds raw tuples.
    pub parent: Option<usize>,
    /// How the node computes its instances from its parent's partials
    /// ([`Slider::Panes`] for a root).
    pub slider: Slider,
}

/// A min-cost forest over the query's windows and any factor windows.
/// `nodes` is in topological order: a parent precedes its children.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedPlan {
    /// The windows to compute.
    pub nodes: Vec<PlanNode>,
}

impl SharedPlan {
    /// The unshared plan: every distinct window computed from raw tuples on its own.
    pub fn unshared(windows: &[Window]) -> SharedPlan {
        let mut nodes: Vec<PlanNode> = Vec::new();
        for (i, w) in windows.iter().enumerate() {
            match nodes.iter_mut().find(|n| n.window == *w) {
                Some(n) => n.user_windows.push(i),
                None => nodes.push(PlanNode {
                    window: *w,
                    user_windows: vec![i],
                    parent: None,
                    slider: Slider::Panes,
                }),
            }
        }
        SharedPlan { nodes }
    }
}

/// Plan `windows` under `sharing` with event rate `eta_per_sec` (events per second): the
/// cheaper of Algorithm 1 and Algorithm 2 (factor windows), or the unshared plan for
/// [`Sharing::None`]. Every user window is computed by exactly one node; duplicates share it.
pub fn plan(windows: &[Window], sharing: Sharing, eta_per_sec: f64) -> SharedPlan {
    optimize(windows, sharing, eta_per_sec).plan
}

/// [`plan`] under `workload`: the cost model also prices groups per partial and chooses
/// each node's sliding aggregator among those the aggregates allow ([`sliding`]).
pub fn plan_for(windows: &[Window], sharing: Sharing, workload: &Workload) -> SharedPlan {
    optimize_for(windows, sharing, workload).plan
}

#[cfg(test)]
mod tests {
    //! The paper's worked examples (docs/sharing.md), exactly: one event per minute,
    //! windows in minutes.
    use super::factor::{find_best_factor_window, Target};
    use super::report::{Choice, PlanReport};
    use super::*;
    use crate::wcg::cost::CostModel;
    use crate::window::Start;

    const MIN: i64 = 60_000_000;
    const ETA: f64 = 1.0 / 60.0;

    fn tumbling(minutes: i64) -> Window {
        Window::new(minutes * MIN, minutes * MIN, Start::Epoch).unwrap()
    }

    fn period(c: cost::Cost) -> f64 {
        let v = c.per_period.expect("R fits");
        assert!(
            (v - v.round()).abs() < 1e-6,
            "{v} is a whole number of events"
        );
        v.round()
    }

    /// (child range, parent range or 0 for raw, cost per R) of the chosen forest.
    fn edges(report: &PlanReport) -> Vec<(i64, i64, f64)> {
        let f = report.chosen();
        f.nodes
            .iter()
            .map(|n| {
                let parent = n
                    .parent
                    .map_or(0, |p| f.nodes[p].vertex.window.range_us / MIN);
                (n.vertex.window.range_us / MIN, parent, period(n.cost))
            })
            .collect()
    }

    #[test]
    fn example_6_four_tumbling_windows_480_to_150() {
        let set = [10, 20, 30, 40].map(tumbling);
        let r = optimize(&set, Sharing::PartitionedBy, ETA);
        assert_eq!(r.period_us, Some(120 * MIN));
        assert_eq!(period(r.unshared.total), 480.0);
        assert_eq!(period(r.algorithm1.total), 150.0);
        assert_eq!(r.choice, Choice::Algorithm1);
        assert_eq!(
            edges(&r),
            vec![
                (10, 0, 120.0),
                (20, 10, 12.0),
                (30, 10, 12.0),
                (40, 20, 6.0)
            ]
        );
        assert!((r.saving_percent() - 68.75).abs() < 1e-9);
        // "covered by" coincides with "partitioned by" on tumbling windows.
        let c = optimize(&set, Sharing::CoveredBy, ETA);
        assert_eq!(edges(&c), edges(&r));
    }

    #[test]
    fn example_7_factor_window_10_gives_150() {
        let set = [20, 30, 40].map(tumbling);
        for sharing in [Sharing::PartitionedBy, Sharing::CoveredBy] {
            let r = optimize(&set, sharing, ETA);
            assert_eq!(period(r.unshared.total), 360.0);
            assert_eq!(period(r.algorithm1.total), 246.0);
            let a1: Vec<_> = r.algorithm1.nodes.iter().map(|n| period(n.cost)).collect();
            assert_eq!(a1, vec![120.0, 120.0, 6.0]);
            assert_eq!(r.choice, Choice::Algorithm2);
            assert_eq!(period(r.chosen().total), 150.0);
            let mut e = edges(&r);
            e.sort_by_key(|x| x.0);
            assert_eq!(
                e,
                vec![
                    (10, 0, 120.0),
                    (20, 10, 12.0),
                    (30, 10, 12.0),
                    (40, 20, 6.0)
                ]
            );
            let plan = &r.plan;
            assert_eq!(plan.nodes[0].window, tumbling(10));
            assert!(
                plan.nodes[0].user_windows.is_empty(),
                "factor windows are never shown"
            );
        }
    }

    #[test]
    fn example_8_candidates_2_5_10_and_10_is_chosen() {
        // Target S<1, 1> (a 1-minute pane) with downstream {20, 30}, R = 120 from 20/30/40.
        let model = CostModel::new(&[20, 30, 40].map(tumbling), ETA);
        let pane = tumbling(1);
        let ds = [20, 30].map(tumbling);
        let s = find_best_factor_window(
            Target::Root { pane: &pane },
            &ds,
            &ds,
            Sharing::PartitionedBy,
            &model,
        );
        assert_eq!(period(s.pattern_cost_without), 240.0);
        let seen: Vec<(i64, f64, bool, bool)> = s
            .candidates
            .iter()
            .map(|c| {
                (
                    c.window.range_us / MIN,
                    period(c.pattern_cost),
                    c.beneficial,
                    c.dominated,
                )
            })
            .collect();
        // The pane itself is a candidate of S here; with one event per minute it costs 360
        // and is not beneficial. 2 and 5 are beneficial but dominated by 10 (10 <= 2, 5).
        assert_eq!(
            seen,
            vec![
                (1, 360.0, false, false),
                (2, 240.0, true, true),
                (5, 168.0, true, true),
                (10, 144.0, true, false)
            ]
        );
        assert_eq!(s.chosen_window(), Some(tumbling(10)));
    }

    #[test]
    fn sharing_none_is_the_unshared_plan_and_duplicates_share_a_node() {
        let set = [tumbling(10), tumbling(20), tumbling(10)];
        assert_eq!(plan(&set, Sharing::None, ETA), SharedPlan::unshared(&set));
        let p = plan(&set, Sharing::PartitionedBy, ETA);
        assert_eq!(p.nodes.len(), 2);
        assert_eq!(p.nodes[0].user_windows, vec![0, 2]);
        assert_eq!(p.nodes[1].parent, Some(0));
        assert!(plan(&[], Sharing::CoveredBy, ETA).nodes.is_empty());
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples in this module's documentation, run as unit tests: they use items
    //! private to the crate, which doctests cannot reach.

    #[test]
    fn module_example() {
        use crate::wcg::{optimize, plan, Sharing};
        use crate::window::{Start, Window};
        let min = 60_000_000;
        let w = |m: i64| Window::new(m * min, m * min, Start::Epoch).unwrap();
        // Example 7 of the paper: 20, 30 and 40 minutes, one event per minute.
        let report = optimize(&[w(20), w(30), w(40)], Sharing::PartitionedBy, 1.0 / 60.0);
        assert_eq!(report.unshared.total.per_period.unwrap().round(), 360.0);
        assert_eq!(report.algorithm1.total.per_period.unwrap().round(), 246.0);
        assert_eq!(report.chosen().total.per_period.unwrap().round(), 150.0);
        let shared = plan(&[w(20), w(30), w(40)], Sharing::PartitionedBy, 1.0 / 60.0);
        assert_eq!(shared.nodes[0].window, w(10)); // the factor window, a root
        assert!(shared.nodes[0].user_windows.is_empty());
    }
}
