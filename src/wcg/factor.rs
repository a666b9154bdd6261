//! Factor windows (paper section 4): Algorithm 2 with Equations 2 and 3 for "covered by",
//! Algorithms 3 and 4 with Theorems 8 and 9 for "partitioned by".
//!
//! A factor window `W_f` is inserted between a target window `W` and its downstream windows
//! `W_1..W_K` (Figure 9): `W_f <= W` and `W_j <= W_f`. Targets are every window with
//! downstream windows and the virtual root `S`, whose downstream windows are those no other
//! window covers. Here `S` is the raw stream on the pane grid (docs/sharing.md): an edge
//! from `S` costs `eta * r` per instance, and the pane itself, `<g, g>`, is a candidate
//! factor window of `S` (with `S<1, 1>` the paper never needs it; with `S = <g, g>` it is the
//! factor window 10 of Example 7).
//!
//! Candidate enumeration is bounded: divisors are found by trial division up to
//! [`DIVISOR_TRIAL_MAX`] (larger co-factors are still found, divisors between that bound and
//! their co-factor are skipped) and at most [`FACTOR_CANDIDATES_MAX`] candidates are kept per
//! target, the ones with the largest slides. Under "covered by", Equation 2 is affine in
//! `r_f` for a fixed `s_f` (`n_f` does not depend on `r_f`; `M(W_j, W_f)` falls by one per
//! `s_f`, `M(W_f, W)` grows by `s_f / s_W`), so only the smallest and the largest eligible
//! range of each slide can be best: those two are enumerated, without losing the optimum.

use super::alg1::{algorithm1, Forest};
use super::cost::{at_most, clearly_less, Cost, CostModel, Source};
use super::graph::{relation_holds, Vertex, Wcg};
use super::Sharing;
use crate::window::{gcd, Start, Window};

/// At most this many candidate factor windows are kept per target window.
pub(crate) const FACTOR_CANDIDATES_MAX: usize = 64;

/// Divisors are searched by trial division up to this bound (and their co-factors).
///
/// 1024 keeps the worst case (slides co-prime to the microsecond) at about a thousand
/// divisions per target, so a ten-window query still plans in well under a millisecond;
/// a divisor is missed only when both it and its co-factor exceed the bound.
pub(crate) const DIVISOR_TRIAL_MAX: u64 = 1024;

/// The target of a factor window search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target<'a> {
    /// The virtual root `S`: the raw stream on the grid of this pane window.
    Root {
        /// The pane `<g, g>` (see [`crate::window::pane_window`]).
        pane: &'a Window,
    },
    /// A window of the WCG.
    Window(&'a Window),
}

impl Target<'_> {
    fn window(&self) -> &Window {
        match self {
            Target::Root { pane } => pane,
            Target::Window(w) => w,
        }
    }

    fn source(&self) -> Source<'_> {
        match self {
            Target::Root { .. } => Source::Raw,
            Target::Window(w) => Source::Window(w),
        }
    }
}

/// One candidate factor window and what the search found about it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Candidate {
    /// The candidate `W_f`.
    pub(crate) window: Window,
    /// The pattern cost `c_f = sum_j cost(W_j from W_f) + cost(W_f from W)`: Figure 9 without
    /// the target's own cost, which inserting `W_f` does not change.
    pub(crate) pattern_cost: Cost,
    /// Equation 3 (or Algorithm 3 under "partitioned by"): inserting it does not raise cost.
    pub(crate) beneficial: bool,
    /// Algorithm 4 lines 11-13: it covers another beneficial candidate, which is then
    /// at least as good (Example 8: `10 <= 2`, so 2 is dominated).
    pub(crate) dominated: bool,
}

/// The outcome of `FindBestFactorWindow` (Algorithm 2 lines 9-12, or Algorithm 4) for one
/// target.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FactorSearch {
    /// The target vertex; `None` for the virtual root `S`.
    pub(crate) target: Option<usize>,
    /// The target window (the pane for `S`).
    pub(crate) target_window: Window,
    /// The downstream vertices `W_1..W_K`.
    pub(crate) downstream: Vec<usize>,
    /// The pattern cost without a factor window, `c' = sum_j cost(W_j from W)`.
    pub(crate) pattern_cost_without: Cost,
    /// The candidates considered, by slide then range.
    pub(crate) candidates: Vec<Candidate>,
    /// The chosen candidate (index into `candidates`), if any is beneficial.
    pub(crate) chosen: Option<usize>,
    /// True when an enumeration bound cut the candidate list.
    pub(crate) truncated: bool,
}

