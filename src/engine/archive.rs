//! The data directory: the persisted catalog and the tuples of archived streams.
//!
//! [`DataDir::open`] takes an exclusive lock on `DIR/LOCK` (a second server on the same
//! directory is refused), reads the catalog file and recovers every archived stream's log.
//! Layout (every path below `DIR`; nothing outside it is ever written):
//!
//! ```text
//! LOCK                        flock()ed by the running server; holds its pid
//! catalog                     the catalog: a versioned header, one checksummed record a line
//! streams/<name>/log-<seq>.tcqlog      the open append-only log (and logs not sealed yet)
//! streams/<name>/seg-<seq>.parquet     sealed segments, sorted by time, readable by DuckDB
//! tables/<name>.tcqlog                 a stored table's changes (see `table_log`)
//! ```
//!
//! The catalog file starts with `tcq-catalog 1`; each further line is
//! `<crc32 hex> <kind> <payload>`, where the CRC covers `<kind> <payload>`. Kinds: `stream`,
//! whose payload is the `CREATE STREAM` statement that recreates it, and `table`, the
//! `CREATE TABLE` statement as it was given (backslash, line feed and carriage return
//! escaped as `\\`, `\n`, `\r`); a table's rows are in `tables/<name>.tcqlog`
//! (`table_log`); `role`, a role made by `CREATE ROLE` as JSON (name, LOGIN, SUPERUSER and
//! the password's SCRAM-SHA-256 verifier, never the password); `acl`, a relation's owner and
//! grants as JSON. A reader refuses a kind it does not know rather than starting without it. The file is replaced atomically (written aside, fsynced,
//! renamed) on every CREATE and DROP.
//!
//! A log is a sequence of records. Each has a 24-byte header (`TCQR`, kind, 3 reserved
//! bytes, payload length u32, statement number u64, then the CRC-32 of header bytes 4..20
//! and the payload; all little-endian) and its payload. A `batch` record's payload is one
//! Arrow IPC stream holding one record batch (the stream's columns, numeric and interval as text, plus `tcq_arrival_time` for streams
//! stamped on arrival); a `commit` record (no payload) ends a statement. Recovery keeps the
//! batches of committed statements only, so a COPY cut short by a crash leaves nothing; it
//! truncates a torn tail back to the last commit and skips records whose checksum fails,
//! logging the file and offset of each.
//!
//! Design decision: statements append to the log while they hold the stream's enqueue
//! order (so a statement's records are contiguous and in the order queries see them), and
//! wait for the fsync after releasing it, so one fsync serves every statement that wrote
//! meanwhile (group commit, `--sync batch`). `--sync always` fsyncs each statement while it
//! still holds the order; `--sync off` never fsyncs (a process crash loses nothing written,
//! an operating system crash may lose the last seconds). Every fsync, and the sealing of a
//! full log into a segment, runs on a blocking thread (`spawn_blocking`), never on an async
//! worker: a statement that fills the log rotates to a new one and returns; the old log is
//! sealed meanwhile, and the next group commit fsyncs it before the new one.
//!
//! A back-fill reads the files while ingest goes on. It holds a [`ReplayPin`], which keeps
//! sealed logs next to their segments (a replay that read part of a log reads the rest of
//! it by offset, since the segment is sorted by time) and suspends retention.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::TimestampMicrosecondType;
use arrow_array::RecordBatch;
use parking_lot::Mutex;

use super::archive_codec::encode_ipc;
pub(crate) use super::archive_codec::{
    io_err, ArchiveCodec, HEADER_BYTES, KIND_BATCH, KIND_COMMIT, KIND_EFFECTS, RECORD_MAGIC,
};
use super::log_scan::{self, read_record, FileRange, LogSource, Record};

use crate::error::{Error, Result};
use crate::exec::columns::ColumnBatch;
use crate::exec::Batch;
use crate::types::Column;

/// How a statement's log records reach the disk before its command tag is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SyncMode {
    /// Every statement fsyncs its own records before the next statement may write.
    Always,
    /// Group commit: a statement waits for an fsync that began after it wrote; one fsync
    /// serves every statement that wrote meanwhile. The default.
    #[default]
    Batch,
    /// Never fsync: a killed process loses nothing it acknowledged, an operating system
    /// crash or power loss may lose the last few seconds.
    Off,
}

impl std::str::FromStr for SyncMode {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<SyncMode, String> {
        match s {
            "always" => Ok(SyncMode::Always),
            "batch" => Ok(SyncMode::Batch),
            "off" => Ok(SyncMode::Off),
            other => Err(format!(
                "unknown sync mode \"{other}\": always, batch or off"
            )),
        }
    }
}

/// Where and how the engine keeps its state on disk.
#[derive(Clone, Debug)]
pub struct StorageConfig {
    /// The data directory; created on first use.
    pub dir: PathBuf,
    /// When a statement's records are fsynced.
    pub sync: SyncMode,
    /// Bytes after which an archived stream's log is sealed into a Parquet segment.
    /// Default 64 MiB.
    pub seal_bytes: u64,
    /// Start, and back-fill, although a file of an archived stream cannot be read or is
    /// damaged (`tcqd --ignore-damaged-archive`): the damage is logged and skipped and the
    /// rest served. Default false: such a file stops the start (see [`damaged`]).
    pub ignore_damage: bool,
}

impl StorageConfig {
    /// Storage in `dir` with the default sync mode (batch) and sealing size.
    pub fn new(dir: impl Into<PathBuf>) -> StorageConfig {
        StorageConfig {
            dir: dir.into(),
            sync: SyncMode::Batch,
            seal_bytes: 64 << 20,
            ignore_damage: false,
        }
    }
}

const CATALOG_FILE: &str = "catalog";
const CATALOG_HEADER: &str = "tcq-catalog 1";
const LOCK_FILE: &str = "LOCK";
const STREAMS_DIR: &str = "streams";

/// The rule for every file of an archived stream that cannot be read or is damaged (a log
/// record or a segment whose checksum fails, a batch that does not decode): tcq never
/// answers from part of a stream's data without being told to. At start the error stops
/// tcqd, and a back-fill that meets such a file ends its query with it; `error` (which
/// names the file and offset) gains what to do. `--ignore-damaged-archive`
/// ([`StorageConfig::ignore_damage`]) skips the damage instead, logging it.
pub(crate) fn damaged(error: Error) -> Error {
    let fix = "an archived stream is not served in part: restore the file (or its permissions: tcqd must read it), or move it out of the stream's directory (its tuples are lost), or start tcqd with --ignore-damaged-archive to serve the rest";
    match error {
        Error::Io(m) => Error::Io(format!("{m}; {fix}")),
        Error::DataCorrupted(m) => Error::DataCorrupted(format!("{m}; {fix}")),
        other => other,
    }
}

/// One catalog record, as stored.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum CatalogRecord {
    /// A stream: the `CREATE STREAM` statement that recreates it.
    Stream(String),
    /// A stored table: the `CREATE TABLE` statement that created it (its rows are in its
    /// own log, `table_log`).
    Table(String),
    /// A role made by `CREATE ROLE`, as JSON (its password only as a SCRAM verifier).
    Role(String),
    /// A relation's owner and grants, as JSON.
    Acl(String),
    /// A derived stream, as JSON: `ddl` (its `CREATE STREAM ... AS SELECT`), `created_us`
    /// and `owner` (see `background`).
    Derived(String),
    /// A sink, as JSON: `ddl` (its `CREATE SINK`, secrets included), `created_us`, `owner`.
    Sink(String),
}

/// `text` on one line: `\` as `\\`, line feed as `\n`, carriage return as `\r`.
fn escape_line(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('\n', "\\n")
        .replace('\r', "\\r")
}

/// The text [`escape_line`] escaped.
fn unescape_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// The open data directory: the lock, the catalog file, the streams' directories.
pub(crate) struct DataDir {
    pub(crate) config: StorageConfig,
    /// Held for the life of the server: the flock on LOCK is what refuses a second server.
    _lock: File,
}

