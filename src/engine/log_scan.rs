//! Reading an archived stream's log in bounded memory.
//!
//! A log file can be as large as the largest statement written to it (a statement's
//! records never span two logs), so nothing here holds a whole file: records are read
//! through a window of at most [`WINDOW_BYTES`] (or one record, when a record is longer).
//! A log is read in two passes. [`survey`] walks the record headers and checksums and
//! decides which batch records belong to committed statements; [`for_each_committed`]
//! then decodes those batches one at a time, so a reader holds one batch, not the
//! statement's (which may be the whole file).
//!
//! Rules (the record format is in the `archive` module's documentation): a batch counts
//! when the first commit record after it is its own statement's; a batch followed by
//! another statement's commit is reported as dropped (a statement that failed part way);
//! batches after the last commit are the unfinished tail, not damage. A record whose
//! checksum fails is reported and skipped: the scan resumes at the next header that checks
//! out.

use std::fs::File;
use std::os::unix::fs::FileExt;

use arrow_array::RecordBatch;

use super::archive_codec::{decode_ipc, HEADER_BYTES, KIND_BATCH, KIND_COMMIT, RECORD_MAGIC};

/// Bytes a file window reads at once.
pub(crate) const WINDOW_BYTES: usize = 8 << 20;

/// Bytes of a log, read through windows.
pub(crate) trait LogSource {
    /// Bytes in the source.
    fn len(&self) -> u64;
    /// The bytes from `pos`: at least `need` of them unless the source ends first.
    fn window(&mut self, pos: u64, need: usize) -> std::io::Result<&[u8]>;
}

impl LogSource for &[u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }
    fn window(&mut self, pos: u64, _need: usize) -> std::io::Result<&[u8]> {
        Ok(&self[(pos as usize).min(<[u8]>::len(self))..])
    }
}

/// A byte range of a file, read a window at a time (positions are relative to the range).
pub(crate) struct FileRange {
    file: File,
    start: u64,
    len: u64,
    buf: Vec<u8>,
    /// Range position of `buf[0]`.
    buf_at: u64,
    /// Bytes read at once (at least).
    window: usize,
}

impl FileRange {
    /// Bytes `start..end` of `file` (`end` clamped to the file's length).
    pub(crate) fn new(file: File, start: u64, end: Option<u64>) -> std::io::Result<FileRange> {
        let size = file.metadata()?.len();
        let end = end.map_or(size, |e| e.min(size));
        let start = start.min(end);
        Ok(FileRange {
            file,
            start,
            len: end - start,
            buf: Vec::new(),
            buf_at: 0,
            window: WINDOW_BYTES,
        })
    }

    /// The same range read `bytes` at a time (tests: records straddle windows).
    #[cfg(test)]
    pub(crate) fn with_window(mut self, bytes: usize) -> FileRange {
        self.window = bytes;
        self
    }

    /// The file offset of the range's first byte.
    pub(crate) fn start(&self) -> u64 {
        self.start
    }

    /// Forget every byte from range position `len` on (the file was truncated there).
    pub(crate) fn truncate(&mut self, len: u64) {
        self.len = self.len.min(len);
        self.buf.clear();
        self.buf_at = 0;
    }
}

impl LogSource for FileRange {
    fn len(&self) -> u64 {
        self.len
    }
    fn window(&mut self, pos: u64, need: usize) -> std::io::Result<&[u8]> {
        let pos = pos.min(self.len);
        let want = (self.len - pos).min(need as u64) as usize;
        let have = pos >= self.buf_at && pos + want as u64 <= self.buf_at + self.buf.len() as u64;
        if !have {
            let n = (self.len - pos).min(need.max(self.window) as u64) as usize;
            // A window grown for one long record does not stay that large.
            if self.buf.capacity() > 2 * n.max(self.window) {
                self.buf = Vec::new();
            }
            self.buf.clear();
            self.buf.resize(n, 0);
            self.file.read_exact_at(&mut self.buf, self.start + pos)?;
            self.buf_at = pos;
        }
        let from = (pos - self.buf_at) as usize;
        Ok(&self.buf[from..])
    }
}

/// One record as read from a window.
pub(crate) enum Record<'a> {
    Ok {
        kind: u8,
        statement: u64,
        payload: &'a [u8],
        len: usize,
    },
    /// The source ends inside this record.
    Torn,
    Corrupt(String),
}

