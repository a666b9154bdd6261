//! The job's tables: one source per stream (Kafka for a stream fed by the Kafka connector,
//! Flink's filesystem source for the file connector or a file named by the export) and one
//! sink per query (a Kafka topic, a directory of files, `print` or `blackhole`), and the
//! `SET` statements of the export's options.

use super::render::{flink_type, ident, interval};
use super::{refuse, ExportOptions, FlinkQuery, FlinkSource, SinkFormat, SinkSpec, MS};
use crate::connect::spec::{ConnectorSpec, FormatKind, KafkaSpec, SourceSpec, StartAt, TimeFormat};
use crate::error::Result;
use crate::types::DataType;

/// A quoted Flink string literal.
fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn with(options: &[(String, String)]) -> String {
    let items: Vec<String> = options
        .iter()
        .map(|(k, v)| format!("{} = {}", lit(k), lit(v)))
        .collect();
    format!("WITH ({})", items.join(", "))
}

fn kv(k: &str, v: impl Into<String>) -> (String, String) {
    (k.to_string(), v.into())
}

/// Flink's duration text for `ms` milliseconds (`10 s`, `250 ms`).
pub(crate) fn duration(ms: i64) -> String {
    if ms % 1000 == 0 {
        format!("{} s", ms / 1000)
    } else {
        format!("{ms} ms")
    }
}

/// The `SET` statements: UTC (tcq's windows are aligned to the epoch in UTC), the job's
/// name, and the export's parallelism, checkpoint interval and state backend.
pub(crate) fn settings(options: &ExportOptions, queries: usize) -> Vec<String> {
    let set = |k: &str, v: &str| format!("SET {} = {};", lit(k), lit(v));
    let mut out = vec![set("table.local-time-zone", "UTC")];
    let name = options.job_name.clone().unwrap_or_else(|| match queries {
        1 => "tcq: 1 continuous query".to_string(),
        n => format!("tcq: {n} continuous queries"),
    });
    out.push(set("pipeline.name", &name));
    if let Some(p) = options.parallelism {
        out.push(set("parallelism.default", &p.to_string()));
    }
    if let Some(ms) = options.checkpoint_interval_ms {
        out.push(set("execution.checkpointing.interval", &duration(ms)));
    }
    if let Some(b) = &options.state_backend {
        out.push(set("state.backend.type", b));
    }
    out
}

/// The name of the source table of `stream` read with `slack_us`: the stream's own name,
/// or, where its queries have several SLACKs, one table per SLACK (a watermark is a
/// table's: each SLACK needs its own).
pub(crate) fn source_table_name(stream: &str, slack_us: i64, several: bool) -> String {
    if several {
        format!("{stream}__slack_{}ms", slack_us / MS)
    } else {
        stream.to_string()
    }
}

/// The source table `table` of `source`, watermarked `ts - SLACK - 1 ms` (Flink fires an instance
/// `[a, e)` when the watermark passes `e - 1 ms`; tcq when its time, the highest timestamp
/// minus the SLACK, reaches `e`).
pub(crate) fn source_table(
    source: &FlinkSource<'_>,
    table: &str,
    slack_us: i64,
    options: &ExportOptions,
) -> Result<Vec<String>> {
    let ts_col = source.ts_col.expect("checked");
    let spec = source.connector;
    let topic_column = spec.and_then(|s| s.format.topic_column);
    let mut out = vec![describe_source(source)];
    out.push(format!("CREATE TEMPORARY TABLE {} (", ident(table)));
    for (i, c) in source.columns.iter().enumerate() {
        if Some(i) == topic_column {
            out.push(format!(
                "  {} STRING METADATA FROM 'topic' VIRTUAL,",
                ident(&c.name)
            ));
        } else {
            out.push(format!(
                "  {} {},",
                ident(&c.name),
                flink_type(&c.data_type)?
            ));
        }
    }
    let ts = ident(&source.columns[ts_col].name);
    out.push(format!(
        "  WATERMARK FOR {ts} AS {ts} - {}",
        interval(slack_us + MS)?
    ));
    let opts = match spec.map(|s| (&s.connector, s)) {
        Some((ConnectorSpec::Kafka(k), s)) => kafka_source(k, s, source.name, options)?,
        Some((ConnectorSpec::File(f), s)) => {
            let mut o = vec![
                kv("connector", "filesystem"),
                kv("path", f.dir.to_string_lossy()),
            ];
            o.extend(format_options(s, false)?);
            // tcq watches the directory; so does Flink.
            o.push(kv("source.monitor-interval", "1 s"));
            o
        }
        Some((ConnectorSpec::Mqtt(_), _)) => {
            return refuse("an MQTT-fed stream: Flink has no MQTT table source")
        }
        Some((ConnectorSpec::Nats(_), _)) => {
            return refuse("a NATS-fed stream: Flink has no NATS table source")
        }
        None => {
            let path = match &options.source_dir {
                Some(d) => format!("{}/{}.csv", d.trim_end_matches('/'), source.name),
                None => format!("{}.csv", source.name),
            };
            vec![
                kv("connector", "filesystem"),
                kv("path", path),
                kv("format", "csv"),
            ]
        }
    };
    out.push(format!(") {};", with(&opts)));
    Ok(out)
}

