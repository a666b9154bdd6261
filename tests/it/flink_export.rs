//! The Flink export over the wire and on a real Flink cluster (issue 32).
//!
//! The first tests pin what a client sees: EXPLAIN (FORMAT FLINK) of one query, of the
//! registered queries (`QUERIES ALL`, `QUERIES (ids)`) as one job, the 0A000 refusals of
//! what Flink cannot compute exactly, and `tcqd flink export --queries FILE`. The last runs
//! scripts/flink_check.sh: 23 queries exported as one job, run by a JobManager and two
//! TaskManagers started from PyFlink's distribution at parallelism 2, every row compared
//! with tcq's; and the Kafka form of a job planned by Flink's planner. It is skipped, with a
//! message, when Java or PyFlink is missing (scripts/test.sh installs both).

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{connect, rows, sqlstate, start_server};

const STREAM: &str = "CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay integer, \
                      distance integer, origin text, destination text)";
const Q1: &str = "SELECT origin, wtime(*), count(*), avg(delay), max(delay) FROM flights \
                  [RANGE BY '1 hour' SLIDE BY '10 minutes' START AT '2001-01-01 00:00:00'] \
                  GROUP BY origin";

fn lines(rows: Vec<Vec<String>>) -> Vec<String> {
    rows.into_iter().map(|mut r| r.remove(0)).collect()
}

#[tokio::test]
async fn explain_format_flink_returns_the_job_as_query_plan_rows() {
    let port = start_server();
    let c = connect(port).await;
    c.batch_execute(STREAM).await.unwrap();
    let msgs = c
        .simple_query(&format!("EXPLAIN (FORMAT FLINK) {Q1}"))
        .await
        .unwrap();
    let first = msgs.iter().find_map(|m| match m {
        tokio_postgres::SimpleQueryMessage::Row(r) => Some(r.columns()[0].name().to_string()),
        _ => None,
    });
    assert_eq!(first.as_deref(), Some("QUERY PLAN"));
    let job = lines(rows(&c, &format!("EXPLAIN (FORMAT FLINK, PARALLELISM 2) {Q1}")).await);
    assert_eq!(
        job[0],
        "-- Flink SQL (Flink 2.x): 1 continuous query of tcq in 1 shared plan, one job."
    );
    assert_eq!(job[1], format!("--   query: {Q1}"));
    let expected = [
        "SET 'table.local-time-zone' = 'UTC';",
        "SET 'parallelism.default' = '2';",
        "  `ts` TIMESTAMP(3),",
        "  WATERMARK FOR `ts` AS `ts` - INTERVAL '0.001' SECOND",
        ") WITH ('connector' = 'filesystem', 'path' = 'flights.csv', 'format' = 'csv');",
        "SELECT `ts`, `origin` AS k0, `delay` AS a1, `delay` AS a2",
        "CREATE TEMPORARY TABLE `tcq_query` (",
        "EXECUTE STATEMENT SET",
        "INSERT INTO `tcq_query`",
        "END;",
    ];
    for e in expected {
        assert!(
            job.iter().any(|l| l == e),
            "missing {e}\n{}",
            job.join("\n")
        );
    }
    // Flink slices the hopping window itself: one view, over the stream.
    let view = job
        .iter()
        .position(|l| {
            l.starts_with("CREATE TEMPORARY VIEW tcq_flights_") && l.contains("_r1h_s10m")
        })
        .expect("the 1-hour view");
    assert!(job[view + 1].contains("INTERVAL '10' MINUTE, INTERVAL '1' HOUR)"));
    assert!(job[view + 1].contains("_input, DESCRIPTOR(`ts`)"));
}

