//! COPY's fast path: complete lines free of quotes, backslashes and NULs (most real data),
//! parsed into columns in one pass over their bytes.
//!
//! [`parse_plain`] reads each field where it starts, by a reader chosen once per column
//! from its type, and appends it straight to its column: integers and timestamps are read
//! and their end checked in the same pass, a text field's end is found eight bytes at a
//! time ([`next_structural`]). Anything the fast readers do not
//! accept goes to the general per-type parser; any record the general COPY path would
//! refuse makes [`parse_plain`] give up, and the caller parses again on the path that
//! reports it.

use super::copy_fields::{
    append_field, fast_float, fast_int, fast_timestamp_with, CopyRel, DateCache,
};
use crate::exec::columns::{ColumnBatch, ColumnBatchBuilder};
use crate::types::DataType;

/// What [`parse_plain`] needs of a COPY: where fields go and the text format's markers.
pub(super) struct PlainCtx<'a> {
    pub(crate) rel: &'a CopyRel,
    /// Field `i` of a record goes to column `targets[i]`.
    pub(crate) targets: &'a [usize],
    /// Columns no field fills (NULL).
    pub(crate) untargeted: &'a [usize],
    pub(crate) delimiter: u8,
    /// The NULL marker.
    pub(crate) null: &'a [u8],
    /// Longest record accepted, bytes (`copy_line_bytes_max`).
    pub(crate) line_max: usize,
    /// The data's lines end with CRLF (each must); else with LF, and the text holds no CR.
    pub(crate) crlf: bool,
    /// CSV's quote character (`None` for the text format), which the plain lines lack.
    pub(crate) quote: Option<u8>,
}

/// Rows [`parse_plain`] parsed: full batches, the unfinished one, and the line count.
pub(super) struct PlainRows {
    pub(crate) batches: Vec<ColumnBatch>,
    pub(crate) builder: ColumnBatchBuilder,
    pub(crate) lines: u64,
}

/// How [`parse_plain`] reads the fields of one column, chosen from its type once.
#[derive(Clone, Copy)]
enum Reader {
    /// text and varchar: the bytes as they stand.
    Text,
    /// varchar(n): the bytes when at most n of them (at most n characters), else general.
    Varchar(usize),
    /// smallint, integer, bigint: canonical digits.
    Int(DataType),
    /// timestamp: `YYYY-MM-DD HH:MM:SS[.ffffff]`.
    Timestamp,
    /// real, double precision: plain decimals.
    Float(DataType),
    /// numeric(p, s): the general parser, then rounded to the scale and its size checked.
    Typmod(crate::types::Typmod),
    /// Every other type: the general parser.
    General,
}

impl Reader {
    fn of(ty: DataType) -> Reader {
        match ty {
            DataType::Text | DataType::Varchar(None) => Reader::Text,
            DataType::Varchar(Some(n)) => Reader::Varchar(n as usize),
            DataType::Int2 | DataType::Int4 | DataType::Int8 => Reader::Int(ty),
            DataType::Timestamp => Reader::Timestamp,
            DataType::Float4 | DataType::Float8 => Reader::Float(ty),
            _ => Reader::General,
        }
    }
}

/// The reader a field tries first, in place: chosen once per field from its [`Reader`]
/// so that a field's read starts with one small match.
#[derive(Clone, Copy)]
enum Fast {
    /// An integer type's canonical digits, read before their end is found (the delimiter
    /// is no digit or sign); the values the type holds are `min..=max`.
    Int { min: i64, max: i64 },
    /// `YYYY-MM-DD HH:MM:SS`, read before its end is found (the delimiter is none of its
    /// bytes).
    Timestamp,
    /// text and varchar: the bytes up to the field's end.
    Text,
    /// Only `reader`'s full rules.
    None,
}

impl Fast {
    /// The fast reader for a field read by `reader`, where `direct` says the delimiter is
    /// no byte an integer or a `YYYY-MM-DD HH:MM:SS` timestamp holds.
    fn of(reader: Reader, direct: bool) -> Fast {
        match reader {
            Reader::Int(DataType::Int2) if direct => Fast::Int {
                min: i16::MIN.into(),
                max: i16::MAX.into(),
            },
            Reader::Int(DataType::Int4) if direct => Fast::Int {
                min: i32::MIN.into(),
                max: i32::MAX.into(),
            },
            Reader::Int(_) if direct => Fast::Int {
                min: i64::MIN,
                max: i64::MAX,
            },
            Reader::Timestamp if direct => Fast::Timestamp,
            Reader::Text => Fast::Text,
            _ => Fast::None,
        }
    }
}

