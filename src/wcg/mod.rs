//! The window coverage graph (WCG): sharing sub-aggregates between correlated windows.
//!
//! Paper: Wu, Bernstein, Raizman, Pavlopoulou, "Cost-based Query Rewriting Techniques for
//! Optimizing Aggregates Over Correlated Windows" (DESIGN.md section 3 restates it).
//! The executor consumes [`SharedPlan`]: a forest of windows in which every non-root node
//! is computed from its parent's partial aggregates.

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
                None => nodes.push(PlanNode { window: *w, user_windows: vec![i], parent: None }),
            }
        }
        SharedPlan { nodes }
    }
}

/// Plan `windows` under `sharing` with event rate `eta_per_sec` (events per second).
/// The result computes every user window; it equals the unshared plan when nothing can be
/// shared. (Algorithm 1 and factor windows land with the optimizer.)
pub fn plan(windows: &[Window], _sharing: Sharing, _eta_per_sec: f64) -> SharedPlan {
    SharedPlan::unshared(windows)
}
