//! Messages decoded straight into a column batch: each value is appended to its column's
//! builder as it is read (with COPY's field readers), so a message of one JSON object or
//! one CSV record makes no `Value` per field and no `Vec` per row.
//!
//! That fast path only decides how fast a good message is read, never whether it is good:
//! anything it does not take on the first try (several records in one message, a repeated
//! key, a value that does not fit its column, a missing TIMESTAMPCOLUMN) is dropped from
//! the builder and decoded again by [`Decoder::message`], which has the same rules
//! ([`super::format`]) and words the error.

use super::format::{push_rows, CsvSplitter, Decoder, Row};
use super::spec::{FormatKind, TimeFormat};
use crate::exec::columns::{ColumnBatch, ColumnBatchBuilder};

/// Decodes messages into batches of at most [`super::format::BATCH_ROWS`] rows (or 1 GiB of text).
pub(crate) struct Appender {
    decoder: Decoder,
    builder: ColumnBatchBuilder,
    splitter: CsvSplitter,
    /// Rows of the messages the fast path leaves to [`Decoder::message`].
    rows: Vec<Row>,
}

impl Appender {
    /// An appender for `decoder`'s stream, its batch empty.
    pub(crate) fn new(decoder: Decoder) -> Appender {
        Appender {
            builder: decoder.builder(),
            splitter: CsvSplitter::new(decoder.spec().delimiter),
            decoder,
            rows: Vec::new(),
        }
    }

    /// Decode one message (as [`Decoder::message`]: all or nothing, `topic` fills the
    /// topic column, `arrival_us` stamps rows of a stream without a TIMESTAMPCOLUMN) into
    /// the batch being built; returns the rows it made. Errors: why the message is bad.
    pub(crate) fn message(
        &mut self,
        payload: &[u8],
        topic: Option<&str>,
        arrival_us: i64,
    ) -> Result<usize, String> {
        let csv = self.decoder.spec().kind == FormatKind::Csv;
        if let Some(text) = single_record(payload, csv) {
            let done = if csv {
                self.csv_record(text, topic, arrival_us)
            } else {
                super::json_columns::append_object(
                    &self.decoder,
                    text,
                    topic,
                    arrival_us,
                    &mut self.builder,
                )
            };
            if done {
                return Ok(1);
            }
        }
        self.decoder
            .message(payload, topic, arrival_us, &mut self.rows)?;
        let n = self.rows.len();
        push_rows(&mut self.builder, &mut self.rows);
        Ok(n)
    }

    /// Rows in the batch being built.
    pub(crate) fn len(&self) -> usize {
        self.builder.len()
    }

    /// True once the batch being built should be handed over.
    pub(crate) fn is_full(&self) -> bool {
        self.builder.is_full()
    }

    /// The batch built so far; the next one starts empty.
    pub(crate) fn finish(&mut self) -> ColumnBatch {
        self.builder.finish()
    }

    /// One CSV record (no line break in `text`) into the batch; false, with nothing
    /// appended, when the fast path does not take it.
    fn csv_record(&mut self, text: &[u8], topic: Option<&str>, arrival_us: i64) -> bool {
        let (d, b) = (&self.decoder, &mut self.builder);
        let mut records = 0;
        let mut done = false;
        self.splitter.records(text, true, &mut |fields, _, _| {
            records += 1;
            done = records == 1
                && super::format::split_error(fields).is_none()
                && append_csv(d, fields, topic, arrival_us, b);
            done
        });
        if done && records != 1 {
            b.truncate();
        }
        done && records == 1
    }
}

/// The text of a message that may hold one record: `payload` without its line end (CSV)
/// or trailing white space (JSON); for CSV, only when no other line break is left in it
/// (the JSON scanner gives up at a line break itself).
fn single_record(payload: &[u8], csv: bool) -> Option<&[u8]> {
    let text = if csv {
        let t = payload.strip_suffix(b"\n").unwrap_or(payload);
        let t = t.strip_suffix(b"\r").unwrap_or(t);
        if memchr::memchr2(b'\n', b'\r', t).is_some() {
            return None;
        }
        t
    } else {
        payload.trim_ascii_end()
    };
    (!text.is_empty()).then_some(text)
}

/// One CSV record's `fields` as a row of `b`; false (nothing appended) when any field is
/// not taken on the first try.
fn append_csv(
    d: &Decoder,
    fields: &[&str],
    topic: Option<&str>,
    arrival_us: i64,
    b: &mut ColumnBatchBuilder,
) -> bool {
    if fields.len() != d.csv_targets().len() {
        return false;
    }
    let mut t = None;
    for (f, &c) in fields.iter().zip(d.csv_targets()) {
        if f.is_empty() {
            b.append_null(c);
            continue;
        }
        match append_text(d, b, c, f) {
            Some(ts) if Some(c) == d.ts_col() => t = ts,
            Some(_) => {}
            None => {
                b.truncate();
                return false;
            }
        }
    }
    end_row(d, b, topic, t, arrival_us)
}