impl DataDir {
    /// Create (if needed, mode 0700) and lock `config.dir`, and remove what a crashed
    /// server left in its staging directory. Errors: the directory is open to group or
    /// others (see `private_fs`), another server holds the lock, or the directory cannot be
    /// created or read.
    pub(crate) fn open(config: StorageConfig) -> Result<DataDir> {
        let dir = &config.dir;
        super::private_fs::create_dir_all(dir)
            .map_err(|e| io_err(format!("cannot create data directory {}", dir.display()), e))?;
        super::private_fs::check_private(dir)?;
        super::private_fs::create_dir_all(&dir.join(STREAMS_DIR))
            .map_err(|e| io_err(format!("cannot create data directory {}", dir.display()), e))?;
        let path = dir.join(LOCK_FILE);
        let mut lock = super::private_fs::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| io_err(format!("cannot open {}", path.display()), e))?;
        // SAFETY: flock on a descriptor this function owns; no memory is involved.
        let r = unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if r != 0 {
            let mut holder = String::new();
            let _ = lock.read_to_string(&mut holder);
            return Err(Error::ObjectInUse(format!(
                "data directory {} is in use by another tcqd (pid {}); give another --data-dir",
                dir.display(),
                holder.trim()
            )));
        }
        let _ = lock.set_len(0);
        let _ = writeln!(lock, "{}", std::process::id());
        Ok(DataDir {
            config,
            _lock: lock,
        })
    }

    /// The catalog's records, in order; empty when the file does not exist yet.
    /// Errors: a bad header, a record whose checksum fails, a kind this version does not know.
    pub(crate) fn read_catalog(&self) -> Result<Vec<CatalogRecord>> {
        let path = self.config.dir.join(CATALOG_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
            Err(e) => return Err(io_err(format!("cannot read {}", path.display()), e)),
        };
        let bad = |line: usize, why: &str| {
            Error::DataCorrupted(format!("{} line {line}: {why}", path.display()))
        };
        let mut lines = text.lines();
        if lines.next() != Some(CATALOG_HEADER) {
            return Err(bad(1, "not a tcq catalog of version 1"));
        }
        let mut records = Vec::new();
        for (i, line) in lines.enumerate() {
            let n = i + 2;
            let (crc, body) = line.split_once(' ').ok_or_else(|| bad(n, "no checksum"))?;
            if u32::from_str_radix(crc, 16).ok() != Some(crc32fast::hash(body.as_bytes())) {
                return Err(bad(n, "checksum mismatch"));
            }
            let (kind, payload) = body.split_once(' ').unwrap_or((body, ""));
            match kind {
                "stream" => records.push(CatalogRecord::Stream(payload.to_string())),
                "table" => records.push(CatalogRecord::Table(unescape_line(payload))),
                "role" => records.push(CatalogRecord::Role(payload.to_string())),
                "acl" => records.push(CatalogRecord::Acl(payload.to_string())),
                "derived" => records.push(CatalogRecord::Derived(payload.to_string())),
                "sink" => records.push(CatalogRecord::Sink(payload.to_string())),
                other => {
                    return Err(bad(
                        n,
                        &format!("record kind \"{other}\" is unknown to this tcqd version"),
                    ))
                }
            }
        }
        Ok(records)
    }

    /// Replace the catalog with `records`: written aside, fsynced, renamed over the old one.
    pub(crate) fn write_catalog(&self, records: &[CatalogRecord]) -> Result<()> {
        let mut text = format!("{CATALOG_HEADER}\n");
        for r in records {
            let body = match r {
                CatalogRecord::Stream(ddl) => format!("stream {ddl}"),
                CatalogRecord::Table(ddl) => format!("table {}", escape_line(ddl)),
                // JSON escapes line breaks itself.
                CatalogRecord::Role(json) => format!("role {json}"),
                CatalogRecord::Acl(json) => format!("acl {json}"),
                CatalogRecord::Derived(json) => format!("derived {json}"),
                CatalogRecord::Sink(json) => format!("sink {json}"),
            };
            debug_assert!(!body.contains('\n'), "catalog records are single lines");
            text.push_str(&format!(
                "{:08x} {body}\n",
                crc32fast::hash(body.as_bytes())
            ));
        }
        let dir = &self.config.dir;
        let tmp = dir.join("catalog.tmp");
        let err = |e| io_err(format!("cannot write {}", tmp.display()), e);
        // Only the server's user reads it: the roles' verifiers and sources' credentials
        // are in its records.
        let mut f = super::private_fs::create(&tmp).map_err(err)?;
        f.write_all(text.as_bytes()).map_err(err)?;
        f.sync_all().map_err(err)?;
        std::fs::rename(&tmp, dir.join(CATALOG_FILE)).map_err(err)?;
        sync_dir(dir)
    }

    /// The directory of archived stream `name`.
    pub(crate) fn stream_dir(&self, name: &str) -> PathBuf {
        stream_dir(&self.config.dir, name)
    }
}

/// The directory of archived stream `name` under data directory `data_dir`. Names are
/// kept readable: letters, digits, `_`, `.` and `-` as they are, every other byte as `%XX`.
pub fn stream_dir(data_dir: &Path, name: &str) -> PathBuf {
    data_dir.join(STREAMS_DIR).join(escape_name(name))
}

/// `name` as a file name: letters, digits, `_`, `.` (not first) and `-` as they are, every
/// other byte as `%XX`.
pub(crate) fn escape_name(name: &str) -> String {
    let mut s = String::new();
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b == b'_' || (b == b'.' && !s.is_empty()) || b == b'-' {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// Append a table statement's record (kind `effects`) holding `payload`.
pub(crate) fn encode_effects_record(statement: u64, payload: &[u8], out: &mut Vec<u8>) {
    encode_record(KIND_EFFECTS, statement, payload, out);
}

/// What [`scan_effects`] found: the records' (offset, payload), the offset after the last
/// whole record, and the first damage (offset, what), which ends the scan.
pub(crate) type EffectsScan<'a> = (Vec<(u64, &'a [u8])>, u64, Option<(u64, String)>);

/// The `effects` records of a table's log (see [`EffectsScan`]).
pub(crate) fn scan_effects(bytes: &[u8]) -> EffectsScan<'_> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos < bytes.len() {
        match read_record(&bytes[pos..], &[KIND_BATCH, KIND_COMMIT, KIND_EFFECTS]) {
            Record::Ok {
                kind: KIND_EFFECTS,
                payload,
                len,
                ..
            } => {
                out.push((pos as u64, payload));
                pos += len;
            }
            Record::Ok { .. } => {
                return (
                    out,
                    pos as u64,
                    Some((pos as u64, "not a table record".into())),
                )
            }
            Record::Torn => break,
            Record::Corrupt(why) => return (out, pos as u64, Some((pos as u64, why))),
        }
    }
    (out, pos as u64, None)
}

fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_err(format!("cannot fsync {}", dir.display()), e))
}

/// The `CREATE STREAM` statement that recreates a stream (the catalog's payload).
pub(crate) fn stream_ddl(
    name: &str,
    columns: &[Column],
    ts_col: Option<usize>,
    archived: bool,
    slack_us: i64,
    retention_us: Option<i64>,
    source: &[(String, String)],
) -> String {
    let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let cols: Vec<String> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let ts = if ts_col == Some(i) {
                " TIMESTAMPCOLUMN"
            } else {
                ""
            };
            let ty = c
                .typmod
                .map_or_else(|| c.data_type.name(), |tm| tm.type_name(c.data_type));
            format!("{} {ty}{ts}", quote(&c.name))
        })
        .collect();
    let kind = if archived { "ARCHIVED" } else { "UNARCHIVED" };
    let mut ddl = format!(
        "CREATE STREAM {} ({}) TYPE {kind}",
        quote(name),
        cols.join(", ")
    );
    let mut options = Vec::new();
    if slack_us != 0 {
        options.push(format!("slack = '{slack_us} microseconds'"));
    }
    if let Some(r) = retention_us {
        options.push(format!("retention = '{r} microseconds'"));
    }
    for (k, v) in source {
        options.push(format!("{k} = '{}'", v.replace('\'', "''")));
    }
    if !options.is_empty() {
        ddl.push_str(&format!(" WITH ({})", options.join(", ")));
    }
    ddl
}

/// An archived stream's log and segments.
pub(crate) struct StreamArchive {
    pub(crate) dir: PathBuf,
    pub(crate) codec: ArchiveCodec,
    sync: SyncMode,
    seal_bytes: u64,
    /// Skip (and log) damaged or unreadable files instead of failing ([`damaged`]).
    ignore_damage: bool,
    log: Mutex<OpenLog>,
    /// Serialises fsyncs; whoever holds it syncs everything written so far.
    sync_lock: tokio::sync::Mutex<()>,
    /// Log position (bytes over every log file of this stream) known to be on disk.
    synced: AtomicU64,
    next_statement: AtomicU64,
    /// Back-fills reading the files, and what they keep from being removed meanwhile.
    pins: Mutex<Pins>,
    /// True once DROP STREAM removed the directory. Held while a file is renamed into the
    /// directory or removed from it, so that nothing of this archive touches the
    /// directory after the drop: a stream created again under the same name has it.
    removed: Mutex<bool>,
    /// Tuples of the segments retention removed since the archive was opened.
    retired_tuples: AtomicU64,
    /// The source position of the newest commit record that carries one.
    source_position: Mutex<Option<Vec<u8>>>,
}

