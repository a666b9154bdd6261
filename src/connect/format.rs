//! Messages to rows: JSON objects mapped to columns by name, CSV fields in column order.
//!
//! A message becomes rows all or nothing: a value that does not fit its column, a
//! TIMESTAMPCOLUMN that is missing, or text that is no JSON object or CSV record makes the
//! whole message bad (the caller counts it, keeps the error, and skips or stops, see
//! `runner`). The rules:
//! - JSON: each key that names a column fills it; a missing key, or `null`, is NULL; keys
//!   that name no column are ignored. Strings are read as PostgreSQL reads the column's
//!   type from text; numbers fill numeric columns (and, with an epoch `timestamp_format`,
//!   timestamp columns); `true`/`false` fill boolean columns. Anything else (a number for
//!   a text column, a string that is not an integer for an integer column, an array) is a
//!   wrong type, and the message is bad.
//! - CSV: fields fill the columns in order (the topic column, when there is one, is left
//!   out); an empty field is NULL; a record with more or fewer fields than that is bad.
//!   Quoting is RFC 4180's (`"a ""b"""`), so a quoted field may hold the delimiter and
//!   line breaks.
//! - Timestamp columns are read per `timestamp_format`: ISO 8601 text, or a number of
//!   seconds, milliseconds or microseconds since 1970-01-01 UTC.
//! - A stream without a TIMESTAMPCOLUMN stamps each row with its arrival time.

use std::collections::HashMap;

use super::spec::{FormatSpec, TimeFormat};
use crate::exec::columns::{ColumnBatch, ColumnBatchBuilder};
use crate::types::{parse_value, Column, DataType, Value};

/// Rows a batch built by a decoder holds before it is delivered.
pub(crate) const BATCH_ROWS: usize = 16 * 1024;

/// Why a message (or a line of one) is bad: the text, and the SQLSTATE COPY gives the same
/// fault (22P04 for a CSV record of the wrong field count or a quote left open, 23502 for
/// no TIMESTAMPCOLUMN value, 22P02 for text that is no JSON).
/// `/ingest` answers with both; sources count and show the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BadMessage {
    pub(crate) sqlstate: &'static str,
    pub(crate) text: String,
}

impl From<String> for BadMessage {
    fn from(text: String) -> BadMessage {
        BadMessage {
            sqlstate: "22P02",
            text,
        }
    }
}

impl From<BadMessage> for String {
    fn from(b: BadMessage) -> String {
        b.text
    }
}

impl std::fmt::Display for BadMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// Decodes messages for a stream's columns.
#[derive(Clone)]
pub(crate) struct Decoder {
    columns: Vec<Column>,
    types: Vec<DataType>,
    ts_col: Option<usize>,
    spec: FormatSpec,
    by_name: HashMap<String, usize>,
    /// Columns CSV fields fill, in order (every column but the topic column).
    csv_targets: Vec<usize>,
}

/// One decoded row and its timestamp, before it joins a batch.
pub(crate) type Row = (Vec<Value>, i64);

impl Decoder {
    /// A decoder for a stream with `columns` and TIMESTAMPCOLUMN `ts_col`.
    pub(crate) fn new(columns: &[Column], ts_col: Option<usize>, spec: FormatSpec) -> Decoder {
        Decoder {
            types: columns.iter().map(|c| c.data_type).collect(),
            by_name: columns
                .iter()
                .enumerate()
                .map(|(i, c)| (c.name.clone(), i))
                .collect(),
            csv_targets: (0..columns.len())
                .filter(|&i| Some(i) != spec.topic_column)
                .collect(),
            columns: columns.to_vec(),
            ts_col,
            spec,
        }
    }

    /// The stream's columns.
    pub(crate) fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The format decoded.
    pub(crate) fn spec(&self) -> &FormatSpec {
        &self.spec
    }

    /// The stream's column types.
    pub(crate) fn types(&self) -> &[DataType] {
        &self.types
    }

