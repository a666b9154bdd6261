//! A partition's Fetch requests, on a connection of its own to the partition's leader
//! ([`super::kafka_wire`]), with record batches decoded by the `kafka-protocol` crate.
//!
//! The answer is read into one buffer and every record's value is a slice of it (no copy
//! per record), which is most of what a source pays for a message before decoding it.
//! rskafka, which the rest of the source uses, copies each key and value into a `Vec`.
//!
//! Reads are `read_committed`: records past the last stable offset are not answered, and
//! the records of aborted transactions are dropped here with the answer's list of aborted
//! transactions, as Kafka's own consumer does (a producer's records are aborted from the
//! transaction's first offset until its ABORT control record). Control records are never
//! records of the stream. A batch cut short by the Fetch's byte limit is left for the next
//! Fetch; records before the offset asked for (a batch is answered whole) are dropped.

use std::collections::{BTreeMap, HashSet};

use bytes::{Buf, Bytes};
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::fetch_response::AbortedTransaction;
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::{FetchRequest, MetadataRequest, TopicName};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{Record, RecordBatchDecoder};

use super::kafka_wire::Conn;
use super::spec::Sasl;

/// The newest Fetch version asked for: the last that names topics (13 on use topic ids).
const FETCH_VERSION: i16 = 12;
/// The newest Metadata version asked for (the last that names topics only).
const METADATA_VERSION: i16 = 9;
/// The largest Fetch answer read. Brokers answer more than the bytes asked for (a whole
/// first batch however large it is; Tansu half as much again), so this bounds the
/// answer, not the request.
pub(super) const MAX_FETCH_ANSWER_BYTES: usize = 64 << 20;
/// Kafka's OFFSET_OUT_OF_RANGE error code.
pub(super) const OFFSET_OUT_OF_RANGE: i16 = 1;

/// The address (`host:port`) of each partition's leader of `topic`, asked of the first
/// of `bootstrap` that answers. Errors: no broker answers, the topic is unknown, or a
/// partition has no leader (yet).
pub(super) async fn leaders(
    bootstrap: &[String],
    sasl: Option<&Sasl>,
    topic: &str,
) -> Result<BTreeMap<i32, String>, String> {
    let mut last = String::from("no bootstrap broker");
    for addr in bootstrap {
        let mut conn = match Conn::open(addr, sasl).await {
            Ok(c) => c,
            Err(e) => {
                last = e;
                continue;
            }
        };
        let req = MetadataRequest::default().with_topics(Some(vec![
            MetadataRequestTopic::default().with_name(Some(topic_name(topic))),
        ]));
        let answer = conn.send(&req, METADATA_VERSION).await?;
        let brokers: BTreeMap<i32, String> = answer
            .brokers
            .iter()
            .map(|b| (*b.node_id, format!("{}:{}", b.host.as_str(), b.port)))
            .collect();
        let t = answer
            .topics
            .iter()
            .find(|t| t.name.as_ref().is_some_and(|n| n.as_str() == topic))
            .ok_or_else(|| format!("{addr}: no metadata for topic \"{topic}\""))?;
        if t.error_code != 0 {
            return Err(format!(
                "{addr}: topic \"{topic}\": {}",
                super::kafka_wire::error_name(t.error_code)
            ));
        }
        return t
            .partitions
            .iter()
            .map(|p| match brokers.get(&*p.leader_id) {
                Some(a) if p.error_code == 0 => Ok((p.partition_index, a.clone())),
                _ => Err(format!(
                    "{addr}: partition {} of \"{topic}\" has no leader",
                    p.partition_index
                )),
            })
            .collect();
    }
    Err(last)
}

/// A data record of a partition.
#[derive(Debug)]
pub(super) struct Message {
    pub(super) offset: i64,
    /// Milliseconds since the Unix epoch (the producer's, or the broker's for a topic with
    /// `message.timestamp.type=LogAppendTime`).
    pub(super) timestamp_ms: i64,
    /// The value: a slice of the Fetch's answer. A record without one is a bad message.
    pub(super) value: Option<Bytes>,
    /// What was too long to read and its length (`("record", 70_000_000)`), when the
    /// record was longer than the source reads ([`MAX_FETCH_ANSWER_BYTES`]): it is not
    /// read but counted bad.
    pub(super) too_long: Option<(&'static str, usize)>,
}

/// One Fetch's answer for a partition.
pub(super) struct Fetched {
    /// The data records from the offset asked for on, in offset order.
    pub(super) records: Vec<Message>,
    /// The partition's high watermark.
    pub(super) high_watermark: i64,
    /// The offset the next Fetch asks for: after the last record answered (control and
    /// aborted records included), or the offset asked for when none was.
    pub(super) next: i64,
}

/// Why a Fetch failed: the broker's error code for the partition, or another failure.
pub(super) enum FetchError {
    /// The partition's error code (e.g. [`OFFSET_OUT_OF_RANGE`]).
    Code(i16),
    /// A broken connection, an answer that does not decode.
    Other(String),
    /// An answer longer than [`MAX_FETCH_ANSWER_BYTES`] (its length): the first record
    /// batch from the offset asked for is that long; the connection is of no more use.
    TooLong(usize),
}

/// Fetches of one partition on one connection to its leader.
pub(super) struct PartitionFetch {
    conn: Conn,
    topic: TopicName,
    partition: i32,
    max_bytes: i32,
    max_wait_ms: i32,
}

impl PartitionFetch {
    /// A connection to `leader` for `partition` of `topic`; each Fetch asks for at most
    /// `max_bytes` and waits at most `max_wait_ms` for them. Errors: as [`Conn::open`].
    pub(super) async fn open(
        leader: &str,
        sasl: Option<&Sasl>,
        topic: &str,
        partition: i32,
        max_bytes: i32,
        max_wait_ms: i32,
    ) -> Result<PartitionFetch, String> {
        Ok(PartitionFetch {
            conn: Conn::open(leader, sasl).await?,
            topic: topic_name(topic),
            partition,
            max_bytes,
            max_wait_ms,
        })
    }

