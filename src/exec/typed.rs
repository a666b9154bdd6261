//! Stored columns of a [`super::RowBlock`] held by type.
//!
//! A slide event of many groups (`SELECT origin, wtime(*), count(*), avg(delay) ... GROUP
//! BY origin`) fills its block column by column with values of one type each: the group
//! key's text, counts, the sum and count of an average of integers. A [`TypedColumn`]
//! keeps them as such, so that filling a row costs no `Value` built or matched, the COPY
//! encoder writes each field without matching a `Value`, an average is divided only as
//! its digits are written, and dropping the block drops a few vectors instead of each value.

use compact_str::CompactString;

use crate::types::Value;

/// The integer type of a [`TypedColumn::Int`] column: which `Value` its rows read back as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntType {
    Int2,
    Int4,
    Int8,
}

/// The bit of a [`TypedColumn::Text`] end offset that marks its row NULL.
const NULL_END: usize = 1 << (usize::BITS - 1);

/// One stored column of a typed block: a value for each row pushed, in row order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TypedColumn {
    /// No value other than NULL pushed yet: `rows` NULL rows; the first other value makes
    /// room for `room` rows of its kind.
    Nulls { rows: usize, room: usize },
    /// Text: row `r`'s bytes end at `ends[r]` in `text` (with [`NULL_END`] set: NULL) and
    /// start where row `r - 1`'s end (0 for the first).
    Text { text: String, ends: Vec<usize> },
    /// Integers of one type, `None` for NULL.
    Int { ty: IntType, vals: Vec<Option<i64>> },
    /// `avg` of integers as (sum, count) pairs: the `numeric` quotient is computed when the
    /// row is read or written. A count of 0 is NULL.
    Avg(Vec<(i64, u32)>),
    /// Any other values, with the heap bytes of their text beyond its inline size.
    Values { vals: Vec<Value>, heap: usize },
}

impl TypedColumn {
    /// Rows pushed.
    pub(crate) fn len(&self) -> usize {
        match self {
            TypedColumn::Nulls { rows, .. } => *rows,
            TypedColumn::Text { ends, .. } => ends.len(),
            TypedColumn::Int { vals, .. } => vals.len(),
            TypedColumn::Avg(vals) => vals.len(),
            TypedColumn::Values { vals, .. } => vals.len(),
        }
    }

    /// Push a text value.
    #[inline]
    pub(crate) fn push_text(&mut self, s: &str) {
        match self {
            TypedColumn::Text { text, ends } => {
                text.push_str(s);
                ends.push(text.len());
            }
            _ => self.push_general(Value::Text(s.into())),
        }
    }

    /// Push an integer of type `ty`.
    #[inline]
    pub(crate) fn push_int(&mut self, ty: IntType, v: i64) {
        match self {
            TypedColumn::Int { ty: t, vals } if *t == ty => vals.push(Some(v)),
            _ => self.push_general(int_value(ty, v)),
        }
    }

    /// Push the average of `n` integers summing to `sum` (`n > 0`). Errors: out of range
    /// from [`crate::agg::int_avg`] for a sum or count past what the pair holds.
    #[inline]
    pub(crate) fn push_avg(&mut self, sum: i128, n: i64) -> crate::error::Result<()> {
        if let (TypedColumn::Avg(vals), Ok(s), Ok(c)) =
            (&mut *self, i64::try_from(sum), u32::try_from(n))
        {
            if c > 0 {
                vals.push((s, c));
                return Ok(());
            }
        }
        if let (&mut TypedColumn::Nulls { rows, room }, Ok(_), Ok(1..)) =
            (&mut *self, i64::try_from(sum), u32::try_from(n))
        {
            let mut vals = Vec::with_capacity(room.max(rows + 1));
            vals.resize(rows, (0, 0));
            *self = TypedColumn::Avg(vals);
            return self.push_avg(sum, n);
        }
        self.push_general(crate::agg::int_avg(sum, n)?);
        Ok(())
    }

    /// Push a copy of `v`.
    #[inline]
    pub(crate) fn push_ref(&mut self, v: &Value) {
        match (&mut *self, v) {
            (TypedColumn::Text { .. }, Value::Text(s)) => self.push_text(s),
            (
                TypedColumn::Int {
                    ty: IntType::Int4,
                    vals,
                },
                Value::Int4(i),
            ) => vals.push(Some(i64::from(*i))),
            (
                TypedColumn::Int {
                    ty: IntType::Int8,
                    vals,
                },
                Value::Int8(i),
            ) => vals.push(Some(*i)),
            _ => self.push_general(v.clone()),
        }
    }

