//! Sealed segments: an archived stream's tuples as Parquet files any reader opens.
//!
//! A segment holds the committed batches of one sealed log, sorted by time (stable, so
//! tuples with equal times keep their arrival order), in row groups of
//! [`ROW_GROUP_ROWS`] rows with min/max statistics on every column. The columns are the
//! stream's own (numeric and interval as their PostgreSQL text; `timestamptz` with zone
//! UTC), plus `tcq_arrival_time` for a stream stamped on arrival. The time column is
//! delta-encoded (DELTA_BINARY_PACKED, a few bits a tuple once sorted) and every column is
//! Snappy-compressed; DuckDB reads a stream's history with
//! `SELECT * FROM 'tcq-data/streams/<name>/*.parquet'`.
//!
//! The parquet crate writes no page checksums, so each segment carries its own: the length
//! and CRC-32 of its row groups (every byte before the page indexes and the footer), in the
//! footer's key-value metadata as `tcq.data_crc32` = `<bytes>:<crc hex>`. A segment whose checksum fails is reported and not served.
//!
//! A log much larger than the sealing size (one large statement: a log ends only between
//! statements) is sorted in runs of about the sealing size, each written as its own row
//! groups, so that sealing holds one run's batches and never the whole log
//! ([`SegmentWriter::write_run`]). Runs of a statement in time order follow each other
//! in time and are the segment as they stand; runs that overlap in time are then merged
//! into one time-ordered segment ([`merge_runs`], a batch per run at a time).
//!
//! Design decision: sorting by time makes the statistics tight, so a back-fill from a
//! START AT reads only the segments (and row groups) whose time range reaches it. Arrival
//! order within a segment is lost: a back-filled query sees each sealed segment's tuples in
//! time order, which differs from what a live query saw only for tuples that arrived late.

use std::fs::File;
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::TimestampMicrosecondType;
use arrow_array::RecordBatch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::statistics::Statistics;
use parquet::schema::types::ColumnPath;

use super::archive_codec::{io_err, ArchiveCodec};
use crate::error::{Error, Result};
use crate::exec::columns::ColumnBatch;

/// The footer key holding the CRC-32 of the bytes before the footer.
const CRC_KEY: &str = "tcq.data_crc32";
/// The footer key holding the source position of the sealed log's last commit record.
const POSITION_KEY: &str = "tcq.source_position";

/// The source position in segment `path`'s footer, if it has one (a damaged footer has
/// none).
pub(crate) fn source_position(path: &Path) -> Option<Vec<u8>> {
    let reader = SerializedFileReader::new(File::open(path).ok()?).ok()?;
    let kv = reader.metadata().file_metadata().key_value_metadata()?;
    let value = kv.iter().find(|k| k.key == POSITION_KEY)?.value.clone()?;
    Some(value.into_bytes())
}

/// A writer that hashes what it writes.
struct Crc32Writer {
    inner: File,
    crc: crc32fast::Hasher,
}

impl std::io::Write for Crc32Writer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Check a segment's data checksum against its footer. Errors name the file and the byte
/// range that failed.
pub(crate) fn verify(path: &Path) -> Result<()> {
    use std::os::unix::fs::FileExt;
    let read_err = |e| io_err(format!("cannot read {}", path.display()), e);
    let file = File::open(path).map_err(read_err)?;
    let n = file.metadata().map_err(read_err)?.len() as usize;
    let mut tail = [0u8; 8];
    if n < 12 || file.read_exact_at(&mut tail, (n - 8) as u64).is_err() || &tail[4..] != b"PAR1" {
        return Err(pq_err(
            path,
            format!("no Parquet footer at offset {}", n.saturating_sub(4)),
        ));
    }
    let footer = u32::from_le_bytes(tail[..4].try_into().expect("4 bytes")) as usize;
    let data_end = n
        .checked_sub(8 + footer)
        .ok_or_else(|| pq_err(path, format!("footer length {footer} exceeds the file")))?;
    let reader = SerializedFileReader::new(file.try_clone().map_err(read_err)?)
        .map_err(|e| pq_err(path, format!("footer at offset {data_end}: {e}")))?;
    let expected = reader
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == CRC_KEY)?.value.clone())
        .ok_or_else(|| pq_err(path, "no data checksum in the footer"))?;
    let (covered, crc) = expected
        .split_once(':')
        .and_then(|(n, c)| Some((n.parse::<usize>().ok()?, u32::from_str_radix(c, 16).ok()?)))
        .filter(|(n, _)| *n <= data_end)
        .ok_or_else(|| {
            pq_err(
                path,
                format!("bad data checksum \"{expected}\" in the footer"),
            )
        })?;
    // The data is hashed a megabyte at a time: a segment is never held whole.
    let mut h = crc32fast::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut at = 0usize;
    while at < covered {
        let got = (covered - at).min(buf.len());
        file.read_exact_at(&mut buf[..got], at as u64)
            .map_err(read_err)?;
        h.update(&buf[..got]);
        at += got;
    }
    if h.finalize() != crc {
        return Err(pq_err(
            path,
            format!("data checksum mismatch in bytes 0..{covered}"),
        ));
    }
    Ok(())
}

