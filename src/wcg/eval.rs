//! The paper's evaluation (section 5): window-set generators and the model costs of five
//! techniques on them.
//!
//! Generators (seeded, with a small SplitMix64 generator so runs are reproducible without a
//! `rand` dependency): RandomGen (independent windows by Algorithm 5), ChainGen (`W_{i+1} <=
//! W_i`), StarGen (`W_i <= W_1`), RandomGraphGen (Algorithm 6: levels of 2, 4 and 6 windows,
//! each drawing its slide from the lcm of a random subset of the level below), each in a
//! general and a tumbling-only variant. The paper does not print `s_max` and `k_max`; we use
//! [`EvalConfig::default`] and say so in the table's header.
//!
//! Techniques, all as long-run cost per time unit (the paper extends the periods `S` of the
//! slicing techniques and `R` of the WCG ones to `lcm(S, R)`; per unit of time is the same
//! comparison and cannot overflow):
//! - BL: every window alone from raw events, `sum_i eta * r_i / s_i`;
//! - UP: unshared paired windows (Krishnamurthy et al., Table 1): every event lands in one
//!   slice per window, `eta * n`, plus each instance merges its slices, `2 floor(r/s) + 1`
//!   (or `r/s` when `s | r`) per instance;
//! - SP: shared paired windows: every event lands in one slice of the common sliced window,
//!   `eta`, plus `E * r_i / s_i` per period for each window, where `E / S` is the density of
//!   the union of all windows' slice edges (inclusion-exclusion over residue classes);
//! - WCG: Algorithm 1; WCG-FW: the final choice with factor windows (Algorithm 2).
//!
//! General window sets use "covered by" (MIN/MAX, as in the paper), tumbling ones
//! "partitioned by" (the two coincide there).

use super::report::optimize;
use super::Sharing;
use crate::window::{gcd, lcm_checked, Start, Window};

/// A SplitMix64 pseudo-random generator (Steele, Lea, Flood 2014): tiny, seeded, good enough
/// for generating window sets.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer in `lo..=hi` (`lo` when `hi < lo`).
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        let span = (hi - lo) as u64 + 1;
        lo + (self.next_u64() % span) as i64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        unit < p
    }
}

/// The window-set generators of section 5.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generator {
    /// Independent windows by Algorithm 5.
    RandomGen,
    /// `W_{i+1}` covered by `W_i`.
    ChainGen,
    /// Every `W_i`, `i >= 2`, covered by `W_1`.
    StarGen,
    /// Algorithm 6: a leveled random DAG.
    RandomGraphGen,
}

impl Generator {
    /// The paper's name.
    pub fn name(&self) -> &'static str {
        match self {
            Generator::RandomGen => "RandomGen",
            Generator::ChainGen => "ChainGen",
            Generator::StarGen => "StarGen",
            Generator::RandomGraphGen => "RandomGraphGen",
        }
    }
}

/// Parameters of the evaluation.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalConfig {
    /// Seed of the generator.
    pub seed: u64,
    /// Window sets per row (the paper: 10).
    pub sets: usize,
    /// Events per time unit (the paper focuses on 100).
    pub eta: f64,
    /// Algorithm 5's maximum slide, time units.
    pub s_max: i64,
    /// Algorithm 5's maximum ratio of range to slide.
    pub k_max: i64,
    /// Algorithm 6's edge probability `p`.
    pub p: f64,
}

impl Default for EvalConfig {
    fn default() -> EvalConfig {
        EvalConfig {
            seed: 2021,
            sets: 10,
            eta: 100.0,
            s_max: 20,
            k_max: 10,
            p: 0.5,
        }
    }
}

/// Generation gives up on a window after this many draws that duplicate or break the shape.
pub(crate) const DRAWS_MAX: usize = 200;

const UNIT_US: i64 = 1_000_000;

fn window(r: i64, s: i64) -> Window {
    Window::new(r * UNIT_US, s * UNIT_US, Start::Epoch).expect("generated r, s > 0")
}

fn units(w: &Window) -> (i64, i64) {
    (w.range_us / UNIT_US, w.slide_us / UNIT_US)
}

