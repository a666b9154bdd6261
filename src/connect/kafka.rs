//! `connector = 'kafka'`: every partition of a topic, read with rskafka (pure Rust, on the
//! server's tokio runtime, no C library to build).
//!
//! The position is `{"partitions": {"<p>": <next offset>, ...}}`. Without one, each
//! partition starts per `start`: its earliest offset, its end (the high watermark a Fetch
//! reports: some brokers answer ListOffsets(latest) with the last batch's base offset plus
//! one, which is not the end), or its earliest offset with records stamped before the
//! instant skipped. One task per partition fetches (up to [`FETCH_BYTES`], waiting up to
//! half a second for data) into a bounded channel; the source decodes what arrives, at
//! most [`super::format::BATCH_ROWS`] rows a batch, and delivers each batch with the next
//! offset of every partition. Lag is the sum over partitions of the high watermark minus
//! the next offset not delivered yet (records fetched but not yet in the stream count as
//! lag, so a lag of 0 means the stream holds everything up to the watermarks). A record with no value is a bad message; so is one that does not
//! decode (`partition 1 offset 17: ...`). An offset the broker no longer has (retention)
//! moves to the partition's earliest offset, with a warning.
//!
//! Partitions are those the topic has when the source connects; one added later is read
//! after the next reconnection.

use std::collections::BTreeMap;
use std::time::Duration;

use rskafka::client::partition::{OffsetAt, PartitionClient, UnknownTopicHandling};
use rskafka::client::{Client, ClientBuilder, Credentials, SaslConfig};
use rskafka::record::RecordAndOffset;
use serde_json::json;
use tokio::sync::mpsc;

use super::format::Row;
use super::runner::{Ctx, Halt};
use super::spec::{KafkaSpec, StartAt};

/// Bytes one Fetch of one partition asks for at most.
const FETCH_BYTES: i32 = 4 << 20;
/// How long a Fetch waits for data.
const FETCH_WAIT_MS: i32 = 500;
/// How long any request may take before the connection is given up and made again: a
/// request in flight when its broker dies is otherwise never answered.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// `f`, or an error after [`REQUEST_TIMEOUT`].
async fn within<T>(
    what: &str,
    f: impl std::future::Future<Output = Result<T, rskafka::client::error::Error>>,
) -> Result<T, Halt> {
    match tokio::time::timeout(REQUEST_TIMEOUT, f).await {
        Ok(r) => r.map_err(|e| retry(what, e)),
        Err(_) => Err(Halt::Retry(format!(
            "kafka {what}: no answer within {} s",
            REQUEST_TIMEOUT.as_secs()
        ))),
    }
}

/// What a partition's fetcher hands over: records and the high watermark, or why it
/// stopped.
type Fetched = Result<(i32, Vec<RecordAndOffset>, i64), String>;

