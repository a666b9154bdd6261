//! Staging of large statements in a temporary file.
//!
//! A COPY is all-or-nothing, so its rows must be held until CopyDone. Up to
//! `statement_staging_memory_bytes` they stay in memory as columnar batches; beyond that
//! each staged batch is written to a temporary file in a compact binary form and read back,
//! batch by batch, when the COPY commits. Memory stays bounded whatever the size of the COPY; the file is bounded by
//! `statement_staging_bytes_max` and removed when the COPY ends, committed or not.
//!
//! The files live in the engine's staging directory (see `staging`: under the data
//! directory, or a private directory under `$TMPDIR`), which a restart empties.
//!
//! Design decision: staged rows are other clients' data, and the staging directory may be
//! under a temporary directory shared with every local user, so each staging file lives in
//! its own freshly created private directory (random name, mode 0700) and is created there
//! with `O_EXCL` and `O_NOFOLLOW`, mode 0600. A name planted in advance (a symlink to a file the server may
//! write) is never followed, and no other user can list, read or replace the file. The file
//! is written and read back through the one descriptor, never reopened by name; dropping the
//! [`Spill`] (commit, abort or a vanished client) removes the file and its directory.

use std::fs::{File, OpenOptions};
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rust_decimal::Decimal;

use crate::error::{Error, Result};
use crate::exec::RowBatch;
use crate::types::{Interval, Value};

/// Rows per batch when a spilled COPY is read back.
const READ_BATCH_ROWS: usize = 65_536;

/// The staging file's name inside its private directory.
const STAGE_NAME: &str = "stage";

/// A temporary file of staged rows, in a private directory of its own.
pub(crate) struct Spill {
    /// The private directory; removed (with the file) on drop.
    dir: tempfile::TempDir,
    writer: Option<BufWriter<File>>,
    ncols: usize,
    /// Rows written.
    pub(crate) rows: u64,
    /// Bytes written.
    pub(crate) bytes: u64,
}

fn io_error(e: std::io::Error) -> Error {
    Error::Internal(format!("COPY staging file: {e}"))
}

impl Spill {
    /// A new staging file under `parent`: a private directory (mode 0700, random name) holding
    /// one file created with `O_EXCL | O_NOFOLLOW`, mode 0600.
    pub(crate) fn create_in(parent: &Path, ncols: usize) -> Result<Spill> {
        let dir = tempfile::Builder::new()
            .prefix("tcq-copy-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(parent)
            .map_err(io_error)?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(dir.path().join(STAGE_NAME))
            .map_err(io_error)?;
        Ok(Spill {
            dir,
            writer: Some(BufWriter::with_capacity(1 << 20, file)),
            ncols,
            rows: 0,
            bytes: 0,
        })
    }

    /// The staging file's path.
    fn path(&self) -> PathBuf {
        self.dir.path().join(STAGE_NAME)
    }

    /// Append every row of `batch`.
    pub(crate) fn write(&mut self, batch: &RowBatch) -> Result<()> {
        let w = self
            .writer
            .as_mut()
            .ok_or_else(|| Error::Internal("staging file already read".into()))?;
        let mut buf = Vec::with_capacity(64);
        for i in 0..batch.len() {
            buf.clear();
            buf.extend_from_slice(&batch.times[i].to_le_bytes());
            for v in batch.row(i) {
                encode_value(v, &mut buf);
            }
            w.write_all(&buf).map_err(io_error)?;
            self.bytes += buf.len() as u64;
        }
        self.rows += batch.len() as u64;
        Ok(())
    }

    /// Read the rows back in batches, in order.
    pub(crate) fn read_batches(&mut self) -> Result<SpillReader> {
        let w = self
            .writer
            .take()
            .ok_or_else(|| Error::Internal("staging file already read".into()))?;
        let mut file = w.into_inner().map_err(|e| io_error(e.into_error()))?;
        file.seek(SeekFrom::Start(0)).map_err(io_error)?;
        Ok(SpillReader {
            reader: BufReader::with_capacity(1 << 20, file),
            ncols: self.ncols,
            left: self.rows,
        })
    }
}

impl Drop for Spill {
    fn drop(&mut self) {
        self.writer.take();
        // The file is removed first, so that a failure to remove the directory (which
        // `self.dir` does next) never leaves staged rows behind.
        let _ = std::fs::remove_file(self.path());
    }
}

/// Reads a spilled COPY back.
pub(crate) struct SpillReader {
    reader: BufReader<File>,
    ncols: usize,
    left: u64,
}

impl SpillReader {
    /// The next batch, `None` at the end.
    pub(crate) fn next_batch(&mut self) -> Result<Option<RowBatch>> {
        if self.left == 0 {
            return Ok(None);
        }
        let n = (self.left as usize).min(READ_BATCH_ROWS);
        let mut batch = RowBatch::new(self.ncols);
        for _ in 0..n {
            let t = i64::from_le_bytes(self.bytes::<8>()?);
            let mut row = Vec::with_capacity(self.ncols);
            for _ in 0..self.ncols {
                row.push(self.decode()?);
            }
            batch.push(row, t);
        }
        self.left -= n as u64;
        Ok(Some(batch))
    }

