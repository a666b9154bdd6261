//! COPY's fast path: complete lines free of quotes, backslashes and NULs (most real data),
//! parsed into columns in one pass over their bytes.
//!
//! [`Structural`] finds every delimiter and newline eight bytes at a time; [`parse_plain`]
//! reads each field as soon as its end is found, by a reader chosen once per column from
//! its type, and appends it straight to its column. Anything the fast readers do not
//! accept goes to the general per-type parser; any record the general COPY path would
//! refuse makes [`parse_plain`] give up, and the caller parses again on the path that
//! reports it.

use super::copy_fields::{
    append_field, fast_float, fast_int, fast_timestamp_with, CopyRel, DateCache, BATCH_ROWS,
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

/// Parse `text`, complete lines free of quotes, backslashes and NULs, into columns as
/// `CopyIn::plain_record` and `CopyIn::stage` do: the same rows, values and timestamps.
/// `None` at the first record they would refuse (the caller parses again on the path that
/// reports it).
pub(super) fn parse_plain(text: &str, ctx: &PlainCtx<'_>) -> Option<PlainRows> {
    let cols = &ctx.rel.columns;
    let types: Vec<DataType> = cols.iter().map(|c| c.data_type).collect();
    let readers: Vec<(usize, Reader)> = ctx
        .targets
        .iter()
        .map(|&c| match cols[c].typmod {
            Some(tm) => (c, Reader::Typmod(tm)),
            None => (c, Reader::of(types[c])),
        })
        .collect();
    // The field that is the stream's TIMESTAMPCOLUMN; when no field fills it, every row
    // breaks its NOT NULL.
    let ts_field = match ctx.rel.ts_col {
        None => None,
        Some(c) => Some(ctx.targets.iter().position(|&t| t == c)?),
    };
    let mut out = PlainRows {
        batches: Vec::new(),
        builder: ColumnBatchBuilder::new(&types, BATCH_ROWS),
        lines: 0,
    };
    let bytes = text.as_bytes();
    let mut dates = DateCache::NONE;
    // One scan finds both the delimiters and the newlines. The record being read starts
    // at `rec`, its field `f` at `start`; `t` is the row's timestamp.
    let (mut rec, mut start, mut f, mut t) = (0, 0, 0, 0i64);
    for i in Structural::new(bytes, ctx.delimiter) {
        let newline = bytes[i] != ctx.delimiter;
        let end = if newline {
            if i - rec > ctx.line_max {
                return None;
            }
            // CRLF lines: the CR before the newline ends the record.
            if ctx.crlf {
                if i == 0 || bytes[i - 1] != b'\r' {
                    return None; // a bare LF: the general path reports it
                }
                i - 1
            } else {
                i
            }
        } else {
            i
        };
        let &(c, reader) = readers.get(f)?; // more fields than columns: refused
        let b = &mut out.builder;
        let field = &bytes[start..end];
        if field == ctx.null {
            if ts_field == Some(f) {
                return None; // NULL in the TIMESTAMPCOLUMN
            }
            b.append_null(c);
        } else {
            let ts = match reader {
                Reader::Text => {
                    b.append_str_within(c, text, start, end);
                    None
                }
                Reader::Varchar(n) if end - start <= n => {
                    b.append_str_within(c, text, start, end);
                    None
                }
                Reader::Int(ty) => match fast_int(field, ty) {
                    Some(v) => {
                        b.append_int(c, v);
                        None
                    }
                    None => append_field(b, c, text.get(start..end)?, ty).ok()?,
                },
                Reader::Timestamp => match fast_timestamp_with(field, &mut dates) {
                    Some(v) => {
                        b.append_timestamp(c, v);
                        Some(v)
                    }
                    None => append_field(b, c, text.get(start..end)?, DataType::Timestamp).ok()?,
                },
                Reader::Float(ty) => match fast_float(field, ty) {
                    Some(v) => {
                        b.append_float(c, v);
                        None
                    }
                    None => append_field(b, c, text.get(start..end)?, ty).ok()?,
                },
                Reader::Typmod(tm) => {
                    let mut v = crate::types::parse_value(text.get(start..end)?, types[c]).ok()?;
                    crate::types::conform(&mut v, Some(tm)).ok()?;
                    let ts = v.as_timestamp();
                    b.append_value(c, &mut v);
                    ts
                }
                Reader::Varchar(_) | Reader::General => {
                    append_field(b, c, text.get(start..end)?, types[c]).ok()?
                }
            };
            if ts_field == Some(f) {
                t = ts?; // a TIMESTAMPCOLUMN of another type: the general path reports it
            }
        }
        f += 1;
        start = i + 1;
        if !newline {
            continue;
        }
        if f != readers.len() {
            return None; // missing fields
        }
        for &c in ctx.untargeted {
            b.append_null(c);
        }
        b.end_row(t);
        if b.is_full() {
            out.batches.push(b.finish());
        }
        out.lines += 1;
        (rec, f, t) = (i + 1, 0, 0);
    }
    // The text ends with a newline (the caller cuts it so); anything after is not a line.
    if rec != bytes.len() {
        return None;
    }
    Some(out)
}

/// `text` (complete lines) cut in two at the first newline past its middle, each half
/// parsed by [`parse_plain`] on a thread of its own (the calling one and a scoped one, both
/// in the session time zone `zone`, which a timestamptz field is read in), joined in order:
/// the first half's batches and its unfinished one closed, then the second half's, whose
/// unfinished batch is where the next rows go. `None` where either half gives up or no
/// newline ends the text.
pub(super) fn parse_plain_halves(
    text: &str,
    ctx: &PlainCtx<'_>,
    zone: Option<crate::tz::ZoneCell>,
) -> Option<PlainRows> {
    let bytes = text.as_bytes();
    let mid = memchr::memchr(b'\n', &bytes[bytes.len() / 2..]).map(|n| bytes.len() / 2 + n + 1)?;
    let (first, second) = std::thread::scope(|s| {
        let z = zone.clone();
        let second = s.spawn(|| crate::tz::sync_scope(z, || parse_plain(&text[mid..], ctx)));
        let first = crate::tz::sync_scope(zone, || parse_plain(&text[..mid], ctx));
        (first, second.join())
    });
    Some(join_halves(first?, second.ok()??))
}

/// The rows of two consecutive parts of a text in order: the first's batches and its
/// unfinished one closed, then the second's, whose unfinished batch is where the next rows
/// go.
fn join_halves(mut first: PlainRows, second: PlainRows) -> PlainRows {
    if !first.builder.is_empty() {
        first.batches.push(first.builder.finish());
    }
    first.batches.extend(second.batches);
    PlainRows {
        batches: first.batches,
        builder: second.builder,
        lines: first.lines + second.lines,
    }
}

/// The positions of every delimiter and newline in a text, in order. The bytes are read
/// eight at a time as one word, whose matching bytes are found with a few integer
/// operations (no branch per byte, and no call per field as a search for the next one
/// would cost on records of short fields).
pub(super) struct Structural<'a> {
    bytes: &'a [u8],
    /// The delimiter and the newline, each repeated in every byte of a word.
    delimiters: u64,
    newlines: u64,
    /// Where the word `mask` describes starts.
    base: usize,
    /// The matches still to yield in the current word: the high bit of each such byte.
    mask: u64,
}

