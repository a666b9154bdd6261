//! The executor alone on the three million flights: the queries of `scripts/bench.py`,
//! pushed as column batches of 64 Ki tuples, then time moved past the last instance holding
//! data, with the plan the server picks (the rate re-planned as the first batch brings it,
//! the groups estimated from it). Folding, sliding aggregation, finalisation and row blocks
//! are in the measure; COPY parsing, encoding and the wire are not (see `scripts/bench.py`
//! for end to end). Prints, per query, the plan's nodes and aggregators, the rows, and the
//! best of three runs' CPU seconds (of the thread, so that other programs on the machine
//! count less) and tuples per CPU second.
//!
//! ```text
//! python3 scripts/bench.py --only copy --skip-duckdb   # writes bench-data/flights-3m.csv
//! cargo bench --bench slide -- [day_minute,day_hour_origin,week_second,q1,q2,q3] [--runs N]
//! ```
//!
//! `TCQ_FLIGHTS_CSV` names another CSV of the same columns. Under a profiler, one run of one
//! query: `--runs 1 q2`. `--sliders panes` runs the plan the model picks with panes only
//! (the executor before sliding aggregators); `--sliders two-stacks` or `subtract-on-evict`
//! puts that aggregator on every edge of that plan the aggregates allow it on.

/// CPU seconds this thread has used: the machine is shared, so wall-clock time says more
/// about the other programs than about the executor.
fn thread_cpu_secs() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

use tcq::exec::columns::{ColumnBatch, ColumnBatchBuilder};
use tcq::exec::{Batch, Event, ExecLimits, QueryExec};
use tcq::sql::{Plan, Query, SchemaProvider};
use tcq::types::{parse_value, Column, DataType, Value};
use tcq::window::{Start, Window};

const TYPES: [DataType; 5] = [
    DataType::Timestamp,
    DataType::Int4,
    DataType::Int4,
    DataType::Text,
    DataType::Text,
];

struct Flights;

impl SchemaProvider for Flights {
    fn stream(&self, name: &str) -> Option<(Vec<Column>, Option<usize>)> {
        let names = ["ts", "delay", "distance", "origin", "destination"];
        let columns = names.iter().zip(TYPES).map(|(n, t)| Column::new(*n, t));
        (name == "flights").then(|| (columns.collect(), Some(0)))
    }

    fn system_view(&self, _name: &str) -> Option<Vec<Column>> {
        None
    }
}

const O: &str = "START AT '2001-01-01 00:00:00'";
const MIN: i64 = 60_000_000;

/// A benchmark query: name, SQL, windows as (range, slide) in minutes (slide 0: one
/// second), and the instant time moves to after the data.
type Bench = (&'static str, String, Vec<(i64, i64)>, &'static str);

fn queries() -> Vec<Bench> {
    let end = "2001-07-01 01:00:00";
    vec![
        (
            "day_minute",
            format!("SELECT count(*), max(delay), wtime(*) FROM flights [RANGE BY '1 day' SLIDE BY '1 minute' {O}]"),
            vec![(1440, 1)],
            "2001-07-02 00:00:00",
        ),
        (
            "day_hour_origin",
            format!("SELECT origin, count(*), max(delay), wtime(*) FROM flights [RANGE BY '1 day' SLIDE BY '1 hour' {O}] GROUP BY origin"),
            vec![(1440, 60)],
            "2001-07-02 00:00:00",
        ),
        (
            "week_second",
            format!("SELECT count(*), max(delay), wtime(*) FROM flights [RANGE BY '7 days' SLIDE BY '1 second' {O}]"),
            vec![(7 * 1440, 0)],
            "2001-07-08 00:00:00",
        ),
        (
            "q1",
            format!("SELECT origin, wtime(*), count(*), avg(delay), max(delay) FROM flights [RANGE BY '1 hour' SLIDE BY '10 minutes' {O}] GROUP BY origin"),
            vec![(60, 10)],
            end,
        ),
        (
            "q2",
            format!("SELECT origin, wtime(*), min(delay) FROM flights [RANGE BY '10 minutes' {O}] [RANGE BY '20 minutes' {O}] [RANGE BY '30 minutes' {O}] [RANGE BY '40 minutes' {O}] GROUP BY origin"),
            vec![(10, 10), (20, 20), (30, 30), (40, 40)],
            end,
        ),
        (
            "q3",
            format!("SELECT count(*), sum(delay), wtime(*) FROM flights [RANGE BY '1 minute' {O}]"),
            vec![(1, 1)],
            end,
        ),
    ]
}

