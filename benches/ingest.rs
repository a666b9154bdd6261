//! Per-stage benchmarks of the data path (run with `cargo bench --bench ingest`), each in
//! tuples per second on one core:
//!
//! - `copy_parse`: a COPY FROM STDIN of flights-like rows (timestamp, two integers, two
//!   three-letter codes), CSV and text format, fed in 8 KiB CopyData pieces as psql sends
//!   them, into a stream no query reads: parsing into columns, staging, and the commit.
//! - `encode`: one result row of Q1's shape (text, timestamp, bigint, numeric, integer)
//!   and one of floats, in PostgreSQL's text output, as every DataRow and COPY TO line is
//!   written.
//!
//! The rows are made here (deterministic), so the benchmark needs no data file.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tcq::engine::{Config, Engine, Outcome};
use tcq::types::{format_value, Value};

const ROWS: usize = 100_000;

/// `ROWS` flights-like lines: a timestamp every ~5 s from 2001-01-01, delay, distance,
/// origin, destination; `sep` between fields.
fn flights(sep: char) -> Vec<u8> {
    let codes = [
        "LAS", "PHL", "ATL", "SAV", "ORD", "DEN", "SFO", "JFK", "BOS", "SEA",
    ];
    let mut out = String::with_capacity(ROWS * 40);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..ROWS {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let secs = i * 5;
        let (d, h, m, s) = (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
        let delay = (x % 200) as i64 - 40;
        let distance = 100 + x % 2500;
        let o = codes[(x >> 20) as usize % codes.len()];
        let de = codes[(x >> 30) as usize % codes.len()];
        out.push_str(&format!(
            "2001-01-{:02} {h:02}:{m:02}:{s:02}{sep}{delay}{sep}{distance}{sep}{o}{sep}{de}\n",
            d + 1
        ));
    }
    out.into_bytes()
}

fn copy_parse(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let engine = rt.block_on(async { Engine::new(Config::default()) });
    let mut session = engine.session(1);
    rt.block_on(async {
        for stmt in session
            .prepare(
                "CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay integer, \
                 distance integer, origin text, destination text)",
            )
            .expect("prepare")
        {
            session.execute(&stmt, &[]).await.expect("create");
        }
    });
    let mut group = c.benchmark_group("copy_parse");
    group.throughput(Throughput::Elements(ROWS as u64));
    group.sample_size(20);
    for (name, format, sep) in [("csv", "csv", ','), ("text", "text", '\t')] {
        let data = flights(sep);
        let copy = session
            .prepare(&format!("COPY flights FROM STDIN WITH (FORMAT {format})"))
            .expect("prepare")
            .remove(0);
        group.bench_function(name, |b| {
            b.iter(|| {
                rt.block_on(async {
                    let Outcome::CopyIn(mut sink) =
                        session.execute(&copy, &[]).await.expect("copy")
                    else {
                        panic!("COPY FROM STDIN opens a sink");
                    };
                    for piece in data.chunks(8192) {
                        sink.feed(piece).await.expect("feed");
                    }
                    black_box(sink.finish().await.expect("finish"))
                })
            })
        });
    }
    group.finish();
}

fn encode(c: &mut Criterion) {
    let q1 = vec![
        Value::Text("LAS".into()),
        Value::Timestamp(978_310_800_000_000),
        Value::Int8(118),
        Value::Numeric("12.3898305084745763".parse().expect("numeric")),
        Value::Int4(412),
    ];
    let floats = vec![
        Value::Float8(12.389_830_508_474_576),
        Value::Float8(1e20),
        Value::Float4(0.1),
        Value::Float8(-3.0),
    ];
    let mut group = c.benchmark_group("encode");
    group.throughput(Throughput::Elements(1));
    let mut out = String::with_capacity(256);
    for (name, row) in [("q1_row", &q1), ("float_row", &floats)] {
        group.bench_function(name, |b| {
            b.iter(|| {
                out.clear();
                for v in black_box(row) {
                    format_value(v, &mut out);
                    out.push(',');
                }
                black_box(out.len())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, copy_parse, encode);
criterion_main!(benches);