/// Rows per Parquet row group.
pub(crate) const ROW_GROUP_ROWS: usize = 128 * 1024;

fn pq_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::DataCorrupted(format!("segment {}: {e}", path.display()))
}

/// Write `batches` (a sealed log's committed batches, in arrival order) sorted by time to
/// `path`: written to `path.tmp`, fsynced, then renamed.
#[cfg(test)]
pub(crate) fn write(path: &Path, codec: &ArchiveCodec, batches: &[RecordBatch]) -> Result<()> {
    let tmp = write_aside(path, codec, batches)?;
    std::fs::rename(&tmp, path).map_err(|e| io_err(format!("cannot rename {}", tmp.display()), e))
}

/// [`write`] without the rename: the segment is complete and fsynced in the returned
/// `path.tmp`, for the caller to rename into place (or remove).
#[cfg(test)]
pub(crate) fn write_aside(
    path: &Path,
    codec: &ArchiveCodec,
    batches: &[RecordBatch],
) -> Result<std::path::PathBuf> {
    let mut w = SegmentWriter::new(path, codec)?;
    w.write_run(batches)?;
    w.finish()
}

/// One sorted run of a segment being written: its row groups and time range.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Run {
    /// Indices of its row groups in the file.
    pub(crate) groups: std::ops::Range<usize>,
    /// Its earliest and latest tuple time, microseconds.
    pub(crate) min_us: i64,
    pub(crate) max_us: i64,
}

/// A segment being written to `path.tmp`, one sorted run at a time.
pub(crate) struct SegmentWriter {
    path: std::path::PathBuf,
    tmp: std::path::PathBuf,
    schema: arrow_schema::SchemaRef,
    time_column: usize,
    w: ArrowWriter<Crc32Writer>,
    runs: Vec<Run>,
    /// The source position of the log sealed, kept in the footer.
    source_position: Option<Vec<u8>>,
}

impl SegmentWriter {
    /// Start segment `path` (written to `path.tmp`). Errors: the file cannot be created.
    pub(crate) fn new(path: &Path, codec: &ArchiveCodec) -> Result<SegmentWriter> {
        let schema = codec.schema.clone();
        let time_name = schema.field(codec.time_column()).name().clone();
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
            .set_column_encoding(
                ColumnPath::from(time_name.as_str()),
                Encoding::DELTA_BINARY_PACKED,
            )
            .set_column_dictionary_enabled(ColumnPath::from(time_name.as_str()), false)
            .build();
        let tmp = path.with_extension("parquet.tmp");
        let file = super::private_fs::create(&tmp)
            .map_err(|e| io_err(format!("cannot create {}", tmp.display()), e))?;
        let file = Crc32Writer {
            inner: file,
            crc: crc32fast::Hasher::new(),
        };
        let w = ArrowWriter::try_new(file, schema.clone(), Some(props))
            .map_err(|e| write_err(&tmp, e))?;
        Ok(SegmentWriter {
            path: path.to_path_buf(),
            tmp,
            schema,
            time_column: codec.time_column(),
            w,
            runs: Vec::new(),
            source_position: None,
        })
    }

    /// Keep `position` (a source's, from the sealed log's last commit record that has
    /// one) in the footer as `tcq.source_position`, so the source resumes from it once the
    /// log is gone.
    pub(crate) fn set_source_position(&mut self, position: Option<Vec<u8>>) {
        self.source_position = position;
    }

    /// The file being written (`path.tmp`).
    pub(crate) fn tmp_path(&self) -> &Path {
        &self.tmp
    }

    /// The runs written so far, in order.
    pub(crate) fn runs(&self) -> &[Run] {
        &self.runs
    }

