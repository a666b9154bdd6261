//! The cost of a window plan on Apache Flink, beside tcq's own model ([`super::cost`]), so
//! that `EXPLAIN (FORMAT FLINK)` exports the plan that is cheapest where it runs.
//!
//! tcq folds each tuple once into a pane and merges partials along the WCG's edges, so for
//! tcq a cascade is nearly always cheaper. Flink differs in two ways, measured on a
//! standalone cluster over the flights (see docs/flink.md):
//! - Flink slices a window aggregation over a stream itself: a TUMBLE or HOP of range `r`
//!   and slide `s` folds each record into one slice (pane) of `gcd(r, s)` and merges the
//!   `r / gcd` slices of an instance when it fires, after a local pre-aggregation. A
//!   window computed from the stream costs about one record per tuple, whatever its range.
//! - A cascading window aggregation over a parent's rows (on the parent's `window_time`) is
//!   not sliced: the window table function copies each parent row into every instance that
//!   contains it (`size / hop` copies), and each copy is shuffled and folded as a record.
//!   A cascade pays per partial record, and a hopping child pays once per copy.
//!
//! So the model counts records folded per second of stream time: from the stream `eta`
//! (events per second) plus [`MERGE_WEIGHT`] per slice merged when an instance fires; from a
//! parent, the parent's rows per second times the copies, plus the same weight per row
//! emitted. A parent instance of range `r` emits one row per group present: the expected
//! number of distinct groups among `eta * r` tuples drawn from `groups` keys,
//! `groups * (1 - exp(-eta * r / groups))`; with `groups` unknown every tuple is assumed
//! its own group, so a cascade never looks cheaper than the stream (the safe choice).
//!
//! [`choose`] starts from every window computed from the stream (the plain query), then
//! keeps an edge of tcq's min-cost WCG only where the model says it is cheaper on Flink,
//! and a factor window only where the children it serves save more than it costs. The
//! chosen plan is never costlier in the model than the plain one.
//!
//! ```ignore
//! use tcq::wcg::{flink_cost::{choose, FlinkCostModel}, plan, Sharing};
//! use tcq::window::{Start, Window};
//! let min = 60_000_000;
//! let w = |r: i64, s: i64| Window::new(r * min, s * min, Start::Epoch).unwrap();
//! // The paper's 10/20/30/40 tumbling windows at one event a second over 20 keys:
//! // instances hold far fewer groups than tuples, so the cascade pays on Flink too.
//! let set = [w(10, 10), w(20, 20), w(30, 30), w(40, 40)];
//! let shared = plan(&set, Sharing::PartitionedBy, 1.0);
//! let model = FlinkCostModel { eta_per_sec: 1.0, groups: Some(20.0) };
//! let chosen = choose(&shared, &model);
//! assert!(chosen.cost < chosen.plain_cost);
//! assert!(chosen.nodes.iter().any(|n| n.parent.is_some()));
//! // Without knowing the groups, every window is computed from the stream.
//! let plain = choose(&shared, &FlinkCostModel { eta_per_sec: 1.0, groups: None });
//! assert!(plain.nodes.iter().all(|n| n.parent.is_none()));
//! ```

use super::SharedPlan;
use crate::window::Window;

/// Records' worth of work to merge one slice (or emit one row) when an instance fires:
/// an in-memory merge of accumulators, far cheaper than a record that crosses an exchange.
pub(crate) const MERGE_WEIGHT: f64 = 0.05;

/// The inputs of the Flink cost model.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FlinkCostModel {
    /// Events per second of stream time.
    pub(crate) eta_per_sec: f64,
    /// Distinct GROUP BY keys over the stream, when known (`EXPLAIN (GROUPS n)`,
    /// `tcqd flink export --groups n`); `None`: each tuple its own group.
    pub(crate) groups: Option<f64>,
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The hop of the window table function for a window of `size` on `w`'s grid: its slide,
/// or the gcd where Flink's HOP cannot take the size (see the export's node views).
pub(crate) fn hop_for(size: i64, slide: i64) -> i64 {
    if size % slide == 0 {
        slide
    } else {
        gcd(size, slide)
    }
}

impl FlinkCostModel {
    /// Expected rows one instance of range `range_us` emits: distinct groups among its
    /// tuples.
    pub(crate) fn rows_per_instance(&self, range_us: i64) -> f64 {
        let n = self.eta_per_sec * range_us as f64 / 1e6;
        match self.groups {
            Some(g) if g > 0.0 => g * (1.0 - (-n / g).exp()),
            _ => n,
        }
    }

