//! The emitted text for the paper's 10/20/30/40 example and issue 7's Q1 (plain and
//! cascaded, as the Flink cost model decides), the HOP workarounds, a set of queries
//! sharing views, sources and sinks, and each refusal. tests/it/flink_export.rs runs such
//! jobs on a Flink cluster.
use super::*;
use crate::connect::spec::source_spec;
use crate::sql::{bind, parse, Plan, SchemaProvider, Source, StartSpec};

struct Flights;

fn columns() -> Vec<Column> {
    vec![
        Column::new("ts", DataType::Timestamp),
        Column::new("delay", DataType::Int4),
        Column::new("distance", DataType::Int8),
        Column::new("origin", DataType::Text),
        Column::new("rate", DataType::Float8),
        Column::new("ok", DataType::Bool),
    ]
}

impl SchemaProvider for Flights {
    fn stream(&self, name: &str) -> Option<(Vec<Column>, Option<usize>)> {
        match name {
            "flights" => Some((columns(), Some(0))),
            "clicks" => Some((vec![Column::new("url", DataType::Text)], None)),
            _ => None,
        }
    }
    fn system_view(&self, _: &str) -> Option<Vec<Column>> {
        None
    }
}

/// A bound query with its windows resolved as the engine resolves them (a default START
/// AT at 2001-01-01 00:02:03).
fn bound(sql: &str) -> (Query, Vec<Window>, Vec<Option<i64>>) {
    let stmts = parse(sql).unwrap();
    let Plan::Query(q) = bind(&stmts[0], &Flights, &[]).unwrap() else {
        panic!("{sql} is a query")
    };
    let now = 978_307_200_000_000 + 123_000_000;
    let (windows, cutoffs) = q
        .windows
        .iter()
        .map(|w| {
            let (start, cutoff) = match w.start {
                StartSpec::Default => (Start::Epoch, Some(now - now % w.slide_us)),
                StartSpec::Epoch => (Start::Epoch, None),
                StartSpec::At(t) => (Start::At(t), None),
            };
            (Window::new(w.range_us, w.slide_us, start).unwrap(), cutoff)
        })
        .unzip();
    (*q, windows, cutoffs)
}

/// The job for `sqls` (labels q1, q2, ...) at one event per minute.
fn job_of(
    sqls: &[&str],
    slack_us: i64,
    options: &ExportOptions,
    connector: Option<&SourceSpec>,
) -> Result<Vec<String>> {
    job_at(sqls, slack_us, options, connector, 1.0 / 60.0)
}

/// [`job_of`] at `eta` events per second.
fn job_at(
    sqls: &[&str],
    slack_us: i64,
    options: &ExportOptions,
    connector: Option<&SourceSpec>,
    eta: f64,
) -> Result<Vec<String>> {
    let cols = columns();
    let clicks = vec![Column::new("url", DataType::Text)];
    let bound: Vec<_> = sqls.iter().map(|s| bound(s)).collect();
    let queries: Vec<FlinkQuery<'_>> = bound
        .iter()
        .enumerate()
        .map(|(i, (q, windows, cutoffs))| {
            let clicks_stream =
                matches!(&q.source, Source::Stream { name, .. } if name == "clicks");
            FlinkQuery {
                label: if sqls.len() == 1 {
                    "query".into()
                } else {
                    format!("q{}", i + 1)
                },
                query: q,
                source: FlinkSource {
                    name: if clicks_stream { "clicks" } else { "flights" },
                    columns: if clicks_stream { &clicks } else { &cols },
                    ts_col: if clicks_stream { None } else { Some(0) },
                    connector,
                },
                slack_us,
                windows: windows.clone(),
                cutoffs: cutoffs.clone(),
                eta_per_sec: eta,
            }
        })
        .collect();
    flink_job(&queries, options)
}

fn export(sql: &str, groups: Option<f64>) -> Result<Vec<String>> {
    let options = ExportOptions {
        groups,
        ..ExportOptions::default()
    };
    job_of(&[sql], 0, &options, None)
}