fn describe_source(source: &FlinkSource<'_>) -> String {
    match source.connector.map(|s| &s.connector) {
        Some(ConnectorSpec::Kafka(k)) => format!(
            "-- Stream {}: its Kafka topic '{}', every partition watermarked on its own (Flink takes the least).",
            source.name, k.topic
        ),
        Some(ConnectorSpec::File(f)) => format!(
            "-- Stream {}: the files of {} (Flink reads a directory's files in no fixed order: exact for files in time order read in turn; tuples later than the SLACK are dropped and counted).",
            source.name,
            f.dir.display()
        ),
        _ => format!(
            "-- Stream {}: a CSV file of its tuples in arrival order (one file: one reader, nothing late).",
            source.name
        ),
    }
}

fn format_options(s: &SourceSpec, kafka: bool) -> Result<Vec<(String, String)>> {
    if s.format.time != TimeFormat::Iso8601 {
        return refuse(
            "a TIMESTAMPCOLUMN written as epoch numbers: Flink's formats read a TIMESTAMP \
             column as text, and its watermark needs that column",
        );
    }
    let skip = s.on_error == crate::connect::spec::OnError::Skip;
    Ok(match s.format.kind {
        FormatKind::Json => {
            let mut o = vec![
                kv("format", "json"),
                kv("json.timestamp-format.standard", "SQL"),
            ];
            if skip {
                o.push(kv("json.ignore-parse-errors", "true"));
            }
            o
        }
        FormatKind::Csv => {
            if s.format.header && !kafka {
                return refuse(
                    "CSV files with a header line: Flink's CSV format has no option to skip it",
                );
            }
            let mut o = vec![kv("format", "csv")];
            if s.format.delimiter != b',' {
                o.push(kv(
                    "csv.field-delimiter",
                    (s.format.delimiter as char).to_string(),
                ));
            }
            if skip {
                o.push(kv("csv.ignore-parse-errors", "true"));
            }
            o
        }
        FormatKind::Parquet => vec![kv("format", "parquet")],
    })
}

