//! One plan for the windows of several queries that share a plan: never costlier than
//! running each query alone, in the model.
//!
//! Sharing across queries plans the union of the members' windows with the optimizer
//! ([`super::optimize_for`]). Algorithm 2 is a heuristic, and over a union it may pick a
//! factor window that serves every member a little worse than each member's own plan would:
//! four dashboards with slides of 20, 15, 30 and 13 minutes share a one-minute pane (the gcd)
//! whose partials the 143-minute window then merges by the hundred. So the union's plan is
//! weighed against the *side-by-side* plan, each member's own min-cost plan in one forest,
//! with a window that several members compute (and its ancestors that then serve nothing
//! else) kept once; its cost is at most the members' costs alone, since merging
//! duplicates only drops nodes. The cheaper plan runs (ties: the union's).

use super::alg1::Forest;
use super::cost::Cost;
use super::report::optimize_for;
use super::sliding::Workload;
use super::{PlanNode, SharedPlan, Sharing};
use crate::window::Window;

/// The plan for `windows` (every member's windows, in slot order) whose members own the
/// slots `members[i]`, and its model cost per second: the cheaper of the union's plan and
/// the members' plans side by side (see the module docs). `user_windows` of the plan's
/// nodes index `windows`.
pub(crate) fn plan_members(
    windows: &[Window],
    members: &[Vec<usize>],
    sharing: Sharing,
    workload: &Workload,
) -> (SharedPlan, f64) {
    let union = optimize_for(windows, sharing, workload);
    let union_cost = union.chosen().total.per_sec;
    if members.len() < 2 {
        return (union.plan, union_cost);
    }
    let (side, side_cost) = side_by_side(windows, members, sharing, workload);
    if super::cost::clearly_less(side_cost, union_cost) {
        (side, side_cost)
    } else {
        (union.plan, union_cost)
    }
}

/// Each member's own min-cost plan in one forest, a window computed by several kept once
/// (the first member's node), with its model cost per second.
pub(crate) fn side_by_side(
    windows: &[Window],
    members: &[Vec<usize>],
    sharing: Sharing,
    workload: &Workload,
) -> (SharedPlan, f64) {
    let mut nodes: Vec<PlanNode> = Vec::new();
    let mut costs: Vec<Cost> = Vec::new();
    for slots in members {
        let own: Vec<Window> = slots.iter().map(|&s| windows[s]).collect();
        let report = optimize_for(&own, sharing, workload);
        let forest: &Forest = report.chosen();
        let order = forest.topological_order();
        // Where each of the member's plan nodes landed in `nodes`.
        let mut placed = vec![usize::MAX; forest.nodes.len()];
        for v in order {
            let n = &forest.nodes[v];
            let users: Vec<usize> = n.vertex.user_windows.iter().map(|&u| slots[u]).collect();
            if let Some(k) = nodes.iter().position(|x| x.window == n.vertex.window) {
                nodes[k].user_windows.extend(users);
                placed[v] = k;
                continue;
            }
            placed[v] = nodes.len();
            nodes.push(PlanNode {
                window: n.vertex.window,
                user_windows: users,
                parent: n.parent.map(|p| placed[p]),
                slider: n.slider,
            });
            costs.push(n.cost);
        }
    }
    prune_idle(&mut nodes, &mut costs);
    let total = Cost::sum(costs.iter().copied()).per_sec;
    (SharedPlan { nodes }, total)
}

