//! `connector = 'kafka'`: every partition of a topic, read with rskafka (pure Rust, on the
//! server's tokio runtime, no C library to build).
//!
//! The position is `{"partitions": {"<p>": <next offset>, ...}}`. Without one, each
//! partition starts per `start`: its earliest offset, its end (the high watermark a Fetch
//! reports: some brokers answer ListOffsets(latest) with the last batch's base offset plus
//! one, which is not the end), or its earliest offset with records stamped before the
//! instant skipped. One task per partition fetches from the partition's leader on a
//! connection of its own (see [`super::kafka_partition`], [`super::kafka_fetch`]) and
//! decodes what it fetched into columnar chunks, so that partitions decode in parallel,
//! and hands them over through a bounded channel; the source delivers each chunk whole
//! with the next offset of every partition. Lag is the sum over partitions of the high
//! watermark minus the next offset not delivered yet (records fetched but not yet in the
//! stream count as lag, so a lag of 0 means the stream holds everything up to the
//! watermarks). A record with no value is a bad message; so is one that does not
//! decode (`partition 1 offset 17: ...`). An offset the broker no longer has (retention)
//! moves to the partition's earliest offset, with a warning.
//!
//! Partitions are those the topic has when the source connects; one added later is read
//! after the next reconnection.

use std::collections::BTreeMap;
use std::time::Duration;

use rskafka::client::partition::{OffsetAt, PartitionClient, UnknownTopicHandling};
use rskafka::client::{Client, ClientBuilder, Credentials, SaslConfig};
use serde_json::json;
use tokio::sync::mpsc;

use super::kafka_partition::{Chunk, Fetched, Fetcher};
use super::runner::{Ctx, Halt};
use super::spec::{KafkaSpec, OnError, Sasl, StartAt};
use crate::exec::columns::ColumnBatchBuilder;

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
    let leaders = super::kafka_fetch::leaders(&spec.bootstrap, spec.sasl.as_ref(), &spec.topic)
        .await
        .map_err(|e| Halt::Retry(format!("kafka metadata: {e}")))?;
    let _committer = spec.group_id.as_ref().map(|g| {
        super::kafka_group::spawn_committer(spec, g, ctx.durable_positions(), ctx.source.clone())
    });
    // Bounded: a fetcher waits while its decoded chunks are not taken.
    let (tx, mut rx) = mpsc::channel::<Fetched>(2 * partitions.len());
    let mut fetchers = tokio::task::JoinSet::new();
    for &p in &partitions {
        let client = within(
            &format!("partition {p}"),
            client.partition_client(spec.topic.clone(), p, UnknownTopicHandling::Retry),
        )
        .await?;
        let (offset, skip_before) = match next.get(&p) {
            Some(&o) => (o, None),
            None => {
                let o = match committed.get(&p) {
                    Some(&o) => o,
                    None => start_offset(&client, spec.start).await?,
                };
                next.insert(p, o);
                let skip = match spec.start {
                    StartAt::Time(t) => Some(t),
                    _ => None,
                };
                (o, skip)
            }
        };
        let leader = leaders
            .get(&p)
            .ok_or_else(|| Halt::Retry(format!("kafka partition {p}: no leader")))?;
        let fetcher = Fetcher {
            client: std::sync::Arc::new(client),
            leader: leader.clone(),
            sasl: spec.sasl.clone(),
            partition: p,
            offset,
            skip_before,
            topic: spec.topic.clone(),
            stop_on_bad: ctx.source.spec.on_error == OnError::Stop,
            decoder: ctx.decoder.clone(),
            timeout: REQUEST_TIMEOUT,
        };
        fetchers.spawn(fetcher.run(tx.clone()));
    }
    drop(tx);
    let mut watermarks: BTreeMap<i32, i64> = BTreeMap::new();
    loop {
        ctx.gate().await?;
        let chunk = match tokio::time::timeout(Duration::from_secs(1), rx.recv()).await {
            Err(_) => continue,
            Ok(None) => return Err(Halt::Retry("every partition's fetcher ended".into())),
            Ok(Some(f)) => f.map_err(Halt::Retry)?,
        };
        watermarks.insert(chunk.partition, chunk.high_watermark);
        // Lag counts what is not delivered yet: first with the chunk's records still in
        // it, and only once they are delivered without them, so that a lag of 0 always
        // means every record up to the high watermarks is in the stream.
        ctx.set_lag(lag(&watermarks, &next, partitions.len()));
        take(ctx, chunk, &mut next).await?;
        ctx.set_lag(lag(&watermarks, &next, partitions.len()));
    }
}