fn kafka_source(
    k: &KafkaSpec,
    s: &SourceSpec,
    stream: &str,
    options: &ExportOptions,
) -> Result<Vec<(String, String)>> {
    let mut o = vec![
        kv("connector", "kafka"),
        kv("topic", &k.topic),
        kv("properties.bootstrap.servers", k.bootstrap.join(",")),
        kv(
            "properties.group.id",
            k.group_id
                .clone()
                .unwrap_or_else(|| format!("tcq-flink-{stream}")),
        ),
    ];
    match k.start {
        StartAt::Earliest => o.push(kv("scan.startup.mode", "earliest-offset")),
        StartAt::Latest => o.push(kv("scan.startup.mode", "latest-offset")),
        StartAt::Group => {
            o.push(kv("scan.startup.mode", "group-offsets"));
            o.push(kv("properties.auto.offset.reset", "earliest"));
        }
        StartAt::Time(us) => {
            o.push(kv("scan.startup.mode", "timestamp"));
            o.push(kv(
                "scan.startup.timestamp-millis",
                us.div_euclid(MS).to_string(),
            ));
        }
    }
    if let Some(sasl) = &k.sasl {
        let module = if sasl.mechanism == "plain" {
            "org.apache.kafka.common.security.plain.PlainLoginModule"
        } else {
            "org.apache.kafka.common.security.scram.ScramLoginModule"
        };
        o.push(kv("properties.security.protocol", "SASL_PLAINTEXT"));
        o.push(kv(
            "properties.sasl.mechanism",
            sasl.mechanism.to_ascii_uppercase(),
        ));
        // The password is never exported: put it in before submitting.
        o.push(kv(
            "properties.sasl.jaas.config",
            format!(
                "{module} required username=\"{}\" password=\"<password>\";",
                sasl.username
            ),
        ));
    }
    o.extend(format_options(s, true)?);
    o.push(kv(
        "scan.watermark.idle-timeout",
        duration(options.idle_timeout_ms),
    ));
    Ok(o)
}

/// The sink table of query `q` (named [`FlinkQuery::sink_name`]): the user window's index,
/// the instance's start and end, the group keys, then the query's columns. A Kafka sink is
/// keyed by the window end and the group keys.
pub(crate) fn sink_table(
    q: &FlinkQuery<'_>,
    key_types: &[DataType],
    sink: &SinkSpec,
) -> Result<Vec<String>> {
    let mut cols = vec![
        "  `tcq_window` INT".to_string(),
        "  `tcq_wstart` TIMESTAMP(3)".into(),
        "  `tcq_wend` TIMESTAMP(3)".into(),
    ];
    for (i, t) in key_types.iter().enumerate() {
        cols.push(format!("  `tcq_k{i}` {}", flink_type(t)?));
    }
    for (name, c) in sink_columns(q).iter().zip(&q.query.columns) {
        cols.push(format!("  {} {}", ident(name), flink_type(&c.data_type)?));
    }
    let fmt = |f: &SinkFormat| match f {
        SinkFormat::Csv => "csv",
        SinkFormat::Json => "json",
    };
    let opts = match sink {
        SinkSpec::Print => vec![kv("connector", "print")],
        SinkSpec::Blackhole => vec![kv("connector", "blackhole")],
        SinkSpec::Filesystem { path, format } => vec![
            kv("connector", "filesystem"),
            kv(
                "path",
                format!("{}/{}", path.trim_end_matches('/'), q.label),
            ),
            kv("format", fmt(format)),
        ],
        SinkSpec::Kafka {
            bootstrap,
            topic_prefix,
            format,
        } => {
            let mut key = vec!["tcq_wend".to_string()];
            key.extend((0..key_types.len()).map(|i| format!("tcq_k{i}")));
            vec![
                kv("connector", "kafka"),
                kv("topic", format!("{topic_prefix}{}", q.label)),
                kv("properties.bootstrap.servers", bootstrap),
                kv("key.format", fmt(format)),
                kv("key.fields", key.join(";")),
                kv("value.format", fmt(format)),
            ]
        }
    };
    let mut out = vec![format!(
        "CREATE TEMPORARY TABLE {} (",
        ident(&q.sink_name())
    )];
    let n = cols.len();
    for (i, c) in cols.into_iter().enumerate() {
        out.push(if i + 1 < n { format!("{c},") } else { c });
    }
    out.push(format!(") {};", with(&opts)));
    Ok(out)
}

/// The query's column names, made unique for Flink (`count`, `count_2`).
pub(crate) fn sink_columns(q: &FlinkQuery<'_>) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for c in &q.query.columns {
        let mut name = c.name.clone();
        let mut k = 2;
        while seen.contains(&name) {
            name = format!("{}_{k}", c.name);
            k += 1;
        }
        seen.push(name);
    }
    seen
}
