//! Stored tables on disk: each table's changes in a log of its own.
//!
//! A table on a data directory has the file `tables/<name>.tcqlog` (name escaped as for
//! streams). It is a sequence of records in the archive's log format (24-byte header with
//! magic, kind, length, statement number and CRC-32; see `archive`), one record per
//! statement, of kind `effects`: the statement's [`Effect`]s in order, each an op byte
//! (1 append, 2 replace, 3 remove, 4 clear) followed by its rows or positions, values in
//! the compact binary form of the COPY staging file. A statement's record is written
//! before its change takes effect in memory, under the table's write lock, so the log's
//! order is the order of the changes; the statement is acknowledged once the record is on
//! disk (per `--sync`: group commit under `batch` and `always`, no fsync under `off`).
//!
//! Recovery reads the records in order and applies them to an empty table. A torn last
//! record (a statement that was not acknowledged) is cut off; a record whose checksum
//! fails ends the replay there, since later changes name rows by position: what follows it
//! is reported lost with the file and offset, and the table holds the changes before it.
//! After recovery the log is rewritten as one record that appends the recovered rows
//! (written aside, fsynced, renamed), so a log grows with the changes of one run only.
//!
//! Design decision: one record per statement makes a statement all or nothing on disk
//! without commit records, and positions (not keys) name changed rows, so tables without a
//! key are logged the same way.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::archive::{io_err, SyncMode};
use super::spill::{decode_value, encode_value};
use crate::error::{Error, Result};
use crate::table::{Effect, Journal, OwnedEffect};
use crate::types::Value;

const TABLES_DIR: &str = "tables";
const OP_APPEND: u8 = 1;
const OP_REPLACE: u8 = 2;
const OP_REMOVE: u8 = 3;
const OP_CLEAR: u8 = 4;

/// The log file of table `name` under data directory `data_dir`.
pub(crate) fn table_path(data_dir: &Path, name: &str) -> PathBuf {
    let escaped = super::archive::escape_name(name);
    data_dir.join(TABLES_DIR).join(format!("{escaped}.tcqlog"))
}

/// A table's open log.
pub(crate) struct TableLog {
    /// The `CREATE TABLE` statement that made the table (the catalog file's record).
    pub(crate) ddl: String,
    path: PathBuf,
    ncols: usize,
    sync: SyncMode,
    file: Mutex<LogFile>,
    /// Serialises fsyncs; whoever holds it syncs everything written so far.
    sync_lock: tokio::sync::Mutex<()>,
    /// Bytes known to be on disk.
    synced: AtomicU64,
}

struct LogFile {
    file: Arc<File>,
    len: u64,
    next_statement: u64,
}

impl TableLog {
    /// Open the log of table `name` (of `ncols` columns) in `data_dir`, creating it when
    /// `create`; returns the log and the rows it holds. A log left by a table of the same
    /// name that was dropped is replaced when `create`. Damage is logged with the file and
    /// offset. Errors: the file cannot be read or written, or its changes do not fit
    /// together.
    pub(crate) fn open(
        data_dir: &Path,
        name: &str,
        ddl: String,
        ncols: usize,
        sync: SyncMode,
        create: bool,
    ) -> Result<(TableLog, Vec<Vec<Value>>)> {
        let path = table_path(data_dir, name);
        let dir = data_dir.join(TABLES_DIR);
        super::private_fs::create_dir_all(&dir)
            .map_err(|e| io_err(format!("cannot create {}", dir.display()), e))?;
        let rows = if create {
            Vec::new()
        } else {
            recover(&path, ncols)?
        };
        // The log restarts as one record holding the rows (or empty).
        let mut bytes = Vec::new();
        if !rows.is_empty() {
            let payload = encode_effects(&[Effect::Append(&rows)]);
            super::archive::encode_effects_record(1, &payload, &mut bytes);
        }
        let tmp = path.with_extension("tcqlog.tmp");
        let err = |e| io_err(format!("cannot write {}", tmp.display()), e);
        let mut f = super::private_fs::create(&tmp).map_err(err)?;
        f.write_all(&bytes).map_err(err)?;
        f.sync_all().map_err(err)?;
        std::fs::rename(&tmp, &path).map_err(err)?;
        File::open(&dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| io_err(format!("cannot fsync {}", dir.display()), e))?;
        let file = OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(|e| io_err(format!("cannot open {}", path.display()), e))?;
        let len = bytes.len() as u64;
        let log = TableLog {
            ddl,
            path,
            ncols,
            sync,
            file: Mutex::new(LogFile {
                file: Arc::new(file),
                len,
                next_statement: 2,
            }),
            sync_lock: tokio::sync::Mutex::new(()),
            synced: AtomicU64::new(len),
        };
        Ok((log, rows))
    }