/// Drop nodes that show no user window and feed no node (a member's factor window whose
/// only child was kept from another member), renumbering parents.
fn prune_idle(nodes: &mut Vec<PlanNode>, costs: &mut Vec<Cost>) {
    loop {
        let idle = (0..nodes.len()).rev().find(|&i| {
            nodes[i].user_windows.is_empty() && !nodes.iter().any(|n| n.parent == Some(i))
        });
        let Some(i) = idle else { return };
        nodes.remove(i);
        costs.remove(i);
        for n in nodes.iter_mut() {
            if let Some(p) = n.parent.as_mut() {
                if *p > i {
                    *p -= 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wcg::{Groups, Sliders};
    use crate::window::Start;

    const MIN: i64 = 60_000_000;

    fn w(r: i64, s: i64) -> Window {
        Window::new(r * MIN, s * MIN, Start::Epoch).unwrap()
    }

    /// The family: five windows of four dashboards with co-prime slides, grouped
    /// by origin (about 229 groups) at the flights' rate. The chosen plan costs no more than
    /// the members alone, and every window is computed by exactly one node.
    #[test]
    fn a_family_of_dashboards_never_costs_more_than_alone() {
        let windows = [w(40, 20), w(45, 15), w(90, 30), w(143, 13), w(60, 60)];
        let members = vec![vec![0], vec![1], vec![2, 4], vec![3]];
        let workload = Workload {
            eta_per_sec: 3_000_000.0 / (181.0 * 86_400.0),
            groups: Groups::Estimated(229.0),
            sliders: Sliders {
                two_stacks: true,
                subtract: false,
            },
        };
        let (plan, cost) = plan_members(&windows, &members, Sharing::PartitionedBy, &workload);
        let alone = cost_alone(&windows, &members, &workload);
        assert!(cost <= alone * (1.0 + 1e-9), "{cost} > {alone}: {plan:?}");
        for slot in 0..windows.len() {
            let n = plan
                .nodes
                .iter()
                .filter(|n| n.user_windows.contains(&slot))
                .count();
            assert_eq!(n, 1, "slot {slot} in {plan:?}");
        }
        for (i, n) in plan.nodes.iter().enumerate() {
            if let Some(p) = n.parent {
                assert!(p < i, "parents first");
                assert!(n.window.is_covered_by(&plan.nodes[p].window));
            }
        }
    }

    /// The model cost of planning each member's windows on its own (per second).
    fn cost_alone(windows: &[Window], members: &[Vec<usize>], workload: &Workload) -> f64 {
        members
            .iter()
            .map(|m| {
                let own: Vec<Window> = m.iter().map(|&s| windows[s]).collect();
                optimize_for(&own, Sharing::PartitionedBy, workload)
                    .chosen()
                    .total
                    .per_sec
            })
            .sum()
    }

    fn slides() -> impl proptest::strategy::Strategy<Value = (i64, i64)> {
        use proptest::prelude::*;
        // Co-prime and common slides of 1 to 60 minutes, ranges of 1 to 24 slides.
        (1i64..=60, 1i64..=24).prop_map(|(s, k)| (s * k, s))
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

        /// The chosen plan of random dashboard families (grouped or not, with Two-Stacks
        /// and subtract-on-evict allowed or not, at rates from sparse to dense) never costs
        /// more in the model than the members alone, and each node's aggregator is the
        /// cheapest the model allows for its edge.
        #[test]
        fn the_chosen_plan_never_costs_more_than_each_query_alone(
            sets in proptest::collection::vec(proptest::collection::vec(slides(), 1..4), 1..6),
            groups in proptest::option::of(1.0f64..2000.0),
            two_stacks in proptest::bool::ANY,
            subtract in proptest::bool::ANY,
            eta_per_min in 0.1f64..1000.0,
        ) {
            let mut windows = Vec::new();
            let mut members = Vec::new();
            for set in &sets {
                members.push((windows.len()..windows.len() + set.len()).collect::<Vec<_>>());
                windows.extend(set.iter().map(|&(r, s)| w(r, s)));
            }
            let workload = Workload {
                eta_per_sec: eta_per_min / 60.0,
                groups: groups.map_or(Groups::One, Groups::Estimated),
                sliders: Sliders { two_stacks, subtract },
            };
            let (plan, cost) =
                plan_members(&windows, &members, Sharing::PartitionedBy, &workload);
            let alone = cost_alone(&windows, &members, &workload);
            proptest::prop_assert!(cost <= alone * (1.0 + 1e-9), "{} > {}: {:?}", cost, alone, plan);
            let model = super::super::cost::CostModel::for_workload(&windows, &workload);
            for n in &plan.nodes {
                let Some(p) = n.parent else { continue };
                let source = super::super::cost::Source::Window(&plan.nodes[p].window);
                let (best, _) = model.best(&n.window, source);
                proptest::prop_assert_eq!(n.slider, best, "{:?}", n);
            }
        }
    }

    #[test]
    fn duplicates_are_computed_once_side_by_side() {
        let windows = [w(10, 10), w(20, 20), w(10, 10)];
        let members = vec![vec![0, 1], vec![2]];
        let (plan, _) = side_by_side(
            &windows,
            &members,
            Sharing::PartitionedBy,
            &Workload::paper(1.0 / 60.0),
        );
        assert_eq!(plan.nodes.len(), 2);
        assert_eq!(plan.nodes[0].user_windows, vec![0, 2]);
    }
}
