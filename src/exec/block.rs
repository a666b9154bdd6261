//! Rows of one slide event held as columns.
//!
//! An aggregate query whose select list names only group keys, aggregates and window
//! metadata (`SELECT origin, wtime(*), count(*), avg(delay) ... GROUP BY origin`, the common
//! dashboard shape) emits its rows as a [`RowBlock`]: one vector of values per column
//! instead of one vector per row, and the window metadata once for the whole event. The
//! server encodes each row straight from the columns (DataRow or COPY lines), so a slide
//! event of thousands of groups costs no allocation per row on either side.

use crate::types::Value;

/// The values of one output column of a [`RowBlock`].
#[derive(Debug, Clone, PartialEq)]
pub enum BlockColumn {
    /// The same value in every row: window metadata such as `wtime(*)`, which every group
    /// of a slide event shares.
    Same(Value),
    /// One value per row.
    Values(Vec<Value>),
}

/// Rows as columns: `len` rows, each column holding one value per row (or one value for
/// all). Shape: `columns.len()` is the select list's length.
#[derive(Debug, Clone, PartialEq)]
pub struct RowBlock {
    len: usize,
    columns: Vec<BlockColumn>,
}

impl RowBlock {
    /// An empty block of `width` columns.
    pub fn new(width: usize) -> RowBlock {
        RowBlock {
            len: 0,
            columns: (0..width)
                .map(|_| BlockColumn::Values(Vec::new()))
                .collect(),
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the block has no row.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of columns.
    pub fn width(&self) -> usize {
        self.columns.len()
    }

    /// The value of `column` in `row`. Panics when either is out of range.
    pub fn value(&self, row: usize, column: usize) -> &Value {
        assert!(row < self.len, "row {row} of a block of {}", self.len);
        match &self.columns[column] {
            BlockColumn::Same(v) => v,
            BlockColumn::Values(vs) => &vs[row],
        }
    }

    /// The values of `row`, in column order.
    pub fn row(&self, row: usize) -> impl ExactSizeIterator<Item = &Value> + '_ {
        (0..self.columns.len()).map(move |c| self.value(row, c))
    }

    /// The columns.
    pub fn columns(&self) -> &[BlockColumn] {
        &self.columns
    }

    /// Append `n` rows whose `column` is `v`, the block holding `self.len()` rows before
    /// them (the caller appends the same `n` rows to every column, then calls
    /// [`RowBlock::rows_appended`]).
    pub fn extend_same(&mut self, column: usize, v: Value, n: usize) {
        let before = self.len;
        let col = &mut self.columns[column];
        match col {
            _ if before == 0 => *col = BlockColumn::Same(v),
            BlockColumn::Same(x) if *x == v => {}
            BlockColumn::Same(x) => {
                let mut vs = vec![x.clone(); before];
                vs.extend(std::iter::repeat_n(v, n));
                *col = BlockColumn::Values(vs);
            }
            BlockColumn::Values(vs) => vs.extend(std::iter::repeat_n(v, n)),
        }
    }

    /// The per-row vector of `column`, to push values onto (a `Same` column is spread over
    /// the block's rows first).
    pub fn values_mut(&mut self, column: usize) -> &mut Vec<Value> {
        let before = self.len;
        let col = &mut self.columns[column];
        if let BlockColumn::Same(x) = col {
            *col = BlockColumn::Values(vec![x.clone(); before]);
        }
        match col {
            BlockColumn::Values(vs) => vs,
            BlockColumn::Same(_) => unreachable!("spread above"),
        }
    }

    /// Append one row, given as its values in column order.
    pub fn push_row(&mut self, row: impl IntoIterator<Item = Value>) {
        for (c, v) in row.into_iter().enumerate() {
            self.values_mut(c).push(v);
        }
        self.rows_appended(1);
    }

    /// Record that `n` rows were appended to every column.
    pub fn rows_appended(&mut self, n: usize) {
        self.len += n;
        debug_assert!(self.columns.iter().all(|c| match c {
            BlockColumn::Same(_) => true,
            BlockColumn::Values(vs) => vs.len() == self.len,
        }));
    }

    /// Keep the first `n` rows (LIMIT).
    pub fn truncate(&mut self, n: usize) {
        if n >= self.len {
            return;
        }
        self.len = n;
        for c in &mut self.columns {
            if let BlockColumn::Values(vs) = c {
                vs.truncate(n);
            }
        }
    }

    /// The rows, one vector of values each.
    pub fn into_rows(self) -> Vec<Vec<Value>> {
        (0..self.len)
            .map(|r| self.row(r).cloned().collect())
            .collect()
    }

    /// Approximate heap bytes held (values inline, text beyond its inline size), for
    /// output queue budgets.
    pub fn heap_bytes(&self) -> usize {
        self.columns
            .iter()
            .map(|c| match c {
                BlockColumn::Same(v) => value_heap_bytes(v),
                BlockColumn::Values(vs) => {
                    vs.capacity() * std::mem::size_of::<Value>()
                        + vs.iter().map(value_heap_bytes).sum::<usize>()
                }
            })
            .sum()
    }
}

/// Heap bytes of a value beyond its inline size (long text only).
pub fn value_heap_bytes(v: &Value) -> usize {
    match v {
        Value::Text(s) if s.is_heap_allocated() => s.capacity(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_columns_stay_one_value_until_a_row_differs() {
        let mut b = RowBlock::new(2);
        b.extend_same(0, Value::Int8(7), 2);
        b.values_mut(1).extend([Value::Int4(1), Value::Int4(2)]);
        b.rows_appended(2);
        assert_eq!(b.columns()[0], BlockColumn::Same(Value::Int8(7)));
        b.extend_same(0, Value::Int8(7), 1);
        b.values_mut(1).push(Value::Int4(3));
        b.rows_appended(1);
        assert_eq!(b.columns()[0], BlockColumn::Same(Value::Int8(7)));
        b.extend_same(0, Value::Int8(8), 1);
        b.values_mut(1).push(Value::Null);
        b.rows_appended(1);
        assert_eq!(
            b.clone().into_rows(),
            vec![
                vec![Value::Int8(7), Value::Int4(1)],
                vec![Value::Int8(7), Value::Int4(2)],
                vec![Value::Int8(7), Value::Int4(3)],
                vec![Value::Int8(8), Value::Null],
            ]
        );
        b.truncate(2);
        assert_eq!(b.len(), 2);
        assert_eq!(b.value(1, 1), &Value::Int4(2));
        assert_eq!(b.row(0).count(), 2);
    }

    #[test]
    fn a_same_column_spreads_when_values_are_pushed() {
        let mut b = RowBlock::new(1);
        b.extend_same(0, Value::Bool(true), 2);
        b.rows_appended(2);
        b.values_mut(0).push(Value::Bool(false));
        b.rows_appended(1);
        assert_eq!(
            b.into_rows(),
            vec![
                vec![Value::Bool(true)],
                vec![Value::Bool(true)],
                vec![Value::Bool(false)]
            ]
        );
    }
}