    /// Wait until every record written so far is on disk (group commit: one fsync, on a
    /// blocking thread, serves every statement that wrote before it began).
    pub(crate) async fn wait_durable(&self) -> Result<()> {
        let position = self.file.lock().len;
        if self.sync == SyncMode::Off || self.synced.load(Ordering::Acquire) >= position {
            return Ok(());
        }
        let _one = self.sync_lock.lock().await;
        if self.synced.load(Ordering::Acquire) >= position {
            return Ok(());
        }
        let (file, upto) = {
            let f = self.file.lock();
            (f.file.clone(), f.len)
        };
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || file.sync_data())
            .await
            .map_err(|e| Error::Internal(format!("fsync task: {e}")))?
            .map_err(|e| io_err(format!("cannot fsync {}", path.display()), e))?;
        self.synced.fetch_max(upto, Ordering::AcqRel);
        Ok(())
    }

    /// Remove the log (DROP TABLE).
    pub(crate) fn remove(&self) {
        if let Err(e) = std::fs::remove_file(&self.path) {
            tracing::warn!("cannot remove {}: {e}", self.path.display());
        }
    }
}

impl Journal for TableLog {
    fn record(&self, effects: &[Effect<'_>]) -> Result<()> {
        debug_assert!(
            effects.iter().all(|e| match e {
                Effect::Append(rows) => rows.iter().all(|r| r.len() == self.ncols),
                Effect::Replace(c) => c.iter().all(|(_, r)| r.len() == self.ncols),
                _ => true,
            }),
            "a table's rows are as wide as the table"
        );
        let payload = encode_effects(effects);
        let mut f = self.file.lock();
        let mut rec = Vec::with_capacity(payload.len() + 24);
        super::archive::encode_effects_record(f.next_statement, &payload, &mut rec);
        let mut w: &File = &f.file;
        if let Err(e) = w.write_all(&rec) {
            let _ = f.file.set_len(f.len);
            return Err(io_err(format!("cannot write {}", self.path.display()), e));
        }
        f.len += rec.len() as u64;
        f.next_statement += 1;
        Ok(())
    }
}

/// The rows of the table whose log is at `path` (none when there is no file).
fn recover(path: &Path, ncols: usize) -> Result<Vec<Vec<Value>>> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(io_err(format!("cannot read {}", path.display()), e)),
    };
    let (payloads, end, damage) = super::archive::scan_effects(&bytes);
    let mut rows = Vec::new();
    for (offset, payload) in payloads {
        let effects = decode_effects(payload, ncols).map_err(|why| {
            Error::DataCorrupted(format!("{}: offset {offset}: {why}", path.display()))
        })?;
        crate::table::apply_effects(&mut rows, effects).map_err(|e| {
            Error::DataCorrupted(format!("{}: offset {offset}: {e}", path.display()))
        })?;
    }
    if let Some((offset, why)) = damage {
        tracing::warn!(
            "{}: offset {offset}: {why}; the changes from there on ({} bytes) are lost",
            path.display(),
            bytes.len() as u64 - offset
        );
    } else if end < bytes.len() as u64 {
        tracing::warn!(
            "{}: torn tail at offset {end}: {} bytes after the last intact commit record removed (a statement the crash cut short, or one whose commit record is damaged)",
            path.display(),
            bytes.len() as u64 - end
        );
    }
    Ok(rows)
}

fn put_u32(n: usize, out: &mut Vec<u8>) {
    out.extend_from_slice(&(n as u32).to_le_bytes());
}

fn put_row(row: &[Value], out: &mut Vec<u8>) {
    for v in row {
        encode_value(v, out);
    }
}

