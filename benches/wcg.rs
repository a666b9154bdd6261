//! Benchmarks of the WCG optimizer (run with `cargo bench --bench wcg`): planning time of
//! ten-window queries, and the paper's evaluation table (section 5) of model costs.
//!
//! A plain `main` with `std::time::Instant` (no benchmark framework): each figure is the
//! median over many calls, printed with the command-line that reproduces it.

use tcq::wcg::eval::{
    generate, paper_evaluation, planning_time, render_table, ten_window_query, EvalConfig,
    Generator, Rng,
};
use tcq::wcg::Sharing;
use tcq::window::{Start, Window};

fn main() {
    let cfg = EvalConfig::default();
    println!("== planning time, median of one optimize() call (Algorithms 1 and 2, report)");
    let fixed = vec![ten_window_query()];
    for sharing in [Sharing::PartitionedBy, Sharing::CoveredBy] {
        let t = planning_time(&fixed, sharing, 100.0, 2000);
        println!(
            "  fixed 10-window query, {sharing:?}: {:.1} us",
            t.as_secs_f64() * 1e6
        );
    }
    // Worst case for divisor enumeration: a 1-microsecond pane (one window starts 1 us off
    // the grid) under ranges that share a large prime factor, so every target's divisor
    // search runs to its bound.
    let p = 1_000_000_007;
    let mut odd: Vec<Window> = (1..=9)
        .map(|k| Window::new(k * p, k * p, Start::Epoch).unwrap())
        .collect();
    odd.push(Window::new(p, p, Start::At(1)).unwrap());
    for sharing in [Sharing::PartitionedBy, Sharing::CoveredBy] {
        let t = planning_time(&[odd.clone()], sharing, 1e6, 500);
        println!(
            "  10 windows on a 1-microsecond grid, {sharing:?}: {:.1} us",
            t.as_secs_f64() * 1e6
        );
    }
    let mut rng = Rng::new(cfg.seed);
    for (generator, tumbling) in [
        (Generator::RandomGen, false),
        (Generator::ChainGen, false),
        (Generator::StarGen, false),
        (Generator::RandomGen, true),
    ] {
        let sets: Vec<_> = (0..20)
            .map(|_| generate(generator, 10, tumbling, &mut rng, &cfg))
            .collect();
        let sharing = if tumbling {
            Sharing::PartitionedBy
        } else {
            Sharing::CoveredBy
        };
        let t = planning_time(&sets, sharing, 100.0, 100);
        println!(
            "  {} 10 windows ({}): {:.1} us",
            generator.name(),
            if tumbling { "tumbling" } else { "general" },
            t.as_secs_f64() * 1e6
        );
    }
    println!();
    println!("== paper evaluation (section 5)");
    for line in render_table(&cfg, &paper_evaluation(&cfg)) {
        println!("{line}");
    }
}