fn refused(sql: &str) -> String {
    match export(sql, None) {
        Err(Error::FeatureNotSupported(m)) => m,
        other => panic!("{sql}: expected 0A000, got {other:?}"),
    }
}

const O: &str = "START AT '2001-01-01 00:00:00'";
const AT: &str = "_at978307200";

/// The view `name` (its SELECT line) in `script`.
fn view<'a>(script: &'a [String], name: &str) -> &'a str {
    let at = script
        .iter()
        .position(|l| l == &format!("CREATE TEMPORARY VIEW {name} AS"))
        .unwrap_or_else(|| panic!("no view {name}:\n{}", script.join("\n")));
    &script[at + 1]
}

/// The plan name of the single shared plan of `script`.
fn plan_name(script: &[String]) -> String {
    let l = script
        .iter()
        .find(|l| l.starts_with("-- Shared plan "))
        .expect("a shared plan");
    l["-- Shared plan ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .to_string()
}

fn node(from: &str, time: &str, minutes: i64, agg: &str) -> String {
    format!(
        "SELECT window_start AS ws, window_end AS we, window_time AS rt, k0, {agg} AS m0 \
         FROM TABLE(TUMBLE(TABLE {from}, DESCRIPTOR({time}), INTERVAL '{minutes}' MINUTE)) \
         GROUP BY window_start, window_end, window_time, k0;"
    )
}

#[test]
fn paper_10_20_30_40_cascades_where_instances_hold_few_groups() {
    let q = format!(
        "SELECT origin, wtime(*), min(delay) FROM flights [RANGE BY '10 minutes' {O}] \
         [RANGE BY '20 minutes' {O}] [RANGE BY '30 minutes' {O}] [RANGE BY '40 minutes' {O}] \
         GROUP BY origin"
    );
    let script = export(&q, Some(1.0)).unwrap();
    assert_eq!(script[2], "SET 'table.local-time-zone' = 'UTC';");
    assert!(script.contains(&"  WATERMARK FOR `ts` AS `ts` - INTERVAL '0.001' SECOND".to_string()));
    let p = plan_name(&script);
    assert!(p.starts_with("tcq_flights_"), "{p}");
    let n = |m: i64| format!("{p}_r{m}m_s{m}m{AT}");
    // The paper's forest: 20 <- 10, 30 <- 10, 40 <- 20.
    assert_eq!(
        view(&script, &n(10)),
        node(&format!("{p}_input"), "`ts`", 10, "MIN(a0)")
    );
    assert_eq!(view(&script, &n(20)), node(&n(10), "rt", 20, "MIN(m0)"));
    assert_eq!(view(&script, &n(30)), node(&n(10), "rt", 30, "MIN(m0)"));
    assert_eq!(view(&script, &n(40)), node(&n(20), "rt", 40, "MIN(m0)"));
    let insert = script
        .iter()
        .position(|l| l == "INSERT INTO `tcq_query`")
        .unwrap();
    assert_eq!(
        script[insert + 1],
        format!(
            "SELECT 0 AS `tcq_window`, CAST(ws AS TIMESTAMP(3)) AS `tcq_wstart`, \
             CAST(we AS TIMESTAMP(3)) AS `tcq_wend`, CAST(k0 AS STRING) AS `tcq_k0`, \
             CAST(k0 AS STRING) AS `origin`, CAST(we AS TIMESTAMP(3)) AS `wtime`, \
             CAST(m0 AS INT) AS `min` FROM {} WHERE ws >= TIMESTAMP '2001-01-01 00:00:00'",
            n(10)
        )
    );
    assert_eq!(script[insert + 2], "UNION ALL");
    assert_eq!(script.last().unwrap(), "END;");
    // Every tuple its own group (the default): every window from the stream.
    let plain = export(&q, None).unwrap();
    for m in [10, 20, 30, 40] {
        assert!(
            view(&plain, &n(m)).contains(&format!("TABLE {p}_input")),
            "{m}"
        );
    }
}

#[test]
fn q1_runs_as_flinks_own_hop_unless_its_factor_window_pays() {
    let q = format!(
        "SELECT origin, wtime(*), count(*), avg(delay), max(delay) FROM flights \
         [RANGE BY '1 hour' SLIDE BY '10 minutes' {O}] GROUP BY origin"
    );
    let plain = export(&q, None).unwrap();
    let p = plan_name(&plain);
    assert!(
        plain.contains(&"SELECT `ts`, `origin` AS k0, `delay` AS a1, `delay` AS a2".to_string())
    );
    assert_eq!(
        view(&plain, &format!("{p}_r1h_s10m{AT}")),
        format!(
            "SELECT window_start AS ws, window_end AS we, window_time AS rt, k0, COUNT(*) AS c0, \
             SUM(CAST(a1 AS BIGINT)) AS s1, COUNT(a1) AS n1, MAX(a2) AS m2 FROM \
             TABLE(HOP(TABLE {p}_input, DESCRIPTOR(`ts`), INTERVAL '10' MINUTE, INTERVAL '1' HOUR)) \
             GROUP BY window_start, window_end, window_time, k0;"
        )
    );
    assert!(
        !plain.iter().any(|l| l.contains("_r10m_s10m")),
        "no factor window"
    );
    // Alone, the factor window would cost what Q1 costs from the stream. Beside a query
    // that shows the 10-minute window, at a hundred tuples a minute over one key, Q1 is a
    // cascade over it: six partials an hour against 6,000 tuples.
    let options = ExportOptions {
        groups: Some(1.0),
        ..ExportOptions::default()
    };
    let alone = job_at(&[&q], 0, &options, None, 100.0 / 60.0).unwrap();
    assert!(
        !alone.iter().any(|l| l.contains("_r10m_s10m")),
        "no factor window"
    );
    let tens = format!(
        "SELECT origin, wtime(*), count(*), avg(delay), max(delay) FROM flights \
         [RANGE BY '10 minutes' {O}] GROUP BY origin"
    );
    let cascade = job_at(&[&q, &tens], 0, &options, None, 100.0 / 60.0).unwrap();
    assert_eq!(
        view(&cascade, &format!("{p}_r1h_s10m{AT}")),
        format!(
            "SELECT window_start AS ws, window_end AS we, window_time AS rt, k0, SUM(c0) AS c0, \
             SUM(s1) AS s1, SUM(n1) AS n1, MAX(m2) AS m2 FROM TABLE(HOP(TABLE {p}_r10m_s10m{AT}, \
             DESCRIPTOR(rt), INTERVAL '10' MINUTE, INTERVAL '1' HOUR)) \
             GROUP BY window_start, window_end, window_time, k0;"
        )
    );
    // PLAN 'wcg' keeps tcq's plan as it is: Q1 over its 10-minute factor window.
    let wcg = ExportOptions {
        plan: PlanChoice::Wcg,
        ..ExportOptions::default()
    };
    let forced = job_of(&[&q], 0, &wcg, None).unwrap();
    assert!(view(&forced, &format!("{p}_r1h_s10m{AT}"))
        .contains(&format!("HOP(TABLE {p}_r10m_s10m{AT}, DESCRIPTOR(rt)")));
    let last = plain.iter().rev().nth(1).unwrap();
    assert!(
        last.contains(
            "CAST(CAST(s1 AS DECIMAL(20, 0)) / CAST(NULLIF(n1, 0) AS DECIMAL(19, 0)) AS DECIMAL(38, 18)) AS `avg`"
        ),
        "{last}"
    );
    assert!(plain.contains(&"  `avg` DECIMAL(38, 18),".to_string()));
}

#[test]
fn a_hopping_parent_shifts_the_childs_window_so_it_merges_only_covering_instances() {
    // min: 10 -> <20, 10> -> factor <20, 20> -> <40, 20>. The factor window merges one
    // instance of <20, 10> (M = 1): a window of 20 - 20 + 10 = 10 minutes over rt ends
    // where the child's instance ends, and ws = we - 20 minutes; the 10-minute hop keeps
    // the 20-minute grid with the MOD filter.
    let q = format!(
        "SELECT origin, wstart(*), min(delay) FROM flights \
         [RANGE BY '20 minutes' SLIDE BY '10 minutes' {O}] \
         [RANGE BY '40 minutes' SLIDE BY '20 minutes' {O}] GROUP BY origin"
    );
    let script = export(&q, Some(1.0)).unwrap().join("\n");
    let p = plan_name(&export(&q, Some(1.0)).unwrap());
    assert!(
        script.contains(&format!(
            "SELECT * FROM (SELECT window_end - INTERVAL '20' MINUTE AS ws, window_end AS we, \
             window_time AS rt, k0, MIN(m0) AS m0 FROM TABLE(TUMBLE(TABLE {p}_r20m_s10m{AT}, DESCRIPTOR(rt), \
             INTERVAL '10' MINUTE)) GROUP BY window_start, window_end, window_time, k0)\n\
             WHERE MOD(TIMESTAMPDIFF(MINUTE, TIMESTAMP '1970-01-01 00:00:00', ws), 20) = 0;"
        )),
        "{script}"
    );
    assert!(script.contains(&format!(
        "FROM TABLE(HOP(TABLE {p}_r20m_s20m{AT}, DESCRIPTOR(rt), INTERVAL '20' MINUTE, INTERVAL '40' MINUTE))"
    )));
    assert!(script.contains("CAST(ws AS TIMESTAMP(3)) AS `wstart`"));
}

#[test]
fn ranges_that_are_not_multiples_of_the_slide_hop_by_the_gcd_and_keep_their_grid() {
    let q = "SELECT origin, wtime(*), max(delay) FROM flights \
             [RANGE BY '25 minutes' SLIDE BY '10 minutes' START AT '2001-01-01 00:07:00'] \
             GROUP BY origin";
    let script = export(q, None).unwrap().join("\n");
    assert!(
        script.contains(
            "DESCRIPTOR(`ts`), INTERVAL '5' MINUTE, INTERVAL '25' MINUTE, INTERVAL '2' MINUTE))"
        ),
        "{script}"
    );
    assert!(
        script.contains(
            "WHERE MOD(TIMESTAMPDIFF(MINUTE, TIMESTAMP '1970-01-01 00:00:00', ws), 10) = 7;"
        ),
        "{script}"
    );
    assert!(
        script.contains("WHERE ws >= TIMESTAMP '2001-01-01 00:07:00';"),
        "{script}"
    );
    // A jumping window: 5 minutes every 15.
    let q = format!(
        "SELECT origin, wtime(*), max(delay) FROM flights \
         [RANGE BY '5 minutes' SLIDE BY '15 minutes' {O}] GROUP BY origin"
    );
    let script = export(&q, None).unwrap().join("\n");
    assert!(
        script.contains("DESCRIPTOR(`ts`), INTERVAL '5' MINUTE))"),
        "{script}"
    );
    assert!(script.contains("ws), 15) = 0;"), "{script}");
}

#[test]
fn default_start_filters_from_the_submission_slide_and_epoch_does_not_filter() {
    let q = "SELECT origin, wtime(*), count(*) FROM flights [RANGE BY '10 minutes'] \
             WHERE delay > 5 AND origin IN ('SFO', 'LAX') GROUP BY origin";
    let options = ExportOptions::default();
    let script = job_of(&[q], 5_000_000, &options, None).unwrap().join("\n");
    assert!(
        script.contains("WHERE ws >= TIMESTAMP '2001-01-01 00:00:00';"),
        "{script}"
    );
    assert!(script.contains("WATERMARK FOR `ts` AS `ts` - INTERVAL '5.001' SECOND"));
    assert!(script.contains("WHERE ((`delay` > 5) AND (`origin` IN ('SFO', 'LAX')));"));
    let q = "SELECT origin, count(*) FROM flights [RANGE BY '10 minutes' START AT 'epoch'] \
             GROUP BY origin HAVING count(*) > 2";
    let script = export(q, None).unwrap().join("\n");
    assert!(script.contains(" WHERE (c0 > 2);"), "{script}");
    assert!(!script.contains("ws >="), "{script}");
}

#[test]
fn queries_with_the_same_where_and_keys_share_views_under_stable_names() {
    let a = format!(
        "SELECT origin, wtime(*), count(*) FROM flights [RANGE BY '10 minutes' {O}] GROUP BY origin"
    );
    let b = format!(
        "SELECT origin, wtime(*), max(delay) AS worst FROM flights [RANGE BY '10 minutes' {O}] \
         [RANGE BY '1 hour' {O}] GROUP BY origin HAVING max(delay) > 10"
    );
    let c = format!(
        "SELECT origin, count(*) FROM flights [RANGE BY '10 minutes' {O}] WHERE delay > 0 GROUP BY origin"
    );
    let options = ExportOptions {
        groups: Some(1.0),
        parallelism: Some(2),
        checkpoint_interval_ms: Some(10_000),
        state_backend: Some("rocksdb".into()),
        ..ExportOptions::default()
    };
    let job = job_of(&[&a, &b, &c], 0, &options, None).unwrap();
    let plans: Vec<&String> = job
        .iter()
        .filter(|l| l.starts_with("-- Shared plan"))
        .collect();
    assert_eq!(plans.len(), 2, "a and b share, c has its own WHERE");
    assert!(
        plans[0].contains(": q1, q2; 2 windows in 2 views"),
        "{}",
        plans[0]
    );
    // One source, one view per window of the shared plan, one sink per query, one set.
    assert_eq!(
        job.iter()
            .filter(|l| l.starts_with("CREATE TEMPORARY TABLE `flights`"))
            .count(),
        1
    );
    for q in ["q1", "q2", "q3"] {
        assert!(job.contains(&format!("CREATE TEMPORARY TABLE `tcq_{q}` (")));
        assert!(job.contains(&format!("INSERT INTO `tcq_{q}`")));
    }
    assert_eq!(
        job.iter().filter(|l| *l == "EXECUTE STATEMENT SET").count(),
        1
    );
    for set in [
        "SET 'parallelism.default' = '2';",
        "SET 'execution.checkpointing.interval' = '10 s';",
        "SET 'state.backend.type' = 'rocksdb';",
        "SET 'pipeline.name' = 'tcq: 3 continuous queries';",
    ] {
        assert!(job.contains(&set.to_string()), "{set}");
    }
    // The same queries give the same names; another set keeps a plan's name.
    assert_eq!(job, job_of(&[&a, &b, &c], 0, &options, None).unwrap());
    let alone = job_of(&[&a], 0, &options, None).unwrap();
    assert_eq!(plan_name(&alone), plan_name(&job));
    assert!(alone.contains(&"SET 'pipeline.name' = 'tcq: 1 continuous query';".to_string()));
    // Files by default: one directory per query.
    assert!(job
        .iter()
        .any(|l| l.contains("'path' = 'tcq-flink-results/q2', 'format' = 'csv'")));
}

#[test]
fn count_distinct_and_integer_variance_are_exported_exactly() {
    let q = format!(
        "SELECT origin, wtime(*), count(DISTINCT delay), stddev(delay), var_pop(delay) FROM flights \
         [RANGE BY '10 minutes' {O}] [RANGE BY '20 minutes' {O}] GROUP BY origin"
    );
    let job = export(&q, Some(1.0)).unwrap();
    let p = plan_name(&job);
    // DISTINCT: no window from another's partials.
    for m in [10, 20] {
        let v = view(&job, &format!("{p}_r{m}m_s{m}m{AT}"));
        assert!(v.contains(&format!("TABLE {p}_input")), "{v}");
        assert!(v.contains("COUNT(DISTINCT a0) AS c0"), "{v}");
        assert!(
            v.contains("SUM(CAST(a1 AS DECIMAL(38, 0)) * CAST(a1 AS DECIMAL(38, 0))) AS q1"),
            "{v}"
        );
    }
    let text = job.join("\n");
    assert!(text.contains(
        "CAST(SQRT(GREATEST(CASE WHEN n1 > 1 THEN CAST(n1 * q1 - s1 * s1 AS DOUBLE) / CAST(n1 * (n1 - 1) AS DOUBLE) END, 0.0)) AS DECIMAL(38, 18)) AS `stddev`"
    ), "{text}");
    assert!(text.contains(
        "CASE WHEN n2 > 0 THEN CAST(n2 * q2 - s2 * s2 AS DOUBLE) / CAST(n2 * n2 AS DOUBLE) END"
    ));
}

#[test]
fn a_kafka_fed_stream_exports_as_a_kafka_source_and_keyed_kafka_sinks() {
    let opts: Vec<(String, String)> = [
        ("connector", "kafka"),
        ("topic", "flights"),
        ("bootstrap_servers", "127.0.0.1:9092,127.0.0.1:9093"),
        ("format", "json"),
        ("start", "2001-01-01 00:00:00"),
        ("on_error", "stop"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let spec = source_spec(&opts, &columns()).unwrap().unwrap();
    let q = format!(
        "SELECT origin, wtime(*), count(*) FROM flights [RANGE BY '10 minutes' {O}] GROUP BY origin"
    );
    let job = job_of(&[&q], 2_000_000, &ExportOptions::default(), Some(&spec)).unwrap();
    let text = job.join("\n");
    assert!(
        text.contains(
            ") WITH ('connector' = 'kafka', 'topic' = 'flights', 'properties.bootstrap.servers' = \
         '127.0.0.1:9092,127.0.0.1:9093', 'properties.group.id' = 'tcq-flink-flights', \
         'scan.startup.mode' = 'timestamp', 'scan.startup.timestamp-millis' = '978307200000', \
         'format' = 'json', 'json.timestamp-format.standard' = 'SQL', \
         'scan.watermark.idle-timeout' = '10 s');"
        ),
        "{text}"
    );
    assert!(text.contains("WATERMARK FOR `ts` AS `ts` - INTERVAL '2.001' SECOND"));
    // The sink: a topic per query on the same brokers, keyed by window end and keys.
    assert!(text.contains(
        "'topic' = 'tcq-query', 'properties.bootstrap.servers' = '127.0.0.1:9092,127.0.0.1:9093', \
         'key.format' = 'json', 'key.fields' = 'tcq_wend;tcq_k0', 'value.format' = 'json');"
    ), "{text}");
}

#[test]
fn a_source_started_from_its_consumer_group_exports_with_that_group() {
    let opts: Vec<(String, String)> = [
        ("connector", "kafka"),
        ("topic", "flights"),
        ("bootstrap_servers", "127.0.0.1:9092"),
        ("group_id", "ops"),
        ("start", "group"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let spec = source_spec(&opts, &columns()).unwrap().unwrap();
    let q =
        format!("SELECT origin, count(*) FROM flights [RANGE BY '10 minutes' {O}] GROUP BY origin");
    let job = job_of(&[&q], 2_000_000, &ExportOptions::default(), Some(&spec)).unwrap();
    let text = job.join("\n");
    assert!(
        text.contains(
            "'properties.group.id' = 'ops', 'scan.startup.mode' = 'group-offsets', \
             'properties.auto.offset.reset' = 'earliest'"
        ),
        "{text}"
    );
}

#[test]
fn export_options_are_read_and_checked() {
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let o = ExportOptions::from_pairs(&pairs(&[
        ("parallelism", "2"),
        ("checkpoint_interval", "30 seconds"),
        ("sink", "kafka"),
        ("sink_bootstrap_servers", "b:9092"),
        ("sink_format", "csv"),
        ("idle_timeout", "500 milliseconds"),
    ]))
    .unwrap();
    assert_eq!(o.parallelism, Some(2));
    assert_eq!(o.checkpoint_interval_ms, Some(30_000));
    assert_eq!(o.idle_timeout_ms, 500);
    assert_eq!(
        o.sink,
        Some(SinkSpec::Kafka {
            bootstrap: "b:9092".into(),
            topic_prefix: "tcq-".into(),
            format: SinkFormat::Csv
        })
    );
    for bad in [
        vec![("parallelism", "0")],
        vec![("state_backend", "memory")],
        vec![("sink", "s3")],
        vec![("checkpoint_interval", "1 month")],
        vec![("colour", "blue")],
    ] {
        let e = ExportOptions::from_pairs(&pairs(&bad)).unwrap_err();
        assert!(
            matches!(e, Error::InvalidParameterValue(_)),
            "{bad:?}: {e:?}"
        );
    }
    // A Kafka sink without brokers and no Kafka-fed stream.
    let o = ExportOptions::from_pairs(&pairs(&[("sink", "kafka")])).unwrap();
    let q =
        format!("SELECT origin, count(*) FROM flights [RANGE BY '10 minutes' {O}] GROUP BY origin");
    assert!(matches!(
        job_of(&[&q], 0, &o, None),
        Err(Error::InvalidParameterValue(_))
    ));
}

#[test]
fn what_flink_cannot_match_is_refused() {
    let w = format!("[RANGE BY '10 minutes' {O}]");
    let cases = [
        (
            format!("SELECT count(*) FROM flights {w}"),
            "ungrouped aggregate",
        ),
        (
            format!("SELECT origin, sum(DISTINCT delay) FROM flights {w} GROUP BY origin"),
            "DISTINCT is exported for count only",
        ),
        (
            format!("SELECT origin, stddev(rate) FROM flights {w} GROUP BY origin"),
            "over integers only",
        ),
        (
            format!("SELECT origin, bool_and(ok) FROM flights {w} GROUP BY origin"),
            "bool_and",
        ),
        (
            format!("SELECT origin, avg(distance) FROM flights {w} GROUP BY origin"),
            "avg(bigint)",
        ),
        (
            format!("SELECT origin, count(*) FROM flights {w} GROUP BY origin LIMIT 3"),
            "LIMIT",
        ),
        (
            format!("SELECT origin, delay FROM flights {w}"),
            "without aggregates",
        ),
        (
            "SELECT origin, delay FROM flights".to_string(),
            "without a window clause",
        ),
        (
            "SELECT url, count(*) FROM clicks [RANGE BY '1 minute'] GROUP BY url".to_string(),
            "TIMESTAMPCOLUMN",
        ),
    ];
    for (sql, why) in cases {
        let m = refused(&sql);
        assert!(m.contains(why), "{sql}: {m}");
        assert!(
            m.starts_with("EXPLAIN (FORMAT FLINK) cannot express"),
            "{m}"
        );
    }
    // In a set, the refusal names the query.
    let ok = format!("SELECT origin, count(*) FROM flights {w} GROUP BY origin");
    let bad = format!("SELECT count(*) FROM flights {w}");
    match job_of(&[&ok, &bad], 0, &ExportOptions::default(), None) {
        Err(Error::FeatureNotSupported(m)) => assert!(m.ends_with("(query q2)"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn intervals_use_the_largest_unit_below_100() {
    assert_eq!(interval(90_000_000).unwrap(), "INTERVAL '90' SECOND");
    assert_eq!(interval(3_600_000_000).unwrap(), "INTERVAL '1' HOUR");
    assert_eq!(interval(1_000).unwrap(), "INTERVAL '0.001' SECOND");
    assert_eq!(
        interval(100_500_000).unwrap(),
        "INTERVAL '0 00:01:40.500' DAY TO SECOND(3)"
    );
    assert!(interval(1_500).is_err(), "sub-millisecond");
    assert!(interval(0).is_err());
}
