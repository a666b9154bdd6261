//! Columnar batches: tuples as typed columns with validity bitmaps (Apache Arrow arrays).
//!
//! COPY parses each field once and appends it to its column's builder; the staged statement
//! is a list of [`ColumnBatch`]es, about 30 bytes a flight where rows of [`Value`]s take 170,
//! so a COPY of millions of rows stays in memory instead of spilling and being read back.
//! The executor folds columnar batches without building rows when a query's group keys and
//! aggregate arguments are plain columns ([`super::QueryExec::push_columns`]); every other
//! query reads the same batch as rows ([`ColumnBatch::to_rows`]), through the
//! tuple-at-a-time evaluator that serves as the oracle.
//!
//! Design decision: the Arrow-native types (boolean, integers, floats, text and varchar,
//! timestamps in microseconds) are Arrow arrays, so later stages (archived streams written
//! as Parquet) can take them as they are; `numeric` and `interval` keep their [`Value`]s,
//! because PostgreSQL's numeric has a scale per value and its interval keeps microseconds
//! that Arrow's nanosecond interval cannot hold beyond 292 years.
//!
//! ```
//! use tcq::exec::columns::ColumnBatchBuilder;
//! use tcq::types::{DataType, Value};
//! let mut b = ColumnBatchBuilder::new(&[DataType::Timestamp, DataType::Text], 4);
//! b.push_row(&mut vec![Value::Timestamp(5), Value::Text("LAS".into())], 5);
//! b.push_row(&mut vec![Value::Timestamp(7), Value::Null], 7);
//! let batch = b.finish();
//! assert_eq!(batch.len(), 2);
//! assert_eq!(batch.to_rows().row(1), &[Value::Timestamp(7), Value::Null][..]);
//! ```

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float32Builder, Float64Builder, Int16Builder, Int32Builder, Int64Builder,
    StringBuilder, TimestampMicrosecondBuilder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, TimestampMicrosecondType,
};
use arrow_array::{Array, ArrayRef, BooleanArray, PrimitiveArray, StringArray};
use arrow_schema::DataType as ArrowType;

use super::RowBatch;
use crate::types::{DataType, Value};

/// The time zone Arrow records for `timestamptz` columns (tcq runs in UTC).
const UTC: &str = "+00:00";

/// One column of a [`ColumnBatch`].
#[derive(Clone, Debug)]
pub enum ColumnArray {
    /// boolean, smallint, integer, bigint, real, double precision, text, varchar, timestamp
    /// and timestamptz (microseconds; timestamptz carries the zone "+00:00").
    Arrow(ArrayRef),
    /// numeric and interval, one [`Value`] per row (see the module documentation).
    Values(Vec<Value>),
}

/// Tuples in arrival order as typed columns: `columns[c]` holds column `c` of every row and
/// `times[i]` row `i`'s timestamp (microseconds since the epoch).
#[derive(Clone, Debug, Default)]
pub struct ColumnBatch {
    /// One array per stream column, each of `times.len()` rows.
    pub columns: Vec<ColumnArray>,
    /// Each row's timestamp, microseconds since the epoch.
    pub times: Vec<i64>,
}