/// Parse `text`, complete lines free of quotes, backslashes and NULs, into columns as
/// `CopyIn::plain_record` and `CopyIn::stage` do: the same rows, values and timestamps.
/// `None` at the first record they would refuse (the caller parses again on the path that
/// reports it).
///
/// Each field is read where it starts: an integer's digits or a timestamp's 19 characters
/// are read and the byte after them checked to be the field's end, so those fields are
/// scanned once; a text field's end is found eight bytes at a time ([`field_end`]).
pub(super) fn parse_plain(text: &str, ctx: &PlainCtx<'_>) -> Option<PlainRows> {
    let cols = &ctx.rel.columns;
    let types: Vec<DataType> = cols.iter().map(|c| c.data_type).collect();
    // The delimiter is no byte an integer or a `YYYY-MM-DD HH:MM:SS` timestamp holds, so
    // those are read before their end is found.
    let direct = !b"0123456789-: T".contains(&ctx.delimiter);
    let fields: Vec<Field> = ctx
        .targets
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let reader = match cols[c].typmod {
                Some(tm) => Reader::Typmod(tm),
                None => Reader::of(types[c]),
            };
            Field {
                column: c,
                reader,
                fast: Fast::of(reader, direct),
                is_ts: ctx.rel.ts_col == Some(c),
                last: i + 1 == ctx.targets.len(),
            }
        })
        .collect();
    // When no field fills the TIMESTAMPCOLUMN, every row breaks its NOT NULL; a record
    // of no field is refused too.
    if (ctx.rel.ts_col.is_some() && !fields.iter().any(|f| f.is_ts)) || fields.is_empty() {
        return None;
    }
    // Fields are cut at the delimiter as character boundaries (`Scan::field`): COPY's is a
    // one-byte character, so ASCII, which this checks rather than trusts.
    if !ctx.delimiter.is_ascii() {
        return None;
    }
    let mut out = PlainRows {
        batches: Vec::new(),
        builder: super::copy_fields::copy_builder(ctx.rel, &types),
        lines: 0,
    };
    let mut scan = Scan {
        text,
        delimiters: u64::from_ne_bytes([ctx.delimiter; 8]),
        delimiter: ctx.delimiter,
        crlf: ctx.crlf,
        dates: DateCache::NONE,
    };
    let mut p = 0;
    while p < text.len() {
        // The record starts at `rec`; `t` is its timestamp.
        let (rec, mut t) = (p, 0i64);
        for field in &fields {
            let b = &mut out.builder;
            let (ts, next, newline) = scan.field(b, p, field, ctx.null, &types)?;
            if field.is_ts {
                t = ts?; // NULL, or a TIMESTAMPCOLUMN of another type: the general path reports it
            }
            if newline != field.last {
                return None; // missing fields, or a field too many
            }
            p = next;
        }
        // `p` is past the newline.
        if p - 1 - rec > ctx.line_max {
            return None;
        }
        let b = &mut out.builder;
        for &c in ctx.untargeted {
            b.append_null(c);
        }
        b.end_row(t);
        if b.is_full() {
            let full = std::mem::replace(b, super::copy_fields::copy_builder(ctx.rel, &types));
            out.batches.push(full.into_batch());
        }
        out.lines += 1;
    }
    Some(out)
}

/// Where complete lines `bytes` are cut in two for two threads: past the first newline at
/// or after their middle (a character boundary). `None` when no newline is there.
pub(super) fn halves_split(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', &bytes[bytes.len() / 2..]).map(|n| bytes.len() / 2 + n + 1)
}

/// One part of a chunk's complete lines parsed by [`parse_plain`] in the session time zone
/// `zone` (which a timestamptz field is read in), when they are valid UTF-8 and free of the
/// bytes that call for the careful paths; else `None`, as where `parse_plain` gives up.
pub(super) fn parse_part(
    lines: &[u8],
    ctx: &PlainCtx<'_>,
    zone: Option<crate::tz::ZoneCell>,
) -> Option<PlainRows> {
    // Most data is ASCII, which is checked in about half the instructions of a UTF-8
    // validation (a non-ASCII part is validated in full after the check stops at its
    // first such byte).
    let text = if lines.is_ascii() {
        // SAFETY: ASCII bytes are UTF-8.
        unsafe { std::str::from_utf8_unchecked(lines) }
    } else {
        std::str::from_utf8(lines).ok()?
    };
    if !plain_bytes(lines, ctx) {
        return None;
    }
    crate::tz::sync_scope(zone, || parse_plain(text, ctx))
}