    /// The Fetch at `offset` whose answer was too long ([`FetchError::TooLong`]), made
    /// again and read record by record (see [`super::kafka_oversize`]).
    pub(super) async fn fetch_oversized(
        &mut self,
        offset: i64,
    ) -> Result<super::kafka_oversize::Oversized, FetchError> {
        super::kafka_oversize::fetch(&mut self.conn, &self.topic, self.partition, offset).await
    }

    /// The committed records from `offset` on.
    pub(super) async fn fetch(&mut self, offset: i64) -> Result<Fetched, FetchError> {
        let req = FetchRequest::default()
            .with_max_wait_ms(self.max_wait_ms)
            .with_min_bytes(1)
            .with_max_bytes(self.max_bytes)
            .with_isolation_level(1)
            .with_topics(vec![FetchTopic::default()
                .with_topic(self.topic.clone())
                .with_partitions(vec![FetchPartition::default()
                    .with_partition(self.partition)
                    .with_fetch_offset(offset)
                    .with_partition_max_bytes(self.max_bytes)])]);
        let answer = self
            .conn
            .send_sized(&req, FETCH_VERSION, MAX_FETCH_ANSWER_BYTES)
            .await;
        let answer = match answer {
            Ok(a) => a,
            Err(e) => {
                return Err(match self.conn.too_long.take() {
                    Some(len) => FetchError::TooLong(len),
                    None => FetchError::Other(e),
                })
            }
        };
        if answer.error_code != 0 {
            return Err(FetchError::Code(answer.error_code));
        }
        let p = answer
            .responses
            .into_iter()
            .flat_map(|t| t.partitions)
            .find(|p| p.partition_index == self.partition)
            .ok_or_else(|| FetchError::Other("an answer without the partition".into()))?;
        if p.error_code != 0 {
            return Err(FetchError::Code(p.error_code));
        }
        let aborted = p.aborted_transactions.unwrap_or_default();
        let (records, next) =
            records(p.records.unwrap_or_default(), offset, aborted).map_err(FetchError::Other)?;
        Ok(Fetched {
            records,
            high_watermark: p.high_watermark,
            next,
        })
    }
}

/// The data records of the whole batches in `buf` from `offset` on, without those of
/// `aborted` transactions, and the offset after the last record of those batches.
/// Errors: a batch that does not decode (bad CRC, an unknown compression).
fn records(
    mut buf: Bytes,
    offset: i64,
    mut aborted: Vec<AbortedTransaction>,
) -> Result<(Vec<Message>, i64), String> {
    aborted.sort_by_key(|a| std::cmp::Reverse(a.first_offset));
    let mut aborting: HashSet<i64> = HashSet::new();
    let (mut out, mut next) = (Vec::new(), offset);
    while let Some(len) = whole_batch(&buf) {
        let mut batch = buf.split_to(len);
        let set = RecordBatchDecoder::decode(&mut batch).map_err(|e| e.to_string())?;
        let Some(last) = set.records.last().map(|r| r.offset) else {
            continue;
        };
        next = next.max(last + 1);
        // Transactions that began at or before this batch's last record.
        while aborted.last().is_some_and(|a| a.first_offset <= last) {
            let a = aborted.pop().expect("just seen");
            aborting.insert(*a.producer_id);
        }
        for r in set.records {
            if r.control {
                if is_abort_marker(&r) {
                    aborting.remove(&r.producer_id);
                }
            } else if r.offset >= offset && !(r.transactional && aborting.contains(&r.producer_id))
            {
                out.push(Message {
                    offset: r.offset,
                    timestamp_ms: r.timestamp,
                    value: r.value,
                    too_long: None,
                });
            }
        }
    }
    Ok((out, next))
}

/// The length of the batch at the head of `buf` when `buf` holds all of it: a batch is
/// its base offset (8 bytes), its length (4) and that many bytes.
fn whole_batch(buf: &Bytes) -> Option<usize> {
    let mut head = buf.get(8..12)?;
    let len = usize::try_from(head.get_i32()).ok()? + 12;
    (buf.len() >= len).then_some(len)
}

/// True for an ABORT control record (key: version i16, type i16 with 0 = ABORT).
fn is_abort_marker(r: &Record) -> bool {
    r.key
        .as_ref()
        .is_some_and(|k| k.len() >= 4 && i16::from_be_bytes([k[2], k[3]]) == 0)
}

fn topic_name(topic: &str) -> TopicName {
    TopicName(StrBytes::from_string(topic.to_string()))
}

#[cfg(test)]
mod tests {
    use bytes::{Bytes, BytesMut};
    use kafka_protocol::messages::fetch_response::AbortedTransaction;
    use kafka_protocol::messages::ProducerId;
    use kafka_protocol::records::{
        Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
    };

