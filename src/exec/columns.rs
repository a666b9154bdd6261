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

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, TimestampMicrosecondType,
};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, BooleanArray, PrimitiveArray, StringArray};
use arrow_buffer::{
    BooleanBuffer, Buffer, NullBuffer, NullBufferBuilder, OffsetBuffer, ScalarBuffer,
};
use arrow_schema::DataType as ArrowType;

use super::RowBatch;
use crate::types::{DataType, Value};

/// The time zone Arrow records for `timestamptz` columns (tcq runs in UTC).
const UTC: &str = "+00:00";

/// One column of a [`ColumnBatch`].
#[derive(Clone, Debug)]
pub(crate) enum ColumnArray {
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
    pub(crate) columns: Vec<ColumnArray>,
    /// Each row's timestamp, microseconds since the epoch. A batch built with a time
    /// column ([`ColumnBatchBuilder::set_time_column`]) shares that column's buffer here
    /// instead of holding a second copy of it.
    pub(crate) times: ScalarBuffer<i64>,
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

    /// Rows `rows` as a batch of their own: Arrow arrays sliced without copying, numeric
    /// and interval values copied. Panics when `rows` is out of bounds.
    pub(crate) fn slice(&self, rows: std::ops::Range<usize>) -> ColumnBatch {
        ColumnBatch {
            columns: self
                .columns
                .iter()
                .map(|c| match c {
                    ColumnArray::Arrow(a) => ColumnArray::Arrow(a.slice(rows.start, rows.len())),
                    ColumnArray::Values(v) => ColumnArray::Values(v[rows.clone()].to_vec()),
                })
                .collect(),
            times: self.times.slice(rows.start, rows.len()),
        }
    }

    /// The rows whose time is at least `from_us`, in their order: the batch itself when
    /// every row is, `None` when no row is (a back-fill from a START AT skips the rest).
    pub(crate) fn since(self, from_us: i64) -> Option<ColumnBatch> {
        let keep = self.times.iter().filter(|&&t| t >= from_us).count();
        if keep == self.len() {
            return Some(self);
        }
        if keep == 0 {
            return None;
        }
        let mask: Vec<bool> = self.times.iter().map(|&t| t >= from_us).collect();
        let predicate = BooleanArray::from(mask.clone());
        let columns = self
            .columns
            .into_iter()
            .map(|c| match c {
                ColumnArray::Arrow(a) => ColumnArray::Arrow(
                    arrow_select::filter::filter(&a, &predicate)
                        .expect("mask has the batch's length"),
                ),
                ColumnArray::Values(v) => ColumnArray::Values(
                    v.into_iter()
                        .zip(&mask)
                        .filter(|(_, &k)| k)
                        .map(|(v, _)| v)
                        .collect(),
                ),
            })
            .collect();
        let times: Vec<i64> = self
            .times
            .iter()
            .copied()
            .filter(|&t| t >= from_us)
            .collect();
        Some(ColumnBatch {
            columns,
            times: times.into(),
        })
    }

