//! `connector = 'kafka'`: each row a message, with rskafka (the client of Kafka sources).
//!
//! A message's value is the row (one JSON object, or one CSV record, without its line
//! end); its key is a JSON object of the slide event's instant and the row's GROUP BY
//! keys (`{"wtime":"2001-01-01T01:00:00","origin":"SFO"}`), so that a consumer can tell a
//! message written twice from a new one; its timestamp is the event time. The partition is
//! chosen by a hash (CRC-32) of the GROUP BY keys alone, so each group's messages are in
//! order in one partition. A batch's messages for one partition are produced as one
//! request, which Kafka appends whole or not at all. The topic is created (with
//! `partitions` partitions) if it does not exist.
//!
//! Delivery: at least once. A batch that fails is retried by the engine, skipping the
//! partitions it already reached. For a query with windows the sink also reads back the
//! last message of each partition when it connects (after a restart, or after an error):
//! the rows of that partition up to that message's instant were written by an earlier run
//! and are not written again. With the sink's own position that makes delivery into Kafka
//! exactly once for a sink over an archived stream, as long as the sink is the only
//! producer of its topic and the topic keeps its partitions. Kafka transactions are not
//! used: rskafka has no transactional producer.

use std::time::Duration;

use rskafka::client::partition::{Compression, OffsetAt, PartitionClient, UnknownTopicHandling};
use rskafka::client::Client;
use rskafka::record::Record;

use super::encode;
use super::spec::{KafkaSinkSpec, SinkFormat};
use super::{SinkBatch, Writer};

/// How long any request may take before the connection is given up and made again.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Produces a sink's rows to its topic.
pub(super) struct KafkaWriter {
    spec: KafkaSinkSpec,
    format: SinkFormat,
    /// The query has windows: its rows' instants tell written messages from new ones.
    windowed: bool,
    conn: Option<Conn>,
    /// Partitions the batch being written reached already (a retried batch skips them);
    /// empty between batches.
    done: Vec<usize>,
}

/// A connection to the topic.
struct Conn {
    partitions: Vec<PartitionClient>,
    /// Per partition, once read back: the latest instant of this sink's messages in it.
    last: Vec<Option<Option<i64>>>,
    /// Kept for the partition clients' broker connections.
    _client: Client,
}

/// `f`, or an error after [`REQUEST_TIMEOUT`].
async fn within<T>(
    what: &str,
    f: impl std::future::Future<Output = Result<T, rskafka::client::error::Error>>,
) -> Result<T, String> {
    match tokio::time::timeout(REQUEST_TIMEOUT, f).await {
        Ok(r) => r.map_err(|e| format!("kafka {what}: {e}")),
        Err(_) => Err(format!(
            "kafka {what}: no answer within {} s",
            REQUEST_TIMEOUT.as_secs()
        )),
    }
}

impl KafkaWriter {
    pub(super) fn new(spec: KafkaSinkSpec, format: SinkFormat, windowed: bool) -> KafkaWriter {
        KafkaWriter {
            spec,
            format,
            windowed,
            conn: None,
            done: Vec::new(),
        }
    }

    async fn connect(&self) -> Result<Conn, String> {
        let client =
            crate::connect::kafka::client(&self.spec.bootstrap, self.spec.sasl.as_ref()).await?;
        let topic = &self.spec.topic;
        let mut ids = partition_ids(&client, topic).await?;
        if ids.is_empty() {
            let controller = client
                .controller_client()
                .map_err(|e| format!("kafka creating topic {topic}: {e}"))?;
            let created = controller.create_topic(topic, self.spec.partitions, 1, 5_000);
            if let Err(e) = within(&format!("creating topic {topic}"), created).await {
                tracing::info!("{e} (another client may have created it)");
            }
            ids = partition_ids(&client, topic).await?;
        }
        if ids.is_empty() {
            return Err(format!("kafka topic {topic} has no partitions"));
        }
        let mut partitions = Vec::with_capacity(ids.len());
        for p in ids {
            let pc = client.partition_client(topic.clone(), p, UnknownTopicHandling::Retry);
            partitions.push(within(&format!("partition {p}"), pc).await?);
        }
        Ok(Conn {
            last: vec![None; partitions.len()],
            partitions,
            _client: client,
        })
    }

