//! COPY's field readers: a field's text to its column, with fast paths for the common
//! integer, float and timestamp spellings; the binary format's reading state
//! ([`BinaryState`], read by `copy_binary.rs`); and the relation a COPY fills ([`CopyRel`]).
//!
//! A leaf below `copy.rs` (the COPY sink) and `copy_plain.rs` (its one-pass reader), which
//! both read fields through [`append_field`]; sources decode with it too.

use std::sync::Arc;

use super::catalog::Stream;
use crate::error::{Error, Result};
use crate::exec::columns::ColumnBatchBuilder;
use crate::types::{parse_value, DataType, Value};

/// Decodes one field's bytes in the binary encoding of a type (the server's decoder).
pub(crate) type FieldDecoder = fn(&[u8], DataType) -> Result<Value>;

/// Where the reader is in the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BinaryPhase {
    /// Before the header.
    Header,
    /// Reading tuples.
    Tuples,
    /// After the trailer: nothing more may come.
    Done,
}

/// Binary reading state of a [`super::copy::CopyIn`].
#[derive(Clone, Copy)]
pub(crate) struct BinaryState {
    pub(crate) decode: FieldDecoder,
    pub(crate) phase: BinaryPhase,
}

/// Rows per staged columnar batch (and per batch a query is fed).
pub(crate) const BATCH_ROWS: usize = 16_384;

/// The column builder a COPY into `rel` (columns of `types`) fills: batches of
/// [`BATCH_ROWS`] rows whose times are the TIMESTAMPCOLUMN's buffer itself, not a copy.
pub(crate) fn copy_builder(rel: &CopyRel, types: &[DataType]) -> ColumnBatchBuilder {
    let mut b = ColumnBatchBuilder::new(types, BATCH_ROWS);
    if let Some(c) = rel.ts_col {
        if matches!(types[c], DataType::Timestamp | DataType::TimestampTz) {
            b.set_time_column(c);
        }
    }
    b
}

/// The relation a COPY fills: its name and columns, and where its rows go.
pub(crate) struct CopyRel {
    pub(crate) name: String,
    pub(crate) columns: Vec<crate::types::Column>,
    /// The stream's TIMESTAMPCOLUMN (always `None` for a table).
    pub(crate) ts_col: Option<usize>,
    pub(crate) dest: CopyDest,
}

/// Where a COPY's rows go.
pub(crate) enum CopyDest {
    /// A stream's queries, through its ingest queue.
    Stream(Arc<Stream>),
    /// A stored table, in one insert at the end (all or nothing, keys checked).
    Table(Arc<crate::table::Table>),
}

impl CopyRel {
    pub(crate) fn stream(stream: Arc<Stream>) -> CopyRel {
        CopyRel {
            name: stream.name.clone(),
            columns: stream.columns.clone(),
            ts_col: stream.ts_col,
            dest: CopyDest::Stream(stream),
        }
    }

    pub(crate) fn table(table: Arc<crate::table::Table>) -> CopyRel {
        CopyRel {
            name: table.name.clone(),
            columns: table.columns.to_vec(),
            ts_col: None,
            dest: CopyDest::Table(table),
        }
    }
}

pub(crate) fn with_message(e: Error, f: impl FnOnce(&str) -> String) -> Error {
    use Error::*;
    match e {
        Syntax(m) => Syntax(f(&m)),
        InvalidTextRepresentation(m) => InvalidTextRepresentation(f(&m)),
        InvalidBinaryRepresentation(m) => InvalidBinaryRepresentation(f(&m)),
        InvalidDatetimeFormat(m) => InvalidDatetimeFormat(f(&m)),
        DatetimeFieldOverflow(m) => DatetimeFieldOverflow(f(&m)),
        NumericValueOutOfRange(m) => NumericValueOutOfRange(f(&m)),
        StringDataRightTruncation(m) => StringDataRightTruncation(f(&m)),
        NotNullViolation(m) => NotNullViolation(f(&m)),
        BadCopyFileFormat(m) => BadCopyFileFormat(f(&m)),
        CharacterNotInRepertoire(m) => CharacterNotInRepertoire(f(&m)),
        InvalidParameterValue(m) => InvalidParameterValue(f(&m)),
        DatatypeMismatch(m) => DatatypeMismatch(f(&m)),
        Detailed {
            error,
            position,
            hint,
            detail,
            context,
        } => Detailed {
            error: Box::new(with_message(*error, f)),
            position,
            hint,
            detail,
            context,
        },
        other => other,
    }
}