/// Append column `c`'s value read from its text (a JSON string or a CSV field) as
/// [`Decoder::text_value`] reads it; `Some` of the value when it is a timestamp, `None`
/// (nothing appended) when it does not read.
pub(super) fn append_text(
    d: &Decoder,
    b: &mut ColumnBatchBuilder,
    c: usize,
    text: &str,
) -> Option<Option<i64>> {
    let ty = d.types()[c];
    let epoch = ty.is_timestamp() && d.spec().time != TimeFormat::Iso8601;
    if d.columns()[c].typmod.is_none() && !epoch {
        return crate::engine::append_field(b, c, text, ty).ok();
    }
    let mut v = d.text_value(c, text).ok()?;
    let ts = v.as_timestamp();
    b.append_value(c, &mut v);
    Some(ts)
}

/// Close the row being built in `b`: the topic column filled (every other column has its
/// value), its time the TIMESTAMPCOLUMN's value `t` or `arrival_us`. False (the row
/// dropped) when the stream has a TIMESTAMPCOLUMN and `t` is `None`.
pub(super) fn end_row(
    d: &Decoder,
    b: &mut ColumnBatchBuilder,
    topic: Option<&str>,
    t: Option<i64>,
    arrival_us: i64,
) -> bool {
    let t = match (d.ts_col(), t) {
        (None, _) => arrival_us,
        (Some(_), Some(t)) => t,
        (Some(_), None) => {
            b.truncate();
            return false;
        }
    };
    if let Some(tc) = d.spec().topic_column {
        match topic {
            Some(s) => b.append_str(tc, s),
            None => b.append_null(tc),
        }
    }
    b.end_row(t);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connect::spec::FormatSpec;
    use crate::types::{Column, DataType, Value};

    fn appender(kind: FormatKind, time: TimeFormat) -> Appender {
        let columns = vec![
            Column::new("ts", DataType::Timestamp),
            Column::new("delay", DataType::Int4),
            Column::new("origin", DataType::Text),
            Column::new("topic", DataType::Text),
        ];
        let spec = FormatSpec {
            kind,
            time,
            topic_column: Some(3),
            ..FormatSpec::default()
        };
        Appender::new(Decoder::new(&columns, Some(0), spec))
    }

    /// The fast path and `Decoder::message` agree on every message: the same rows, or the
    /// same error with nothing appended.
    #[test]
    fn the_fast_path_makes_the_rows_and_errors_of_the_general_one() {
        let json: &[&[u8]] = &[
            br#"{"ts":"2001-01-01 10:00:00","delay":7,"origin":"SFO"}"#,
            b"{\"origin\":\"LAX\",\"ts\":\"2001-01-01T10:00:01\"}\n",
            br#"{"ts":"2001-01-01 10:00:02","delay":"8","delay":9,"extra":[1,{"a":2}]}"#,
            br#"{"ts":"2001-01-01 10:00:03","delay":null,"origin":"a\"b","topic":"x"}"#,
            br#"{"ts":"2001-01-01 10:00:04","delay":1e2}"#,
            br#"{"ts":"2001-01-01 10:00:05","delay":3000000000}"#,
            br#"{"ts":"2001-01-01 10:00:06","origin":5}"#,
            br#"{"delay":5}"#,
            br#"{"ts":null}"#,
            b"[1,2]",
            b"{\"ts\":\"2001-01-01 10:00:07\"} x",
            b"{\"ts\":\"2001-01-01 10:00:08\"}\n{\"ts\":\"2001-01-01 10:00:09\"}\n",
            b"",
        ];
        let csv: &[&[u8]] = &[
            b"2001-01-01 10:00:00,7,SFO",
            b"2001-01-01 10:00:01,,\"a,b\"\r\n",
            b"2001-01-01 10:00:02,x,SFO\n",
            b",1,SFO",
            b"2001-01-01 10:00:03,1",
            b"2001-01-01 10:00:04,1,a\n2001-01-01 10:00:05,2,b\n",
        ];
        for (kind, messages) in [(FormatKind::Json, json), (FormatKind::Csv, csv)] {
            let mut a = appender(kind, TimeFormat::Iso8601);
            let mut rows = Vec::new();
            let mut made = 0;
            for m in messages {
                let general = a.decoder.message(m, Some("t"), 5, &mut rows);
                let fast = a.message(m, Some("t"), 5);
                assert_eq!(
                    fast.as_ref().err(),
                    general.as_ref().err().map(|e| &e.text),
                    "{m:?}"
                );
                made += fast.unwrap_or(0);
                assert_eq!(made, rows.len(), "{m:?}");
                assert_eq!(a.len(), rows.len(), "{m:?}");
            }
            let batch = a.finish().to_rows();
            for (i, (row, t)) in rows.iter().enumerate() {
                assert_eq!(batch.row(i), &row[..], "{kind:?} row {i}");
                assert_eq!(batch.times[i], *t, "{kind:?} row {i}");
            }
        }
    }

    #[test]
    fn epoch_numbers_and_strings_fill_timestamps() {
        let mut a = appender(FormatKind::Json, TimeFormat::EpochMillis);
        assert_eq!(a.message(br#"{"ts":978343200000}"#, None, 0), Ok(1));
        assert_eq!(a.message(br#"{"ts":"978343200001"}"#, None, 0), Ok(1));
        assert!(a
            .message(br#"{"ts":"2001-01-01 10:00:00"}"#, None, 0)
            .unwrap_err()
            .contains("is not a number of milliseconds"));
        let b = a.finish().to_rows();
        assert_eq!(b.row(0)[0], Value::Timestamp(978_343_200_000_000));
        assert_eq!(b.times[1], 978_343_200_001_000);
        assert_eq!(b.row(1)[3], Value::Null, "no topic: NULL");
    }
}
