//! One partition's fetcher: fetches its records and decodes them itself, so that the
//! partitions of a topic decode in parallel, into columnar chunks of at most
//! [`super::format::BATCH_ROWS`] rows that the source ([`super::kafka`]) delivers whole.
//!
//! A chunk covers consecutive offsets and says where it ends, so the source delivers
//! exactly the positions of the tuples it holds. Its bad messages travel with it (offset
//! and why), counted by the source; with `on_error = 'stop'` a chunk ends at its first
//! bad message, so that the source can stop right there (the chunk's rows delivered, the
//! bad message not) or, when it resumes past that message, go on with the next chunk.

use std::time::{Duration, Instant};

use rskafka::client::partition::{OffsetAt, PartitionClient};
use tokio::sync::mpsc;

use super::columnar::Appender;
use super::format::Decoder;
use super::kafka_fetch::{FetchError, Message, PartitionFetch, OFFSET_OUT_OF_RANGE};
use super::spec::Sasl;
use crate::exec::columns::ColumnBatch;

/// Bytes one Fetch of one partition asks for at most.
const FETCH_BYTES: i32 = 4 << 20;
/// How long a Fetch waits for data.
const FETCH_WAIT_MS: i32 = 500;

/// Consecutive records of one partition, decoded.
pub(super) struct Chunk {
    pub(super) partition: i32,
    /// The rows of the good messages among the records (none when all were bad or
    /// skipped, or when the Fetch brought no records).
    pub(super) batch: Option<ColumnBatch>,
    /// Good messages among the records.
    pub(super) messages: u64,
    /// The offset after the last record covered.
    pub(super) next: i64,
    /// The partition's high watermark the Fetch reported.
    pub(super) high_watermark: i64,
    /// The bad messages among the records: offset and why, in offset order. With
    /// `on_error = 'stop'` at most one, the last record covered.
    pub(super) bad: Vec<(i64, String)>,
}

/// What a fetcher hands over: a chunk, or why it stopped.
pub(super) type Fetched = Result<Chunk, String>;

/// A partition to read from an offset on.
pub(super) struct Fetcher {
    /// For the partition's earliest offset when the broker no longer has the next one.
    pub(super) client: std::sync::Arc<PartitionClient>,
    /// The partition leader's `host:port`, fetched from on a connection of its own.
    pub(super) leader: String,
    pub(super) sasl: Option<Sasl>,
    pub(super) partition: i32,
    pub(super) offset: i64,
    /// `start = '<timestamp>'`: records stamped before it (microseconds since the epoch)
    /// are passed over until the first one that is not.
    pub(super) skip_before: Option<i64>,
    pub(super) topic: String,
    /// `on_error = 'stop'`: end a chunk at each bad message.
    pub(super) stop_on_bad: bool,
    pub(super) decoder: Decoder,
    /// The longest a request may take.
    pub(super) timeout: Duration,
}

/// What the fetching half hands the decoding half: one Fetch's records, the offset after
/// them (past control and aborted records too) and the high watermark, or why it stopped.
type Records = Result<(Vec<Message>, i64, i64), String>;

impl Fetcher {
    /// Fetch and decode from `offset` on into `tx`, until the receiver is gone or a Fetch
    /// fails (the failure sent as the last item). The next Fetch is under way while the
    /// last one's records are decoded (one Fetch's records wait between the two).
    pub(super) async fn run(mut self, tx: mpsc::Sender<Fetched>) {
        let (rtx, mut rrx) = mpsc::channel::<Records>(1);
        let mut fetching = tokio::task::JoinSet::new(); // aborted when this task ends
        fetching.spawn(fetch(
            Leader {
                client: self.client.clone(),
                addr: self.leader.clone(),
                sasl: self.sasl.clone(),
                topic: self.topic.clone(),
                partition: self.partition,
            },
            self.offset,
            self.timeout,
            rtx,
        ));
        let mut appender = Appender::new(self.decoder.clone());
        while let Some(fetched) = rrx.recv().await {
            let sent = match fetched {
                Ok((records, next, hw)) if records.is_empty() => {
                    self.offset = next;
                    tx.send(Ok(self.chunk(None, 0, Vec::new(), hw)))
                        .await
                        .is_ok()
                }
                Ok((records, next, hw)) => self.decode(records, next, hw, &mut appender, &tx).await,
                Err(why) => {
                    let _ = tx.send(Err(why)).await;
                    return;
                }
            };
            if !sent {
                return;
            }
        }
    }