/// A typed view of one column, resolved once per batch so reading a value is a plain index.
pub enum ColumnView<'a> {
    /// boolean
    Bool(&'a BooleanArray),
    /// smallint
    Int2(&'a PrimitiveArray<Int16Type>),
    /// integer
    Int4(&'a PrimitiveArray<Int32Type>),
    /// bigint
    Int8(&'a PrimitiveArray<Int64Type>),
    /// real
    Float4(&'a PrimitiveArray<Float32Type>),
    /// double precision
    Float8(&'a PrimitiveArray<Float64Type>),
    /// text and varchar
    Text(&'a StringArray),
    /// timestamp (`false`) or timestamptz (`true`)
    Timestamp(&'a PrimitiveArray<TimestampMicrosecondType>, bool),
    /// numeric and interval
    Values(&'a [Value]),
}

impl ColumnView<'_> {
    /// Row `i` as a [`Value`] (text of up to 24 bytes is copied inline, without allocating).
    #[inline]
    pub fn value(&self, i: usize) -> Value {
        macro_rules! prim {
            ($a:expr, $v:path) => {
                if $a.is_null(i) {
                    Value::Null
                } else {
                    $v($a.value(i))
                }
            };
        }
        match self {
            ColumnView::Bool(a) => prim!(a, Value::Bool),
            ColumnView::Int2(a) => prim!(a, Value::Int2),
            ColumnView::Int4(a) => prim!(a, Value::Int4),
            ColumnView::Int8(a) => prim!(a, Value::Int8),
            ColumnView::Float4(a) => prim!(a, Value::Float4),
            ColumnView::Float8(a) => prim!(a, Value::Float8),
            ColumnView::Text(a) => {
                if a.is_null(i) {
                    Value::Null
                } else {
                    Value::Text(a.value(i).into())
                }
            }
            ColumnView::Timestamp(a, tz) => {
                if a.is_null(i) {
                    Value::Null
                } else if *tz {
                    Value::TimestampTz(a.value(i))
                } else {
                    Value::Timestamp(a.value(i))
                }
            }
            ColumnView::Values(v) => v[i].clone(),
        }
    }
}

impl ColumnBatch {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// True when the batch holds no row.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// Typed views of every column.
    pub fn views(&self) -> Vec<ColumnView<'_>> {
        self.columns.iter().map(view_of).collect()
    }

    /// Heap bytes held (Arrow buffers and values), for staging limits and queue budgets.
    pub fn heap_bytes(&self) -> usize {
        let cols: usize = self
            .columns
            .iter()
            .map(|c| match c {
                ColumnArray::Arrow(a) => a.get_array_memory_size(),
                ColumnArray::Values(v) => v.capacity() * std::mem::size_of::<Value>(),
            })
            .sum();
        cols + self.times.capacity() * 8
    }

    /// The same tuples as rows of [`Value`]s, for the tuple-at-a-time evaluator.
    pub fn to_rows(&self) -> RowBatch {
        let views = self.views();
        let mut rows = RowBatch::new(views.len());
        rows.values.reserve(self.len() * views.len());
        for i in 0..self.len() {
            rows.values.extend(views.iter().map(|v| v.value(i)));
        }
        rows.times = self.times.clone();
        rows
    }
}

fn view_of(c: &ColumnArray) -> ColumnView<'_> {
    let a = match c {
        ColumnArray::Values(v) => return ColumnView::Values(v),
        ColumnArray::Arrow(a) => a,
    };
    match a.data_type() {
        ArrowType::Boolean => ColumnView::Bool(a.as_boolean()),
        ArrowType::Int16 => ColumnView::Int2(a.as_primitive()),
        ArrowType::Int32 => ColumnView::Int4(a.as_primitive()),
        ArrowType::Int64 => ColumnView::Int8(a.as_primitive()),
        ArrowType::Float32 => ColumnView::Float4(a.as_primitive()),
        ArrowType::Float64 => ColumnView::Float8(a.as_primitive()),
        ArrowType::Utf8 => ColumnView::Text(a.as_string()),
        ArrowType::Timestamp(_, tz) => ColumnView::Timestamp(a.as_primitive(), tz.is_some()),
        other => unreachable!("ColumnBatchBuilder makes no {other} array"),
    }
}

/// The builder of one column.
enum ColumnBuilder {
    Bool(BooleanBuilder),
    Int2(Int16Builder),
    Int4(Int32Builder),
    Int8(Int64Builder),
    Float4(Float32Builder),
    Float8(Float64Builder),
    Text(StringBuilder),
    Timestamp(TimestampMicrosecondBuilder),
    Values(Vec<Value>),
}

impl ColumnBuilder {
    fn new(ty: DataType, rows: usize) -> ColumnBuilder {
        use ColumnBuilder as B;
        match ty {
            DataType::Bool => B::Bool(BooleanBuilder::with_capacity(rows)),
            DataType::Int2 => B::Int2(Int16Builder::with_capacity(rows)),
            DataType::Int4 => B::Int4(Int32Builder::with_capacity(rows)),
            DataType::Int8 => B::Int8(Int64Builder::with_capacity(rows)),
            DataType::Float4 => B::Float4(Float32Builder::with_capacity(rows)),
            DataType::Float8 => B::Float8(Float64Builder::with_capacity(rows)),
            DataType::Text | DataType::Varchar(_) => {
                B::Text(StringBuilder::with_capacity(rows, rows * 4))
            }
            DataType::Timestamp => B::Timestamp(TimestampMicrosecondBuilder::with_capacity(rows)),
            DataType::TimestampTz => {
                B::Timestamp(TimestampMicrosecondBuilder::with_capacity(rows).with_timezone(UTC))
            }
            DataType::Numeric | DataType::Interval => B::Values(Vec::with_capacity(rows)),
        }
    }

    /// Append `v`, a value of the column's type or NULL (taken, leaving NULL behind).
    #[inline]
    fn append(&mut self, v: &mut Value) {
        use ColumnBuilder as B;
        match (self, v) {
            (B::Values(b), v) => b.push(std::mem::replace(v, Value::Null)),
            (B::Bool(b), Value::Bool(x)) => b.append_value(*x),
            (B::Int2(b), Value::Int2(x)) => b.append_value(*x),
            (B::Int4(b), Value::Int4(x)) => b.append_value(*x),
            (B::Int8(b), Value::Int8(x)) => b.append_value(*x),
            (B::Float4(b), Value::Float4(x)) => b.append_value(*x),
            (B::Float8(b), Value::Float8(x)) => b.append_value(*x),
            (B::Text(b), Value::Text(x)) => b.append_value(x.as_str()),
            (B::Timestamp(b), Value::Timestamp(x) | Value::TimestampTz(x)) => b.append_value(*x),
            (b, v) => {
                debug_assert!(v.is_null(), "a column is built from values of its type");
                b.append_null();
            }
        }
    }

    fn append_null(&mut self) {
        use ColumnBuilder as B;
        match self {
            B::Bool(b) => b.append_null(),
            B::Int2(b) => b.append_null(),
            B::Int4(b) => b.append_null(),
            B::Int8(b) => b.append_null(),
            B::Float4(b) => b.append_null(),
            B::Float8(b) => b.append_null(),
            B::Text(b) => b.append_null(),
            B::Timestamp(b) => b.append_null(),
            B::Values(b) => b.push(Value::Null),
        }
    }

    fn finish(&mut self) -> ColumnArray {
        use ColumnBuilder as B;
        let a: ArrayRef = match self {
            B::Bool(b) => Arc::new(b.finish()),
            B::Int2(b) => Arc::new(b.finish()),
            B::Int4(b) => Arc::new(b.finish()),
            B::Int8(b) => Arc::new(b.finish()),
            B::Float4(b) => Arc::new(b.finish()),
            B::Float8(b) => Arc::new(b.finish()),
            B::Text(b) => Arc::new(b.finish()),
            B::Timestamp(b) => Arc::new(b.finish()),
            B::Values(b) => return ColumnArray::Values(std::mem::take(b)),
        };
        ColumnArray::Arrow(a)
    }
}

/// Builds [`ColumnBatch`]es a row at a time from parsed values.
pub struct ColumnBatchBuilder {
    builders: Vec<ColumnBuilder>,
    times: Vec<i64>,
    rows_hint: usize,
}

impl ColumnBatchBuilder {
    /// A builder for columns of `types`, sized for `rows_hint` rows per batch.
    pub fn new(types: &[DataType], rows_hint: usize) -> ColumnBatchBuilder {
        ColumnBatchBuilder {
            builders: types
                .iter()
                .map(|&t| ColumnBuilder::new(t, rows_hint))
                .collect(),
            times: Vec::with_capacity(rows_hint),
            rows_hint,
        }
    }

    /// Rows appended since the last [`ColumnBatchBuilder::finish`].
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// True when no row was appended since the last finish.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// Append one row (one value per column, of the column's type or NULL; the values are
    /// taken) with its timestamp.
    pub fn push_row(&mut self, row: &mut [Value], t_us: i64) {
        debug_assert_eq!(row.len(), self.builders.len(), "one value per column");
        for (b, v) in self.builders.iter_mut().zip(row.iter_mut()) {
            b.append(v);
        }
        self.times.push(t_us);
    }

    /// The rows appended so far as a batch; the builder starts a new one.
    pub fn finish(&mut self) -> ColumnBatch {
        let columns = self
            .builders
            .iter_mut()
            .map(ColumnBuilder::finish)
            .collect();
        let times = std::mem::replace(&mut self.times, Vec::with_capacity(self.rows_hint));
        // Values builders were emptied by `finish`; Arrow builders reset themselves.
        for b in &mut self.builders {
            if let ColumnBuilder::Values(v) = b {
                *v = Vec::with_capacity(self.rows_hint);
            }
        }
        ColumnBatch { columns, times }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Interval;
    use rust_decimal::Decimal;

    #[test]
    fn every_type_round_trips_with_nulls() {
        let types = [
            DataType::Bool,
            DataType::Int2,
            DataType::Int4,
            DataType::Int8,
            DataType::Float4,
            DataType::Float8,
            DataType::Numeric,
            DataType::Text,
            DataType::Varchar(Some(3)),
            DataType::Timestamp,
            DataType::TimestampTz,
            DataType::Interval,
        ];
        let full = vec![
            Value::Bool(true),
            Value::Int2(-3),
            Value::Int4(7),
            Value::Int8(-1 << 40),
            Value::Float4(1.5),
            Value::Float8(f64::NAN),
            Value::Numeric(Decimal::new(12345, 3)),
            Value::Text("a longer text than twenty-four bytes".into()),
            Value::Text("abc".into()),
            Value::Timestamp(-5),
            Value::TimestampTz(978_307_200_000_000),
            Value::Interval(Interval {
                months: 1,
                days: 2,
                micros: i64::MAX,
            }),
        ];
        let nulls = vec![Value::Null; types.len()];
        let mut b = ColumnBatchBuilder::new(&types, 2);
        for (i, row) in [&full, &nulls, &full].into_iter().enumerate() {
            b.push_row(&mut row.clone(), i as i64);
        }
        let batch = b.finish();
        assert!(b.is_empty());
        let rows = batch.to_rows();
        assert_eq!(rows.times, vec![0, 1, 2]);
        for (i, expected) in [&full, &nulls, &full].into_iter().enumerate() {
            for (c, (got, want)) in rows.row(i).iter().zip(expected.iter()).enumerate() {
                let same = match (got, want) {
                    (Value::Float8(x), Value::Float8(y)) => x.to_bits() == y.to_bits(),
                    _ => got == want,
                };
                assert!(same, "row {i} column {c}: {got:?} != {want:?}");
            }
        }
        // A second batch from the same builder starts empty.
        b.push_row(&mut nulls.clone(), 9);
        assert_eq!(b.finish().to_rows().row(0), &nulls[..]);
    }
}