/// The record at the start of `b` (the whole record must be in `b` unless it is torn).
pub(crate) fn read_record<'a>(b: &'a [u8], known_kinds: &[u8]) -> Record<'a> {
    if b.len() < HEADER_BYTES {
        return if RECORD_MAGIC.starts_with(&b[..b.len().min(4)]) {
            Record::Torn
        } else {
            Record::Corrupt("not a record header".into())
        };
    }
    if &b[..4] != RECORD_MAGIC {
        return Record::Corrupt("not a record header".into());
    }
    let kind = b[4];
    let plen = payload_len(b);
    let statement = u64::from_le_bytes(b[12..20].try_into().expect("8 bytes"));
    let crc = u32::from_le_bytes(b[20..24].try_into().expect("4 bytes"));
    if plen > super::archive_codec::PAYLOAD_MAX || !known_kinds.contains(&kind) {
        return Record::Corrupt("bad record header".into());
    }
    if b.len() < HEADER_BYTES + plen {
        return Record::Torn;
    }
    let payload = &b[HEADER_BYTES..HEADER_BYTES + plen];
    let mut h = crc32fast::Hasher::new();
    h.update(&b[4..20]);
    h.update(payload);
    if h.finalize() != crc {
        return Record::Corrupt("checksum mismatch".into());
    }
    Record::Ok {
        kind,
        statement,
        payload,
        len: HEADER_BYTES + plen,
    }
}

fn payload_len(header: &[u8]) -> usize {
    u32::from_le_bytes(header[8..12].try_into().expect("4 bytes")) as usize
}

/// The record at `pos` of `src`: the header is read first, then as much as it says.
fn record_at<'s, S: LogSource>(
    src: &'s mut S,
    pos: u64,
    kinds: &[u8],
) -> std::io::Result<Record<'s>> {
    let left = src.len().saturating_sub(pos);
    let head = src.window(pos, HEADER_BYTES)?;
    let need = if head.len() >= HEADER_BYTES && &head[..4] == RECORD_MAGIC {
        let plen = payload_len(head);
        if plen > super::archive_codec::PAYLOAD_MAX {
            return Ok(Record::Corrupt("bad record header".into()));
        }
        if (HEADER_BYTES + plen) as u64 > left {
            // Never read a window as long as a header claims when the source is shorter:
            // a damaged length field must not cost a gigabyte of memory.
            return Ok(Record::Torn);
        }
        HEADER_BYTES + plen
    } else {
        HEADER_BYTES
    };
    Ok(read_record(src.window(pos, need)?, kinds))
}

/// What [`survey`] found in a log.
#[derive(Debug, Default)]
pub(crate) struct Survey {
    /// (offset, record length) of each batch record of a committed statement, in order.
    pub(crate) batches: Vec<(u64, usize)>,
    /// Payload bytes of those batch records.
    pub(crate) batch_bytes: u64,
    /// Offset after the last commit record: everything beyond is a torn or unfinished tail.
    pub(crate) committed_len: u64,
    /// Damage found: (offset, what).
    pub(crate) damage: Vec<(u64, String)>,
    /// The highest statement number seen.
    pub(crate) last_statement: u64,
    /// The payload of the last commit record that has one: a source's position.
    pub(crate) last_position: Option<Vec<u8>>,
}