    /// True when the batch holds no row.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// Typed views of every column.
    pub fn views(&self) -> Vec<ColumnView<'_>> {
        self.columns.iter().map(view_of).collect()
    }

    /// Heap bytes held (Arrow buffers and values), for staging limits and queue budgets;
    /// times shared with a column count once.
    pub(crate) fn heap_bytes(&self) -> usize {
        let cols: usize = self
            .columns
            .iter()
            .map(|c| match c {
                ColumnArray::Arrow(a) => a.get_array_memory_size(),
                ColumnArray::Values(v) => v.capacity() * std::mem::size_of::<Value>(),
            })
            .sum();
        let times = self.times.inner();
        let shared = self.columns.iter().any(|c| match c {
            ColumnArray::Arrow(a) => a
                .as_primitive_opt::<TimestampMicrosecondType>()
                .is_some_and(|a| a.values().inner().ptr_eq(times)),
            ColumnArray::Values(_) => false,
        });
        cols + if shared { 0 } else { times.capacity() }
    }

    /// The same tuples as rows of [`Value`]s, for the tuple-at-a-time evaluator.
    pub fn to_rows(&self) -> RowBatch {
        let views = self.views();
        let mut rows = RowBatch::new(views.len());
        rows.values.reserve(self.len() * views.len());
        for i in 0..self.len() {
            rows.values.extend(views.iter().map(|v| v.value(i)));
        }
        rows.times = self.times.to_vec();
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

/// Values of one fixed-width column and their validity (a NULL row holds the default).
struct Prim<T> {
    values: Vec<T>,
    nulls: NullBufferBuilder,
}

impl<T: Copy + Default> Prim<T> {
    fn new(rows: usize) -> Prim<T> {
        Prim {
            values: Vec::with_capacity(rows),
            nulls: NullBufferBuilder::new(rows),
        }
    }

    #[inline]
    fn push(&mut self, v: T) {
        self.values.push(v);
        self.nulls.append_non_null();
    }

    #[inline]
    fn push_null(&mut self) {
        self.values.push(T::default());
        self.nulls.append_null();
    }

    fn truncate(&mut self, len: usize) {
        self.values.truncate(len);
        self.nulls.truncate(len);
    }

    /// The values so far (copied out at their size) and their validity; the builder
    /// starts again and keeps its room, so a batch of a few rows holds no more than those.
    /// With `hand_over`, the vector itself when at least half of it is used (see
    /// [`ColumnBatchBuilder::into_batch`]).
    fn take(&mut self, hand_over: bool) -> (Vec<T>, Option<NullBuffer>) {
        (take_vec(&mut self.values, hand_over), self.nulls.finish())
    }
}

/// Whether at least half of `v`'s room is used: then it is worth handing over (see
/// [`take_vec`]) rather than copying out.
fn mostly_used<T>(v: &Vec<T>) -> bool {
    v.len() >= v.capacity() / 2
}

/// `v`'s values, `v` left empty: with `hand_over` and at least half of its room used,
/// `v` itself with its unused room given back (the allocator shrinks a block where it
/// stands, without copying it) and `[]` left behind; otherwise a copy at their size, `v`
/// keeping its room for the next batch.
fn take_vec<T: Copy>(v: &mut Vec<T>, hand_over: bool) -> Vec<T> {
    if hand_over && mostly_used(v) {
        let mut v = std::mem::take(v);
        v.shrink_to_fit();
        v
    } else {
        let out = v.as_slice().to_vec();
        v.clear();
        out
    }
}

fn primitive<P: ArrowPrimitiveType>(p: &mut Prim<P::Native>, hand_over: bool) -> PrimitiveArray<P> {
    let (values, nulls) = p.take(hand_over);
    PrimitiveArray::new(ScalarBuffer::from(values), nulls)
}

/// A text column: every value's bytes in one shared buffer, delimited by offsets.
struct Texts {
    /// `offsets[i]..offsets[i + 1]` are row `i`'s bytes; starts as `[0]`.
    offsets: Vec<i32>,
    bytes: Vec<u8>,
    nulls: NullBufferBuilder,
}

impl Texts {
    fn new(rows: usize) -> Texts {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        Texts {
            offsets,
            bytes: Vec::with_capacity(rows * 4),
            nulls: NullBufferBuilder::new(rows),
        }
    }

    #[inline]
    fn push(&mut self, s: &str) {
        self.bytes.extend_from_slice(s.as_bytes());
        self.offsets.push(self.bytes.len() as i32);
        self.nulls.append_non_null();
    }

    /// Append `src[a..b]`. A value of at most 16 bytes with 16 bytes of `src` from `a` is
    /// copied as one fixed-size move and cut back to its length: no call per value, which
    /// short codes would mostly pay for.
    ///
    /// # Safety
    /// `a <= b <= src.len()`, both on character boundaries of `src`: [`Texts::take`] seals
    /// the bytes as UTF-8 without checking them again.
    #[inline]
    unsafe fn push_within(&mut self, src: &str, a: usize, b: usize) {
        debug_assert!(src.is_char_boundary(a) && src.is_char_boundary(b) && a <= b);
        let len = b - a;
        match src.as_bytes().get(a..a + 16) {
            Some(word) if len <= 16 => {
                let old = self.bytes.len();
                let word: &[u8; 16] = word.try_into().expect("16 bytes");
                self.bytes.extend_from_slice(word);
                self.bytes.truncate(old + len);
            }
            _ => self.bytes.extend_from_slice(&src.as_bytes()[a..b]),
        }
        self.offsets.push(self.bytes.len() as i32);
        self.nulls.append_non_null();
    }

    #[inline]
    fn push_null(&mut self) {
        self.offsets.push(self.bytes.len() as i32);
        self.nulls.append_null();
    }

    fn truncate(&mut self, len: usize) {
        if len + 1 < self.offsets.len() {
            self.offsets.truncate(len + 1);
            self.bytes.truncate(self.offsets[len] as usize);
            self.nulls.truncate(len);
        }
    }

    /// The texts so far (copied out at their size); the builder starts again with its room.
    /// With `hand_over`, each vector itself when at least half of it is used (see
    /// [`ColumnBatchBuilder::into_batch`]).
    fn take(&mut self, hand_over: bool) -> StringArray {
        let offsets = take_vec(&mut self.offsets, hand_over);
        self.offsets.clear();
        self.offsets.push(0);
        let bytes = take_vec(&mut self.bytes, hand_over);
        if self.bytes.capacity() > TEXT_ROOM_KEPT {
            self.bytes = Vec::new(); // a batch of huge texts: keep no such room for later
        }
        let nulls = self.nulls.finish();
        let (offsets, bytes) = (ScalarBuffer::from(offsets), Buffer::from_vec(bytes));
        if bytes.len() > i32::MAX as usize {
            // Some offset wrapped; the checked constructor refuses them (never reached:
            // a batch is sealed once a column holds `TEXT_BYTES_FULL`).
            return StringArray::new(OffsetBuffer::new(offsets), bytes, nulls);
        }
        debug_assert!(
            StringArray::try_new(
                OffsetBuffer::new(offsets.clone()),
                bytes.clone(),
                nulls.clone()
            )
            .is_ok(),
            "a text builder's offsets and bytes are a valid string array"
        );
        // SAFETY: every value was appended as a whole `&str` (`push`), as `src[a..b]` with
        // `a <= b` on character boundaries of a `&str` (`push_within`'s contract), or as
        // nothing (`push_null`), so `bytes` is UTF-8 and each offset, the bytes' length
        // after an append, is a character boundary; `offsets` starts at 0 (`new` and the
        // reset above) and never decreases, since `truncate` cuts the offsets and the bytes
        // back to a recorded offset together. The bytes' length is at most `i32::MAX`, and
        // every offset is at most that length, so none of the `as i32` casts wrapped and
        // the last offset is the bytes' length. That is what `StringArray::try_new` checks
        // (with the null buffer, which has one bit per offset after the first).
        unsafe { StringArray::new_unchecked(OffsetBuffer::new_unchecked(offsets), bytes, nulls) }
    }
}

/// The builder of one column.
///
/// Its variant is an explicit byte (`repr(u8)`) rather than a niche in `Values`'s
/// capacity word: every append matches on it, and a niche takes several instructions to
/// decode where a tag byte takes one compare.
#[repr(u8)]
enum ColumnBuilder {
    Bool(Prim<bool>),
    Int2(Prim<i16>),
    Int4(Prim<i32>),
    Int8(Prim<i64>),
    Float4(Prim<f32>),
    Float8(Prim<f64>),
    Text(Texts),
    /// timestamp (`false`) or timestamptz (`true`), microseconds.
    Timestamp(Prim<i64>, bool),
    Values(Vec<Value>),
}

impl ColumnBuilder {
    fn new(ty: DataType, rows: usize) -> ColumnBuilder {
        use ColumnBuilder as B;
        match ty {
            DataType::Bool => B::Bool(Prim::new(rows)),
            DataType::Int2 => B::Int2(Prim::new(rows)),
            DataType::Int4 => B::Int4(Prim::new(rows)),
            DataType::Int8 => B::Int8(Prim::new(rows)),
            DataType::Float4 => B::Float4(Prim::new(rows)),
            DataType::Float8 => B::Float8(Prim::new(rows)),
            DataType::Text | DataType::Varchar(_) | DataType::Bpchar(_) => {
                B::Text(Texts::new(rows))
            }
            DataType::Timestamp => B::Timestamp(Prim::new(rows), false),
            DataType::TimestampTz => B::Timestamp(Prim::new(rows), true),
            DataType::Numeric | DataType::Interval | DataType::Date | DataType::Time => {
                B::Values(Vec::with_capacity(rows))
            }
        }
    }

    /// Append `v`, a value of the column's type or NULL (taken, leaving NULL behind).
    #[inline]
    fn append(&mut self, v: &mut Value) {
        use ColumnBuilder as B;
        match (self, v) {
            (B::Values(b), v) => b.push(std::mem::replace(v, Value::Null)),
            (B::Bool(b), Value::Bool(x)) => b.push(*x),
            (B::Int2(b), Value::Int2(x)) => b.push(*x),
            (B::Int4(b), Value::Int4(x)) => b.push(*x),
            (B::Int8(b), Value::Int8(x)) => b.push(*x),
            (B::Float4(b), Value::Float4(x)) => b.push(*x),
            (B::Float8(b), Value::Float8(x)) => b.push(*x),
            (B::Text(b), Value::Text(x)) => b.push(x.as_str()),
            (B::Timestamp(b, _), Value::Timestamp(x) | Value::TimestampTz(x)) => b.push(*x),
            (b, v) => {
                debug_assert!(v.is_null(), "a column is built from values of its type");
                b.append_null();
            }
        }
    }

    #[inline]
    fn append_null(&mut self) {
        use ColumnBuilder as B;
        match self {
            B::Bool(b) => b.push_null(),
            B::Int2(b) => b.push_null(),
            B::Int4(b) => b.push_null(),
            B::Int8(b) => b.push_null(),
            B::Float4(b) => b.push_null(),
            B::Float8(b) => b.push_null(),
            B::Text(b) => b.push_null(),
            B::Timestamp(b, _) => b.push_null(),
            B::Values(b) => b.push(Value::Null),
        }
    }

    fn truncate(&mut self, len: usize) {
        use ColumnBuilder as B;
        match self {
            B::Bool(b) => b.truncate(len),
            B::Int2(b) => b.truncate(len),
            B::Int4(b) => b.truncate(len),
            B::Int8(b) => b.truncate(len),
            B::Float4(b) => b.truncate(len),
            B::Float8(b) => b.truncate(len),
            B::Text(b) => b.truncate(len),
            B::Timestamp(b, _) => b.truncate(len),
            B::Values(b) => b.truncate(len),
        }
    }

    fn finish(&mut self, hand_over: bool) -> ColumnArray {
        use ColumnBuilder as B;
        let h = hand_over;
        let a: ArrayRef = match self {
            B::Bool(b) => {
                let (values, nulls) = b.take(false);
                Arc::new(BooleanArray::new(
                    BooleanBuffer::from_iter(values.iter().copied()),
                    nulls,
                ))
            }
            B::Int2(b) => Arc::new(primitive::<Int16Type>(b, h)),
            B::Int4(b) => Arc::new(primitive::<Int32Type>(b, h)),
            B::Int8(b) => Arc::new(primitive::<Int64Type>(b, h)),
            B::Float4(b) => Arc::new(primitive::<Float32Type>(b, h)),
            B::Float8(b) => Arc::new(primitive::<Float64Type>(b, h)),
            B::Text(b) => Arc::new(b.take(h)),
            B::Timestamp(b, tz) => {
                let a = primitive::<TimestampMicrosecondType>(b, h);
                Arc::new(if *tz { a.with_timezone(UTC) } else { a })
            }
            B::Values(b) => return ColumnArray::Values(std::mem::take(b)),
        };
        ColumnArray::Arrow(a)
    }
}

/// Text bytes of room a column builder keeps between batches.
const TEXT_ROOM_KEPT: usize = 64 << 20;

/// Text bytes per batch past which [`ColumnBatchBuilder::is_full`] says so (text offsets
/// are 32-bit; one row more, bounded by `copy_line_bytes_max`, still fits).
const TEXT_BYTES_FULL: usize = 1 << 30;

/// Builds [`ColumnBatch`]es a row at a time: from parsed [`Value`]s
/// ([`ColumnBatchBuilder::push_row`]), or a field at a time from typed scalars (the
/// `append_*` methods, then [`ColumnBatchBuilder::end_row`]), which is how COPY fills
/// columns without making a [`Value`] per field.
///
/// ```ignore
/// use tcq::exec::columns::ColumnBatchBuilder;
/// use tcq::types::{DataType, Value};
/// let mut b = ColumnBatchBuilder::new(&[DataType::Int4, DataType::Text], 4);
/// b.append_int(0, 7);
/// b.append_str(1, "LAS");
/// b.end_row(100);
/// b.append_int(0, 8); // a row abandoned half way (a bad field) ...
/// b.truncate(); // ... leaves no trace
/// let batch = b.finish();
/// assert_eq!(batch.to_rows().row(0), &[Value::Int4(7), Value::Text("LAS".into())][..]);
/// assert_eq!(batch.len(), 1);
/// ```
pub struct ColumnBatchBuilder {
    builders: Vec<ColumnBuilder>,
    /// Each closed row's timestamp; empty when `time_column` holds them.
    times: Vec<i64>,
    /// The timestamp column every row's time is the value of, if the builder was told.
    time_column: Option<usize>,
    /// Rows closed since the last finish.
    rows: usize,
    rows_hint: usize,
    /// A text column of the batch holds `TEXT_BYTES_FULL` bytes or more.
    text_full: bool,
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
            time_column: None,
            rows: 0,
            rows_hint,
            text_full: false,
        }
    }

    /// Every row's time is its value in column `c`, a timestamp or timestamptz column (a
    /// stream's TIMESTAMPCOLUMN): the batches share that column's buffer as their times
    /// instead of keeping a second copy. The time each row is closed with must be that
    /// value, never NULL (COPY refuses such a row before it is closed).
    pub(crate) fn set_time_column(&mut self, c: usize) {
        debug_assert!(matches!(self.builders[c], ColumnBuilder::Timestamp(..)));
        debug_assert!(self.rows == 0, "set before the first row");
        if matches!(self.builders[c], ColumnBuilder::Timestamp(..)) {
            self.time_column = Some(c);
            self.times = Vec::new();
        }
    }

    /// Close a row whose time is `t_us`.
    #[inline(always)]
    fn close_row(&mut self, t_us: i64) {
        match self.time_column {
            Some(c) => debug_assert_eq!(
                match &self.builders[c] {
                    ColumnBuilder::Timestamp(b, _) => b.values.last().copied(),
                    _ => None,
                },
                Some(t_us),
                "a row's time is its time column's value"
            ),
            None => self.times.push(t_us),
        }
        self.rows += 1;
    }

    /// Rows appended since the last [`ColumnBatchBuilder::finish`].
    pub(crate) fn len(&self) -> usize {
        self.rows
    }

    /// True when no row was appended since the last finish.
    pub(crate) fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// True once the batch holds `rows_hint` rows or 1 GiB of text in one column: time to
    /// [`ColumnBatchBuilder::finish`] it.
    pub(crate) fn is_full(&self) -> bool {
        self.rows >= self.rows_hint || self.text_full
    }

    /// Note whether text column `c` (if it is one) has reached `TEXT_BYTES_FULL`.
    #[inline]
    fn note_text(&mut self, c: usize) {
        if let ColumnBuilder::Text(t) = &self.builders[c] {
            self.text_full |= t.bytes.len() >= TEXT_BYTES_FULL;
        }
    }

    /// Append one row (one value per column, of the column's type or NULL; the values are
    /// taken) with its timestamp.
    pub fn push_row(&mut self, row: &mut [Value], t_us: i64) {
        debug_assert_eq!(row.len(), self.builders.len(), "one value per column");
        for (b, v) in self.builders.iter_mut().zip(row.iter_mut()) {
            b.append(v);
        }
        for c in 0..self.builders.len() {
            self.note_text(c);
        }
        self.close_row(t_us);
    }

    /// Append NULL to column `c` of the row being built.
    #[inline(always)]
    pub(crate) fn append_null(&mut self, c: usize) {
        self.builders[c].append_null();
    }

    /// Append an integer to column `c` of the row being built, a smallint, integer or
    /// bigint column; the caller has checked that `v` fits the column's type.
    #[inline(always)]
    pub(crate) fn append_int(&mut self, c: usize, v: i64) {
        match &mut self.builders[c] {
            ColumnBuilder::Int2(b) => b.push(v as i16),
            ColumnBuilder::Int4(b) => b.push(v as i32),
            ColumnBuilder::Int8(b) => b.push(v),
            _ => unreachable!("append_int on a column that holds no integers"),
        }
    }

    /// Append a float to column `c` of the row being built, a real (rounded to `f32` as
    /// PostgreSQL's float4 input does) or double precision column.
    #[inline]
    pub(crate) fn append_float(&mut self, c: usize, v: f64) {
        match &mut self.builders[c] {
            ColumnBuilder::Float4(b) => b.push(v as f32),
            ColumnBuilder::Float8(b) => b.push(v),
            _ => unreachable!("append_float on a column that holds no floats"),
        }
    }

    /// Append a timestamp (microseconds since the epoch) to column `c` of the row being
    /// built, a timestamp or timestamptz column.
    #[inline(always)]
    pub(crate) fn append_timestamp(&mut self, c: usize, us: i64) {
        match &mut self.builders[c] {
            ColumnBuilder::Timestamp(b, _) => b.push(us),
            _ => unreachable!("append_timestamp on a column that holds no timestamps"),
        }
    }

    /// Append text to column `c` of the row being built, a text or varchar column (the
    /// caller has checked any length limit).
    #[inline]
    pub(crate) fn append_str(&mut self, c: usize, s: &str) {
        match &mut self.builders[c] {
            ColumnBuilder::Text(b) => {
                b.push(s);
                self.text_full |= b.bytes.len() >= TEXT_BYTES_FULL;
            }
            _ => unreachable!("append_str on a column that holds no text"),
        }
    }

    /// Append `src[a..b]` to column `c` of the row being built, a text or varchar column
    /// (the caller has checked any length limit). The same as `append_str(c, &src[a..b])`,
    /// faster for short values.
    ///
    /// # Safety
    /// `a <= b <= src.len()`, both on character boundaries of `src` (the batch's text is
    /// sealed as UTF-8 without checking it again).
    #[inline(always)]
    pub(crate) unsafe fn append_str_within(&mut self, c: usize, src: &str, a: usize, b: usize) {
        match &mut self.builders[c] {
            ColumnBuilder::Text(t) => {
                // SAFETY: this function's contract.
                unsafe { t.push_within(src, a, b) };
                self.text_full |= t.bytes.len() >= TEXT_BYTES_FULL;
            }
            _ => unreachable!("append_str_within on a column that holds no text"),
        }
    }

    /// Append `v` (of the column's type, or NULL; taken) to column `c` of the row being
    /// built.
    #[inline]
    pub(crate) fn append_value(&mut self, c: usize, v: &mut Value) {
        self.builders[c].append(v);
        self.note_text(c);
    }

    /// Close the row being built (every column has had one append) with its timestamp.
    #[inline]
    pub(crate) fn end_row(&mut self, t_us: i64) {
        debug_assert!(
            self.builders.iter().all(|b| column_len(b) == self.rows + 1),
            "every column has one value more than the closed rows"
        );
        self.close_row(t_us);
    }

    /// Drop whatever the row being built has appended so far (a bad field was found in
    /// it), leaving the closed rows as they are.
    pub(crate) fn truncate(&mut self) {
        let len = self.rows;
        for b in &mut self.builders {
            b.truncate(len);
        }
    }

    /// The rows appended so far as a batch; the builder starts a new one.
    pub fn finish(&mut self) -> ColumnBatch {
        self.seal(false)
    }

    /// The rows appended so far as a batch, for a builder that is done: each column's
    /// vector becomes the batch's buffer instead of being copied out (a vector less than
    /// half used is still copied, so the batch holds at most twice its bytes). COPY's
    /// parse of a chunk fills a builder of its own and hands it over this way: the rows
    /// are written once, into the memory they are staged in.
    pub(crate) fn into_batch(mut self) -> ColumnBatch {
        self.seal(true)
    }

    /// [`ColumnBatchBuilder::finish`], handing vectors over as `into_batch` does when
    /// `hand_over`.
    fn seal(&mut self, hand_over: bool) -> ColumnBatch {
        self.truncate();
        let columns: Vec<ColumnArray> = self
            .builders
            .iter_mut()
            .map(|b| b.finish(hand_over))
            .collect();
        let shared = self.time_column.and_then(|c| match &columns[c] {
            ColumnArray::Arrow(a) => a.as_primitive_opt::<TimestampMicrosecondType>().map(|a| {
                debug_assert_eq!(a.null_count(), 0, "a closed row has its time");
                a.values().clone()
            }),
            ColumnArray::Values(_) => None,
        });
        let times = match shared {
            Some(times) => times,
            None => take_vec(&mut self.times, hand_over).into(),
        };
        debug_assert_eq!(times.len(), self.rows);
        self.rows = 0;
        self.text_full = false;
        ColumnBatch { columns, times }
    }
}

