//! The WCG over the wire: EXPLAIN reproduces the paper's figures, and a multi-window query
//! streams one row set per window, computed along the shared plan.
//!
//! Paper: Wu et al., "Cost-based Query Rewriting Techniques for Optimizing Aggregates Over
//! Correlated Windows", Examples 6-8 (docs/sharing.md), with one event per minute.

use crate::common;

use std::time::Duration;

use common::{connect, start_server};
use tokio_postgres::{Client, SimpleQueryMessage};

async fn lines(c: &Client, sql: &str) -> Vec<String> {
    let msgs = tokio::time::timeout(Duration::from_secs(20), c.simple_query(sql))
        .await
        .expect("no timeout")
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    msgs.into_iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some(
                (0..r.len())
                    .map(|i| r.get(i).unwrap_or("NULL"))
                    .collect::<Vec<_>>()
                    .join("|"),
            ),
            _ => None,
        })
        .collect()
}

const STREAM: &str =
    "CREATE STREAM flights (ts timestamp TIMESTAMPCOLUMN, delay integer, origin text)";

fn has(plan: &[String], needle: &str) -> bool {
    plan.iter().any(|l| l.contains(needle))
}

#[tokio::test]
async fn explain_reproduces_the_four_window_example() {
    let port = start_server();
    let c = connect(port).await;
    c.batch_execute(STREAM).await.unwrap();
    // Windows without START AT: their grids are all aligned to the epoch, so they share.
    let plan = lines(
        &c,
        "EXPLAIN (EVENT_RATE '1 per minute') SELECT count(*), sum(delay) FROM flights \
         [RANGE BY '10 minutes'] [RANGE BY '20 minutes'] [RANGE BY '30 minutes'] [RANGE BY '40 minutes']",
    )
    .await;
    let text = plan.join("\n");
    assert!(has(&plan, "Period R: 2 hours"), "{text}");
    assert!(
        has(&plan, "Algorithm 1 (min-cost WCG): 150 events per R"),
        "{text}"
    );
    for edge in [
        "w2 <- w1 (M = 2): 12 events per R",
        "w3 <- w1 (M = 3): 12 events per R",
        "w4 <- w2 (M = 2): 6 events per R",
        "w1 <- raw: 120 events per R",
    ] {
        assert!(has(&plan, edge), "missing {edge}:\n{text}");
    }
    assert!(
        has(
            &plan,
            "Total: 150 events per R, 75 per hour; unshared: 480 events per R"
        ),
        "{text}"
    );
    assert!(has(&plan, "saving 68.8%"), "{text}");
}

#[tokio::test]
async fn explain_adds_factor_window_ten_for_twenty_thirty_forty() {
    let port = start_server();
    let c = connect(port).await;
    c.batch_execute(STREAM).await.unwrap();
    let plan = lines(
        &c,
        "EXPLAIN (EVENT_RATE '1 per minute') SELECT avg(delay) FROM flights \
         [RANGE BY '20 minutes'] [RANGE BY '30 minutes'] [RANGE BY '40 minutes' START AT 'epoch']",
    )
    .await;
    let text = plan.join("\n");
    assert!(
        has(&plan, "Algorithm 1 (min-cost WCG): 246 events per R"),
        "{text}"
    );
    assert!(
        has(
            &plan,
            "candidate RANGE 10 minutes SLIDE 10 minutes: 144 events per R"
        ),
        "{text}"
    );
    assert!(
        has(&plan, "Algorithm 2 (with factor windows): 150 events per R"),
        "{text}"
    );
    assert!(has(&plan, "Chosen: Algorithm 2"), "{text}");
    assert!(has(&plan, "unshared: 360 events per R"), "{text}");
    assert!(has(&plan, "(factor window, not shown)"), "{text}");
}