    /// The stream's TIMESTAMPCOLUMN, if it has one.
    pub(crate) fn ts_col(&self) -> Option<usize> {
        self.ts_col
    }

    /// The columns CSV fields fill, in field order.
    pub(crate) fn csv_targets(&self) -> &[usize] {
        &self.csv_targets
    }

    /// An empty batch builder for the stream's columns.
    pub(crate) fn builder(&self) -> ColumnBatchBuilder {
        ColumnBatchBuilder::new(&self.types, BATCH_ROWS)
    }

    /// Decode one message (a JSON object, or NDJSON / CSV lines) into `rows`, all or
    /// nothing; an empty CSV message, and a blank line in one, is a record of one empty
    /// field, as COPY reads a blank line. `topic` fills the topic column; `arrival_us` stamps rows of a stream
    /// without a TIMESTAMPCOLUMN. Errors: why the message is bad (the record's line within
    /// the message when it has several).
    pub(crate) fn message(
        &self,
        payload: &[u8],
        topic: Option<&str>,
        arrival_us: i64,
        rows: &mut Vec<Row>,
    ) -> Result<(), BadMessage> {
        if payload.is_empty() && self.spec.kind == super::spec::FormatKind::Csv {
            // An empty CSV message is one blank line, as COPY reads it: one empty field
            // (22P04 "missing data" for a stream of several columns), not "no record".
            rows.push(self.csv(&[""], topic, arrival_us)?);
            return Ok(());
        }
        let csv = self.spec.kind == super::spec::FormatKind::Csv;
        if !csv && payload.iter().all(u8::is_ascii_whitespace) {
            // A JSON message of no object (no bytes, or blanks) is bad, as an empty CSV
            // message is: accepted, it would be a message that silently gave no row.
            return Err("not a JSON object: the message is empty".to_string().into());
        }
        let numbered = payload.iter().filter(|&&b| b == b'\n').count() > 1;
        self.decode(payload, topic, arrival_us, rows, numbered.then_some(1))
    }

    /// [`Decoder::message`] of a body of lines (an HTTP request's) whose first line is
    /// line `first_line`: an error always names its line.
    pub(crate) fn lines(
        &self,
        payload: &[u8],
        first_line: usize,
        arrival_us: i64,
        rows: &mut Vec<Row>,
    ) -> Result<(), BadMessage> {
        self.decode(payload, None, arrival_us, rows, Some(first_line))
    }

    /// Decode `payload` into `rows`, all or nothing; errors name the record's line when
    /// `first_line` says where the payload's first line is.
    fn decode(
        &self,
        payload: &[u8],
        topic: Option<&str>,
        arrival_us: i64,
        rows: &mut Vec<Row>,
        first_line: Option<usize>,
    ) -> Result<(), BadMessage> {
        let at_line = |e: BadMessage, line: usize, _: &[u8]| match first_line {
            Some(f) => BadMessage {
                text: format!("line {}: {}", line + f - 1, e.text),
                ..e
            },
            None => e,
        };
        let before = rows.len();
        let r = match self.spec.kind {
            super::spec::FormatKind::Csv => {
                let mut split = CsvSplitter::new(self.spec.delimiter);
                let mut err = None;
                split.records(payload, true, &mut |fields, line, _end| match self
                    .csv(fields, topic, arrival_us)
                {
                    Ok(r) => {
                        rows.push(r);
                        true
                    }
                    Err(e) => {
                        err = Some(at_line(e, line, payload));
                        false
                    }
                });
                err.map_or(Ok(()), Err)
            }
            _ => {
                let mut line = 0;
                let mut r = Ok(());
                for text in payload.split(|&b| b == b'\n') {
                    line += 1;
                    if text.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    match self.json(text, topic, arrival_us) {
                        Ok(row) => rows.push(row),
                        Err(e) => {
                            r = Err(at_line(e, line, payload));
                            break;
                        }
                    }
                }
                r
            }
        };
        if r.is_err() {
            rows.truncate(before);
        }
        r
    }

