//! The Kafka side of `scripts/bench_kafka.sh`, with rskafka (the client tcq's Kafka source
//! uses):
//!
//! - `kafka_bench produce BOOTSTRAP TOPIC FILE.parquet PARTITIONS`: create TOPIC with
//!   PARTITIONS partitions and produce every flight of the Parquet file (columns date,
//!   delay, distance, origin, destination) as one JSON message each, flight i to partition
//!   i mod PARTITIONS (so each partition stays in time order); prints the rate.
//! - `kafka_bench fetch BOOTSTRAP TOPIC COUNT`: fetch every partition from its start, all
//!   at once, until COUNT records have arrived, decoding nothing: the ceiling a source
//!   reading the topic can reach on this machine. Prints records, seconds and the rate.

use std::time::Instant;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, TimestampMicrosecondType};
use arrow_array::Array;
use rskafka::client::partition::{Compression, UnknownTopicHandling};
use rskafka::client::ClientBuilder;
use rskafka::record::Record;

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("produce") if args.len() == 6 => {
            produce(
                &args[2],
                &args[3],
                &args[4],
                args[5].parse().expect("partitions"),
            )
            .await
        }
        Some("fetch") if args.len() == 5 => {
            fetch(&args[2], &args[3], args[4].parse().expect("count")).await
        }
        _ => {
            eprintln!("usage: kafka_bench produce BOOTSTRAP TOPIC FILE.parquet PARTITIONS | fetch BOOTSTRAP TOPIC COUNT");
            std::process::exit(2);
        }
    }
}

/// Row `i` of a string column of any of Arrow's three string layouts.
fn text(a: &arrow_array::ArrayRef, i: usize) -> &str {
    match a.data_type() {
        arrow_schema::DataType::LargeUtf8 => a.as_string::<i64>().value(i),
        arrow_schema::DataType::Utf8View => a.as_string_view().value(i),
        _ => a.as_string::<i32>().value(i),
    }
}

/// Every flight of `path` as a JSON message.
fn messages(path: &str) -> Vec<Vec<u8>> {
    let file = std::fs::File::open(path).expect("open the Parquet file");
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .expect("a Parquet file")
        .build()
        .expect("a reader");
    let mut out = Vec::new();
    for batch in reader {
        let b = batch.expect("a batch");
        let col = |n: &str| {
            b.column_by_name(n)
                .unwrap_or_else(|| panic!("column {n}"))
                .clone()
        };
        let (date, delay, distance, origin, destination) = (
            col("date"),
            col("delay"),
            col("distance"),
            col("origin"),
            col("destination"),
        );
        // Microseconds whatever unit the file uses.
        let date: Vec<i64> = match date.data_type() {
            arrow_schema::DataType::Timestamp(arrow_schema::TimeUnit::Nanosecond, _) => date
                .as_primitive::<arrow_array::types::TimestampNanosecondType>()
                .values()
                .iter()
                .map(|v| v / 1000)
                .collect(),
            arrow_schema::DataType::Timestamp(arrow_schema::TimeUnit::Millisecond, _) => date
                .as_primitive::<arrow_array::types::TimestampMillisecondType>()
                .values()
                .iter()
                .map(|v| v * 1000)
                .collect(),
            _ => date
                .as_primitive::<TimestampMicrosecondType>()
                .values()
                .to_vec(),
        };
        let (delay, distance) = (
            delay.as_primitive::<Int64Type>(),
            distance.as_primitive::<Int64Type>(),
        );
        for (i, &t) in date.iter().enumerate() {
            let ts = tcq::time::format_timestamp(t);
            let n = |a: &arrow_array::PrimitiveArray<Int64Type>| {
                if a.is_null(i) {
                    "null".to_string()
                } else {
                    a.value(i).to_string()
                }
            };
            out.push(
                format!(
                    "{{\"ts\":\"{ts}\",\"delay\":{},\"distance\":{},\"origin\":\"{}\",\"destination\":\"{}\"}}",
                    n(delay),
                    n(distance),
                    text(&origin, i),
                    text(&destination, i)
                )
                .into_bytes(),
            );
        }
    }
    out
}

async fn produce(bootstrap: &str, topic: &str, path: &str, partitions: i32) {
    let all = messages(path);
    let client = ClientBuilder::new(vec![bootstrap.to_string()])
        .build()
        .await
        .expect("client");
    client
        .controller_client()
        .expect("controller")
        .create_topic(topic, partitions, 1, 5_000)
        .await
        .expect("create the topic");
    let started = Instant::now();
    let mut tasks = Vec::new();
    for p in 0..partitions {
        let pc = client
            .partition_client(topic, p, UnknownTopicHandling::Retry)
            .await
            .expect("partition client");
        let mine: Vec<Vec<u8>> = all
            .iter()
            .skip(p as usize)
            .step_by(partitions as usize)
            .cloned()
            .collect();
        tasks.push(tokio::spawn(async move {
            for chunk in mine.chunks(20_000) {
                let records = chunk
                    .iter()
                    .map(|v| Record {
                        key: None,
                        value: Some(v.clone()),
                        headers: Default::default(),
                        timestamp: chrono::DateTime::<chrono::Utc>::UNIX_EPOCH,
                    })
                    .collect();
                pc.produce(records, Compression::NoCompression)
                    .await
                    .expect("produce");
            }
        }));
    }
    for t in tasks {
        t.await.expect("producer");
    }
    let secs = started.elapsed().as_secs_f64();
    let bytes: usize = all.iter().map(Vec::len).sum();
    println!(
        "produced {} messages ({:.1} bytes each) in {secs:.2} s: {:.0} msg/s",
        all.len(),
        bytes as f64 / all.len() as f64,
        all.len() as f64 / secs
    );
}

async fn fetch(bootstrap: &str, topic: &str, count: usize) {
    let client = ClientBuilder::new(vec![bootstrap.to_string()])
        .build()
        .await
        .expect("client");
    let topics = client.list_topics().await.expect("topics");
    let t = topics
        .into_iter()
        .find(|t| t.name == topic)
        .expect("the topic");
    let started = Instant::now();
    let mut tasks = Vec::new();
    let total = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for p in t.partitions {
        let pc = client
            .partition_client(topic, p, UnknownTopicHandling::Retry)
            .await
            .expect("partition client");
        let total = total.clone();
        tasks.push(tokio::spawn(async move {
            let mut offset = 0;
            loop {
                let (records, hw) = pc
                    .fetch_records(offset, 1..(4 << 20), 500)
                    .await
                    .expect("fetch");
                if let Some(r) = records.last() {
                    offset = r.offset + 1;
                }
                total.fetch_add(records.len(), std::sync::atomic::Ordering::Relaxed);
                if offset >= hw {
                    return;
                }
            }
        }));
    }
    for t in tasks {
        t.await.expect("fetcher");
    }
    let n = total.load(std::sync::atomic::Ordering::Relaxed);
    let secs = started.elapsed().as_secs_f64();
    assert!(n >= count, "fetched {n} of {count}");
    println!(
        "fetched {n} messages in {secs:.3} s: {:.0} msg/s",
        n as f64 / secs
    );
}