    fn bytes<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut b = [0u8; N];
        self.reader.read_exact(&mut b).map_err(io_error)?;
        Ok(b)
    }

    fn decode(&mut self) -> Result<Value> {
        decode_value(&mut self.reader).map_err(|e| Error::Internal(format!("staging file: {e}")))
    }
}

/// Read one value written by [`encode_value`]. Errors: the input ends, or holds an unknown
/// tag or text that is not UTF-8.
pub(crate) fn decode_value(r: &mut impl Read) -> std::io::Result<Value> {
    fn bytes<const N: usize>(r: &mut impl Read) -> std::io::Result<[u8; N]> {
        let mut b = [0u8; N];
        r.read_exact(&mut b)?;
        Ok(b)
    }
    let bad = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidData, why);
    let [tag] = bytes::<1>(r)?;
    Ok(match tag {
        0 => Value::Null,
        1 => Value::Bool(bytes::<1>(r)?[0] != 0),
        2 => Value::Int2(i16::from_le_bytes(bytes(r)?)),
        3 => Value::Int4(i32::from_le_bytes(bytes(r)?)),
        4 => Value::Int8(i64::from_le_bytes(bytes(r)?)),
        5 => Value::Float4(f32::from_le_bytes(bytes(r)?)),
        6 => Value::Float8(f64::from_le_bytes(bytes(r)?)),
        7 => Value::Numeric(Decimal::deserialize(bytes(r)?)),
        12 => {
            let scale = u32::from_le_bytes(bytes(r)?);
            let len = u32::from_le_bytes(bytes(r)?) as usize;
            let mut m = vec![0u8; len];
            r.read_exact(&mut m)?;
            Value::WideNumeric(Box::new(crate::types_wide::WideNumeric {
                mantissa: num_bigint::BigInt::from_signed_bytes_le(&m),
                scale,
            }))
        }
        8 => {
            let len = u32::from_le_bytes(bytes(r)?) as usize;
            let mut s = Vec::new();
            r.take(len as u64).read_to_end(&mut s)?;
            if s.len() != len {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            Value::Text(
                String::from_utf8(s)
                    .map_err(|_| bad("text that is not UTF-8".into()))?
                    .into(),
            )
        }
        9 => Value::Timestamp(i64::from_le_bytes(bytes(r)?)),
        10 => Value::TimestampTz(i64::from_le_bytes(bytes(r)?)),
        11 => Value::Interval(Interval {
            months: i32::from_le_bytes(bytes(r)?),
            days: i32::from_le_bytes(bytes(r)?),
            micros: i64::from_le_bytes(bytes(r)?),
        }),
        13 => Value::Date(i32::from_le_bytes(bytes(r)?)),
        14 => Value::Time(i64::from_le_bytes(bytes(r)?)),
        t => return Err(bad(format!("unknown value tag {t}"))),
    })
}