#[tokio::test]
async fn registered_queries_export_as_one_job_that_shares_their_views() {
    let port = start_server();
    let c = connect(port).await;
    c.batch_execute(STREAM).await.unwrap();
    let ten = "SELECT origin, wtime(*), count(*) FROM flights \
               [RANGE BY '10 minutes' START AT '2001-01-01 00:00:00'] GROUP BY origin";
    let ungrouped = "SELECT count(*) FROM flights [RANGE BY '10 minutes']";
    c.batch_execute(&format!(
        "DECLARE a CURSOR WITH HOLD FOR {Q1}; DECLARE b CURSOR WITH HOLD FOR {ten}; \
         DECLARE u CURSOR WITH HOLD FOR {ungrouped}"
    ))
    .await
    .unwrap();
    let ids = rows(&c, "SELECT id FROM tcq_queries ORDER BY id").await;
    assert_eq!(ids.len(), 3);
    let (a, b, u) = (&ids[0][0], &ids[1][0], &ids[2][0]);
    let job = lines(
        rows(
            &c,
            "EXPLAIN (FORMAT FLINK, SINK 'filesystem', SINK_PATH '/data/out', GROUPS 300) QUERIES ALL",
        )
        .await,
    );
    assert_eq!(
        job[0],
        "-- Flink SQL (Flink 2.x): 2 continuous queries of tcq in 1 shared plan, one job."
    );
    let left_out = job
        .iter()
        .position(|l| l == "-- Registered queries left out of the job:");
    let left_out = left_out.expect("the ungrouped query is listed");
    assert!(
        job[left_out + 1].starts_with(&format!("--   q{u}: EXPLAIN (FORMAT FLINK) cannot express"))
    );
    let plan = job
        .iter()
        .find(|l| l.starts_with("-- Shared plan"))
        .unwrap();
    assert!(plan.contains(&format!(": q{a}, q{b}; 2 windows")), "{plan}");
    for q in [a, b] {
        assert!(job.contains(&format!("INSERT INTO `tcq_q{q}`")));
        assert!(job
            .iter()
            .any(|l| l.contains(&format!("'path' = '/data/out/q{q}'"))));
    }
    // A list of ids: the refused one is an error that names it.
    let only = lines(rows(&c, &format!("EXPLAIN (FORMAT FLINK) QUERIES ({b})")).await);
    assert!(only[0].contains("1 continuous query of tcq"));
    let e = c
        .simple_query(&format!("EXPLAIN (FORMAT FLINK) QUERIES ({a}, {u})"))
        .await
        .unwrap_err();
    assert_eq!(sqlstate(&e), "0A000");
    assert!(e
        .as_db_error()
        .unwrap()
        .message()
        .ends_with(&format!("(query q{u})")));
    let e = c
        .simple_query("EXPLAIN (FORMAT FLINK) QUERIES (999)")
        .await
        .unwrap_err();
    assert_eq!(sqlstate(&e), "42704", "{e}");
    let e = c
        .simple_query("EXPLAIN (FORMAT JSON) QUERIES ALL")
        .await
        .unwrap_err();
    assert_eq!(sqlstate(&e), "0A000", "{e}");
    let e = c
        .simple_query(&format!("EXPLAIN (PARALLELISM 2) {Q1}"))
        .await
        .unwrap_err();
    assert_eq!(sqlstate(&e), "22023", "{e}");
    let e = c
        .simple_query("EXPLAIN (FORMAT FLINK, STATE_BACKEND 'memory') QUERIES ALL")
        .await
        .unwrap_err();
    assert_eq!(sqlstate(&e), "22023", "{e}");
    // A signed value is read, then refused by its option (as PostgreSQL's grammar reads it).
    for (option, value) in [("GROUPS -1", "\"-1\""), ("PARALLELISM -2", "\"-2\"")] {
        let e = c
            .simple_query(&format!("EXPLAIN (FORMAT FLINK, {option}) QUERIES ALL"))
            .await
            .unwrap_err();
        assert_eq!(sqlstate(&e), "22023", "{option}: {e}");
        let message = e.as_db_error().map(|d| d.message()).unwrap_or_default();
        assert!(message.contains(value), "{option}: {e:?}");
    }
}

#[tokio::test]
async fn what_flink_cannot_compute_exactly_is_0a000() {
    let port = start_server();
    let c = connect(port).await;
    c.batch_execute(STREAM).await.unwrap();
    c.batch_execute(
        "CREATE STREAM weather (ts timestamp TIMESTAMPCOLUMN, origin text, temp integer)",
    )
    .await
    .unwrap();
    let w = "[RANGE BY '10 minutes']";
    let cases = [
        (format!("EXPLAIN (FORMAT FLINK) SELECT count(*) FROM flights {w}"), "ungrouped"),
        (
            format!("EXPLAIN (FORMAT FLINK) SELECT origin, sum(DISTINCT delay) FROM flights {w} GROUP BY origin"),
            "DISTINCT",
        ),
        (
            format!("EXPLAIN (FORMAT FLINK, ANALYZE) SELECT origin, count(*) FROM flights {w} GROUP BY origin"),
            "ANALYZE",
        ),
        (
            format!(
                "EXPLAIN (FORMAT FLINK) SELECT f.origin, count(*) FROM flights f {w} \
                 JOIN weather x {w} ON f.origin = x.origin GROUP BY f.origin"
            ),
            "join",
        ),
        ("EXPLAIN (FORMAT FLINK) SELECT origin FROM flights".to_string(), "window clause"),
    ];
    for (sql, why) in cases {
        let e = c.simple_query(&sql).await.expect_err(&sql);
        assert_eq!(sqlstate(&e), "0A000", "{sql}: {e}");
        let msg = e
            .as_db_error()
            .map(|d| d.message().to_string())
            .unwrap_or_default();
        assert!(msg.contains(why), "{sql}: {msg}");
    }
    // count(DISTINCT x) and stddev of integers are exported now.
    let ok = lines(
        rows(
            &c,
            &format!(
                "EXPLAIN (FORMAT FLINK) SELECT origin, count(DISTINCT destination), stddev(delay) \
                 FROM flights {w} GROUP BY origin"
            ),
        )
        .await,
    );
    assert!(ok.iter().any(|l| l.contains("COUNT(DISTINCT a0) AS c0")));
    // The server carries on.
    assert_eq!(rows(&c, "SELECT 1").await, vec![vec!["1".to_string()]]);
}