struct OpenLog {
    seq: u64,
    file: Arc<File>,
    /// Bytes in the current log file.
    len: u64,
    /// Bytes in the current log file up to the end of its last commit record.
    committed: u64,
    /// Log position of the current file's first byte.
    base: u64,
    /// Rotated-out log files not fsynced yet (`--sync batch`): the next group commit syncs
    /// them before the current file, since their statements wait on positions before it.
    unsynced: Vec<Arc<File>>,
}

/// Back-fills in progress. While one reads, a sealed log is kept next to its segment (a
/// replay that read part of the log goes on reading it by offset) and retention removes
/// nothing; the last back-fill to end removes the logs kept.
#[derive(Default)]
struct Pins {
    count: usize,
    kept_logs: Vec<u64>,
}

/// A place in an archive's logs: byte `offset` of log file `seq` (a commit boundary when
/// it comes from [`StreamArchive::committed_at`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct LogPos {
    pub(crate) seq: u64,
    pub(crate) offset: u64,
}

/// Keeps a stream's sealed logs while a back-fill reads them (see [`Pins`]).
pub(crate) struct ReplayPin(Arc<StreamArchive>);

impl Drop for ReplayPin {
    fn drop(&mut self) {
        let removed = self.0.removed.lock();
        let mut pins = self.0.pins.lock();
        pins.count -= 1;
        if pins.count == 0 {
            let kept = std::mem::take(&mut pins.kept_logs);
            if *removed {
                return;
            }
            for seq in kept {
                let path = self.0.dir.join(log_name(seq));
                if let Err(e) = std::fs::remove_file(&path) {
                    tracing::warn!("cannot remove sealed log {}: {e}", path.display());
                }
            }
        }
    }
}

fn log_name(seq: u64) -> String {
    format!("log-{seq:08}.tcqlog")
}

fn segment_name(seq: u64) -> String {
    format!("seg-{seq:08}.parquet")
}

/// The `seq` of a file named `<prefix><seq><suffix>`.
fn seq_of(name: &str, prefix: &str, suffix: &str) -> Option<u64> {
    name.strip_prefix(prefix)?
        .strip_suffix(suffix)?
        .parse()
        .ok()
}

/// What [`scan_log`] found in a log held in memory (tests; the server reads logs through
/// [`log_scan`](super::log_scan) in bounded memory).
#[cfg(test)]
pub(crate) struct LogScan {
    /// The committed batches, in order.
    pub(crate) batches: Vec<RecordBatch>,
    /// Offset after the last commit record: everything beyond is a torn or unfinished tail.
    pub(crate) committed_len: u64,
    /// Damage found: (offset, what).
    pub(crate) damage: Vec<(u64, String)>,
    /// The highest statement number seen.
    pub(crate) last_statement: u64,
}

/// Read a log's committed batches (see [`log_scan`](super::log_scan) for the rules).
#[cfg(test)]
pub(crate) fn scan_log(bytes: &[u8]) -> LogScan {
    let mut src = bytes;
    let survey = log_scan::survey(&mut src).expect("bytes in memory");
    let mut scan = LogScan {
        batches: vec![],
        committed_len: survey.committed_len,
        damage: survey.damage.clone(),
        last_statement: survey.last_statement,
    };
    let mut damage = vec![];
    log_scan::for_each_committed::<_, std::io::Error>(
        &mut src,
        &survey,
        &|e| e,
        &mut |at, why| damage.push((at, why)),
        &mut |rb| {
            scan.batches.push(rb);
            Ok(true)
        },
    )
    .expect("bytes in memory");
    scan.damage.extend(damage);
    scan
}

fn encode_record(kind: u8, statement: u64, payload: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(RECORD_MAGIC);
    out.extend_from_slice(&[kind, 0, 0, 0]);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&statement.to_le_bytes());
    let mut h = crc32fast::Hasher::new();
    h.update(&out[start + 4..start + 20]);
    h.update(payload);
    out.extend_from_slice(&h.finalize().to_le_bytes());
    out.extend_from_slice(payload);
}

/// What recovery found for one stream, for the server log.
#[derive(Debug, Default)]
pub(crate) struct Recovered {
    /// Committed tuples on disk.
    pub(crate) tuples: u64,
    /// The earliest and latest tuple time.
    pub(crate) first_us: Option<i64>,
    pub(crate) last_us: Option<i64>,
    /// The newest source position (file sequence number, position): from the last commit
    /// record that carries one, or from a sealed segment's footer.
    pub(crate) source_position: Option<(u64, Vec<u8>)>,
}