const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// The high bit of every byte of `x` that is zero, and no other bit (exact: no carry
/// crosses a byte, as the `LOW7` mask keeps each byte's sum below 0x100).
#[inline]
fn zero_bytes(x: u64) -> u64 {
    !(((x & LOW7) + LOW7) | x | LOW7)
}

impl<'a> Structural<'a> {
    pub(super) fn new(bytes: &'a [u8], delimiter: u8) -> Structural<'a> {
        let mut s = Structural {
            bytes,
            delimiters: u64::from_ne_bytes([delimiter; 8]),
            newlines: u64::from_ne_bytes([b'\n'; 8]),
            base: 0,
            mask: 0,
        };
        s.mask = s.word_mask(0);
        s
    }

    /// The delimiters and newlines among the (up to) 8 bytes from `at`.
    #[inline]
    fn word_mask(&self, at: usize) -> u64 {
        let word: [u8; 8] = match self.bytes.get(at..at + 8) {
            Some(w) => w.try_into().expect("8 bytes"),
            None => {
                // The last few bytes, padded with ones that match neither byte.
                let tail = self.bytes.get(at..).unwrap_or_default();
                let pad = if self.delimiters as u8 == 1 { 2 } else { 1 };
                let mut word = [pad; 8];
                word[..tail.len()].copy_from_slice(tail);
                word
            }
        };
        let w = u64::from_le_bytes(word);
        zero_bytes(w ^ self.delimiters) | zero_bytes(w ^ self.newlines)
    }
}

impl Iterator for Structural<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.mask == 0 {
            self.base += 8;
            if self.base >= self.bytes.len() {
                return None;
            }
            self.mask = self.word_mask(self.base);
        }
        let j = self.mask.trailing_zeros() as usize / 8;
        self.mask &= self.mask - 1;
        Some(self.base + j)
    }
}

#[cfg(test)]
mod tests {
    use super::super::copy_fields::CopyDest;
    use super::*;
    use crate::types::{Column, Value};

    /// A stream-like relation (ts timestamp TIMESTAMPCOLUMN, d integer, o text, n numeric).
    fn rel() -> CopyRel {
        let columns = vec![
            Column::new("ts", DataType::Timestamp),
            Column::new("d", DataType::Int4),
            Column::new("o", DataType::Text),
            Column::new("n", DataType::Numeric),
        ];
        let table = crate::table::Table::new(
            "s".into(),
            1,
            columns.clone(),
            vec![false; 4],
            vec![None; 4],
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
        let rel = rel();
        let ctx = PlainCtx {
            rel: &rel,
            targets,
            untargeted,
            delimiter: b',',
            null: b"",
            line_max: 80,
            crlf,
        };
        parse_plain(text, &ctx)
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

    /// The word-at-a-time scan yields exactly the positions a byte-by-byte one finds, for
    /// every length (tails of 0 to 7 bytes), delimiters 0x01 and ',', tabs, and bytes at
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
                assert_eq!(
                    Structural::new(&bytes, d).collect::<Vec<_>>(),
                    expected,
                    "{bytes:?} with delimiter {d}"
                );
            }
        }
    }
}
