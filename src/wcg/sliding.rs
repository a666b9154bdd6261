//! The sliding-window aggregator of each plan node, chosen by cost.
//!
//! The paper's executor computes an instance of `W` from its parent `W'` by merging the
//! `M(W, W')` covering partials into it (Theorem 3), so a window whose range is many of its
//! parent's slides merges each parent partial `M` times. A node may instead treat its
//! parent's closed partials as a FIFO and keep a sliding-window aggregator over them, which
//! makes the cost of an instance independent of `M`:
//!
//! - [`Slider::Panes`]: every open instance merges each covering partial (the paper;
//!   `M` merges per instance). Always allowed, and the only choice for a root, which folds
//!   raw tuples into its open instances.
//! - [`Slider::TwoStacks`]: per group, a Two-Stacks queue of the group's partials
//!   (Tangwongsan, Hirzel, Schneider, "Low-Latency Sliding-Window Aggregation in Worst-Case
//!   Constant Time", DEBS 2017, section 3): each partial is copied into its group's queue,
//!   merged into the back aggregate once and into a suffix aggregate once when the stacks
//!   flip, and the window's table, kept across slide events, is recomputed only for the
//!   groups whose partials entered or left: `3k g(W') + min(2k g(W'), T(W))` per instance,
//!   `k = s / s'` partials per slide, `T(W)` the groups among `eta min(2s, r)` tuples. Only
//!   for aggregates whose merge is exactly associative (counts, integer sums and averages,
//!   min and max, integer variances): floats and numerics would round differently from the
//!   window computed by panes.
//! - [`Slider::SubtractOnEvict`]: per group, a running total that adds each partial as it
//!   comes and subtracts it as it leaves: `2k g(W')` per instance. Only for invertible
//!   aggregates computed exactly: count, and sum and avg over integers (never floats).
//!
//! `g(W)` is the expected number of groups in a partial of `W` ([`Groups`]): 1 without GROUP
//! BY, as the paper counts a partial; for a grouped query, `G (1 - e^(-eta r / G))` distinct
//! groups among the `eta r` tuples of an instance drawn from `G` groups, once `G` has been
//! estimated from the data, and 1 before (the paper's count). A merge is counted per group
//! because that is what it costs: merging a one-minute pane of a dozen flights into an
//! instance is a dozen merges, not one, which is what makes small panes dear.
//!
//! Design decision: the choice is part of the cost model ([`super::cost::CostModel`]), so
//! Algorithm 1, the factor-window search and the final choice all see the cost of the
//! aggregator each edge would run, and EXPLAIN shows, per node, the model cost of every
//! option the aggregates allow.

use std::fmt;

/// How a plan node computes its instances from its parent's partials.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Slider {
    /// Each open instance merges every covering partial, or folds raw tuples (a root).
    #[default]
    Panes,
    /// Per-group Two-Stacks over the parent's partials (amortised O(1) merges a partial).
    TwoStacks,
    /// Per-group running totals: add each partial, subtract it when it leaves.
    SubtractOnEvict,
}

impl Slider {
    /// Every option, in the order EXPLAIN lists them (ties keep the earlier one).
    pub(crate) const ALL: [Slider; 3] = [Slider::Panes, Slider::SubtractOnEvict, Slider::TwoStacks];

    /// The name EXPLAIN prints: `panes`, `two-stacks`, `subtract-on-evict`.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Slider::Panes => "panes",
            Slider::TwoStacks => "two-stacks",
            Slider::SubtractOnEvict => "subtract-on-evict",
        }
    }
}