fn ts(text: &str) -> i64 {
    match parse_value(text, DataType::Timestamp) {
        Ok(Value::Timestamp(t)) => t,
        other => panic!("{text}: {other:?}"),
    }
}

fn load() -> Vec<ColumnBatch> {
    let path = std::env::var("TCQ_FLIGHTS_CSV").unwrap_or_else(|_| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/bench-data/flights-3m.csv").to_string()
    });
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e} (python3 scripts/bench.py writes it)"));
    let mut batches = Vec::new();
    let mut b = ColumnBatchBuilder::new(&TYPES, 64 * 1024);
    let mut n = 0;
    for line in text.lines().skip(1) {
        let mut row: Vec<Value> = line
            .split(',')
            .zip(TYPES)
            .map(|(f, t)| parse_value(f, t).expect("a flight"))
            .collect();
        let Value::Timestamp(t) = row[0] else {
            unreachable!("the first column is the time")
        };
        b.push_row(&mut row, t);
        n += 1;
        if n % (64 * 1024) == 0 {
            batches.push(b.finish());
        }
    }
    batches.push(b.finish());
    batches
}

fn exec_for(text: &str, windows: &[(i64, i64)]) -> QueryExec {
    let parsed = tcq::sql::parse(text).expect("parses");
    let Plan::Query(query) = tcq::sql::bind(&parsed[0], &Flights, &[]).expect("binds") else {
        unreachable!("a query")
    };
    let query: Query = *query;
    let start = ts("2001-01-01 00:00:00");
    let ws: Vec<Window> = windows
        .iter()
        .map(|&(r, s)| {
            let (r_us, s_us) = if s == 0 {
                (r * MIN, 1_000_000)
            } else {
                (r * MIN, s * MIN)
            };
            Window::new(r_us, s_us, Start::At(start)).expect("a window")
        })
        .collect();
    let limits = ExecLimits {
        groups_max: 1_000_000,
        open_instances_max: 100_000,
        empty_slide_events_max: u64::MAX,
        distinct_values_max: usize::MAX,
        coalesce_bytes: (64 << 20) / 64,
    };
    // As the server plans: at the assumed rate before data, re-planned at the first batch.
    let plan = tcq::exec::plan_windows(&query, &ws, 1000.0);
    let mut exec = QueryExec::new(
        query,
        ws.clone(),
        vec![None; ws.len()],
        plan,
        vec![],
        false,
        limits,
        0,
    )
    .expect("an executor");
    exec.set_planned_rate(1000.0);
    exec
}

/// `exec` on a plan of its windows with only `slider` (or panes) allowed, the groups
/// estimated from the first 1,024 flights as the server does, and no re-planning.
fn force(exec: QueryExec, slider: &str, first: &Batch, rate: f64) -> QueryExec {
    use tcq::wcg::{Slider, Sliders};
    let query = exec.query().clone();
    let windows = exec.windows().to_vec();
    let agg = query.aggregate.as_ref().expect("an aggregate");
    let groups = if agg.group_by.is_empty() {
        tcq::wcg::Groups::One
    } else {
        let Batch::Columns(c) = first else {
            unreachable!("columns")
        };
        let views = c.views();
        let seen: std::collections::HashSet<String> = (0..first.len())
            .map(|i| format!("{:?}", views[3].value(i)))
            .collect();
        tcq::wcg::Groups::estimate(seen.len(), first.len())
    };
    let mut workload = tcq::exec::query::workload_of(&query, rate, groups);
    let allowed = workload.sliders;
    let want = match slider {
        "two-stacks" => Slider::TwoStacks,
        "subtract-on-evict" => Slider::SubtractOnEvict,
        _ => Slider::Panes,
    };
    workload.sliders = Sliders::PANES;
    let sharing = tcq::exec::query::sharing_of_query(&query, &windows);
    let mut plan = tcq::wcg::plan_for(&windows, sharing, &workload);
    let ws: Vec<Window> = plan.nodes.iter().map(|n| n.window).collect();
    for n in &mut plan.nodes {
        if let Some(p) = n.parent {
            let fits = match want {
                Slider::TwoStacks => allowed.two_stacks,
                Slider::SubtractOnEvict => allowed.subtract && n.window.is_partitioned_by(&ws[p]),
                Slider::Panes => true,
            };
            if fits {
                n.slider = want;
            }
        }
    }
    let limits = exec.limits();
    let mut exec = QueryExec::new(
        query,
        windows.clone(),
        vec![None; windows.len()],
        plan,
        vec![],
        false,
        limits,
        0,
    )
    .expect("an executor");
    exec.fix_plan(rate);
    exec
}