/// Algorithm 5: a slide from `[s_min, s_max]`, a range from `{s, 2s, ..., k_max s}` (just `s`
/// when tumbling). With `s_unit > 1` the slide is a random multiple of `s_unit` (Algorithm 6's
/// lcm of the slides below) and the range at least `r_floor`, so that the windows it was
/// drawn for cover the new one. Past `s_max / k_max` the multiple is drawn from
/// `1..=k_max`, so chains and stars of tumbling windows (whose slides must grow) can go on
/// beyond `s_max`.
fn random_window(rng: &mut Rng, cfg: &EvalConfig, tumbling: bool, below: &[Window]) -> Window {
    let s_unit = below.iter().fold(1u128, |l, w| {
        lcm_checked(l, units(w).1 as u128).unwrap_or(l)
    }) as i64;
    let r_floor = below.iter().map(|w| units(w).0).max().unwrap_or(1);
    let s = if s_unit == 1 {
        rng.range(1, cfg.s_max)
    } else {
        s_unit * rng.range(1, (cfg.s_max / s_unit).max(cfg.k_max))
    };
    if tumbling {
        // s is a multiple of every range below (their slides), so the ranges fit.
        return window(s, s);
    }
    let k_min = (r_floor + s - 1) / s;
    let k = rng.range(1, cfg.k_max).max(k_min);
    window(k * s, s)
}

fn covered_by_all(w: &Window, ups: &[Window], sharing: Sharing) -> bool {
    ups.iter()
        .all(|u| super::graph::relation_holds(sharing, w, u))
}

fn sharing_for(tumbling: bool) -> Sharing {
    if tumbling {
        Sharing::PartitionedBy
    } else {
        Sharing::CoveredBy
    }
}

/// Draw a window with `random_window` until it is new and `ok`; `None` after
/// [`DRAWS_MAX`] draws.
fn draw(
    rng: &mut Rng,
    cfg: &EvalConfig,
    tumbling: bool,
    below: &[Window],
    set: &[Window],
    ok: impl Fn(&Window) -> bool,
) -> Option<Window> {
    (0..DRAWS_MAX)
        .map(|_| random_window(rng, cfg, tumbling, below))
        .find(|w| !set.contains(w) && ok(w))
}

/// A window set of (about) `n` windows from `generator`; RandomGraphGen ignores `n` and
/// builds 3 levels of 2, 4 and 6 windows. A set may come out smaller when the draws keep
/// failing (bounded by [`DRAWS_MAX`] per window).
pub fn generate(
    generator: Generator,
    n: usize,
    tumbling: bool,
    rng: &mut Rng,
    cfg: &EvalConfig,
) -> Vec<Window> {
    let sharing = sharing_for(tumbling);
    let mut set: Vec<Window> = Vec::new();
    match generator {
        Generator::RandomGen => {
            for _ in 0..n {
                set.extend(draw(rng, cfg, tumbling, &[], &set, |_| true));
            }
        }
        Generator::ChainGen | Generator::StarGen => {
            set.extend(draw(rng, cfg, tumbling, &[], &set, |_| true));
            for _ in 1..n {
                let up = match generator {
                    Generator::ChainGen => *set.last().expect("the first window exists"),
                    _ => set[0],
                };
                let ok = |w: &Window| covered_by_all(w, &[up], sharing);
                set.extend(draw(rng, cfg, tumbling, &[up], &set, ok));
            }
        }
        Generator::RandomGraphGen => random_graph(rng, cfg, tumbling, 3, 2, 2, &mut set),
    }
    set
}

/// Algorithm 6 with `levels` levels, `base` windows at the base, `delta` more per level.
fn random_graph(
    rng: &mut Rng,
    cfg: &EvalConfig,
    tumbling: bool,
    levels: usize,
    base: usize,
    delta: usize,
    set: &mut Vec<Window>,
) {
    let sharing = sharing_for(tumbling);
    let mut prev: Vec<Window> = Vec::new();
    for l in 0..levels {
        let mut level: Vec<Window> = Vec::new();
        for _ in 0..base + delta * l {
            let subset: Vec<Window> = prev.iter().copied().filter(|_| rng.chance(cfg.p)).collect();
            let independent = |w: &Window| {
                covered_by_all(w, &subset, sharing)
                    && level.iter().all(|o| {
                        !super::graph::relation_holds(sharing, w, o)
                            && !super::graph::relation_holds(sharing, o, w)
                    })
            };
            if let Some(w) = draw(rng, cfg, tumbling, &subset, set, independent) {
                level.push(w);
                set.push(w);
            }
        }
        prev = level;
    }
}

/// The model costs of the five techniques on one window set, per time unit.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub(crate) struct ModelCosts {
    /// Every window alone.
    pub(crate) bl: f64,
    /// Unshared paired windows.
    pub(crate) up: f64,
    /// Shared paired windows.
    pub(crate) sp: f64,
    /// Algorithm 1.
    pub(crate) wcg: f64,
    /// Algorithm 2 (the cheaper of Algorithms 1 and 2).
    pub(crate) wcg_fw: f64,
}