/// Whether `lines` (complete lines) are free of the bytes that call for the careful
/// paths: CSV's quote, backslashes (text escapes, CSV's `\.` end marker), NULs, and a CR
/// anywhere but before each newline of CRLF data (none at all in LF data).
fn plain_bytes(lines: &[u8], ctx: &PlainCtx<'_>) -> bool {
    let special = match ctx.quote {
        Some(q) => memchr::memchr3(q, b'\\', 0, lines),
        None => memchr::memchr2(b'\\', 0, lines),
    };
    if special.is_some() {
        return false;
    }
    if ctx.crlf {
        let crs = memchr::memchr_iter(b'\r', lines).count();
        crs == memchr::memchr_iter(b'\n', lines).count()
    } else {
        memchr::memchr(b'\r', lines).is_none()
    }
}

/// The rows of two consecutive parts of a text in order: the first's batches and its
/// unfinished one closed, then the second's, whose unfinished batch is where the next rows
/// go.
pub(super) fn join_halves(mut first: PlainRows, second: PlainRows) -> PlainRows {
    if !first.builder.is_empty() {
        first.batches.push(first.builder.into_batch());
    }
    first.batches.extend(second.batches);
    PlainRows {
        batches: first.batches,
        builder: second.builder,
        lines: first.lines + second.lines,
    }
}

const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// The high bit of every byte of `x` that is zero, and no other bit (exact: no carry
/// crosses a byte, as the `LOW7` mask keeps each byte's sum below 0x100).
#[inline]
fn zero_bytes(x: u64) -> u64 {
    !(((x & LOW7) + LOW7) | x | LOW7)
}

/// One field of a record: the column it fills, how it is read (first by `fast`, then by
/// `reader`'s full rules), whether it is the stream's TIMESTAMPCOLUMN, and whether it is
/// the record's last (which ends the line; every other ends at a delimiter).
struct Field {
    column: usize,
    reader: Reader,
    fast: Fast,
    is_ts: bool,
    last: bool,
}

/// The text [`parse_plain`] reads and its markers.
struct Scan<'a> {
    text: &'a str,
    /// The delimiter in every byte of a word.
    delimiters: u64,
    delimiter: u8,
    crlf: bool,
    /// The last date a timestamp field had.
    dates: DateCache,
}

