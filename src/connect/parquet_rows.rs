//! Rows of a Parquet file for a file source: columns matched to the stream's by name, each
//! value cast to its column's type as PostgreSQL casts it (a column the file lacks is
//! NULL). Integer, floating point, boolean, string, timestamp (any unit; a zone means
//! UTC) and date columns are read.

use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType as A, TimeUnit};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use super::format::{Decoder, Row, BATCH_ROWS};
use crate::types::Value;

/// Good rows, and bad ones as (row within the batch, why).
pub(crate) type Rows = (Vec<Row>, Vec<(usize, String)>);

/// Up to [`BATCH_ROWS`] rows of `path` from row `offset`; `None` when none are left.
/// Errors: the file is not (yet) readable Parquet.
pub(crate) fn read(path: &Path, offset: u64, decoder: &Decoder) -> Result<Option<Rows>, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| e.to_string())?;
    let total = builder.metadata().file_metadata().num_rows().max(0) as u64;
    if offset >= total {
        return Ok(None);
    }
    let mut reader = builder
        .with_offset(offset as usize)
        .with_limit(BATCH_ROWS)
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(|e| e.to_string())?;
    let Some(batch) = reader.next() else {
        return Ok(None);
    };
    let batch = batch.map_err(|e| e.to_string())?;
    let columns = decoder.columns();
    let arrays: Vec<Option<ArrayRef>> = columns
        .iter()
        .map(|c| batch.column_by_name(&c.name).cloned())
        .collect();
    let arrival = crate::time::now_us();
    let (mut good, mut bad) = (Vec::new(), Vec::new());
    for r in 0..batch.num_rows() {
        let row: Result<Vec<Value>, String> = arrays
            .iter()
            .zip(columns)
            .map(|(a, c)| match a {
                None => Ok(Value::Null),
                Some(a) => value(a, r).and_then(|v| {
                    crate::expr::cast_value(v, c.data_type)
                        .map_err(|e| format!("column \"{}\": {e}", c.name))
                }),
            })
            .collect();
        let row = row.and_then(|row| decoder.finish_row(row, arrival).map_err(String::from));
        match row {
            Ok(row) => good.push(row),
            Err(e) => bad.push((r, e)),
        }
    }
    Ok(Some((good, bad)))
}

/// Row `r` of `a` as a value (text for types read no other way). Errors: a type not read.
fn value(a: &ArrayRef, r: usize) -> Result<Value, String> {
    if a.is_null(r) {
        return Ok(Value::Null);
    }
    let int = |v: i64| Ok(Value::Int8(v));
    match a.data_type() {
        A::Boolean => Ok(Value::Bool(a.as_boolean().value(r))),
        A::Int8 => int(a.as_primitive::<Int8Type>().value(r).into()),
        A::Int16 => int(a.as_primitive::<Int16Type>().value(r).into()),
        A::Int32 => int(a.as_primitive::<Int32Type>().value(r).into()),
        A::Int64 => int(a.as_primitive::<Int64Type>().value(r)),
        A::UInt8 => int(a.as_primitive::<UInt8Type>().value(r).into()),
        A::UInt16 => int(a.as_primitive::<UInt16Type>().value(r).into()),
        A::UInt32 => int(a.as_primitive::<UInt32Type>().value(r).into()),
        A::UInt64 => i64::try_from(a.as_primitive::<UInt64Type>().value(r))
            .map(Value::Int8)
            .map_err(|_| "an unsigned value out of bigint's range".to_string()),
        A::Float32 => Ok(Value::Float8(
            a.as_primitive::<Float32Type>().value(r).into(),
        )),
        A::Float64 => Ok(Value::Float8(a.as_primitive::<Float64Type>().value(r))),
        A::Utf8 => Ok(Value::Text(a.as_string::<i32>().value(r).into())),
        A::LargeUtf8 => Ok(Value::Text(a.as_string::<i64>().value(r).into())),
        A::Utf8View => Ok(Value::Text(a.as_string_view().value(r).into())),
        A::Date32 => Ok(Value::Timestamp(
            i64::from(a.as_primitive::<Date32Type>().value(r)) * 86_400_000_000,
        )),
        A::Timestamp(unit, tz) => {
            let us = match unit {
                TimeUnit::Second => a.as_primitive::<TimestampSecondType>().value(r) * 1_000_000,
                TimeUnit::Millisecond => {
                    a.as_primitive::<TimestampMillisecondType>().value(r) * 1000
                }
                TimeUnit::Microsecond => a.as_primitive::<TimestampMicrosecondType>().value(r),
                TimeUnit::Nanosecond => a.as_primitive::<TimestampNanosecondType>().value(r) / 1000,
            };
            Ok(if tz.is_some() {
                Value::TimestampTz(us)
            } else {
                Value::Timestamp(us)
            })
        }
        other => Err(format!("Parquet type {other} is not read")),
    }
}
