//! Algorithm 1: the min-cost WCG.
//!
//! Every window starts at the cost of computing it from raw events, `c_i = n_i * eta * r_i`
//! (line 3), and takes the cheapest incoming edge, `c_i = min(c_i, n_i * M(W_i, W'))`
//! (lines 4-5); all other incoming edges are dropped (lines 6-7). Each window keeps at most
//! one parent, so the result is a forest (Theorem 7), and since the choice of each window is
//! independent of the others the result is optimal for the graph it is given. Ties keep the
//! raw source, then the earliest upstream vertex, so plans are deterministic.

use super::cost::{clearly_less, Cost, CostModel, Source};
use super::graph::{Vertex, Wcg};
use super::sliding::Slider;
use super::{PlanNode, SharedPlan};

/// One window of a min-cost forest.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ForestNode {
    /// The window and the user windows it computes.
    pub(crate) vertex: Vertex,
    /// The upstream vertex whose partials it merges; `None` when it reads raw events (its
    /// edge comes from the virtual root `S`).
    pub(crate) parent: Option<usize>,
    /// `M(W, parent)` when it has a parent.
    pub(crate) multiplier: Option<i64>,
    /// How its instances are computed from the parent's partials (panes for a root).
    pub(crate) slider: Slider,
    /// Its cost under the chosen edge and aggregator.
    pub(crate) cost: Cost,
}

/// A min-cost WCG: a forest over the vertices of the graph it was computed from (same
/// indices).
#[derive(Clone, Debug, PartialEq)]
pub struct Forest {
    /// One node per vertex.
    pub(crate) nodes: Vec<ForestNode>,
    /// The sum of the nodes' costs.
    pub total: Cost,
}

/// Algorithm 1 over `wcg` under `model`.
pub(crate) fn algorithm1(wcg: &Wcg, model: &CostModel) -> Forest {
    let nodes: Vec<ForestNode> = (0..wcg.vertices.len())
        .map(|v| {
            let window = &wcg.vertices[v].window;
            let (slider, cost) = model.best(window, Source::Raw);
            let mut best = (None, None, slider, cost);
            for e in wcg.incoming(v) {
                let up = &wcg.vertices[e.upstream].window;
                let (slider, cost) = model.best(window, Source::Window(up));
                if clearly_less(cost.per_sec, best.3.per_sec) {
                    best = (Some(e.upstream), Some(e.multiplier), slider, cost);
                }
            }
            ForestNode {
                vertex: wcg.vertices[v].clone(),
                parent: best.0,
                multiplier: best.1,
                slider: best.2,
                cost: best.3,
            }
        })
        .collect();
    let forest = Forest {
        total: Cost::sum(nodes.iter().map(|n| n.cost)),
        nodes,
    };
    debug_assert!(
        forest.is_forest(),
        "Theorem 7: coverage is a partial order, so no cycles"
    );
    forest
}

impl Forest {
    /// The forest in which every vertex reads raw events: the unshared baseline.
    pub(crate) fn unshared(wcg: &Wcg, model: &CostModel) -> Forest {
        let nodes: Vec<ForestNode> = wcg
            .vertices
            .iter()
            .map(|v| ForestNode {
                vertex: v.clone(),
                parent: None,
                multiplier: None,
                slider: Slider::Panes,
                cost: model.window_cost(&v.window, Source::Raw),
            })
            .collect();
        Forest {
            total: Cost::sum(nodes.iter().map(|n| n.cost)),
            nodes,
        }
    }

    /// True when following parents from any node ends at a root (Theorem 7).
    pub(crate) fn is_forest(&self) -> bool {
        (0..self.nodes.len()).all(|start| {
            let mut v = start;
            for _ in 0..=self.nodes.len() {
                match self.nodes[v].parent {
                    None => return true,
                    Some(p) => v = p,
                }
            }
            false
        })
    }

    /// The children of node `v`, in index order.
    pub(crate) fn children(&self, v: usize) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&c| self.nodes[c].parent == Some(v))
            .collect()
    }

    /// The nodes in topological order: each root (in index order) followed by its subtree,
    /// depth first, children in index order.
    pub(crate) fn topological_order(&self) -> Vec<usize> {
        let mut order = Vec::with_capacity(self.nodes.len());
        let mut stack: Vec<usize> = (0..self.nodes.len())
            .rev()
            .filter(|&v| self.nodes[v].parent.is_none())
            .collect();
        while let Some(v) = stack.pop() {
            order.push(v);
            stack.extend(self.children(v).into_iter().rev());
        }
        debug_assert_eq!(order.len(), self.nodes.len(), "a forest reaches every node");
        order
    }

    /// The executor's view: nodes in topological order, parents as plan indices.
    pub(crate) fn to_shared_plan(&self) -> SharedPlan {
        let order = self.topological_order();
        let mut position = vec![0; self.nodes.len()];
        for (i, &v) in order.iter().enumerate() {
            position[v] = i;
        }
        let nodes = order
            .iter()
            .map(|&v| {
                let n = &self.nodes[v];
                if let Some(p) = n.parent {
                    let up = &self.nodes[p].vertex.window;
                    debug_assert!(
                        n.vertex.window.is_covered_by(up),
                        "the executor merges M(W, parent) consecutive parent instances, which \
                         tile W's instances only when the parent covers W (Theorem 1)"
                    );
                }
                PlanNode {
                    window: n.vertex.window,
                    user_windows: n.vertex.user_windows.clone(),
                    parent: n.parent.map(|p| position[p]),
                    slider: n.slider,
                }
            })
            .collect();
        SharedPlan { nodes }
    }
}