    /// One JSON object as a row. Errors: not an object, a value of the wrong type, no
    /// timestamp.
    pub(crate) fn json(
        &self,
        text: &[u8],
        topic: Option<&str>,
        arrival_us: i64,
    ) -> Result<Row, BadMessage> {
        let mut row = vec![Value::Null; self.types.len()];
        super::json_row::read_object(self, text, &mut row)?;
        self.finish(row, topic, arrival_us)
    }

    /// The column a JSON key names, if any.
    pub(crate) fn column_named(&self, key: &str) -> Option<usize> {
        if self.columns.len() <= 16 {
            self.columns.iter().position(|c| c.name == key)
        } else {
            self.by_name.get(key).copied()
        }
    }

    /// Column `c`'s value from a JSON number written as `text`: numeric columns, and
    /// timestamp columns under an epoch `timestamp_format`.
    pub(crate) fn json_number(&self, c: usize, text: &str) -> Result<Value, BadMessage> {
        let ty = self.types[c];
        if ty.is_numeric() || (ty.is_timestamp() && self.spec.time != TimeFormat::Iso8601) {
            self.text_value(c, text)
        } else {
            Err(self.wrong(c, "number").into())
        }
    }

    /// Column `c`'s value from a JSON boolean: boolean columns only.
    pub(crate) fn json_bool(&self, c: usize, b: bool) -> Result<Value, BadMessage> {
        if self.types[c] == DataType::Bool {
            Ok(Value::Bool(b))
        } else {
            Err(self.wrong(c, "boolean").into())
        }
    }

    /// Why a JSON `what` (number, boolean, array, object) does not fit column `c`.
    pub(crate) fn wrong(&self, c: usize, what: &str) -> String {
        format!(
            "column \"{}\": a JSON {what} is not a value of type {}",
            self.columns[c].name,
            self.types[c].name()
        )
    }

    /// Column `c`'s value from its text (a JSON string or a CSV field).
    pub(crate) fn text_value(&self, c: usize, text: &str) -> Result<Value, BadMessage> {
        let ty = self.types[c];
        let col = &self.columns[c];
        let in_column = |e: crate::Error| BadMessage {
            sqlstate: crate::server::sqlstate(&e),
            text: format!("column \"{}\": {e}", col.name),
        };
        if ty.is_timestamp() && self.spec.time != TimeFormat::Iso8601 {
            let us = epoch_us(text.trim(), self.spec.time).ok_or_else(|| {
                format!(
                    "column \"{}\": \"{text}\" is not a number of {} since 1970-01-01",
                    col.name,
                    match self.spec.time {
                        TimeFormat::EpochSeconds => "seconds",
                        TimeFormat::EpochMillis => "milliseconds",
                        _ => "microseconds",
                    }
                )
            })?;
            return Ok(if ty == DataType::TimestampTz {
                Value::TimestampTz(us)
            } else {
                Value::Timestamp(us)
            });
        }
        let mut v = parse_value(text, ty).map_err(in_column)?;
        crate::types::conform(&mut v, col.typmod).map_err(in_column)?;
        Ok(v)
    }

    /// One CSV record (its fields) as a row. Errors: the wrong number of fields, a field
    /// that does not fit its column, no timestamp.
    pub(crate) fn csv(
        &self,
        fields: &[&str],
        topic: Option<&str>,
        arrival_us: i64,
    ) -> Result<Row, BadMessage> {
        if let Some(why) = split_error(fields) {
            // COPY's: 22021 for bytes that are no UTF-8, 22P04 for a quote left open.
            let sqlstate = if why == &NOT_UTF8[1..] {
                "22021"
            } else {
                "22P04"
            };
            return Err(BadMessage {
                sqlstate,
                text: why.to_string(),
            });
        }
        if fields.len() != self.csv_targets.len() {
            // COPY's "missing data" / "extra data" for the same record.
            return Err(BadMessage {
                sqlstate: "22P04",
                text: format!(
                    "{} fields where the stream takes {}",
                    fields.len(),
                    self.csv_targets.len()
                ),
            });
        }
        let mut row = vec![Value::Null; self.types.len()];
        for (f, &c) in fields.iter().zip(&self.csv_targets) {
            if !f.is_empty() {
                row[c] = self.text_value(c, f)?;
            }
        }
        self.finish(row, topic, arrival_us)
    }