/// Deliver `chunk`'s rows with the offsets `next` moved past them, then count its bad
/// messages. A bad message that stops the source (`on_error = 'stop'`: the chunk's last
/// record) is left out of the offsets, so that the source reads it again when resumed.
async fn take(ctx: &mut Ctx, chunk: Chunk, next: &mut BTreeMap<i32, i64>) -> Result<(), Halt> {
    let p = chunk.partition;
    let stops = ctx.source.spec.on_error == OnError::Stop && !chunk.bad.is_empty();
    next.insert(p, chunk.next - i64::from(stops));
    match chunk.batch {
        Some(batch) => {
            ctx.deliver(batch, chunk.messages, Some(position(next)))
                .await?
        }
        // Messages that made no rows (white space only).
        None if chunk.messages > 0 => {
            let empty = ColumnBatchBuilder::new(ctx.decoder.types(), 0).finish();
            ctx.deliver(empty, chunk.messages, Some(position(next)))
                .await?
        }
        None => {
            let position = position(next);
            if ctx.position() != Some(&position) {
                ctx.advance(position);
            }
        }
    }
    for (offset, why) in &chunk.bad {
        ctx.bad(&format!("partition {p} offset {offset}"), why)?;
    }
    if stops {
        // Resumed past it: the bad message is behind.
        next.insert(p, chunk.next);
        ctx.advance(position(next));
    }
    Ok(())
}

/// The position after the offsets `next`: `{"partitions": {"<p>": <next offset>}}`.
fn position(next: &BTreeMap<i32, i64>) -> serde_json::Value {
    let p: serde_json::Map<_, _> = next
        .iter()
        .map(|(p, o)| (p.to_string(), json!(*o)))
        .collect();
    json!({ "partitions": p })
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

/// A client for `spec`'s brokers (see [`client`]).
async fn connect(spec: &KafkaSpec) -> Result<Client, Halt> {
    client(&spec.bootstrap, spec.sasl.as_ref())
        .await
        .map_err(Halt::Retry)
}

/// A client of `bootstrap` (`host:port` each), for sources and sinks alike. Each address
/// is first connected to once, so that brokers that refuse connections or do not resolve
/// say so at once (`kafka 127.0.0.1:1: connection refused`) rather than after rskafka's
/// retries; rskafka's own retries then give up after 5 s, so a broker that is down shows
/// as `retrying` and the connector tries again by itself. Errors: every address failed
/// (each one's reason), SASL refused, no answer within [`REQUEST_TIMEOUT`].
pub(crate) async fn client(bootstrap: &[String], sasl: Option<&Sasl>) -> Result<Client, String> {
    let brokers = bootstrap.join(",");
    reachable(bootstrap).await?;
    let mut b = ClientBuilder::new(bootstrap.to_vec())
        .client_id("tcq")
        .backoff_config(rskafka::BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(1),
            base: 2.0,
            deadline: Some(Duration::from_secs(5)),
        });
    if let Some(s) = sasl {
        let c = Credentials::new(s.username.clone(), s.password.clone());
        b = b.sasl_config(match s.mechanism {
            "plain" => SaslConfig::Plain(c),
            "scram-sha-512" => SaslConfig::ScramSha512(c),
            _ => SaslConfig::ScramSha256(c),
        });
    }
    match tokio::time::timeout(REQUEST_TIMEOUT, b.build()).await {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(e)) => match sasl {
            // rskafka buries the broker's refusal in its retry error: say first what it is.
            Some(s) if e.to_string().contains("Sasl") => Err(format!(
                "kafka {brokers}: SASL {} authentication of user \"{}\" failed: {e}",
                s.mechanism.to_ascii_uppercase(),
                s.username
            )),
            _ => Err(format!("kafka {brokers}: {e}")),
        },
        Err(_) => Err(format!(
            "no answer from {brokers} within {} s",
            REQUEST_TIMEOUT.as_secs()
        )),
    }
}

/// Ok once one of `bootstrap` accepts a TCP connection (closed again at once). Errors:
/// each address's failure (`kafka 127.0.0.1:1: connection refused; ...`), an address
/// that neither accepts nor refuses within [`REQUEST_TIMEOUT`] as `no answer`.
async fn reachable(bootstrap: &[String]) -> Result<(), String> {
    let mut why = Vec::with_capacity(bootstrap.len());
    for addr in bootstrap {
        match tokio::time::timeout(REQUEST_TIMEOUT, tokio::net::TcpStream::connect(addr)).await {
            Ok(Ok(_)) => return Ok(()),
            Ok(Err(e)) => why.push(format!("kafka {addr}: {}", io_reason(&e))),
            Err(_) => why.push(format!(
                "kafka {addr}: no answer within {} s",
                REQUEST_TIMEOUT.as_secs()
            )),
        }
    }
    Err(why.join("; "))
}

/// `e` as words (`connection refused`), without Rust's `(os error 111)`.
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::ConnectionRefused => "connection refused".into(),
        _ => e.to_string(),
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

fn retry(what: &str, e: rskafka::client::error::Error) -> Halt {
    Halt::Retry(format!("kafka {what}: {e}"))
}
