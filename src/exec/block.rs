//! Rows of one slide event held as columns.
//!
//! An aggregate query whose select list names only group keys, aggregates and window
//! metadata (`SELECT origin, wtime(*), count(*), avg(delay) ... GROUP BY origin`, the common
//! dashboard shape) emits its rows as a [`RowBlock`]: one vector of values per column
//! instead of one vector per row, and the window metadata once for the whole event. The
//! server encodes each row straight from the columns (DataRow or COPY lines), so a slide
//! event of thousands of groups costs no allocation per row on either side.
//!
//! A run of one-row slide events (an ungrouped query sliding by the second) shares a block
//! too: its wtime is held as a first timestamp and a step, and rows whose other values
//! repeat the row before them (no tuple entered or left the window in between) are stored
//! once with a count, so such an event stores nothing new and its text is formatted once
//! for the run.

use std::borrow::Cow;

use super::typed::TypedColumn;
use crate::types::Value;

/// How one output column of a [`RowBlock`] holds its values.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum BlockColumn {
    /// The same value in every row: window metadata such as `wtime(*)`, which every group
    /// of a slide event shares.
    Same(Value),
    /// A timestamp (`Timestamp` or `TimestampTz`) advancing by `step` microseconds a row:
    /// row `r` holds `first + r * step` (the wtime of a run of one-row slide events).
    Step { first: Value, step: i64 },
    /// One value per stored row, the `k`-th of each stored row's values.
    Stored(usize),
}

/// Rows as columns: `len` rows of `columns.len()` values (the select list's length). A
/// column whose value is the same in every row holds it once, a timestamp advancing by a
/// fixed step holds its first value and the step; the others' values are stored row after
/// row in one vector (`stride` per stored row), so a block costs one allocation whatever
/// its width. A stored row stands for one row, or, once `ends` is kept, for the rows up to
/// its end: consecutive equal rows are stored once.
#[derive(Debug, Clone, PartialEq)]
pub struct RowBlock {
    len: usize,
    columns: Vec<BlockColumn>,
    stride: usize,
    values: Vec<Value>,
    /// Heap bytes of the stored values beyond their inline size (the sum of
    /// [`value_heap_bytes`] over `values`), kept as they come and go so that
    /// [`RowBlock::heap_bytes`] costs no pass over the rows.
    values_heap: usize,
    /// Stored rows (`values.len() / stride`, also when `stride` is 0).
    stored: usize,
    /// For each stored row, the number of rows up to and including its last: empty while
    /// each stored row is one row.
    ends: Vec<u32>,
    /// Slide events whose rows the block holds (small events of one batch share a block).
    slide_events: usize,
    /// When not empty, the stored columns by type (`BlockColumn::Stored(k)` is the `k`-th),
    /// one value per row and no runs: `values` and `ends` are empty. Any change other than
    /// [`RowBlock::truncate`] first moves them back to `values` ([`RowBlock::untype`]).
    typed: Vec<TypedColumn>,
}

/// `first + rows * step` for a [`BlockColumn::Step`] column; `None` past the timestamp range.
fn step_at(first: &Value, step: i64, rows: usize) -> Option<Value> {
    let add = |t: i64| step.checked_mul(i64::try_from(rows).ok()?)?.checked_add(t);
    match first {
        Value::Timestamp(t) => add(*t).map(Value::Timestamp),
        Value::TimestampTz(t) => add(*t).map(Value::TimestampTz),
        _ => None,
    }
}

/// The step from `a` to `b` when both are timestamps of one kind and differ.
fn step_between(a: &Value, b: &Value) -> Option<i64> {
    let step = match (a, b) {
        (Value::Timestamp(x), Value::Timestamp(y))
        | (Value::TimestampTz(x), Value::TimestampTz(y)) => y.checked_sub(*x)?,
        _ => return None,
    };
    (step != 0).then_some(step)
}

