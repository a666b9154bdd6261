//! `COPY ... FROM STDIN (FORMAT binary)`: PostgreSQL's binary COPY format, read
//! incrementally into the same staging as text and CSV rows (see [`CopyIn`]).
//!
//! The format: an 11-byte signature `PGCOPY\n\xff\r\n\0`, a 32-bit flags word (bit 16 means
//! OIDs, which tcq refuses; other bits of the upper half are critical and refused), a 32-bit
//! header extension length and that many bytes, skipped. Then per tuple a 16-bit field count
//! and per field a 32-bit length (-1 for NULL) followed by the value in its type's binary
//! (`send`) encoding; a field count of -1 is the trailer. Input may end at a tuple boundary
//! without the trailer, as PostgreSQL allows; data after the trailer is an error.
//!
//! Design decision: the values' binary encodings are the wire protocol's business, so the
//! server hands the sink its decoder ([`FieldDecoder`]) and this module only walks the
//! framing. A tuple is parsed only once all its bytes have arrived, and a field longer than
//! the staging limit is refused as soon as its length word is read, so a client cannot make
//! the carry buffer grow without bound.

use super::copy::CopyIn;
use super::copy_fields::{with_message, BinaryPhase, BinaryState, FieldDecoder};
use crate::error::{Error, Result};
use crate::types::{parse_value, DataType, Value};

/// Largest field, as PostgreSQL's (1 GiB); a longer length word is refused at once.
pub(crate) const FIELD_BYTES_MAX: usize = 1 << 30;

/// The signature that opens every binary COPY stream.
pub(crate) const SIGNATURE: &[u8; 11] = b"PGCOPY\n\xff\r\n\0";

fn bad(msg: impl Into<String>) -> Error {
    Error::BadCopyFileFormat(msg.into())
}

/// A big-endian reader over a byte slice that reports "not enough bytes yet" as `None`.
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let end = self.pos.checked_add(n)?;
        let bytes = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(bytes)
    }
    fn i16(&mut self) -> Option<i16> {
        self.take(2).map(|b| i16::from_be_bytes([b[0], b[1]]))
    }
    fn i32(&mut self) -> Option<i32> {
        self.take(4)
            .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
}

impl CopyIn {
    /// Read this COPY's data in PostgreSQL's binary format, decoding each field with
    /// `decode` (the server's binary decoder). Called once, before any data.
    pub(crate) fn set_binary_decoder(&mut self, decode: FieldDecoder) {
        self.binary = Some(BinaryState {
            decode,
            phase: BinaryPhase::Header,
        });
    }

    /// True for `FORMAT binary`.
    pub(crate) fn is_binary(&self) -> bool {
        self.options.format == crate::sql::CopyFormat::Binary
    }