impl Scan<'_> {
    /// Read the field that starts at `p` into its column: its timestamp if it has one,
    /// where the next field or record starts, and whether the record ended with it. `None`
    /// where the general path must decide (it refuses, or reports, the record).
    #[inline]
    fn field(
        &mut self,
        b: &mut ColumnBatchBuilder,
        p: usize,
        field: &Field,
        null: &[u8],
        types: &[DataType],
    ) -> Option<(Option<i64>, usize, bool)> {
        let bytes = self.text.as_bytes();
        let c = field.column;
        // A NULL marker of some bytes: those bytes, then the field's end. The empty marker
        // (CSV's default, the common case) is an empty field, which no fast reader below
        // accepts (it reads a digit or a date first) and which is looked for once the
        // field's end is known: a field that is there costs no check.
        if !null.is_empty() && bytes[p..].starts_with(null) {
            if let Some((next, newline)) = self.ended_at(p + null.len()) {
                b.append_null(c);
                return Some((None, next, newline));
            }
        }
        match field.fast {
            Fast::Int { min, max } => {
                let (v, q) = digits(bytes, p);
                if let Some((next, newline)) = q.and_then(|q| self.ended_at(q)) {
                    if let Some(v) = v.filter(|v| (min..=max).contains(v)) {
                        b.append_int(c, v);
                        return Some((None, next, newline));
                    }
                }
            }
            Fast::Timestamp => {
                if let Some((next, newline)) = self.ended_at(p + 19) {
                    if let Some(v) = fast_timestamp_with(&bytes[p..p + 19], &mut self.dates) {
                        b.append_timestamp(c, v);
                        return Some((Some(v), next, newline));
                    }
                }
            }
            Fast::Text => {
                let (end, next, newline) = self.field_end(p)?;
                if end == p && null.is_empty() {
                    b.append_null(c);
                } else {
                    // SAFETY: `p <= end` (`field_end`), and both are character boundaries
                    // of `self.text`: `p` is 0 or just past an ASCII byte (a delimiter, an
                    // LF, a CRLF's LF) and `end` is at one (the delimiter, LF or CR that
                    // ends the field); `parse_plain` reads only with an ASCII delimiter.
                    unsafe { b.append_str_within(c, self.text, p, end) };
                }
                return Some((None, next, newline));
            }
            Fast::None => {}
        }
        let (end, next, newline) = self.field_end(p)?;
        if end == p && null.is_empty() {
            b.append_null(c);
            return Some((None, next, newline));
        }
        let ts = self.general(b, c, p, end, field.reader, types)?;
        Some((ts, next, newline))
    }

    /// The field `text[p..end]` read by its reader's full rules (the fast readers'
    /// general fallback included).
    fn general(
        &mut self,
        b: &mut ColumnBatchBuilder,
        c: usize,
        p: usize,
        end: usize,
        reader: Reader,
        types: &[DataType],
    ) -> Option<Option<i64>> {
        let field = self.text.get(p..end)?;
        let bytes = field.as_bytes();
        match reader {
            Reader::Varchar(n) if bytes.len() <= n => {
                b.append_str(c, field);
                Some(None)
            }
            Reader::Int(ty) => match fast_int(bytes, ty) {
                Some(v) => {
                    b.append_int(c, v);
                    Some(None)
                }
                None => append_field(b, c, field, ty).ok(),
            },
            Reader::Timestamp => match fast_timestamp_with(bytes, &mut self.dates) {
                Some(v) => {
                    b.append_timestamp(c, v);
                    Some(Some(v))
                }
                None => append_field(b, c, field, DataType::Timestamp).ok(),
            },
            Reader::Float(ty) => match fast_float(bytes, ty) {
                Some(v) => {
                    b.append_float(c, v);
                    Some(None)
                }
                None => append_field(b, c, field, ty).ok(),
            },
            Reader::Typmod(tm) => {
                let mut v = crate::types::parse_value(field, types[c]).ok()?;
                crate::types::conform(&mut v, Some(tm)).ok()?;
                let ts = v.as_timestamp();
                b.append_value(c, &mut v);
                Some(ts)
            }
            Reader::Text | Reader::Varchar(_) | Reader::General => {
                append_field(b, c, field, types[c]).ok()
            }
        }
    }

    /// Whether a field ends at byte `q` (a delimiter, or the record's line ending there):
    /// where the next field or record starts and whether the record ended. `None` when
    /// `q` ends no field, or is a bare LF in CRLF data (the general path reports it).
    #[inline]
    fn ended_at(&self, q: usize) -> Option<(usize, bool)> {
        let bytes = self.text.as_bytes();
        match *bytes.get(q)? {
            x if x == self.delimiter => Some((q + 1, false)),
            b'\n' if !self.crlf => Some((q + 1, true)),
            b'\r' if self.crlf && bytes.get(q + 1) == Some(&b'\n') => Some((q + 2, true)),
            _ => None,
        }
    }

    /// The end of the field that starts at `p` (the first delimiter or newline from
    /// there, less a CRLF line's CR), where the next field or record starts, and whether
    /// the record ended. `None` when no newline ends the text, or at a bare LF in CRLF data.
    #[inline]
    fn field_end(&self, p: usize) -> Option<(usize, usize, bool)> {
        let bytes = self.text.as_bytes();
        let i = next_structural(bytes, p, self.delimiters, self.delimiter)?;
        if bytes[i] == self.delimiter {
            return Some((i, i + 1, false));
        }
        if !self.crlf {
            return Some((i, i + 1, true));
        }
        // CRLF lines: the CR before the newline ends the record.
        (i > p && bytes[i - 1] == b'\r').then_some((i - 1, i + 1, true))
    }
}

/// The value of the optionally negative run of ASCII digits at `p` and where it stops:
/// `(None, Some(q))` when it has no digit or more than 18 (the general reader decides),
/// `(_, None)` at the end of the bytes.
#[inline]
fn digits(bytes: &[u8], p: usize) -> (Option<i64>, Option<usize>) {
    let neg = bytes.get(p) == Some(&b'-');
    let start = p + neg as usize;
    let mut q = start;
    let mut v = 0i64;
    while let Some(&d) = bytes.get(q) {
        let x = d.wrapping_sub(b'0');
        if x > 9 {
            let n = q - start;
            // Only up to 18 digits is `v` exact (more wrapped), and its negation with it.
            let v = (1..=18).contains(&n).then(|| if neg { -v } else { v });
            return (v, Some(q));
        }
        v = v.wrapping_mul(10).wrapping_add(x as i64);
        q += 1;
    }
    (None, None)
}