impl StreamArchive {
    /// Open (creating if needed) the archive of a stream in `dir`: seal every complete
    /// older log, truncate the newest log's torn tail, and open it for appending. Damage is
    /// logged with the file and offset.
    pub(crate) fn open(
        dir: PathBuf,
        codec: ArchiveCodec,
        config: &StorageConfig,
    ) -> Result<(StreamArchive, Recovered)> {
        super::private_fs::create_dir_all(&dir)
            .map_err(|e| io_err(format!("cannot create {}", dir.display()), e))?;
        let files = list_dir(&dir)?;
        let mut logs: Vec<u64> = Vec::new();
        let mut segments: Vec<u64> = Vec::new();
        for name in &files {
            if let Some(s) = seq_of(name, "seg-", ".parquet") {
                segments.push(s);
            } else if let Some(s) = seq_of(name, "log-", ".tcqlog") {
                logs.push(s);
            } else if name.ends_with(".tmp") {
                // A segment whose sealing a crash interrupted: its log is still there.
                let _ = std::fs::remove_file(dir.join(name));
            }
        }
        logs.sort_unstable();
        let mut recovered = Recovered::default();
        let mut last_statement = 0;
        let mut seq = segments.iter().chain(&logs).max().map_or(1, |s| s + 1);
        for &s in &logs {
            let path = dir.join(log_name(s));
            if segments.contains(&s) {
                // Sealed, and the crash came before the log was removed.
                let _ = std::fs::remove_file(&path);
                continue;
            }
            let lost = config.ignore_damage.then_some("; the record is lost");
            let (mut src, survey) = survey_log(&path, 0, None, lost).map_err(damaged)?;
            if let (false, Some((offset, why))) = (config.ignore_damage, survey.damage.first()) {
                return Err(damaged(Error::DataCorrupted(format!(
                    "{}: offset {offset}: {why}",
                    path.display()
                ))));
            }
            let size = src.len();
            if survey.committed_len < size {
                tracing::warn!(
                    "{}: torn tail at offset {}: {} bytes after the last intact commit record removed (a statement the crash cut short, or one whose commit record is damaged)",
                    path.display(),
                    survey.committed_len,
                    size - survey.committed_len
                );
                let f = OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .map_err(|e| io_err(format!("cannot open {}", path.display()), e))?;
                f.set_len(survey.committed_len)
                    .and_then(|_| f.sync_all())
                    .map_err(|e| io_err(format!("cannot truncate {}", path.display()), e))?;
                src.truncate(survey.committed_len);
            }
            last_statement = last_statement.max(survey.last_statement);
            if let Some(p) = &survey.last_position {
                note_position(&mut recovered, s, p);
            }
            decode_log(&path, &mut src, &survey, config.ignore_damage, &mut |rb| {
                note_times(&codec, &rb, &mut recovered);
                Ok(true)
            })
            .map_err(damaged)?;
            seq = seq.max(s);
        }
        for &s in &segments {
            let path = dir.join(segment_name(s));
            if let Some(p) = super::segment::source_position(&path) {
                note_position(&mut recovered, s, &p);
            }
            match super::segment::time_range_at(&path, codec.time_column()) {
                Ok(Some((rows, lo, hi))) => {
                    recovered.tuples += rows;
                    recovered.first_us = Some(recovered.first_us.map_or(lo, |f| f.min(lo)));
                    recovered.last_us = Some(recovered.last_us.map_or(hi, |l| l.max(hi)));
                }
                Ok(None) => {}
                Err(e) if config.ignore_damage => {
                    tracing::warn!("{e}; the segment is kept but its tuples are not served")
                }
                Err(e) => return Err(damaged(e)),
            }
        }
        // Appends go to the newest log (a fresh one when every log is sealed).
        let seq = if logs.last().is_some_and(|&l| !segments.contains(&l)) {
            *logs.last().expect("checked")
        } else {
            seq
        };
        let path = dir.join(log_name(seq));
        let file = super::private_fs::options()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| io_err(format!("cannot open {}", path.display()), e))?;
        let len = file
            .metadata()
            .map_err(|e| io_err(format!("cannot stat {}", path.display()), e))?
            .len();
        sync_dir(&dir)?;
        let archive = StreamArchive {
            dir,
            codec,
            sync: config.sync,
            seal_bytes: config.seal_bytes,
            ignore_damage: config.ignore_damage,
            log: Mutex::new(OpenLog {
                seq,
                file: Arc::new(file),
                len,
                committed: len,
                base: 0,
                unsynced: Vec::new(),
            }),
            sync_lock: tokio::sync::Mutex::new(()),
            synced: AtomicU64::new(len),
            next_statement: AtomicU64::new(last_statement + 1),
            pins: Mutex::new(Pins::default()),
            removed: Mutex::new(false),
            retired_tuples: AtomicU64::new(0),
            source_position: Mutex::new(recovered.source_position.take().map(|(_, p)| p)),
        };
        // Older logs left unsealed by a crash are sealed now.
        for &s in logs.iter().filter(|&&s| s != seq && !segments.contains(&s)) {
            archive.seal(s)?;
        }
        // So is the newest when it is already full (a crash before its sealing began, or a
        // smaller --seal-bytes now), rather than at the next write.
        if let Some(s) = archive.rotate_if_full()? {
            archive.seal(s)?;
        }
        Ok((archive, recovered))
    }

    /// A new statement number; its batches count only once [`StreamArchive::commit`] wrote.
    pub(crate) fn begin(&self) -> u64 {
        self.next_statement.fetch_add(1, Ordering::Relaxed)
    }

    /// Append one batch of `statement`. The caller holds the stream's enqueue order.
    pub(crate) fn append(&self, statement: u64, batch: &Batch) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let rb = self.codec.to_record_batch(batch)?;
        let payload = encode_ipc(&rb)?;
        let mut rec = Vec::with_capacity(payload.len() + HEADER_BYTES);
        encode_record(KIND_BATCH, statement, &payload, &mut rec);
        self.write(&rec).map(|_| ())
    }

    /// End `statement`: after this record is on disk, its batches survive a crash. Returns
    /// the log position to wait for with [`StreamArchive::wait_durable`] (under
    /// `--sync always` the caller waits before it releases the stream's enqueue order).
    #[cfg(test)]
    pub(crate) fn commit(&self, statement: u64) -> Result<u64> {
        self.commit_with(statement, &[])
    }

    /// [`StreamArchive::commit`] with `position` (a source's place after the statement's
    /// tuples; empty for none) as the commit record's payload: the tuples and the position
    /// count together or not at all.
    pub(crate) fn commit_with(&self, statement: u64, position: &[u8]) -> Result<u64> {
        let mut rec = Vec::with_capacity(HEADER_BYTES + position.len());
        encode_record(KIND_COMMIT, statement, position, &mut rec);
        let end = self.write(&rec)?;
        let mut log = self.log.lock();
        log.committed = log.len;
        drop(log);
        if !position.is_empty() {
            *self.source_position.lock() = Some(position.to_vec());
        }
        Ok(end)
    }

    /// The position in the last commit record that carries one (recovered at start, or
    /// written since): where the stream's source resumes.
    pub(crate) fn source_position(&self) -> Option<Vec<u8>> {
        self.source_position.lock().clone()
    }

    /// The sync mode this archive was opened with.
    pub(crate) fn sync_mode(&self) -> SyncMode {
        self.sync
    }

    /// The end of the last committed statement in the open log.
    pub(crate) fn committed_at(&self) -> LogPos {
        let log = self.log.lock();
        LogPos {
            seq: log.seq,
            offset: log.committed,
        }
    }

    /// Keep sealed logs (and every segment) until the returned pin is dropped.
    pub(crate) fn pin(self: &Arc<Self>) -> ReplayPin {
        self.pins.lock().count += 1;
        ReplayPin(self.clone())
    }

    /// Hand the committed tuples from `from_us` on between log positions `from` and `to`
    /// to `each`, in batches, in order (both positions from [`StreamArchive::committed_at`], `from` not after `to`;
    /// the caller holds a [`ReplayPin`] taken before `from` was read). Whole files are read
    /// as their sealed segment when there is one (only the row groups reaching `from_us`,
    /// one batch of at most 16 Ki rows at a time), parts of files from their log. `each`
    /// returns false to stop the reading; the result is `Ok(false)` then. Blocking file
    /// reads: call it off the async workers. Errors: a file that cannot be read or is
    /// damaged ([`damaged`]; batches before it have been handed over); with
    /// `ignore_damage` such a file is logged and skipped instead (from the damage on, for
    /// a segment that fails part way).
    pub(crate) fn read_range(
        &self,
        from: LogPos,
        to: LogPos,
        from_us: Option<i64>,
        each: &mut dyn FnMut(ColumnBatch) -> bool,
    ) -> Result<bool> {
        // Only tuples from `from_us` on reach the query: a log is in arrival order, so its
        // batches are filtered row by row (a segment's row groups before it are not read).
        let each = &mut |b: ColumnBatch| match from_us {
            Some(from) => b.since(from).is_none_or(&mut *each),
            None => each(b),
        };
        let files = self.files_pinned();
        for (seq, has_segment, has_log) in files {
            if seq < from.seq || seq > to.seq {
                continue;
            }
            let start = if seq == from.seq { from.offset } else { 0 };
            let stop = (seq == to.seq).then_some(to.offset);
            let read = if start == 0 && stop.is_none() && has_segment {
                super::segment::read(
                    &self.dir.join(segment_name(seq)),
                    &self.codec,
                    from_us,
                    each,
                )
            } else if has_log {
                self.read_log_range(seq, start, stop, each)
            } else {
                continue;
            };
            match read {
                Ok(true) => {}
                Ok(false) => return Ok(false),
                Err(e) if self.ignore_damage => tracing::warn!("back-fill skips a file: {e}"),
                Err(e) => return Err(damaged(e)),
            }
        }
        Ok(true)
    }

    /// Every file sequence number with (segment exists, log exists), oldest first.
    fn files_pinned(&self) -> Vec<(u64, bool, bool)> {
        let names = list_dir(&self.dir).unwrap_or_default();
        let mut files: Vec<(u64, bool, bool)> = Vec::new();
        for n in &names {
            let (seq, seg) = match (seq_of(n, "seg-", ".parquet"), seq_of(n, "log-", ".tcqlog")) {
                (Some(s), _) => (s, true),
                (None, Some(s)) => (s, false),
                _ => continue,
            };
            match files.iter_mut().find(|f| f.0 == seq) {
                Some(f) if seg => f.1 = true,
                Some(f) => f.2 = true,
                None => files.push((seq, seg, !seg)),
            }
        }
        files.sort_unstable_by_key(|f| f.0);
        files
    }

    fn read_log_range(
        &self,
        seq: u64,
        start: u64,
        stop: Option<u64>,
        each: &mut dyn FnMut(ColumnBatch) -> bool,
    ) -> Result<bool> {
        let path = self.dir.join(log_name(seq));
        // Damage was logged when the server started; a replay does not log it again.
        let (mut src, survey) = survey_log(&path, start, stop, None)?;
        if let (false, Some((offset, why))) = (self.ignore_damage, survey.damage.first()) {
            return Err(Error::DataCorrupted(format!(
                "{}: offset {}: {why}",
                path.display(),
                start + offset
            )));
        }
        decode_log(&path, &mut src, &survey, self.ignore_damage, &mut |rb| {
            Ok(each(self.codec.decode(&rb)?))
        })
    }

    /// Write `bytes` at the end of the log; returns the log position after them. A failed
    /// write is cut off again, so the log never holds half a record before a good one.
    fn write(&self, bytes: &[u8]) -> Result<u64> {
        let mut log = self.log.lock();
        let mut f: &File = &log.file;
        if let Err(e) = f.write_all(bytes) {
            let _ = log.file.set_len(log.len);
            return Err(io_err(
                format!("cannot write the log in {}", self.dir.display()),
                e,
            ));
        }
        log.len += bytes.len() as u64;
        Ok(log.base + log.len)
    }

    /// Wait until the log is on disk up to `position` (group commit: one fsync covers every
    /// statement written before it began). The fsync runs on a blocking thread, never on an
    /// async worker.
    pub(crate) async fn wait_durable(&self, position: u64) -> Result<()> {
        if self.sync == SyncMode::Off || self.synced.load(Ordering::Acquire) >= position {
            return Ok(());
        }
        let _one = self.sync_lock.lock().await;
        if self.synced.load(Ordering::Acquire) >= position {
            return Ok(());
        }
        // One look at the log: the files to sync and the position they cover.
        let (files, rotated, upto) = {
            let log = self.log.lock();
            let mut files = log.unsynced.clone();
            files.push(log.file.clone());
            (files, log.unsynced.len(), log.base + log.len)
        };
        let dir = self.dir.clone();
        tokio::task::spawn_blocking(move || files.iter().try_for_each(|f| f.sync_data()))
            .await
            .map_err(|e| Error::Internal(format!("fsync task: {e}")))?
            .map_err(|e| io_err(format!("cannot fsync the log in {}", dir.display()), e))?;
        self.log.lock().unsynced.drain(..rotated);
        self.synced.fetch_max(upto, Ordering::AcqRel);
        Ok(())
    }

    /// After a statement committed: when the log has outgrown `seal_bytes`, start a new log
    /// and return the old one's sequence number, to be sealed with [`StreamArchive::seal`]
    /// off the async workers. The caller holds the enqueue order, so no statement is
    /// between its records. Nothing here fsyncs: under `--sync batch` the old file is
    /// synced by the next group commit, before the new one.
    pub(crate) fn rotate_if_full(&self) -> Result<Option<u64>> {
        let mut log = self.log.lock();
        if log.len < self.seal_bytes {
            return Ok(None);
        }
        let seq = log.seq + 1;
        let path = self.dir.join(log_name(seq));
        let file = super::private_fs::options()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| io_err(format!("cannot create {}", path.display()), e))?;
        let old = std::mem::replace(&mut log.file, Arc::new(file));
        if self.sync == SyncMode::Batch && self.synced.load(Ordering::Acquire) < log.base + log.len
        {
            log.unsynced.push(old);
        }
        let old_seq = log.seq;
        log.base += log.len;
        log.len = 0;
        log.committed = 0;
        log.seq = seq;
        Ok(Some(old_seq))
    }

    /// Tuples of the sealed segments retention removed since the archive was opened.
    pub(crate) fn retired_tuples(&self) -> u64 {
        self.retired_tuples.load(Ordering::Relaxed)
    }

    /// Remove every sealed segment whose latest tuple is before `before_us` (retention).
    /// Nothing is removed while a back-fill reads (the next sealing applies it).
    pub(crate) fn drop_segments_before(&self, before_us: i64) {
        let removed = self.removed.lock();
        let pins = self.pins.lock();
        if pins.count > 0 || *removed {
            return;
        }
        let col = self.codec.time_column();
        for f in self.files() {
            let ArchiveFile::Segment(seq) = f else {
                continue;
            };
            let path = self.dir.join(segment_name(seq));
            let range = match super::segment::time_range_at(&path, col) {
                Err(damage) => {
                    // A damaged segment (not served, its tuples not counted) ages out too,
                    // when its footer still tells its time range.
                    if let Ok(Some((_, _, hi))) = super::segment::footer_time_range(&path, col) {
                        if hi < before_us && std::fs::remove_file(&path).is_ok() {
                            tracing::info!("retention: removed {} ({damage})", path.display());
                        }
                    }
                    continue;
                }
                Ok(range) => range,
            };
            match range {
                Some((rows, _, hi)) if hi < before_us => {
                    // Counted before the file goes, so that whoever sees the file gone also
                    // sees its tuples no longer counted.
                    self.retired_tuples.fetch_add(rows, Ordering::Relaxed);
                    match std::fs::remove_file(&path) {
                        Ok(()) => tracing::info!(
                            "retention: removed {} ({rows} tuples, the latest at {})",
                            path.display(),
                            crate::time::format_timestamp(hi)
                        ),
                        Err(e) => {
                            self.retired_tuples.fetch_sub(rows, Ordering::Relaxed);
                            tracing::warn!("retention: cannot remove {}: {e}", path.display())
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// Seal log `seq` into segment `seq`: its committed batches sorted by time, written
    /// aside, fsynced, renamed; then the log is removed (or kept until the last back-fill
    /// reading ends). A crash at any point leaves the log, the segment or both (recovery
    /// removes a log whose segment exists). Blocking: call it off the async workers.
    pub(crate) fn seal(&self, seq: u64) -> Result<()> {
        let log = self.dir.join(log_name(seq));
        let (mut src, survey) = survey_log(&log, 0, None, Some("; the record is lost"))?;
        let segment = self.dir.join(segment_name(seq));
        let written = if survey.batches.is_empty() {
            None
        } else {
            // A log is one sorted run unless it is much larger than the sealing size (one
            // large statement): then runs of about `seal_bytes` of log each (counted in
            // batches), so that sealing holds one run's batches, never the whole log.
            // Runs whose times overlap (a large statement not in time order) are then
            // merged into one time-ordered segment, a batch per run at a time.
            let runs = (survey.batch_bytes / self.seal_bytes.max(1)).max(1) as usize;
            let per_run = survey.batches.len().div_ceil(runs);
            let runs_path = if runs > 1 {
                self.dir.join(format!("seg-{seq:08}.runs.parquet"))
            } else {
                segment.clone()
            };
            let mut w = super::segment::SegmentWriter::new(&runs_path, &self.codec)?;
            w.set_source_position(survey.last_position.clone());
            let mut run: Vec<RecordBatch> = Vec::new();
            decode_log(&log, &mut src, &survey, self.ignore_damage, &mut |rb| {
                run.push(rb);
                if run.len() == per_run {
                    w.write_run(&std::mem::take(&mut run))?;
                }
                Ok(true)
            })?;
            if !run.is_empty() {
                w.write_run(&run)?;
            }
            drop(run);
            if w.runs_overlap() {
                let runs = w.runs().to_vec();
                let runs_tmp = w.finish()?;
                let mut merged = super::segment::SegmentWriter::new(&segment, &self.codec)?;
                merged.set_source_position(survey.last_position.clone());
                let merged_tmp = merged.tmp_path().to_path_buf();
                let done = super::segment::merge_runs(&runs_tmp, &runs, &mut merged)
                    .and_then(|()| merged.finish());
                let _ = std::fs::remove_file(&runs_tmp);
                if done.is_err() {
                    // The log stays; the next sealing or start tries again.
                    let _ = std::fs::remove_file(&merged_tmp);
                }
                Some(done?)
            } else {
                Some(w.finish()?)
            }
        };
        {
            let removed = self.removed.lock();
            if *removed {
                // Dropped while sealing: the directory may be a new stream's by now.
                if let Some(tmp) = written {
                    let _ = std::fs::remove_file(tmp);
                }
                return Ok(());
            }
            if let Some(tmp) = written {
                std::fs::rename(&tmp, &segment)
                    .map_err(|e| io_err(format!("cannot rename {}", tmp.display()), e))?;
            }
            let mut pins = self.pins.lock();
            if pins.count > 0 {
                pins.kept_logs.push(seq);
                return Ok(());
            }
            std::fs::remove_file(&log)
                .map_err(|e| io_err(format!("cannot remove {}", log.display()), e))?;
        }
        sync_dir(&self.dir)
    }

    /// Bytes of this stream's files on disk.
    pub(crate) fn disk_bytes(&self) -> u64 {
        std::fs::read_dir(&self.dir)
            .map(|d| {
                d.filter_map(|e| e.ok()?.metadata().ok())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0)
    }

    /// The archive's files, oldest first (see [`archive_files`]).
    pub(crate) fn files(&self) -> Vec<ArchiveFile> {
        archive_files(&self.dir).unwrap_or_else(|e| {
            tracing::warn!("{e}");
            vec![]
        })
    }

    /// Remove every file of this archive (DROP STREAM). A sealing or a back-fill still
    /// running leaves the directory alone from now on. Blocking file removal.
    pub(crate) fn remove(&self) {
        let mut removed = self.removed.lock();
        *removed = true;
        if let Err(e) = std::fs::remove_dir_all(&self.dir) {
            tracing::warn!("cannot remove {}: {e}", self.dir.display());
        }
    }
}

/// Survey log `path` between bytes `start` and `stop` (its end when `None`) in bounded
/// memory (see [`log_scan`]); damage is logged with the file and offset, `lost` appended
/// (not logged when `lost` is `None`). Errors: the file cannot be read.
fn survey_log(
    path: &Path,
    start: u64,
    stop: Option<u64>,
    lost: Option<&str>,
) -> Result<(FileRange, log_scan::Survey)> {
    let read_err = |e| io_err(format!("cannot read {}", path.display()), e);
    let file = File::open(path).map_err(read_err)?;
    let mut src = FileRange::new(file, start, stop).map_err(read_err)?;
    let survey = log_scan::survey(&mut src).map_err(read_err)?;
    let Some(lost) = lost else {
        return Ok((src, survey));
    };
    for (offset, why) in &survey.damage {
        tracing::warn!("{}: offset {}: {why}{lost}", path.display(), start + offset);
    }
    Ok((src, survey))
}

/// Hand the committed batches of a surveyed log to `each`, one at a time (see
/// [`log_scan::for_each_committed`]). A batch that does not decode is logged and skipped
/// when `ignore_damage`, and otherwise an error (XX001, naming the file and offset) once
/// the batches after it have been handed over.
fn decode_log(
    path: &Path,
    src: &mut FileRange,
    survey: &log_scan::Survey,
    ignore_damage: bool,
    each: &mut dyn FnMut(RecordBatch) -> Result<bool>,
) -> Result<bool> {
    let base = src.start();
    let mut first_damage = None;
    let read = log_scan::for_each_committed(
        src,
        survey,
        &|e| io_err(format!("cannot read {}", path.display()), e),
        &mut |at, why| {
            let at = at + base;
            if ignore_damage {
                tracing::warn!("{}: offset {at}: {why}", path.display())
            } else if first_damage.is_none() {
                first_damage = Some(format!("{}: offset {at}: {why}", path.display()));
            }
        },
        each,
    )?;
    match first_damage {
        Some(m) => Err(Error::DataCorrupted(m)),
        None => Ok(read),
    }
}

/// Keep `position` of file `seq` when it is the newest seen.
fn note_position(r: &mut Recovered, seq: u64, position: &[u8]) {
    if r.source_position.as_ref().is_none_or(|(s, _)| *s <= seq) {
        r.source_position = Some((seq, position.to_vec()));
    }
}

fn note_times(codec: &ArchiveCodec, rb: &RecordBatch, r: &mut Recovered) {
    let Some(t) = rb
        .column(codec.time_column())
        .as_primitive_opt::<TimestampMicrosecondType>()
    else {
        return;
    };
    r.tuples += t.len() as u64;
    for &v in t.values().iter() {
        r.first_us = Some(r.first_us.map_or(v, |f| f.min(v)));
        r.last_us = Some(r.last_us.map_or(v, |l| l.max(v)));
    }
}

fn list_dir(dir: &Path) -> Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| io_err(format!("cannot list {}", dir.display()), e))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    names.sort();
    Ok(names)
}

/// One file of an archive: a sealed segment or a log, by sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ArchiveFile {
    /// `seg-<seq>.parquet`.
    Segment(u64),
    /// `log-<seq>.tcqlog`.
    Log(u64),
}

impl ArchiveFile {
    fn seq(self) -> u64 {
        match self {
            ArchiveFile::Segment(s) | ArchiveFile::Log(s) => s,
        }
    }
}

/// The files of the archive in `dir`, oldest first: segments and logs by sequence number
/// (a log whose segment exists, left by a crash during sealing, is left out).
pub(crate) fn archive_files(dir: &Path) -> Result<Vec<ArchiveFile>> {
    let names = list_dir(dir)?;
    let segments: Vec<u64> = names
        .iter()
        .filter_map(|n| seq_of(n, "seg-", ".parquet"))
        .collect();
    let mut files: Vec<ArchiveFile> = names
        .iter()
        .filter_map(|n| {
            seq_of(n, "seg-", ".parquet")
                .map(ArchiveFile::Segment)
                .or_else(|| {
                    seq_of(n, "log-", ".tcqlog")
                        .filter(|s| !segments.contains(s))
                        .map(ArchiveFile::Log)
                })
        })
        .collect();
    files.sort_by_key(|f| f.seq());
    Ok(files)
}

/// The committed batches of one archive file in `dir`. A segment is read only in the row
/// groups whose time statistics reach `from_us`; a log is read whole (uncommitted and
/// damaged records left out and logged).
pub(crate) fn read_file(
    dir: &Path,
    codec: &ArchiveCodec,
    file: ArchiveFile,
    from_us: Option<i64>,
) -> Result<Vec<ColumnBatch>> {
    match file {
        ArchiveFile::Segment(seq) => {
            let mut out = Vec::new();
            super::segment::read(&dir.join(segment_name(seq)), codec, from_us, &mut |b| {
                out.push(b);
                true
            })?;
            Ok(out)
        }
        ArchiveFile::Log(seq) => {
            let path = dir.join(log_name(seq));
            if !path.exists() {
                return Ok(vec![]);
            }
            let (mut src, survey) = survey_log(&path, 0, None, Some(""))?;
            let mut out = Vec::new();
            decode_log(&path, &mut src, &survey, true, &mut |rb| {
                out.push(codec.decode(&rb)?);
                Ok(true)
            })?;
            Ok(out)
        }
    }
}

/// Every committed batch of the archive of a stream with `columns` and TIMESTAMPCOLUMN
/// `ts_col` in `dir` ([`stream_dir`]), oldest file first: what a back-fill from the
/// beginning replays. For tools and tests; the server must not be writing.
pub fn read_archive(
    dir: &Path,
    columns: &[Column],
    ts_col: Option<usize>,
) -> Result<Vec<ColumnBatch>> {
    let codec = ArchiveCodec::new(columns, ts_col);
    let mut out = Vec::new();
    for f in archive_files(dir)? {
        out.extend(read_file(dir, &codec, f, None)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::columns::ColumnBatchBuilder;
    use crate::types::{parse_value, DataType, Value};

    fn codec() -> ArchiveCodec {
        ArchiveCodec::new(
            &[
                Column::new("ts", DataType::Timestamp),
                Column::new("x", DataType::Numeric),
            ],
            Some(0),
        )
    }

    fn batch(times: &[i64]) -> Batch {
        let mut b = ColumnBatchBuilder::new(&[DataType::Timestamp, DataType::Numeric], 4);
        for &t in times {
            let x = parse_value(&format!("{t}.25"), DataType::Numeric).unwrap();
            b.push_row(&mut [Value::Timestamp(t), x], t);
        }
        Batch::Columns(b.finish())
    }

    /// A log of statements 1 (two batches) and 2 (one batch), committed, then statement 3
    /// without its commit.
    fn log() -> (Vec<u8>, Vec<usize>) {
        let c = codec();
        let mut out = Vec::new();
        let mut starts = Vec::new();
        for (stmt, times, commit) in [
            (1, vec![1, 2], false),
            (1, vec![3], true),
            (2, vec![4], true),
            (3, vec![5], false),
        ] {
            starts.push(out.len());
            let payload = encode_ipc(&c.to_record_batch(&batch(&times)).unwrap()).unwrap();
            encode_record(KIND_BATCH, stmt, &payload, &mut out);
            if commit {
                starts.push(out.len());
                encode_record(KIND_COMMIT, stmt, &[], &mut out);
            }
        }
        (out, starts)
    }

    fn times(scan: &LogScan) -> Vec<i64> {
        scan.batches
            .iter()
            .flat_map(|rb| codec().decode(rb).unwrap().times.to_vec())
            .collect()
    }

    #[test]
    fn a_segment_is_handed_over_a_batch_at_a_time_and_reading_stops_when_asked() {
        let c = codec();
        let dir = std::env::temp_dir().join(format!("tcq-seg-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(segment_name(1));
        // 40,000 rows: three batches of at most 16 Ki rows each come out.
        let times: Vec<i64> = (0..40_000).collect();
        let rb = c.to_record_batch(&batch(&times)).unwrap();
        super::super::segment::write(&path, &c, &[rb]).unwrap();
        let mut sizes = Vec::new();
        let whole = super::super::segment::read(&path, &c, None, &mut |b| {
            sizes.push(b.len());
            true
        });
        assert!(whole.unwrap());
        assert_eq!(sizes, [16_384, 16_384, 7_232]);
        let mut first = 0;
        let stopped = super::super::segment::read(&path, &c, None, &mut |b| {
            first += b.len();
            false
        });
        assert!(!stopped.unwrap(), "the reader reports that it was stopped");
        assert_eq!(
            first, 16_384,
            "nothing is read past the batch that stopped it"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn only_committed_statements_are_read_and_the_unfinished_tail_is_marked() {
        let (bytes, starts) = log();
        let scan = scan_log(&bytes);
        assert_eq!(times(&scan), [1, 2, 3, 4]);
        assert_eq!(
            scan.committed_len as usize, starts[5],
            "the tail starts at statement 3"
        );
        assert_eq!(scan.last_statement, 3);
        assert!(scan.damage.is_empty());
        // Numeric values come back from their text.
        let b = codec().decode(&scan.batches[0]).unwrap();
        assert_eq!(b.views()[1].value(1).to_text().as_deref(), Some("2.25"));
    }

    #[test]
    fn a_torn_record_ends_the_scan_at_the_last_commit() {
        let (bytes, starts) = log();
        for cut in [starts[1] + 3, starts[2] + 30, starts[4] - 1] {
            let scan = scan_log(&bytes[..cut]);
            let expected: &[i64] = if cut > starts[2] { &[1, 2, 3] } else { &[] };
            assert_eq!(times(&scan), expected, "cut at {cut}");
            assert!(scan.damage.is_empty(), "a torn tail is not damage");
        }
    }

    #[test]
    fn a_flipped_byte_loses_its_record_only() {
        let (mut bytes, starts) = log();
        // Inside statement 2's batch: statement 1 and the rest survive.
        bytes[starts[3] + 60] ^= 0x40;
        let scan = scan_log(&bytes);
        assert_eq!(times(&scan), [1, 2, 3]);
        assert_eq!(scan.damage[0].0 as usize, starts[3]);
        assert_eq!(
            scan.damage[0].1,
            format!(
                "checksum mismatch; {} bytes skipped to the next intact record",
                starts[4] - starts[3]
            )
        );
    }

    #[test]
    fn a_batch_followed_by_another_statements_commit_is_reported_at_its_own_offset() {
        let (mut bytes, starts) = log();
        encode_record(KIND_COMMIT, 4, &[], &mut bytes);
        let scan = scan_log(&bytes);
        assert_eq!(times(&scan), [1, 2, 3, 4]);
        assert_eq!(
            scan.damage,
            [(
                starts[5] as u64,
                "batch of statement 3 without its commit dropped".to_string()
            )]
        );
    }

    #[test]
    fn a_damaged_stretch_over_several_records_says_how_much_it_skipped() {
        let (mut bytes, starts) = log();
        // Statement 1's commit and the head of statement 2's batch are zeroes: statement
        // 1's batches lose their commit, statement 2 its batch; both are named.
        bytes[starts[2]..starts[3] + 30].fill(0);
        let scan = scan_log(&bytes);
        assert_eq!(times(&scan), [] as [i64; 0]);
        assert_eq!(
            scan.damage,
            [
                (
                    starts[2] as u64,
                    format!(
                        "not a record header; {} bytes skipped to the next intact record",
                        starts[4] - starts[2]
                    )
                ),
                (
                    starts[0] as u64,
                    "batch of statement 1 without its commit dropped".to_string()
                ),
                (
                    starts[1] as u64,
                    "batch of statement 1 without its commit dropped".to_string()
                ),
            ]
        );
    }

    #[test]
    fn a_damaged_length_field_loses_its_record_not_the_statements_after_it() {
        let (bytes, starts) = log();
        // Statement 1's first batch claims 16 MiB (past the end) or more than any record
        // may hold: it is damage, not a torn tail, and statement 2 after it is kept.
        for (claim, why) in [
            (16u32 << 20, "record length runs past the end of the log"),
            (u32::MAX, "bad record header"),
        ] {
            let mut bytes = bytes.clone();
            bytes[starts[0] + 8..starts[0] + 12].copy_from_slice(&claim.to_le_bytes());
            let scan = scan_log(&bytes);
            assert_eq!(times(&scan), [3, 4], "claim {claim}");
            let why = format!(
                "{why}; {} bytes skipped to the next intact record",
                starts[1] - starts[0]
            );
            assert_eq!(scan.damage[0], (starts[0] as u64, why));
            assert_eq!(scan.committed_len as usize, starts[5]);
        }
        // The same claim in the unfinished tail is a torn tail: nothing follows it.
        let mut bytes = bytes.clone();
        bytes[starts[5] + 8..starts[5] + 12].copy_from_slice(&(16u32 << 20).to_le_bytes());
        let scan = scan_log(&bytes);
        assert_eq!(times(&scan), [1, 2, 3, 4]);
        assert!(scan.damage.is_empty());
    }

    #[test]
    fn a_log_read_through_small_windows_gives_what_it_gives_in_memory() {
        let (bytes, starts) = log();
        let mut flipped = bytes.clone();
        flipped[starts[3] + 60] ^= 0x40;
        let mut bad_header = bytes.clone();
        bad_header[starts[1] + 1] ^= 0xff;
        let torn = bytes[..starts[4] - 1].to_vec();
        let dir = tempfile::tempdir().unwrap();
        let c = codec();
        for (name, b) in [
            ("whole", &bytes),
            ("flipped", &flipped),
            ("bad header", &bad_header),
            ("torn", &torn),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, b).unwrap();
            let expected = scan_log(b);
            for window in [1, 5, 23, 24, 25, 64, 100, 1000, 1 << 20] {
                let file = File::open(&path).unwrap();
                let mut src = FileRange::new(file, 0, None).unwrap().with_window(window);
                let survey = log_scan::survey(&mut src).unwrap();
                let mut got = vec![];
                decode_log(&path, &mut src, &survey, true, &mut |rb| {
                    got.extend(c.decode(&rb)?.times.iter().copied());
                    Ok(true)
                })
                .unwrap();
                let what = format!("{name}, window {window}");
                assert_eq!(got, times(&expected), "{what}");
                assert_eq!(survey.damage, expected.damage, "{what}");
                assert_eq!(survey.committed_len, expected.committed_len, "{what}");
                assert_eq!(survey.last_statement, expected.last_statement, "{what}");
            }
        }
        // A range of the file: statement 2 alone, its offsets relative to the range.
        let path = dir.path().join("whole");
        let file = File::open(&path).unwrap();
        let mut src = FileRange::new(file, starts[3] as u64, Some(starts[5] as u64))
            .unwrap()
            .with_window(7);
        let survey = log_scan::survey(&mut src).unwrap();
        let mut got = vec![];
        decode_log(&path, &mut src, &survey, true, &mut |rb| {
            got.extend(c.decode(&rb)?.times.iter().copied());
            Ok(true)
        })
        .unwrap();
        assert_eq!(got, [4]);
        assert_eq!(survey.committed_len as usize, starts[5] - starts[3]);
    }

    /// A batch of tuples at `times` whose `x` numbers them in arrival order from `first`:
    /// what the merge tests compare a stable sort with.
    fn numbered_batch(times: &[i64], first: i64) -> Batch {
        let mut b = ColumnBatchBuilder::new(&[DataType::Timestamp, DataType::Numeric], 4);
        for (i, &t) in times.iter().enumerate() {
            let x = parse_value(&(first + i as i64).to_string(), DataType::Numeric).unwrap();
            b.push_row(&mut [Value::Timestamp(t), x], t);
        }
        Batch::Columns(b.finish())
    }

    /// Every tuple of segment `path` in file order: its time and `x` (as text).
    fn segment_tuples(path: &Path) -> Vec<(i64, String)> {
        let mut got = vec![];
        super::super::segment::read(path, &codec(), None, &mut |b| {
            let views = b.views();
            for r in 0..b.len() {
                got.push((b.times[r], views[1].value(r).to_text().unwrap()));
            }
            true
        })
        .unwrap();
        got
    }

    /// The names of the files in `dir`, sorted.
    fn file_names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    fn row_groups(path: &Path) -> usize {
        use parquet::file::reader::FileReader;
        parquet::file::reader::SerializedFileReader::new(File::open(path).unwrap())
            .unwrap()
            .metadata()
            .num_row_groups()
    }

    /// An archive whose sealing size is about three batches of 1,000 tuples.
    fn archive_of_three_batch_logs(dir: &Path) -> StreamArchive {
        let one = encode_ipc(&codec().to_record_batch(&batch(&[0; 1000])).unwrap()).unwrap();
        let mut config = StorageConfig::new(dir);
        config.seal_bytes = 3 * one.len() as u64;
        StreamArchive::open(dir.join("s"), codec(), &config)
            .unwrap()
            .0
    }

    /// One statement much larger than the sealing size is sealed in sorted runs of about
    /// that size (so sealing never holds the whole log), each run its own row groups; every
    /// tuple is in the segment once.
    #[test]
    fn a_log_larger_than_the_sealing_size_is_sealed_in_sorted_runs() {
        let dir = tempfile::tempdir().unwrap();
        let archive = archive_of_three_batch_logs(dir.path());
        // One statement of 20 batches of 1,000 tuples, in time order: sealed in runs of
        // about 3 batches, each its own row groups, nothing to merge.
        let statement = archive.begin();
        for k in 0..20i64 {
            let times: Vec<i64> = (0..1000).map(|i| k * 1000 + i).collect();
            archive.append(statement, &batch(&times)).unwrap();
        }
        archive.commit(statement).unwrap();
        let seq = archive.rotate_if_full().unwrap().expect("the log is full");
        archive.seal(seq).unwrap();
        let path = archive.dir.join(segment_name(seq));
        let times: Vec<i64> = segment_tuples(&path).into_iter().map(|(t, _)| t).collect();
        assert_eq!(times, (0..20_000).collect::<Vec<i64>>());
        let groups = row_groups(&path);
        assert!(
            (5..=10).contains(&groups),
            "20 batches in runs of about 3 batches each, a row group each, not {groups}"
        );
        assert_eq!(
            file_names(&archive.dir),
            [log_name(seq + 1), segment_name(seq)],
            "the log is gone, and nothing else is left"
        );
    }

    #[test]
    fn a_large_statement_out_of_time_order_is_sealed_as_one_time_ordered_segment() {
        let dir = tempfile::tempdir().unwrap();
        let archive = archive_of_three_batch_logs(dir.path());
        // 20 batches of 1,000 tuples in one statement: times scattered over 0..3,000, so
        // every run overlaps every other and equal times meet across runs.
        let statement = archive.begin();
        let mut all: Vec<(i64, String)> = vec![];
        for k in 0..20i64 {
            let times: Vec<i64> = (0..1000).map(|i| (i * 7919 + k * 104_729) % 3000).collect();
            let first = k * 1000;
            all.extend((first..).zip(&times).map(|(x, &t)| (t, x.to_string())));
            archive
                .append(statement, &numbered_batch(&times, first))
                .unwrap();
        }
        archive.commit(statement).unwrap();
        let seq = archive.rotate_if_full().unwrap().expect("the log is full");
        archive.seal(seq).unwrap();
        let path = archive.dir.join(segment_name(seq));
        // A stable sort by time: equal times in arrival order.
        all.sort_by_key(|(t, _)| *t);
        assert_eq!(segment_tuples(&path), all);
        assert_eq!(row_groups(&path), 1, "20,000 rows, one group");
        assert_eq!(
            file_names(&archive.dir),
            [log_name(seq + 1), segment_name(seq)],
            "the runs file is gone"
        );
    }

    /// Runs longer than a merge's read batch and a merge longer than its output buffer:
    /// every refill and flush path of [`super::super::segment::merge_runs`].
    #[test]
    fn a_merge_of_long_runs_is_a_stable_sort_by_time() {
        let dir = tempfile::tempdir().unwrap();
        let c = codec();
        let runs_path = dir.path().join("seg-00000001.runs.parquet");
        let mut w = super::super::segment::SegmentWriter::new(&runs_path, &c).unwrap();
        let mut all: Vec<(i64, String)> = vec![];
        let mut seed = 17u64;
        for run_len in [30_000usize, 9_000, 1, 25_000] {
            let times: Vec<i64> = (0..run_len)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (seed >> 33) as i64 % 5_000
                })
                .collect();
            let first = all.len() as i64;
            all.extend((first..).zip(&times).map(|(x, &t)| (t, x.to_string())));
            let rb = c.to_record_batch(&numbered_batch(&times, first)).unwrap();
            w.write_run(&[rb]).unwrap();
        }
        assert!(w.runs_overlap());
        let runs = w.runs().to_vec();
        assert_eq!(runs.len(), 4);
        let runs_tmp = w.finish().unwrap();
        let path = dir.path().join(segment_name(1));
        let mut merged = super::super::segment::SegmentWriter::new(&path, &c).unwrap();
        super::super::segment::merge_runs(&runs_tmp, &runs, &mut merged).unwrap();
        std::fs::rename(merged.finish().unwrap(), &path).unwrap();
        all.sort_by_key(|(t, _)| *t);
        let got = segment_tuples(&path);
        assert_eq!(got.len(), all.len());
        assert!(got == all, "the merge is a stable sort by time");
    }

    #[test]
    fn a_full_log_found_at_start_is_sealed_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = StorageConfig::new(dir.path());
        let sdir = dir.path().join("s");
        {
            let (archive, _) = StreamArchive::open(sdir.clone(), codec(), &config).unwrap();
            let statement = archive.begin();
            archive.append(statement, &batch(&[1, 2, 3])).unwrap();
            archive.commit(statement).unwrap();
        }
        config.seal_bytes = 1;
        let (_archive, recovered) = StreamArchive::open(sdir.clone(), codec(), &config).unwrap();
        assert_eq!(recovered.tuples, 3);
        assert_eq!(file_names(&sdir), [log_name(2), segment_name(1)]);
    }

    #[test]
    fn retention_ages_out_a_damaged_segment_too() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = StorageConfig::new(dir.path());
        config.seal_bytes = 1;
        let (archive, _) = StreamArchive::open(dir.path().join("s"), codec(), &config).unwrap();
        // Two sealed segments, tuples at 0..100 and 100..200, then one at 1,000.
        for times in [
            (0..100).collect::<Vec<i64>>(),
            (100..200).collect(),
            vec![1000],
        ] {
            let statement = archive.begin();
            archive.append(statement, &batch(&times)).unwrap();
            archive.commit(statement).unwrap();
            let seq = archive.rotate_if_full().unwrap().expect("the log is full");
            archive.seal(seq).unwrap();
        }
        let first = archive.dir.join(segment_name(1));
        let mut bytes = std::fs::read(&first).unwrap();
        bytes[100] ^= 0xFF;
        std::fs::write(&first, bytes).unwrap();
        assert!(super::super::segment::time_range_at(&first, 0).is_err());
        archive.drop_segments_before(500);
        assert_eq!(
            file_names(&archive.dir),
            [log_name(4), segment_name(3)],
            "both old segments are gone"
        );
        assert_eq!(
            archive.retired_tuples(),
            100,
            "the damaged segment's tuples were never counted"
        );
    }

    #[test]
    fn catalog_records_round_trip_and_damage_is_refused() {
        let dir = tempfile::Builder::new()
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir()
            .unwrap();
        let data = DataDir::open(StorageConfig::new(dir.path())).unwrap();
        let ddl = stream_ddl(
            "a \"b\"",
            &[Column::new("ts", DataType::TimestampTz)],
            Some(0),
            true,
            5,
            Some(7),
            &[
                ("connector".into(), "file".into()),
                ("path".into(), "it's".into()),
            ],
        );
        data.write_catalog(&[CatalogRecord::Stream(ddl.clone())])
            .unwrap();
        assert_eq!(data.read_catalog().unwrap(), [CatalogRecord::Stream(ddl)]);
        // A numeric column keeps its precision and scale across a restart.
        let mut v = Column::new("v", DataType::Numeric);
        v.typmod = Some(crate::types::Typmod::Numeric(crate::types::NumericTypmod {
            precision: 5,
            scale: 2,
        }));
        let ddl = stream_ddl("n", &[v], None, true, 0, None, &[]);
        assert_eq!(
            ddl,
            "CREATE STREAM \"n\" (\"v\" numeric(5,2)) TYPE ARCHIVED"
        );
        // A second open of a locked directory is refused.
        assert!(matches!(
            DataDir::open(StorageConfig::new(dir.path())),
            Err(Error::ObjectInUse(_))
        ));
        let path = dir.path().join(CATALOG_FILE);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("ARCHIVED", "ARCHIVEd")).unwrap();
        assert!(matches!(data.read_catalog(), Err(Error::DataCorrupted(_))));
        std::fs::write(&path, "tcq-catalog 1\n6e87fe0b view x\n").unwrap();
        assert!(matches!(data.read_catalog(), Err(Error::DataCorrupted(_))));
    }
}