/// Slices per instance of a paired window `<r, s>`: `z1 = r mod s`, `z2 = s - z1`.
fn paired_slices(r: i64, s: i64) -> f64 {
    if r % s == 0 {
        (r / s) as f64
    } else {
        (2 * (r / s) + 1) as f64
    }
}

/// The five techniques' costs for `windows` (time unit = 1 second) at `eta` events per unit.
pub(crate) fn model_costs(windows: &[Window], tumbling: bool, eta: f64) -> ModelCosts {
    let rs: Vec<(i64, i64)> = windows.iter().map(units).collect();
    let k_sum: f64 = rs.iter().map(|&(r, s)| r as f64 / s as f64).sum();
    let bl = eta * k_sum;
    let up = eta * rs.len() as f64
        + rs.iter()
            .map(|&(r, s)| paired_slices(r, s) / s as f64)
            .sum::<f64>();
    let mut classes: Vec<(u128, u128)> = Vec::new();
    for &(r, s) in &rs {
        classes.push((0, s as u128));
        classes.push(((r % s) as u128, s as u128));
    }
    let sp = eta + edge_density(classes) * k_sum;
    let report = optimize(windows, sharing_for(tumbling), eta);
    ModelCosts {
        bl,
        up,
        sp,
        wcg: report.algorithm1.total.per_sec,
        wcg_fw: report.chosen().total.per_sec,
    }
}

/// Moduli above this count as density 0 in [`edge_density`] (their share is below 2^-62).
const MODULUS_MAX: u128 = 1 << 62;

/// The density (edges per time unit) of the union of residue classes `x = a (mod m)`, by
/// inclusion-exclusion with the Chinese remainder theorem. Classes contained in another are
/// dropped first; an empty intersection prunes all its supersets.
pub(crate) fn edge_density(classes: Vec<(u128, u128)>) -> f64 {
    let mut cs: Vec<(u128, u128)> = Vec::new();
    for (a, m) in classes {
        let c = (a % m, m);
        if !cs.contains(&c) {
            cs.push(c);
        }
    }
    // Distinct classes, so `n | m` and `a = b (mod n)` make class i a strict subset of j.
    let subsumed = |i: usize, cs: &[(u128, u128)]| {
        let (a, m) = cs[i];
        cs.iter()
            .enumerate()
            .any(|(j, &(b, n))| j != i && m % n == 0 && a % n == b)
    };
    let kept: Vec<(u128, u128)> = (0..cs.len())
        .filter(|&i| !subsumed(i, &cs))
        .map(|i| cs[i])
        .collect();
    let mut total = 0.0;
    union_terms(&kept, 0, None, 0, &mut total);
    total
}

fn union_terms(
    cs: &[(u128, u128)],
    from: usize,
    cur: Option<(u128, u128)>,
    depth: u32,
    total: &mut f64,
) {
    for i in from..cs.len() {
        let next = match cur {
            None => Some(cs[i]),
            Some(c) => crt(c, cs[i]),
        };
        if let Some((a, m)) = next {
            let sign = if depth.is_multiple_of(2) { 1.0 } else { -1.0 };
            *total += sign / m as f64;
            union_terms(cs, i + 1, Some((a, m)), depth + 1, total);
        }
    }
}

/// The intersection of two residue classes, `None` when empty or its modulus passes
/// [`MODULUS_MAX`].
fn crt((a1, m1): (u128, u128), (a2, m2): (u128, u128)) -> Option<(u128, u128)> {
    let g = gcd(m1, m2);
    let diff = (a2 as i128 - a1 as i128).rem_euclid(m2 as i128) as u128;
    if !diff.is_multiple_of(g) {
        return None;
    }
    let l = lcm_checked(m1, m2).filter(|&l| l <= MODULUS_MAX)?;
    // Solve a1 + m1 * t = a2 (mod m2): t = (diff / g) * inv(m1 / g) mod (m2 / g).
    let (m1g, m2g) = ((m1 / g) as i128, (m2 / g) as i128);
    let t = if m2g == 1 {
        0
    } else {
        ((diff / g) as i128 % m2g) * mod_inverse(m1g % m2g, m2g) % m2g
    };
    let x = (a1 as i128 + m1 as i128 * t).rem_euclid(l as i128);
    Some((x as u128, l))
}

