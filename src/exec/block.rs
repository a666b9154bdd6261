//! Rows of one slide event held as columns.
//!
//! An aggregate query whose select list names only group keys, aggregates and window
//! metadata (`SELECT origin, wtime(*), count(*), avg(delay) ... GROUP BY origin`, the common
//! dashboard shape) emits its rows as a [`RowBlock`]: one vector of values per column
//! instead of one vector per row, and the window metadata once for the whole event. The
//! server encodes each row straight from the columns (DataRow or COPY lines), so a slide
//! event of thousands of groups costs no allocation per row on either side.

use crate::types::Value;

/// How one output column of a [`RowBlock`] holds its values.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum BlockColumn {
    /// The same value in every row: window metadata such as `wtime(*)`, which every group
    /// of a slide event shares.
    Same(Value),
    /// One value per row, the `k`-th of each row's stored values.
    Stored(usize),
}

/// Rows as columns: `len` rows of `columns.len()` values (the select list's length). A
/// column whose value is the same in every row holds it once; the others' values are
/// stored row after row in one vector (`stride` per row), so a block costs one allocation
/// whatever its width.
#[derive(Debug, Clone, PartialEq)]
pub struct RowBlock {
    len: usize,
    columns: Vec<BlockColumn>,
    stride: usize,
    values: Vec<Value>,
    /// Slide events whose rows the block holds (small events of one batch share a block).
    slide_events: usize,
}

impl RowBlock {
    /// An empty block of `width` columns, each storing a value per row.
    pub(crate) fn new(width: usize) -> RowBlock {
        RowBlock {
            len: 0,
            columns: (0..width).map(BlockColumn::Stored).collect(),
            stride: width,
            values: Vec::new(),
            slide_events: 1,
        }
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

    /// The value of `column` in `row`. Panics when either is out of range.
    pub(crate) fn value(&self, row: usize, column: usize) -> &Value {
        assert!(row < self.len, "row {row} of a block of {}", self.len);
        match &self.columns[column] {
            BlockColumn::Same(v) => v,
            BlockColumn::Stored(k) => &self.values[row * self.stride + k],
        }
    }

    /// The values of `row`, in column order.
    pub(crate) fn row(&self, row: usize) -> impl ExactSizeIterator<Item = &Value> + '_ {
        (0..self.columns.len()).map(move |c| self.value(row, c))
    }

    /// The columns.
    pub(crate) fn columns(&self) -> &[BlockColumn] {
        &self.columns
    }

    /// Say which columns the rows appended next share one value in (`same[c]`), before
    /// appending them: a column that held one value in every row so far and gets another
    /// (or none) starts storing a value per row.
    pub(crate) fn set_same(&mut self, same: &[Option<Value>]) {
        debug_assert_eq!(same.len(), self.columns.len(), "one entry per column");
        self.set_same_with(|c| same[c].clone());
    }

    /// [`RowBlock::set_same`] with column `c`'s shared value given by `same(c)` (called
    /// once per column): no vector is built, so a slide event of one row allocates
    /// nothing here.
    pub(crate) fn set_same_with(&mut self, same: impl Fn(usize) -> Option<Value>) {
        if self.len == 0 {
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
            return;
        }
        for c in 0..self.columns.len() {
            let spread = match &self.columns[c] {
                BlockColumn::Same(x) => same(c).is_none_or(|v| *x != v),
                BlockColumn::Stored(_) => false,
            };
            if spread {
                self.store(c);
            }
        }
    }

    /// Make `column` (one value for every row so far) store a value per row.
    fn store(&mut self, column: usize) {
        let BlockColumn::Same(x) = self.columns[column].clone() else {
            return;
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
        for _ in 0..self.len {
            values.extend(it.by_ref().take(k));
            values.push(x.clone());
            values.extend(it.by_ref().take(self.stride - k));
        }
        self.values = values;
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
        self.values.push(v);
    }

    /// Append one row, given as its values in column order.
    pub(crate) fn push_row(&mut self, row: impl IntoIterator<Item = Value>) {
        let row: Vec<Value> = row.into_iter().collect();
        let same: Vec<Option<Value>> = (0..self.columns.len())
            .map(|c| match &self.columns[c] {
                BlockColumn::Same(x) if self.len > 0 && row[c] == *x => Some(x.clone()),
                _ if self.len == 0 => Some(row[c].clone()),
                _ => None,
            })
            .collect();
        self.set_same(&same);
        for (c, v) in row.into_iter().enumerate() {
            if self.is_stored(c) {
                self.values.push(v);
            }
        }
        self.rows_appended(1);
    }

    /// Record that `n` rows were appended.
    pub(crate) fn rows_appended(&mut self, n: usize) {
        self.len += n;
        debug_assert_eq!(self.values.len(), self.len * self.stride, "whole rows");
    }

    /// Keep the first `n` rows (LIMIT).
    pub(crate) fn truncate(&mut self, n: usize) {
        if n >= self.len {
            return;
        }
        self.len = n;
        self.values.truncate(n * self.stride);
    }

    /// The rows, one vector of values each.
    pub(crate) fn into_rows(self) -> Vec<Vec<Value>> {
        (0..self.len)
            .map(|r| self.row(r).cloned().collect())
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
                BlockColumn::Stored(_) => 0,
            })
            .sum();
        same + self.values.capacity() * std::mem::size_of::<Value>()
            + self.values.iter().map(value_heap_bytes).sum::<usize>()
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
        assert_eq!(b.value(1, 2), &Value::Int4(10));
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
}