/// Parse one non-NULL field of type `ty` and append it to column `c`; returns the value
/// when it is a timestamp (for the stream's TIMESTAMPCOLUMN). Canonical integers,
/// `YYYY-MM-DD HH:MM:SS[.ffffff]` timestamps, plain decimal floats and text take fast paths
/// that make no [`Value`]; everything else goes through [`parse_value`], which also reports
/// every error.
#[inline]
pub(crate) fn append_field(
    b: &mut ColumnBatchBuilder,
    c: usize,
    text: &str,
    ty: DataType,
) -> Result<Option<i64>> {
    match ty {
        DataType::Text | DataType::Varchar(None) => {
            b.append_str(c, text);
            return Ok(None);
        }
        // A varchar(n) of at most n bytes has at most n characters.
        DataType::Varchar(Some(n)) if text.len() <= n as usize => {
            b.append_str(c, text);
            return Ok(None);
        }
        DataType::Int2 | DataType::Int4 | DataType::Int8 => {
            if let Some(v) = fast_int(text.as_bytes(), ty) {
                b.append_int(c, v);
                return Ok(None);
            }
        }
        DataType::Timestamp => {
            if let Some(v) = fast_timestamp(text.as_bytes()) {
                b.append_timestamp(c, v);
                return Ok(Some(v));
            }
        }
        DataType::Float4 | DataType::Float8 => {
            if let Some(v) = fast_float(text.as_bytes(), ty) {
                b.append_float(c, v);
                return Ok(None);
            }
        }
        _ => {}
    }
    let mut v = parse_value(text, ty)?;
    let ts = v.as_timestamp();
    b.append_value(c, &mut v);
    Ok(ts)
}

/// An optionally negative run of 1 to 18 ASCII digits that fits `ty` (an integer type),
/// else `None` (the general parser then decides, and reports any error).
#[inline]
pub(crate) fn fast_int(b: &[u8], ty: DataType) -> Option<i64> {
    let (neg, digits) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        _ => (false, b),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut v = 0i64;
    for &d in digits {
        let x = d.wrapping_sub(b'0');
        if x > 9 {
            return None;
        }
        v = v * 10 + x as i64;
    }
    let v = if neg { -v } else { v };
    let fits = match ty {
        DataType::Int2 => i16::try_from(v).is_ok(),
        DataType::Int4 => i32::try_from(v).is_ok(),
        _ => true,
    };
    fits.then_some(v)
}

/// A plain decimal float (`-?digits[.digits]`, at most 17 significant characters, so
/// Rust's parser reads it exactly as the general path does), else `None`.
#[inline]
pub(crate) fn fast_float(b: &[u8], ty: DataType) -> Option<f64> {
    let body = b.strip_prefix(b"-").unwrap_or(b);
    if body.is_empty() || body.len() > 17 || !body[0].is_ascii_digit() {
        return None;
    }
    let mut dots = 0;
    for &d in body {
        if d == b'.' {
            dots += 1;
        } else if !d.is_ascii_digit() {
            return None;
        }
    }
    if dots > 1 {
        return None;
    }
    let text = std::str::from_utf8(b).ok()?;
    // A real goes straight to the nearest f32 (see `types::parse_float`).
    let v: f64 = match ty {
        DataType::Float4 => f64::from(text.parse::<f32>().ok()?),
        _ => text.parse().ok()?,
    };
    v.is_finite().then_some(v)
}

thread_local! {
    /// The date part of the last timestamp [`fast_timestamp`] read on this thread, and its
    /// day count.
    static LAST_DATE: std::cell::Cell<DateCache> = const { std::cell::Cell::new(DateCache::NONE) };
}

/// The date part (`YYYY-MM-DD`) of the last timestamp read and its day count since the
/// epoch: rows mostly come in time order, so a date's day count is worked out once.
#[derive(Clone, Copy)]
pub(crate) struct DateCache {
    date: [u8; 10],
    days: i64,
}

