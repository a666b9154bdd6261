//! Values on the wire: text and binary encodings of [`Value`], parameter decoding, COPY lines.
//!
//! PostgreSQL has two encodings per type. The text encoding is the type's output function
//! (what psql prints); the binary encoding is the type's `send` function (big-endian
//! integers, IEEE floats, timestamps as microseconds since 2000-01-01, numeric as base-10000
//! digit groups). Drivers pick per column: tokio-postgres and asyncpg ask for binary, psql
//! and psycopg for text. This module encodes every [`DataType`] both ways and decodes bound
//! parameters both ways, so the handlers only deal with whole rows.
//!
//! Design decision: the binary encodings are written here by hand (a few lines per type)
//! rather than through `postgres-types`, so that no foreign type crosses the module boundary
//! and the exact bytes are pinned by unit tests at the bottom of this file.

use bytes::{BufMut, BytesMut};
use rust_decimal::Decimal;

use super::line_buf::{LineBuf, Piece};
use crate::error::{Error, Result};
use crate::exec::block::{BlockColumn, RowBlock};
use crate::exec::typed::TypedColumn;
use crate::sql::{CopyFormat, CopyOptions};
use crate::time;
use crate::types::{CatalogType, Column, DataType, ElemType, Interval, Value};
use std::borrow::Borrow;

/// Microseconds from 1970-01-01 (Unix epoch) to 2000-01-01 (PostgreSQL epoch).
const PG_EPOCH_OFFSET_US: i64 = 946_684_800_000_000;
/// Days from 1970-01-01 to 2000-01-01, where PostgreSQL's binary `date` counts from.
const PG_EPOCH_OFFSET_DAYS: i32 = 10_957;

/// Append the PostgreSQL text output of `value` (NULL is the caller's business).
pub(crate) fn format_text(value: &Value, out: &mut String) {
    crate::types::format_value(value, out)
}

/// Parse a text-format parameter as PostgreSQL's input function for `ty` would.
pub(crate) fn parse_text(text: &str, ty: DataType) -> Result<Value> {
    crate::types::parse_value(text, ty)
}

/// How one result column goes on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FieldFormat {
    /// The type's text output.
    Text,
    /// The binary encoding of the value's own type.
    Binary,
    /// The binary encoding of a catalog type (an oid's four bytes, `array_send`), whose
    /// values are held as another type's ([`CatalogType::held_as`]).
    BinaryAs(CatalogType),
}

impl FieldFormat {
    /// The format of `column` when the client asked for text or binary.
    pub(crate) fn of(column: &Column, binary: bool) -> FieldFormat {
        match (binary, column.catalog_type) {
            (false, _) => FieldFormat::Text,
            (true, None) => FieldFormat::Binary,
            (true, Some(t)) => FieldFormat::BinaryAs(t),
        }
    }

    /// True for the binary formats.
    pub(crate) fn is_binary(&self) -> bool {
        *self != FieldFormat::Text
    }
}

/// Append one DataRow field (length word + bytes, or -1 for NULL) in the given format.
pub(crate) fn put_field(
    value: &Value,
    format: FieldFormat,
    buf: &mut BytesMut,
    scratch: &mut String,
) {
    if value.is_null() {
        buf.put_i32(-1);
        return;
    }
    let len_at = buf.len();
    buf.put_i32(0);
    match format {
        FieldFormat::Binary => put_binary(value, buf),
        FieldFormat::BinaryAs(ty) => put_catalog_binary(value, ty, buf, scratch),
        FieldFormat::Text => {
            scratch.clear();
            format_text(value, scratch);
            buf.put_slice(scratch.as_bytes());
        }
    }
    let len = (buf.len() - len_at - 4) as i32;
    buf[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
}

/// Append the binary encoding of `value`, a value of catalog type `ty` held as
/// `ty.held_as()`: an oid as an unsigned 32-bit integer; an array or vector as
/// PostgreSQL's `array_send` (ndim, has-null flag, element oid, then per dimension its
/// length and lower bound — 1 for arrays, 0 for vectors — then each element as a length
/// word, -1 for NULL, and its binary form).
///
/// The catalog engine checks that each value it sends parses as its type
/// ([`crate::exec::relational`]), so the fallbacks here (an oid out of range sent as its
/// low 32 bits, an element that does not parse sent as its text bytes) never run.
fn put_catalog_binary(value: &Value, ty: CatalogType, buf: &mut BytesMut, scratch: &mut String) {
    scratch.clear();
    format_text(value, scratch);
    if let CatalogType::Reg(kind) = ty {
        // A regtype value leaves the executor as the type's name (or its oid), which gives
        // the oid back; only regtype columns are announced as reg* (see `RType::column`).
        let oid = value.as_i64().or_else(|| match kind {
            crate::types::RegKind::Type => crate::sql::type_oid_of_name(scratch),
            _ => None,
        });
        buf.put_u32(oid.unwrap_or(0) as u32);
        return;
    }
    match ty {
        CatalogType::Name => {
            buf.put_slice(scratch.as_bytes());
            return;
        }
        CatalogType::Char => {
            buf.put_u8(crate::types::char_byte(scratch));
            return;
        }
        CatalogType::Record => {
            put_record_binary(scratch, buf);
            return;
        }
        _ => {}
    }
    let Some(elem) = ty.elem() else {
        let oid = value.as_i64().or_else(|| scratch.trim().parse().ok());
        debug_assert!(
            oid.is_some_and(|o| (0..=u32::MAX as i64).contains(&o)),
            "the catalog engine sends oids in range, not {value:?}"
        );
        buf.put_u32(oid.unwrap_or(0) as u32);
        return;
    };
    // An array of several dimensions sends each dimension's length (lower bound 1).
    let mut dims = None;
    let (elems, lower) = match ty {
        CatalogType::Array(_) => match crate::exec::array_nd::parse_nd(scratch) {
            Ok(nd) => {
                dims = Some(nd.dims);
                (Some(nd.elems), 1)
            }
            Err(_) => (None, 1),
        },
        _ => (
            Some(
                scratch
                    .split_whitespace()
                    .map(|e| Some(e.to_string()))
                    .collect(),
            ),
            0,
        ),
    };
    debug_assert!(
        elems.is_some(),
        "the catalog engine sends well-formed arrays"
    );
    let elems: Vec<Option<String>> = elems.unwrap_or_default();
    let dims = match dims {
        Some(d) if !elems.is_empty() => d,
        _ if elems.is_empty() => vec![],
        _ => vec![elems.len()],
    };
    buf.put_i32(dims.len() as i32);
    buf.put_i32(i32::from(elems.iter().any(Option::is_none)));
    buf.put_u32(elem.oid());
    for n in &dims {
        buf.put_i32(*n as i32);
        buf.put_i32(lower);
    }
    for e in &elems {
        let Some(text) = e else {
            buf.put_i32(-1);
            continue;
        };
        let len_at = buf.len();
        buf.put_i32(0);
        put_elem_binary(text, elem, buf);
        let len = (buf.len() - len_at - 4) as i32;
        buf[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
    }
}

/// `record_send` of a record held as its text form `(1,"a b",)`: the field count, then
/// each field as `text` (oid 25) with its length word (-1 for NULL, an empty field).
fn put_record_binary(text: &str, buf: &mut BytesMut) {
    let inner = text
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .unwrap_or(text);
    let mut fields: Vec<Option<String>> = Vec::new();
    let (mut cur, mut quoted, mut any) = (String::new(), false, false);
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                cur.push('"');
            }
            '"' => {
                quoted = !quoted;
                any = true;
            }
            '\\' if quoted => cur.extend(chars.next()),
            ',' if !quoted => {
                fields.push((any || !cur.is_empty()).then(|| std::mem::take(&mut cur)));
                any = false;
            }
            c => cur.push(c),
        }
    }
    if !inner.is_empty() || any {
        fields.push((any || !cur.is_empty()).then_some(cur));
    }
    buf.put_i32(fields.len() as i32);
    for f in &fields {
        buf.put_u32(25);
        match f {
            Some(t) => {
                buf.put_i32(t.len() as i32);
                buf.put_slice(t.as_bytes());
            }
            None => buf.put_i32(-1),
        }
    }
}

/// Append the binary form of one array element given by its text.
fn put_elem_binary(text: &str, elem: ElemType, buf: &mut BytesMut) {
    match elem {
        ElemType::Oid => match text.trim().parse::<u32>() {
            Ok(oid) => buf.put_u32(oid),
            Err(_) => {
                debug_assert!(false, "the catalog engine sends oids in range, not {text}");
                buf.put_slice(text.as_bytes())
            }
        },
        ElemType::Char => buf.put_u8(crate::types::char_byte(text)),
        other => match crate::types::parse_value(text, other.held_as()) {
            Ok(v) => put_binary(&v, buf),
            Err(_) => {
                debug_assert!(
                    false,
                    "the catalog engine sends parsable elements, not {text}"
                );
                buf.put_slice(text.as_bytes())
            }
        },
    }
}

