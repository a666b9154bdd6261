//! One JSON object straight into a column batch builder: a serde visitor walks the
//! object's keys and appends each value to its column as it reads it (see
//! [`super::columnar`]). The rules are [`super::json_row`]'s; whatever this fast path does
//! not take on the first try (a repeated key, a key naming the topic column, a value of
//! the wrong type or out of range, an array or object) leaves nothing in the builder, and
//! the caller decodes the message again the general way, which words the error.

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::columnar::{append_text, end_row};
use super::format::{epoch_scale, Decoder};
use super::json_row::KeySeed;
use super::spec::TimeFormat;
use crate::exec::columns::ColumnBatchBuilder;
use crate::types::DataType;

/// Append `text`, one JSON object, as a row of `b` (`topic` fills the topic column;
/// `arrival_us` is the time of a stream without a TIMESTAMPCOLUMN). False, with nothing
/// appended, when the fast path does not take it (always for more than 64 columns).
pub(crate) fn append_object(
    d: &Decoder,
    text: &[u8],
    topic: Option<&str>,
    arrival_us: i64,
    b: &mut ColumnBatchBuilder,
) -> bool {
    let n = d.types().len();
    if n > 64 {
        return false;
    }
    let mut row = RowState {
        d,
        b,
        filled: 0,
        t: None,
        slow: false,
    };
    let mut de = serde_json::Deserializer::from_slice(text);
    let parsed = ObjectSeed(&mut row)
        .deserialize(&mut de)
        .and_then(|()| de.end())
        .is_ok();
    let RowState {
        b, filled, t, slow, ..
    } = row;
    if !parsed || slow {
        b.truncate();
        return false;
    }
    for c in 0..n {
        if filled & (1 << c) == 0 && Some(c) != d.spec().topic_column {
            b.append_null(c);
        }
    }
    end_row(d, b, topic, t, arrival_us)
}

/// The row being appended: the columns that have a value (bit `c` for column `c`), the
/// TIMESTAMPCOLUMN's value, and whether the fast path gave up.
struct RowState<'a> {
    d: &'a Decoder,
    b: &'a mut ColumnBatchBuilder,
    filled: u64,
    t: Option<i64>,
    slow: bool,
}

impl RowState<'_> {
    /// Column `c` took a value, `ts` when it is a timestamp.
    fn took(&mut self, c: usize, ts: Option<i64>) {
        if Some(c) == self.d.ts_col() {
            self.t = ts;
        }
    }

    /// Column `c`'s value from a JSON number written as `text`, the general way.
    fn number(&mut self, c: usize, text: &str) {
        match self.d.json_number(c, text) {
            Ok(mut v) => {
                let ts = v.as_timestamp();
                self.b.append_value(c, &mut v);
                self.took(c, ts);
            }
            Err(_) => self.slow = true,
        }
    }
}

struct ObjectSeed<'r, 'a>(&'r mut RowState<'a>);

impl<'de> DeserializeSeed<'de> for ObjectSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ObjectSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let row = self.0;
        while let Some(column) = map.next_key_seed(KeySeed(row.d))? {
            match column {
                Some(c) if row.filled & (1 << c) == 0 && Some(c) != row.d.spec().topic_column => {
                    row.filled |= 1 << c;
                    map.next_value_seed(ValueSeed { row: &mut *row, c })?;
                }
                Some(_) => {
                    row.slow = true;
                    map.next_value::<IgnoredAny>()?;
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// A value for column `c`, appended as it is read.
struct ValueSeed<'r, 'a> {
    row: &'r mut RowState<'a>,
    c: usize,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.row.b.append_null(self.c);
        Ok(())
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.visit_unit()
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        match append_text(self.row.d, self.row.b, self.c, s) {
            Some(ts) => self.row.took(self.c, ts),
            None => self.row.slow = true,
        }
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        match self.row.d.json_bool(self.c, v) {
            Ok(mut v) => self.row.b.append_value(self.c, &mut v),
            Err(_) => self.row.slow = true,
        }
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<(), E> {
        let (row, c) = (self.row, self.c);
        let ty = row.d.types()[c];
        let fits = match ty {
            DataType::Int2 => i16::try_from(n).is_ok(),
            DataType::Int4 => i32::try_from(n).is_ok(),
            DataType::Int8 => true,
            _ => false,
        };
        let time = row.d.spec().time;
        if fits {
            row.b.append_int(c, n);
        } else if ty.is_timestamp() && time != TimeFormat::Iso8601 {
            match n.checked_mul(epoch_scale(time)) {
                Some(us) => {
                    row.b.append_timestamp(c, us);
                    row.took(c, Some(us));
                }
                None => row.slow = true,
            }
        } else {
            row.number(c, itoa::Buffer::new().format(n));
        }
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<(), E> {
        match i64::try_from(n) {
            Ok(n) => self.visit_i64(n),
            Err(_) => {
                self.row.number(self.c, itoa::Buffer::new().format(n));
                Ok(())
            }
        }
    }
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<(), E> {
        // As serde_json prints a number it read (finite: JSON has no other).
        let text = serde_json::Number::from_f64(n).map_or_else(|| n.to_string(), |n| n.to_string());
        self.row.number(self.c, &text);
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        self.row.slow = true;
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        self.row.slow = true;
        Ok(())
    }
}