impl DateCache {
    /// No date yet (all zero bytes, which no date matches).
    pub(crate) const NONE: DateCache = DateCache {
        date: [0; 10],
        days: 0,
    };
}

/// [`fast_timestamp_with`] with this thread's [`DateCache`].
pub(crate) fn fast_timestamp(b: &[u8]) -> Option<i64> {
    LAST_DATE.with(|c| {
        let mut cache = c.get();
        let v = fast_timestamp_with(b, &mut cache);
        c.set(cache);
        v
    })
}

/// `YYYY-MM-DD HH:MM:SS[.f{1,6}]` (what COPY of real data mostly carries, `T` also taken
/// for the space), microseconds since the epoch; else `None` (the general parser then
/// decides, and reports any error). `cache` holds the last date read.
#[inline(always)]
pub(crate) fn fast_timestamp_with(b: &[u8], cache: &mut DateCache) -> Option<i64> {
    let (b, frac) = match b.len() {
        19 => (b, 0),
        21..=26 if b[19] == b'.' => {
            let digits = &b[20..];
            let mut f = 0i64;
            for &c in digits {
                if !c.is_ascii_digit() {
                    return None;
                }
                f = f * 10 + (c - b'0') as i64;
            }
            (&b[..19], f * 10i64.pow(6 - digits.len() as u32))
        }
        _ => return None,
    };
    if b[4] != b'-' || b[7] != b'-' || (b[10] != b' ' && b[10] != b'T') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        b[r].iter().try_fold(0i64, |acc, &c| {
            c.is_ascii_digit().then(|| acc * 10 + (c - b'0') as i64)
        })
    };
    // Rows mostly come in time order: the date of the last timestamp is kept, so its day
    // count is worked out once per day of data.
    let date: [u8; 10] = b[..10].try_into().ok()?;
    let days = match *cache {
        DateCache { date: last, days } if last == date => days,
        _ => {
            let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
            let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
            let mdays = [
                31,
                if leap { 29 } else { 28 },
                31,
                30,
                31,
                30,
                31,
                31,
                30,
                31,
                30,
                31,
            ];
            // Year 0 does not exist (PostgreSQL refuses it as out of range).
            if y == 0 || !(1..=12).contains(&mo) || d < 1 || d > mdays[(mo - 1) as usize] {
                return None; // the general parser reports the error precisely
            }
            let days = crate::time::days_from_civil(y, mo as u32, d as u32);
            *cache = DateCache { date, days };
            days
        }
    };
    let seconds = seconds_of_day(b[11..19].try_into().ok()?)?;
    Some((days * 86_400 + seconds) * 1_000_000 + frac)
}

/// `HH:MM:SS` (each a pair of ASCII digits, hours 00-23, minutes and seconds 00-59) as
/// seconds since midnight; `None` for any other eight bytes (the general parser decides
/// those, a leap second's `60` among them). The bytes are read as one word: XOR with
/// `"00:00:00"` leaves each digit's value in its byte and zero in the colons', which one
/// mask checks, and adding 6 to every digit byte carries into its high half exactly when
/// the digit was over 9. Then `x * 10 + (x >> 8)` puts each pair's value (at most 99, so
/// no byte carries into the next) in the byte of its tens: hours, minutes, seconds in
/// bytes 0, 3 and 6.
#[inline(always)]
pub(crate) fn seconds_of_day(b: [u8; 8]) -> Option<i64> {
    const ZEROS: u64 = u64::from_le_bytes(*b"00:00:00");
    let x = u64::from_le_bytes(b) ^ ZEROS;
    let high = 0xf0f0_fff0_f0ff_f0f0u64; // a digit's high half, a colon's whole byte
    if x & high != 0 || (x + 0x0606_0006_0600_0606) & 0xf0f0_00f0_f000_f0f0 != 0 {
        return None;
    }
    let pairs = x * 10 + (x >> 8);
    let (h, m, s) = (pairs & 0xff, (pairs >> 24) & 0xff, (pairs >> 48) & 0xff);
    if h > 23 || m > 59 || s > 59 {
        return None;
    }
    Some((h * 3600 + m * 60 + s) as i64)
}