/// True when `a` and `b` are the same value with the same text: a numeric's scale and a
/// float's sign of zero count (`1.5` and `1.50` are equal numbers with different text).
fn same_text(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int2(x), Value::Int2(y)) => x == y,
        (Value::Int4(x), Value::Int4(y)) => x == y,
        (Value::Int8(x), Value::Int8(y)) => x == y,
        (Value::Float4(x), Value::Float4(y)) => x.to_bits() == y.to_bits(),
        (Value::Float8(x), Value::Float8(y)) => x.to_bits() == y.to_bits(),
        (Value::Numeric(x), Value::Numeric(y)) => x.serialize() == y.serialize(),
        (Value::Text(x), Value::Text(y)) => x == y,
        (Value::Timestamp(x), Value::Timestamp(y))
        | (Value::TimestampTz(x), Value::TimestampTz(y))
        | (Value::Time(x), Value::Time(y)) => x == y,
        (Value::Date(x), Value::Date(y)) => x == y,
        (Value::Interval(x), Value::Interval(y)) => x == y,
        _ => false,
    }
}

impl RowBlock {
    /// An empty block of `width` columns, each storing a value per row.
    pub(crate) fn new(width: usize) -> RowBlock {
        RowBlock {
            len: 0,
            columns: (0..width).map(BlockColumn::Stored).collect(),
            stride: width,
            values: Vec::new(),
            values_heap: 0,
            stored: 0,
            ends: Vec::new(),
            slide_events: 1,
            typed: Vec::new(),
        }
    }

    /// Make the stored columns of an empty block typed ([`TypedColumn`]), after the
    /// columns were chosen ([`RowBlock::set_same_rows`]): the rows are then filled column
    /// value by column value through [`RowBlock::typed_column`] and counted by
    /// [`RowBlock::typed_rows_appended`]. `rows`: the rows expected (reserved).
    pub(crate) fn begin_typed(&mut self, rows: usize) {
        debug_assert!(self.len == 0 && self.values.is_empty(), "an empty block");
        self.typed = (0..self.stride)
            .map(|_| TypedColumn::with_room(rows))
            .collect();
    }

    /// The `k`-th stored column of a typed block ([`RowBlock::begin_typed`]).
    #[inline]
    pub(crate) fn typed_column(&mut self, k: usize) -> &mut TypedColumn {
        &mut self.typed[k]
    }

    /// The stored columns by type, when the block is typed.
    pub(crate) fn typed(&self) -> Option<&[TypedColumn]> {
        (!self.typed.is_empty()).then_some(&self.typed[..])
    }

    /// Count `n` rows whose values were pushed to every typed column.
    pub(crate) fn typed_rows_appended(&mut self, n: usize) {
        self.len += n;
        self.stored = self.len;
        debug_assert!(self.typed.iter().all(|c| c.len() == self.len), "whole rows");
    }

    /// Move a typed block's stored values back to `values`, row after row (before a
    /// change only the untyped form makes).
    fn untype(&mut self) {
        if self.typed.is_empty() {
            return;
        }
        let typed = std::mem::take(&mut self.typed);
        let mut values = Vec::with_capacity(self.len * self.stride);
        for r in 0..self.len {
            values.extend(typed.iter().map(|c| c.value(r)));
        }
        self.values = values;
        self.recount_heap();
        self.stored = self.len;
        self.ends.clear();
    }

    /// Slide events whose rows the block holds: 1, or more when the rows of several small
    /// events of one batch were appended to it.
    pub fn slide_events(&self) -> usize {
        self.slide_events
    }

    /// Count one more slide event whose rows were appended (after its rows).
    pub(crate) fn add_slide_event(&mut self) {
        self.slide_events += 1;
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the block has no row.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of columns.
    pub(crate) fn width(&self) -> usize {
        self.columns.len()
    }

    /// The stored row that holds `row`.
    fn stored_row(&self, row: usize) -> usize {
        if self.ends.is_empty() {
            row
        } else {
            self.ends.partition_point(|&e| e as usize <= row)
        }
    }

    /// The value of `column` in `row` (computed for a [`BlockColumn::Step`] column).
    /// Panics when either is out of range.
    pub(crate) fn value(&self, row: usize, column: usize) -> Cow<'_, Value> {
        assert!(row < self.len, "row {row} of a block of {}", self.len);
        match &self.columns[column] {
            BlockColumn::Same(v) => Cow::Borrowed(v),
            BlockColumn::Step { first, step } => {
                Cow::Owned(step_at(first, *step, row).expect("checked when the row was added"))
            }
            BlockColumn::Stored(k) if !self.typed.is_empty() => {
                Cow::Owned(self.typed[*k].value(row))
            }
            BlockColumn::Stored(k) => {
                Cow::Borrowed(&self.values[self.stored_row(row) * self.stride + k])
            }
        }
    }

