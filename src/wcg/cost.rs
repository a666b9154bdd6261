//! The cost model of paper section 3.2, in a form that cannot overflow.
//!
//! The paper counts the events processed during one period `R = lcm(r_1, ..., r_n)`:
//! window `W_i` has `n_i = 1 + (R - r_i) / s_i` instances in it (Equation 1); an instance
//! computed from raw events costs `eta * r_i`, one computed from an upstream window `W'`
//! costs `M(W_i, W')` partial aggregates (Observation 1). For co-prime ranges written in
//! microseconds `R` overflows any integer type, so plans are *ranked* by the long-run cost per
//! second of stream time instead: `eta * r_i / s_i` events per second from raw events,
//! `M(W_i, W') / s_i` partials per second from `W'`. Both forms agree on every choice
//! Algorithm 1 makes (the factor `n_i` is common to all incoming edges of `W_i`) and on
//! tumbling windows, where `n_i / R = 1 / s_i` exactly; for hopping windows the R-period
//! form adds a boundary term `1 - r_i / s_i` per period that vanishes in the long run. The
//! paper's R-period figures are still computed, exactly from integers, whenever `R` fits in
//! an `i64` of microseconds, and EXPLAIN shows them beside the rate.
//!
//! Beyond the paper, the model prices how each edge is executed: an instance computed from
//! an upstream window costs what its sliding aggregator does ([`super::sliding`]): `M`
//! partials for panes (the paper's `mu`), `3k` plus one merge per group the slide event
//! touches for Two-Stacks, `2k` for subtract-on-evict, each partial counted once per group
//! it holds. With one group per
//! partial and panes only ([`CostModel::new`]) the figures are the paper's.
//!
//! Rates are `f64`: a window's rate is at most `eta * 2^63`, far from `f64::MAX`, and the
//! relative rounding error of a sum of a few dozen terms is about `1e-15`, so comparisons use
//! a relative tolerance [`TIE_TOLERANCE`] and ties keep the earlier (simpler) choice.

use super::sliding::{Groups, Slider, Sliders, Workload};
use crate::window::{lcm_checked, Window};

/// Relative tolerance under which two costs count as equal (see the module docs).
pub(crate) const TIE_TOLERANCE: f64 = 1e-9;

const US_PER_SEC: f64 = 1_000_000.0;

/// `a < b` beyond rounding noise.
pub(crate) fn clearly_less(a: f64, b: f64) -> bool {
    a < b - TIE_TOLERANCE * a.abs().max(b.abs()).max(1e-300)
}

/// `a <= b` up to rounding noise.
pub(crate) fn at_most(a: f64, b: f64) -> bool {
    !clearly_less(b, a)
}

/// A cost in the two forms of the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Cost {
    /// Long-run events (raw tuples folded plus partials merged) per second of stream time;
    /// plans are ranked by this.
    pub per_sec: f64,
    /// The paper's figure: events per period `R` (`c_i = n_i * mu_i`), when `R` fits.
    pub(crate) per_period: Option<f64>,
}

impl Cost {
    /// The sum of two costs; the period figure only when both have one.
    pub(crate) fn plus(self, other: Cost) -> Cost {
        Cost {
            per_sec: self.per_sec + other.per_sec,
            per_period: self.per_period.zip(other.per_period).map(|(a, b)| a + b),
        }
    }

    /// The sum of many costs (zero for none).
    pub(crate) fn sum(costs: impl IntoIterator<Item = Cost>) -> Cost {
        costs.into_iter().fold(
            Cost {
                per_sec: 0.0,
                per_period: Some(0.0),
            },
            Cost::plus,
        )
    }

    /// Events per hour of stream time.
    pub(crate) fn per_hour(&self) -> f64 {
        self.per_sec * 3600.0
    }
}

/// Where a window's instances come from: the raw stream (the virtual root `S` of the
/// augmented WCG) or the partials of an upstream window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source<'a> {
    /// Raw tuples: the paper's virtual root `S`.
    Raw,
    /// Partial aggregates of this upstream window (`W <= upstream`).
    Window(&'a Window),
}

/// The cost model: event rate, period, groups per partial and the sliding aggregators the
/// aggregates allow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CostModel {
    /// `eta`: events per second of stream time.
    pub(crate) eta_per_sec: f64,
    /// `R`, microseconds, when it fits in an `i64`.
    pub(crate) period_us: Option<i64>,
    /// Groups per partial (one for the paper's model).
    pub(crate) groups: Groups,
    /// The sliding aggregators an edge may run besides panes (none for the paper's model).
    pub(crate) sliders: Sliders,
}

impl CostModel {
    #[cfg(test)]
    /// The paper's model for `windows` (whose ranges define `R`) at `eta_per_sec` events per
    /// second: one state per partial, panes only. A negative or non-finite rate counts as 0.
    pub(crate) fn new(windows: &[Window], eta_per_sec: f64) -> CostModel {
        CostModel::for_workload(windows, &Workload::paper(eta_per_sec))
    }

