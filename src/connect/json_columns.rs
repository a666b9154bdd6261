//! One flat JSON object straight into a column batch builder: a scanner for the common
//! shape (`{"key": value, ...}` whose values are strings without escapes, integers,
//! `true`, `false` or `null`) that appends each value to its column as it reads it (see
//! [`super::columnar`]). The rules are [`super::json_row`]'s. Whatever the scanner does not
//! take on the first try (an escape, a fraction or exponent, a nested array or object, a
//! repeated key, a key naming the topic column, a value of the wrong type or out of range,
//! text that is no JSON) leaves nothing in the builder, and the caller decodes the message
//! again the general way (serde_json), which decides and words any error.

use super::columnar::{append_text, end_row};
use super::format::{epoch_scale, Decoder};
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
    // One look at the whole text for UTF-8 (the strings are then slices of it).
    let Ok(text) = std::str::from_utf8(text) else {
        return false;
    };
    let mut row = RowState {
        d,
        b,
        filled: 0,
        t: None,
    };
    if row.object(text).is_none() {
        row.b.truncate();
        return false;
    }
    let RowState { b, filled, t, .. } = row;
    for c in 0..n {
        if filled & (1 << c) == 0 && Some(c) != d.spec().topic_column {
            b.append_null(c);
        }
    }
    end_row(d, b, topic, t, arrival_us)
}

/// A scanned JSON value: the text of a string (no escapes), an integer, a boolean, null.
enum Scalar<'t> {
    Str(&'t str),
    Int(i64),
    Bool(bool),
    Null,
}

/// The row being appended: the columns that have a value (bit `c` for column `c`) and
/// the TIMESTAMPCOLUMN's value.
struct RowState<'a> {
    d: &'a Decoder,
    b: &'a mut ColumnBatchBuilder,
    filled: u64,
    t: Option<i64>,
}

impl RowState<'_> {
    /// Scan the object `text` and append its values; `None` where the fast path gives up.
    fn object(&mut self, text: &str) -> Option<()> {
        let s = text.as_bytes();
        let columns = self.d.columns();
        let mut i = ws(s, 0);
        if s.get(i) != Some(&b'{') {
            return None;
        }
        i = ws(s, i + 1);
        if s.get(i) == Some(&b'}') {
            return (ws(s, i + 1) == s.len()).then_some(());
        }
        // Objects mostly list the columns in order: key `k` is first tried as column `k`.
        let mut k = 0;
        loop {
            let (key, at) = string(text, i)?;
            i = ws(s, at);
            if s.get(i) != Some(&b':') {
                return None;
            }
            let (v, at) = scalar(text, ws(s, i + 1))?;
            let column = match columns.get(k) {
                Some(c) if c.name == key => Some(k),
                _ => self.d.column_named(key),
            };
            k += 1;
            if let Some(c) = column {
                if self.filled & (1 << c) != 0 || Some(c) == self.d.spec().topic_column {
                    return None; // a repeated key or the topic column: the general way
                }
                self.filled |= 1 << c;
                self.append(c, v)?;
            }
            i = ws(s, at);
            match s.get(i) {
                Some(b',') => i = ws(s, i + 1),
                Some(b'}') => return (ws(s, i + 1) == s.len()).then_some(()),
                _ => return None,
            }
        }
    }

    /// Append `v` to column `c` as [`super::json_row`] reads it; `None` (the row to be
    /// decoded the general way) when it does not take it at once.
    fn append(&mut self, c: usize, v: Scalar<'_>) -> Option<()> {
        let (d, b) = (self.d, &mut *self.b);
        let ty = d.types()[c];
        let time = d.spec().time;
        let ts = match v {
            Scalar::Null => {
                b.append_null(c);
                None
            }
            Scalar::Str(text) => append_text(d, b, c, text)?,
            Scalar::Bool(v) => {
                b.append_value(c, &mut d.json_bool(c, v).ok()?);
                None
            }
            Scalar::Int(n) if matches!(ty, DataType::Int2 | DataType::Int4 | DataType::Int8) => {
                let fits = match ty {
                    DataType::Int2 => i16::try_from(n).is_ok(),
                    DataType::Int4 => i32::try_from(n).is_ok(),
                    _ => true,
                };
                fits.then(|| b.append_int(c, n))?;
                None
            }
            Scalar::Int(n) if ty.is_timestamp() && time != TimeFormat::Iso8601 => {
                let us = n.checked_mul(epoch_scale(time))?;
                b.append_timestamp(c, us);
                Some(us)
            }
            Scalar::Int(n) => {
                let mut v = d.json_number(c, itoa::Buffer::new().format(n)).ok()?;
                let ts = v.as_timestamp();
                b.append_value(c, &mut v);
                ts
            }
        };
        if Some(c) == d.ts_col() {
            self.t = ts;
        }
        Some(())
    }
}

/// The index of the first byte at or after `i` that is not JSON white space. A line
/// break is not taken: the general way reads each line of a message as an object of its
/// own, so a line break stops the scan (and the message goes the general way).
fn ws(s: &[u8], mut i: usize) -> usize {
    while matches!(s.get(i), Some(b' ' | b'\t' | b'\r')) {
        i += 1;
    }
    i
}

/// The string starting at byte `i` of `text` (a quote) and the index after it; `None`
/// for anything but a string without escapes or control characters.
fn string(text: &str, i: usize) -> Option<(&str, usize)> {
    let s = text.as_bytes();
    if s.get(i) != Some(&b'"') {
        return None;
    }
    let body = &s[i + 1..];
    let len = body
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
    if body[len] != b'"' {
        return None;
    }
    // Quotes are ASCII: the string's ends are character boundaries.
    Some((text.get(i + 1..i + 1 + len)?, i + 1 + len + 1))
}

/// The value starting at byte `i` of `text` and the index after it; `None` for anything but a
/// string (as [`string`] takes it), an integer of at most 18 digits in JSON's canonical
/// form, `true`, `false` or `null`.
fn scalar(text: &str, i: usize) -> Option<(Scalar<'_>, usize)> {
    let s = text.as_bytes();
    let word = |w: &[u8], v: Scalar<'static>| s[i..].starts_with(w).then_some((v, i + w.len()));
    match *s.get(i)? {
        b'"' => string(text, i).map(|(t, at)| (Scalar::Str(t), at)),
        b'n' => word(b"null", Scalar::Null),
        b't' => word(b"true", Scalar::Bool(true)),
        b'f' => word(b"false", Scalar::Bool(false)),
        b'-' | b'0'..=b'9' => {
            let neg = s[i] == b'-';
            let start = i + usize::from(neg);
            let end = start + s[start..].iter().take_while(|b| b.is_ascii_digit()).count();
            let digits = &s[start..end];
            let canonical = match digits {
                [] | [b'0', _, ..] => false,
                [b'0'] => !neg, // -0 is read as a float by serde_json
                _ => digits.len() <= 18,
            };
            if !canonical || matches!(s.get(end), Some(b'.' | b'e' | b'E')) {
                return None;
            }
            let v = digits
                .iter()
                .fold(0i64, |v, &d| v * 10 + i64::from(d - b'0'));
            Some((Scalar::Int(if neg { -v } else { v }), end))
        }
        _ => None,
    }
}