/// The position of the first delimiter or newline at or after `p`, if any. The bytes are
/// read eight at a time as one word, whose matching bytes are found with a few integer
/// operations (short fields, the common case, take one word).
#[inline]
fn next_structural(bytes: &[u8], mut p: usize, delimiters: u64, delimiter: u8) -> Option<usize> {
    const NEWLINES: u64 = u64::from_ne_bytes([b'\n'; 8]);
    while let Some(w) = bytes.get(p..p + 8) {
        let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        let m = zero_bytes(w ^ delimiters) | zero_bytes(w ^ NEWLINES);
        if m != 0 {
            return Some(p + m.trailing_zeros() as usize / 8);
        }
        p += 8;
    }
    let tail = bytes.get(p..)?;
    memchr::memchr2(delimiter, b'\n', tail).map(|k| p + k)
}

#[cfg(test)]
mod tests {
    use super::super::copy_fields::CopyDest;
    use super::*;
    use crate::types::{Column, Value};

    /// A stream-like relation (ts timestamp TIMESTAMPCOLUMN, d integer, o text, n numeric).
    fn rel() -> CopyRel {
        rel_of(vec![
            Column::new("ts", DataType::Timestamp),
            Column::new("d", DataType::Int4),
            Column::new("o", DataType::Text),
            Column::new("n", DataType::Numeric),
        ])
    }