fn run(
    text: &str,
    windows: &[(i64, i64)],
    end: &str,
    input: &[Batch],
    rate: f64,
    sliders: &str,
) -> (usize, f64, String) {
    let mut exec = exec_for(text, windows);
    if sliders != "model" {
        exec = force(exec, sliders, &input[0], rate);
    }
    let t0 = thread_cpu_secs();
    exec.replan_unstarted(rate).expect("re-plans");
    let mut events: Vec<Event> = Vec::new();
    let mut rows = 0;
    for batch in input {
        exec.push_batch(batch, &mut events).expect("runs");
        rows += events.drain(..).map(|e| e.row_count()).sum::<usize>();
    }
    exec.heartbeat(ts(end), &mut events).expect("advances");
    rows += events.drain(..).map(|e| e.row_count()).sum::<usize>();
    let secs = thread_cpu_secs() - t0;
    let plan: Vec<String> = exec
        .plan()
        .nodes
        .iter()
        .map(|n| {
            format!(
                "{}{}/{}{}",
                if n.user_windows.is_empty() { "f:" } else { "" },
                tcq::time::human_interval(n.window.range_us),
                tcq::time::human_interval(n.window.slide_us),
                n.parent
                    .map_or(String::new(), |p| format!(" <- {p} {}", n.slider))
            )
        })
        .collect();
    (rows, secs, plan.join("; "))
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let mut runs = 3;
    let mut sliders = "model".to_string();
    let mut only: Option<Vec<String>> = None;
    let mut i = 0;
    while i < args.len() {
        if args[i] == "--runs" {
            runs = args[i + 1].parse().expect("--runs N");
            i += 2;
            continue;
        }
        if args[i] == "--sliders" {
            sliders = args[i + 1].clone();
            i += 2;
            continue;
        }
        only = Some(args[i].split(',').map(str::to_string).collect());
        i += 1;
    }
    let mut input: Vec<Batch> = load().into_iter().map(Batch::Columns).collect();
    // The server's first step takes 1,024 tuples: the groups are estimated from those.
    let head = input.remove(0);
    input.insert(0, head.slice(1024..head.len()));
    input.insert(0, head.slice(0..1024));
    let tuples: usize = input.iter().map(Batch::len).sum();
    let (first, last) = (
        input[0].times()[0],
        *input.last().unwrap().times().last().unwrap(),
    );
    let rate = tuples as f64 / ((last - first) as f64 / 1e6);
    for (name, text, windows, end) in queries() {
        if only.as_ref().is_some_and(|o| !o.iter().any(|x| x == name)) {
            continue;
        }
        let mut best = f64::INFINITY;
        let mut out = (0, String::new());
        for _ in 0..runs {
            let (rows, secs, plan) = run(&text, &windows, end, &input, rate, &sliders);
            best = best.min(secs);
            out = (rows, plan);
        }
        println!(
            "{name}: {} rows, {best:.3} s, {:.2} M tuples/s; plan: {}",
            out.0,
            tuples as f64 / best / 1e6,
            out.1
        );
    }
}
