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
//! Rates are `f64`: a window's rate is at most `eta * 2^63`, far from `f64::MAX`, and the
//! relative rounding error of a sum of a few dozen terms is about `1e-15`, so comparisons use
//! a relative tolerance [`TIE_TOLERANCE`] and ties keep the earlier (simpler) choice.

use crate::window::{lcm_checked, Window};

/// Relative tolerance under which two costs count as equal (see the module docs).
pub const TIE_TOLERANCE: f64 = 1e-9;

const US_PER_SEC: f64 = 1_000_000.0;

/// `a < b` beyond rounding noise.
pub fn clearly_less(a: f64, b: f64) -> bool {
    a < b - TIE_TOLERANCE * a.abs().max(b.abs()).max(1e-300)
}

/// `a <= b` up to rounding noise.
pub fn at_most(a: f64, b: f64) -> bool {
    !clearly_less(b, a)
}

/// A cost in the two forms of the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Cost {
    /// Long-run events (raw tuples folded plus partials merged) per second of stream time;
    /// plans are ranked by this.
    pub per_sec: f64,
    /// The paper's figure: events per period `R` (`c_i = n_i * mu_i`), when `R` fits.
    pub per_period: Option<f64>,
}

impl Cost {
    /// The sum of two costs; the period figure only when both have one.
    pub fn plus(self, other: Cost) -> Cost {
        Cost {
            per_sec: self.per_sec + other.per_sec,
            per_period: self.per_period.zip(other.per_period).map(|(a, b)| a + b),
        }
    }

    /// The sum of many costs (zero for none).
    pub fn sum(costs: impl IntoIterator<Item = Cost>) -> Cost {
        costs.into_iter().fold(
            Cost {
                per_sec: 0.0,
                per_period: Some(0.0),
            },
            Cost::plus,
        )
    }

    /// Events per hour of stream time.
    pub fn per_hour(&self) -> f64 {
        self.per_sec * 3600.0
    }
}

/// Where a window's instances come from: the raw stream (the virtual root `S` of the
/// augmented WCG) or the partials of an upstream window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source<'a> {
    /// Raw tuples: the paper's virtual root `S`.
    Raw,
    /// Partial aggregates of this upstream window (`W <= upstream`).
    Window(&'a Window),
}

/// The cost model: event rate and period.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostModel {
    /// `eta`: events per second of stream time.
    pub eta_per_sec: f64,
    /// `R`, microseconds, when it fits in an `i64`.
    pub period_us: Option<i64>,
}

impl CostModel {
    /// The model for `windows` (whose ranges define `R`) at `eta_per_sec` events per second.
    /// A negative or non-finite rate counts as 0.
    pub fn new(windows: &[Window], eta_per_sec: f64) -> CostModel {
        let eta = if eta_per_sec.is_finite() && eta_per_sec > 0.0 {
            eta_per_sec
        } else {
            0.0
        };
        CostModel {
            eta_per_sec: eta,
            period_us: period_us(windows),
        }
    }

    /// `mu`: the cost of one instance of `w` computed from `source` (paper section 3.2):
    /// `eta * r` raw events, or `M(w, upstream)` partials (Theorem 3).
    pub fn instance_cost(&self, w: &Window, source: Source<'_>) -> f64 {
        match source {
            Source::Raw => self.eta_per_sec * w.range_us as f64 / US_PER_SEC,
            Source::Window(up) => w.covering_multiplier(up) as f64,
        }
    }

    /// The cost of computing every instance of `w` from `source`: rate and R-period figure.
    pub fn window_cost(&self, w: &Window, source: Source<'_>) -> Cost {
        let mu = self.instance_cost(w, source);
        Cost {
            per_sec: mu * US_PER_SEC / w.slide_us as f64,
            per_period: self.period_us.map(|r| recurrence_count(w, r) * mu),
        }
    }
}

/// `R = lcm(r_1, ..., r_n)` in microseconds, `None` when it exceeds `i64::MAX` (292 000
/// years) or the set is empty.
pub fn period_us(windows: &[Window]) -> Option<i64> {
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
pub fn recurrence_count(w: &Window, period_us: i64) -> f64 {
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