    /// Decode `records` (one Fetch's, in offset order, `next` the offset after them) into
    /// chunks sent to `tx`; false once the receiver is gone.
    async fn decode(
        &mut self,
        records: Vec<Message>,
        next: i64,
        hw: i64,
        appender: &mut Appender,
        tx: &mpsc::Sender<Fetched>,
    ) -> bool {
        let now = crate::time::now_us();
        let (mut messages, mut bad) = (0, Vec::new());
        let last = records.len() - 1;
        for (i, r) in records.into_iter().enumerate() {
            self.offset = r.offset + 1;
            let stamped = r.timestamp_ms.saturating_mul(1000);
            if self.skip_before.is_some_and(|t| stamped >= t) {
                self.skip_before = None;
            }
            if self.skip_before.is_none() {
                let decoded = match (&r.value, r.too_long) {
                    (_, Some((what, len))) => Err(format!(
                        "a {what} of {len} bytes is longer than the {} bytes a Fetch reads",
                        super::kafka_fetch::MAX_FETCH_ANSWER_BYTES
                    )),
                    (None, _) => Err("a record without a value".to_string()),
                    (Some(v), _) => appender.message(v, Some(&self.topic), now),
                };
                match decoded {
                    Ok(_) => messages += 1,
                    Err(e) => bad.push((r.offset, e)),
                }
            }
            let cut = appender.is_full() || (self.stop_on_bad && !bad.is_empty());
            // Past the control and aborted records after the last one, unless the source
            // stops on it (it is then the chunk's last offset).
            if i == last && (!self.stop_on_bad || bad.is_empty()) {
                self.offset = next.max(self.offset);
            }
            if i == last || cut {
                let batch = (appender.len() > 0).then(|| appender.finish());
                let chunk = self.chunk(batch, messages, std::mem::take(&mut bad), hw);
                if tx.send(Ok(chunk)).await.is_err() {
                    return false;
                }
                messages = 0;
            }
        }
        true
    }

    fn chunk(
        &self,
        batch: Option<ColumnBatch>,
        messages: u64,
        bad: Vec<(i64, String)>,
        high_watermark: i64,
    ) -> Chunk {
        Chunk {
            partition: self.partition,
            batch,
            messages,
            next: self.offset,
            high_watermark,
            bad,
        }
    }
}

/// A Fetch connection to `leader`'s partition. Errors: as [`PartitionFetch::open`], or
/// none within `timeout`, naming the partition.
async fn open(leader: &Leader, timeout: Duration) -> Result<PartitionFetch, String> {
    let p = leader.partition;
    let opened = PartitionFetch::open(
        &leader.addr,
        leader.sasl.as_ref(),
        &leader.topic,
        p,
        FETCH_BYTES,
        FETCH_WAIT_MS,
    );
    match tokio::time::timeout(timeout, opened).await {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(e)) => Err(format!("partition {p}: {e}")),
        Err(_) => Err(format!("partition {p}: no connection")),
    }
}

/// How long a partition's log must end before the source's offset before the offset is
/// taken as out of range (see [`fetch`]).
const BEYOND_GRACE: Duration = Duration::from_secs(10);

/// The partition's earliest offset, for a source whose `offset` the broker no longer has
/// (retention, a topic made again), with a warning. Errors: no earliest offset, or one
/// that is `offset` itself (a log that still ends before it).
async fn earliest_after(leader: &Leader, offset: i64, timeout: Duration) -> Result<i64, String> {
    let p = leader.partition;
    let earliest = leader.client.get_offset(OffsetAt::Earliest);
    match tokio::time::timeout(timeout, earliest).await {
        Ok(Ok(earliest)) if earliest != offset => {
            tracing::warn!(
                "kafka partition {p}: offset {offset} is no longer on the broker; going on from {earliest}"
            );
            Ok(earliest)
        }
        Ok(Ok(_)) => Err(format!(
            "partition {p}: offset {offset} is beyond the end of the log"
        )),
        _ => Err(format!("partition {p}: no earliest offset")),
    }
}