/// Windows of slides 1 and 7 minutes share only a one-minute pane; the two of slide 7 read
/// one slide pane of 7 minutes, which EXPLAIN shows as its own step and as a factor window.
#[tokio::test]
async fn explain_shows_a_slide_pane_under_the_windows_of_one_slide() {
    let port = start_server();
    let c = connect(port).await;
    c.batch_execute(STREAM).await.unwrap();
    let plan = lines(
        &c,
        "EXPLAIN (EVENT_RATE '10 per minute') SELECT count(*), max(delay) FROM flights \
         [RANGE BY '2 minutes' SLIDE BY '1 minute'] [RANGE BY '28 minutes' SLIDE BY '7 minutes'] \
         [RANGE BY '42 minutes' SLIDE BY '7 minutes']",
    )
    .await;
    let text = plan.join("\n");
    assert!(
        has(
            &plan,
            "Slide panes (per parent and slide, a tumbling factor window of the slide)"
        ),
        "{text}"
    );
    assert!(
        has(
            &plan,
            "RANGE 7 minutes SLIDE 7 minutes (factor window, not shown) <- "
        ),
        "{text}"
    );
    let json = lines(
        &c,
        "EXPLAIN (FORMAT JSON, EVENT_RATE '10 per minute') SELECT count(*), max(delay) FROM flights \
         [RANGE BY '2 minutes' SLIDE BY '1 minute'] [RANGE BY '28 minutes' SLIDE BY '7 minutes'] \
         [RANGE BY '42 minutes' SLIDE BY '7 minutes']",
    )
    .await
    .join("");
    assert!(!json.contains("\"slide_panes\":null"), "{json}");
}

#[tokio::test]
async fn explain_formats_json_and_dot_and_holistic_aggregates_do_not_share() {
    let port = start_server();
    let c = connect(port).await;
    c.batch_execute(STREAM).await.unwrap();
    let q = "SELECT count(*) FROM flights [RANGE BY '10 minutes'] [RANGE BY '20 minutes']";
    let json = lines(
        &c,
        &format!("EXPLAIN (FORMAT JSON, EVENT_RATE '1 per minute') {q}"),
    )
    .await;
    assert_eq!(json.len(), 1);
    assert!(
        json[0].starts_with('{') && json[0].contains("\"choice\""),
        "{}",
        json[0]
    );
    assert!(
        json[0].contains("\"wcg_edges\":[{\"from\":\"w1\",\"to\":\"w2\",\"multiplier\":2}]"),
        "{}",
        json[0]
    );
    let dot = lines(&c, &format!("EXPLAIN (FORMAT DOT) {q}"))
        .await
        .join("\n");
    assert!(dot.starts_with("digraph"), "{dot}");
    let holistic = lines(
        &c,
        "EXPLAIN (EVENT_RATE '1 per minute') SELECT count(DISTINCT origin) FROM flights \
         [RANGE BY '10 minutes'] [RANGE BY '20 minutes']",
    )
    .await
    .join("\n");
    assert!(
        holistic.contains("Total: 40 events per R") && holistic.contains("saving 0%"),
        "{holistic}"
    );
}

#[tokio::test]
async fn multi_window_query_streams_one_row_set_per_window() {
    let port = start_server();
    let c = connect(port).await;
    c.batch_execute(STREAM).await.unwrap();
    c.batch_execute(
        "BEGIN; DECLARE m CURSOR FOR SELECT wrange(*), count(*), sum(delay), max(delay), wtime(*) FROM flights \
         [RANGE BY '10 minutes' START AT '2001-01-01'] [RANGE BY '20 minutes' START AT '2001-01-01'] \
         [RANGE BY '30 minutes' SLIDE BY '10 minutes' START AT '2001-01-01']",
    )
    .await
    .unwrap();
    c.batch_execute(
        "INSERT INTO flights VALUES ('2001-01-01 00:01', 5, 'ATL'), ('2001-01-01 00:12', 7, 'ORD'), \
         ('2001-01-01 00:25', 1, 'ATL'), ('2001-01-01 00:41', 0, 'SFO')",
    )
    .await
    .unwrap();
    let rows = lines(&c, "FETCH 8 FROM m").await;
    // Slide events at 00:10, 00:20, 00:30, 00:40; within one event, windows in the order
    // written. Each window's values equal the window computed alone.
    assert_eq!(
        rows,
        vec![
            "00:10:00|1|5|5|2001-01-01 00:10:00",
            "00:10:00|1|7|7|2001-01-01 00:20:00",
            "00:20:00|2|12|7|2001-01-01 00:20:00",
            "00:10:00|1|1|1|2001-01-01 00:30:00",
            "00:30:00|3|13|7|2001-01-01 00:30:00",
            "00:10:00|0|NULL|NULL|2001-01-01 00:40:00",
            "00:20:00|1|1|1|2001-01-01 00:40:00",
            "00:30:00|2|8|7|2001-01-01 00:40:00",
        ]
    );
    c.batch_execute("COMMIT").await.unwrap();
}