/// Append `v` in the compact binary form [`decode_value`] reads.
pub(crate) fn encode_value(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.push(0),
        Value::Bool(b) => out.extend_from_slice(&[1, *b as u8]),
        Value::Int2(i) => {
            out.push(2);
            out.extend_from_slice(&i.to_le_bytes());
        }
        Value::Int4(i) => {
            out.push(3);
            out.extend_from_slice(&i.to_le_bytes());
        }
        Value::Int8(i) => {
            out.push(4);
            out.extend_from_slice(&i.to_le_bytes());
        }
        Value::Float4(f) => {
            out.push(5);
            out.extend_from_slice(&f.to_le_bytes());
        }
        Value::Float8(f) => {
            out.push(6);
            out.extend_from_slice(&f.to_le_bytes());
        }
        Value::Numeric(d) => {
            out.push(7);
            out.extend_from_slice(&d.serialize());
        }
        Value::WideNumeric(w) => {
            out.push(12);
            let m = w.mantissa.to_signed_bytes_le();
            out.extend_from_slice(&w.scale.to_le_bytes());
            out.extend_from_slice(&(m.len() as u32).to_le_bytes());
            out.extend_from_slice(&m);
        }
        Value::Text(s) => {
            out.push(8);
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        Value::Timestamp(t) => {
            out.push(9);
            out.extend_from_slice(&t.to_le_bytes());
        }
        Value::TimestampTz(t) => {
            out.push(10);
            out.extend_from_slice(&t.to_le_bytes());
        }
        Value::Interval(i) => {
            out.push(11);
            out.extend_from_slice(&i.months.to_le_bytes());
            out.extend_from_slice(&i.days.to_le_bytes());
            out.extend_from_slice(&i.micros.to_le_bytes());
        }
        // 12 is left to a wide numeric.
        Value::Date(d) => {
            out.push(13);
            out.extend_from_slice(&d.to_le_bytes());
        }
        Value::Time(t) => {
            out.push(14);
            out.extend_from_slice(&t.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spilled_rows_read_back_equal() {
        let mut b = RowBatch::new(3);
        let vals = [
            vec![
                Value::Int4(1),
                Value::Text("ATL".into()),
                Value::Numeric(Decimal::new(-12345, 3)),
            ],
            vec![
                Value::Null,
                Value::Text("a long text that does not fit inline in the value".into()),
                Value::Interval(Interval {
                    months: 1,
                    days: 2,
                    micros: 3,
                }),
            ],
            vec![
                Value::Float8(1.5),
                Value::Bool(true),
                Value::TimestampTz(-5),
            ],
            vec![
                Value::Date(-1),
                Value::Time(86_400_000_000),
                Value::Date(i32::MAX),
            ],
        ];
        for (i, r) in vals.iter().enumerate() {
            b.push(r.clone(), i as i64 * 10);
        }
        let tmp = tempfile::tempdir().unwrap();
        let mut s = Spill::create_in(tmp.path(), 3).unwrap();
        s.write(&b).unwrap();
        s.write(&b).unwrap();
        let mut r = s.read_batches().unwrap();
        let back = r.next_batch().unwrap().unwrap();
        assert_eq!(back.len(), 8);
        assert_eq!(back.row(5), b.row(1));
        assert_eq!(back.row(7), b.row(3));
        assert_eq!(back.times[6], 20);
        assert!(r.next_batch().unwrap().is_none());
    }

    /// Issue 11: staging files had a predictable name in the shared temporary directory
    /// (`tcq-copy-<pid>-<n>.stage`), mode 0644, and a symlink planted at that name was
    /// followed, so any local user could overwrite a file the server can write.
    #[test]
    fn planted_symlink_is_never_followed() {
        let shared = tempfile::tempdir().unwrap();
        let victim = shared.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        // Plant the names the old scheme used, for this process, in the shared directory.
        let pid = std::process::id();
        for n in 0..256 {
            let name = shared.path().join(format!("tcq-copy-{pid}-{n}.stage"));
            std::os::unix::fs::symlink(&victim, name).unwrap();
        }
        let mut b = RowBatch::new(1);
        b.push(vec![Value::Text("staged secret".into())], 1);
        let mut s = Spill::create_in(shared.path(), 1).unwrap();
        s.write(&b).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let dir = s.dir.path().to_path_buf();
        assert_eq!(mode(&dir), 0o700, "staging directory mode");
        assert_eq!(mode(&s.path()), 0o600, "staging file mode");
        assert!(std::fs::symlink_metadata(s.path()).unwrap().is_file());
        let mut r = s.read_batches().unwrap();
        assert_eq!(r.next_batch().unwrap().unwrap().row(0), b.row(0));
        drop(r);
        drop(s);
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(!dir.exists(), "staging directory removed on drop");
    }

    /// A name that already exists in the private directory is refused, never reused.
    #[test]
    fn existing_name_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let s = Spill::create_in(tmp.path(), 1).unwrap();
        let again = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(s.path());
        assert_eq!(again.unwrap_err().kind(), std::io::ErrorKind::AlreadyExists);
    }
}