    /// The model for `windows` under `workload` (rate, groups, allowed aggregators).
    pub(crate) fn for_workload(windows: &[Window], workload: &Workload) -> CostModel {
        let eta = workload.eta_per_sec;
        let eta = if eta.is_finite() && eta > 0.0 {
            eta
        } else {
            0.0
        };
        CostModel {
            eta_per_sec: eta,
            period_us: period_us(windows),
            groups: workload.groups,
            sliders: workload.sliders,
        }
    }

    /// True for the paper's model (one state per partial, panes only), under which the
    /// paper's theorems about factor windows (Theorem 8, Algorithm 4's domination) hold.
    pub(crate) fn is_paper(&self) -> bool {
        self.groups == Groups::One && self.sliders == Sliders::PANES
    }

    /// Expected groups in one partial (instance) of `w`: see [`Groups::among`].
    pub(crate) fn partial_groups(&self, w: &Window) -> f64 {
        self.groups
            .among(self.eta_per_sec * w.range_us as f64 / US_PER_SEC)
    }

    /// Expected groups a slide event of `w` touches when a sliding aggregator computes it:
    /// those of the partials that enter (one slide of tuples) and leave (another), at most
    /// the groups of the instance: the occupancy of `eta * min(2s, r)` tuples.
    pub(crate) fn touched_groups(&self, w: &Window) -> f64 {
        let span_us = w.range_us.min(w.slide_us.saturating_mul(2));
        self.groups
            .among(self.eta_per_sec * span_us as f64 / US_PER_SEC)
    }

    /// `mu` under aggregator `slider`: the cost of one instance of `w` computed from
    /// `source`, or `None` when `slider` cannot compute it (a sliding aggregator reads an
    /// upstream window's partials; subtract-on-evict needs them not to overlap). From raw
    /// events, `eta * r` tuples folded (paper section 3.2); from an upstream window, panes
    /// merge `M(w, upstream)` partials (Theorem 3); subtract-on-evict `2k` (each partial
    /// added once and subtracted once), with `k = s / s'` partials entering per slide;
    /// Two-Stacks `3k` (each partial copied into its group's queue, merged into the back
    /// aggregate, merged again when the stacks flip) plus one merge per group the slide
    /// event touches ([`CostModel::touched_groups`], at most `2k`: the kept table of
    /// `exec::slide::groups` recomputes only those). Every partial counts once per group
    /// it holds ([`CostModel::partial_groups`]).
    pub(crate) fn option_cost(
        &self,
        w: &Window,
        source: Source<'_>,
        slider: Slider,
    ) -> Option<f64> {
        match (source, slider) {
            (Source::Raw, Slider::Panes) => Some(self.eta_per_sec * w.range_us as f64 / US_PER_SEC),
            (Source::Raw, _) => None,
            (Source::Window(up), Slider::Panes) => {
                Some(w.covering_multiplier(up) as f64 * self.partial_groups(up))
            }
            (Source::Window(up), Slider::TwoStacks) => {
                let entering = (w.slide_us / up.slide_us) as f64 * self.partial_groups(up);
                Some(3.0 * entering + self.touched_groups(w).min(2.0 * entering))
            }
            (Source::Window(up), Slider::SubtractOnEvict) => {
                let k = (w.slide_us / up.slide_us) as f64;
                w.is_partitioned_by(up)
                    .then(|| 2.0 * k * self.partial_groups(up))
            }
        }
    }

    /// Every aggregator the model allows for `w` from `source`, with its cost, in the order
    /// of [`Slider::ALL`].
    pub(crate) fn options(&self, w: &Window, source: Source<'_>) -> Vec<(Slider, Cost)> {
        Slider::ALL
            .into_iter()
            .filter(|s| self.sliders.allows(*s))
            .filter_map(|s| {
                self.option_cost(w, source, s)
                    .map(|mu| (s, self.cost_of(w, mu)))
            })
            .collect()
    }

    /// The cheapest aggregator for `w` from `source` and its cost; ties keep the earlier
    /// option of [`Slider::ALL`] (panes first).
    pub(crate) fn best(&self, w: &Window, source: Source<'_>) -> (Slider, Cost) {
        let mut best: Option<(Slider, Cost)> = None;
        for (s, c) in self.options(w, source) {
            if best.is_none_or(|(_, b)| clearly_less(c.per_sec, b.per_sec)) {
                best = Some((s, c));
            }
        }
        best.expect("panes are always an option")
    }

    /// The cost of computing every instance of `w` from `source` with its cheapest
    /// aggregator: rate and R-period figure.
    pub(crate) fn window_cost(&self, w: &Window, source: Source<'_>) -> Cost {
        self.best(w, source).1
    }

