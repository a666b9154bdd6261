//! The executor alone, on real data: Q1 of the performance section (per-origin count, avg
//! and max of delay over 1-hour windows sliding 10 minutes) over January 2001's 508,239
//! flights (`data/flights-2001-01.csv.gz`), pushed as column batches of 16 Ki tuples, as a
//! back-fill replays them. Folding, pane merging, finalisation and row blocks are in the
//! measure; the wire is not. Reported in tuples per second on one core.
//!
//! ```text
//! cargo bench --bench exec
//! ```

use std::io::Read;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tcq::agg::{sharing_of, AggSpec};
use tcq::exec::columns::{ColumnBatch, ColumnBatchBuilder};
use tcq::exec::{ExecLimits, QueryExec};
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

fn january() -> Vec<ColumnBatch> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/flights-2001-01.csv.gz");
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).expect("the January sample"))
        .read_to_string(&mut text)
        .expect("gzip");
    let mut batches = Vec::new();
    let mut b = ColumnBatchBuilder::new(&TYPES, 16 * 1024);
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
        if n % (16 * 1024) == 0 {
            batches.push(b.finish());
        }
    }
    batches.push(b.finish());
    batches
}

/// The flights stream, for the binder.
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

/// Q1 as the server binds it (the text of scripts/bench.py), and its window.
fn q1() -> (Query, Vec<Window>) {
    let text = "SELECT origin, wtime(*), count(*), avg(delay), max(delay) FROM flights \
                [RANGE BY '1 hour' SLIDE BY '10 minutes' START AT '2001-01-01 00:00:00'] \
                GROUP BY origin";
    let parsed = tcq::sql::parse(text).expect("Q1 parses");
    let Plan::Query(query) = tcq::sql::bind(&parsed[0], &Flights, &[]).expect("Q1 binds") else {
        unreachable!("Q1 is a query")
    };
    let Ok(Value::Timestamp(start)) = parse_value("2001-01-01 00:00:00", DataType::Timestamp)
    else {
        unreachable!("a timestamp")
    };
    let minute = 60_000_000;
    let w = Window::new(60 * minute, 10 * minute, Start::At(start)).expect("a window");
    (*query, vec![w])
}

fn exec(c: &mut Criterion) {
    let input = january();
    let tuples: usize = input.iter().map(ColumnBatch::len).sum();
    let (query, windows) = q1();
    let specs: Vec<AggSpec> = query
        .aggregate
        .as_ref()
        .unwrap()
        .calls
        .iter()
        .map(|c| AggSpec::new(c.func, c.arg_type, false))
        .collect();
    // The plan the server picks for a query alone (the events per second only weigh
    // factor windows against each other).
    let plan = tcq::wcg::plan(&windows, sharing_of(&specs), 17.0);
    let limits = ExecLimits {
        groups_max: 1_000_000,
        open_instances_max: 100_000,
        empty_slide_events_max: u64::MAX,
        distinct_values_max: usize::MAX,
        coalesce_bytes: 1 << 20,
    };
    let mut g = c.benchmark_group("exec");
    g.throughput(Throughput::Elements(tuples as u64));
    g.sample_size(10);
    g.bench_function("q1_january_flights", |b| {
        b.iter(|| {
            let mut exec = QueryExec::new(
                query.clone(),
                windows.clone(),
                vec![None],
                plan.clone(),
                vec![],
                false,
                limits,
                0,
            )
            .unwrap();
            let mut events = Vec::new();
            let mut rows = 0;
            for batch in &input {
                exec.push_columns(batch, &mut events).unwrap();
                rows += events.drain(..).map(|e| e.row_count()).sum::<usize>();
            }
            assert!(rows > 300_000, "Q1 over January gives {rows} rows");
            rows
        })
    });
    g.finish();
}

criterion_group!(benches, exec);
criterion_main!(benches);
