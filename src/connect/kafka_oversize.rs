//! A Fetch whose answer is longer than a source reads into memory
//! ([`super::kafka_fetch::MAX_FETCH_ANSWER_BYTES`]): the first record batch from the
//! offset asked for is that long. Its answer is read as it comes instead of into one
//! buffer, record by record: a record of the batch that fits is kept (its value copied out),
//! one that does not is passed over unread and is a bad message of its own, so that one
//! huge record does not make its batch's other records bad.
//!
//! Only this rare path reads Fetch answers this way; it asks for the first batch alone
//! (`max_bytes` 1), at a version whose answer is not flexible (4 to 10), and decodes the
//! record batch format (v2) itself. A compressed batch this long cannot be read record by
//! record without decompressing it whole: each of its records from the offset asked for is
//! a bad message. The batch's CRC is not checked on this path (the broker checked it when
//! the batch was produced). Records the source keeps from one such answer are at most
//! [`MAX_FETCH_ANSWER_BYTES`](super::kafka_fetch::MAX_FETCH_ANSWER_BYTES) of values; the
//! rest of the batch is read by the next Fetch, from the first record not kept.

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::FetchRequest;
use tokio::io::{AsyncRead, AsyncReadExt, Take};
use tokio::net::TcpStream;

use super::kafka_fetch::{FetchError, Fetched, Message, MAX_FETCH_ANSWER_BYTES};
use super::kafka_wire::Conn;

/// The newest Fetch version asked for: not flexible (compact encodings begin at 12), and
/// before 11's `preferred_read_replica`, which Tansu 0.6.0 leaves out of its answer.
const FETCH_VERSION: i16 = 10;
/// Bad messages one answer of a compressed batch reports at most; the rest of them on the
/// next Fetch.
const MAX_BAD: usize = 1 << 16;
/// How long reading such an answer may take (it is 64 MiB and more).
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// What reading an oversized answer gave: the Fetch's result, and whether the answer was
/// read to its end (when not, the connection must be opened again).
pub(super) struct Oversized {
    pub(super) fetched: Fetched,
    pub(super) whole: bool,
}

/// Fetch `partition` of `topic` from `offset` on `conn`, reading the first record batch's
/// records one at a time. Errors: as a Fetch's, or a batch that is not of format v2.
pub(super) async fn fetch(
    conn: &mut Conn,
    topic: &kafka_protocol::messages::TopicName,
    partition: i32,
    offset: i64,
) -> Result<Oversized, FetchError> {
    let req = FetchRequest::default()
        // Some brokers (Tansu) answer a Fetch that waits not at all with no partition.
        .with_max_wait_ms(500)
        .with_min_bytes(1)
        .with_max_bytes(1)
        .with_isolation_level(1)
        .with_topics(vec![FetchTopic::default()
            .with_topic(topic.clone())
            .with_partitions(vec![FetchPartition::default()
                .with_partition(partition)
                .with_fetch_offset(offset)
                .with_partition_max_bytes(1)])]);
    let read = async {
        let (v, len) = conn.send_unread(&req, FETCH_VERSION).await?;
        if v < 4 {
            return Err(format!("Fetch version {v} has no isolation level").into());
        }
        let mut r = In(conn.stream().take(len));
        let got = answer(&mut r, v, partition, offset).await?;
        let whole = got.whole && r.skip(r.0.limit()).await.is_ok();
        Ok(Oversized {
            fetched: got.fetched,
            whole,
        })
    };
    match tokio::time::timeout(TIMEOUT, read).await {
        Ok(r) => r.map_err(|e: Failure| match e {
            Failure::Code(c) => FetchError::Code(c),
            Failure::Other(e) => FetchError::Other(format!("{}: Fetch: {e}", conn.addr)),
        }),
        Err(_) => Err(FetchError::Other(format!(
            "{}: Fetch: no answer within {} s",
            conn.addr,
            TIMEOUT.as_secs()
        ))),
    }
}

/// A failure while reading: the partition's error code, or anything else.
enum Failure {
    Code(i16),
    Other(String),
}

impl From<String> for Failure {
    fn from(e: String) -> Failure {
        Failure::Other(e)
    }
}

impl From<&str> for Failure {
    fn from(e: &str) -> Failure {
        Failure::Other(e.to_string())
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        Failure::Other(e.to_string())
    }
}