    /// True when the runs written so far are not in time order as a whole: a later run
    /// holds a tuple earlier than the latest of a run before it (equal times are in order:
    /// the later run arrived later).
    pub(crate) fn runs_overlap(&self) -> bool {
        let mut latest = i64::MIN;
        for r in &self.runs {
            if r.min_us < latest {
                return true;
            }
            latest = latest.max(r.max_us);
        }
        false
    }

    /// Append `batch`, already in time order after everything written before it (a merge
    /// of runs); row groups are cut every [`ROW_GROUP_ROWS`] rows. Errors: the write failed.
    fn write_sorted(&mut self, batch: &RecordBatch) -> Result<()> {
        self.w.write(batch).map_err(|e| write_err(&self.tmp, e))
    }

    /// Write `batches` (consecutive committed batches of a log, in arrival order) sorted
    /// by time (stable: arrival order among equal times), in row groups of at most
    /// [`ROW_GROUP_ROWS`] rows. A run ends its last row group, so each row group holds one
    /// run's tuples and its time statistics stay tight. Errors: the write failed.
    pub(crate) fn write_run(&mut self, batches: &[RecordBatch]) -> Result<()> {
        let times: Vec<&[i64]> = batches
            .iter()
            .map(|b| {
                b.column(self.time_column)
                    .as_primitive::<TimestampMicrosecondType>()
                    .values()
                    .as_ref()
            })
            .collect();
        // Every tuple as (batch, row), in time order. The sorted run is built a row group
        // at a time from the batches themselves, not from a concatenated and a sorted copy.
        let mut order: Vec<(u32, u32)> = times
            .iter()
            .enumerate()
            .flat_map(|(b, t)| (0..t.len() as u32).map(move |r| (b as u32, r)))
            .collect();
        order.sort_by_key(|&(b, r)| times[b as usize][r as usize]);
        let time = |&(b, r): &(u32, u32)| times[b as usize][r as usize];
        let (Some(first), Some(last)) = (order.first().map(time), order.last().map(time)) else {
            return Ok(());
        };
        let groups_before = self.w.flushed_row_groups().len();
        let internal = |e: arrow_schema::ArrowError| {
            Error::Internal(format!("sealing {}: {e}", self.path.display()))
        };
        for chunk in order.chunks(ROW_GROUP_ROWS) {
            let indices: Vec<(usize, usize)> = chunk
                .iter()
                .map(|&(b, r)| (b as usize, r as usize))
                .collect();
            let columns = (0..self.schema.fields().len())
                .map(|c| {
                    let arrays: Vec<&dyn arrow_array::Array> =
                        batches.iter().map(|b| b.column(c).as_ref()).collect();
                    arrow_select::interleave::interleave(&arrays, &indices)
                })
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(internal)?;
            let rows = RecordBatch::try_new(self.schema.clone(), columns).map_err(internal)?;
            self.w.write(&rows).map_err(|e| write_err(&self.tmp, e))?;
        }
        // The next run starts a row group of its own.
        self.w.flush().map_err(|e| write_err(&self.tmp, e))?;
        self.runs.push(Run {
            groups: groups_before..self.w.flushed_row_groups().len(),
            min_us: first,
            max_us: last,
        });
        Ok(())
    }

    /// Write the footer (with the data checksum) and fsync; returns `path.tmp`, for the
    /// caller to rename into place (or remove). Errors: the write or the fsync failed.
    pub(crate) fn finish(mut self) -> Result<std::path::PathBuf> {
        let tmp = self.tmp;
        // The row groups leave the writer's buffer: everything but the footer is written now.
        self.w
            .sync()
            .map_err(|e| io_err(format!("cannot write {}", tmp.display()), e))?;
        let covered = self.w.bytes_written();
        let crc = self.w.inner().crc.clone().finalize();
        self.w.append_key_value_metadata(KeyValue::new(
            CRC_KEY.to_string(),
            format!("{covered}:{crc:08x}"),
        ));
        if let Some(p) = &self.source_position {
            self.w.append_key_value_metadata(KeyValue::new(
                POSITION_KEY.to_string(),
                String::from_utf8_lossy(p).into_owned(),
            ));
        }
        let file = self.w.into_inner().map_err(|e| write_err(&tmp, e))?.inner;
        file.sync_all()
            .map_err(|e| io_err(format!("cannot fsync {}", tmp.display()), e))?;
        Ok(tmp)
    }
}