    /// The cost of every instance of `w` at `mu` events per instance.
    fn cost_of(&self, w: &Window, mu: f64) -> Cost {
        Cost {
            per_sec: mu * US_PER_SEC / w.slide_us as f64,
            per_period: self.period_us.map(|r| recurrence_count(w, r) * mu),
        }
    }
}

/// `R = lcm(r_1, ..., r_n)` in microseconds, `None` when it exceeds `i64::MAX` (292 000
/// years) or the set is empty.
pub(crate) fn period_us(windows: &[Window]) -> Option<i64> {
    let mut r: u128 = 1;
    for w in windows {
        r = lcm_checked(r, w.range_us as u128)?;
        if r > i64::MAX as u128 {
            return None;
        }
    }
    (!windows.is_empty()).then_some(r as i64)
}

/// Equation 1: the recurrence count `n_i = 1 + (R - r_i) / s_i` of `w` in a period of
/// `period_us`, exact up to one final rounding (an integer when `r_i` is a multiple of `s_i`).
pub(crate) fn recurrence_count(w: &Window, period_us: i64) -> f64 {
    let excess = period_us as i128 - w.range_us as i128;
    let whole = excess.div_euclid(w.slide_us as i128);
    let part = excess.rem_euclid(w.slide_us as i128);
    1.0 + whole as f64 + part as f64 / w.slide_us as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::Start;

    const MIN: i64 = 60_000_000;

    fn tumbling(minutes: i64) -> Window {
        Window::new(minutes * MIN, minutes * MIN, Start::Epoch).unwrap()
    }

    #[test]
    fn paper_example_6_figures() {
        let set: Vec<Window> = [10, 20, 30, 40].map(tumbling).to_vec();
        let model = CostModel::new(&set, 1.0 / 60.0);
        assert_eq!(model.period_us, Some(120 * MIN));
        assert_eq!(recurrence_count(&set[0], 120 * MIN), 12.0);
        let raw = model.window_cost(&set[1], Source::Raw);
        assert!((raw.per_period.unwrap() - 120.0).abs() < 1e-9);
        assert!((raw.per_hour() - 60.0).abs() < 1e-9);
        let shared = model.window_cost(&set[3], Source::Window(&set[1]));
        assert_eq!(shared.per_period, Some(6.0));
    }

    /// Two-Stacks is priced as the kept table runs it: `3k` per entering partial's group
    /// (copy, back merge, flip merge) and one merge per group the slide event touches,
    /// those of one slide in and one out, never more than `2k g(W')`.
    #[test]
    fn two_stacks_prices_the_groups_a_slide_event_touches() {
        let hop = |r: i64, s: i64| Window::new(r * MIN, s * MIN, Start::Epoch).unwrap();
        let (pane, day) = (tumbling(1), hop(1440, 60));
        let workload = |groups| Workload {
            eta_per_sec: 11.4 / 60.0,
            groups,
            sliders: Sliders {
                two_stacks: true,
                subtract: false,
            },
        };
        // Ungrouped: 3k + 1 per instance.
        let one = CostModel::for_workload(&[pane, day], &workload(Groups::One));
        let ts = one.option_cost(&day, Source::Window(&pane), Slider::TwoStacks);
        assert_eq!(ts, Some(3.0 * 60.0 + 1.0));
        // 229 origins: 60 one-minute panes of about 11 groups enter per hour; the slide
        // event touches the groups of two hours of flights (about 218), not 2k g(W') = 1331.
        let g = CostModel::for_workload(&[pane, day], &workload(Groups::Estimated(229.0)));
        let entering = 60.0 * g.partial_groups(&pane);
        let touched = g.touched_groups(&day);
        assert!((touched - g.groups.among(11.4 * 120.0)).abs() < 1e-9);
        assert!(touched < g.partial_groups(&day) && touched < 2.0 * entering);
        let ts = g
            .option_cost(&day, Source::Window(&pane), Slider::TwoStacks)
            .unwrap();
        assert!((ts - (3.0 * entering + touched)).abs() < 1e-9, "{ts}");
        // A tumbling window's slide event touches at most its own groups.
        let hour = tumbling(60);
        assert!((g.touched_groups(&hour) - g.partial_groups(&hour)).abs() < 1e-9);
    }

    #[test]
    fn co_prime_ranges_have_no_period_but_a_rate() {
        let s = 1_000_000;
        let set: Vec<Window> = [7 * s, 11 * s, 13 * s, 17 * 60 * s, 23 * 3600 * s]
            .map(|r| Window::new(r, r, Start::Epoch).unwrap())
            .to_vec();
        let huge: Vec<Window> = set
            .iter()
            .chain(&[Window::new(i64::MAX - 24, 1, Start::Epoch).unwrap()])
            .copied()
            .collect();
        assert!(period_us(&set).is_some());
        assert_eq!(period_us(&huge), None);
        let model = CostModel::new(&huge, 1e9);
        let c = model.window_cost(&huge[5], Source::Raw);
        assert!(c.per_sec.is_finite() && c.per_period.is_none());
    }
}
