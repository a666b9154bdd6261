//! Criterion benchmarks of the executor's fold and merge stages, in tuples (or partials)
//! per second on one core: `cargo bench --bench fold`.
//!
//! The input is shaped like the flights benchmark (scripts/bench.sh): 65,536 tuples of a
//! text key with 300 distinct values and an integer column with one NULL in 50, folded into
//! the partial states of one window instance.
//! - `fold/kernels/*`: group ids of the batch from the key column, then the typed kernels
//!   ([`tcq::exec::kernels::fold_column`]) for Q1's count(*), avg and max, or Q3's
//!   ungrouped count(*) and sum;
//! - `fold/values/*`: the same states folded a tuple at a time through `Value`s and
//!   [`tcq::agg::Acc::update`], as the row evaluator does (the baseline);
//! - `merge/*`: one instance's partials of 300 groups merged into another's
//!   ([`tcq::exec::group::GroupTable::merge_from`], what a child window or a pane combine
//!   costs per group).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tcq::agg::AggSpec;
use tcq::exec::columns::{ColumnBatch, ColumnBatchBuilder};
use tcq::exec::group::{GroupDict, GroupTable, KeyHasher};
use tcq::exec::kernels::{fold_column, intern_keys};
use tcq::sql::AggFunc;
use tcq::types::{DataType, Value};

const ROWS: usize = 65_536;
const GROUPS: usize = 300;

/// Columns: origin (text), delay (integer).
fn batch() -> ColumnBatch {
    let mut b = ColumnBatchBuilder::new(&[DataType::Text, DataType::Int4], ROWS);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 0..ROWS {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let origin = Value::Text(format!("A{:02}", x % GROUPS as u64).into());
        let delay = if i % 50 == 0 {
            Value::Null
        } else {
            Value::Int4((x >> 20) as i32 % 200 - 20)
        };
        b.push_row(&mut [origin, delay], i as i64);
    }
    b.finish()
}

fn q1_specs() -> Vec<AggSpec> {
    vec![
        AggSpec::new(AggFunc::CountStar, DataType::Int8, false),
        AggSpec::new(AggFunc::Avg, DataType::Int4, false),
        AggSpec::new(AggFunc::Max, DataType::Int4, false),
    ]
}

fn q3_specs() -> Vec<AggSpec> {
    vec![
        AggSpec::new(AggFunc::CountStar, DataType::Int8, false),
        AggSpec::new(AggFunc::Sum, DataType::Int4, false),
    ]
}

/// Fold the whole batch with the kernels; `keys`: the key columns.
fn fold_kernels(batch: &ColumnBatch, specs: &[AggSpec], keys: &[usize]) -> GroupTable {
    let views = batch.views();
    let hasher = KeyHasher::new();
    let mut dict = GroupDict::new(keys.len());
    let rows: Vec<u32> = (0..batch.len() as u32).collect();
    let mut gids = Vec::new();
    intern_keys(&mut dict, &hasher, &views, keys, &rows, &mut gids);
    let mut table = GroupTable::new();
    let slots: Vec<u32> = gids
        .iter()
        .map(|&g| table.slot(g, specs, usize::MAX).unwrap() as u32)
        .collect();
    // count(*) reads no column; the other calls read column 1.
    for (j, spec) in specs.iter().enumerate() {
        let arg = (j > 0).then(|| &views[1]);
        fold_column(spec, j, specs.len(), table.accs_mut(), &slots, arg, &rows);
    }
    table
}

/// Fold the whole batch a tuple at a time through values.
fn fold_values(batch: &ColumnBatch, specs: &[AggSpec], keys: &[usize]) -> GroupTable {
    let views = batch.views();
    let hasher = KeyHasher::new();
    let mut dict = GroupDict::new(keys.len());
    let mut table = GroupTable::new();
    let (mut key, mut args) = (Vec::new(), Vec::new());
    for i in 0..batch.len() {
        key.clear();
        key.extend(keys.iter().map(|&c| views[c].value(i)));
        args.clear();
        args.extend(specs.iter().enumerate().map(|(j, _)| {
            if j == 0 {
                Value::Bool(true)
            } else {
                views[1].value(i)
            }
        }));
        let gid = dict.intern(hasher.hash(&key), &key);
        let slot = table.slot(gid, specs, usize::MAX).unwrap();
        table.update(slot, specs, &args).unwrap();
    }
    table
}

fn fold(c: &mut Criterion) {
    let batch = batch();
    let mut g = c.benchmark_group("fold");
    g.throughput(Throughput::Elements(ROWS as u64));
    let (q1, q3) = (q1_specs(), q3_specs());
    g.bench_function("kernels/q1_grouped_count_avg_max", |b| {
        b.iter(|| black_box(fold_kernels(&batch, &q1, &[0])))
    });
    g.bench_function("values/q1_grouped_count_avg_max", |b| {
        b.iter(|| black_box(fold_values(&batch, &q1, &[0])))
    });
    g.bench_function("kernels/q3_ungrouped_count_sum", |b| {
        b.iter(|| black_box(fold_kernels(&batch, &q3, &[])))
    });
    g.bench_function("values/q3_ungrouped_count_sum", |b| {
        b.iter(|| black_box(fold_values(&batch, &q3, &[])))
    });
    g.finish();
}

fn merge(c: &mut Criterion) {
    let batch = batch();
    let specs = q1_specs();
    let part = fold_kernels(&batch, &specs, &[0]);
    let mut g = c.benchmark_group("merge");
    g.throughput(Throughput::Elements(part.len() as u64));
    g.bench_function("q1_partials_of_300_groups", |b| {
        b.iter(|| {
            let mut into = GroupTable::new();
            into.merge_from(&part, &specs, usize::MAX).unwrap();
            black_box(into)
        })
    });
    g.finish();
}

criterion_group!(benches, fold, merge);
criterion_main!(benches);