    /// Record `offset` of `producer` (-1: none); a control record's key is its marker
    /// (0 ABORT, 1 COMMIT).
    fn record(offset: i64, producer: i64, control: Option<i16>) -> Record {
        let marker = control.map(|t| {
            let mut k = vec![0, 0];
            k.extend_from_slice(&t.to_be_bytes());
            Bytes::from(k)
        });
        Record {
            transactional: producer >= 0,
            control: control.is_some(),
            delete_horizon: false,
            partition_leader_epoch: 0,
            producer_id: producer,
            producer_epoch: 0,
            timestamp_type: TimestampType::Creation,
            offset,
            sequence: offset as i32,
            timestamp: 1_000 + offset,
            key: marker,
            value: control.is_none().then(|| Bytes::from(format!("v{offset}"))),
            headers: Default::default(),
        }
    }

    /// The batches of `records` (one per run of records sharing a producer and kind).
    fn batches(records: &[Record], compression: Compression) -> Bytes {
        let mut buf = BytesMut::new();
        let options = RecordEncodeOptions {
            version: 2,
            compression,
        };
        RecordBatchEncoder::encode(&mut buf, records, &options).expect("encodes");
        buf.freeze()
    }

    fn offsets(r: &[super::Message]) -> Vec<i64> {
        r.iter().map(|r| r.offset).collect()
    }

    /// Offsets 0-2 plain, 3-4 producer 7 then its ABORT at 5, 6-7 producer 8 then its
    /// COMMIT at 8, 9-10 plain.
    fn log() -> Vec<Record> {
        let mut log: Vec<Record> = (0..3).map(|o| record(o, -1, None)).collect();
        log.extend((3..5).map(|o| record(o, 7, None)));
        log.push(record(5, 7, Some(0)));
        log.extend((6..8).map(|o| record(o, 8, None)));
        log.push(record(8, 8, Some(1)));
        log.extend((9..11).map(|o| record(o, -1, None)));
        log
    }

    #[test]
    fn aborted_transactions_and_control_records_are_dropped() {
        let aborted = vec![AbortedTransaction::default()
            .with_producer_id(ProducerId(7))
            .with_first_offset(3)];
        let (got, next) =
            super::records(batches(&log(), Compression::None), 1, aborted).expect("decodes");
        // From offset 1 on (the first batch is answered whole), without producer 7's.
        assert_eq!(offsets(&got), [1, 2, 6, 7, 9, 10]);
        assert_eq!(next, 11);
        assert_eq!(got[0].value.as_deref(), Some(&b"v1"[..]));
        assert_eq!(got[0].timestamp_ms, 1_001);
    }

    #[test]
    fn without_the_aborted_list_every_data_record_is_kept() {
        let (got, next) =
            super::records(batches(&log(), Compression::Gzip), 0, Vec::new()).expect("decodes");
        assert_eq!(offsets(&got), [0, 1, 2, 3, 4, 6, 7, 9, 10]);
        assert_eq!(next, 11);
    }

    #[test]
    fn a_batch_cut_short_is_left_for_the_next_fetch() {
        let whole = batches(&log()[..3], Compression::None);
        let next_batch = batches(&[record(3, -1, None)], Compression::None);
        let mut buf = BytesMut::from(&whole[..]);
        buf.extend_from_slice(&next_batch[..next_batch.len() - 5]);
        let (got, next) = super::records(buf.freeze(), 0, Vec::new()).expect("decodes");
        assert_eq!(offsets(&got), [0, 1, 2]);
        assert_eq!(next, 3);
        // Not even a batch header: nothing, and the same offset again.
        let (got, next) = super::records(next_batch.slice(..10), 3, Vec::new()).expect("ok");
        assert!(got.is_empty());
        assert_eq!(next, 3);
    }

    #[test]
    fn a_corrupt_batch_is_an_error() {
        let mut buf = BytesMut::from(&batches(&log()[..3], Compression::None)[..]);
        let last = buf.len() - 1;
        buf[last] ^= 0xff;
        let err = super::records(buf.freeze(), 0, Vec::new()).expect_err("bad CRC");
        assert!(err.contains("Cyclic redundancy check"), "{err}");
    }
}