    /// The records of `batch`, by partition index, each with its event time.
    fn records(&self, batch: &SinkBatch<'_>, n: usize) -> Vec<Vec<(Record, Option<i64>)>> {
        let mut out: Vec<Vec<(Record, Option<i64>)>> = (0..n).map(|_| Vec::new()).collect();
        for (row, &t) in batch.rows.iter().zip(&batch.times) {
            let mut keys = String::new();
            for &k in batch.key_columns {
                keys.push(',');
                encode::json_string(&batch.columns[k].name, &mut keys);
                keys.push(':');
                encode::json_value(&row[k], &mut keys);
            }
            let p = crc32fast::hash(keys.as_bytes()) as usize % n;
            let key = match t {
                Some(t) => {
                    let mut k = String::from("{");
                    encode::json_string(batch.time_name, &mut k);
                    k.push(':');
                    encode::json_value(&crate::types::Value::Timestamp(t), &mut k);
                    format!("{k}{keys}}}")
                }
                None if keys.is_empty() => String::new(),
                None => format!("{{{}}}", &keys[1..]),
            };
            let mut value = String::new();
            encode::line(batch.columns, row, self.format, &mut value);
            value.pop();
            let record = Record {
                key: (!key.is_empty()).then(|| key.into_bytes()),
                value: Some(value.into_bytes()),
                headers: Default::default(),
                timestamp: t
                    .and_then(chrono::DateTime::from_timestamp_micros)
                    .unwrap_or_else(chrono::Utc::now),
            };
            out[p].push((record, t));
        }
        out
    }

    async fn write_batch(&mut self, batch: &SinkBatch<'_>) -> Result<(), String> {
        if self.conn.is_none() {
            self.conn = Some(self.connect().await?);
        }
        let n = self.conn.as_ref().expect("connected").partitions.len();
        let per_partition = self.records(batch, n);
        for (i, mut records) in per_partition.into_iter().enumerate() {
            if records.is_empty() || self.done.contains(&i) {
                continue;
            }
            let conn = self.conn.as_mut().expect("connected");
            let pc = &conn.partitions[i];
            if self.windowed {
                let last = match conn.last[i] {
                    Some(last) => last,
                    None => read_back(pc, batch.time_name).await?,
                };
                conn.last[i] = Some(last);
                if let Some(w) = last {
                    records.retain(|(_, t)| t.is_none_or(|t| t > w));
                }
            }
            let newest = records.iter().filter_map(|(_, t)| *t).max();
            let records: Vec<Record> = records.into_iter().map(|(r, _)| r).collect();
            let what = format!(
                "producing to {} partition {}",
                self.spec.topic,
                pc.partition()
            );
            within(&what, pc.produce(records, Compression::NoCompression)).await?;
            if let Some(t) = newest {
                conn.last[i] = Some(Some(t));
            }
            self.done.push(i);
        }
        self.done.clear();
        Ok(())
    }
}

/// The partition ids of `topic`, ascending; empty when it does not exist.
async fn partition_ids(client: &Client, topic: &str) -> Result<Vec<i32>, String> {
    let topics = within("listing topics", client.list_topics()).await?;
    let mut ids: Vec<i32> = topics
        .into_iter()
        .find(|t| t.name == topic)
        .map(|t| t.partitions.into_iter().collect())
        .unwrap_or_default();
    ids.sort_unstable();
    Ok(ids)
}

/// The instant in the key of the last message of partition `pc`, if it is one of a sink's
/// (a JSON object with `time_name`). The end of the partition is the high watermark a
/// Fetch reports (some brokers answer ListOffsets(latest) with less).
async fn read_back(pc: &PartitionClient, time_name: &str) -> Result<Option<i64>, String> {
    let what = format!("reading back partition {}", pc.partition());
    let earliest = within(&what, pc.get_offset(OffsetAt::Earliest)).await?;
    let (_, hw) = within(&what, pc.fetch_records(earliest, 1..1024, 10)).await?;
    if hw <= earliest {
        return Ok(None);
    }
    let (records, _) = within(&what, pc.fetch_records(hw - 1, 1..4 << 20, 10)).await?;
    let Some(last) = records.iter().rev().find(|r| r.offset == hw - 1) else {
        return Ok(None);
    };
    let key: Option<serde_json::Value> = last
        .record
        .key
        .as_deref()
        .and_then(|k| serde_json::from_slice(k).ok());
    let t = key
        .as_ref()
        .and_then(|k| k.get(time_name)?.as_str().map(str::to_string))
        .and_then(|s| crate::time::parse_timestamp(&s.replacen('T', " ", 1)).ok());
    Ok(t)
}

#[async_trait::async_trait]
impl Writer for KafkaWriter {
    async fn write(&mut self, batch: &SinkBatch<'_>) -> Result<(), String> {
        let r = self.write_batch(batch).await;
        if r.is_err() {
            // Connect again, and read every partition back, before the retry.
            self.conn = None;
        }
        r
    }
}