    /// Records per second to compute `w` from the stream.
    pub(crate) fn cost_from_stream(&self, w: &Window) -> f64 {
        let hop = hop_for(w.range_us, w.slide_us);
        let fires = 1e6 / hop as f64;
        let slices = (w.range_us / hop) as f64;
        self.eta_per_sec + MERGE_WEIGHT * fires * self.rows_per_instance(w.range_us) * slices
    }

    /// Records per second to compute `w` from the rows of `parent` (a cascade).
    pub(crate) fn cost_from_parent(&self, w: &Window, parent: &Window) -> f64 {
        let size = w.range_us - parent.range_us + parent.slide_us;
        let hop = hop_for(size, w.slide_us);
        let copies = (size / hop) as f64;
        let parent_rows = self.rows_per_instance(parent.range_us) * 1e6 / parent.slide_us as f64;
        let fires = 1e6 / hop as f64;
        parent_rows * copies + MERGE_WEIGHT * fires * self.rows_per_instance(w.range_us)
    }
}

/// One window of the plan exported to Flink.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FlinkNode {
    /// The window.
    pub(crate) window: Window,
    /// Index into [`FlinkPlan::nodes`] of the node whose rows this one merges; `None`:
    /// computed from the stream.
    pub(crate) parent: Option<usize>,
    /// Indices of the user windows this node computes (as in [`super::PlanNode`]); empty
    /// for a factor window.
    pub(crate) user_windows: Vec<usize>,
    /// Model cost of the node as chosen, records per second.
    pub(crate) cost: f64,
    /// Model cost of computing it from the stream instead.
    pub(crate) stream_cost: f64,
}

/// The plan chosen for Flink and its model costs (records per second).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FlinkPlan {
    /// Nodes in topological order (a parent before its children).
    pub(crate) nodes: Vec<FlinkNode>,
    /// Total model cost of the chosen plan.
    pub(crate) cost: f64,
    /// Total model cost of computing every user window from the stream.
    pub(crate) plain_cost: f64,
}

