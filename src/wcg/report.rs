//! The optimizer's named steps and their results: what EXPLAIN shows.
//!
//! [`optimize`] runs the steps in order, keeping each one's result in the [`PlanReport`]:
//! 1. the WCG of the query's windows under the aggregates' relation (section 2.2);
//! 2. the unshared baseline: every window from raw events;
//! 3. Algorithm 1, the min-cost WCG (section 3.2);
//! 4. Algorithm 2, factor windows (section 4), for "covered by" and "partitioned by";
//! 5. the final choice: the cheaper of Algorithms 1 and 2 (Algorithm 2 is a heuristic for a
//!    Steiner-tree-hard problem and may lose), ties going to the plan without factor windows;
//! 6. slide panes ([`super::slide_panes`]): per parent and slide, a tumbling factor window of
//!    the slide under the windows of that slide, where it lowers the chosen forest's cost
//!    (priced model only).

use super::alg1::{algorithm1, Forest};
use super::cost::{clearly_less, CostModel};
use super::factor::{algorithm2, Algorithm2};
use super::graph::Wcg;
use super::slide_panes::slide_panes;
use super::sliding::Workload;
use super::{SharedPlan, Sharing};
use crate::window::{pane_window, Window};

/// Which step's forest the plan follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Choice {
    /// No sharing allowed ([`Sharing::None`]) or no window set: every window from raw events.
    Unshared,
    /// Algorithm 1's min-cost WCG.
    Algorithm1,
    /// Algorithm 2's min-cost WCG with factor windows.
    Algorithm2,
}

/// Every step of the optimizer with its result.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanReport {
    /// The relation the aggregates allow.
    pub(crate) sharing: Sharing,
    /// The event rate `eta` used, events per second.
    pub(crate) eta_per_sec: f64,
    /// The cost model every step used (rate, period, groups, allowed aggregators).
    pub(crate) model: CostModel,
    /// The query's windows, in the order it lists them.
    pub(crate) windows: Vec<Window>,
    /// The virtual root `S`: the pane `<g, g>` of the window set.
    pub pane: Option<Window>,
    /// The period `R` (microseconds) of the R-period figures, when it fits.
    pub period_us: Option<i64>,
    /// Step 1: the WCG over the distinct windows.
    pub(crate) wcg: Wcg,
    /// Step 2: the unshared baseline.
    pub unshared: Forest,
    /// Step 3: Algorithm 1.
    pub algorithm1: Forest,
    /// Step 4: Algorithm 2 (not run for [`Sharing::None`]).
    pub(crate) algorithm2: Option<Algorithm2>,
    /// Step 5: the final choice.
    pub(crate) choice: Choice,
    /// Step 6: the chosen forest with slide panes, when any lowers its cost.
    pub(crate) slide_panes: Option<Forest>,
    /// The plan the executor runs, following the chosen forest.
    pub plan: SharedPlan,
}

impl PlanReport {
    /// The forest the plan follows: step 5's choice, with slide panes when step 6 found
    /// some.
    pub fn chosen(&self) -> &Forest {
        self.slide_panes
            .as_ref()
            .unwrap_or_else(|| self.before_slide_panes())
    }

    /// Step 5's choice, before slide panes.
    pub(crate) fn before_slide_panes(&self) -> &Forest {
        match (self.choice, &self.algorithm2) {
            (Choice::Algorithm2, Some(a2)) => &a2.forest,
            (Choice::Unshared, _) => &self.unshared,
            _ => &self.algorithm1,
        }
    }

    /// The plans the paper's evaluation compares, each with the executor's plan for it and
    /// its model cost per hour (paper Section 6): `BL` (every window computed on its own),
    /// `WCG` (Algorithm 1) and, when Algorithm 2 ran, `WCG-FW` (with factor windows).
    pub fn candidates(&self) -> Vec<(&'static str, SharedPlan, f64)> {
        let hour = |f: &Forest| f.total.per_hour();
        let mut plans = vec![
            (
                "BL",
                SharedPlan::unshared(&self.windows),
                hour(&self.unshared),
            ),
            (
                "WCG",
                self.algorithm1.to_shared_plan(),
                hour(&self.algorithm1),
            ),
        ];
        if let Some(a2) = &self.algorithm2 {
            plans.push(("WCG-FW", a2.forest.to_shared_plan(), hour(&a2.forest)));
        }
        plans
    }

    /// The saving of the chosen plan against the unshared baseline, in percent of the
    /// baseline (long-run rates).
    pub fn saving_percent(&self) -> f64 {
        percent_saved(self.chosen().total.per_sec, self.unshared.total.per_sec)
    }
}

/// `100 * (1 - cost / baseline)`, 0 for an empty baseline.
pub(crate) fn percent_saved(cost: f64, baseline: f64) -> f64 {
    if baseline > 0.0 {
        100.0 * (1.0 - cost / baseline)
    } else {
        0.0
    }
}

/// Run the optimizer's steps over `windows` (see the module docs) under the paper's cost
/// model (one state per partial, panes only).
pub fn optimize(windows: &[Window], sharing: Sharing, eta_per_sec: f64) -> PlanReport {
    optimize_for(windows, sharing, &Workload::paper(eta_per_sec))
}

/// Run the optimizer's steps over `windows` under `workload`'s cost model: groups per
/// partial and each node's sliding aggregator priced ([`super::sliding`]).
pub(crate) fn optimize_for(
    windows: &[Window],
    sharing: Sharing,
    workload: &Workload,
) -> PlanReport {
    let model = CostModel::for_workload(windows, workload);
    let wcg = Wcg::of_query(windows, sharing);
    let unshared = Forest::unshared(&wcg, &model);
    let pane = pane_window(windows);
    let (algorithm1, algorithm2, choice) = match (sharing, pane) {
        (Sharing::None, _) | (_, None) => (unshared.clone(), None, Choice::Unshared),
        (_, Some(pane)) => {
            let a1 = algorithm1(&wcg, &model);
            let a2 = algorithm2(&wcg, &pane, &model);
            let choice = if clearly_less(a2.forest.total.per_sec, a1.total.per_sec) {
                Choice::Algorithm2
            } else {
                Choice::Algorithm1
            };
            (a1, Some(a2), choice)
        }
    };
    let mut report = PlanReport {
        sharing,
        eta_per_sec: model.eta_per_sec,
        model,
        windows: windows.to_vec(),
        pane,
        period_us: model.period_us,
        wcg,
        unshared,
        algorithm1,
        algorithm2,
        choice,
        slide_panes: None,
        plan: SharedPlan { nodes: Vec::new() },
    };
    if report.choice != Choice::Unshared {
        report.slide_panes = slide_panes(report.before_slide_panes(), sharing, &model);
    }
    report.plan = report.chosen().to_shared_plan();
    report
}