/// `effects` as a record payload.
fn encode_effects(effects: &[Effect<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    for e in effects {
        match e {
            Effect::Append(rows) => {
                out.push(OP_APPEND);
                put_u32(rows.len(), &mut out);
                rows.iter().for_each(|r| put_row(r, &mut out));
            }
            Effect::Replace(changes) => {
                out.push(OP_REPLACE);
                put_u32(changes.len(), &mut out);
                for (p, r) in changes {
                    put_u32(*p, &mut out);
                    put_row(r, &mut out);
                }
            }
            Effect::Remove(positions) => {
                out.push(OP_REMOVE);
                put_u32(positions.len(), &mut out);
                positions.iter().for_each(|&p| put_u32(p, &mut out));
            }
            Effect::Clear => out.push(OP_CLEAR),
        }
    }
    out
}

/// A record payload back as effects on rows of `ncols` columns.
fn decode_effects(mut b: &[u8], ncols: usize) -> std::result::Result<Vec<OwnedEffect>, String> {
    let r = &mut b;
    let u32_of = |r: &mut &[u8]| -> std::result::Result<usize, String> {
        let mut x = [0u8; 4];
        std::io::Read::read_exact(r, &mut x).map_err(|e| e.to_string())?;
        Ok(u32::from_le_bytes(x) as usize)
    };
    let row_of = |r: &mut &[u8]| -> std::result::Result<Vec<Value>, String> {
        (0..ncols)
            .map(|_| decode_value(r).map_err(|e| e.to_string()))
            .collect()
    };
    let mut out = Vec::new();
    while let Some((&op, rest)) = r.split_first() {
        *r = rest;
        let n = if op == OP_CLEAR { 0 } else { u32_of(r)? };
        // Each entry takes at least a byte: a count beyond the payload is damage.
        if n > r.len() {
            return Err(format!("{n} entries in {} bytes", r.len()));
        }
        out.push(match op {
            OP_APPEND => OwnedEffect::Append(
                (0..n)
                    .map(|_| row_of(r))
                    .collect::<std::result::Result<_, _>>()?,
            ),
            OP_REPLACE => OwnedEffect::Replace(
                (0..n)
                    .map(|_| Ok((u32_of(r)?, row_of(r)?)))
                    .collect::<std::result::Result<_, String>>()?,
            ),
            OP_REMOVE => OwnedEffect::Remove(
                (0..n)
                    .map(|_| u32_of(r))
                    .collect::<std::result::Result<_, _>>()?,
            ),
            OP_CLEAR => OwnedEffect::Clear,
            other => return Err(format!("unknown change {other}")),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(i: i64) -> Vec<Value> {
        vec![Value::Int8(i), Value::Text(format!("r{i}").into())]
    }

    fn rows(log: &TableLog, effects: &[Effect<'_>]) {
        log.record(effects).unwrap();
    }

    #[test]
    fn changes_replay_in_order_and_a_torn_tail_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let (log, held) =
            TableLog::open(dir.path(), "t", String::new(), 2, SyncMode::Off, true).unwrap();
        assert!(held.is_empty());
        let first: Vec<Vec<Value>> = (0..5).map(row).collect();
        rows(&log, &[Effect::Append(&first)]);
        rows(&log, &[Effect::Remove(&[1, 3])]); // 0 2 4
        let r9 = row(9);
        rows(
            &log,
            &[
                Effect::Replace(vec![(1, &r9[..])]),
                Effect::Append(&first[..1]),
            ],
        ); // 0 9 4 0
        let len = std::fs::metadata(table_path(dir.path(), "t"))
            .unwrap()
            .len();
        rows(&log, &[Effect::Clear]);
        drop(log);
        // Cut the last record in half: the clear was never acknowledged.
        let path = table_path(dir.path(), "t");
        let f = OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(len + 10).unwrap();
        let (log, held) =
            TableLog::open(dir.path(), "t", String::new(), 2, SyncMode::Off, false).unwrap();
        assert_eq!(held, vec![row(0), row(9), row(4), row(0)]);
        // The log now holds the rows as one record, and reopens to the same.
        drop(log);
        let (_, again) =
            TableLog::open(dir.path(), "t", String::new(), 2, SyncMode::Off, false).unwrap();
        assert_eq!(again, held);
    }

    #[test]
    fn a_flipped_byte_ends_the_replay_at_its_record() {
        let dir = tempfile::tempdir().unwrap();
        let (log, _) =
            TableLog::open(dir.path(), "t", String::new(), 2, SyncMode::Off, true).unwrap();
        let a: Vec<Vec<Value>> = (0..3).map(row).collect();
        let b: Vec<Vec<Value>> = (3..6).map(row).collect();
        rows(&log, &[Effect::Append(&a)]);
        let path = table_path(dir.path(), "t");
        let second = std::fs::metadata(&path).unwrap().len() as usize;
        rows(&log, &[Effect::Append(&b)]);
        rows(&log, &[Effect::Remove(&[0])]);
        drop(log);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[second + 30] ^= 0x10;
        std::fs::write(&path, bytes).unwrap();
        let (_, held) =
            TableLog::open(dir.path(), "t", String::new(), 2, SyncMode::Off, false).unwrap();
        assert_eq!(held, a, "the changes before the damaged record, none after");
    }
}