impl FactorSearch {
    /// The chosen factor window.
    pub(crate) fn chosen_window(&self) -> Option<Window> {
        self.chosen.map(|c| self.candidates[c].window)
    }
}

/// The divisors of `n >= 1`, ascending, by trial division up to [`DIVISOR_TRIAL_MAX`]; the
/// flag is true when divisors may be missing.
pub(crate) fn divisors_bounded(n: u64) -> (Vec<u64>, bool) {
    let mut low = Vec::new();
    let mut high = Vec::new();
    let mut i = 1u64;
    while i <= DIVISOR_TRIAL_MAX && i.saturating_mul(i) <= n {
        if n.is_multiple_of(i) {
            low.push(i);
            if i != n / i {
                high.push(n / i);
            }
        }
        i += 1;
    }
    let truncated = i.saturating_mul(i) <= n;
    low.extend(high.into_iter().rev());
    (low, truncated)
}

/// The grid a factor window for `downstream` uses: the epoch grid when one of them is on it,
/// else the earliest start (every `W_j` must start on or after `W_f`'s first instance).
fn factor_start(downstream: &[Window]) -> Start {
    if downstream.iter().any(|w| !w.is_bounded()) {
        Start::Epoch
    } else {
        Start::At(downstream.iter().map(|w| w.offset_us()).min().unwrap_or(0))
    }
}

/// Multiples of `unit` that divide `whole` (both > 0, `unit | whole`), ascending, at most
/// `cap` (the largest), and whether a bound cut the list.
fn multiples_dividing(unit: i64, whole: i64, cap: usize) -> (Vec<i64>, bool) {
    if unit <= 0 || whole % unit != 0 {
        return (Vec::new(), false);
    }
    let (divs, mut truncated) = divisors_bounded((whole / unit) as u64);
    let skip = divs.len().saturating_sub(cap);
    truncated |= skip > 0;
    (
        divs[skip..].iter().map(|&d| d as i64 * unit).collect(),
        truncated,
    )
}

/// Candidate factor windows for `target` under "covered by" (Algorithm 2, section 4.1):
/// slides `s_f` with `s_d mod s_f = 0` and `s_f mod s_W = 0`, ranges `r_f` multiple of `s_f`
/// with `r_f <= r_min` (the extreme two per slide, see the module docs).
fn general_candidates(target: &Window, downstream: &[Window]) -> (Vec<Window>, bool) {
    let s_d = downstream
        .iter()
        .fold(0u128, |g, w| gcd(g, w.slide_us as u128)) as i64;
    let r_min = downstream.iter().map(|w| w.range_us).min().unwrap_or(0);
    let (slides, truncated) = multiples_dividing(target.slide_us, s_d, FACTOR_CANDIDATES_MAX / 2);
    let start = factor_start(downstream);
    let mut out = Vec::new();
    for s_f in slides {
        // i128: r_W + s_f - 1 can pass i64::MAX; k * s_f <= r_min cannot.
        let k_lo = ((target.range_us as i128 + s_f as i128 - 1) / s_f as i128) as i64;
        let k_hi = r_min / s_f;
        for k in [k_lo, k_hi] {
            if k_lo <= k_hi {
                let w = Window {
                    range_us: k * s_f,
                    slide_us: s_f,
                    start,
                };
                if !out.contains(&w) {
                    out.push(w);
                }
            }
        }
    }
    (out, truncated)
}

/// Candidate factor windows for `target` under "partitioned by" (Algorithm 4 lines 1-4):
/// tumbling windows whose range divides `d = gcd(r_1..r_K)` and is a multiple of `r_W`.
/// A hopping downstream window is covered only by a factor whose slide divides its own, so
/// `d` is also taken over the downstream slides: the candidates dropped are the ones that
/// could not fit, and the bound on the list is not spent on them (RANGE 7 days SLIDE 1
/// second keeps its one-second pane among the candidates).
fn partitioned_candidates(target: &Window, downstream: &[Window]) -> (Vec<Window>, bool) {
    let d = downstream.iter().fold(0u128, |g, w| {
        gcd(gcd(g, w.range_us as u128), w.slide_us as u128)
    }) as i64;
    let (ranges, truncated) = multiples_dividing(target.range_us, d, FACTOR_CANDIDATES_MAX);
    let start = factor_start(downstream);
    let out = ranges
        .into_iter()
        .map(|r| Window {
            range_us: r,
            slide_us: r,
            start,
        })
        .collect();
    (out, truncated)
}