    /// The values of `row`, in column order.
    pub(crate) fn row(&self, row: usize) -> impl ExactSizeIterator<Item = Cow<'_, Value>> + '_ {
        (0..self.columns.len()).map(move |c| self.value(row, c))
    }

    /// The stored rows in order, each with the number of consecutive rows it stands for
    /// and its stored values (`BlockColumn::Stored(k)` is the `k`-th); none for a typed
    /// block (see [`RowBlock::typed`]).
    pub(crate) fn runs(&self) -> impl Iterator<Item = (usize, &[Value])> + '_ {
        let stored = if self.typed.is_empty() {
            self.stored
        } else {
            0
        };
        (0..stored).map(move |k| {
            let rows = match k {
                _ if self.ends.is_empty() => 1,
                0 => self.ends[0] as usize,
                _ => (self.ends[k] - self.ends[k - 1]) as usize,
            };
            (rows, &self.values[k * self.stride..(k + 1) * self.stride])
        })
    }

    /// The columns.
    pub(crate) fn columns(&self) -> &[BlockColumn] {
        &self.columns
    }

    /// Say which columns the rows appended next share one value in (`same[c]`), before
    /// appending them: a column that held one value in every row so far and gets another
    /// (or none) starts storing a value per row.
    #[cfg(test)]
    pub(crate) fn set_same(&mut self, same: &[Option<Value>]) {
        debug_assert_eq!(same.len(), self.columns.len(), "one entry per column");
        self.set_same_rows(usize::MAX, |c| same[c].clone());
    }

    /// Say which columns the next `rows` rows (`usize::MAX`: not known) share one value
    /// in, column `c`'s given by `same(c)` (called once per column), before appending
    /// them; a column that held one value in every row so far and gets another (or none)
    /// starts storing a value per row. No vector is built, so a slide event of one row
    /// allocates nothing here. A one-row event whose timestamp follows the block's first
    /// row by a step, or continues its steps, keeps the column as a [`BlockColumn::Step`].
    pub(crate) fn set_same_rows(&mut self, rows: usize, same: impl Fn(usize) -> Option<Value>) {
        if self.len == 0 {
            self.typed.clear();
            let mut k = 0;
            for (c, col) in self.columns.iter_mut().enumerate() {
                *col = match same(c) {
                    Some(v) => BlockColumn::Same(v),
                    None => {
                        k += 1;
                        BlockColumn::Stored(k - 1)
                    }
                };
            }
            self.stride = k;
            self.values.clear();
            self.values_heap = 0;
            self.stored = 0;
            self.ends.clear();
            return;
        }
        if rows == 0 {
            return;
        }
        self.untype();
        for c in 0..self.columns.len() {
            let next = match &self.columns[c] {
                BlockColumn::Stored(_) => continue,
                BlockColumn::Same(x) => match same(c) {
                    Some(v) if same_text(x, &v) => continue,
                    Some(v) if rows == 1 && self.len == 1 => {
                        step_between(x, &v).map(|step| BlockColumn::Step {
                            first: x.clone(),
                            step,
                        })
                    }
                    _ => None,
                },
                BlockColumn::Step { first, step } => match same(c) {
                    Some(v)
                        if rows == 1 && step_at(first, *step, self.len).as_ref() == Some(&v) =>
                    {
                        continue
                    }
                    _ => None,
                },
            };
            match next {
                Some(col) => self.columns[c] = col,
                None => self.store(c),
            }
        }
    }

    /// Make every stored row one row again (before a column starts storing per row).
    fn expand_runs(&mut self) {
        self.untype();
        if self.ends.is_empty() {
            return;
        }
        let mut values = Vec::with_capacity(self.len * self.stride);
        let mut start = 0;
        for (k, &end) in self.ends.iter().enumerate() {
            for _ in start..end {
                values.extend_from_slice(&self.values[k * self.stride..(k + 1) * self.stride]);
            }
            start = end;
        }
        self.values = values;
        self.recount_heap();
        self.stored = self.len;
        self.ends.clear();
    }

    /// Sum [`value_heap_bytes`] over the stored values again (after a rare reshaping).
    fn recount_heap(&mut self) {
        self.values_heap = self.values.iter().map(value_heap_bytes).sum();
    }

    /// Drop the stored values from index `keep` on, with their heap bytes.
    fn truncate_values(&mut self, keep: usize) {
        if keep < self.values.len() {
            let gone: usize = self.values[keep..].iter().map(value_heap_bytes).sum();
            self.values_heap -= gone;
            self.values.truncate(keep);
        }
    }

    /// Make `column` (one value for every row so far, or a step) store a value per row.
    fn store(&mut self, column: usize) {
        let shared = match &self.columns[column] {
            BlockColumn::Stored(_) => return,
            c => c.clone(),
        };
        self.expand_runs();
        let value_at = |r: usize| match &shared {
            BlockColumn::Step { first, step } => {
                step_at(first, *step, r).expect("checked when the row was added")
            }
            BlockColumn::Same(x) => x.clone(),
            BlockColumn::Stored(_) => unreachable!("returned above"),
        };
        // Stored values keep column order: the new one goes after the stored columns
        // before it.
        let k = self.columns[..column]
            .iter()
            .filter(|c| matches!(c, BlockColumn::Stored(_)))
            .count();
        let old = std::mem::take(&mut self.values);
        let mut values = Vec::with_capacity(old.len() + self.len);
        let mut it = old.into_iter();
        for r in 0..self.len {
            values.extend(it.by_ref().take(k));
            values.push(value_at(r));
            values.extend(it.by_ref().take(self.stride - k));
        }
        self.values = values;
        self.recount_heap();
        self.stored = self.len;
        self.stride += 1;
        self.columns[column] = BlockColumn::Stored(k);
        for c in &mut self.columns[column + 1..] {
            if let BlockColumn::Stored(j) = c {
                *j += 1;
            }
        }
    }

    /// True when `column` stores a value per row: the caller of [`RowBlock::push_value`]
    /// gives one for it in each row.
    pub(crate) fn is_stored(&self, column: usize) -> bool {
        matches!(self.columns[column], BlockColumn::Stored(_))
    }

    /// Reserve room for `rows` more rows.
    pub(crate) fn reserve(&mut self, rows: usize) {
        self.values.reserve(rows * self.stride);
    }

    /// Append the next stored value: row by row, and within a row the stored columns in
    /// order. [`RowBlock::rows_appended`] then counts the rows.
    pub(crate) fn push_value(&mut self, v: Value) {
        self.untype();
        self.values_heap += value_heap_bytes(&v);
        self.values.push(v);
    }

    /// Append one row, given as its values in column order.
    pub(crate) fn push_row(&mut self, row: impl IntoIterator<Item = Value>) {
        let row: Vec<Value> = row.into_iter().collect();
        self.set_same_rows(1, |c| Some(row[c].clone()));
        for (c, v) in row.into_iter().enumerate() {
            if self.is_stored(c) {
                self.push_value(v);
            }
        }
        self.rows_appended(1);
    }

    /// Record that `n` rows were appended. One row equal to the row before it (every
    /// stored value with the same text) is kept as one more row of that stored row.
    pub(crate) fn rows_appended(&mut self, n: usize) {
        self.untype();
        let (before, stride) = (self.stored, self.stride);
        self.len += n;
        self.stored += n;
        debug_assert_eq!(self.values.len(), self.stored * stride, "whole rows");
        if n == 1 && before > 0 && self.len < u32::MAX as usize {
            let (old, new) = self.values[(before - 1) * stride..].split_at(stride);
            if old.iter().zip(new).all(|(a, b)| same_text(a, b)) {
                self.truncate_values(before * stride);
                self.stored = before;
                if self.ends.is_empty() {
                    self.ends.extend((1..=before).map(|e| e as u32));
                }
                *self.ends.last_mut().expect("a stored row") = self.len as u32;
                return;
            }
        }
        if !self.ends.is_empty() {
            let first = self.len - n;
            self.ends.extend((first + 1..=self.len).map(|e| e as u32));
        }
    }

    /// Append `n` copies of the last row, column `c` of the `k`-th copy advanced by
    /// `k * shift(c)` microseconds (a timestamp column; 0: the same value): the rows of `n`
    /// slide events that repeat the last one-row event with their window bounds moved.
    /// O(columns): the copies join the last stored row's run, and a moving column must be
    /// a step of that shift already (or the block's one row, which becomes its first).
    /// Returns false, appending nothing, when the block cannot hold them so (no row, a
    /// stored column that moves, another step, past the timestamp range or `u32` rows).
    pub(crate) fn repeat_last(&mut self, n: usize, shift: impl Fn(usize) -> i64) -> bool {
        self.untype();
        let Some(len) = self.len.checked_add(n).filter(|&l| l < u32::MAX as usize) else {
            return false;
        };
        if self.len == 0 || self.stored == 0 {
            return false;
        }
        for (c, col) in self.columns.iter().enumerate() {
            let ok = match (col, shift(c)) {
                (_, 0) => !matches!(col, BlockColumn::Step { .. }),
                (BlockColumn::Same(x), s) => self.len == 1 && step_at(x, s, len - 1).is_some(),
                (BlockColumn::Step { first, step }, s) => {
                    *step == s && step_at(first, s, len - 1).is_some()
                }
                (BlockColumn::Stored(_), _) => false,
            };
            if !ok {
                return false;
            }
        }
        for (c, col) in self.columns.iter_mut().enumerate() {
            if let (BlockColumn::Same(x), s) = (&*col, shift(c)) {
                if s != 0 {
                    *col = BlockColumn::Step {
                        first: x.clone(),
                        step: s,
                    };
                }
            }
        }
        if self.ends.is_empty() {
            self.ends.extend((1..=self.stored).map(|e| e as u32));
        }
        *self.ends.last_mut().expect("a stored row") = len as u32;
        self.len = len;
        true
    }

    /// Count `n` more slide events whose rows were appended.
    pub(crate) fn add_slide_events(&mut self, n: usize) {
        self.slide_events += n;
    }

    /// Keep the first `n` rows (LIMIT, or the rows before a failed event: values pushed
    /// for a row that was never counted are dropped too).
    pub(crate) fn truncate(&mut self, n: usize) {
        if !self.typed.is_empty() {
            // Values pushed for a row never counted are dropped too.
            self.len = self.len.min(n);
            self.stored = self.len;
            for col in &mut self.typed {
                col.truncate(self.len);
            }
            return;
        }
        if n >= self.len {
            self.truncate_values(self.stored * self.stride);
            return;
        }
        self.len = n;
        let keep = if self.ends.is_empty() {
            n
        } else {
            // The stored row holding row n - 1 ends at n.
            let k = self.ends.partition_point(|&e| (e as usize) < n);
            if n > 0 {
                self.ends[k] = n as u32;
            }
            let keep = if n > 0 { k + 1 } else { 0 };
            self.ends.truncate(keep);
            keep
        };
        self.stored = keep;
        self.truncate_values(keep * self.stride);
    }

    /// The rows, one vector of values each.
    pub(crate) fn into_rows(self) -> Vec<Vec<Value>> {
        (0..self.len)
            .map(|r| self.row(r).map(Cow::into_owned).collect())
            .collect()
    }

    /// Approximate heap bytes held (values inline, text beyond its inline size), for
    /// output queue budgets.
    pub(crate) fn heap_bytes(&self) -> usize {
        let same: usize = self
            .columns
            .iter()
            .map(|c| match c {
                BlockColumn::Same(v) => value_heap_bytes(v),
                BlockColumn::Step { .. } | BlockColumn::Stored(_) => 0,
            })
            .sum();
        let typed: usize = self.typed.iter().map(TypedColumn::heap_bytes).sum();
        same + self.values.capacity() * std::mem::size_of::<Value>()
            + self.ends.capacity() * std::mem::size_of::<u32>()
            + self.values_heap
            + typed
    }
}

