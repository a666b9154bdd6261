//! The window algebra: windows, their instances, and how one window covers another.
//!
//! A window `W = <r, s, o>` (range, slide, start) has instances
//! `I_m = [o + m*s, o + m*s + r)`, half-open, for `m = 0, 1, 2, ...` (docs/sql.md, Windows).
//! With `START AT 'epoch'` the grid is unbounded: `o = 0` and `m` ranges over all integers,
//! so instances also cover times before 1970. All arithmetic uses floor division, never
//! truncation, and is carried out in `i128` so that no window a user can write overflows.
//!
//! The relations between windows are the paper's (Wu et al., section 3), generalised to start
//! offsets as the paper states them:
//! - [`Window::is_covered_by`]: Theorem 1 with offsets,
//! - [`Window::covering_multiplier`]: Theorem 3,
//! - [`Window::is_partitioned_by`]: Theorem 4.
//!
//! ```ignore
//! use tcq::window::{Window, Start};
//! let hour = 3_600_000_000;
//! let w = Window::new(hour, hour / 6, Start::Epoch).unwrap();   // RANGE 1 hour SLIDE 10 min
//! assert_eq!(w.instances_containing(0), (-5, 0));               // 6 instances hold t = 0
//! assert_eq!(w.lower_us(0), 0);
//! assert_eq!(w.upper_us(0), hour);
//! let pane = Window::new(hour / 6, hour / 6, Start::Epoch).unwrap();
//! assert!(w.is_partitioned_by(&pane));
//! assert_eq!(w.covering_multiplier(&pane), 6);
//! ```

use std::fmt;

/// Where a window's grid starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Start {
    /// The first instance starts at this instant (microseconds since the epoch); tuples
    /// before it belong to no instance.
    At(i64),
    /// `START AT 'epoch'`: the grid is anchored at the epoch and has no first instance.
    Epoch,
}

/// A window `<range, slide, start>`; range and slide in microseconds, both > 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Window {
    /// RANGE BY, microseconds.
    pub range_us: i64,
    /// SLIDE BY, microseconds.
    pub slide_us: i64,
    /// START AT.
    pub start: Start,
}

/// Why a window cannot be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WindowError {
    /// RANGE BY is zero or negative.
    RangeNotPositive {
        /// The offending range, microseconds.
        range_us: i64,
    },
    /// SLIDE BY is zero or negative.
    SlideNotPositive {
        /// The offending slide, microseconds.
        slide_us: i64,
    },
}

impl fmt::Display for WindowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WindowError::RangeNotPositive { range_us } => {
                write!(f, "RANGE BY must be positive, got {range_us} microseconds")
            }
            WindowError::SlideNotPositive { slide_us } => {
                write!(f, "SLIDE BY must be positive, got {slide_us} microseconds")
            }
        }
    }
}

/// `a` divided by `b`, rounded towards negative infinity. `b > 0`.
pub(crate) fn floor_div(a: i128, b: i128) -> i128 {
    debug_assert!(b > 0, "window slides are positive");
    // Both nearly always fit in 64 bits (instants and slides are i64): one hardware
    // division then, where a 128-bit one is a software routine run at every slide event.
    match (i64::try_from(a), i64::try_from(b)) {
        (Ok(a), Ok(b)) => i128::from(a.div_euclid(b)),
        _ => a.div_euclid(b),
    }
}