    /// Parse every complete header part and tuple in the carry buffer; keep the rest.
    pub(crate) fn parse_binary(&mut self, state: &mut BinaryState) -> Result<()> {
        let carry = std::mem::take(&mut self.carry);
        let mut used = 0;
        let result = loop {
            let mut cur = Cursor {
                buf: &carry[used..],
                pos: 0,
            };
            let step = match state.phase {
                BinaryPhase::Header => self.binary_header(&mut cur, state),
                BinaryPhase::Tuples => self.binary_tuple(&mut cur, state),
                BinaryPhase::Done if cur.buf.is_empty() => Ok(false),
                BinaryPhase::Done => Err(bad("received copy data after EOF marker")),
            };
            match step {
                Ok(true) => used += cur.pos,
                Ok(false) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        self.carry = carry[used..].to_vec();
        result?;
        self.spill_if_large()
    }

    /// At CopyDone: the input must end at a tuple boundary (the trailer is optional).
    pub(crate) fn finish_binary(&self, state: &BinaryState) -> Result<()> {
        if state.phase == BinaryPhase::Header || !self.carry.is_empty() {
            return Err(super::copy::copy_context(
                bad("unexpected EOF in COPY data"),
                &self.rel.name,
                self.line + 1,
            ));
        }
        Ok(())
    }

    /// The header; `Ok(false)` if it has not fully arrived.
    fn binary_header(&mut self, cur: &mut Cursor, state: &mut BinaryState) -> Result<bool> {
        let Some(sig) = cur.take(SIGNATURE.len()) else {
            if !SIGNATURE.starts_with(cur.buf) {
                return Err(bad("COPY file signature not recognized"));
            }
            return Ok(false);
        };
        if sig != SIGNATURE {
            return Err(bad("COPY file signature not recognized"));
        }
        let (Some(flags), Some(ext)) = (cur.i32(), cur.i32()) else {
            return Ok(false);
        };
        if flags & (1 << 16) != 0 {
            return Err(bad("invalid COPY file header (WITH OIDS)"));
        }
        if (flags as u32) & 0xffff_0000 != 0 {
            return Err(bad("unrecognized critical flags in COPY file header"));
        }
        if ext < 0 || ext as usize > self.staging_max {
            return Err(bad("invalid COPY file header (wrong length)"));
        }
        if cur.take(ext as usize).is_none() {
            return Ok(false);
        }
        state.phase = BinaryPhase::Tuples;
        Ok(true)
    }

    /// One tuple or the trailer; `Ok(false)` if it has not fully arrived.
    fn binary_tuple(&mut self, cur: &mut Cursor, state: &mut BinaryState) -> Result<bool> {
        let Some(count) = cur.i16() else {
            return Ok(false);
        };
        let line = self.line + 1;
        let stream = self.rel.clone();
        let context = |e: Error, column: Option<&str>| {
            let e = match column {
                Some(c) => with_message(e, |m| format!("{m}\u{0}{c}")),
                None => e,
            };
            super::copy::copy_context(e, &stream.name, line)
        };
        if count == -1 {
            state.phase = BinaryPhase::Done;
            return Ok(true);
        }
        if count < 0 || count as usize != self.targets.len() {
            let msg = format!(
                "row field count is {count}, expected {}",
                self.targets.len()
            );
            return Err(context(bad(msg), None));
        }
        let mut fields = Vec::with_capacity(self.targets.len());
        for &c in &self.targets {
            let column = &stream.columns[c];
            let Some(len) = cur.i32() else {
                return Ok(false);
            };
            if len == -1 {
                fields.push(Value::Null);
                continue;
            }
            if len < -1 || len as usize > self.staging_max.min(FIELD_BYTES_MAX) {
                return Err(context(bad("invalid field size"), Some(&column.name)));
            }
            let Some(bytes) = cur.take(len as usize) else {
                return Ok(false);
            };
            let value = (state.decode)(bytes, column.data_type)
                .and_then(|v| assign(v, column.data_type))
                .and_then(|mut v| crate::types::conform(&mut v, column.typmod).map(|()| v))
                .map_err(|e| context(binary_error(e, column.data_type), Some(&column.name)))?;
            fields.push(value);
        }
        self.line = line;
        self.stage_values(fields).map_err(|e| context(e, None))?;
        Ok(true)
    }

    /// Stage one typed row, one value per target column.
    fn stage_values(&mut self, fields: Vec<Value>) -> Result<()> {
        let cols = &self.rel.columns;
        let mut row = vec![Value::Null; cols.len()];
        for (v, &c) in fields.into_iter().zip(&self.targets) {
            row[c] = v;
        }
        let t = match self.rel.ts_col {
            None => 0,
            Some(c) => row[c].as_timestamp().ok_or_else(|| {
                Error::NotNullViolation(format!(
                    "null value in column \"{}\" violates not-null constraint: it is the stream's TIMESTAMPCOLUMN",
                    cols[c].name
                ))
            })?,
        };
        self.builder.push_row(&mut row, t);
        if self.builder.len() >= super::copy_fields::BATCH_ROWS {
            self.seal_batch();
        }
        Ok(())
    }
}

/// The assignment to a column: varchar(n) checks its length and char(n) pads, as text
/// COPY does.
fn assign(v: Value, ty: DataType) -> Result<Value> {
    match (&v, ty) {
        (Value::Text(s), DataType::Varchar(Some(_)) | DataType::Bpchar(Some(_))) => {
            parse_value(s, ty)
        }
        _ => Ok(v),
    }
}

/// The decoder's "bind parameter" wording, said of COPY data instead.
fn binary_error(e: Error, ty: DataType) -> Error {
    match e {
        Error::InvalidTextRepresentation(m) if m.contains("binary data format") => {
            Error::InvalidBinaryRepresentation(format!(
                "incorrect binary data format for type {}",
                ty.name()
            ))
        }
        other => other,
    }
}
