//! Rows to lines: NDJSON (one JSON object a row) or CSV, as sinks write them.
//!
//! JSON follows PostgreSQL's `to_json`: numbers as JSON numbers (numeric with all its
//! digits; a float that is NaN or infinite as the string PostgreSQL prints), booleans,
//! text as strings, `timestamp` as `"2001-01-01T00:10:00"`, `timestamptz` in UTC as
//! `"2001-01-01T00:10:00+00:00"`, intervals as their text, NULL as `null`; keys are the
//! column names. CSV follows `COPY ... TO ... (FORMAT csv)`: values as PostgreSQL prints
//! them (timestamptz in UTC), NULL as an empty field, and a field quoted when it holds the
//! delimiter, a quote, a line break, or is empty text (so that it is no NULL).

use std::fmt::Write;

use super::spec::{SinkFormat, SinkFormatKind};
use crate::types::{Column, Value};

/// Append `row`'s first `columns.len()` values as one line (with its `\n`) in `format`.
pub(crate) fn line(columns: &[Column], row: &[Value], format: SinkFormat, out: &mut String) {
    match format.kind {
        SinkFormatKind::Json => json_line(columns, row, out),
        SinkFormatKind::Csv => csv_line(&row[..columns.len()], format.delimiter, out),
    }
}

/// Append the CSV header line of `columns` (their names, quoted as fields are).
pub(crate) fn csv_header(columns: &[Column], delimiter: u8, out: &mut String) {
    for (i, c) in columns.iter().enumerate() {
        if i > 0 {
            out.push(delimiter as char);
        }
        csv_field(&c.name, delimiter, out);
    }
    out.push('\n');
}

/// Append one JSON object of `row`'s first `columns.len()` values, then `\n`.
pub(crate) fn json_line(columns: &[Column], row: &[Value], out: &mut String) {
    out.push('{');
    for (i, (c, v)) in columns.iter().zip(row).enumerate() {
        if i > 0 {
            out.push(',');
        }
        json_string(&c.name, out);
        out.push(':');
        json_value(v, out);
    }
    out.push_str("}\n");
}

/// Append `v` as JSON.
pub(crate) fn json_value(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int2(_)
        | Value::Int4(_)
        | Value::Int8(_)
        | Value::Numeric(_)
        | Value::WideNumeric(_) => crate::types::format_value(v, out),
        Value::Float4(f) if f.is_finite() => crate::types::format_value(v, out),
        Value::Float8(f) if f.is_finite() => crate::types::format_value(v, out),
        Value::Timestamp(us) => {
            let t = crate::time::format_timestamp(*us);
            json_string(&t.replacen(' ', "T", 1), out);
        }
        Value::TimestampTz(us) => {
            let t = crate::time::format_timestamp(*us);
            json_string(&format!("{}+00:00", t.replacen(' ', "T", 1)), out);
        }
        _ => {
            let mut text = String::new();
            crate::types::format_value(v, &mut text);
            json_string(&text, out);
        }
    }
}

/// Append `s` as a JSON string.
pub(crate) fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Append `row` as one CSV record, then `\n`.
pub(crate) fn csv_line(row: &[Value], delimiter: u8, out: &mut String) {
    for (i, v) in row.iter().enumerate() {
        if i > 0 {
            out.push(delimiter as char);
        }
        match v {
            Value::Null => {}
            Value::TimestampTz(us) => {
                out.push_str(&crate::time::format_timestamp(*us));
                out.push_str("+00");
            }
            Value::Text(t) => csv_field(t, delimiter, out),
            v => {
                let mut text = String::new();
                crate::types::format_value(v, &mut text);
                csv_field(&text, delimiter, out);
            }
        }
    }
    out.push('\n');
}

fn csv_field(s: &str, delimiter: u8, out: &mut String) {
    let quote = s.is_empty()
        || s.bytes()
            .any(|b| b == delimiter || b == b'"' || b == b'\n' || b == b'\r');
    if !quote {
        out.push_str(s);
        return;
    }
    out.push('"');
    out.push_str(&s.replace('"', "\"\""));
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::DataType;

    #[test]
    fn rows_are_written_as_postgres_writes_them() {
        let cols = vec![
            Column::new("origin", DataType::Text),
            Column::new("n", DataType::Int8),
            Column::new("avg", DataType::Numeric),
            Column::new("wtime", DataType::Timestamp),
            Column::new("f", DataType::Float8),
        ];
        let row = vec![
            Value::Text("S\"F,O".into()),
            Value::Int8(3),
            Value::Numeric("1.5000000000000000".parse().unwrap()),
            Value::Timestamp(978_307_800_000_000),
            Value::Float8(f64::NAN),
        ];
        let mut out = String::new();
        json_line(&cols, &row, &mut out);
        assert_eq!(
            out,
            "{\"origin\":\"S\\\"F,O\",\"n\":3,\"avg\":1.5000000000000000,\"wtime\":\"2001-01-01T00:10:00\",\"f\":\"NaN\"}\n"
        );
        out.clear();
        csv_line(&row, b',', &mut out);
        assert_eq!(
            out,
            "\"S\"\"F,O\",3,1.5000000000000000,2001-01-01 00:10:00,NaN\n"
        );
        out.clear();
        csv_line(&[Value::Null, Value::Text("".into())], b',', &mut out);
        assert_eq!(out, ",\"\"\n");
        out.clear();
        json_value(&Value::TimestampTz(0), &mut out);
        assert_eq!(out, "\"1970-01-01T00:00:00+00:00\"");
    }
}
