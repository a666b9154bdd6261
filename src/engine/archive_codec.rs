//! An archived stream's encoding on disk: the log record's header constants, Arrow IPC
//! payloads, and [`ArchiveCodec`], which turns a stream's batches into Arrow record batches
//! and back. A leaf below `archive.rs` (logs and segments), `log_scan.rs` (reading logs)
//! and `segment.rs` (sealed segments), which all read and write through it.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::TimestampMicrosecondType;
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow_schema::{DataType as ArrowType, Field, Schema, SchemaRef, TimeUnit};

use crate::error::{Error, Result};
use crate::exec::columns::{ColumnArray, ColumnBatch, ColumnBatchBuilder};
use crate::exec::Batch;
use crate::types::{parse_value, Column, DataType, Value};

pub(crate) const RECORD_MAGIC: &[u8; 4] = b"TCQR";
pub(crate) const HEADER_BYTES: usize = 24;
pub(crate) const KIND_BATCH: u8 = 1;
pub(crate) const KIND_COMMIT: u8 = 2;
/// A stored table's statement: its changes (see `table_log`).
pub(crate) const KIND_EFFECTS: u8 = 3;
/// A record's payload is at most this long; a longer length field is corruption.
pub(crate) const PAYLOAD_MAX: usize = 1 << 30;
/// The column that carries the arrival time of a stream without a TIMESTAMPCOLUMN.
pub(crate) const ARRIVAL_COLUMN: &str = "tcq_arrival_time";

pub(crate) fn io_err(what: impl std::fmt::Display, e: std::io::Error) -> Error {
    Error::Io(format!("{what}: {e}"))
}

/// The Arrow schema of a stream's archived batches: its columns (numeric and interval as
/// text), then [`ARRIVAL_COLUMN`] when the stream has no TIMESTAMPCOLUMN.
pub(crate) fn archive_schema(columns: &[Column], ts_col: Option<usize>) -> SchemaRef {
    let mut fields: Vec<Field> = columns
        .iter()
        .map(|c| Field::new(&c.name, arrow_type(c.data_type), true))
        .collect();
    if ts_col.is_none() {
        fields.push(Field::new(
            ARRIVAL_COLUMN,
            ArrowType::Timestamp(TimeUnit::Microsecond, None),
            false,
        ));
    }
    Arc::new(Schema::new(fields))
}

pub(crate) fn arrow_type(t: DataType) -> ArrowType {
    match t {
        DataType::Bool => ArrowType::Boolean,
        DataType::Int2 => ArrowType::Int16,
        DataType::Int4 => ArrowType::Int32,
        DataType::Int8 => ArrowType::Int64,
        DataType::Float4 => ArrowType::Float32,
        DataType::Float8 => ArrowType::Float64,
        DataType::Text
        | DataType::Varchar(_)
        | DataType::Bpchar(_)
        | DataType::Numeric
        | DataType::Interval
        | DataType::Date
        | DataType::Time => ArrowType::Utf8,
        DataType::Timestamp => ArrowType::Timestamp(TimeUnit::Microsecond, None),
        DataType::TimestampTz => ArrowType::Timestamp(TimeUnit::Microsecond, Some("+00:00".into())),
    }
}

/// How to turn a stream's batches into Arrow record batches and back.
#[derive(Clone, Debug)]
pub(crate) struct ArchiveCodec {
    /// The record batches' schema ([`archive_schema`]).
    pub(crate) schema: SchemaRef,
    types: Vec<DataType>,
    ts_col: Option<usize>,
}

impl ArchiveCodec {
    /// The codec of a stream with `columns` and TIMESTAMPCOLUMN `ts_col`.
    pub(crate) fn new(columns: &[Column], ts_col: Option<usize>) -> ArchiveCodec {
        ArchiveCodec {
            schema: archive_schema(columns, ts_col),
            types: columns.iter().map(|c| c.data_type).collect(),
            ts_col,
        }
    }