    /// A row built elsewhere (a Parquet file's) with its time taken. Errors: a NULL
    /// TIMESTAMPCOLUMN.
    pub(crate) fn finish_row(&self, row: Vec<Value>, arrival_us: i64) -> Result<Row, BadMessage> {
        self.finish(row, None, arrival_us)
    }

    /// Fill the topic column and take the row's time. Errors: a NULL TIMESTAMPCOLUMN.
    fn finish(
        &self,
        mut row: Vec<Value>,
        topic: Option<&str>,
        arrival_us: i64,
    ) -> Result<Row, BadMessage> {
        if let (Some(c), Some(t)) = (self.spec.topic_column, topic) {
            row[c] = Value::Text(t.into());
        }
        let t = match self.ts_col {
            None => arrival_us,
            // COPY's not-null violation for the same row.
            Some(c) => row[c].as_timestamp().ok_or_else(|| BadMessage {
                sqlstate: "23502",
                text: format!(
                    "no value for the TIMESTAMPCOLUMN \"{}\"",
                    self.columns[c].name
                ),
            })?,
        };
        Ok((row, t))
    }
}

/// Append `rows` to `builder` (taking their values).
pub(crate) fn push_rows(builder: &mut ColumnBatchBuilder, rows: &mut Vec<Row>) {
    for (mut row, t) in rows.drain(..) {
        builder.push_row(&mut row, t);
    }
}

/// `rows` as one columnar batch for `decoder`'s stream.
pub(crate) fn batch_of(decoder: &Decoder, rows: &mut Vec<Row>) -> ColumnBatch {
    let mut b = decoder.builder();
    push_rows(&mut b, rows);
    b.finish()
}

/// Microseconds in one `unit` (seconds, milliseconds, microseconds; 1 for ISO 8601).
pub(crate) fn epoch_scale(unit: TimeFormat) -> i64 {
    match unit {
        TimeFormat::EpochSeconds => 1_000_000,
        TimeFormat::EpochMillis => 1_000,
        _ => 1,
    }
}

/// Microseconds since the epoch from a number of `unit`s (`None` when `text` is no
/// number or is out of range).
pub(crate) fn epoch_us(text: &str, unit: TimeFormat) -> Option<i64> {
    let scale = epoch_scale(unit);
    if let Ok(n) = text.parse::<i64>() {
        return n.checked_mul(scale);
    }
    let f: f64 = text.parse().ok()?;
    let us = (f * scale as f64).round();
    (f.is_finite() && us.abs() < 9.2e18).then_some(us as i64)
}

/// RFC 4180 records split from bytes that may end inside a record (a file being written):
/// a record is handed over only once its line ends, or at the end of the input when the
/// caller says no more will come.
///
/// A record that cannot be split is handed over as one field that begins with a NUL (no
/// text value holds one) and says why: [`NOT_UTF8`], [`UNTERMINATED_QUOTE`].
pub(crate) struct CsvSplitter {
    reader: csv_core::Reader,
    delimiter: u8,
    out: Vec<u8>,
    ends: Vec<usize>,
    /// The input handed over last (not at its end) ended with a record's CR.
    after_cr: bool,
}

/// The field of a record whose bytes are not UTF-8.
pub(crate) const NOT_UTF8: &str = "\0not UTF-8";
/// The field of a last record that ends inside a quoted field (as PostgreSQL's COPY says).
pub(crate) const UNTERMINATED_QUOTE: &str = "\0unterminated CSV quoted field";