/// Append the binary (`send`) encoding of a non-NULL value.
fn put_binary(value: &Value, buf: &mut BytesMut) {
    match value {
        Value::Null => {}
        Value::Bool(b) => buf.put_u8(*b as u8),
        Value::Int2(v) => buf.put_i16(*v),
        Value::Int4(v) => buf.put_i32(*v),
        Value::Int8(v) => buf.put_i64(*v),
        Value::Float4(v) => buf.put_f32(*v),
        Value::Float8(v) => buf.put_f64(*v),
        Value::Numeric(d) => put_numeric(d, buf),
        Value::WideNumeric(w) => buf.put_slice(&w.send()),
        Value::Text(s) => buf.put_slice(s.as_bytes()),
        // infinity and -infinity are i64::MAX and i64::MIN on both sides.
        Value::Timestamp(us) | Value::TimestampTz(us) => buf.put_i64(if time::is_infinite(*us) {
            *us
        } else {
            us.saturating_sub(PG_EPOCH_OFFSET_US)
        }),
        Value::Date(d) => buf.put_i32(if crate::date::date_is_infinite(*d) {
            *d
        } else {
            d - PG_EPOCH_OFFSET_DAYS
        }),
        Value::Time(t) => buf.put_i64(*t),
        Value::Interval(iv) => {
            buf.put_i64(iv.micros);
            buf.put_i32(iv.days);
            buf.put_i32(iv.months);
        }
    }
}

/// PostgreSQL's numeric `send`: ndigits, weight, sign, dscale, then base-10000 digits.
fn put_numeric(d: &Decimal, buf: &mut BytesMut) {
    let scale = d.scale() as usize;
    let text = d.abs().to_string();
    let (int_part, frac_part) = match text.split_once('.') {
        Some((i, f)) => (i.to_string(), f.to_string()),
        None => (text.clone(), String::new()),
    };
    // Pad the integer part on the left and the fraction on the right to whole groups of 4.
    let int_pad = (4 - int_part.len() % 4) % 4;
    let int_digits = format!("{}{}", "0".repeat(int_pad), int_part);
    let frac_pad = (4 - frac_part.len() % 4) % 4;
    let frac_digits = format!("{}{}", frac_part, "0".repeat(frac_pad));
    let group = |s: &str| -> Vec<i16> {
        s.as_bytes()
            .chunks(4)
            .map(|c| std::str::from_utf8(c).unwrap().parse::<i16>().unwrap())
            .collect()
    };
    let int_groups = group(&int_digits);
    let frac_groups = group(&frac_digits);
    let mut weight = int_groups.len() as i16 - 1;
    let mut digits: Vec<i16> = int_groups.into_iter().chain(frac_groups).collect();
    while digits.first() == Some(&0) {
        digits.remove(0);
        weight -= 1;
    }
    while digits.last() == Some(&0) {
        digits.pop();
    }
    if digits.is_empty() {
        weight = 0;
    }
    let sign: u16 = if d.is_sign_negative() && !d.is_zero() {
        0x4000
    } else {
        0
    };
    buf.put_i16(digits.len() as i16);
    buf.put_i16(weight);
    buf.put_u16(sign);
    buf.put_i16(scale as i16);
    for g in digits {
        buf.put_i16(g);
    }
}

/// Decode a binary-format parameter of type `ty`.
pub(crate) fn parse_binary(bytes: &[u8], ty: DataType) -> Result<Value> {
    let bad = || {
        Error::InvalidTextRepresentation(format!(
            "incorrect binary data format in bind parameter of type {}",
            ty.name()
        ))
    };
    let fixed = |n: usize| -> Result<&[u8]> {
        if bytes.len() == n {
            Ok(bytes)
        } else {
            Err(bad())
        }
    };
    Ok(match ty {
        DataType::Bool => Value::Bool(fixed(1)?[0] != 0),
        DataType::Int2 => Value::Int2(i16::from_be_bytes(fixed(2)?.try_into().unwrap())),
        DataType::Int4 => Value::Int4(i32::from_be_bytes(fixed(4)?.try_into().unwrap())),
        DataType::Int8 => Value::Int8(i64::from_be_bytes(fixed(8)?.try_into().unwrap())),
        DataType::Float4 => Value::Float4(f32::from_be_bytes(fixed(4)?.try_into().unwrap())),
        DataType::Float8 => Value::Float8(f64::from_be_bytes(fixed(8)?.try_into().unwrap())),
        // NUMERIC_NAN: no digits, sign 0xC000.
        DataType::Numeric if bytes.len() == 8 && bytes[4..6] == [0xC0, 0] => {
            crate::types_wide::WideNumeric::nan()
        }
        DataType::Numeric => Value::Numeric(parse_numeric(bytes).ok_or_else(bad)?),
        DataType::Date => {
            let pg = i32::from_be_bytes(fixed(4)?.try_into().unwrap());
            Value::Date(if crate::date::date_is_infinite(pg) {
                pg
            } else {
                pg.checked_add(PG_EPOCH_OFFSET_DAYS)
                    .filter(|d| !crate::date::date_is_infinite(*d))
                    .ok_or_else(|| Error::DatetimeFieldOverflow("date out of range".into()))?
            })
        }
        DataType::Time => {
            let t = i64::from_be_bytes(fixed(8)?.try_into().unwrap());
            if !(0..=crate::time::US_PER_DAY).contains(&t) {
                return Err(Error::InvalidBinaryRepresentation(
                    "time out of range".into(),
                ));
            }
            Value::Time(t)
        }
        DataType::Text | DataType::Varchar(_) | DataType::Bpchar(_) => {
            let s = std::str::from_utf8(bytes).map_err(|_| {
                Error::CharacterNotInRepertoire(
                    "invalid byte sequence for encoding \"UTF8\"".into(),
                )
            })?;
            if s.contains('\0') {
                return Err(Error::CharacterNotInRepertoire(
                    "invalid byte sequence for encoding \"UTF8\": 0x00".into(),
                ));
            }
            // varchar(n) length checks belong to the engine's assignment cast.
            Value::Text(s.into())
        }
        DataType::Timestamp | DataType::TimestampTz => {
            let pg = i64::from_be_bytes(fixed(8)?.try_into().unwrap());
            let us = if time::is_infinite(pg) {
                pg
            } else {
                pg.checked_add(PG_EPOCH_OFFSET_US)
                    .filter(|us| !time::is_infinite(*us))
                    .ok_or_else(|| Error::DatetimeFieldOverflow("timestamp out of range".into()))?
            };
            if ty == DataType::Timestamp {
                Value::Timestamp(us)
            } else {
                Value::TimestampTz(us)
            }
        }
        DataType::Interval => {
            let b = fixed(16)?;
            Value::Interval(Interval {
                micros: i64::from_be_bytes(b[0..8].try_into().unwrap()),
                days: i32::from_be_bytes(b[8..12].try_into().unwrap()),
                months: i32::from_be_bytes(b[12..16].try_into().unwrap()),
            })
        }
    })
}

/// Decode a parameter of catalog type `ty`, held as [`CatalogType::held_as`]: in text
/// through the catalog types' input ([`crate::exec::relational::conform_catalog`]: an
/// oid wraps negative 32-bit numbers as `oidin` does); in binary an oid as four
/// big-endian bytes, an array or vector as `array_send` bytes (one dimension at most),
/// held as its canonical text form. Errors: 22021 (text not UTF-8), 22P02 / 22003 (text
/// input), 22P03 (malformed binary), 0A000 (several dimensions).
pub(crate) fn parse_catalog(bytes: &[u8], ty: CatalogType, binary: bool) -> Result<Value> {
    if !binary {
        let text = std::str::from_utf8(bytes).map_err(|_| {
            Error::CharacterNotInRepertoire("invalid byte sequence for encoding \"UTF8\"".into())
        })?;
        return crate::exec::relational::conform_catalog(Value::Text(text.into()), ty);
    }
    let bad = || {
        Error::InvalidBinaryRepresentation(format!(
            "incorrect binary data format in bind parameter of type {}",
            ty.name()
        ))
    };
    match ty {
        CatalogType::Name => return parse_catalog(bytes, ty, false),
        // `charrecv`: one byte (any byte: 0 and the high half print escaped).
        CatalogType::Char => {
            let [b] = bytes else { return Err(bad()) };
            return Ok(Value::Text(crate::types::char_text(*b).into()));
        }
        CatalogType::Record => {
            return Err(Error::FeatureNotSupported(
                "input of anonymous composite types is not implemented".into(),
            ))
        }
        _ => {}
    }
    let Some(elem) = ty.elem() else {
        let oid: [u8; 4] = bytes.try_into().map_err(|_| bad())?;
        return Ok(Value::Int8(u32::from_be_bytes(oid) as i64));
    };
    let mut at = 0usize;
    let mut word = |n: usize| -> Result<&[u8]> {
        let w = bytes.get(at..at + n).ok_or_else(bad)?;
        at += n;
        Ok(w)
    };
    let i32_of = |w: &[u8]| i32::from_be_bytes(w.try_into().expect("four bytes"));
    let ndim = i32_of(word(4)?);
    let _has_null = word(4)?;
    let _elem_oid = word(4)?;
    let count = match ndim {
        0 => 0,
        1 => {
            let n = i32_of(word(4)?);
            let _lower = word(4)?;
            usize::try_from(n).map_err(|_| bad())?
        }
        n if n < 0 => return Err(bad()),
        _ => {
            return Err(Error::FeatureNotSupported(
                "multidimensional array parameters are not supported".into(),
            ))
        }
    };
    let mut values = Vec::with_capacity(count.min(1024));
    for _ in 0..count {
        let len = i32_of(word(4)?);
        if len < 0 {
            values.push(Value::Null);
            continue;
        }
        let e = word(len as usize)?;
        values.push(match elem {
            ElemType::Oid => {
                Value::Int8(u32::from_be_bytes(e.try_into().map_err(|_| bad())?) as i64)
            }
            other => parse_binary(e, other.held_as())?,
        });
    }
    if at != bytes.len() {
        return Err(bad());
    }
    let text = crate::exec::relational::format_array(&values);
    crate::exec::relational::conform_catalog(Value::Text(text.into()), ty)
}