/// Choose, from tcq's min-cost plan `plan`, the edges and factor windows that pay on Flink
/// under `model` (see the module header). The result is never costlier in the model than
/// computing every user window from the stream.
pub(crate) fn choose(plan: &SharedPlan, model: &FlinkCostModel) -> FlinkPlan {
    let n = plan.nodes.len();
    let stream: Vec<f64> = plan
        .nodes
        .iter()
        .map(|p| model.cost_from_stream(&p.window))
        .collect();
    let via = |i: usize| -> Option<f64> {
        let p = plan.nodes[i].parent?;
        Some(model.cost_from_parent(&plan.nodes[i].window, &plan.nodes[p].window))
    };
    let user: Vec<bool> = plan
        .nodes
        .iter()
        .map(|p| !p.user_windows.is_empty())
        .collect();
    let mut present = user.clone();
    // from_parent[i]: node i merges its tcq parent's rows.
    let mut from_parent = vec![false; n];
    let cost_of = |i: usize, fp: &[bool]| if fp[i] { via(i).unwrap() } else { stream[i] };
    for i in 0..n {
        if !present[i] {
            // A factor window: keep it if the present children it feeds save more than
            // it costs (itself computed the cheaper way open to it).
            let own = match plan.nodes[i].parent {
                Some(p) if present[p] => stream[i].min(via(i).unwrap()),
                _ => stream[i],
            };
            let saving: f64 = (0..n)
                .filter(|&c| plan.nodes[c].parent == Some(i) && present[c])
                .map(|c| (cost_of(c, &from_parent) - via(c).unwrap()).max(0.0))
                .sum();
            if saving > own {
                present[i] = true;
                from_parent[i] = matches!(plan.nodes[i].parent, Some(p) if present[p])
                    && via(i).unwrap() < stream[i];
                for c in 0..n {
                    if plan.nodes[c].parent == Some(i)
                        && present[c]
                        && via(c).unwrap() < cost_of(c, &from_parent)
                    {
                        from_parent[c] = true;
                    }
                }
            }
            continue;
        }
        if let Some(p) = plan.nodes[i].parent {
            from_parent[i] = present[p] && via(i).unwrap() < stream[i];
        }
    }
    // Renumber the kept nodes; a parent precedes its children in `plan` already.
    let mut index = vec![usize::MAX; n];
    let mut nodes = Vec::new();
    for i in (0..n).filter(|&i| present[i]) {
        index[i] = nodes.len();
        let parent = plan.nodes[i]
            .parent
            .filter(|_| from_parent[i])
            .map(|p| index[p]);
        nodes.push(FlinkNode {
            window: plan.nodes[i].window,
            parent,
            user_windows: plan.nodes[i].user_windows.clone(),
            cost: cost_of(i, &from_parent),
            stream_cost: stream[i],
        });
    }
    let cost = nodes.iter().map(|n| n.cost).sum();
    let plain_cost = (0..n).filter(|&i| user[i]).map(|i| stream[i]).sum();
    FlinkPlan {
        nodes,
        cost,
        plain_cost,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wcg::{plan, Sharing};
    use crate::window::Start;

    const MIN: i64 = 60_000_000;

    fn w(r: i64, s: i64) -> Window {
        Window::new(r * MIN, s * MIN, Start::Epoch).unwrap()
    }

    #[test]
    fn a_hop_over_a_factor_window_loses_to_flinks_own_slicing() {
        // Issue 7's Q1 (1 hour every 10 minutes) over the flights: tcq adds the 10-minute
        // factor window; on Flink each of its rows is copied into six hop instances.
        let shared = plan(&[w(60, 10)], Sharing::PartitionedBy, 0.19);
        assert_eq!(shared.nodes.len(), 2, "tcq's plan has the factor window");
        let model = FlinkCostModel {
            eta_per_sec: 0.19,
            groups: Some(300.0),
        };
        let chosen = choose(&shared, &model);
        assert_eq!(chosen.nodes.len(), 1);
        assert_eq!(chosen.nodes[0].parent, None);
        assert_eq!(chosen.nodes[0].window, w(60, 10));
        assert!((chosen.cost - chosen.plain_cost).abs() < 1e-12);
    }

    #[test]
    fn tumbling_cascades_pay_when_instances_hold_few_groups() {
        let set = [w(10, 10), w(20, 20), w(30, 30), w(40, 40)];
        let shared = plan(&set, Sharing::PartitionedBy, 10.0);
        let many = choose(
            &shared,
            &FlinkCostModel {
                eta_per_sec: 10.0,
                groups: Some(50.0),
            },
        );
        let edges: Vec<(i64, Option<i64>)> = many
            .nodes
            .iter()
            .map(|n| {
                (
                    n.window.range_us / MIN,
                    n.parent.map(|p| many.nodes[p].window.range_us / MIN),
                )
            })
            .collect();
        assert_eq!(
            edges,
            vec![(10, None), (20, Some(10)), (40, Some(20)), (30, Some(10))]
        );
        assert!(many.cost < many.plain_cost / 3.0, "{many:?}");
        // Every tuple its own group: no partial record is cheaper than a tuple.
        let unknown = choose(
            &shared,
            &FlinkCostModel {
                eta_per_sec: 10.0,
                groups: None,
            },
        );
        assert!(unknown.nodes.iter().all(|n| n.parent.is_none()));
        assert!(unknown.cost <= unknown.plain_cost + 1e-9);
    }

    #[test]
    fn a_factor_window_is_kept_only_when_its_children_save_more_than_it_costs() {
        // 20, 30, 40: Algorithm 2 adds the 10-minute factor window.
        let set = [w(20, 20), w(30, 30), w(40, 40)];
        let shared = plan(&set, Sharing::PartitionedBy, 10.0);
        assert!(shared.nodes.iter().any(|n| n.user_windows.is_empty()));
        let few = choose(
            &shared,
            &FlinkCostModel {
                eta_per_sec: 10.0,
                groups: Some(5.0),
            },
        );
        assert!(few.nodes.iter().any(|n| n.user_windows.is_empty()));
        let all = choose(
            &shared,
            &FlinkCostModel {
                eta_per_sec: 10.0,
                groups: None,
            },
        );
        assert_eq!(all.nodes.len(), 3, "the factor window is dropped");
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples in this module's documentation, run as unit tests: they use items
    //! private to the crate, which doctests cannot reach.

    #[test]
    fn module_example() {
        use crate::wcg::{
            flink_cost::{choose, FlinkCostModel},
            plan, Sharing,
        };
        use crate::window::{Start, Window};
        let min = 60_000_000;
        let w = |r: i64, s: i64| Window::new(r * min, s * min, Start::Epoch).unwrap();
        // The paper's 10/20/30/40 tumbling windows at one event a second over 20 keys:
        // instances hold far fewer groups than tuples, so the cascade pays on Flink too.
        let set = [w(10, 10), w(20, 20), w(30, 30), w(40, 40)];
        let shared = plan(&set, Sharing::PartitionedBy, 1.0);
        let model = FlinkCostModel {
            eta_per_sec: 1.0,
            groups: Some(20.0),
        };
        let chosen = choose(&shared, &model);
        assert!(chosen.cost < chosen.plain_cost);
        assert!(chosen.nodes.iter().any(|n| n.parent.is_some()));
        // Without knowing the groups, every window is computed from the stream.
        let plain = choose(
            &shared,
            &FlinkCostModel {
                eta_per_sec: 1.0,
                groups: None,
            },
        );
        assert!(plain.nodes.iter().all(|n| n.parent.is_none()));
    }
}