/// `wrange(*)` and `wslide(*)` of day-long windows read the same whether a query's rows go
/// through its plain projection or through HAVING and ORDER BY: `2 days`, `1 day 12:00:00`,
/// as PostgreSQL prints those intervals.
#[tokio::test]
async fn window_intervals_print_the_same_on_every_projection_path() {
    let port = start_server();
    let c = connect(port).await;
    c.batch_execute(STREAM).await.unwrap();
    let q = "SELECT wrange(*), wslide(*), count(*) FROM flights \
             [RANGE BY '2 days' SLIDE BY '36 hours' START AT '2001-01-01']";
    c.batch_execute(&format!(
        "BEGIN; DECLARE plain CURSOR FOR {q}; DECLARE having CURSOR FOR {q} HAVING count(*) > 0; \
         DECLARE ordered CURSOR FOR {q} ORDER BY 3"
    ))
    .await
    .unwrap();
    c.batch_execute(
        "INSERT INTO flights VALUES ('2001-01-01 00:01', 5, 'ATL'), ('2001-01-03 00:00', 1, 'SFO')",
    )
    .await
    .unwrap();
    for cursor in ["plain", "having", "ordered"] {
        assert_eq!(
            lines(&c, &format!("FETCH 1 FROM {cursor}")).await,
            vec!["2 days|1 day 12:00:00|1"],
            "{cursor}"
        );
    }
    c.batch_execute("COMMIT").await.unwrap();
}

#[tokio::test]
async fn explain_analyze_shows_measured_work() {
    let port = start_server();
    let c = connect(port).await;
    c.batch_execute(STREAM).await.unwrap();
    let feeder = connect(port).await;
    let q = tokio::spawn(async move {
        lines(
            &c,
            "EXPLAIN ANALYZE SELECT count(*) FROM flights [RANGE BY '10 minutes' START AT '2001-01-01'] \
             [RANGE BY '20 minutes' START AT '2001-01-01'] LIMIT 3",
        )
        .await
    });
    common::wait_for_queries(&feeder, 1).await;
    feeder
        .batch_execute(
            "INSERT INTO flights VALUES ('2001-01-01 00:01', 5, 'ATL'), ('2001-01-01 00:12', 7, 'ORD'), \
             ('2001-01-01 00:25', 1, 'ATL')",
        )
        .await
        .unwrap();
    let plan = tokio::time::timeout(Duration::from_secs(10), q)
        .await
        .expect("LIMIT ends EXPLAIN ANALYZE")
        .unwrap();
    let text = plan.join("\n");
    assert!(text.contains("Rows emitted: 3"), "{text}");
    assert!(text.to_lowercase().contains("measured"), "{text}");
}