/// Read `spec`'s topic until stopped (or the connection fails: [`Halt::Retry`]).
pub(crate) async fn run(spec: &KafkaSpec, ctx: &mut Ctx) -> Result<(), Halt> {
    let client = connect(spec).await?;
    let partitions = partitions(&client, &spec.topic).await?;
    ctx.connected();
    let mut next: BTreeMap<i32, i64> = ctx
        .position()
        .and_then(|p| p["partitions"].as_object())
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.parse().ok()?, v.as_i64()?)))
                .collect()
        })
        .unwrap_or_default();
    let committed = group_offsets(spec, &partitions, &next).await?;
    let _committer = spec.group_id.as_ref().map(|g| {
        super::kafka_group::spawn_committer(spec, g, ctx.durable_positions(), ctx.source.clone())
    });
    let (tx, mut rx) = mpsc::channel::<Fetched>(2 * partitions.len());
    let mut fetchers = tokio::task::JoinSet::new();
    let mut skip_before: BTreeMap<i32, i64> = BTreeMap::new();
    for &p in &partitions {
        let pc = within(
            &format!("partition {p}"),
            client.partition_client(spec.topic.clone(), p, UnknownTopicHandling::Retry),
        )
        .await?;
        let offset = match next.get(&p) {
            Some(&o) => o,
            None => {
                let o = match committed.get(&p) {
                    Some(&o) => o,
                    None => start_offset(&pc, spec.start).await?,
                };
                if let StartAt::Time(t) = spec.start {
                    skip_before.insert(p, t);
                }
                next.insert(p, o);
                o
            }
        };
        fetchers.spawn(fetch(pc, p, offset, tx.clone()));
    }
    drop(tx);
    let mut watermarks: BTreeMap<i32, i64> = BTreeMap::new();
    let mut rows: Vec<Row> = Vec::new();
    loop {
        ctx.gate().await?;
        let first = match tokio::time::timeout(Duration::from_secs(1), rx.recv()).await {
            Err(_) => continue,
            Ok(None) => return Err(Halt::Retry("every partition's fetcher ended".into())),
            Ok(Some(f)) => f,
        };
        let mut fetched = vec![first];
        while fetched.len() < 4 * partitions.len() {
            match rx.try_recv() {
                Ok(f) => fetched.push(f),
                Err(_) => break,
            }
        }
        // Lag counts what is not delivered yet: first with the records just fetched
        // still in it, and only once they are delivered without them, so that a lag of 0
        // always means every record up to the high watermarks is in the stream.
        let fetched: Vec<_> = fetched
            .into_iter()
            .collect::<Result<_, String>>()
            .map_err(Halt::Retry)?;
        for (p, _, hw) in &fetched {
            watermarks.insert(*p, *hw);
        }
        ctx.set_lag(lag(&watermarks, &next, partitions.len()));
        let mut messages = 0;
        let now = crate::time::now_us();
        for (p, records, _) in fetched {
            if let Some(last) = records.last() {
                next.insert(p, last.offset + 1);
            }
            for r in records {
                let stamped = r.record.timestamp.timestamp_micros();
                if skip_before.get(&p).is_some_and(|&t| stamped < t) {
                    continue;
                }
                skip_before.remove(&p);
                let at = || format!("partition {p} offset {}", r.offset);
                let Some(value) = &r.record.value else {
                    ctx.bad(&at(), "a record without a value")?;
                    continue;
                };
                match ctx
                    .decoder
                    .message(value, Some(&spec.topic), now, &mut rows)
                {
                    Ok(()) => messages += 1,
                    Err(e) => ctx.bad(&at(), &e)?,
                }
            }
        }
        let position = json!({ "partitions": next.iter().map(|(p, o)| (p.to_string(), json!(*o))).collect::<serde_json::Map<_, _>>() });
        if rows.is_empty() && messages == 0 {
            if ctx.position() != Some(&position) {
                ctx.advance(position);
            }
        } else {
            let batch = super::format::batch_of(&ctx.decoder, &mut rows);
            ctx.deliver(batch, messages, Some(position)).await?;
        }
        ctx.set_lag(lag(&watermarks, &next, partitions.len()));
    }
}

/// Messages behind the high watermarks from the offsets `next`; known once each of the
/// `partitions` has reported its high watermark.
fn lag(
    watermarks: &BTreeMap<i32, i64>,
    next: &BTreeMap<i32, i64>,
    partitions: usize,
) -> Option<i64> {
    let behind = watermarks
        .iter()
        .map(|(p, hw)| (hw - next.get(p).copied().unwrap_or(0)).max(0))
        .sum();
    (watermarks.len() == partitions).then_some(behind)
}

/// A client for `spec`'s brokers. rskafka's own retries give up after 5 s, so that a
/// broker that is down shows as `retrying` and the source reconnects by itself.
async fn connect(spec: &KafkaSpec) -> Result<Client, Halt> {
    let mut b = ClientBuilder::new(spec.bootstrap.clone())
        .client_id("tcq")
        .backoff_config(rskafka::BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(1),
            base: 2.0,
            deadline: Some(Duration::from_secs(5)),
        });
    if let Some(s) = &spec.sasl {
        let c = Credentials::new(s.username.clone(), s.password.clone());
        b = b.sasl_config(match s.mechanism {
            "plain" => SaslConfig::Plain(c),
            "scram-sha-512" => SaslConfig::ScramSha512(c),
            _ => SaslConfig::ScramSha256(c),
        });
    }
    match tokio::time::timeout(Duration::from_secs(10), b.build()).await {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(e)) => match &spec.sasl {
            // rskafka buries the broker's refusal in its retry error: say first what it is.
            Some(s) if e.to_string().contains("Sasl") => Err(Halt::Retry(format!(
                "kafka {}: SASL {} authentication of user \"{}\" failed: {e}",
                spec.bootstrap.join(","),
                s.mechanism.to_ascii_uppercase(),
                s.username
            ))),
            _ => Err(retry(&spec.bootstrap.join(","), e)),
        },
        Err(_) => Err(Halt::Retry(format!(
            "no answer from {} within 10 s",
            spec.bootstrap.join(",")
        ))),
    }
}