/// The answer's body after its header, at version `v` (4 to 10): the partition's records.
async fn answer(r: &mut In<'_>, v: i16, partition: i32, offset: i64) -> Result<Oversized, Failure> {
    r.i32().await?; // throttle_time_ms
    if v >= 7 {
        let code = r.i16().await?;
        if code != 0 {
            return Err(Failure::Code(code));
        }
        r.i32().await?; // session_id
    }
    for _ in 0..r.i32().await?.max(0) {
        let name = r.i16().await?;
        r.skip(u64::try_from(name).unwrap_or(0)).await?;
        for _ in 0..r.i32().await?.max(0) {
            let index = r.i32().await?;
            let code = r.i16().await?;
            let high_watermark = r.i64().await?;
            r.i64().await?; // last_stable_offset
            if v >= 5 {
                r.i64().await?; // log_start_offset
            }
            let mut aborted = Vec::new();
            for _ in 0..r.i32().await?.max(0) {
                aborted.push((r.i64().await?, r.i64().await?));
            }
            let len = u64::try_from(r.i32().await?).unwrap_or(0);
            if index != partition {
                r.skip(len).await?;
                continue;
            }
            if code != 0 {
                return Err(Failure::Code(code));
            }
            let mut batches = Batches {
                offset,
                aborted,
                records: Vec::new(),
                kept_bytes: 0,
                next: offset,
            };
            let whole = batches.read(r, len).await?;
            return Ok(Oversized {
                fetched: Fetched {
                    records: batches.records,
                    high_watermark,
                    next: batches.next,
                },
                whole,
            });
        }
    }
    Err(Failure::Other("an answer without the partition".into()))
}

/// The record batches of one partition's answer, read from `offset` on.
struct Batches {
    offset: i64,
    /// (producer id, first offset) of the aborted transactions the answer lists.
    aborted: Vec<(i64, i64)>,
    records: Vec<Message>,
    /// Bytes of the values in `records`.
    kept_bytes: usize,
    /// The offset the next Fetch asks for.
    next: i64,
}

/// The fixed part of a v2 record batch after its base offset and length.
const BATCH_HEAD: u64 = 49;

impl Batches {
    /// Read `len` bytes of batches; false when the records kept reached their bound and
    /// the rest was left unread.
    async fn read(&mut self, r: &mut In<'_>, mut len: u64) -> Result<bool, Failure> {
        while len >= 12 + BATCH_HEAD {
            let base = r.i64().await?;
            let body = u64::try_from(r.i32().await?).unwrap_or(0);
            len -= 12;
            if body > len || body < BATCH_HEAD {
                // Cut short by the answer's end: the next Fetch answers it.
                r.skip(len).await?;
                return Ok(true);
            }
            len -= body;
            r.i32().await?; // partition_leader_epoch
            let magic = r.i8().await?;
            if magic != 2 {
                return Err(format!("a record batch of format {magic}").into());
            }
            r.i32().await?; // crc
            let attributes = r.i16().await?;
            let last = base + i64::from(r.i32().await?);
            let base_ts = r.i64().await?;
            r.i64().await?; // max_timestamp
            let producer = r.i64().await?;
            r.skip(6).await?; // producer_epoch, base_sequence
            let count = r.i32().await?;
            let rest = body - BATCH_HEAD;
            let aborted = attributes & 0x10 != 0
                && self
                    .aborted
                    .iter()
                    .any(|&(p, first)| p == producer && first <= last);
            let unread = if attributes & 0x20 != 0 || aborted {
                r.skip(rest).await?; // control records, an aborted transaction's
                None
            } else if attributes & 7 != 0 {
                r.skip(rest).await?;
                self.compressed(base, last, body + 12)
            } else {
                self.records(r, base, base_ts, count, rest).await?
            };
            if let Some(at) = unread {
                self.next = at;
                return Ok(false);
            }
            self.next = self.next.max(last + 1);
        }
        r.skip(len).await?;
        Ok(true)
    }

    /// Each record of a compressed batch `base..=last` of `len` bytes from the offset asked
    /// for is bad; at most [`MAX_BAD`] of them, then the offset to go on from.
    fn compressed(&mut self, base: i64, last: i64, len: u64) -> Option<i64> {
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        for o in base.max(self.offset)..=last {
            if self.records.len() >= MAX_BAD {
                return Some(o);
            }
            self.records.push(bad(o, "compressed record batch", len));
        }
        None
    }

    /// The `count` records of an uncompressed batch (`rest` bytes); the offset to go on
    /// from when the values kept reached their bound.
    async fn records(
        &mut self,
        r: &mut In<'_>,
        base: i64,
        base_ts: i64,
        count: i32,
        mut rest: u64,
    ) -> Result<Option<i64>, Failure> {
        for _ in 0..count {
            let (len, n) = r.varint().await?;
            let len = u64::try_from(len).map_err(|_| "a record of negative length")?;
            rest = rest.checked_sub(n + len).ok_or("a record past its batch")?;
            let mut left = len;
            let mut head = |n: u64| -> Result<(), Failure> {
                left = left
                    .checked_sub(n)
                    .ok_or("a record shorter than its header")?;
                Ok(())
            };
            r.i8().await?; // attributes
            head(1)?;
            let (ts_delta, n) = r.varint().await?;
            head(n)?;
            let (offset_delta, n) = r.varint().await?;
            head(n)?;
            let o = base + offset_delta;
            let huge = usize::try_from(left).map_or(true, |l| l > MAX_FETCH_ANSWER_BYTES);
            if o < self.offset || huge {
                r.skip(left).await?;
                if o >= self.offset {
                    self.records.push(bad(o, "record", len as usize));
                }
                continue;
            }
            if !self.records.is_empty() && self.kept_bytes + left as usize > MAX_FETCH_ANSWER_BYTES
            {
                return Ok(Some(o));
            }
            let mut buf = BytesMut::zeroed(left as usize);
            r.0.read_exact(&mut buf).await?;
            let value = value(buf.freeze())?;
            self.kept_bytes += value.as_ref().map_or(0, Bytes::len);
            self.records.push(Message {
                offset: o,
                timestamp_ms: base_ts.saturating_add(ts_delta),
                value,
                too_long: None,
            });
        }
        r.skip(rest).await?;
        Ok(None)
    }
}