#[test]
fn tcqd_flink_export_reads_a_file_of_streams_and_queries() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dashboards.sql");
    std::fs::write(
        &file,
        format!(
            "{STREAM}\n{Q1}\nSELECT origin, wtime(*), max(delay) FROM flights \
             [RANGE BY '1 hour' SLIDE BY '10 minutes' START AT '2001-01-01 00:00:00'] GROUP BY origin\n"
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tcqd"))
        .args(["flink", "export", "--queries"])
        .arg(&file)
        .args(["--parallelism", "2", "--checkpoint-interval", "10 seconds"])
        .args(["--state-backend", "rocksdb", "--sink", "print"])
        .output()
        .unwrap();
    let job = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{job}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for want in [
        "2 continuous queries of tcq in 1 shared plan, one job.",
        "--   q1: SELECT origin, wtime(*), count(*)",
        "SET 'execution.checkpointing.interval' = '10 s';",
        "SET 'state.backend.type' = 'rocksdb';",
        "INSERT INTO `tcq_q1`",
        "INSERT INTO `tcq_q2`",
        "WITH ('connector' = 'print');",
    ] {
        assert!(job.contains(want), "missing {want}\n{job}");
    }
    // Both queries read one view: the same window.
    assert_eq!(job.matches("CREATE TEMPORARY VIEW").count(), 2, "{job}");
    // A query Flink cannot compute is refused with the reason.
    std::fs::write(
        &file,
        format!("{STREAM};\nSELECT count(*) FROM flights [RANGE BY '1 minute'];"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tcqd"))
        .args(["flink", "export", "--queries"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "no registered query can be exported: q1: EXPLAIN (FORMAT FLINK) cannot express"
        ),
        "{err}"
    );
    assert!(err.contains("ungrouped aggregate"), "{err}");
    // A bad statement is shown as written; an output path that cannot be written is named.
    std::fs::write(&file, format!("{STREAM};\nSELECT nonsense FROM;")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tcqd"))
        .args(["flink", "export", "--queries"])
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("SELECT nonsense FROM: "), "{err}");
    assert!(!err.contains("CURSOR"), "{err}");
    std::fs::write(&file, format!("{STREAM};\n{Q1};")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tcqd"))
        .args(["flink", "export", "--queries"])
        .arg(&file)
        .args(["-o", "/nonexistent-dir/job.sql"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("cannot write /nonexistent-dir/job.sql: "),
        "{err}"
    );
}

#[test]
fn a_flink_cluster_computes_tcqs_rows_from_the_exported_job() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(root.join("scripts/flink_check.sh"))
        .env("TCQD", env!("CARGO_BIN_EXE_tcqd"))
        .current_dir(root)
        .output()
        .expect("run scripts/flink_check.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(2) {
        common::skip(&format!("{}{}", stdout.trim(), stderr.trim()));
        return;
    }
    assert!(
        out.status.success(),
        "flink_check failed\n{stdout}\n{stderr}"
    );
    for want in [
        "23 queries, 5000 tuples",
        "23 queries: one job of",
        "parallelism 2",
        "23 queries attached to the job",
        "tcq_queries showed 23 queries on the job",
        "FINISHED, 0 late records dropped",
        "rows reached the clients in window order: yes",
    ] {
        assert!(stdout.contains(want), "missing {want}\n{stdout}");
    }
    let same = stdout.lines().filter(|l| l.ends_with(": same")).count();
    assert_eq!(same, 23, "every query's rows agree\n{stdout}");
    // The paper's example and Q1 are the first two queries; each yields thousands of rows.
    for (n, rows) in [(1, 6381), (2, 5215)] {
        let line = format!("q{n}: tcq {rows} rows, Flink {rows} rows: same");
        assert!(stdout.contains(&line), "{line}\n{stdout}");
    }
    assert!(
        stdout.contains("Kafka job planned by Flink's planner: validated"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Kafka job with a bad option: rejected"),
        "{stdout}"
    );
}