/// The reason a record could not be split (a field from [`CsvSplitter`] that begins with
/// a NUL), if it is one.
pub(crate) fn split_error<'a>(fields: &[&'a str]) -> Option<&'a str> {
    match fields {
        [f] => f.strip_prefix('\0'),
        _ => None,
    }
}

/// Hands `each` a record of one empty field for each blank line (`\n` or `\r\n` alone)
/// at offset `at` of `input` (the rest of a CRLF there skipped), on line `line`: COPY reads a
/// blank line as one empty field (22P04 "missing data" for a stream of several
/// columns), where the CSV reader skips it. Returns whether to go on, and the offset
/// past the blank lines handed over.
fn blank_lines(
    input: &[u8],
    at: usize,
    line: usize,
    each: &mut dyn FnMut(&[&str], usize, usize) -> bool,
) -> (bool, usize) {
    // `at` just past a CR: the reader ended the record there, and the LF is the rest of
    // its CRLF, not a blank line.
    let (mut off, mut n) = (at, 0);
    if at > 0 && input[at - 1] == b'\r' && input.get(at) == Some(&b'\n') {
        off += 1;
        n += 1;
    }
    loop {
        let len = match &input[off..] {
            [b'\n', ..] => 1,
            [b'\r', b'\n', ..] => 2,
            _ => return (true, off),
        };
        off += len;
        if !each(&[""], line + n, off) {
            return (false, off);
        }
        n += 1;
    }
}

fn count_lines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

impl CsvSplitter {
    /// A splitter for fields separated by `delimiter`.
    pub(crate) fn new(delimiter: u8) -> CsvSplitter {
        CsvSplitter {
            reader: csv_core::ReaderBuilder::new().delimiter(delimiter).build(),
            delimiter,
            out: vec![0; 4096],
            ends: vec![0; 64],
            after_cr: false,
        }
    }

    /// Hand each complete record of `input` to `each` (its fields, its first line's
    /// number counted from 1 within `input`, and the offset just past it), until `each`
    /// returns false. `at_end`: the input is complete, so a last record without a line
    /// end counts. Returns the bytes consumed: the end of the last record handed over
    /// (what follows is an unfinished record, to be read again with more bytes).
    /// Bytes that are not UTF-8 make a record of one field that says so.
    pub(crate) fn records(
        &mut self,
        input: &[u8],
        at_end: bool,
        each: &mut dyn FnMut(&[&str], usize, usize) -> bool,
    ) -> usize {
        // The LF of a CRLF whose CR ended the input handed over last is no blank line.
        let lf = std::mem::take(&mut self.after_cr) && input.first() == Some(&b'\n');
        let skip = usize::from(lf);
        let n = skip
            + self.split(&input[skip..], at_end, &mut |f, line, end| {
                each(f, line + skip, end + skip)
            });
        self.after_cr = !at_end && n > 0 && input[n - 1] == b'\r';
        n
    }