/// Walk the records of `src` (headers and checksums; no batch is decoded). Errors: the
/// source could not be read.
pub(crate) fn survey<S: LogSource>(src: &mut S) -> std::io::Result<Survey> {
    const KINDS: &[u8] = &[KIND_BATCH, KIND_COMMIT, super::archive_codec::KIND_EFFECTS];
    let mut out = Survey::default();
    // Batch records since the last commit: (offset, length, statement, payload bytes).
    let mut pending: Vec<(u64, usize, u64, usize)> = Vec::new();
    let mut pos = 0u64;
    let end = src.len();
    while pos < end {
        let next = match record_at(src, pos, KINDS)? {
            Record::Ok {
                kind,
                statement,
                len,
                payload,
            } => {
                out.last_statement = out.last_statement.max(statement);
                if kind == KIND_COMMIT {
                    for (at, rlen, s, plen) in pending.drain(..) {
                        if s == statement {
                            out.batches.push((at, rlen));
                            out.batch_bytes += plen as u64;
                        } else {
                            out.damage.push((
                                at,
                                format!("batch of statement {s} without its commit dropped"),
                            ));
                        }
                    }
                    out.committed_len = pos + len as u64;
                    if !payload.is_empty() {
                        out.last_position = Some(payload.to_vec());
                    }
                } else if kind == KIND_BATCH {
                    pending.push((pos, len, statement, payload.len()));
                }
                Some(pos + len as u64)
            }
            Record::Torn => {
                // A record that runs past the end is the torn tail only when nothing
                // intact follows it; otherwise its length field is damaged, and what
                // follows (acknowledged statements) must not be cut off with it.
                match next_header(src, pos + 1, KINDS)? {
                    Some(p) => {
                        out.damage.push((
                            pos,
                            format!(
                                "record length runs past the end of the log; {}",
                                skipped(p - pos)
                            ),
                        ));
                        Some(p)
                    }
                    None => None,
                }
            }
            Record::Corrupt(why) => {
                // Whatever records the damaged stretch held are lost with it: say how
                // much was skipped, so that a reader can tell one record from many.
                let next = next_header(src, pos + 1, KINDS)?;
                let len = next.unwrap_or(end) - pos;
                out.damage.push((pos, format!("{why}; {}", skipped(len))));
                next
            }
        };
        match next {
            Some(p) => pos = p,
            None => break,
        }
    }
    Ok(out)
}

fn skipped(bytes: u64) -> String {
    format!("{bytes} bytes skipped to the next intact record")
}

/// The first offset at or after `from` where a record checks out, if any.
fn next_header<S: LogSource>(src: &mut S, from: u64, kinds: &[u8]) -> std::io::Result<Option<u64>> {
    let end = src.len();
    let mut at = from;
    while at < end {
        let w = src.window(at, RECORD_MAGIC.len())?;
        let seen = w.len();
        let candidates: Vec<u64> = memchr::memmem::find_iter(w, RECORD_MAGIC)
            .map(|i| at + i as u64)
            .collect();
        for c in candidates {
            if matches!(record_at(src, c, kinds)?, Record::Ok { .. }) {
                return Ok(Some(c));
            }
        }
        if seen < RECORD_MAGIC.len() {
            break;
        }
        // The magic may straddle two windows.
        at += (seen - (RECORD_MAGIC.len() - 1)) as u64;
    }
    Ok(None)
}

/// Decode the batches `survey` found in `src`, one at a time, and hand each to `each`
/// until it returns false (the result is false then). A batch that does not decode is
/// reported through `damage` and skipped. Errors: the source could not be read (as `io`
/// makes it), or what `each` returns.
pub(crate) fn for_each_committed<S: LogSource, E>(
    src: &mut S,
    survey: &Survey,
    io: &dyn Fn(std::io::Error) -> E,
    damage: &mut dyn FnMut(u64, String),
    each: &mut dyn FnMut(RecordBatch) -> Result<bool, E>,
) -> Result<bool, E> {
    for &(at, len) in &survey.batches {
        let w = src.window(at, len).map_err(io)?;
        match decode_ipc(&w[HEADER_BYTES..len]) {
            Ok(rb) => {
                if !each(rb)? {
                    return Ok(false);
                }
            }
            Err(why) => damage(at, why),
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window smaller than a record, over bytes in memory: every path of
    /// [`FileRange::window`]'s refill is exercised by the same log.
    #[test]
    fn a_file_range_reads_what_the_bytes_hold() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let bytes: Vec<u8> = (0..3 * WINDOW_BYTES + 17)
            .map(|i| (i % 251) as u8)
            .collect();
        std::fs::write(&path, &bytes).unwrap();
        let mut r =
            FileRange::new(File::open(&path).unwrap(), 5, Some(bytes.len() as u64 - 2)).unwrap();
        assert_eq!(r.len(), bytes.len() as u64 - 7);
        for (pos, need) in [
            (0u64, 10usize),
            (WINDOW_BYTES as u64 - 3, 10),
            (7, 2 * WINDOW_BYTES + 5),
        ] {
            let w = r.window(pos, need).unwrap();
            assert!(w.len() >= need);
            assert_eq!(
                &w[..need],
                &bytes[5 + pos as usize..5 + pos as usize + need]
            );
        }
        // Near the end, the window is what is left.
        let last = r.len() - 4;
        assert_eq!(
            r.window(last, 100).unwrap(),
            &bytes[5 + last as usize..bytes.len() - 2]
        );
    }
}