/// Values appended to a column builder so far (for debug checks).
fn column_len(b: &ColumnBuilder) -> usize {
    use ColumnBuilder as B;
    match b {
        B::Bool(b) => b.values.len(),
        B::Int2(b) => b.values.len(),
        B::Int4(b) => b.values.len(),
        B::Int8(b) => b.values.len(),
        B::Float4(b) => b.values.len(),
        B::Float8(b) => b.values.len(),
        B::Text(b) => b.offsets.len() - 1,
        B::Timestamp(b, _) => b.values.len(),
        B::Values(b) => b.len(),
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

    #[test]
    fn times_share_the_time_columns_buffer_and_count_once() {
        let types = [DataType::Int4, DataType::TimestampTz];
        let mut b = ColumnBatchBuilder::new(&types, 8);
        b.set_time_column(1);
        for (i, t) in [30i64, 10, 20].into_iter().enumerate() {
            b.append_int(0, i as i64);
            b.append_timestamp(1, t);
            b.end_row(t);
        }
        // A row abandoned half way leaves no time behind.
        b.append_int(0, 9);
        b.truncate();
        assert_eq!(b.len(), 3);
        let batch = b.finish();
        assert!(b.is_empty());
        assert_eq!(&batch.times[..], &[30, 10, 20]);
        let ColumnArray::Arrow(ts) = &batch.columns[1] else {
            panic!("an Arrow column")
        };
        let ts = ts.as_primitive::<TimestampMicrosecondType>();
        assert!(ts.values().inner().ptr_eq(batch.times.inner()));
        let apart = ColumnBatch {
            columns: batch.columns.clone(),
            times: batch.times.to_vec().into(),
        };
        assert_eq!(
            apart.heap_bytes() - batch.heap_bytes(),
            apart.times.inner().capacity()
        );
        assert_eq!(batch.to_rows().times, vec![30, 10, 20]);
        let sliced = batch.slice(1..3);
        assert_eq!(&sliced.times[..], &[10, 20]);
        let later = batch.since(15).expect("two rows");
        assert_eq!(&later.times[..], &[30, 20]);
        assert_eq!(later.to_rows().row(1)[0], Value::Int4(2));
        // The builder goes on with the next batch's rows.
        b.append_int(0, 5);
        b.append_timestamp(1, 40);
        b.end_row(40);
        assert_eq!(&b.finish().times[..], &[40]);
    }

    /// A builder of `hint` rows per batch (bigint, text, timestamp as the rows' time)
    /// holding `n` rows, the second's text NULL, and half a row abandoned.
    fn filled(hint: usize, n: usize) -> ColumnBatchBuilder {
        let types = [DataType::Int8, DataType::Text, DataType::Timestamp];
        let mut b = ColumnBatchBuilder::new(&types, hint);
        b.set_time_column(2);
        for i in 0..n as i64 {
            b.append_int(0, i - 1);
            match i {
                1 => b.append_null(1),
                _ => b.append_str(1, &"ab".repeat(i as usize + 1)),
            }
            b.append_timestamp(2, 1000 + i);
            b.end_row(1000 + i);
        }
        b.append_int(0, 99);
        b.append_str(1, "dropped");
        b.truncate();
        b
    }

    /// A text column sealed without arrow's checks equals the checked array of the same
    /// values, copied out and handed over: whole values, slices at character boundaries of
    /// multi-byte text (short ones by the 16-byte move, long ones not), empty values,
    /// NULLs, and a row abandoned half way.
    #[test]
    fn text_columns_seal_as_the_checked_array() {
        let src = "é,ab,€€€€€€€€€€ longer than sixteen bytes,,ü\n";
        let cut = |k: usize| src.match_indices(',').nth(k).map_or(0, |(i, _)| i);
        for hand_over in [false, true] {
            let mut b = ColumnBatchBuilder::new(&[DataType::Text], 8);
            let mut want: Vec<Option<&str>> = Vec::new();
            for (a, z) in [(0, cut(0)), (cut(0) + 1, cut(1)), (cut(1) + 1, cut(2))] {
                // SAFETY: `a <= z`, each at the string's start or next to a ','.
                unsafe { b.append_str_within(0, src, a, z) };
                b.end_row(0);
                want.push(Some(&src[a..z]));
            }
            b.append_str(0, "dropped");
            b.truncate();
            b.append_null(0);
            b.end_row(0);
            want.push(None);
            // SAFETY: an empty slice at a character boundary.
            unsafe { b.append_str_within(0, src, cut(2) + 1, cut(2) + 1) };
            b.end_row(0);
            want.push(Some(""));
            b.append_str(0, "ü");
            b.end_row(0);
            want.push(Some("ü"));
            let batch = if hand_over {
                b.into_batch()
            } else {
                b.finish()
            };
            let ColumnArray::Arrow(texts) = &batch.columns[0] else {
                panic!("an Arrow column")
            };
            let texts = texts.as_string::<i32>();
            assert_eq!(
                texts,
                &StringArray::from(want.clone()),
                "hand over {hand_over}"
            );
            let checked = StringArray::try_new(
                texts.offsets().clone(),
                texts.values().clone(),
                texts.nulls().cloned(),
            );
            assert!(checked.is_ok(), "hand over {hand_over}");
        }
    }

    #[test]
    fn into_batch_hands_over_the_builders_vectors() {
        // Three rows of room for four: the vectors become the batch's buffers, their
        // spare room given back.
        let batch = filled(4, 3).into_batch();
        let rows = batch.to_rows();
        assert_eq!(rows.times, vec![1000, 1001, 1002]);
        assert_eq!(
            rows.row(0),
            &[
                Value::Int8(-1),
                Value::Text("ab".into()),
                Value::Timestamp(1000)
            ][..]
        );
        assert_eq!(
            rows.row(1),
            &[Value::Int8(0), Value::Null, Value::Timestamp(1001)][..]
        );
        assert_eq!(
            rows.row(2),
            &[
                Value::Int8(1),
                Value::Text("ababab".into()),
                Value::Timestamp(1002)
            ][..]
        );
        let ColumnArray::Arrow(ints) = &batch.columns[0] else {
            panic!("an Arrow column")
        };
        assert_eq!(
            ints.as_primitive::<Int64Type>().values().inner().capacity(),
            24
        );
        let ColumnArray::Arrow(texts) = &batch.columns[1] else {
            panic!("an Arrow column")
        };
        let texts = texts.as_string::<i32>();
        assert_eq!(texts.value_data().len(), 8);
        assert_eq!(texts.offsets().inner().inner().capacity(), 16);
        let ColumnArray::Arrow(ts) = &batch.columns[2] else {
            panic!("an Arrow column")
        };
        let ts = ts.as_primitive::<TimestampMicrosecondType>();
        assert!(ts.values().inner().ptr_eq(batch.times.inner()));
        assert_eq!(batch.times.inner().capacity(), 24);
    }

    #[test]
    fn into_batch_copies_a_mostly_empty_builder_out() {
        // One row in room for 64: copied out at its size, the same values as `finish`.
        let handed = filled(64, 1).into_batch();
        let finished = filled(64, 1).finish();
        assert_eq!(handed.to_rows().row(0), finished.to_rows().row(0));
        assert_eq!(handed.to_rows().row(0)[0], Value::Int8(-1));
        assert_eq!(&handed.times[..], &[1000]);
        assert_eq!(handed.heap_bytes(), finished.heap_bytes());
        let ColumnArray::Arrow(ints) = &handed.columns[0] else {
            panic!("an Arrow column")
        };
        assert_eq!(
            ints.as_primitive::<Int64Type>().values().inner().capacity(),
            8
        );
        // An empty builder makes an empty batch.
        assert_eq!(filled(4, 0).into_batch().len(), 0);
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples in this module's documentation, run as unit tests: they use items
    //! private to the crate, which doctests cannot reach.

    #[test]
    fn column_batch_builder_example() {
        use crate::exec::columns::ColumnBatchBuilder;
        use crate::types::{DataType, Value};
        let mut b = ColumnBatchBuilder::new(&[DataType::Int4, DataType::Text], 4);
        b.append_int(0, 7);
        b.append_str(1, "LAS");
        b.end_row(100);
        b.append_int(0, 8); // a row abandoned half way (a bad field) ...
        b.truncate(); // ... leaves no trace
        let batch = b.finish();
        assert_eq!(
            batch.to_rows().row(0),
            &[Value::Int4(7), Value::Text("LAS".into())][..]
        );
        assert_eq!(batch.len(), 1);
    }
}