/// Numeric `recv`: rebuild the decimal text from base-10000 groups and parse it.
fn parse_numeric(b: &[u8]) -> Option<Decimal> {
    if b.len() < 8 {
        return None;
    }
    let rd = |i: usize| i16::from_be_bytes([b[i], b[i + 1]]);
    let ndigits = rd(0) as usize;
    let weight = rd(2) as i32;
    let sign = u16::from_be_bytes([b[4], b[5]]);
    let dscale = rd(6) as usize;
    if b.len() != 8 + 2 * ndigits || sign == 0xC000 {
        return None;
    }
    let groups: Vec<i16> = (0..ndigits).map(|i| rd(8 + 2 * i)).collect();
    let mut int_part = String::new();
    let mut frac_part = String::new();
    for (i, g) in groups.iter().enumerate() {
        let pos = weight - i as i32; // power of 10000 of this group
        let s = format!("{g:04}");
        if pos >= 0 {
            int_part.push_str(&s);
        } else {
            if frac_part.is_empty() {
                // Groups skipped between the point and the first fractional group are zero.
                frac_part.push_str(&"0000".repeat((-pos - 1) as usize));
            }
            frac_part.push_str(&s);
        }
    }
    // Integer groups omitted at the end (trailing zero groups) are zeros.
    let int_groups = groups.len().min((weight + 1).max(0) as usize);
    if weight >= 0 {
        int_part.push_str(&"0000".repeat((weight + 1) as usize - int_groups));
    }
    let int_part = int_part.trim_start_matches('0');
    let int_part = if int_part.is_empty() { "0" } else { int_part };
    frac_part.truncate(dscale);
    while frac_part.len() < dscale {
        frac_part.push('0');
    }
    let text = if dscale > 0 {
        format!("{int_part}.{frac_part}")
    } else {
        int_part.to_string()
    };
    let d: Decimal = text.parse().ok()?;
    Some(if sign == 0x4000 { -d } else { d })
}

/// Append the binary COPY header: signature, flags 0, no header extension.
pub(crate) fn binary_copy_header(buf: &mut BytesMut) {
    buf.put_slice(crate::engine::copy_binary::SIGNATURE);
    buf.put_i32(0);
    buf.put_i32(0);
}

/// Append one binary COPY tuple: the field count, then each field as in a DataRow.
pub(crate) fn binary_copy_tuple<R>(
    row: R,
    formats: &[FieldFormat],
    buf: &mut BytesMut,
    scratch: &mut String,
) where
    R: IntoIterator,
    R::Item: std::borrow::Borrow<Value>,
    R::IntoIter: ExactSizeIterator,
{
    let row = row.into_iter();
    buf.put_i16(row.len() as i16);
    for (i, v) in row.enumerate() {
        let format = formats.get(i).copied().unwrap_or(FieldFormat::Binary);
        put_field(v.borrow(), format, buf, scratch);
    }
}

/// Buffers [`copy_line`] reuses from row to row: one field's text, and the last timestamp
/// it formatted (the rows of one slide event share their wtime, so it is formatted once).
#[derive(Default)]
pub(crate) struct LineScratch {
    field: String,
    /// [`copy_block`]'s text of each column that is the same in every row.
    same: Vec<String>,
    ts: Option<Value>,
    ts_text: String,
    /// [`copy_run`]'s line and the wtime-like fields it rewrites.
    run: RunLine,
    /// [`copy_block`]'s line buffer.
    line: LineBuf,
    /// [`copy_block`]'s pieces of a line: each column's delimiter and text when it is the
    /// same in every row (or run), then the message head.
    pieces: Vec<Piece>,
}

/// One line of a run of equal rows (see [`copy_run`]): its text and, for each column
/// whose timestamp steps from row to row, the byte offset of its text in the line, the
/// timestamp it holds now and its step (microseconds).
#[derive(Default)]
struct RunLine {
    line: String,
    steps: Vec<(usize, i64, i64)>,
    text: String,
}

/// Append one COPY TO STDOUT line for `row` (text or CSV, with its trailing newline).
pub(crate) fn copy_line<R>(
    row: R,
    options: &CopyOptions,
    out: &mut String,
    scratch: &mut LineScratch,
) where
    R: IntoIterator,
    R::Item: std::borrow::Borrow<Value>,
    R::IntoIter: ExactSizeIterator,
{
    let row = row.into_iter();
    let field = FieldOptions::new(options, row.len());
    for (i, v) in row.enumerate() {
        if i > 0 {
            out.push(options.delimiter as char);
        }
        put_copy_field(v.borrow(), &field, out, scratch);
    }
    out.push('\n');
}

/// Append the COPY TO STDOUT lines (text or CSV) of every row of `block` to `out`, each
/// after `head` (the caller's room for a message header), and where each line ends in
/// `out` to `ends`. A column with one value for every row (window metadata) is formatted
/// once for the block, and the stored values of a run of equal rows once for the run.
pub(crate) fn copy_block(
    block: &RowBlock,
    options: &CopyOptions,
    head: &str,
    out: &mut String,
    ends: &mut Vec<usize>,
    scratch: &mut LineScratch,
) {
    let field = FieldOptions::new(options, block.width());
    let mut delimiter = [0u8; 4];
    let delimiter: &str = (options.delimiter as char).encode_utf8(&mut delimiter);
    // Each column's text when it is the same in every row (formatted once), or in every
    // row of a run (formatted once per run); and as a piece of the line, after its
    // delimiter.
    let mut same = std::mem::take(&mut scratch.same);
    let mut pieces = std::mem::take(&mut scratch.pieces);
    same.resize(block.width(), String::new());
    pieces.resize(block.width() + 1, Piece::default());
    let sep = |c: usize| if c > 0 { delimiter } else { "" };
    for (c, column) in block.columns().iter().enumerate() {
        same[c].clear();
        if let BlockColumn::Same(v) = column {
            copy_field(v, &field, &mut same[c], scratch);
            pieces[c].set(&[sep(c), &same[c]]);
        }
    }
    // The head, last.
    pieces[block.width()].set(&[head]);
    let mut line = std::mem::take(&mut scratch.line);
    if let Some(typed) = block.typed() {
        let lines = TypedLines {
            block,
            typed,
            pieces: &pieces,
            field: &field,
        };
        lines.write(&mut line, out, ends, scratch);
    }
    let mut r = 0;
    for (rows, stored) in block.runs() {
        let mut written = 0;
        if rows > 1 {
            for (c, column) in block.columns().iter().enumerate() {
                if let BlockColumn::Stored(k) = column {
                    same[c].clear();
                    copy_field(&stored[*k], &field, &mut same[c], scratch);
                    pieces[c].set(&[sep(c), &same[c]]);
                }
            }
            if field.plain_times {
                written = copy_run(block, r, rows, &same, head, &field, out, ends, scratch);
                r += written;
            }
        }
        for _ in written..rows {
            line.piece(&pieces[block.width()], out);
            for (c, column) in block.columns().iter().enumerate() {
                match column {
                    BlockColumn::Same(_) => line.piece(&pieces[c], out),
                    BlockColumn::Stored(_) if rows > 1 => line.piece(&pieces[c], out),
                    BlockColumn::Stored(k) => {
                        if c > 0 && options.delimiter.is_ascii() {
                            line.ascii(options.delimiter, out);
                        } else {
                            line.put(sep(c), out);
                        }
                        put_line_field(&stored[*k], &field, &mut line, out, scratch)
                    }
                    BlockColumn::Step { .. } => {
                        line.put(sep(c), out);
                        line.flush(out);
                        copy_field(&block.value(r, c), &field, out, scratch)
                    }
                }
            }
            line.ascii(b'\n', out);
            line.flush(out);
            ends.push(out.len());
            r += 1;
        }
    }
    scratch.same = same;
    scratch.pieces = pieces;
    scratch.line = line;
}