fn write_err(tmp: &Path, e: parquet::errors::ParquetError) -> Error {
    Error::Internal(format!("cannot write segment {}: {e}", tmp.display()))
}

/// Rows a merge reads from each run at a time.
const MERGE_BATCH_ROWS: usize = 8 * 1024;

/// Rows a merge gathers before it writes them.
const MERGE_OUT_ROWS: usize = 64 * 1024;

/// One run being read by [`merge_runs`].
struct RunCursor {
    reader: parquet::arrow::arrow_reader::ParquetRecordBatchReader,
    times: arrow_buffer::ScalarBuffer<i64>,
    /// Next row of the current batch.
    pos: usize,
    /// The current batch's index in the merge's pinned batches.
    pin: usize,
}

/// Write the tuples of `runs` (sorted runs of the complete segment file `src`, as
/// [`SegmentWriter::runs`] gave them) to `out` in time order: a k-way merge that holds one
/// batch of [`MERGE_BATCH_ROWS`] rows per run and [`MERGE_OUT_ROWS`] rows of output, never
/// the runs. Stable: among equal times, an earlier run's tuples (which arrived earlier)
/// come first. Errors: `src` cannot be read or `out` written.
pub(crate) fn merge_runs(src: &Path, runs: &[Run], out: &mut SegmentWriter) -> Result<()> {
    let internal =
        |e: arrow_schema::ArrowError| Error::Internal(format!("merging {}: {e}", src.display()));
    let time_column = out.time_column;
    let times_of = |b: &RecordBatch| {
        b.column(time_column)
            .as_primitive::<TimestampMicrosecondType>()
            .values()
            .clone()
    };
    let mut pinned: Vec<RecordBatch> = Vec::new();
    // Live cursors by run index (`None` once a run is read to its end).
    let mut cursors: Vec<Option<RunCursor>> = Vec::with_capacity(runs.len());
    for run in runs {
        let file =
            File::open(src).map_err(|e| io_err(format!("cannot open {}", src.display()), e))?;
        let mut reader = ParquetRecordBatchReaderBuilder::try_new(file)
            .and_then(|b| {
                b.with_row_groups(run.groups.clone().collect())
                    .with_batch_size(MERGE_BATCH_ROWS)
                    .build()
            })
            .map_err(|e| pq_err(src, e))?;
        // (Never an empty batch: a cursor always has a next tuple.)
        let first = reader.find(|b| b.as_ref().map_or(true, |b| b.num_rows() > 0));
        cursors.push(match first {
            Some(batch) => {
                let batch = batch.map_err(|e| pq_err(src, e))?;
                pinned.push(batch);
                Some(RunCursor {
                    reader,
                    times: times_of(&pinned[pinned.len() - 1]),
                    pos: 0,
                    pin: pinned.len() - 1,
                })
            }
            None => None,
        });
    }
    let mut pending: Vec<(usize, usize)> = Vec::with_capacity(MERGE_OUT_ROWS + MERGE_BATCH_ROWS);
    let flush = |pending: &mut Vec<(usize, usize)>,
                 pinned: &mut Vec<RecordBatch>,
                 cursors: &mut [Option<RunCursor>],
                 out: &mut SegmentWriter|
     -> Result<()> {
        if !pending.is_empty() {
            let columns = (0..out.schema.fields().len())
                .map(|c| {
                    let arrays: Vec<&dyn arrow_array::Array> =
                        pinned.iter().map(|b| b.column(c).as_ref()).collect();
                    arrow_select::interleave::interleave(&arrays, pending)
                })
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(internal)?;
            let rows = RecordBatch::try_new(out.schema.clone(), columns).map_err(internal)?;
            out.write_sorted(&rows)?;
            pending.clear();
        }
        // Keep only the batches the cursors still read.
        let mut kept = Vec::with_capacity(cursors.len());
        for c in cursors.iter_mut().flatten() {
            kept.push(pinned[c.pin].clone());
            c.pin = kept.len() - 1;
        }
        *pinned = kept;
        Ok(())
    };
    // The run whose next tuple is earliest (the earlier run among equal times).
    let earliest = |cursors: &[Option<RunCursor>]| {
        (0..cursors.len())
            .filter_map(|i| cursors[i].as_ref().map(|c| (c.times[c.pos], i)))
            .min()
            .map(|(_, i)| i)
    };
    while let Some(i) = earliest(&cursors) {
        // It gives every tuple up to the next tuple of another run: before an earlier
        // run's equal time, up to and including a later run's.
        let cur = cursors[i].as_ref().expect("live");
        let rest = &cur.times[cur.pos..];
        let mut take = rest.len();
        for (j, other) in cursors.iter().enumerate() {
            let Some(o) = other.as_ref().filter(|_| j != i) else {
                continue;
            };
            let t = o.times[o.pos];
            let n = if j < i {
                rest.partition_point(|&x| x < t)
            } else {
                rest.partition_point(|&x| x <= t)
            };
            take = take.min(n);
        }
        debug_assert!(take > 0, "the earliest tuple is always taken");
        let cur = cursors[i].as_mut().expect("live");
        pending.extend((cur.pos..cur.pos + take).map(|r| (cur.pin, r)));
        cur.pos += take;
        if cur.pos == cur.times.len() {
            match cur
                .reader
                .find(|b| b.as_ref().map_or(true, |b| b.num_rows() > 0))
            {
                Some(batch) => {
                    let batch = batch.map_err(|e| pq_err(src, e))?;
                    cur.times = times_of(&batch);
                    cur.pos = 0;
                    pinned.push(batch);
                    cur.pin = pinned.len() - 1;
                }
                None => cursors[i] = None,
            }
        }
        if pending.len() >= MERGE_OUT_ROWS {
            flush(&mut pending, &mut pinned, &mut cursors, out)?;
        }
    }
    flush(&mut pending, &mut pinned, &mut cursors, out)
}