/// Heap bytes of a value beyond its inline size (long text only).
pub(crate) fn value_heap_bytes(v: &Value) -> usize {
    match v {
        Value::Text(s) if s.is_heap_allocated() => s.capacity(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(i: i64) -> Value {
        Value::Int8(i)
    }

    /// The heap bytes kept as values come and go are those a pass over them finds.
    #[test]
    fn heap_bytes_follow_the_stored_values() {
        let long = |s: &str| Value::Text(s.repeat(40).into());
        let scan = |b: &RowBlock| b.values.iter().map(value_heap_bytes).sum::<usize>();
        let mut b = RowBlock::new(2);
        b.set_same(&[Some(long("a")), None]);
        b.push_value(long("b"));
        b.rows_appended(1);
        // An equal row joins the run: its value is dropped, and its bytes.
        b.set_same(&[Some(long("a")), None]);
        b.push_value(long("b"));
        b.rows_appended(1);
        assert_eq!((b.len(), b.values.len()), (2, 1));
        assert!(b.values_heap > 0);
        assert_eq!(b.values_heap, scan(&b));
        // Another first column: it stores a value per row, the runs expanded.
        b.set_same(&[Some(long("c")), None]);
        b.push_value(long("c"));
        b.push_value(long("d"));
        b.rows_appended(1);
        assert_eq!(b.values.len(), 6);
        assert_eq!(b.values_heap, scan(&b));
        b.push_row([Value::Int8(1), long("e")]);
        assert_eq!(b.values_heap, scan(&b));
        b.truncate(2);
        assert_eq!(b.values_heap, scan(&b));
        let bytes = b.heap_bytes();
        assert!(bytes >= scan(&b) + b.values.capacity() * std::mem::size_of::<Value>());
        b.set_same(&[None, None]);
        b.truncate(0);
        assert_eq!((b.values_heap, scan(&b)), (0, 0));
    }

    /// A typed block reads back its rows; a later event joining it (another wtime, a row
    /// equal to the last) moves its values back to one vector and keeps every row;
    /// truncating drops values pushed for a row never counted.
    #[test]
    fn a_typed_block_becomes_untyped_when_an_event_joins_it() {
        let mut b = RowBlock::new(3);
        b.set_same_rows(2, |c| (c == 0).then_some(Value::Timestamp(1)));
        b.begin_typed(2);
        for (key, n) in [("a", 1), ("b", 2)] {
            b.typed_column(0).push_text(key);
            b.typed_column(1)
                .push_int(crate::exec::typed::IntType::Int8, n);
        }
        b.typed_rows_appended(2);
        // A row pushed for an event that then failed.
        b.typed_column(0).push_text("c");
        b.truncate(2);
        let text = |s: &str| Value::Text(s.into());
        let ts = Value::Timestamp;
        let mut want = vec![
            vec![ts(1), text("a"), int(1)],
            vec![ts(1), text("b"), int(2)],
        ];
        assert_eq!(b.clone().into_rows(), want);
        let heap = b.heap_bytes();
        assert!(heap >= 2 * std::mem::size_of::<usize>(), "{heap}");
        b.set_same_rows(1, |c| (c == 0).then_some(Value::Timestamp(2)));
        assert!(b.typed().is_none());
        b.push_value(ts(2));
        b.push_value(text("b"));
        b.push_value(int(2));
        b.rows_appended(1);
        want.push(vec![ts(2), text("b"), int(2)]);
        assert_eq!(b.into_rows(), want);
    }

    #[test]
    fn same_columns_stay_one_value_until_a_row_differs() {
        let mut b = RowBlock::new(3);
        b.set_same(&[Some(int(7)), None, None]);
        for r in 0..2 {
            b.push_value(int(r));
            b.push_value(Value::Int4(r as i32 * 10));
        }
        b.rows_appended(2);
        assert_eq!(b.columns()[0], BlockColumn::Same(int(7)));
        b.set_same(&[Some(int(7)), None, None]);
        b.push_value(int(2));
        b.push_value(Value::Int4(20));
        b.rows_appended(1);
        assert_eq!(b.columns()[0], BlockColumn::Same(int(7)));
        // Another value: column 0 stores a value per row from now on, the older rows'
        // included, and the stored values keep column order.
        b.set_same(&[Some(int(8)), None, Some(Value::Null)]);
        assert!(b.is_stored(0) && b.is_stored(1) && b.is_stored(2));
        b.push_value(int(8));
        b.push_value(int(3));
        b.push_value(Value::Null);
        b.rows_appended(1);
        let want: Vec<Vec<Value>> = vec![
            vec![int(7), int(0), Value::Int4(0)],
            vec![int(7), int(1), Value::Int4(10)],
            vec![int(7), int(2), Value::Int4(20)],
            vec![int(8), int(3), Value::Null],
        ];
        assert_eq!(b.clone().into_rows(), want);
        b.truncate(2);
        assert_eq!(b.len(), 2);
        assert_eq!(*b.value(1, 2), Value::Int4(10));
        assert_eq!(b.row(0).count(), 3);
    }

    #[test]
    fn a_middle_column_spreads_in_column_order() {
        let mut b = RowBlock::new(3);
        b.set_same(&[None, Some(int(5)), None]);
        b.push_value(int(1));
        b.push_value(int(2));
        b.rows_appended(1);
        b.set_same(&[None, None, None]);
        b.push_value(int(3));
        b.push_value(int(4));
        b.push_value(int(6));
        b.rows_appended(1);
        assert_eq!(
            b.into_rows(),
            vec![vec![int(1), int(5), int(2)], vec![int(3), int(4), int(6)]]
        );
    }

    #[test]
    fn rows_pushed_whole_read_back() {
        let mut b = RowBlock::new(2);
        b.push_row([Value::Bool(true), int(1)]);
        b.push_row([Value::Bool(true), int(2)]);
        b.push_row([Value::Bool(false), int(3)]);
        assert_eq!(
            b.into_rows(),
            vec![
                vec![Value::Bool(true), int(1)],
                vec![Value::Bool(true), int(2)],
                vec![Value::Bool(false), int(3)]
            ]
        );
    }

    /// One-row slide events as `block_rows` appends them: wtime given as shared, the
    /// count and max stored.
    fn event(b: &mut RowBlock, wtime: i64, count: i64, max: Value) {
        b.set_same_rows(1, |c| (c == 0).then_some(Value::Timestamp(wtime)));
        if b.is_stored(0) {
            b.push_value(Value::Timestamp(wtime));
        }
        b.push_value(int(count));
        b.push_value(max);
        b.rows_appended(1);
    }

    #[test]
    fn one_row_events_keep_a_wtime_step_and_runs_of_equal_rows() {
        let mut b = RowBlock::new(3);
        let rows = [
            (1, Value::Int4(5)),
            (1, Value::Int4(5)),
            (2, Value::Int4(5)),
        ];
        for (i, (n, m)) in rows.iter().enumerate() {
            event(&mut b, 1_000_000 * (i as i64 + 1), *n, m.clone());
        }
        event(&mut b, 4_000_000, 2, Value::Int4(5));
        event(&mut b, 5_000_000, 2, Value::Int4(5));
        assert_eq!(
            b.columns()[0],
            BlockColumn::Step {
                first: Value::Timestamp(1_000_000),
                step: 1_000_000
            }
        );
        // Five rows, two stored rows: the second stands for the last three.
        let runs: Vec<(usize, Vec<Value>)> = b.runs().map(|(n, v)| (n, v.to_vec())).collect();
        assert_eq!(
            runs,
            vec![
                (2, vec![int(1), Value::Int4(5)]),
                (3, vec![int(2), Value::Int4(5)])
            ]
        );
        let ts = |s: i64| Value::Timestamp(s * 1_000_000);
        let want = |n: usize| -> Vec<Vec<Value>> {
            (1..=n as i64)
                .map(|s| vec![ts(s), int(if s <= 2 { 1 } else { 2 }), Value::Int4(5)])
                .collect()
        };
        assert_eq!(b.clone().into_rows(), want(5));
        assert_eq!(*b.value(3, 0), ts(4));
        // A row whose values were pushed but never counted (its event failed) is dropped.
        let mut failed = b.clone();
        failed.push_value(int(9));
        failed.truncate(5);
        assert_eq!(failed, b);
        assert_eq!(*b.value(3, 1), int(2));
        // LIMIT inside a run.
        let mut cut = b.clone();
        cut.truncate(4);
        assert_eq!(cut.clone().into_rows(), want(4));
        cut.truncate(1);
        assert_eq!(cut.into_rows(), want(1));
        // A wtime off the step, and equal numbers with different text, are stored.
        event(
            &mut b,
            7_000_000,
            2,
            Value::Numeric(rust_decimal::Decimal::new(15, 1)),
        );
        event(
            &mut b,
            8_000_000,
            2,
            Value::Numeric(rust_decimal::Decimal::new(150, 2)),
        );
        assert!(b.is_stored(0));
        let rows = b.into_rows();
        assert_eq!(rows.len(), 7);
        assert_eq!(rows[4], vec![ts(5), int(2), Value::Int4(5)]);
        assert_eq!(rows[5][0], ts(7));
        let Value::Numeric(d) = &rows[6][2] else {
            panic!("a numeric");
        };
        assert_eq!(d.to_string(), "1.50");
    }

    #[test]
    fn repeats_of_a_one_row_event_join_its_run_with_wtime_stepping() {
        let mut b = RowBlock::new(3);
        event(&mut b, 1_000_000, 1, Value::Int4(5));
        // The block's one row: its shared wtime becomes a step.
        assert!(b.repeat_last(2, |c| if c == 0 { 1_000_000 } else { 0 }));
        event(&mut b, 4_000_000, 2, Value::Int4(7));
        assert!(b.repeat_last(3, |c| if c == 0 { 1_000_000 } else { 0 }));
        b.add_slide_events(3);
        let ts = |s: i64| Value::Timestamp(s * 1_000_000);
        let want: Vec<Vec<Value>> = (1..=7)
            .map(|s| match s {
                1..=3 => vec![ts(s), int(1), Value::Int4(5)],
                _ => vec![ts(s), int(2), Value::Int4(7)],
            })
            .collect();
        assert_eq!(b.clone().into_rows(), want);
        assert_eq!(b.runs().map(|(n, _)| n).collect::<Vec<_>>(), vec![3, 4]);
        assert_eq!(b.slide_events(), 4);
        // Another step, a value column that moves, or no row: nothing appended.
        let before = b.clone();
        assert!(!b.repeat_last(1, |c| if c == 0 { 2_000_000 } else { 0 }));
        assert!(!b.repeat_last(1, |c| if c == 1 { 1 } else { 0 }));
        assert!(!b.repeat_last(1, |_| 0));
        assert_eq!(b, before);
        assert!(!RowBlock::new(2).repeat_last(1, |_| 0));
        // LIMIT inside a repeated run.
        b.truncate(5);
        assert_eq!(b.into_rows(), want[..5].to_vec());
        // Stored columns that stay, with no step: the last row repeats as it is.
        let mut plain = RowBlock::new(1);
        plain.push_row([int(3)]);
        plain.push_row([int(4)]);
        assert!(plain.repeat_last(2, |_| 0));
        assert_eq!(
            plain.into_rows(),
            vec![vec![int(3)], vec![int(4)], vec![int(4)], vec![int(4)]]
        );
    }

    #[test]
    fn an_event_of_several_rows_ends_the_step() {
        let mut b = RowBlock::new(2);
        event_of(&mut b, 1, &[7]);
        event_of(&mut b, 2, &[7]);
        event_of(&mut b, 3, &[7, 8]);
        assert_eq!(
            b.into_rows(),
            vec![
                vec![Value::Timestamp(1), int(7)],
                vec![Value::Timestamp(2), int(7)],
                vec![Value::Timestamp(3), int(7)],
                vec![Value::Timestamp(3), int(8)]
            ]
        );
    }

    fn event_of(b: &mut RowBlock, wtime: i64, counts: &[i64]) {
        b.set_same_rows(counts.len(), |c| {
            (c == 0).then_some(Value::Timestamp(wtime))
        });
        for n in counts {
            if b.is_stored(0) {
                b.push_value(Value::Timestamp(wtime));
            }
            b.push_value(int(*n));
        }
        b.rows_appended(counts.len());
    }
}