    /// [`CsvSplitter::records`] of input that does not begin with the rest of a CRLF.
    fn split(
        &mut self,
        input: &[u8],
        at_end: bool,
        each: &mut dyn FnMut(&[&str], usize, usize) -> bool,
    ) -> usize {
        use csv_core::ReadRecordResult as R;
        self.reader.reset();
        let (mut pos, mut done, mut line, mut rec_start) = (0usize, 0usize, 1usize, 0usize);
        let (mut nout, mut nend) = (0usize, 0usize);
        loop {
            let (r, nin, o, e) = self.reader.read_record(
                &input[pos..],
                &mut self.out[nout..],
                &mut self.ends[nend..],
            );
            pos += nin;
            nout += o;
            nend += e;
            match r {
                R::OutputFull => self.out.resize(self.out.len() * 2, 0),
                R::OutputEndsFull => self.ends.resize(self.ends.len() * 2, 0),
                R::InputEmpty if pos >= input.len() && !at_end => return done,
                R::InputEmpty => {
                    if pos >= input.len() && at_end {
                        // Flush a last record without a line end.
                        let (r, _, o, e) = self.reader.read_record(
                            &[],
                            &mut self.out[nout..],
                            &mut self.ends[nend..],
                        );
                        nout += o;
                        nend += e;
                        let first = 1 + count_lines(&input[..rec_start]);
                        let (go, skipped) = blank_lines(input, rec_start, first, each);
                        if !go {
                            return skipped;
                        }
                        let rec_start = skipped;
                        if r == R::Record {
                            let go = if self.in_quotes(&input[rec_start..]) {
                                let line = 1 + count_lines(&input[..rec_start]);
                                each(&[UNTERMINATED_QUOTE], line, pos)
                            } else {
                                self.emit(nout, nend, rec_start, input, pos, each)
                            };
                            if !go {
                                return pos;
                            }
                        }
                        return input.len();
                    }
                }
                R::Record => {
                    // The blank lines the reader skipped before the record are records
                    // of one empty field, as COPY reads them.
                    let (go, skipped) = blank_lines(&input[..pos], rec_start, line, each);
                    if !go {
                        return skipped;
                    }
                    line += input[rec_start..skipped]
                        .iter()
                        .filter(|&&b| b == b'\n')
                        .count();
                    let first_line = line;
                    line += input[skipped..pos].iter().filter(|&&b| b == b'\n').count();
                    let go = self.emit_at(nout, nend, first_line, pos, each);
                    done = pos;
                    rec_start = pos;
                    nout = 0;
                    nend = 0;
                    if !go {
                        return done;
                    }
                }
                R::End => return input.len().max(done),
            }
        }
    }

    /// Whether `record`, the last one of complete input, ends inside a quoted field (its
    /// closing quote missing): a line end after it would belong to the field.
    fn in_quotes(&self, record: &[u8]) -> bool {
        use csv_core::ReadRecordResult as R;
        let mut reader = csv_core::ReaderBuilder::new()
            .delimiter(self.delimiter)
            .build();
        let (mut out, mut ends) = (vec![0; record.len() + 1], vec![0; record.len() + 1]);
        let (_, nin, o, e) = reader.read_record(record, &mut out, &mut ends);
        let (r, _, _, _) = reader.read_record(b"\n", &mut out[o..], &mut ends[e..]);
        nin == record.len() && r != R::Record
    }

    fn emit(
        &self,
        nout: usize,
        nend: usize,
        rec_start: usize,
        input: &[u8],
        end: usize,
        each: &mut dyn FnMut(&[&str], usize, usize) -> bool,
    ) -> bool {
        let line = 1 + input[..rec_start].iter().filter(|&&b| b == b'\n').count();
        self.emit_at(nout, nend, line, end, each)
    }