/// Regression (issue 11): a query registered before its stream had data was planned for
/// 1 event/s, which skips the pane under a 1 h / 1 s window; once 20 k rows/s arrived it
/// cut ingest to ~3 k rows/s, while the same query registered after data used the pane.
/// A stream without an observed rate is now planned for a high rate, so the pane is
/// chosen either way (EXPLAIN shows the plan registration uses).
#[tokio::test]
async fn a_query_on_an_empty_stream_is_planned_with_the_pane() {
    let port = common::start_server();
    let c = common::connect(port).await;
    c.batch_execute("CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v integer)")
        .await
        .unwrap();
    let plan = lines(
        &c,
        "EXPLAIN SELECT count(*), avg(v) FROM s [RANGE BY '1 hour' SLIDE BY '1 second']",
    )
    .await
    .join("\n");
    assert!(plan.contains("Chosen: Algorithm 2"), "{plan}");
    assert!(
        plan.contains("f1: RANGE 1 second SLIDE 1 second (factor window, not shown) <- raw"),
        "{plan}"
    );
}

/// The lines of an EXPLAIN that name the plan's shape (the chosen algorithm and the
/// windows with their parents), without the figures that follow the event rate.
fn plan_shape(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l.contains("Chosen:") || l.contains(" <- "))
        .map(|l| {
            l.rsplit_once(": ")
                .map_or(l.as_str(), |(shape, _)| shape)
                .trim()
                .to_string()
        })
        .collect()
}

/// Issue 11: the order of registration never costs throughput. The 1 h / 1 s query gets
/// the same plan on an empty stream as once the stream has shown 20,000 rows/s, and it is
/// the plan the planner picks for 20,000 rows/s given explicitly.
#[tokio::test]
async fn a_query_gets_the_same_plan_before_and_after_its_stream_has_data() {
    let port = common::start_server();
    let c = common::connect(port).await;
    c.batch_execute("CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v integer)")
        .await
        .unwrap();
    let query = "SELECT count(*), avg(v) FROM s [RANGE BY '1 hour' SLIDE BY '1 second']";
    let empty = lines(&c, &format!("EXPLAIN {query}")).await;
    // 20,000 rows 50 microseconds apart: 20,001 rows per second of stream time.
    for chunk in 0..20 {
        let values: Vec<String> = (0..1000)
            .map(|i| {
                let us = (chunk * 1000 + i) * 50;
                format!("(TIMESTAMP '2030-01-01 00:00:00' + interval '{us} microseconds', {i})")
            })
            .collect();
        c.batch_execute(&format!("INSERT INTO s VALUES {}", values.join(", ")))
            .await
            .unwrap();
    }
    let fed = lines(&c, &format!("EXPLAIN {query}")).await;
    let stated = lines(
        &c,
        &format!("EXPLAIN (EVENT_RATE '20000 per second') {query}"),
    )
    .await;
    assert!(
        fed.iter()
            .any(|l| l.contains("event rate 20001 per second")),
        "{fed:#?}"
    );
    assert!(!plan_shape(&empty).is_empty(), "{empty:#?}");
    assert_eq!(plan_shape(&empty), plan_shape(&fed));
    assert_eq!(plan_shape(&fed), plan_shape(&stated));
}

/// Issue 11: a plan made before its stream had a rate is re-planned for the rate its first
/// batch shows, before it has consumed anything (so exactly). A 1 s / 1 ms window is planned
/// without the pane at the assumed 1,000 events/s, and with it once 20,000 rows/s arrive;
/// its rows are those of the window computed alone. (A float sum merges on panes only:
/// with a sliding aggregator the pane would win at any rate, issue 33.)
#[tokio::test]
async fn a_plan_made_before_data_is_replanned_for_the_rate_of_its_first_batch() {
    replanned_for_the_first_batch(true).await;
}

/// The same for a query that runs alone (its own plan, not a shared one, so not in
/// tcq_plans): the plan the console shows for it gains the pane, and its rows are those of
/// the window computed alone.
#[tokio::test]
async fn a_query_alone_is_replanned_for_the_rate_of_its_first_batch() {
    replanned_for_the_first_batch(false).await;
}