    /// Index of the column that holds each tuple's time in a record batch.
    pub(crate) fn time_column(&self) -> usize {
        self.ts_col.unwrap_or(self.types.len())
    }

    /// `batch` as an Arrow record batch.
    pub(crate) fn to_record_batch(&self, batch: &Batch) -> Result<RecordBatch> {
        let owned;
        let b = match batch {
            Batch::Columns(b) => b,
            Batch::Rows(rows) => {
                let mut builder = ColumnBatchBuilder::new(&self.types, rows.len());
                let mut row = Vec::with_capacity(self.types.len());
                for i in 0..rows.len() {
                    row.clear();
                    row.extend_from_slice(rows.row(i));
                    builder.push_row(&mut row, rows.times[i]);
                }
                owned = builder.finish();
                &owned
            }
        };
        let mut arrays: Vec<ArrayRef> = b
            .columns
            .iter()
            .map(|c| match c {
                ColumnArray::Arrow(a) => a.clone(),
                ColumnArray::Values(v) => {
                    Arc::new(v.iter().map(|x| x.to_text()).collect::<StringArray>()) as ArrayRef
                }
            })
            .collect();
        if self.ts_col.is_none() {
            arrays.push(Arc::new(TimestampMicrosecondArray::new(
                b.times.clone(),
                None,
            )));
        }
        RecordBatch::try_new(self.schema.clone(), arrays)
            .map_err(|e| Error::Internal(format!("archive batch: {e}")))
    }

    /// A record batch (from a log or a segment) back as a columnar batch.
    pub(crate) fn decode(&self, rb: &RecordBatch) -> Result<ColumnBatch> {
        let bad = |why: String| Error::DataCorrupted(format!("archived batch: {why}"));
        if rb.num_columns() != self.schema.fields().len() {
            return Err(bad(format!(
                "{} columns where the stream has {}",
                rb.num_columns(),
                self.schema.fields().len()
            )));
        }
        let mut columns = Vec::with_capacity(self.types.len());
        for (i, &ty) in self.types.iter().enumerate() {
            let a = rb.column(i);
            if a.data_type() != &arrow_type(ty) {
                return Err(bad(format!("column {i} has type {}", a.data_type())));
            }
            columns.push(match ty {
                DataType::Numeric | DataType::Interval | DataType::Date | DataType::Time => {
                    let s = a.as_string::<i32>();
                    let mut v = Vec::with_capacity(s.len());
                    for j in 0..s.len() {
                        v.push(if s.is_null(j) {
                            Value::Null
                        } else {
                            parse_value(s.value(j), ty)?
                        });
                    }
                    ColumnArray::Values(v)
                }
                _ => ColumnArray::Arrow(a.clone()),
            });
        }
        let t = rb.column(self.time_column());
        let t = t
            .as_primitive_opt::<TimestampMicrosecondType>()
            .ok_or_else(|| bad("the time column is not a timestamp".into()))?;
        if t.null_count() > 0 {
            return Err(bad("a tuple without a time".into()));
        }
        Ok(ColumnBatch {
            columns,
            times: t.values().clone(),
        })
    }
}

pub(crate) fn encode_ipc(rb: &RecordBatch) -> Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(rb.get_array_memory_size() + 1024);
    let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut buf, &rb.schema())
        .map_err(|e| Error::Internal(format!("archive encode: {e}")))?;
    w.write(rb)
        .and_then(|_| w.finish())
        .map_err(|e| Error::Internal(format!("archive encode: {e}")))?;
    drop(w);
    Ok(buf)
}

pub(crate) fn decode_ipc(payload: &[u8]) -> std::result::Result<RecordBatch, String> {
    let mut r = arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(payload), None)
        .map_err(|e| format!("undecodable batch: {e}"))?;
    match r.next() {
        Some(Ok(b)) => Ok(b),
        Some(Err(e)) => Err(format!("undecodable batch: {e}")),
        None => Err("empty batch record".into()),
    }
}