/// The inverse of `a` modulo `m` (`gcd(a, m) = 1`), by the extended Euclidean algorithm.
fn mod_inverse(a: i128, m: i128) -> i128 {
    let (mut old_r, mut r, mut old_s, mut s) = (a, m, 1i128, 0i128);
    while r != 0 {
        let q = old_r / r;
        (old_r, r) = (r, old_r - q * r);
        (old_s, s) = (s, old_s - q * s);
    }
    old_s.rem_euclid(m)
}

/// One row of the evaluation table: medians over the sets.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalRow {
    /// The generator.
    pub(crate) generator: Generator,
    /// Tumbling-only variant.
    pub(crate) tumbling: bool,
    /// Windows per set (median, sets may come out smaller).
    pub(crate) windows: usize,
    /// Number of sets.
    pub(crate) sets: usize,
    /// Median model costs per time unit.
    pub(crate) median: ModelCosts,
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The paper's evaluation: RandomGen, ChainGen and StarGen with 5 and 10 windows and
/// RandomGraphGen with 2/4/6-window levels, general and tumbling, `cfg.sets` sets each.
pub fn paper_evaluation(cfg: &EvalConfig) -> Vec<EvalRow> {
    let mut rows = Vec::new();
    let shapes = [
        (Generator::RandomGen, 5),
        (Generator::RandomGen, 10),
        (Generator::ChainGen, 5),
        (Generator::ChainGen, 10),
        (Generator::StarGen, 5),
        (Generator::StarGen, 10),
        (Generator::RandomGraphGen, 12),
    ];
    for tumbling in [false, true] {
        for (i, &(generator, n)) in shapes.iter().enumerate() {
            let mut rng = Rng::new(cfg.seed ^ ((i as u64) << 8) ^ tumbling as u64);
            let costs: Vec<(usize, ModelCosts)> = (0..cfg.sets)
                .map(|_| {
                    let set = generate(generator, n, tumbling, &mut rng, cfg);
                    (set.len(), model_costs(&set, tumbling, cfg.eta))
                })
                .collect();
            let pick = |f: fn(&ModelCosts) -> f64| median(costs.iter().map(|c| f(&c.1)).collect());
            rows.push(EvalRow {
                generator,
                tumbling,
                windows: median(costs.iter().map(|c| c.0 as f64).collect()) as usize,
                sets: cfg.sets,
                median: ModelCosts {
                    bl: pick(|c| c.bl),
                    up: pick(|c| c.up),
                    sp: pick(|c| c.sp),
                    wcg: pick(|c| c.wcg),
                    wcg_fw: pick(|c| c.wcg_fw),
                },
            });
        }
    }
    rows
}

/// The evaluation as a text table, one line per row, with a header naming the parameters.
pub fn render_table(cfg: &EvalConfig, rows: &[EvalRow]) -> Vec<String> {
    let mut out = vec![
        format!(
            "Model cost per time unit, median over {} sets (eta = {}, s_max = {}, k_max = {}, p = {}, seed {})",
            cfg.sets, cfg.eta, cfg.s_max, cfg.k_max, cfg.p, cfg.seed
        ),
        format!(
            "{:<15} {:<9} {:>3} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7} {:>7}",
            "generator", "variant", "|W|", "BL", "UP", "SP", "WCG", "WCG-FW", "WCG/BL", "FW/BL"
        ),
    ];
    for r in rows {
        let m = &r.median;
        let ratio = |x: f64| if m.bl > 0.0 { x / m.bl } else { 0.0 };
        out.push(format!(
            "{:<15} {:<9} {:>3} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>7.3} {:>7.3}",
            r.generator.name(),
            if r.tumbling { "tumbling" } else { "general" },
            r.windows,
            m.bl,
            m.up,
            m.sp,
            m.wcg,
            m.wcg_fw,
            ratio(m.wcg),
            ratio(m.wcg_fw)
        ));
    }
    out
}

/// The median wall-clock time of one [`optimize`] call over `sets`, each planned `rounds`
/// times (for the benchmark and a CLI subcommand; the optimizer is pure, so this measures
/// only the planning).
pub fn planning_time(
    sets: &[Vec<Window>],
    sharing: Sharing,
    eta_per_sec: f64,
    rounds: usize,
) -> std::time::Duration {
    let mut samples: Vec<f64> = Vec::with_capacity(sets.len() * rounds);
    for _ in 0..rounds {
        for set in sets {
            let start = std::time::Instant::now();
            let report = optimize(set, sharing, eta_per_sec);
            let elapsed = start.elapsed();
            std::hint::black_box(report);
            samples.push(elapsed.as_secs_f64());
        }
    }
    std::time::Duration::from_secs_f64(median(samples))
}