/// The pattern cost of Figure 9: the downstream windows from `via` (or from the target when
/// `None`), plus `via` from the target.
pub(crate) fn pattern_cost(
    model: &CostModel,
    target: Target<'_>,
    via: Option<&Window>,
    downstream: &[Window],
) -> Cost {
    let source = via.map_or(target.source(), Source::Window);
    let below = Cost::sum(downstream.iter().map(|w| model.window_cost(w, source)));
    match via {
        Some(f) => below.plus(model.window_cost(f, target.source())),
        None => below,
    }
}

/// Algorithm 3 (Theorem 8), in the long-run cost form: does the tumbling factor window `wf`
/// help between the tumbling window `w` and `downstream` under "partitioned by"? With
/// `lambda = sum_j k_j` (`k_j = r_j / s_j`, Equation 4 as `R` grows), `c <= c'` iff
/// `r_f / r_W >= lambda / (lambda - 1)`: always when `K >= 2` (then `lambda >= 2` and
/// `r_f >= 2 r_W`), never for one tumbling `W_1`, and for one hopping `W_1` when
/// `r_f (r_1 - s_1) >= r_W r_1`. Valid for a real target with `r_f >= 2 r_W` and no jumping
/// downstream window; [`find_best_factor_window`] uses Equation 3 elsewhere.
pub(crate) fn algorithm3(wf: &Window, w: &Window, downstream: &[Window]) -> bool {
    debug_assert!(
        wf.is_tumbling() && w.is_tumbling(),
        "Theorem 8 is about tumbling windows"
    );
    if downstream.len() >= 2 {
        return true;
    }
    let Some(w1) = downstream.first() else {
        return false;
    };
    if w1.is_tumbling() {
        return false;
    }
    let lhs = wf.range_us as i128 * (w1.range_us as i128 - w1.slide_us as i128);
    lhs >= w.range_us as i128 * w1.range_us as i128
}

/// Whether Theorem 8 decides for `wf`: the paper's cost model (its proof counts one merge
/// per partial, panes only), a real tumbling target and the shapes the theorem covers.
fn algorithm3_applies(
    sharing: Sharing,
    model: &CostModel,
    target: Target<'_>,
    wf: &Window,
    ds: &[Window],
) -> bool {
    match target {
        Target::Root { .. } => false,
        Target::Window(w) => {
            sharing == Sharing::PartitionedBy
                && model.is_paper()
                && w.is_tumbling()
                && wf.is_tumbling()
                && wf.range_us as i128 >= 2 * w.range_us as i128
                && ds.iter().all(|d| d.slide_us <= d.range_us)
        }
    }
}

/// `FindBestFactorWindow` (Algorithm 2 lines 9-12; Algorithm 4 under "partitioned by"):
/// enumerate the candidates of Figure 9, keep the beneficial ones (Equation 3 or Algorithm 3),
/// drop dominated ones (Algorithm 4, "partitioned by" only) and pick the largest reduction
/// by Equation 2 (Theorem 9 under "partitioned by"; ties keep the larger window). `existing`
/// windows are not candidates (Definition 6 asks `W_f` not to be in the window set).
pub(crate) fn find_best_factor_window(
    target: Target<'_>,
    downstream: &[Window],
    existing: &[Window],
    sharing: Sharing,
    model: &CostModel,
) -> FactorSearch {
    let tw = *target.window();
    let (raw, truncated) = match sharing {
        Sharing::None => (Vec::new(), false),
        _ if downstream.is_empty() => (Vec::new(), false),
        Sharing::PartitionedBy => partitioned_candidates(&tw, downstream),
        Sharing::CoveredBy => general_candidates(&tw, downstream),
    };
    // A real target is in `existing`; the pane of the virtual root is not, and is a candidate.
    let fits = |wf: &Window| {
        let above = match target {
            Target::Root { pane } => wf.is_partitioned_by(pane),
            Target::Window(w) => relation_holds(sharing, wf, w),
        };
        above && downstream.iter().all(|d| relation_holds(sharing, d, wf))
    };
    let without = pattern_cost(model, target, None, downstream);
    let mut candidates: Vec<Candidate> = raw
        .into_iter()
        .filter(|wf| !existing.contains(wf) && fits(wf))
        .map(|wf| {
            let pattern_cost = pattern_cost(model, target, Some(&wf), downstream);
            let eq3 = at_most(pattern_cost.per_sec, without.per_sec);
            let beneficial = if algorithm3_applies(sharing, model, target, &wf, downstream) {
                let alg3 = algorithm3(&wf, &tw, downstream);
                debug_assert_eq!(alg3, eq3, "Theorem 8: Algorithm 3 agrees with Equation 3");
                alg3
            } else {
                eq3
            };
            Candidate {
                window: wf,
                pattern_cost,
                beneficial,
                dominated: false,
            }
        })
        .collect();
    // Algorithm 4's domination rests on the paper's count (a partial is one merge, panes
    // only); under the priced model every beneficial candidate competes on its cost.
    if sharing == Sharing::PartitionedBy && model.is_paper() {
        let kept: Vec<Window> = candidates
            .iter()
            .filter(|c| c.beneficial)
            .map(|c| c.window)
            .collect();
        for c in candidates.iter_mut().filter(|c| c.beneficial) {
            c.dominated = kept
                .iter()
                .any(|k| *k != c.window && k.is_covered_by(&c.window));
        }
    }
    let mut chosen: Option<usize> = None;
    for (i, c) in candidates.iter().enumerate() {
        if !c.beneficial || c.dominated {
            continue;
        }
        let better = chosen.is_none_or(|b| {
            !clearly_less(candidates[b].pattern_cost.per_sec, c.pattern_cost.per_sec)
        });
        if better {
            chosen = Some(i);
        }
    }
    FactorSearch {
        target: None,
        target_window: tw,
        downstream: Vec::new(),
        pattern_cost_without: without,
        candidates,
        chosen,
        truncated,
    }
}