    fn emit_at(
        &self,
        nout: usize,
        nend: usize,
        line: usize,
        end: usize,
        each: &mut dyn FnMut(&[&str], usize, usize) -> bool,
    ) -> bool {
        let data = &self.out[..nout];
        let Ok(text) = std::str::from_utf8(data) else {
            return each(&[NOT_UTF8], line, end);
        };
        let mut fields = Vec::with_capacity(nend);
        let mut start = 0;
        for &e in &self.ends[..nend] {
            fields.push(&text[start..e]);
            start = e;
        }
        each(&fields, line, end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connect::spec::FormatKind;

    fn decoder(kind: FormatKind, time: TimeFormat) -> Decoder {
        let columns = vec![
            Column::new("ts", DataType::Timestamp),
            Column::new("delay", DataType::Int4),
            Column::new("origin", DataType::Text),
        ];
        Decoder::new(
            &columns,
            Some(0),
            FormatSpec {
                kind,
                time,
                ..FormatSpec::default()
            },
        )
    }

    #[test]
    fn json_objects_map_to_columns_by_name() {
        let d = decoder(FormatKind::Json, TimeFormat::Iso8601);
        let (row, t) = d
            .json(
                br#"{"origin":"SFO","ts":"2001-01-01T10:00:00Z","extra":[1]}"#,
                None,
                0,
            )
            .unwrap();
        assert_eq!(t, 978_343_200_000_000);
        assert_eq!(row[1], Value::Null, "a missing key is NULL");
        assert_eq!(row[2], Value::Text("SFO".into()));
        let e = d
            .json(br#"{"ts":"2001-01-01 10:00:00","delay":"late"}"#, None, 0)
            .unwrap_err();
        assert!(
            e.text
                .starts_with("column \"delay\": invalid input syntax for type integer"),
            "{e}"
        );
        assert_eq!(e.sqlstate, "22P02");
        let e = d
            .json(
                br#"{"ts":"2001-01-01 10:00:00","delay":99999999999}"#,
                None,
                0,
            )
            .unwrap_err();
        assert_eq!(e.sqlstate, "22003", "{e}");
        let e = d
            .json(br#"{"ts":"2001-01-01 10:00:00","origin":5}"#, None, 0)
            .unwrap_err();
        assert_eq!(
            e.text,
            "column \"origin\": a JSON number is not a value of type text"
        );
        let e = d.json(br#"{"delay":5}"#, None, 0).unwrap_err();
        assert_eq!(e.text, "no value for the TIMESTAMPCOLUMN \"ts\"");
        assert!(d
            .json(b"[1,2]", None, 0)
            .unwrap_err()
            .text
            .starts_with("not a JSON object"));
    }

    #[test]
    fn epoch_numbers_in_each_unit() {
        for (time, text) in [
            (TimeFormat::EpochSeconds, "978343200"),
            (TimeFormat::EpochSeconds, "978343200.0"),
            (TimeFormat::EpochMillis, "978343200000"),
            (TimeFormat::EpochMicros, "978343200000000"),
        ] {
            let d = decoder(FormatKind::Json, time);
            let json = format!(r#"{{"ts":{text},"delay":3}}"#);
            assert_eq!(
                d.json(json.as_bytes(), None, 0).unwrap().1,
                978_343_200_000_000
            );
            let d = decoder(FormatKind::Csv, time);
            assert_eq!(
                d.csv(&[text, "3", "LAX"], None, 0).unwrap().1,
                978_343_200_000_000
            );
        }
    }

    #[test]
    fn a_message_is_all_or_nothing() {
        let d = decoder(FormatKind::Csv, TimeFormat::Iso8601);
        let mut rows = Vec::new();
        d.message(
            b"2001-01-01 00:00:00,1,\"a,b\"\n2001-01-01 00:00:01,,c\n",
            None,
            0,
            &mut rows,
        )
        .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].0[2], Value::Text("a,b".into()));
        assert_eq!(rows[1].0[1], Value::Null);
        let e = d
            .message(
                b"2001-01-01 00:00:00,1,a\n2001-01-01 00:00:01,x,c\n",
                None,
                0,
                &mut rows,
            )
            .unwrap_err();
        assert!(e.text.starts_with("line 2: column \"delay\""), "{e}");
        assert_eq!(rows.len(), 2, "nothing of a bad message is kept");
    }

    /// A JSON message of no object (no bytes, blanks, blank lines) is bad, not a message
    /// of no rows; a blank line between objects is skipped.
    #[test]
    fn an_empty_json_message_is_bad() {
        let d = decoder(FormatKind::Json, TimeFormat::Iso8601);
        let mut rows = Vec::new();
        for payload in ["", "  ", "\n\n", " \r\n"] {
            let e = d
                .message(payload.as_bytes(), None, 0, &mut rows)
                .unwrap_err();
            assert_eq!(
                e.text, "not a JSON object: the message is empty",
                "{payload:?}"
            );
            assert_eq!(e.sqlstate, "22P02");
        }
        let two = "{\"ts\": \"2001-01-01 00:00:00\"}\n\n{\"ts\": \"2001-01-01 00:00:01\"}\n";
        d.message(two.as_bytes(), None, 0, &mut rows).unwrap();
        assert_eq!(rows.len(), 2);
    }

    /// A blank line is a record of one empty field, as COPY reads it (22P04 "missing
    /// data" for a CSV of several columns), wherever it stands; an empty message is one
    /// blank line, not a message of no record; an empty field quoted is a value.
    #[test]
    fn a_blank_line_or_an_empty_message_is_a_bad_csv_record() {
        let d = decoder(FormatKind::Csv, TimeFormat::Iso8601);
        let good = "2001-01-01 00:00:00,1,a\n";
        for (payload, line) in [
            (String::new(), None),
            ("\n".to_string(), Some(1)),
            ("\r\n".to_string(), Some(1)),
            (format!("\n{good}"), Some(1)),
            (format!("{good}\n{good}"), Some(2)),
            (format!("{good}\r\n\r\n{good}"), Some(2)),
            (format!("{good}{good}\n"), Some(3)),
            (format!("{good}\n2001-01-01 00:00:01,2,b"), Some(2)),
        ] {
            let mut rows = Vec::new();
            let e = d
                .message(payload.as_bytes(), None, 0, &mut rows)
                .unwrap_err();
            assert_eq!(e.sqlstate, "22P04", "{payload:?}: {e}");
            assert!(
                e.text.contains("1 fields where the stream takes 3"),
                "{payload:?}: {e}"
            );
            if let Some(line) = line.filter(|_| payload.matches('\n').count() > 1) {
                assert!(
                    e.text.starts_with(&format!("line {line}: ")),
                    "{payload:?}: {e}"
                );
            }
            assert!(
                rows.is_empty(),
                "{payload:?}: nothing of a bad message is kept"
            );
        }
        let mut rows = Vec::new();
        d.message(format!("{good}{good}").as_bytes(), None, 0, &mut rows)
            .unwrap();
        assert_eq!(rows.len(), 2);
        // Line numbers after blank lines are the records' own.
        let mut s = CsvSplitter::new(b',');
        let mut got = Vec::new();
        s.records(b"a,1\n\n\nb,2\nc,3", true, &mut |f, line, end| {
            got.push((f.join("|"), line, end));
            true
        });
        assert_eq!(
            got,
            vec![
                ("a|1".to_string(), 1, 4),
                (String::new(), 2, 5),
                (String::new(), 3, 6),
                ("b|2".to_string(), 4, 10),
                ("c|3".to_string(), 5, 13),
            ]
        );
        // The LF of a CRLF is no blank line, within one input or when the CR ends one.
        got.clear();
        let n = s.records(b"a,1\r\nb,2\r\n\r\nc,3\r", false, &mut |f, line, _| {
            got.push((f.join("|"), line, 0));
            true
        });
        assert_eq!(n, 16);
        s.records(b"\nd,4\r\n", true, &mut |f, line, _| {
            got.push((f.join("|"), line, 0));
            true
        });
        let want = [("a|1", 1), ("b|2", 2), ("", 3), ("c|3", 4), ("d|4", 2)];
        let want: Vec<_> = want.iter().map(|(f, l)| (f.to_string(), *l, 0)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn the_splitter_leaves_an_unfinished_record() {
        let mut s = CsvSplitter::new(b',');
        let mut got = Vec::new();
        let input = b"a,\"x\ny\"\nb,2\nc,";
        let n = s.records(input, false, &mut |f, line, end| {
            got.push((f.join("|"), line, end));
            true
        });
        assert_eq!(
            got,
            vec![("a|x\ny".to_string(), 1, 8), ("b|2".to_string(), 3, 12)]
        );
        assert_eq!(n, 12);
        got.clear();
        assert_eq!(
            s.records(&input[12..], true, &mut |f, l, _| {
                got.push((f.join("|"), l, 0));
                true
            }),
            2
        );
        assert_eq!(got, vec![("c|".to_string(), 1, 0)]);
    }
}