fn saturate(v: i128) -> i64 {
    v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

impl Window {
    /// A window with the given range and slide (microseconds) and start.
    ///
    /// Errors: [`WindowError`] when range or slide is not positive.
    pub fn new(range_us: i64, slide_us: i64, start: Start) -> Result<Window, WindowError> {
        if range_us <= 0 {
            return Err(WindowError::RangeNotPositive { range_us });
        }
        if slide_us <= 0 {
            return Err(WindowError::SlideNotPositive { slide_us });
        }
        Ok(Window {
            range_us,
            slide_us,
            start,
        })
    }

    /// The grid's offset `o`: the start instant, or 0 for an epoch grid.
    pub(crate) fn offset_us(&self) -> i64 {
        match self.start {
            Start::At(o) => o,
            Start::Epoch => 0,
        }
    }

    /// True when the grid has a first instance (`START AT` a timestamp).
    pub fn is_bounded(&self) -> bool {
        matches!(self.start, Start::At(_))
    }

    /// True for a tumbling window (range = slide).
    pub(crate) fn is_tumbling(&self) -> bool {
        self.range_us == self.slide_us
    }

    /// Lower end (inclusive) of instance `m`, saturated to the `i64` range.
    pub fn lower_us(&self, m: i64) -> i64 {
        saturate(self.lower_wide(m))
    }

    /// Upper end (exclusive) of instance `m`, saturated to the `i64` range.
    pub fn upper_us(&self, m: i64) -> i64 {
        saturate(self.lower_wide(m) + self.range_us as i128)
    }

    fn lower_wide(&self, m: i64) -> i128 {
        self.offset_us() as i128 + m as i128 * self.slide_us as i128
    }

    /// The lowest instance index the grid has: 0 when bounded, `i64::MIN` otherwise.
    pub(crate) fn first_index(&self) -> i64 {
        if self.is_bounded() {
            0
        } else {
            i64::MIN
        }
    }

    /// The indices `(lo, hi)` of the instances that contain instant `t_us`, inclusive;
    /// empty when `lo > hi` (before the first instance, or in a gap of a jumping window).
    pub(crate) fn instances_containing(&self, t_us: i64) -> (i64, i64) {
        let (lo, hi) = self.unbounded_instances_containing(t_us);
        let lo = lo.max(self.first_index() as i128);
        (saturate(lo), saturate(hi))
    }

    /// The instances `(lo, hi)` holding `t_us` (as [`Window::instances_containing`]) and the
    /// span `[from, to)` of instants around `t_us` whose set of instances is the same, so
    /// that a run of in-order tuples inside it folds into one set.
    pub(crate) fn instance_span(&self, t_us: i64) -> (i64, i64, i64, i64) {
        let (lo, hi) = self.instances_containing(t_us);
        let (lo_raw, hi_raw) = self.unbounded_instances_containing(t_us);
        let (s, r, o) = (
            self.slide_us as i128,
            self.range_us as i128,
            self.offset_us() as i128,
        );
        let from = (o + hi_raw * s).max(o + r + (lo_raw - 1) * s);
        let to = (o + (hi_raw + 1) * s).min(o + r + lo_raw * s);
        debug_assert!(
            from <= t_us as i128 && (t_us as i128) < to,
            "the span holds the instant it was computed for"
        );
        (lo, hi, saturate(from), saturate(to))
    }

    /// `(floor((t - o - r) / s) + 1, floor((t - o) / s))`: the instance indices holding
    /// `t_us` on the unbounded grid (no first instance), in i128.
    fn unbounded_instances_containing(&self, t_us: i64) -> (i128, i128) {
        let (s, r, o) = (
            self.slide_us as i128,
            self.range_us as i128,
            self.offset_us() as i128,
        );
        let rel = t_us as i128 - o;
        (floor_div(rel - r, s) + 1, floor_div(rel, s))
    }

    /// Index of the current instance at current time `now_us`: the instance with the latest
    /// end `<= now_us` (docs/sql.md, Windows). `None` before the first instance has ended.
    pub(crate) fn current_index(&self, now_us: i64) -> Option<i64> {
        let (s, r, o) = (
            self.slide_us as i128,
            self.range_us as i128,
            self.offset_us() as i128,
        );
        let m = floor_div(now_us as i128 - o - r, s);
        if m < self.first_index() as i128 {
            None
        } else {
            Some(saturate(m))
        }
    }

    /// Index of the first instance whose end is `> t_us`: the next instance to close after
    /// time `t_us` (never below the first index).
    pub fn next_closing_index(&self, t_us: i64) -> i64 {
        match self.current_index(t_us) {
            Some(m) => m.saturating_add(1),
            // Only a bounded grid has no current instance (before its first one ends).
            None => self.first_index(),
        }
    }

    /// Theorem 1 with offsets: `self` (W1) is covered by `up` (W2), `W1 <= W2`: every
    /// instance of W1 is the union of consecutive instances of W2.
    ///
    /// Holds iff `s1 mod s2 = 0`, `r1 >= r2`, `(r1 - r2) mod s2 = 0`, `(o1 - o2) mod s2 = 0`,
    /// and W1's instances all have covering instances in W2: `o1 >= o2` when W2 has a first
    /// instance; an unbounded W1 needs an unbounded W2. Every window covers itself.
    pub(crate) fn is_covered_by(&self, up: &Window) -> bool {
        let (r1, s1, o1) = (
            self.range_us as i128,
            self.slide_us as i128,
            self.offset_us() as i128,
        );
        let (r2, s2, o2) = (
            up.range_us as i128,
            up.slide_us as i128,
            up.offset_us() as i128,
        );
        let grid_fits = match (self.start, up.start) {
            (Start::Epoch, Start::At(_)) => false,
            (_, Start::Epoch) => true,
            (Start::At(_), Start::At(_)) => o1 >= o2,
        };
        // The paper assumes s <= r. A jumping upstream window (s2 > r2) leaves gaps between
        // its instances, so it can only cover a window of its own range (M = 1); without this
        // guard <7, 5> would count as covered by <2, 5> and lose the tuples in [2, 5).
        let no_gaps = r2 >= s2 || r1 == r2;
        grid_fits
            && no_gaps
            && s1 % s2 == 0
            && r1 >= r2
            && (r1 - r2) % s2 == 0
            && (o1 - o2).rem_euclid(s2) == 0
    }

    /// Theorem 3: the number of consecutive instances of `up` that make one instance of
    /// `self`, `M(W1, W2) = 1 + (r1 - r2) / s2`. Meaningful only when `self.is_covered_by(up)`.
    pub fn covering_multiplier(&self, up: &Window) -> i64 {
        debug_assert!(
            self.is_covered_by(up),
            "the multiplier is defined for covered windows only"
        );
        1 + (self.range_us - up.range_us) / up.slide_us
    }

    /// Theorem 4: `self` is partitioned by `up`: covered by it, `up` tumbling, and
    /// `r1 mod s2 = 0`, so its covering instances do not overlap.
    ///
    /// Also when `M = 1` (equal ranges): every instance of `self` is then one instance of `up`,
    /// a covering set of one, which Definition 5 calls a partition although `up` need not be
    /// tumbling (the paper's proof of Theorem 4 overlooks this case; the brute-force test
    /// below pins it down).
    pub fn is_partitioned_by(&self, up: &Window) -> bool {
        self.is_covered_by(up)
            && (self.range_us == up.range_us
                || (up.is_tumbling() && self.range_us % up.slide_us == 0))
    }

    /// The index of the first instance of `up` among the `M` that cover instance `m` of
    /// `self` (`self` covered by `up`).
    pub fn first_covering_index(&self, m: i64, up: &Window) -> i64 {
        // Run at every slide event of a sliding aggregator: in 64 bits when nothing
        // overflows (always, for instants of the i64 range), else widened.
        let narrow = m
            .checked_mul(self.slide_us)
            .and_then(|x| x.checked_add(self.offset_us()))
            .and_then(|x| x.checked_sub(up.offset_us()));
        if let Some(d) = narrow {
            return d.div_euclid(up.slide_us);
        }
        let lower = self.lower_wide(m);
        saturate(floor_div(
            lower - up.offset_us() as i128,
            up.slide_us as i128,
        ))
    }

    /// The last instance `m` of `self` whose first covering instance of `up`
    /// ([`Window::first_covering_index`]) is at most `j`: instances up to it close without
    /// evicting `up`'s instance `j` from a sliding aggregator. Saturated to the `i64` range.
    pub(crate) fn last_index_covered_from(&self, j: i64, up: &Window) -> i64 {
        // floor((m s + o - o') / s') <= j  <=>  m s <= (j + 1) s' + o' - o - 1.
        let bound = (j as i128 + 1) * up.slide_us as i128 + up.offset_us() as i128
            - self.offset_us() as i128
            - 1;
        saturate(floor_div(bound, self.slide_us as i128))
    }
}

/// Greatest common divisor (Euclid); `gcd(0, x) = x`.
pub(crate) fn gcd(a: u128, b: u128) -> u128 {
    let (mut a, mut b) = (a, b);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Least common multiple, `None` when it does not fit in a `u128` (the paper's period
/// `R = lcm(r_1, ..., r_n)` overflows for co-prime ranges such as 7 s, 11 s, 13 s, 17 min and
/// 23 h written in microseconds). `lcm(0, x) = 0`.
pub(crate) fn lcm_checked(a: u128, b: u128) -> Option<u128> {
    if a == 0 || b == 0 {
        return Some(0);
    }
    (a / gcd(a, b)).checked_mul(b)
}

/// The pane length `g` of a window set: the gcd of every range, slide and offset difference
/// (docs/sharing.md). The paper's atomic unit window `S<1, 1>` becomes the tumbling window
/// of length `g`, every window of the set is partitioned by it, and candidate factor windows
/// are multiples of it. Offsets count through their differences only, unless some window is
/// on the unbounded epoch grid, whose offset 0 then anchors every other offset too. `0` for an
/// empty set.
pub(crate) fn pane_us(windows: &[Window]) -> i64 {
    let any_epoch = windows.iter().any(|w| !w.is_bounded());
    let anchor = windows
        .first()
        .map_or(0, |w| if any_epoch { 0 } else { w.offset_us() as i128 });
    let mut g: u128 = 0;
    for w in windows {
        g = gcd(g, w.range_us as u128);
        g = gcd(g, w.slide_us as u128);
        g = gcd(g, (w.offset_us() as i128 - anchor).unsigned_abs());
    }
    // g divides a positive range, so it fits in an i64.
    g as i64
}

/// The virtual root `S` of the augmented WCG (paper section 4) on the pane grid of `windows`:
/// tumbling, of length [`pane_us`], on the epoch grid when some window is, else starting at the
/// earliest offset. It covers and partitions every window of the set. `None` for an empty set.
pub(crate) fn pane_window(windows: &[Window]) -> Option<Window> {
    let g = pane_us(windows);
    if g == 0 {
        return None;
    }
    let start = if windows.iter().any(|w| !w.is_bounded()) {
        Start::Epoch
    } else {
        Start::At(windows.iter().map(|w| w.offset_us()).min()?)
    };
    Some(Window {
        range_us: g,
        slide_us: g,
        start,
    })
}

/// The window as its clause is written: `[RANGE BY '1 hour' SLIDE BY '10 minutes']`, with
/// `START AT '...'` for a grid that has a first instance, so messages name the window as
/// the user wrote it.
impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let words = crate::time::human_interval;
        write!(
            f,
            "[RANGE BY '{}' SLIDE BY '{}'",
            words(self.range_us),
            words(self.slide_us)
        )?;
        if let Start::At(o) = self.start {
            write!(f, " START AT '{}'", crate::time::format_timestamp(o))?;
        }
        f.write_str("]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_index_covered_from_is_the_last_instance_that_keeps_a_partial() {
        for (r, s, o) in [(10, 2, 0), (7, 1, 3), (12, 4, 5), (9, 3, 1)] {
            let w = Window::new(r, s, Start::At(o)).unwrap();
            for up in [
                Window::new(s, s, Start::At(o)).unwrap(),
                Window::new(1, 1, Start::Epoch).unwrap(),
            ] {
                for j in -20..20 {
                    let m = w.last_index_covered_from(j, &up);
                    assert!(w.first_covering_index(m, &up) <= j, "{w} {up} {j}");
                    assert!(w.first_covering_index(m + 1, &up) > j, "{w} {up} {j}");
                }
            }
        }
    }

    fn w(r: i64, s: i64, o: i64) -> Window {
        Window::new(r, s, Start::At(o)).unwrap()
    }

    #[test]
    fn instances_of_hopping_tumbling_and_jumping_windows() {
        // Hopping: r = 10, s = 5, o = 0: t = 7 is in [0,10) and [5,15).
        assert_eq!(w(10, 5, 0).instances_containing(7), (0, 1));
        // Tumbling boundary: t = 10 is in [10, 20) only.
        assert_eq!(w(10, 10, 0).instances_containing(10), (1, 1));
        // Jumping: r = 2, s = 5: t = 3 falls in the gap.
        let (lo, hi) = w(2, 5, 0).instances_containing(3);
        assert!(lo > hi);
        // Before the first instance: none.
        let (lo, hi) = w(10, 5, 100).instances_containing(99);
        assert!(lo > hi);
        // Epoch grid: negative times have instances, floor division.
        let e = Window::new(10, 10, Start::Epoch).unwrap();
        assert_eq!(e.instances_containing(-1), (-1, -1));
        assert_eq!(e.lower_us(-1), -10);
    }

    #[test]
    fn floor_div_in_64_bits_agrees_with_the_128_bit_division() {
        let big = i64::MAX as i128;
        let numerators = [
            0,
            1,
            -1,
            59,
            -59,
            60,
            -61,
            big,
            -big - 1,
            big + 1,
            -big - 2,
            3 * big,
            -3 * big,
        ];
        for a in numerators {
            for b in [1, 7, 60, 1_000_000, big, big + 1, 2 * big] {
                assert_eq!(floor_div(a, b), a.div_euclid(b), "{a} / {b}");
            }
        }
    }

    #[test]
    fn current_index_is_latest_end_at_or_before_now() {
        let x = w(10, 10, 0);
        assert_eq!(x.current_index(9), None);
        assert_eq!(x.current_index(10), Some(0));
        assert_eq!(x.current_index(15), Some(0));
        assert_eq!(x.current_index(20), Some(1));
        assert_eq!(x.next_closing_index(9), 0);
        assert_eq!(x.next_closing_index(10), 1);
    }

    #[test]
    fn extreme_times_do_not_overflow() {
        let x = Window::new(i64::MAX, i64::MAX, Start::Epoch).unwrap();
        let _ = x.instances_containing(i64::MAX);
        let _ = x.instances_containing(i64::MIN);
        assert_eq!(x.upper_us(i64::MAX), i64::MAX);
    }

    #[test]
    fn coverage_matches_the_paper_examples() {
        // Tumbling 20 is partitioned by tumbling 10; 30 is not covered by 20.
        assert!(w(20, 20, 0).is_partitioned_by(&w(10, 10, 0)));
        assert!(!w(30, 30, 0).is_covered_by(&w(20, 20, 0)));
        assert_eq!(w(40, 40, 0).covering_multiplier(&w(20, 20, 0)), 2);
        // Hopping <10, 2> covers <20, 4>? s1 = 4 mod 2 = 0, (20 - 10) mod 2 = 0: yes, M = 6.
        assert!(w(20, 4, 0).is_covered_by(&w(10, 2, 0)));
        assert_eq!(w(20, 4, 0).covering_multiplier(&w(10, 2, 0)), 6);
        assert!(!w(20, 4, 0).is_partitioned_by(&w(10, 2, 0)));
        // Offsets: a later-starting W1 on the same grid is covered; an earlier one is not.
        assert!(w(20, 20, 10).is_covered_by(&w(10, 10, 0)));
        assert!(!w(20, 20, 0).is_covered_by(&w(10, 10, 10)));
        assert!(!w(20, 20, 5).is_covered_by(&w(10, 10, 0)));
        // Epoch grids.
        let e10 = Window::new(10, 10, Start::Epoch).unwrap();
        let e20 = Window::new(20, 20, Start::Epoch).unwrap();
        assert!(e20.is_covered_by(&e10));
        assert!(w(20, 20, 30).is_covered_by(&e10));
        assert!(!e20.is_covered_by(&w(10, 10, 0)));
        assert_eq!(w(20, 20, 30).first_covering_index(0, &e10), 3);
    }

    /// The covering set of instance `m` of `w1` in `w2` (Definition 2): every instance of
    /// `w2` inside it, as `(first index, lower, upper)` sorted by lower end.
    fn covering_set(w1: &Window, m: i64, w2: &Window) -> Vec<(i64, i64, i64)> {
        let (a, b) = (w1.lower_us(m), w1.upper_us(m));
        let lo = floor_div((a - w2.offset_us()) as i128 - 1, w2.slide_us as i128) + 1;
        let hi = floor_div((b - 1 - w2.offset_us()) as i128, w2.slide_us as i128);
        let lo = lo.max(w2.first_index() as i128) as i64;
        (lo..=hi as i64)
            .map(|k| (k, w2.lower_us(k), w2.upper_us(k)))
            .filter(|&(_, _, v)| v <= b)
            .collect()
    }

    /// Definition 1 and 5 by brute force over sample instances: `Some(M, disjoint)` when every
    /// sampled instance of `w1` is the union of its covering set in `w2`.
    fn brute_cover(w1: &Window, w2: &Window) -> Option<(usize, bool)> {
        let ms: Vec<i64> = if w1.is_bounded() {
            (0..12).collect()
        } else {
            (-12..12).collect()
        };
        let mut result = None;
        for m in ms {
            let (a, b) = (w1.lower_us(m), w1.upper_us(m));
            let set = covering_set(w1, m, w2);
            let starts = set.iter().any(|&(_, u, _)| u == a);
            let ends = set.iter().any(|&(_, _, v)| v == b);
            let mut reach = a;
            let mut disjoint = true;
            for &(_, u, v) in &set {
                if u > reach {
                    return None;
                }
                disjoint &= u >= reach || u == a && reach == a;
                reach = reach.max(v);
            }
            if !(starts && ends && reach == b) {
                return None;
            }
            if let Some(first) = set.first() {
                assert_eq!(
                    w1.first_covering_index(m, w2),
                    first.0,
                    "{w1} from {w2}, m = {m}"
                );
            }
            let this = (set.len(), disjoint);
            if result.is_some_and(|r| r != this) {
                panic!("the covering multiplier of {w1} by {w2} varies between instances");
            }
            result = Some(this);
        }
        result
    }

    fn universe() -> Vec<Window> {
        let mut all = Vec::new();
        for r in 1..=5 {
            for s in 1..=5 {
                for start in [Start::At(0), Start::At(2), Start::At(3), Start::Epoch] {
                    all.push(Window::new(r, s, start).unwrap());
                }
            }
        }
        all
    }

    #[test]
    fn theorems_1_3_and_4_agree_with_brute_force_over_interval_sets() {
        for w1 in universe() {
            for w2 in universe() {
                let brute = brute_cover(&w1, &w2);
                assert_eq!(
                    w1.is_covered_by(&w2),
                    brute.is_some(),
                    "Theorem 1: {w1} <= {w2}"
                );
                if let Some((m, disjoint)) = brute {
                    assert_eq!(
                        w1.covering_multiplier(&w2),
                        m as i64,
                        "Theorem 3: {w1}, {w2}"
                    );
                    assert_eq!(w1.is_partitioned_by(&w2), disjoint, "Theorem 4: {w1}, {w2}");
                }
            }
        }
    }

    #[test]
    fn theorem_2_coverage_is_a_partial_order() {
        let all = universe();
        for a in &all {
            assert!(a.is_covered_by(a), "reflexive: {a}");
            for b in &all {
                if a != b && a.is_covered_by(b) {
                    assert!(!b.is_covered_by(a), "antisymmetric: {a}, {b}");
                    for c in &all {
                        if b.is_covered_by(c) {
                            assert!(a.is_covered_by(c), "transitive: {a} <= {b} <= {c}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn jumping_upstream_windows_cover_only_their_own_range() {
        // <7, 5> over <2, 5>: the gap [2, 5) of the upstream grid would be lost.
        assert!(!w(7, 5, 0).is_covered_by(&w(2, 5, 0)));
        assert!(w(2, 10, 0).is_covered_by(&w(2, 5, 0)));
    }

    #[test]
    fn pane_is_the_gcd_of_ranges_slides_and_offset_differences() {
        let min = 60_000_000;
        let set = [
            w(20 * min, 20 * min, 0),
            w(30 * min, 30 * min, 0),
            w(40 * min, 40 * min, 0),
        ];
        assert_eq!(pane_us(&set), 10 * min);
        let shifted = [w(20 * min, 20 * min, 0), w(30 * min, 30 * min, 5 * min)];
        assert_eq!(pane_us(&shifted), 5 * min);
        // Same offsets far from the epoch do not shrink the pane.
        let late = [w(20 * min, 20 * min, 7), w(30 * min, 30 * min, 7)];
        assert_eq!(pane_us(&late), 10 * min);
        assert_eq!(pane_window(&late).unwrap(), w(10 * min, 10 * min, 7));
        // An epoch grid anchors the offsets at 0.
        let mixed = [Window::new(20, 20, Start::Epoch).unwrap(), w(30, 30, 7)];
        assert_eq!(pane_us(&mixed), 1);
        for x in mixed.iter().chain(&late).chain(&set).chain(&shifted) {
            let all: Vec<Window> = [&mixed[..], &late, &set, &shifted]
                .into_iter()
                .find(|g| g.contains(x))
                .unwrap()
                .to_vec();
            assert!(x.is_partitioned_by(&pane_window(&all).unwrap()), "{x}");
        }
        assert_eq!(lcm_checked(4, 6), Some(12));
        assert_eq!(lcm_checked(u128::MAX, 2), None);
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples in this module's documentation, run as unit tests: they use items
    //! private to the crate, which doctests cannot reach.

    #[test]
    fn module_example() {
        use crate::window::{Start, Window};
        let hour = 3_600_000_000;
        let w = Window::new(hour, hour / 6, Start::Epoch).unwrap(); // RANGE 1 hour SLIDE 10 min
        assert_eq!(w.instances_containing(0), (-5, 0)); // 6 instances hold t = 0
        assert_eq!(w.lower_us(0), 0);
        assert_eq!(w.upper_us(0), hour);
        let pane = Window::new(hour / 6, hour / 6, Start::Epoch).unwrap();
        assert!(w.is_partitioned_by(&pane));
        assert_eq!(w.covering_multiplier(&pane), 6);
    }
}