/// The Fetch at `offset` whose answer was longer than a source reads, made again on a new
/// connection (left in `conn`) and read record by record ([`super::kafka_oversize`]): a
/// record too long is a bad message of its own, the batch's other records are read. The
/// connection is opened again when the answer was not read to its end. Errors: no
/// connection, the Fetch failed.
async fn oversized(
    leader: &Leader,
    conn: &mut PartitionFetch,
    offset: i64,
    timeout: Duration,
) -> Result<super::kafka_fetch::Fetched, String> {
    let p = leader.partition;
    *conn = open(leader, timeout).await?;
    let o = conn.fetch_oversized(offset).await.map_err(|e| match e {
        FetchError::Code(c) => format!("partition {p}: {}", super::kafka_wire::error_name(c)),
        FetchError::Other(e) => format!("partition {p}: {e}"),
        FetchError::TooLong(len) => format!("partition {p}: an answer of {len} bytes"),
    })?;
    if !o.whole {
        *conn = open(leader, timeout).await?;
    }
    Ok(o.fetched)
}

/// The partition a fetch task reads, and how to reach it.
struct Leader {
    client: std::sync::Arc<PartitionClient>,
    addr: String,
    sasl: Option<Sasl>,
    topic: String,
    partition: i32,
}

/// Fetch `leader`'s partition from `offset` on into `tx` (records, or the high watermark
/// when it moved), until the receiver is gone or a Fetch fails (the failure sent as the
/// last item). An offset the broker no longer has (retention, or a log that ends before
/// it for [`BEYOND_GRACE`]: the topic made again) moves to the partition's earliest, with
/// a warning.
async fn fetch(leader: Leader, mut offset: i64, timeout: Duration, tx: mpsc::Sender<Records>) {
    let p = leader.partition;
    let mut conn = match open(&leader, timeout).await {
        Ok(c) => c,
        Err(e) => return drop(tx.send(Err(e)).await),
    };
    let mut last_hw = -1;
    let mut beyond_since: Option<Instant> = None;
    loop {
        let fetched = conn.fetch(offset).await;
        // A log that ends before the offset (the topic deleted and made again, a log
        // truncated) is one the offset is out of range of, though a broker may answer it
        // without OFFSET_OUT_OF_RANGE (Tansu does): the source would wait there for
        // records that never come, and read none of the new ones. A new leader's high
        // watermark may lag the old one's for a moment, so only a log that stays short
        // for BEYOND_GRACE is taken for one.
        let beyond = matches!(&fetched, Ok(f) if (0..offset).contains(&f.high_watermark));
        if !beyond {
            beyond_since = None;
        }
        let beyond =
            beyond && beyond_since.get_or_insert_with(Instant::now).elapsed() >= BEYOND_GRACE;
        let records = match fetched {
            Err(FetchError::Code(OFFSET_OUT_OF_RANGE)) => {
                match earliest_after(&leader, offset, timeout).await {
                    Ok(earliest) => {
                        offset = earliest;
                        continue;
                    }
                    Err(e) => Err(e),
                }
            }
            Ok(_) if beyond => match earliest_after(&leader, offset, timeout).await {
                Ok(earliest) => {
                    offset = earliest;
                    continue;
                }
                Err(e) => Err(e),
            },
            Ok(f) => {
                let moved = f.next != offset;
                offset = f.next;
                if !moved && f.high_watermark == last_hw {
                    continue;
                }
                last_hw = f.high_watermark;
                Ok((f.records, f.next, f.high_watermark))
            }
            // An answer longer than the source reads: read again as it comes.
            Err(FetchError::TooLong(_)) => {
                match oversized(&leader, &mut conn, offset, timeout).await {
                    Ok(f) => {
                        offset = f.next;
                        last_hw = f.high_watermark;
                        Ok((f.records, f.next, f.high_watermark))
                    }
                    Err(e) => Err(e),
                }
            }
            Err(FetchError::Code(c)) => Err(format!(
                "partition {p}: {}",
                super::kafka_wire::error_name(c)
            )),
            Err(FetchError::Other(e)) => Err(format!("partition {p}: {e}")),
        };
        let failed = records.is_err();
        if tx.send(records).await.is_err() || failed {
            return;
        }
    }
}