/// A bad message at offset `o`: a `what` of `len` bytes.
fn bad(o: i64, what: &'static str, len: usize) -> Message {
    Message {
        offset: o,
        timestamp_ms: i64::MAX,
        value: None,
        too_long: Some((what, len)),
    }
}

/// The value of a record from its key length on (key, value, headers).
fn value(mut b: Bytes) -> Result<Option<Bytes>, Failure> {
    let key = zigzag(&mut b)?;
    if key > 0 {
        let key = usize::try_from(key).unwrap_or(usize::MAX);
        if key > b.len() {
            return Err("a key past its record".into());
        }
        let _ = b.split_to(key);
    }
    let len = zigzag(&mut b)?;
    if len < 0 {
        return Ok(None);
    }
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    if len > b.len() {
        return Err("a value past its record".into());
    }
    Ok(Some(b.split_to(len)))
}

/// A zigzag varint from the head of `b`.
fn zigzag(b: &mut Bytes) -> Result<i64, Failure> {
    let mut raw: u64 = 0;
    for shift in (0..70).step_by(7) {
        let Some(&byte) = b.first() else { break };
        let _ = b.split_to(1);
        raw |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok((raw >> 1) as i64 ^ -((raw & 1) as i64));
        }
    }
    Err("a bad varint".into())
}

/// An answer's body, read as it comes.
struct In<'a>(Take<&'a mut TcpStream>);

impl In<'_> {
    async fn i8(&mut self) -> std::io::Result<i8> {
        self.0.read_i8().await
    }
    async fn i16(&mut self) -> std::io::Result<i16> {
        self.0.read_i16().await
    }
    async fn i32(&mut self) -> std::io::Result<i32> {
        self.0.read_i32().await
    }
    async fn i64(&mut self) -> std::io::Result<i64> {
        self.0.read_i64().await
    }

    /// Pass over `n` bytes.
    async fn skip(&mut self, n: u64) -> std::io::Result<()> {
        let read = tokio::io::copy(&mut (&mut self.0).take(n), &mut tokio::io::sink()).await?;
        if read < n {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        Ok(())
    }

    /// A zigzag varint (up to 64 bits) and the bytes it took.
    async fn varint(&mut self) -> Result<(i64, u64), Failure> {
        read_zigzag(&mut self.0).await
    }
}

async fn read_zigzag(r: &mut (impl AsyncRead + Unpin)) -> Result<(i64, u64), Failure> {
    let mut raw: u64 = 0;
    for (i, shift) in (0..70).step_by(7).enumerate() {
        let byte = r.read_u8().await?;
        raw |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(((raw >> 1) as i64 ^ -((raw & 1) as i64), i as u64 + 1));
        }
    }
    Err("a bad varint".into())
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    #[test]
    fn zigzag_varints() {
        for (bytes, want) in [
            (&[0x00][..], 0),
            (&[0x01], -1),
            (&[0x02], 1),
            (&[0xac, 0x02], 150),
            (&[0x01], -1),
        ] {
            let mut b = Bytes::copy_from_slice(bytes);
            assert!(
                matches!(super::zigzag(&mut b), Ok(v) if v == want),
                "{bytes:?}"
            );
            assert!(b.is_empty());
        }
        assert!(super::zigzag(&mut Bytes::from_static(&[0x80])).is_err());
    }

    #[test]
    fn a_value_after_its_key() {
        // key of 2 bytes (zigzag 4), value of 3 (zigzag 6), no headers (0).
        let got = super::value(Bytes::from_static(b"\x04k1\x06abc\x00"))
            .ok()
            .flatten();
        assert_eq!(got.as_deref(), Some(&b"abc"[..]));
        // null key (-1: 0x01), null value.
        assert!(matches!(
            super::value(Bytes::from_static(b"\x01\x01\x00")),
            Ok(None)
        ));
        assert!(super::value(Bytes::from_static(b"\x01\x0aab")).is_err());
    }
}