/// The min and max of column `col` (INT64) in a row group.
fn time_stats_at(rg: &parquet::file::metadata::RowGroupMetaData, col: usize) -> Option<(i64, i64)> {
    match rg.column(col).statistics()? {
        Statistics::Int64(s) => Some((*s.min_opt()?, *s.max_opt()?)),
        _ => None,
    }
}

/// Hand the batches of segment `path` whose row groups' time statistics reach `from_us`
/// (all of them when `None`) to `each`, in time order, at most 16 Ki rows a batch; `Ok(false)`
/// when `each` stopped the reading by returning false. Errors: a segment that fails its
/// checksum or cannot be decoded (batches before a decoding fault have been handed over).
pub(crate) fn read(
    path: &Path,
    codec: &ArchiveCodec,
    from_us: Option<i64>,
    each: &mut dyn FnMut(ColumnBatch) -> bool,
) -> Result<bool> {
    verify(path)?;
    let file =
        File::open(path).map_err(|e| io_err(format!("cannot open {}", path.display()), e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| pq_err(path, e))?;
    let col = codec.time_column();
    let groups: Vec<usize> = builder
        .metadata()
        .row_groups()
        .iter()
        .enumerate()
        .filter(|(_, rg)| match (from_us, time_stats_at(rg, col)) {
            (Some(from), Some((_, hi))) => hi >= from,
            _ => true,
        })
        .map(|(i, _)| i)
        .collect();
    if groups.is_empty() {
        return Ok(true);
    }
    let reader = builder
        .with_row_groups(groups)
        .with_batch_size(16 * 1024)
        .build()
        .map_err(|e| pq_err(path, e))?;
    for rb in reader {
        let rb = rb.map_err(|e| pq_err(path, e))?;
        if !each(codec.decode(&rb)?) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Rows and time range of a segment whose time column is `col`, from its footer's
/// row-group statistics; `None` for a segment without rows.
pub(crate) fn time_range_at(path: &Path, col: usize) -> Result<Option<(u64, i64, i64)>> {
    verify(path)?;
    footer_time_range(path, col)
}

/// [`time_range_at`] from the footer alone, without checking the data's checksum: what
/// retention needs to age out a segment whose data is damaged. Errors: the footer cannot
/// be read.
pub(crate) fn footer_time_range(path: &Path, col: usize) -> Result<Option<(u64, i64, i64)>> {
    let file =
        File::open(path).map_err(|e| io_err(format!("cannot open {}", path.display()), e))?;
    let reader = SerializedFileReader::new(file).map_err(|e| pq_err(path, e))?;
    let mut range: Option<(u64, i64, i64)> = None;
    for rg in reader.metadata().row_groups() {
        let Some((lo, hi)) = time_stats_at(rg, col) else {
            continue;
        };
        let rows = rg.num_rows() as u64;
        range = Some(match range {
            None => (rows, lo, hi),
            Some((n, a, b)) => (n + rows, a.min(lo), b.max(hi)),
        });
    }
    Ok(range)
}