/// The lines of a typed block ([`RowBlock::typed`]): the pieces of [`copy_block`] (each
/// column's text when the same in every row, then the message head) and the options.
struct TypedLines<'a> {
    block: &'a RowBlock,
    typed: &'a [TypedColumn],
    pieces: &'a [Piece],
    field: &'a FieldOptions<'a>,
}

/// How [`TypedLines`] writes one column of every row, chosen once per block.
enum TypedField<'a> {
    /// The same text in every row, with its delimiter.
    Piece(&'a Piece),
    /// A [`TypedColumn::Text`] column.
    Text(&'a TypedColumn),
    /// Integers (`None`: NULL).
    Int(&'a [Option<i64>]),
    /// Averages as (sum, count) (count 0: NULL).
    Avg(&'a [(i64, u32)]),
    /// Any other column (by index), through the general path of its kind.
    Other(usize),
}

impl TypedLines<'_> {
    /// Append every row's line to `out` and its end to `ends`, through `line`.
    fn write(
        &self,
        line: &mut LineBuf,
        out: &mut String,
        ends: &mut Vec<usize>,
        scratch: &mut LineScratch,
    ) {
        let options = self.field.options;
        let width = self.block.width();
        let fields: Vec<TypedField<'_>> = (0..width)
            .map(|c| match &self.block.columns()[c] {
                BlockColumn::Same(_) => TypedField::Piece(&self.pieces[c]),
                BlockColumn::Stored(k) => match &self.typed[*k] {
                    col @ TypedColumn::Text { .. } => TypedField::Text(col),
                    TypedColumn::Int { vals, .. } if self.field.plain => TypedField::Int(vals),
                    TypedColumn::Avg(vals) if self.field.plain => TypedField::Avg(vals),
                    _ => TypedField::Other(c),
                },
                _ => TypedField::Other(c),
            })
            .collect();
        // Which fields write their delimiter (a piece holds it).
        let delimited: Vec<bool> = fields
            .iter()
            .map(|f| !matches!(f, TypedField::Piece(_)))
            .collect();
        // The most bytes a line adds, when every field is written into the line buffer
        // (and the delimiter is ASCII): a line that fits from an empty buffer needs no
        // room check per write.
        let advance = fields.iter().zip(&delimited).try_fold(
            self.pieces[width].text_len() + 1,
            |n, (f, &d)| {
                let field = match f {
                    TypedField::Piece(p) => p.text_len(),
                    TypedField::Text(_) => LineBuf::CHUNK,
                    TypedField::Int(_) => LineBuf::INT.max(LineBuf::CHUNK),
                    TypedField::Avg(_) => LineBuf::AVG.max(LineBuf::CHUNK),
                    TypedField::Other(_) => return None,
                };
                Some(n + field + usize::from(d))
            },
        );
        let unchecked = options.delimiter.is_ascii() && advance.is_some_and(|n| line.fits(n));
        if unchecked {
            self.rows::<false>(&fields, &delimited, line, out, ends, scratch)
        } else {
            self.rows::<true>(&fields, &delimited, line, out, ends, scratch)
        }
    }

    /// [`TypedLines::write`]'s lines of `fields`, each from an empty `line`; with `CHECK`
    /// false, the caller has made sure that a whole line fits the line buffer
    /// ([`LineBuf::fits`]), that the delimiter is ASCII and that no field is
    /// [`TypedField::Other`].
    fn rows<const CHECK: bool>(
        &self,
        fields: &[TypedField<'_>],
        delimited: &[bool],
        line: &mut LineBuf,
        out: &mut String,
        ends: &mut Vec<usize>,
        scratch: &mut LineScratch,
    ) {
        let options = self.field.options;
        let width = self.block.width();
        let ascii_delimiter = options.delimiter.is_ascii();
        for r in 0..self.block.len() {
            line.piece_in::<CHECK>(&self.pieces[width], out);
            for (c, f) in fields.iter().enumerate() {
                if c > 0 && delimited[c] {
                    if ascii_delimiter {
                        line.ascii_in::<CHECK>(options.delimiter, out);
                    } else {
                        self.delimiter(line, out);
                    }
                }
                match *f {
                    TypedField::Piece(p) => line.piece_in::<CHECK>(p, out),
                    TypedField::Text(col) => match col.text(r) {
                        Some(s) if self.field.plain_text(s) => line.put_in::<CHECK>(s, out),
                        _ => self.other(c, r, line, out, scratch),
                    },
                    TypedField::Int(vals) => match vals[r] {
                        Some(v) => line.put_i64_in::<CHECK>(v, out),
                        None => line.put_in::<CHECK>(&options.null, out),
                    },
                    TypedField::Avg(vals) => match vals[r] {
                        (_, 0) => line.put_in::<CHECK>(&options.null, out),
                        (sum, n) => line.put_avg_in::<CHECK>(sum, n, out),
                    },
                    TypedField::Other(c) => self.other(c, r, line, out, scratch),
                }
            }
            line.ascii_in::<CHECK>(b'\n', out);
            line.flush(out);
            ends.push(out.len());
        }
    }

    /// Append the delimiter (not ASCII).
    #[cold]
    fn delimiter(&self, line: &mut LineBuf, out: &mut String) {
        let mut delimiter = [0u8; 4];
        line.put(
            (self.field.options.delimiter as char).encode_utf8(&mut delimiter),
            out,
        );
    }

    /// Append row `r`'s field of column `c` (stored, or a step): text that needs no
    /// quoting or escaping into the line buffer, the rest as [`copy_field`] writes it.
    fn other(
        &self,
        c: usize,
        r: usize,
        line: &mut LineBuf,
        out: &mut String,
        scratch: &mut LineScratch,
    ) {
        let field = self.field;
        if let BlockColumn::Stored(k) = self.block.columns()[c] {
            match &self.typed[k] {
                col @ TypedColumn::Text { .. } => match col.text(r) {
                    Some(s) if field.plain_text(s) => return line.put(s, out),
                    Some(s) => {
                        line.flush(out);
                        return match field.options.format {
                            CopyFormat::Csv => csv_field(s, field.options, field.alone, out),
                            _ => text_field(s, field.options.delimiter, out),
                        };
                    }
                    None => return line.put(&field.options.null, out),
                },
                TypedColumn::Values { vals, .. } => {
                    return put_line_field(&vals[r], field, line, out, scratch)
                }
                _ => {}
            }
        }
        line.flush(out);
        copy_field(&self.block.value(r, c), field, out, scratch)
    }
}

/// [`put_copy_field`] through a [`LineBuf`]: integers, numerics and text that needs no quoting or escaping into the line buffer, the rest
/// (after flushing it) through [`copy_field`] into `out`.
#[inline]
fn put_line_field(
    v: &Value,
    field: &FieldOptions<'_>,
    line: &mut LineBuf,
    out: &mut String,
    scratch: &mut LineScratch,
) {
    match v {
        Value::Int8(i) if field.plain => line.put_i64(*i, out),
        Value::Int4(i) if field.plain => line.put_i64(i64::from(*i), out),
        Value::Int2(i) if field.plain => line.put_i64(i64::from(*i), out),
        Value::Numeric(d) if field.plain => line.put_numeric(d, out),
        Value::Text(s) if field.plain_text(s) => line.put(s, out),
        _ => {
            line.flush(out);
            copy_field(v, field, out, scratch)
        }
    }
}

/// Write rows `r0..r0 + rows` of `block`, one run of equal stored rows whose other columns'
/// texts are in `same`, for as long as each [`BlockColumn::Step`] column is a `timestamp`
/// whose text changes only its time of day from row to row
/// ([`crate::time::retime_same_day`]): the line is formatted once, and each row is a copy
/// of it with those bytes rewritten. Returns the rows written: the caller writes the rest
/// (all of them when the first line has no such column).
#[allow(clippy::too_many_arguments)]
fn copy_run(
    block: &RowBlock,
    r0: usize,
    rows: usize,
    same: &[String],
    head: &str,
    field: &FieldOptions<'_>,
    out: &mut String,
    ends: &mut Vec<usize>,
    scratch: &mut LineScratch,
) -> usize {
    let mut run = std::mem::take(&mut scratch.run);
    run.line.clear();
    run.steps.clear();
    run.line.push_str(head);
    for (c, column) in block.columns().iter().enumerate() {
        if c > 0 {
            run.line.push(field.options.delimiter as char);
        }
        match column {
            BlockColumn::Same(_) | BlockColumn::Stored(_) => run.line.push_str(&same[c]),
            BlockColumn::Step { step, .. } => {
                let v = block.value(r0, c);
                let pos = run.line.len();
                copy_field(&v, field, &mut run.line, scratch);
                match *v {
                    Value::Timestamp(us) if run.line.len() - pos == 19 => {
                        run.steps.push((pos, us, *step))
                    }
                    _ => run.steps.clear(),
                }
                if run.steps.is_empty() {
                    break;
                }
            }
        }
    }
    let mut written = 0;
    if !run.steps.is_empty() {
        run.line.push('\n');
        out.push_str(&run.line);
        ends.push(out.len());
        written = 1;
    }
    'rows: while written > 0 && written < rows {
        let RunLine { line, steps, text } = &mut run;
        for (pos, us, step) in steps.iter_mut() {
            let Some(next) = us.checked_add(*step) else {
                break 'rows;
            };
            text.clear();
            text.push_str(&line[*pos..*pos + 19]);
            if !crate::time::retime_same_day(text, *us, next) {
                break 'rows;
            }
            line.replace_range(*pos..*pos + 19, text);
            *us = next;
        }
        out.push_str(line);
        ends.push(out.len());
        written += 1;
    }
    scratch.run = run;
    written
}

/// True when numbers can go into a COPY line as they are: no text of theirs can need
/// quoting or escaping (the default delimiters, quote and NULL markers).
fn plain_numbers(options: &CopyOptions) -> bool {
    !b"0123456789+-.eEaINnfity".contains(&options.delimiter)
        && (options.format != CopyFormat::Csv
            || !b"0123456789+-.eEaINnfity".contains(&options.quote))
        && (options.null.is_empty() || options.null == "\\N")
}

/// True when timestamps can go into a COPY line as they are: none of the characters
/// their text can hold (`2001-01-01 00:10:00.5+05:30`, ` BC`, `-infinity`) is the
/// delimiter or the CSV quote, and the NULL marker is one no timestamp reads as.
fn plain_times(options: &CopyOptions) -> bool {
    const CHARS: &[u8] = b"0123456789-:.+ BCinfty";
    !CHARS.contains(&options.delimiter)
        && (options.format != CopyFormat::Csv || !CHARS.contains(&options.quote))
        && (options.null.is_empty() || options.null == "\\N")
}

/// How the fields of one COPY TO line are written.
struct FieldOptions<'a> {
    options: &'a CopyOptions,
    /// From [`plain_numbers`].
    plain: bool,
    /// From [`plain_times`].
    plain_times: bool,
    /// The line has one field: CSV quotes a `\.` that would stand alone on it.
    alone: bool,
    /// The bytes that make a text field need escaping (text format) or quoting (CSV):
    /// the delimiter, `other` (the backslash in text, the quote in CSV), and the control
    /// bytes below 14 whose bit is set in `controls`.
    other: u8,
    controls: u16,
}

impl<'a> FieldOptions<'a> {
    /// The options of a line of `width` fields.
    fn new(options: &'a CopyOptions, width: usize) -> FieldOptions<'a> {
        let csv = options.format == CopyFormat::Csv;
        // Text escapes backspace, tab, newline, vertical tab, form feed and carriage
        // return (8-13); CSV quotes newline and carriage return.
        let (other, controls) = if csv {
            (options.quote, 1 << b'\n' | 1 << b'\r')
        } else {
            (b'\\', 0b11_1111 << 8)
        };
        FieldOptions {
            options,
            plain: plain_numbers(options),
            plain_times: plain_times(options),
            alone: width == 1,
            other,
            controls,
        }
    }

    /// True when text `s` goes into the line as it is: none of its bytes needs escaping
    /// or quoting, and in CSV it is not a text that would read back as NULL or as the
    /// end-of-data marker (exactly when [`text_field`] and [`csv_field`] copy it).
    #[inline]
    fn plain_text(&self, s: &str) -> bool {
        let (d, o, m) = (self.options.delimiter, self.other, self.controls);
        if s.bytes()
            .any(|b| b == d || b == o || (b < 14 && m >> b & 1 != 0))
        {
            return false;
        }
        let o = self.options;
        o.format != CopyFormat::Csv
            || !(s.is_empty() && o.null.is_empty() || s == o.null || self.alone && s == "\\.")
    }
}

/// Append one field of a COPY line: integers, numerics and text that need no quoting or
/// escaping straight into `out` (no dispatch through the general formatter), the rest
/// through [`copy_field`].
#[inline]
fn put_copy_field(
    v: &Value,
    field: &FieldOptions<'_>,
    out: &mut String,
    scratch: &mut LineScratch,
) {
    match v {
        Value::Int8(i) if field.plain => out.push_str(itoa::Buffer::new().format(*i)),
        Value::Int4(i) if field.plain => out.push_str(itoa::Buffer::new().format(*i)),
        Value::Int2(i) if field.plain => out.push_str(itoa::Buffer::new().format(*i)),
        Value::Numeric(d) if field.plain => crate::types::push_numeric(d, out),
        Value::Text(s) if field.plain_text(s) => out.push_str(s),
        _ => copy_field(v, field, out, scratch),
    }
}

/// Append one field of a COPY line.
fn copy_field(v: &Value, field: &FieldOptions<'_>, out: &mut String, scratch: &mut LineScratch) {
    let (options, plain) = (field.options, field.plain);
    let text = match v {
        Value::Null => {
            out.push_str(&options.null);
            return;
        }
        Value::Int2(_)
        | Value::Int4(_)
        | Value::Int8(_)
        | Value::Float4(_)
        | Value::Float8(_)
        | Value::Numeric(_)
        | Value::WideNumeric(_)
            if plain =>
        {
            format_text(v, out);
            return;
        }
        Value::Timestamp(_) | Value::TimestampTz(_) => {
            if scratch.ts.as_ref() != Some(v) {
                let same_day = match (v, &scratch.ts) {
                    (Value::Timestamp(us), Some(Value::Timestamp(prev))) => {
                        crate::time::retime_same_day(&mut scratch.ts_text, *prev, *us)
                    }
                    _ => false,
                };
                if !same_day {
                    scratch.ts_text.clear();
                    format_text(v, &mut scratch.ts_text);
                }
                scratch.ts = Some(v.clone());
            }
            if field.plain_times {
                out.push_str(&scratch.ts_text);
                return;
            }
            &scratch.ts_text
        }
        // Text needs no formatting: it is checked for quoting or escaping in place.
        Value::Text(s) => s.as_str(),
        _ => {
            scratch.field.clear();
            format_text(v, &mut scratch.field);
            &scratch.field
        }
    };
    match options.format {
        CopyFormat::Csv => csv_field(text, options, field.alone, out),
        _ => text_field(text, options.delimiter, out),
    }
}

/// COPY text format: backslash-escape backslash, newline, carriage return, tab, backspace,
/// form feed, vertical tab and the delimiter, as PostgreSQL's COPY TO does.
fn text_field(s: &str, delimiter: u8, out: &mut String) {
    if !s
        .bytes()
        .any(|b| matches!(b, b'\\' | b'\n' | b'\r' | b'\t' | 8 | 11 | 12) || b == delimiter)
    {
        out.push_str(s);
        return;
    }
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if c as u32 == delimiter as u32 => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
}

/// COPY CSV format: quote a field that contains the delimiter, quote, CR/LF, or that equals
/// the NULL marker (so an empty string is not read back as NULL); `alone`: the field is
/// the line's only one, where an unquoted `\.` would read as the end-of-data marker
/// (PostgreSQL quotes it there and only there).
fn csv_field(s: &str, options: &CopyOptions, alone: bool, out: &mut String) {
    let quote = options.quote as char;
    let escape = options.escape as char;
    let needs = s.is_empty() && options.null.is_empty()
        || s == options.null
        || alone && s == "\\."
        || s.bytes()
            .any(|b| b == options.quote || b == b'\n' || b == b'\r' || b == options.delimiter);
    if !needs {
        out.push_str(s);
        return;
    }
    out.push(quote);
    for c in s.chars() {
        if c == quote || c == escape {
            out.push(escape);
        }
        out.push(c);
    }
    out.push(quote);
}

/// The CSV/text header line naming the columns.
pub(crate) fn copy_header(names: &[&str], options: &CopyOptions, out: &mut String) {
    let row: Vec<Value> = names.iter().map(|n| Value::Text((*n).into())).collect();
    copy_line(&row, options, out, &mut LineScratch::default());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bin(v: &Value) -> Vec<u8> {
        let mut b = BytesMut::new();
        put_binary(v, &mut b);
        b.to_vec()
    }

    #[test]
    fn numeric_binary_round_trips() {
        for s in [
            "0",
            "1",
            "-1",
            "12345.678",
            "0.0001",
            "10000",
            "-0.5",
            "123456789.000100",
            "0.00",
        ] {
            let d: Decimal = s.parse().unwrap();
            let b = bin(&Value::Numeric(d));
            let back = parse_numeric(&b).unwrap();
            assert_eq!(back.to_string(), d.to_string(), "{s}");
        }
    }

    #[test]
    fn numeric_binary_matches_postgres_bytes() {
        // SELECT numeric_send(12345.678): ndigits 3, weight 1, sign 0, dscale 3, 1 2345 6780.
        let b = bin(&Value::Numeric("12345.678".parse().unwrap()));
        assert_eq!(
            b,
            vec![0, 3, 0, 1, 0, 0, 0, 3, 0, 1, 0x09, 0x29, 0x1A, 0x7C]
        );
    }

    #[test]
    fn timestamp_binary_is_relative_to_2000() {
        assert_eq!(bin(&Value::Timestamp(PG_EPOCH_OFFSET_US)), vec![0; 8]);
        let v = parse_binary(&[0; 8], DataType::TimestampTz).unwrap();
        assert_eq!(v, Value::TimestampTz(PG_EPOCH_OFFSET_US));
    }

    fn catalog_bin(text: &str, ty: CatalogType) -> Vec<u8> {
        let mut b = BytesMut::new();
        let v = match ty {
            CatalogType::Oid => Value::Int8(text.parse().unwrap()),
            _ => Value::Text(text.into()),
        };
        put_field(&v, FieldFormat::BinaryAs(ty), &mut b, &mut String::new());
        b[4..].to_vec()
    }

    #[test]
    fn catalog_types_have_postgres_binary_forms() {
        // oid_send: four unsigned bytes.
        assert_eq!(catalog_bin("4294967295", CatalogType::Oid), vec![0xff; 4]);
        // array_send of '{1,NULL}'::int2[]: ndim 1, has-null 1, element oid 21, length 2,
        // lower bound 1, then 1 as two bytes and NULL as length -1.
        let mut want = vec![0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 21, 0, 0, 0, 2, 0, 0, 0, 1];
        want.extend([0, 0, 0, 2, 0, 1, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(
            catalog_bin("{1,NULL}", CatalogType::Array(ElemType::Int2)),
            want
        );
        // int2vector '3 2': lower bound 0, as int2vectorsend sends it.
        let mut want = vec![0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 21, 0, 0, 0, 2, 0, 0, 0, 0];
        want.extend([0, 0, 0, 2, 0, 3, 0, 0, 0, 2, 0, 2]);
        assert_eq!(catalog_bin("3 2", CatalogType::Int2Vector), want);
        // The empty text[]: no dimensions.
        assert_eq!(
            catalog_bin("{}", CatalogType::Array(ElemType::Text)),
            vec![0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 25]
        );
        // name_send: the text's bytes.
        assert_eq!(catalog_bin("public", CatalogType::Name), b"public".to_vec());
        // record_send of (1,,"a ""b"""): three fields, each text (25), the empty one NULL.
        let mut want = vec![0, 0, 0, 3];
        want.extend([0, 0, 0, 25, 0, 0, 0, 1, b'1']);
        want.extend([0, 0, 0, 25, 0xff, 0xff, 0xff, 0xff]);
        want.extend([0, 0, 0, 25, 0, 0, 0, 5]);
        want.extend(b"a \"b\"");
        assert_eq!(catalog_bin(r#"(1,,"a ""b""")"#, CatalogType::Record), want);
        // The empty string is quoted, so it is a field and not NULL.
        let mut want = vec![0, 0, 0, 1];
        want.extend([0, 0, 0, 25, 0, 0, 0, 0]);
        assert_eq!(catalog_bin(r#"("")"#, CatalogType::Record), want);
    }

    #[test]
    fn catalog_parameters_decode_in_both_formats() {
        let oids = CatalogType::Array(ElemType::Oid);
        let bytes = catalog_bin("{25,23}", oids);
        assert_eq!(
            parse_catalog(&bytes, oids, true).unwrap(),
            Value::Text("{25,23}".into())
        );
        assert_eq!(
            parse_catalog(b"{ 25 , 23 }", oids, false).unwrap(),
            Value::Text("{25,23}".into())
        );
        assert_eq!(
            parse_catalog(&[0, 0, 0, 26], CatalogType::Oid, true).unwrap(),
            Value::Int8(26)
        );
        assert_eq!(
            parse_catalog(b"-1", CatalogType::Oid, false).unwrap(),
            Value::Int8(4_294_967_295)
        );
        // Truncated or trailing bytes are 22P03, never a panic.
        for bad in [
            &bytes[..bytes.len() - 1],
            &[bytes.as_slice(), &[0]].concat(),
        ] {
            let e = parse_catalog(bad, oids, true).unwrap_err();
            assert!(matches!(e, Error::InvalidBinaryRepresentation(_)), "{e:?}");
        }
        // A negative dimension count or element count is malformed; two dimensions are
        // not supported.
        let mut neg_len = bytes.clone();
        neg_len[12..16].copy_from_slice(&(-2i32).to_be_bytes());
        for (bad, code) in [
            ([&[0xff, 0xff, 0xff, 0xff], &bytes[4..]].concat(), "22P03"),
            (neg_len, "22P03"),
            ([&[0, 0, 0, 2], &bytes[4..]].concat(), "0A000"),
        ] {
            let e = parse_catalog(&bad, oids, true).unwrap_err();
            assert_eq!(crate::server::sqlstate(&e), code, "{e:?}");
        }
        assert!(parse_catalog(&[0, 0, 1], CatalogType::Oid, true).is_err());
        assert!(parse_catalog(b"4294967296", CatalogType::Oid, false).is_err());
    }

    /// The option sets the fast paths must agree with the general one under: the defaults
    /// of both formats, delimiters and quotes a number's or text's bytes can hold, and
    /// NULL markers that a value's text equals.
    fn option_sets() -> Vec<CopyOptions> {
        let mut sets = Vec::new();
        for format in [CopyFormat::Text, CopyFormat::Csv] {
            let d = CopyOptions::defaults(format);
            sets.push(d.clone());
            for delimiter in [b'.', b'-', b'1', b'a', b'|', b'\\'] {
                sets.push(CopyOptions {
                    delimiter,
                    ..d.clone()
                });
            }
            for null in ["", "-7", "abc", "\\N", "NULL"] {
                sets.push(CopyOptions {
                    null: null.into(),
                    ..d.clone()
                });
            }
            if format == CopyFormat::Csv {
                for quote in [b'\'', b'a', b'5'] {
                    sets.push(CopyOptions { quote, ..d.clone() });
                }
            }
        }
        sets
    }

    #[test]
    fn fast_fields_write_what_the_general_path_writes() {
        let day = 978_307_200_000_000i64;
        let mut values = vec![
            Value::Null,
            Value::Int2(i16::MIN),
            Value::Int2(-7),
            Value::Int4(0),
            Value::Int4(-7),
            Value::Int4(i32::MAX),
            Value::Int8(i64::MIN),
            Value::Int8(i64::MAX),
            Value::Int8(1234567),
            Value::Timestamp(day),
            Value::Timestamp(day - 1),
            Value::Timestamp(day + 500_000),
            Value::TimestampTz(day - 1),
            Value::Timestamp(i64::MIN),
        ];
        for d in [
            "0",
            "-0.5",
            "0.05",
            "12.50",
            "-12.3333333333333333",
            "0.0000000000000001",
            "79228162514264337593543950335",
            "-7922816251426433759354.3950335",
        ] {
            values.push(Value::Numeric(d.parse().unwrap()));
        }
        for t in [
            "", "abc", "a,b", "a\tb", "x\"y", "\\.", "\\", "-7", "NULL", "\\N", "a\u{b}b", "1.5",
            "\r\n", "é|ü",
        ] {
            values.push(Value::Text(t.into()));
        }
        for options in option_sets() {
            for alone in [1, 3] {
                let field = FieldOptions::new(&options, alone);
                for v in &values {
                    let (mut fast, mut general) = (String::from("x"), String::from("x"));
                    put_copy_field(v, &field, &mut fast, &mut LineScratch::default());
                    copy_field(v, &field, &mut general, &mut LineScratch::default());
                    assert_eq!(fast, general, "{v:?} under {options:?}, width {alone}");
                }
            }
        }
    }

    #[test]
    fn fast_fields_print_postgres_text() {
        let opts = CopyOptions::defaults(CopyFormat::Csv);
        let mut out = String::new();
        let row = [
            Value::Int8(i64::MIN),
            Value::Int2(-7),
            Value::Numeric("-0.0500".parse().unwrap()),
            Value::Numeric("12.3333333333333333".parse().unwrap()),
            Value::Text("ATL".into()),
            Value::Text("".into()),
            Value::Null,
        ];
        copy_line(&row, &opts, &mut out, &mut LineScratch::default());
        assert_eq!(
            out,
            "-9223372036854775808,-7,-0.0500,12.3333333333333333,ATL,\"\",\n"
        );
        let text = CopyOptions::defaults(CopyFormat::Text);
        out.clear();
        copy_line(&row, &text, &mut out, &mut LineScratch::default());
        assert_eq!(
            out,
            "-9223372036854775808\t-7\t-0.0500\t12.3333333333333333\tATL\t\t\\N\n"
        );
    }

    #[test]
    fn copy_text_escapes() {
        let opts = CopyOptions::defaults(CopyFormat::Text);
        let mut out = String::new();
        let row = vec![
            Value::Text("a\tb\\c\nd".into()),
            Value::Null,
            Value::Int4(3),
        ];
        copy_line(&row, &opts, &mut out, &mut LineScratch::default());
        assert_eq!(out, "a\\tb\\\\c\\nd\t\\N\t3\n");
    }

    /// Regression: a field whose only special byte was a vertical tab went out raw, while
    /// the same character beside another special one was escaped; PostgreSQL writes `\v`.
    #[test]
    fn copy_text_escapes_a_lone_vertical_tab() {
        let opts = CopyOptions::defaults(CopyFormat::Text);
        let mut out = String::new();
        let row = vec![
            Value::Text("vt\u{b}x".into()),
            Value::Text("\u{8}\u{c}".into()),
        ];
        copy_line(&row, &opts, &mut out, &mut LineScratch::default());
        assert_eq!(out, "vt\\vx\t\\b\\f\n");
    }

    /// CSV quotes `\.` only where it would stand alone on a line and read as the end of
    /// the data, as PostgreSQL does; beside another field it is plain text. It was quoted
    /// everywhere, so CSV output differed from PostgreSQL's byte for byte.
    #[test]
    fn copy_csv_quotes_end_of_data_marker_only_alone() {
        let opts = CopyOptions::defaults(CopyFormat::Csv);
        let mut out = String::new();
        let dot = Value::Text("\\.".into());
        copy_line([&dot], &opts, &mut out, &mut LineScratch::default());
        copy_line(
            [&dot, &Value::Int4(1)],
            &opts,
            &mut out,
            &mut LineScratch::default(),
        );
        assert_eq!(out, "\"\\.\"\n\\.,1\n");
    }

    #[test]
    fn copy_csv_quotes() {
        let opts = CopyOptions::defaults(CopyFormat::Csv);
        let mut out = String::new();
        let row = vec![
            Value::Text("a,b".into()),
            Value::Null,
            Value::Text("".into()),
            Value::Text("x\"y".into()),
        ];
        copy_line(&row, &opts, &mut out, &mut LineScratch::default());
        assert_eq!(out, "\"a,b\",,\"\",\"x\"\"y\"\n");
    }

    #[test]
    fn numbers_are_quoted_or_escaped_only_where_their_text_needs_it() {
        let row = vec![
            Value::Int4(-7),
            Value::Float8(1.5e20),
            Value::Numeric("12.50".parse().unwrap()),
            Value::Float4(f32::NAN),
        ];
        let line = |opts: &CopyOptions| {
            let mut out = String::new();
            copy_line(&row, opts, &mut out, &mut LineScratch::default());
            out
        };
        let csv = CopyOptions::defaults(CopyFormat::Csv);
        assert_eq!(line(&csv), "-7,1.5e+20,12.50,NaN\n");
        let text = CopyOptions::defaults(CopyFormat::Text);
        assert_eq!(line(&text), "-7\t1.5e+20\t12.50\tNaN\n");
        // A delimiter, quote or NULL marker that a number's text can contain.
        let dot = CopyOptions {
            delimiter: b'.',
            ..CopyOptions::defaults(CopyFormat::Csv)
        };
        assert_eq!(line(&dot), "-7.\"1.5e+20\".\"12.50\".NaN\n");
        let dot_text = CopyOptions {
            delimiter: b'.',
            ..CopyOptions::defaults(CopyFormat::Text)
        };
        assert_eq!(line(&dot_text), "-7.1\\.5e+20.12\\.50.NaN\n");
        let null_7 = CopyOptions {
            null: "-7".into(),
            ..CopyOptions::defaults(CopyFormat::Csv)
        };
        assert_eq!(line(&null_7), "\"-7\",1.5e+20,12.50,NaN\n");
    }

    #[test]
    fn timestamps_are_quoted_or_escaped_only_when_their_characters_ask_for_it() {
        let t = Value::Timestamp(978_307_800_000_000);
        let line = |opts: &CopyOptions| {
            let mut out = String::new();
            copy_line(
                &[t.clone(), Value::Int8(1)],
                opts,
                &mut out,
                &mut Default::default(),
            );
            out
        };
        let mut csv = CopyOptions::defaults(CopyFormat::Csv);
        assert_eq!(line(&csv), "2001-01-01 00:10:00,1\n");
        csv.delimiter = b':';
        assert_eq!(line(&csv), "\"2001-01-01 00:10:00\":1\n");
        csv.delimiter = b' ';
        assert_eq!(line(&csv), "\"2001-01-01 00:10:00\" 1\n");
        let mut csv = CopyOptions::defaults(CopyFormat::Csv);
        csv.null = "2001-01-01 00:10:00".into();
        assert_eq!(line(&csv), "\"2001-01-01 00:10:00\",1\n");
        let mut text = CopyOptions::defaults(CopyFormat::Text);
        assert_eq!(line(&text), "2001-01-01 00:10:00\t1\n");
        text.delimiter = b'-';
        assert_eq!(line(&text), "2001\\-01\\-01 00:10:00-1\n");
    }

    #[test]
    fn copy_lines_reuse_a_timestamp_only_when_it_is_the_same_value() {
        let opts = CopyOptions::defaults(CopyFormat::Csv);
        let (mut out, mut scratch) = (String::new(), LineScratch::default());
        let t = 978_307_800_000_000;
        for row in [
            vec![Value::Timestamp(t), Value::Int8(1)],
            vec![Value::Timestamp(t), Value::Int8(2)],
            vec![Value::TimestampTz(t), Value::Timestamp(t + 600_000_000)],
        ] {
            copy_line(&row, &opts, &mut out, &mut scratch);
        }
        assert_eq!(
            out,
            "2001-01-01 00:10:00,1\n2001-01-01 00:10:00,2\n2001-01-01 00:10:00+00,2001-01-01 00:20:00\n"
        );
    }

    #[test]
    fn a_block_of_steps_and_runs_writes_the_lines_of_its_rows() {
        // One-row slide events a second apart: the wtime becomes a step, equal counts
        // and maxima a run; a CSV text that needs quoting goes through both paths.
        let mut b = RowBlock::new(3);
        let events = [
            (1, "a"),
            (1, "a"),
            (1, "a"),
            (2, "b,c"),
            (2, "b,c"),
            (3, "a"),
        ];
        for (s, (n, m)) in events.iter().enumerate() {
            let wtime = Value::Timestamp(978_307_800_000_000 + s as i64 * 1_000_000);
            b.set_same_rows(1, |c| (c == 0).then(|| wtime.clone()));
            b.push_value(Value::Int8(*n));
            b.push_value(Value::Text((*m).into()));
            b.rows_appended(1);
        }
        assert!(b.runs().count() < b.len(), "runs were kept");
        for opts in [
            CopyOptions::defaults(CopyFormat::Csv),
            CopyOptions::defaults(CopyFormat::Text),
        ] {
            let out = block_as_its_rows_lines(&b, &opts, "");
            assert!(
                out.starts_with("2001-01-01 00:10:00,1,a\n")
                    || out.starts_with("2001-01-01 00:10:00\t1\ta\n")
            );
            assert_eq!(out.lines().count(), 6);
        }
    }

    /// Blocks whose stored columns hold every kind of field (integers at their limits,
    /// numerics narrow and wide, NULL, texts short, long and needing quoting or escaping,
    /// timestamps) write, under every option set, the lines `copy_line` writes for their
    /// rows: the line buffer's path and its fallbacks agree with the general one.
    #[test]
    fn block_lines_through_the_line_buffer_match_the_general_path() {
        let long = "x".repeat(40);
        let wide = "x".repeat(300);
        let fields: Vec<Value> = vec![
            Value::Int8(i64::MIN),
            Value::Int4(-7),
            Value::Int2(i16::MAX),
            Value::Numeric("-12.3333333333333333".parse().unwrap()),
            Value::Numeric("0.0000000000000000000000000001".parse().unwrap()),
            Value::Numeric("79228162514264337593543950335".parse().unwrap()),
            Value::Null,
            Value::Text("ATL".into()),
            Value::Text("".into()),
            Value::Text("a,b\tc\"d".into()),
            Value::Text(long.as_str().into()),
            Value::Text(wide.as_str().into()),
            Value::Timestamp(978_307_800_000_000),
            Value::Float8(1.5),
        ];
        for options in option_sets() {
            for (width, events) in [(1, 1), (1, 3), (3, 1), (3, 3), (5, 3)] {
                let mut b = RowBlock::new(width + 1);
                // Events of several rows sharing their wtime (one text for the block,
                // stored from the second event on); every field appears in each column.
                for e in 0..events {
                    let wtime = Value::Timestamp(978_307_800_000_000 + e as i64 * 600_000_000);
                    b.set_same_rows(fields.len(), |c| (c == 0).then(|| wtime.clone()));
                    for r in 0..fields.len() {
                        if b.is_stored(0) {
                            b.push_value(wtime.clone());
                        }
                        for c in 0..width {
                            b.push_value(fields[(r + c * 5 + e) % fields.len()].clone());
                        }
                    }
                    b.rows_appended(fields.len());
                }
                block_as_its_rows_lines(&b, &options, "d\0\0\0\0");
            }
        }
    }

    /// Typed blocks (text keys plain, needing quoting or escaping, long, NULL; integers of
    /// each type at their limits and NULL; averages of integers, NULL among them; a column
    /// of numerics and timestamps; a column whose kind changes midway) write, under every
    /// option set, the lines `copy_line` writes for their rows, and hold the rows the
    /// untyped block given the same values holds.
    #[test]
    fn typed_block_lines_match_the_general_path() {
        use crate::exec::typed::IntType;
        let long = "y".repeat(300);
        let texts = ["ATL", "", "a,b\tc\"d", "\\.", "NULL", long.as_str()];
        let avgs: [(i128, i64); 6] = [
            (7, 3),
            (-2, 3),
            (i64::MAX as i128, 1),
            (i64::MIN as i128, u32::MAX as i64),
            (0, 9),
            (1 << 70, 3),
        ];
        let ints = [
            (IntType::Int8, i64::MIN),
            (IntType::Int8, 1234),
            (IntType::Int8, i64::MAX),
        ];
        let other = [
            Value::Numeric("-12.50".parse().unwrap()),
            Value::Timestamp(978_307_800_000_000),
            Value::Null,
        ];
        let wtime = Value::Timestamp(978_307_800_000_000);
        for rows in [1usize, 7, 40] {
            let mut typed = RowBlock::new(6);
            let same = |c: usize| (c == 1).then(|| wtime.clone());
            typed.set_same_rows(rows, same);
            typed.begin_typed(rows);
            let mut plain = RowBlock::new(6);
            plain.set_same_rows(rows, same);
            for r in 0..rows {
                let mut row = vec![Value::Null, wtime.clone()];
                // Text: NULL every fifth row.
                let t = texts[r % texts.len()];
                if r % 5 == 4 {
                    typed.typed_column(0).push_general(Value::Null);
                } else {
                    typed.typed_column(0).push_text(t);
                    row[0] = Value::Text(t.into());
                }
                // Integers, NULL every third row; past row 20 an int4 (the column then
                // holds any value).
                let (ty, i) = ints[r % ints.len()];
                let v = match r {
                    _ if r % 3 == 2 => Value::Null,
                    21.. => Value::Int4(i as i32),
                    _ => Value::Int8(i),
                };
                match (&v, r) {
                    (Value::Int8(i), _) => typed.typed_column(1).push_int(ty, *i),
                    _ => typed.typed_column(1).push_ref(&v),
                }
                row.push(v);
                // Averages, NULL every fourth row (the first row included).
                let (sum, n) = avgs[r % avgs.len()];
                if r % 4 == 0 {
                    typed.typed_column(2).push_general(Value::Null);
                    row.push(Value::Null);
                } else {
                    typed.typed_column(2).push_avg(sum, n).unwrap();
                    row.push(crate::agg::int_avg(sum, n).unwrap());
                }
                let o = other[r % other.len()].clone();
                typed.typed_column(3).push_ref(&o);
                row.push(o);
                let c = Value::Int2(r as i16 - 3);
                typed.typed_column(4).push_ref(&c);
                row.push(c);
                for (c, v) in row.into_iter().enumerate() {
                    if plain.is_stored(c) {
                        plain.push_value(v);
                    }
                }
            }
            typed.typed_rows_appended(rows);
            plain.rows_appended(rows);
            assert!(typed.typed().is_some());
            assert_eq!(typed.clone().into_rows(), plain.clone().into_rows());
            for options in option_sets() {
                let a = block_as_its_rows_lines(&typed, &options, "d\0\0\0\0");
                let b = block_as_its_rows_lines(&plain, &options, "d\0\0\0\0");
                assert_eq!(a, b);
            }
            // LIMIT keeps the first rows of a typed block too.
            let mut cut = typed.clone();
            cut.truncate(rows / 2);
            assert_eq!(cut.len(), rows / 2);
            assert_eq!(
                cut.into_rows(),
                plain.clone().into_rows()[..rows / 2].to_vec()
            );
        }
    }

    /// Typed blocks of keys, counts and averages only (the shape whose lines are written
    /// without a room check per field when a whole line fits the line buffer): one that
    /// fits, and one too wide to (several averages), with short, long, quoted and NULL
    /// keys and extreme values, write under every option set what `copy_line` writes.
    #[test]
    fn typed_lines_with_and_without_room_checks_match_the_general_path() {
        use crate::exec::typed::IntType;
        let long = "k".repeat(300);
        let texts = ["ATL", "", "a,b\tc", "\\.", "NULL", long.as_str(), "ORD"];
        let avgs: [(i128, i64); 5] = [
            (7, 3),
            (-2, 3),
            (i64::MAX as i128, 1),
            (i64::MIN as i128, u32::MAX as i64),
            (123_456_789, 1_000),
        ];
        let ints = [i64::MIN, -5, 0, 1234, i64::MAX];
        let wtime = Value::Timestamp(978_307_800_000_000);
        // (averages, integers) per block: Q1's shape, then one too wide to fit.
        for (navg, nint) in [(1usize, 2usize), (5, 3)] {
            let width = 2 + navg + nint;
            let mut typed = RowBlock::new(width);
            let same = |c: usize| (c == 1).then(|| wtime.clone());
            typed.set_same_rows(30, same);
            typed.begin_typed(30);
            let mut plain = RowBlock::new(width);
            plain.set_same_rows(30, same);
            for r in 0..30 {
                let mut row = vec![Value::Null, wtime.clone()];
                let t = texts[r % texts.len()];
                if r % 6 == 5 {
                    typed.typed_column(0).push_general(Value::Null);
                } else {
                    typed.typed_column(0).push_text(t);
                    row[0] = Value::Text(t.into());
                }
                for a in 0..navg {
                    let (sum, n) = avgs[(r + a) % avgs.len()];
                    if (r + a) % 7 == 3 {
                        typed.typed_column(1 + a).push_general(Value::Null);
                        row.push(Value::Null);
                    } else {
                        typed.typed_column(1 + a).push_avg(sum, n).unwrap();
                        row.push(crate::agg::int_avg(sum, n).unwrap());
                    }
                }
                for i in 0..nint {
                    let v = ints[(r + i) % ints.len()];
                    let col = typed.typed_column(1 + navg + i);
                    if (r + i) % 4 == 1 {
                        col.push_general(Value::Null);
                        row.push(Value::Null);
                    } else {
                        col.push_int(IntType::Int8, v);
                        row.push(Value::Int8(v));
                    }
                }
                for (c, v) in row.into_iter().enumerate() {
                    if plain.is_stored(c) {
                        plain.push_value(v);
                    }
                }
            }
            typed.typed_rows_appended(30);
            plain.rows_appended(30);
            assert!(typed.typed().is_some());
            for options in option_sets() {
                let a = block_as_its_rows_lines(&typed, &options, "d\0\0\0\0");
                let b = block_as_its_rows_lines(&plain, &options, "d\0\0\0\0");
                assert_eq!(a, b);
            }
        }
    }

    /// `copy_block` of `b`, asserted equal (text and line ends) to `copy_line` of each of
    /// its rows after `prefix`; the text.
    fn block_as_its_rows_lines(b: &RowBlock, opts: &CopyOptions, prefix: &str) -> String {
        let (mut out, mut ends) = (String::new(), Vec::new());
        copy_block(
            b,
            opts,
            prefix,
            &mut out,
            &mut ends,
            &mut LineScratch::default(),
        );
        let (mut want, mut want_ends) = (String::new(), Vec::new());
        for row in b.clone().into_rows() {
            want.push_str(prefix);
            copy_line(&row, opts, &mut want, &mut LineScratch::default());
            want_ends.push(want.len());
        }
        assert_eq!(out, want);
        assert_eq!(ends, want_ends);
        out
    }

    #[test]
    fn a_run_line_is_rewritten_per_row_and_rebuilt_across_midnight() {
        // wtime and wstart stepping by a second across midnight, then by half a second
        // (no whole-second text to rewrite): every row as copy_line writes it.
        let day = 978_307_200_000_000i64 + 86_400_000_000;
        for (first, step) in [(day - 3_000_000, 1_000_000), (day - 1_000_000, 500_000)] {
            let mut b = RowBlock::new(4);
            b.push_row([
                Value::Timestamp(first),
                Value::Int8(7),
                Value::Timestamp(first - 60_000_000),
                Value::Text("a\tb".into()),
            ]);
            assert!(b.repeat_last(6, |c| if c == 0 || c == 2 { step } else { 0 }));
            for opts in [
                CopyOptions::defaults(CopyFormat::Csv),
                CopyOptions::defaults(CopyFormat::Text),
            ] {
                assert_eq!(block_as_its_rows_lines(&b, &opts, "h").lines().count(), 7);
            }
        }
    }
}