    /// Push `v`, whatever its type: the first value other than NULL chooses the column's
    /// kind, and a value of another kind turns the column into [`TypedColumn::Values`].
    pub(crate) fn push_general(&mut self, v: Value) {
        match (&mut *self, &v) {
            (TypedColumn::Nulls { rows, .. }, Value::Null) => *rows += 1,
            (&mut TypedColumn::Nulls { rows, room }, _) => {
                let room = room.max(rows + 1);
                *self = match (&v, int_type(&v)) {
                    (Value::Text(s), _) => TypedColumn::Text {
                        text: String::with_capacity(room * s.len().clamp(1, 16)),
                        ends: with_len(room, rows, NULL_END),
                    },
                    (_, Some(ty)) => TypedColumn::Int {
                        ty,
                        vals: with_len(room, rows, None),
                    },
                    _ => TypedColumn::Values {
                        vals: with_len(room, rows, Value::Null),
                        heap: 0,
                    },
                };
                self.push_general(v);
            }
            (TypedColumn::Text { text, ends }, Value::Text(s)) => {
                text.push_str(s);
                ends.push(text.len());
            }
            (TypedColumn::Text { text, ends }, Value::Null) => ends.push(text.len() | NULL_END),
            (TypedColumn::Int { vals, .. }, Value::Null) => vals.push(None),
            (TypedColumn::Int { ty, vals }, _) if int_type(&v) == Some(*ty) => {
                vals.push(v.as_i64())
            }
            (TypedColumn::Avg(vals), Value::Null) => vals.push((0, 0)),
            (TypedColumn::Values { vals, heap }, _) => {
                *heap += super::block::value_heap_bytes(&v);
                vals.push(v);
            }
            _ => {
                let (vals, heap) = self.to_values();
                *self = TypedColumn::Values { vals, heap };
                self.push_general(v);
            }
        }
    }

    /// The column's values and the heap bytes of their text.
    fn to_values(&self) -> (Vec<Value>, usize) {
        let vals: Vec<Value> = (0..self.len()).map(|r| self.value(r)).collect();
        let heap = vals.iter().map(super::block::value_heap_bytes).sum();
        (vals, heap)
    }

    /// The value of row `r` (`r < len()`).
    pub(crate) fn value(&self, r: usize) -> Value {
        match self {
            TypedColumn::Nulls { .. } => Value::Null,
            TypedColumn::Text { .. } => match self.text(r) {
                Some(s) => Value::Text(CompactString::from(s)),
                None => Value::Null,
            },
            TypedColumn::Int { ty, vals } => match vals[r] {
                Some(v) => int_value(*ty, v),
                None => Value::Null,
            },
            TypedColumn::Avg(vals) => match vals[r] {
                (_, 0) => Value::Null,
                // A sum within i64 and a count within u32 always have a quotient.
                (s, n) => crate::agg::int_avg(i128::from(s), i64::from(n)).unwrap_or(Value::Null),
            },
            TypedColumn::Values { vals, .. } => vals[r].clone(),
        }
    }

    /// Row `r`'s text in a [`TypedColumn::Text`] column (`None`: NULL, or another kind).
    #[inline]
    pub(crate) fn text(&self, r: usize) -> Option<&str> {
        let TypedColumn::Text { text, ends } = self else {
            return None;
        };
        let end = ends[r];
        if end & NULL_END != 0 {
            return None;
        }
        let start = if r == 0 { 0 } else { ends[r - 1] & !NULL_END };
        Some(&text[start..end])
    }

    /// Keep the first `n` rows.
    pub(crate) fn truncate(&mut self, n: usize) {
        match self {
            TypedColumn::Nulls { rows, .. } => *rows = (*rows).min(n),
            TypedColumn::Text { text, ends } => {
                ends.truncate(n);
                text.truncate(ends.last().map_or(0, |e| e & !NULL_END));
            }
            TypedColumn::Int { vals, .. } => vals.truncate(n),
            TypedColumn::Avg(vals) => vals.truncate(n),
            TypedColumn::Values { vals, heap } => {
                if n < vals.len() {
                    *heap -= vals[n..]
                        .iter()
                        .map(super::block::value_heap_bytes)
                        .sum::<usize>();
                    vals.truncate(n);
                }
            }
        }
    }

    /// Heap bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            TypedColumn::Nulls { .. } => 0,
            TypedColumn::Text { text, ends } => {
                text.capacity() + ends.capacity() * std::mem::size_of::<usize>()
            }
            TypedColumn::Int { vals, .. } => vals.capacity() * std::mem::size_of::<Option<i64>>(),
            TypedColumn::Avg(vals) => vals.capacity() * std::mem::size_of::<(i64, u32)>(),
            TypedColumn::Values { vals, heap } => {
                vals.capacity() * std::mem::size_of::<Value>() + heap
            }
        }
    }

    /// An empty column whose first value other than NULL makes room for `rows` rows.
    pub(crate) fn with_room(rows: usize) -> TypedColumn {
        TypedColumn::Nulls {
            rows: 0,
            room: rows,
        }
    }
}

/// A vector of `len` copies of `v` with room for `room` values.
fn with_len<T: Clone>(room: usize, len: usize, v: T) -> Vec<T> {
    let mut vals = Vec::with_capacity(room);
    vals.resize(len, v);
    vals
}

/// The integer type of `v` (`None`: not an integer).
fn int_type(v: &Value) -> Option<IntType> {
    match v {
        Value::Int2(_) => Some(IntType::Int2),
        Value::Int4(_) => Some(IntType::Int4),
        Value::Int8(_) => Some(IntType::Int8),
        _ => None,
    }
}

/// `v` as a value of type `ty` (`v` is within its range: it was read from one).
fn int_value(ty: IntType, v: i64) -> Value {
    match ty {
        IntType::Int2 => Value::Int2(v as i16),
        IntType::Int4 => Value::Int4(v as i32),
        IntType::Int8 => Value::Int8(v),
    }
}