/// The partitions of `topic`. Errors: [`Halt::Retry`] while the topic does not exist.
async fn partitions(client: &Client, topic: &str) -> Result<Vec<i32>, Halt> {
    let topics = within("listing topics", client.list_topics()).await?;
    let t = topics
        .into_iter()
        .find(|t| t.name == topic)
        .ok_or_else(|| Halt::Retry(format!("topic \"{topic}\" does not exist (yet)")))?;
    let mut p: Vec<i32> = t.partitions.into_iter().collect();
    p.sort_unstable();
    Ok(p)
}

/// With `start = 'group'`, the offsets committed to the source's consumer group of the
/// partitions without a position in `next` (empty otherwise).
async fn group_offsets(
    spec: &KafkaSpec,
    partitions: &[i32],
    next: &BTreeMap<i32, i64>,
) -> Result<BTreeMap<i32, i64>, Halt> {
    let (Some(g), StartAt::Group) = (&spec.group_id, spec.start) else {
        return Ok(BTreeMap::new());
    };
    let missing: Vec<i32> = partitions
        .iter()
        .copied()
        .filter(|p| !next.contains_key(p))
        .collect();
    if missing.is_empty() {
        return Ok(BTreeMap::new());
    }
    super::kafka_group::Group::new(spec, g)
        .committed(&missing)
        .await
        .map_err(|e| Halt::Retry(format!("kafka consumer group \"{g}\": {e}")))
}

/// Where a partition without a position (or, with `start = 'group'`, without a committed
/// offset: its first record) starts.
async fn start_offset(pc: &PartitionClient, start: StartAt) -> Result<i64, Halt> {
    let what = format!("partition {}", pc.partition());
    let earliest = within(&what, pc.get_offset(OffsetAt::Earliest)).await?;
    if start != StartAt::Latest {
        return Ok(earliest);
    }
    // A Fetch that waits a little: some brokers answer one that waits not at all with no
    // partition.
    let (_, hw) = within(&what, pc.fetch_records(earliest, 1..1024, 10)).await?;
    Ok(hw)
}

/// Fetch partition `p` from `offset` on into `tx`, until the receiver is gone or a fetch
/// fails.
async fn fetch(pc: PartitionClient, p: i32, mut offset: i64, tx: mpsc::Sender<Fetched>) {
    let mut last_hw = -1;
    loop {
        let fetched = tokio::time::timeout(
            REQUEST_TIMEOUT,
            pc.fetch_records(offset, 1..FETCH_BYTES, FETCH_WAIT_MS),
        )
        .await;
        let Ok(fetched) = fetched else {
            let _ = tx
                .send(Err(format!(
                    "partition {p}: no answer to a Fetch within {} s",
                    REQUEST_TIMEOUT.as_secs()
                )))
                .await;
            return;
        };
        match fetched {
            Ok((records, hw)) => {
                if let Some(r) = records.last() {
                    offset = r.offset + 1;
                } else if hw == last_hw {
                    continue;
                }
                last_hw = hw;
                if tx.send(Ok((p, records, hw))).await.is_err() {
                    return;
                }
            }
            Err(rskafka::client::error::Error::ServerError {
                protocol_error: rskafka::client::error::ProtocolError::OffsetOutOfRange,
                ..
            }) => match within("", pc.get_offset(OffsetAt::Earliest)).await {
                Ok(earliest) => {
                    tracing::warn!(
                        "kafka partition {p}: offset {offset} is no longer on the broker; going on from {earliest}"
                    );
                    offset = earliest;
                }
                Err(_) => {
                    let _ = tx
                        .send(Err(format!("partition {p}: no earliest offset")))
                        .await;
                    return;
                }
            },
            Err(e) => {
                let _ = tx.send(Err(format!("partition {p}: {e}"))).await;
                return;
            }
        }
    }
}

fn retry(what: &str, e: rskafka::client::error::Error) -> Halt {
    Halt::Retry(format!("kafka {what}: {e}"))
}