    /// A stream-like relation of `columns`, the first its TIMESTAMPCOLUMN.
    /// The context of a CSV COPY of four fields into columns 0-3 of `rel`, lines of at
    /// most 80 bytes.
    fn csv_ctx<'a>(
        rel: &'a CopyRel,
        null: &'a [u8],
        crlf: bool,
        quote: Option<u8>,
    ) -> PlainCtx<'a> {
        PlainCtx {
            rel,
            targets: &[0, 1, 2, 3],
            untargeted: &[],
            delimiter: b',',
            null,
            line_max: 80,
            crlf,
            quote,
        }
    }

    fn rel_of(columns: Vec<Column>) -> CopyRel {
        let n = columns.len();
        let table = crate::table::Table::new(
            "s".into(),
            1,
            columns.clone(),
            vec![false; n],
            vec![None; n],
            Vec::new(),
            usize::MAX,
        );
        CopyRel {
            name: "s".into(),
            columns,
            ts_col: Some(0),
            dest: CopyDest::Table(std::sync::Arc::new(table)),
        }
    }

    fn parse(text: &str, targets: &[usize], untargeted: &[usize]) -> Option<PlainRows> {
        parse_with(text, targets, untargeted, false)
    }

    fn parse_with(
        text: &str,
        targets: &[usize],
        untargeted: &[usize],
        crlf: bool,
    ) -> Option<PlainRows> {
        parse_delimited(text, targets, untargeted, crlf, b',')
    }

    fn parse_delimited(
        text: &str,
        targets: &[usize],
        untargeted: &[usize],
        crlf: bool,
        delimiter: u8,
    ) -> Option<PlainRows> {
        let rel = rel();
        let ctx = PlainCtx {
            targets,
            untargeted,
            delimiter,
            ..csv_ctx(&rel, b"", crlf, Some(b'"'))
        };
        parse_plain(text, &ctx)
    }

    fn rows_of(out: PlainRows) -> crate::exec::RowBatch {
        let mut b = out.builder;
        b.finish().to_rows()
    }

    /// Integers and timestamps are read before their end is found: fields that only
    /// start like one (a sign, a fraction, 19 digits, a trailing text) go to the general
    /// reader, and a delimiter an integer or timestamp may hold splits them as the
    /// general path does.
    #[test]
    fn fields_read_before_their_end_split_as_the_general_path() {
        let base = 978_307_200_000_000i64; // 2001-01-01 00:00:00
        let text = "2001-01-01 00:00:01.25,+5,a,\n2001-01-01 00:00:02,-0012,,7\n";
        let rows = rows_of(parse(text, &[0, 1, 2, 3], &[]).expect("plain"));
        assert_eq!(rows.row(0)[0], Value::Timestamp(base + 1_250_000));
        assert_eq!(rows.row(0)[1], Value::Int4(5));
        assert_eq!(rows.row(1)[1], Value::Int4(-12));
        assert_eq!(rows.row(1)[2], Value::Null);
        for bad in [
            "2001-01-01 00:00:01,5x,a,1\n",
            "2001-01-01 00:00:01,1234567890123456789,a,1\n",
            "2001-01-01 00:00:01,2147483648,a,1\n",
            "2001-01-01 00:00:01x,5,a,1\n",
            "2001-01-01 00:00:01,5,a,1,\n",
            "2001-01-01 00:00:01,5\n",
            "2001-01-01 00:00:01,5,a,1",
        ] {
            assert!(parse(bad, &[0, 1, 2, 3], &[]).is_none(), "{bad:?}");
        }
        // A space delimits within the timestamp's text; the T form has none.
        let rows = rows_of(
            parse_delimited("2001-01-01T00:00:03 7\n", &[0, 1], &[2, 3], false, b' ')
                .expect("plain"),
        );
        assert_eq!(rows.row(0)[0], Value::Timestamp(base + 3_000_000));
        assert_eq!(rows.row(0)[1], Value::Int4(7));
        assert!(
            parse_delimited("2001-01-01 00:00:03 7\n", &[0, 1], &[2, 3], false, b' ').is_none()
        );
        // A digit delimiter splits the integers' digits.
        let rows = rows_of(
            parse_delimited("2001-01-01T00:00:04512534\n", &[0, 1, 2], &[3], false, b'5')
                .expect("plain"),
        );
        assert_eq!(rows.row(0)[1], Value::Int4(12));
        assert_eq!(rows.row(0)[2], Value::Text("34".into()));
    }

    /// Each integer type's limits are read in place, one past them makes the parse give
    /// up (the general path reports it), and 19 digits, which the in-place reader leaves to
    /// the general one, still give a bigint its extreme values.
    #[test]
    fn integers_at_and_past_their_types_limits() {
        let rel = rel_of(vec![
            Column::new("ts", DataType::Timestamp),
            Column::new("s", DataType::Int2),
            Column::new("i", DataType::Int4),
            Column::new("b", DataType::Int8),
        ]);
        let run = |fields: &str| {
            let ctx = csv_ctx(&rel, b"", false, Some(b'"'));
            parse_plain(&format!("2001-01-01 00:00:01,{fields}\n"), &ctx).map(rows_of)
        };
        let rows = run("32767,2147483647,999999999999999999").expect("plain");
        assert_eq!(
            rows.row(0)[1..],
            [
                Value::Int2(i16::MAX),
                Value::Int4(i32::MAX),
                Value::Int8(999_999_999_999_999_999)
            ]
        );
        let rows = run("-32768,-2147483648,-9223372036854775808").expect("plain");
        assert_eq!(
            rows.row(0)[1..],
            [
                Value::Int2(i16::MIN),
                Value::Int4(i32::MIN),
                Value::Int8(i64::MIN)
            ]
        );
        let rows = run("0,-0,9223372036854775807").expect("plain");
        assert_eq!(
            rows.row(0)[1..],
            [Value::Int2(0), Value::Int4(0), Value::Int8(i64::MAX)]
        );
        for bad in [
            "32768,0,0",
            "-32769,0,0",
            "0,2147483648,0",
            "0,-2147483649,0",
            "0,0,9223372036854775808",
            "0,0,-9223372036854775809",
            "0,0,99999999999999999999",
        ] {
            assert!(run(bad).is_none(), "{bad}");
        }
    }

    /// An empty field is NULL where the NULL marker is empty (CSV's default), in every
    /// position and for every reader, with LF or CRLF lines; where the marker has bytes,
    /// those bytes are NULL (digits included, which the integer reader must not read) and an
    /// empty field is an empty text, or the general reader's to refuse.
    #[test]
    fn empty_fields_and_null_markers() {
        let rel = rel();
        let run = |text: &str, null: &[u8], crlf: bool| {
            let ctx = csv_ctx(&rel, null, crlf, Some(b'"'));
            parse_plain(text, &ctx).map(rows_of)
        };
        let (t, ts) = ("2001-01-01 00:00:01", Value::Timestamp(978_307_201_000_000));
        let num = |s: &str| crate::types::parse_value(s, DataType::Numeric).unwrap();
        let text = |s: &str| Value::Text(s.into());
        for crlf in [false, true] {
            let eol = if crlf { "\r\n" } else { "\n" };
            let rows =
                run(&format!("{t},,,{eol}{t},5,,2{eol}{t},,a,{eol}"), b"", crlf).expect("plain");
            assert_eq!(
                rows.row(0),
                &[ts.clone(), Value::Null, Value::Null, Value::Null]
            );
            assert_eq!(
                rows.row(1),
                &[ts.clone(), Value::Int4(5), Value::Null, num("2")]
            );
            assert_eq!(
                rows.row(2),
                &[ts.clone(), Value::Null, text("a"), Value::Null]
            );
            let rows = run(&format!("{t},NULL,,NULL{eol}"), b"NULL", crlf).expect("plain");
            assert_eq!(
                rows.row(0),
                &[ts.clone(), Value::Null, text(""), Value::Null]
            );
            assert!(run(&format!("{t},,a,1{eol}"), b"NULL", crlf).is_none());
            let rows = run(&format!("{t},7,7,7{eol}{t},77,77,77{eol}"), b"7", crlf).expect("plain");
            assert_eq!(
                rows.row(0),
                &[ts.clone(), Value::Null, Value::Null, Value::Null]
            );
            assert_eq!(
                rows.row(1),
                &[ts.clone(), Value::Int4(77), text("77"), num("77")]
            );
            // An empty TIMESTAMPCOLUMN is NULL: the general path reports it.
            assert!(run(&format!(",1,a,1{eol}"), b"", crlf).is_none());
        }
    }

    /// Rows, values and timestamps as the general path gives them: fast and general
    /// readers mixed in one record, NULLs, CRLF, a column no field fills, long texts.
    #[test]
    fn plain_rows_carry_their_values_and_timestamps() {
        let long = "x".repeat(40);
        let text = format!(
            "2001-01-01 00:00:01,+5,LAS,1.50\r\n2001-01-01 00:00:02.5,,{long},\r\n2001-01-02T10:00:00,-7,,2\r\n"
        );
        // A bare LF in CRLF data, or CRLF read as LF data, is the general path's to report.
        assert!(parse_with(&text.replacen("\r\n", "\n", 1), &[0, 1, 2, 3], &[], true).is_none());
        assert!(parse(&text, &[0, 1, 2, 3], &[]).is_none());
        let out = parse_with(&text, &[0, 1, 2, 3], &[], true).expect("every record is plain");
        assert_eq!(out.lines, 3);
        let batch = {
            let mut b = out.builder;
            b.finish()
        };
        let rows = batch.to_rows();
        // 2001-01-01 00:00:00 and one day, microseconds since the epoch.
        let (base, day) = (978_307_200_000_000i64, 86_400_000_000i64);
        assert_eq!(
            batch.times,
            vec![
                base + 1_000_000,
                base + 2_500_000,
                base + day + 36_000_000_000
            ]
        );
        assert_eq!(
            rows.row(0),
            &[
                Value::Timestamp(base + 1_000_000),
                Value::Int4(5),
                Value::Text("LAS".into()),
                crate::types::parse_value("1.50", DataType::Numeric).unwrap(),
            ][..]
        );
        assert_eq!(rows.row(1)[1], Value::Null);
        assert_eq!(rows.row(1)[2], Value::Text(long.as_str().into()));
        assert_eq!(rows.row(1)[3], Value::Null);
        assert_eq!(rows.row(2)[2], Value::Null);
        // Fields to other columns, the rest NULL.
        let out = parse("7,2001-01-01 00:00:03\n", &[1, 0], &[2, 3]).expect("plain");
        let rows = {
            let mut b = out.builder;
            b.finish()
        }
        .to_rows();
        assert_eq!(
            rows.row(0),
            &[
                Value::Timestamp(base + 3_000_000),
                Value::Int4(7),
                Value::Null,
                Value::Null
            ][..]
        );
    }

    /// Every record the general path refuses makes the fast path give up.
    #[test]
    fn plain_parse_gives_up_where_the_general_path_refuses() {
        let ok = "2001-01-01 00:00:01,1,a,1\n";
        assert!(parse(ok, &[0, 1, 2, 3], &[]).is_some());
        for bad in [
            ",1,a,1\n",                      // NULL TIMESTAMPCOLUMN
            "2001-01-01 00:00:01,1,a\n",     // a field missing
            "2001-01-01 00:00:01,1,a,1,2\n", // a field too many
            "2001-01-01 00:00:01,x,a,1\n",   // not an integer
            "2001-02-30 00:00:01,1,a,1\n",   // no such date
            "2001-01-01 00:00:01,1,a,1",     // no newline
        ] {
            assert!(
                parse(&format!("{ok}{bad}"), &[0, 1, 2, 3], &[]).is_none(),
                "{bad:?}"
            );
        }
        // Longer than the line limit.
        let long = format!("2001-01-01 00:00:01,1,{},1\n", "y".repeat(60));
        assert!(parse(&long, &[0, 1, 2, 3], &[]).is_none());
        // The TIMESTAMPCOLUMN filled by no field.
        assert!(parse("1\n", &[1], &[0, 2, 3]).is_none());
    }

    /// `text` cut at [`halves_split`], each half parsed by [`parse_part`] and joined in
    /// order, as the COPY's pipeline does on two threads.
    fn parse_plain_halves(text: &str, ctx: &PlainCtx<'_>) -> Option<PlainRows> {
        let mid = halves_split(text.as_bytes())?;
        let first = parse_part(&text.as_bytes()[..mid], ctx, None)?;
        let second = parse_part(&text.as_bytes()[mid..], ctx, None)?;
        Some(join_halves(first, second))
    }

    /// The halves give up (for the careful path) on a quote, backslash, NUL or stray CR in
    /// either of them, and parse the same lines otherwise; CRLF data may hold its CRs.
    #[test]
    fn halves_give_up_on_bytes_that_need_the_careful_path() {
        let rel = rel();
        let ctx = |crlf, quote| csv_ctx(&rel, b"", crlf, quote);
        let ok = "2001-01-01 00:00:01,1,a,1\n".repeat(8);
        let rows = parse_plain_halves(&ok, &ctx(false, Some(b'"'))).expect("plain");
        assert_eq!(rows.lines, 8);
        let crlf = ok.replace('\n', "\r\n");
        assert!(parse_plain_halves(&crlf, &ctx(true, Some(b'"'))).is_some());
        for (bad, quote) in [
            ("\"a\"", Some(b'"')),
            ("a\\b", Some(b'"')),
            ("a\\b", None),
            ("a\0b", None),
            ("a\rb", None),
        ] {
            for half in [1, 7] {
                let mut lines: Vec<String> = ok.lines().map(|l| format!("{l}\n")).collect();
                lines[half] = lines[half].replace(",a,", &format!(",{bad},"));
                let text = lines.concat();
                assert!(
                    parse_plain_halves(&text, &ctx(false, quote)).is_none(),
                    "{bad:?} in line {half}"
                );
            }
        }
        // Without a quote character (the text format), a '"' is plain text.
        let text = ok.replace(",a,", ",\"a,");
        assert!(parse_plain_halves(&text, &ctx(false, None)).is_some());
        // CRLF data with a CR elsewhere than before a newline.
        let text = crlf.replacen(",a,", ",a\r,", 1);
        assert!(parse_plain_halves(&text, &ctx(true, Some(b'"'))).is_none());
    }

    /// A part of ASCII lines, of UTF-8 lines with other characters, and of bytes that are
    /// no UTF-8 (refused, for the careful path to report), wherever the first non-ASCII
    /// byte is.
    #[test]
    fn parts_are_checked_as_ascii_then_as_utf8() {
        let rel = rel();
        let ctx = csv_ctx(&rel, b"", false, Some(b'"'));
        let line = "2001-01-01 00:00:01,1,a,1\n";
        for at in [0, 3, 40] {
            let mut lines: Vec<String> =
                line.repeat(48).lines().map(|l| format!("{l}\n")).collect();
            let ascii = lines.concat();
            let rows = parse_part(ascii.as_bytes(), &ctx, None).expect("ASCII");
            assert_eq!(rows.lines, 48);
            lines[at] = lines[at].replace(",a,", ",Zürich,");
            let utf8 = lines.concat();
            let rows = parse_part(utf8.as_bytes(), &ctx, None).expect("UTF-8");
            let mut b = rows.builder;
            let batch = b.finish().to_rows();
            assert_eq!(batch.row(at)[2], Value::Text("Zürich".into()), "line {at}");
            assert_eq!(batch.row((at + 1) % 48)[2], Value::Text("a".into()));
            let mut bad = utf8.into_bytes();
            let z = bad.iter().position(|&x| x == 0xc3).expect("the ü");
            bad[z + 1] = b'(';
            assert!(parse_part(&bad, &ctx, None).is_none(), "line {at}");
        }
    }

    /// The word-at-a-time scan finds exactly the position a byte-by-byte one finds, from
    /// every start, for every length (tails of 0 to 7 bytes), delimiters 0x01 and ',', tabs, and bytes at
    /// and past 0x80 (multi-byte UTF-8) that must match nothing.
    #[test]
    fn structural_positions_are_every_delimiter_and_newline() {
        let alphabet = [
            b'a',
            b',',
            b'\n',
            b'\t',
            0x01,
            0x02,
            0x80,
            0xff,
            0x0a ^ 0x80,
            b'\r',
        ];
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for len in 0..200 {
            for d in [b',', b'\t', 0x01] {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        alphabet[(x % alphabet.len() as u64) as usize]
                    })
                    .collect();
                let expected: Vec<usize> = (0..len)
                    .filter(|&i| bytes[i] == d || bytes[i] == b'\n')
                    .collect();
                let words = u64::from_ne_bytes([d; 8]);
                for p in 0..=len {
                    assert_eq!(
                        next_structural(&bytes, p, words, d),
                        expected.iter().copied().find(|&i| i >= p),
                        "{bytes:?} from {p} with delimiter {d}"
                    );
                }
            }
        }
    }
}