/// What Algorithm 2 produced.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Algorithm2 {
    /// One search per target: the virtual root first, then windows in vertex order.
    pub(crate) searches: Vec<FactorSearch>,
    /// The min-cost forest over the expanded WCG, after dropping factor windows that ended
    /// up with no child (they only add cost).
    pub(crate) forest: Forest,
    /// The expanded WCG's edges count, for the report.
    pub(crate) expanded_edges: usize,
}

/// Algorithm 2: find the best factor window of every target (lines 3-4), expand the WCG
/// with them and their edges (line 5), run Algorithm 1 on it (line 6).
pub(crate) fn algorithm2(wcg: &Wcg, pane: &Window, model: &CostModel) -> Algorithm2 {
    let windows = wcg.windows();
    let mut searches = Vec::new();
    let mut targets: Vec<Option<usize>> = vec![None];
    targets.extend(
        (0..wcg.vertices.len())
            .filter(|&v| !wcg.downstream_of(v).is_empty())
            .map(Some),
    );
    let mut factors: Vec<Window> = Vec::new();
    for t in targets {
        let downstream = match t {
            None => wcg.roots(),
            Some(v) => wcg.downstream_of(v),
        };
        let ds: Vec<Window> = downstream.iter().map(|&d| windows[d]).collect();
        let target = match t {
            None => Target::Root { pane },
            Some(v) => Target::Window(&windows[v]),
        };
        let mut search = find_best_factor_window(target, &ds, &windows, wcg.sharing, model);
        search.target = t;
        search.downstream = downstream;
        if let Some(f) = search.chosen_window() {
            if !factors.contains(&f) {
                factors.push(f);
            }
        }
        searches.push(search);
    }
    let mut vertices = wcg.vertices.clone();
    vertices.extend(factors.into_iter().map(|window| Vertex {
        window,
        user_windows: vec![],
    }));
    let expanded = Wcg::with_vertices(vertices, wcg.sharing);
    let forest = prune_idle_factors(algorithm1(&expanded, model));
    Algorithm2 {
        searches,
        forest,
        expanded_edges: expanded.edges.len(),
    }
}

/// Drop factor windows that feed no window: nothing reads them, so they only add cost.
fn prune_idle_factors(mut forest: Forest) -> Forest {
    loop {
        let idle = (0..forest.nodes.len())
            .find(|&v| forest.nodes[v].vertex.is_factor() && forest.children(v).is_empty());
        let Some(idle) = idle else { return forest };
        forest.nodes.remove(idle);
        for n in &mut forest.nodes {
            if let Some(p) = n.parent.as_mut() {
                debug_assert_ne!(*p, idle, "an idle factor window has no children");
                if *p > idle {
                    *p -= 1;
                }
            }
        }
        forest.total = Cost::sum(forest.nodes.iter().map(|n| n.cost));
    }
}