/// A ten-window query of mixed windows (minutes to a day, tumbling and hopping, one
/// co-prime range) for timing the planner.
pub fn ten_window_query() -> Vec<Window> {
    let min = 60 * UNIT_US;
    let w = |r: i64, s: i64| Window::new(r * min, s * min, Start::Epoch).expect("positive");
    vec![
        w(10, 10),
        w(20, 20),
        w(30, 30),
        w(40, 40),
        w(60, 10),
        w(120, 30),
        w(360, 60),
        w(1440, 60),
        w(17, 17),
        w(1380, 1380),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute_density(classes: &[(u128, u128)]) -> f64 {
        let period = classes
            .iter()
            .fold(1u128, |l, c| lcm_checked(l, c.1).unwrap());
        let hits = (0..period)
            .filter(|x| classes.iter().any(|&(a, m)| x % m == a % m))
            .count();
        hits as f64 / period as f64
    }

    #[test]
    fn edge_density_matches_counting() {
        let mut rng = Rng::new(7);
        for _ in 0..200 {
            let n = rng.range(1, 6) as usize;
            let cs: Vec<(u128, u128)> = (0..n)
                .map(|_| {
                    let m = rng.range(1, 12) as u128;
                    (rng.range(0, 11) as u128 % m, m)
                })
                .collect();
            let (fast, slow) = (edge_density(cs.clone()), brute_density(&cs));
            assert!((fast - slow).abs() < 1e-12, "{cs:?}: {fast} vs {slow}");
        }
    }

    #[test]
    fn generators_keep_their_shapes() {
        let cfg = EvalConfig::default();
        let mut rng = Rng::new(1);
        for tumbling in [false, true] {
            let sharing = sharing_for(tumbling);
            let chain = generate(Generator::ChainGen, 10, tumbling, &mut rng, &cfg);
            assert!(chain.len() >= 5);
            for pair in chain.windows(2) {
                assert!(super::super::graph::relation_holds(
                    sharing, &pair[1], &pair[0]
                ));
            }
            let star = generate(Generator::StarGen, 10, tumbling, &mut rng, &cfg);
            assert!(star[1..]
                .iter()
                .all(|w| super::super::graph::relation_holds(sharing, w, &star[0])));
            let graph = generate(Generator::RandomGraphGen, 12, tumbling, &mut rng, &cfg);
            assert!(graph.len() >= 6);
            for set in [&chain, &star, &graph] {
                for (i, w) in set.iter().enumerate() {
                    assert!(!set[..i].contains(w), "no duplicates");
                    assert!(!tumbling || w.is_tumbling());
                }
            }
        }
    }

    #[test]
    fn techniques_on_the_paper_example() {
        // Example 6 (10/20/30/40 tumbling) at eta = 100: BL 400, WCG 100 + 1/10 * (2 + 3) + 2/20.
        let set: Vec<Window> = [10, 20, 30, 40].into_iter().map(|r| window(r, r)).collect();
        let c = model_costs(&set, true, 100.0);
        assert!((c.bl - 400.0).abs() < 1e-9);
        assert!((c.wcg - (100.0 + 0.1 + 0.1 + 0.05)).abs() < 1e-9, "{c:?}");
        assert!(c.wcg_fw <= c.wcg);
        // Unshared paired: each event once per window, one slice per tumbling instance.
        let merges = 1.0 / 10.0 + 1.0 / 20.0 + 1.0 / 30.0 + 1.0 / 40.0;
        assert!((c.up - (400.0 + merges)).abs() < 1e-9, "{c:?}");
        // Shared slices: edges every 10 units, each window merges r/10 of them per instance.
        assert!((c.sp - (100.0 + 0.1 * 4.0)).abs() < 1e-9, "{c:?}");
    }

    #[test]
    fn the_evaluation_is_deterministic_and_ranks_like_the_paper() {
        let cfg = EvalConfig {
            sets: 3,
            ..EvalConfig::default()
        };
        let rows = paper_evaluation(&cfg);
        assert_eq!(rows, paper_evaluation(&cfg));
        assert_eq!(rows.len(), 14);
        for r in &rows {
            let m = &r.median;
            assert!(
                m.wcg_fw <= m.wcg * (1.0 + 1e-9) && m.wcg <= m.bl * (1.0 + 1e-9),
                "{r:?}"
            );
        }
        assert_eq!(render_table(&cfg, &rows).len(), 16);
    }
}