impl fmt::Display for Slider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which sliding aggregators the aggregate states allow besides [`Slider::Panes`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Sliders {
    /// Every state merges exactly associatively ([`Slider::TwoStacks`]).
    pub two_stacks: bool,
    /// Every state can subtract a partial exactly ([`Slider::SubtractOnEvict`]).
    pub subtract: bool,
}

impl Sliders {
    /// Panes only: the paper's executor.
    pub const PANES: Sliders = Sliders {
        two_stacks: false,
        subtract: false,
    };

    /// Whether `s` is allowed.
    pub(crate) fn allows(&self, s: Slider) -> bool {
        match s {
            Slider::Panes => true,
            Slider::TwoStacks => self.two_stacks,
            Slider::SubtractOnEvict => self.subtract,
        }
    }
}

/// The number of groups a partial holds, for the cost model.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Groups {
    /// No GROUP BY: one state per partial, as the paper counts it.
    #[default]
    One,
    /// Grouped, before the data has shown how many groups there are: one per partial, as
    /// the paper counts it.
    Unknown,
    /// Grouped, with about this many distinct groups (at least 1; may be infinite when
    /// every tuple seen had a key of its own).
    Estimated(f64),
}

impl Groups {
    /// Expected distinct groups among `tuples` tuples: 1 for [`Groups::One`] and
    /// [`Groups::Unknown`]; `G (1 - e^(-tuples / G))` (the occupancy of `G` groups drawn
    /// uniformly), at most `tuples`, for an estimate `G`.
    pub(crate) fn among(&self, tuples: f64) -> f64 {
        match *self {
            Groups::One | Groups::Unknown => 1.0,
            Groups::Estimated(g) if g.is_infinite() => tuples.max(0.0),
            Groups::Estimated(g) => {
                let g = g.max(1.0);
                (g * -(-tuples.max(0.0) / g).exp_m1()).min(tuples.max(0.0))
            }
        }
    }

    /// `G` from `distinct` keys seen among `tuples` tuples: the `G` whose occupancy
    /// ([`Groups::among`]) is `distinct`, found by bisection; infinite when every tuple had
    /// a key of its own.
    pub fn estimate(distinct: usize, tuples: usize) -> Groups {
        let (d, n) = (distinct as f64, tuples as f64);
        if tuples == 0 || distinct == 0 {
            return Groups::Unknown;
        }
        if distinct >= tuples {
            return Groups::Estimated(f64::INFINITY);
        }
        // among(G) grows with G from 1 (G = 1) towards n (G large): bisect on G in [d, big].
        let (mut lo, mut hi) = (d, d.max(1.0));
        while Groups::Estimated(hi).among(n) < d && hi < 1e15 {
            hi *= 2.0;
        }
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if Groups::Estimated(mid).among(n) < d {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Groups::Estimated(hi)
    }
}

/// What the cost model needs to know of a query beyond its windows.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Workload {
    /// `eta`: events per second of stream time.
    pub eta_per_sec: f64,
    /// Groups per partial.
    pub groups: Groups,
    /// The sliding aggregators the aggregates allow.
    pub sliders: Sliders,
}

impl Workload {
    /// The paper's model: one state per partial, panes only, at `eta_per_sec`.
    pub(crate) fn paper(eta_per_sec: f64) -> Workload {
        Workload {
            eta_per_sec,
            groups: Groups::One,
            sliders: Sliders::PANES,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occupancy_and_its_inverse() {
        assert_eq!(Groups::One.among(1000.0), 1.0);
        assert_eq!(Groups::Unknown.among(0.5), 1.0);
        let g = Groups::Estimated(229.0);
        // 115 flights of 229 origins drawn uniformly: about 90 distinct.
        assert!((g.among(115.0) - 90.3).abs() < 0.5, "{}", g.among(115.0));
        assert!(g.among(1e9) <= 229.0 + 1e-9);
        assert!(g.among(0.2) <= 0.2);
        match Groups::estimate(90, 115) {
            Groups::Estimated(x) => assert!((x - 228.0).abs() < 5.0, "{x}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(Groups::estimate(7, 7), Groups::Estimated(f64::INFINITY));
        assert_eq!(Groups::estimate(0, 0), Groups::Unknown);
        match Groups::estimate(1, 1000) {
            Groups::Estimated(x) => assert!(x < 1.01, "{x}"),
            other => panic!("{other:?}"),
        }
    }
}
