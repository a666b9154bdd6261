//! One partition's fetcher: fetches its records and decodes them itself, so that the
//! partitions of a topic decode in parallel, into columnar chunks of at most
//! [`super::format::BATCH_ROWS`] rows that the source ([`super::kafka`]) delivers whole.
//!
//! A chunk covers consecutive offsets and says where it ends, so the source delivers
//! exactly the positions of the tuples it holds. Its bad messages travel with it (offset
//! and why), counted by the source; with `on_error = 'stop'` a chunk ends at its first
//! bad message, so that the source can stop right there (the chunk's rows delivered, the
//! bad message not) or, when it resumes past that message, go on with the next chunk.

use std::time::Duration;

use rskafka::client::partition::{OffsetAt, PartitionClient};
use rskafka::record::RecordAndOffset;
use tokio::sync::mpsc;

use super::columnar::Appender;
use super::format::Decoder;
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
    pub(super) client: std::sync::Arc<PartitionClient>,
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

/// What the fetching half hands the decoding half: one Fetch's records and the high
/// watermark, or why it stopped.
type Records = Result<(Vec<RecordAndOffset>, i64), String>;

impl Fetcher {
    /// Fetch and decode from `offset` on into `tx`, until the receiver is gone or a Fetch
    /// fails (the failure sent as the last item). The next Fetch is under way while the
    /// last one's records are decoded (one Fetch's records wait between the two).
    pub(super) async fn run(mut self, tx: mpsc::Sender<Fetched>) {
        let (rtx, mut rrx) = mpsc::channel::<Records>(1);
        let mut fetching = tokio::task::JoinSet::new(); // aborted when this task ends
        fetching.spawn(fetch(
            self.client.clone(),
            self.partition,
            self.offset,
            self.timeout,
            rtx,
        ));
        let mut appender = Appender::new(self.decoder.clone());
        while let Some(fetched) = rrx.recv().await {
            let sent = match fetched {
                Ok((records, hw)) if records.is_empty() => tx
                    .send(Ok(self.chunk(None, 0, Vec::new(), hw)))
                    .await
                    .is_ok(),
                Ok((records, hw)) => self.decode(records, hw, &mut appender, &tx).await,
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

    /// Decode `records` (one Fetch's, in offset order) into chunks sent to `tx`; false
    /// once the receiver is gone.
    async fn decode(
        &mut self,
        records: Vec<RecordAndOffset>,
        hw: i64,
        appender: &mut Appender,
        tx: &mpsc::Sender<Fetched>,
    ) -> bool {
        let now = crate::time::now_us();
        let (mut messages, mut bad) = (0, Vec::new());
        let last = records.len() - 1;
        for (i, r) in records.into_iter().enumerate() {
            self.offset = r.offset + 1;
            let stamped = r.record.timestamp.timestamp_micros();
            if self.skip_before.is_some_and(|t| stamped >= t) {
                self.skip_before = None;
            }
            if self.skip_before.is_none() {
                let decoded = match &r.record.value {
                    None => Err("a record without a value".to_string()),
                    Some(v) => appender.message(v, Some(&self.topic), now),
                };
                match decoded {
                    Ok(_) => messages += 1,
                    Err(e) => bad.push((r.offset, e)),
                }
            }
            let cut = appender.is_full() || (self.stop_on_bad && !bad.is_empty());
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

/// Fetch partition `p` of `client` from `offset` on into `tx` (records, or the high
/// watermark when it moved), until the receiver is gone or a Fetch fails (the failure
/// sent as the last item). An offset the broker no longer has (retention) moves to the
/// partition's earliest, with a warning.
async fn fetch(
    client: std::sync::Arc<PartitionClient>,
    p: i32,
    mut offset: i64,
    timeout: Duration,
    tx: mpsc::Sender<Records>,
) {
    use rskafka::client::error::{Error, ProtocolError};
    let mut last_hw = -1;
    loop {
        let fetch = client.fetch_records(offset, 1..FETCH_BYTES, FETCH_WAIT_MS);
        let fetched = match tokio::time::timeout(timeout, fetch).await {
            Ok(r) => r,
            Err(_) => {
                let why = format!(
                    "partition {p}: no answer to a Fetch within {} s",
                    timeout.as_secs()
                );
                let _ = tx.send(Err(why)).await;
                return;
            }
        };
        let records = match fetched {
            Ok((records, hw)) => {
                if let Some(r) = records.last() {
                    offset = r.offset + 1;
                } else if hw == last_hw {
                    continue;
                }
                last_hw = hw;
                Ok((records, hw))
            }
            Err(Error::ServerError {
                protocol_error: ProtocolError::OffsetOutOfRange,
                ..
            }) => {
                let earliest = client.get_offset(OffsetAt::Earliest);
                match tokio::time::timeout(timeout, earliest).await {
                    Ok(Ok(earliest)) => {
                        tracing::warn!(
                            "kafka partition {p}: offset {offset} is no longer on the broker; going on from {earliest}"
                        );
                        offset = earliest;
                        continue;
                    }
                    _ => Err(format!("partition {p}: no earliest offset")),
                }
            }
            Err(e) => Err(format!("partition {p}: {e}")),
        };
        let failed = records.is_err();
        if tx.send(records).await.is_err() || failed {
            return;
        }
    }
}