/// The nodes of query `id`'s plan as the console serves it (`/api/queries/{id}/plan`):
/// (range in microseconds, factor window).
async fn console_plan_nodes(http: u16, id: u64) -> Vec<(i64, bool)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", http))
        .await
        .unwrap();
    s.write_all(
        format!(
            "GET /api/queries/{id}/plan HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).await.unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{response}");
    let plan: serde_json::Value = serde_json::from_str(body).unwrap();
    plan["plan"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["window"]["range_us"].as_i64().unwrap(),
                n["factor"].as_bool().unwrap(),
            )
        })
        .collect()
}

async fn replanned_for_the_first_batch(share: bool) {
    let ports = common::start_with_console(tcq::http::HttpOptions::default());
    let port = ports.pg;
    let c = common::connect(port).await;
    c.batch_execute("CREATE STREAM s (ts timestamp TIMESTAMPCOLUMN, v integer)")
        .await
        .unwrap();
    let reader = common::connect(port).await;
    if !share {
        common::exec(&reader, "SET tcq.share_across_queries = off").await;
    }
    let rows = tokio::spawn(async move {
        common::rows(
            &reader,
            "SELECT count(*), sum(v::float8) FROM s [RANGE BY '1 second' SLIDE BY '1 millisecond' \
             START AT '2030-01-01 00:00:00'] LIMIT 3",
        )
        .await
    });
    common::wait_for_queries(&c, 1).await;
    let nodes = "SELECT \"window\", factor, parent FROM tcq_plans ORDER BY node";
    let unshared = common::table(&[&[
        "RANGE 1 second SLIDE 1 millisecond START AT '2030-01-01 00:00:00'",
        "f",
        "NULL",
    ]]);
    let pane = common::table(&[
        &[
            "RANGE 1 millisecond SLIDE 1 millisecond START AT '2030-01-01 00:00:00'",
            "t",
            "NULL",
        ],
        &[
            "RANGE 1 second SLIDE 1 millisecond START AT '2030-01-01 00:00:00'",
            "f",
            "0",
        ],
    ]);
    // tcq_plans lists shared plans only.
    let (before, after) = if share {
        (unshared, pane)
    } else {
        (Vec::new(), Vec::new())
    };
    assert_eq!(common::rows(&c, nodes).await, before);
    // A query alone shows its plan on the console: the 1 s window alone, then under a
    // 1 ms pane.
    let alone_before = vec![(1_000_000, false)];
    let alone_after = vec![(1_000, true), (1_000_000, false)];
    if !share {
        assert_eq!(console_plan_nodes(ports.http, 1).await, alone_before);
    }
    // 30,000 rows 50 microseconds apart (20,000 rows/s), in two COPYs: the first one's
    // 20,000 rows close no instance, so the plan is still there to look at.
    let copy = |from: i64, to: i64| {
        let c = &c;
        async move {
            let mut data = String::new();
            for k in from..to {
                let us = k * 50;
                data.push_str(&format!(
                    "2030-01-01 00:00:{:02}.{:06}\t{}\n",
                    us / 1_000_000,
                    us % 1_000_000,
                    k % 10
                ));
            }
            let sink = c.copy_in("COPY s FROM STDIN").await.unwrap();
            futures::pin_mut!(sink);
            futures::SinkExt::send(&mut sink, bytes::Bytes::from(data))
                .await
                .unwrap();
            assert_eq!(sink.finish().await.unwrap(), (to - from) as u64);
        }
    };
    copy(0, 20_000).await;
    assert_eq!(common::rows(&c, nodes).await, after);
    if !share {
        assert_eq!(console_plan_nodes(ports.http, 1).await, alone_after);
    }
    copy(20_000, 30_000).await;
    // Each of the first three instances holds 20,000 tuples whose v = k % 10 sums to 90,000.
    assert_eq!(
        rows.await.unwrap(),
        common::table(&[
            &["20000", "90000"],
            &["20000", "90000"],
            &["20000", "90000"]
        ])
    );
}
